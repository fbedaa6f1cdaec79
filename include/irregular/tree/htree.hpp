// HTree: the serial linear H-Tree. Its leaves, sorted by the start of their finest curve-index
// interval, are the SFC visit Sq(v(sf)) of baiardi-2001 §2-3; stored structure-of-arrays.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/core/index.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/detail/linear_tree.hpp>
#include <irregular/tree/detail/radix_sort.hpp>
#include <irregular/tree/linear_leaves.hpp>
#include <irregular/tree/refine.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular {

/// What HTree::rebuild_with changed: leaves of the old tree that were split (refined) and
/// leaves of the new tree that replace several old leaves (pruned subtrees).
struct RebuildStats {
  std::size_t refined = 0;  ///< old leaves that were split
  std::size_t pruned = 0;   ///< new leaves that replace several old ones
};

/// Linear H-Tree over curve C. Leaf i covers the finest indices [start(i), end(i)); the leaves
/// tile [0, arity^(dim*max_level)) in curve order. Optionally, elements sorted by key are
/// attached: leaf i owns elements [element_offset(i), element_offset(i+1)). Optionally, a load
/// per leaf is kept as prefix sums, so the load of any hnode is one subtraction.
template <SpaceFillingCurve C>
class HTree : public LinearLeaves<C> {
  using Leaves = LinearLeaves<C>;

 public:
  /// The space-filling curve that orders the leaves.
  using curve_type = C;
  /// The curve's index type.
  using index_type = typename C::index_type;
  /// Dimension of the cells.
  static constexpr int dim = C::dim;

  /// One leaf: the root, with no elements.
  HTree() : Leaves({index_type{0}}, {0}), offsets_{0, 0} {}

  /// Element-located build: `sorted_keys` are the finest curve indices of the elements, sorted
  /// ascending (duplicates allowed). `condition` is a count-form RefineCondition
  /// (cond(cell, count)) or a key-form one (cond(cell, std::span<const index_type> keys)).
  /// Cells at max_level are never split (clamped). Throws irregular::invalid_argument if the keys
  /// are unsorted or beyond the index range. Top-down: each split divides the key range of a cell
  /// among its children by binary searches; no allocation per node.
  template <class Cond>
  [[nodiscard]] static HTree build(std::span<const index_type> sorted_keys, Cond&& condition) {
    check_keys(sorted_keys, "irregular::HTree::build");
    HTree t(0);
    t.build_impl(sorted_keys, condition);
    return t;
  }
  /// build() over a vector of sorted keys.
  template <class Cond>
  [[nodiscard]] static HTree build(const std::vector<index_type>& sorted_keys, Cond&& condition) {
    return build(std::span<const index_type>(sorted_keys), std::forward<Cond>(condition));
  }

  /// Sorts finest keys ascending for build(): LSD radix sort for 32/64-bit indices (std::sort
  /// below 256 keys; 1.6-4.3x faster than std::sort at 10^6 and 10^7 keys in
  /// bench/results/htree.md), std::sort for 128-bit ones.
  static void sort_keys(std::vector<index_type>& keys) {
    int bits = 1;
    while (bits < index_bits<index_type> && (index_type{1} << bits) < detail::index_end<C>())
      ++bits;
    detail::radix_sort(keys, bits);
  }

  /// A tree from given leaves (starts sorted, levels in [0, max_level], aligned, tiling the index
  /// range), with no elements. Throws irregular::invalid_argument naming the first bad leaf.
  [[nodiscard]] static HTree from_leaves(std::vector<index_type> starts, std::vector<int> levels) {
    detail::validate_tiling<C, int>(starts, levels, "irregular::HTree::from_leaves");
    HTree t(0);
    const auto n = starts.size();
    t.assign(std::move(starts), std::vector<std::uint8_t>(levels.begin(), levels.end()));
    t.offsets_.assign(n + 1, 0);
    return t;
  }

  /// Re-adapts the tree to moved elements: refines where the condition now asks for splits and
  /// prunes (merges children back) where it no longer does. The result is exactly the tree
  /// `build(sorted_keys, condition)` gives. Loads are cleared (they described the old leaves).
  template <class Cond>
  RebuildStats rebuild_with(std::span<const index_type> sorted_keys, Cond&& condition) {
    HTree fresh = build(sorted_keys, std::forward<Cond>(condition));
    RebuildStats st;
    std::size_t i = 0, j = 0;
    const std::size_t n_old = this->size(), n_new = fresh.size();
    while (i < n_old && j < n_new) {
      IRREGULAR_ASSERT(this->start(i) == fresh.start(j));
      if (this->level(i) == fresh.level(j)) {
        ++i, ++j;
      } else if (this->level(i) < fresh.level(j)) {
        ++st.refined;
        const index_type e = this->end(i++);
        while (j < n_new && fresh.start(j) < e) ++j;
      } else {
        ++st.pruned;
        const index_type e = fresh.end(j++);
        while (i < n_old && this->start(i) < e) ++i;
      }
    }
    *this = std::move(fresh);
    return st;
  }
  /// rebuild_with() over a vector of sorted keys.
  template <class Cond>
  RebuildStats rebuild_with(const std::vector<index_type>& sorted_keys, Cond&& condition) {
    return rebuild_with(std::span<const index_type>(sorted_keys), std::forward<Cond>(condition));
  }

  /// Attaches elements (sorted keys) to the current leaves: recomputes the element offsets.
  void assign_elements(std::span<const index_type> sorted_keys) {
    check_keys(sorted_keys, "irregular::HTree::assign_elements");
    offsets_.resize(this->size() + 1);
    auto it = sorted_keys.begin();
    offsets_[0] = 0;
    for (std::size_t i = 0; i < this->size(); ++i) {
      it = std::lower_bound(it, sorted_keys.end(), this->end(i));
      offsets_[i + 1] = static_cast<std::size_t>(it - sorted_keys.begin());
    }
  }

  // ---- leaves: LinearLeaves (size, start, end, level, interval, cell, starts, levels) -------
  // ---- elements -----------------------------------------------------------------------------
  /// Index of the first element of `leaf` in the sorted keys (`leaf` == size() gives the
  /// element count).
  [[nodiscard]] std::size_t element_offset(std::size_t leaf) const noexcept {
    IRREGULAR_ASSERT(leaf <= this->size());
    return offsets_[leaf];
  }
  /// Number of elements in `leaf`.
  [[nodiscard]] std::size_t element_count(std::size_t leaf) const noexcept {
    IRREGULAR_ASSERT(leaf < this->size());
    return offsets_[leaf + 1] - offsets_[leaf];
  }
  /// size() + 1 offsets; the last is the number of elements.
  [[nodiscard]] std::span<const std::size_t> element_offsets() const noexcept { return offsets_; }
  /// Number of elements attached to the tree.
  [[nodiscard]] std::size_t element_count() const noexcept { return offsets_.back(); }

  // ---- search (O(log n)) ----------------------------------------------------------------------
  /// The leaf whose interval contains the finest index. Precondition: i < index_end.
  [[nodiscard]] std::size_t leaf_containing(index_type finest_index) const noexcept {
    IRREGULAR_ASSERT(finest_index < detail::index_end<C>());
    return detail::leaf_at<index_type>(this->starts(), finest_index);
  }
  /// The leaf containing the cell's start: the cell's leaf if the cell is a leaf or lies inside
  /// one; the first leaf of its subtree if the tree refines the cell further.
  [[nodiscard]] std::size_t leaf_containing(const Cell<dim>& c) const noexcept {
    IRREGULAR_ASSERT(c.level >= 0 && c.level <= C::max_level);
    return leaf_containing(detail::start_of<C>(c));
  }
  /// Leaves meeting the interval: [first, last). An empty interval gives an empty range.
  [[nodiscard]] std::pair<std::size_t, std::size_t> leaves_overlapping(
      IndexInterval<index_type> iv) const noexcept {
    return detail::leaves_meeting<index_type>(this->starts(), iv);
  }
  /// Leaves inside or containing the cell: its leaf range if it is an hnode.
  [[nodiscard]] std::pair<std::size_t, std::size_t> leaf_range(const Cell<dim>& c) const noexcept {
    return leaves_overlapping(detail::interval_of<C>(c));
  }
  /// True if the cell is an hnode of this tree: a leaf or an internal node (ancestor of leaves).
  [[nodiscard]] bool is_hnode(const Cell<dim>& c) const noexcept {
    return c.level <= this->level(leaf_containing(c));
  }
  /// The leaf equal to the cell, if the cell is a leaf.
  [[nodiscard]] std::optional<std::size_t> find_leaf(const Cell<dim>& c) const noexcept {
    const std::size_t l = leaf_containing(c);
    if (this->level(l) == c.level) return l;
    return std::nullopt;
  }

  // ---- loads ------------------------------------------------------------------------------
  /// Sets one load per leaf (finite, >= 0); kept as prefix sums. Throws invalid_argument.
  void set_loads(std::span<const double> loads) {
    if (loads.size() != this->size())
      throw invalid_argument("irregular::HTree::set_loads: " + std::to_string(loads.size()) +
                             " loads for " + std::to_string(this->size()) + " leaves");
    std::vector<double> pre(this->size() + 1);
    pre[0] = 0;
    for (std::size_t i = 0; i < this->size(); ++i) {
      if (!(std::isfinite(loads[i]) && loads[i] >= 0))
        throw invalid_argument("irregular::HTree::set_loads: load of leaf " + std::to_string(i) +
                               " is negative or not finite");
      pre[i + 1] = pre[i] + loads[i];
    }
    load_prefix_ = std::move(pre);
  }
  /// True once set_loads() gave the leaves loads (else a leaf's load is its element count).
  [[nodiscard]] bool has_loads() const noexcept { return !load_prefix_.empty(); }
  /// Forgets the set loads: loads are element counts again.
  void clear_loads() noexcept { load_prefix_.clear(); }
  /// Load of leaves [first, last): set loads if any, else their element count.
  [[nodiscard]] double load(std::size_t first, std::size_t last) const noexcept {
    IRREGULAR_ASSERT(first <= last && last <= this->size());
    if (has_loads()) return load_prefix_[last] - load_prefix_[first];
    return static_cast<double>(offsets_[last] - offsets_[first]);
  }
  /// Load of one leaf.
  [[nodiscard]] double load(std::size_t leaf) const noexcept { return load(leaf, leaf + 1); }
  /// Load of the whole tree (the root hnode).
  [[nodiscard]] double total_load() const noexcept { return load(0, this->size()); }
  /// Load of an hnode (sum over its leaf range). Throws invalid_argument if the cell is not an
  /// hnode of this tree (it lies strictly inside a leaf).
  [[nodiscard]] double hnode_load(const Cell<dim>& c) const {
    check_hnode(c, "irregular::HTree::hnode_load");
    const auto [f, l] = leaf_range(c);
    return load(f, l);
  }
  /// Number of elements in an hnode. Throws invalid_argument if the cell is not an hnode.
  [[nodiscard]] std::size_t hnode_element_count(const Cell<dim>& c) const {
    check_hnode(c, "irregular::HTree::hnode_element_count");
    const auto [f, l] = leaf_range(c);
    return offsets_[l] - offsets_[f];
  }

  /// Same leaves and same element offsets (loads are not compared).
  friend bool operator==(const HTree& a, const HTree& b) {
    return static_cast<const Leaves&>(a) == static_cast<const Leaves&>(b) &&
           a.offsets_ == b.offsets_;
  }

 private:
  explicit HTree(int /*empty*/) {}

  static void check_keys(std::span<const index_type> keys, const char* who) {
    for (std::size_t i = 1; i < keys.size(); ++i)
      if (keys[i] < keys[i - 1])
        throw invalid_argument(std::string(who) + ": keys not sorted at position " +
                               std::to_string(i));
    if (!keys.empty() && keys.back() >= detail::index_end<C>())
      throw invalid_argument(std::string(who) + ": key at position " +
                             std::to_string(keys.size() - 1) +
                             " is beyond the curve's index range");
  }

  void check_hnode(const Cell<dim>& c, const char* who) const {
    if (c.level < 0 || c.level > C::max_level)
      throw invalid_argument(std::string(who) + ": cell level " + std::to_string(c.level) +
                             " outside [0, max_level]");
    const coord_t n = detail::axis_cells<C>(c.level);
    for (int d = 0; d < dim; ++d)
      if (c.anchor[static_cast<std::size_t>(d)] >= n)
        throw out_of_domain(std::string(who) + ": cell anchor outside the domain in dimension " +
                            std::to_string(d));
    if (!is_hnode(c))
      throw invalid_argument(std::string(who) +
                             ": the cell is not an hnode of the tree (it lies "
                             "strictly inside a leaf)");
  }

  template <class Cond>
  void build_impl(std::span<const index_type> keys, Cond& cond) {
    constexpr bool count_form = RefineCondition<Cond, dim>;
    static_assert(count_form || KeyRefineCondition<Cond, dim, index_type>,
                  "irregular::HTree::build: the condition must be callable as cond(const Cell<D>&, "
                  "std::size_t count) -> bool or cond(const Cell<D>&, std::span<const index_type> "
                  "keys) -> bool");
    const std::size_t guess = keys.size() / 8 + 64;
    this->reserve(guess);
    offsets_.reserve(guess + 1);
    Cell<dim> root{};
    build_rec<count_form>(keys.data(), cond, root, C::root_state(), index_type{0}, 0, keys.size());
    offsets_.push_back(keys.size());
  }

  // keys[lo, hi) are the keys in [start, start + span(cell.level)).
  template <bool CountForm, class Cond>
  void build_rec(const index_type* keys, Cond& cond, const Cell<dim>& cell,
                 typename C::state_type state, index_type start, std::size_t lo, std::size_t hi) {
    bool split = false;
    if (cell.level < C::max_level) {
      if constexpr (CountForm)
        split = cond(cell, hi - lo);
      else
        split = cond(cell, std::span<const index_type>(keys + lo, hi - lo));
    }
    if (!split) {
      this->push_back(start, cell.level);
      offsets_.push_back(lo);
      return;
    }
    const index_type cs = detail::span_at<C>(cell.level + 1);
    index_type s = start;
    for (int k = 0; k < detail::children_of<C>; ++k, s += cs) {
      std::size_t mid = hi;
      if (k + 1 < detail::children_of<C>) {
        const index_type e = s + cs;
        if (hi - lo <= 16) {
          mid = lo;
          while (mid < hi && keys[mid] < e) ++mid;
        } else {
          mid = static_cast<std::size_t>(std::lower_bound(keys + lo, keys + hi, e) - keys);
        }
      }
      build_rec<CountForm>(
          keys, cond,
          detail::child_at_position<C>(cell, static_cast<int>(C::child_position(state, k))),
          C::child_state(state, k), s, lo, mid);
      lo = mid;
    }
  }

  std::vector<std::size_t> offsets_;  // size() + 1
  std::vector<double> load_prefix_;   // empty, or size() + 1 prefix sums
};

}  // namespace irregular
