// CellTree: a linear H-Tree whose leaves carry user data (mesh and grid codes, the adaptive
// multigrid of baiardi-collecting-remote-data §4): uniform start, refine/coarsen marks, 2:1
// balance.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/core/index.hpp>
#include <irregular/tree/balance.hpp>
#include <irregular/tree/detail/adapt.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/detail/linear_tree.hpp>
#include <irregular/tree/detail/refine_cells.hpp>
#include <irregular/tree/linear_leaves.hpp>
#include <irregular/tree/stencil.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular {

/// Linear H-Tree with one `Data` per leaf (structure-of-arrays: starts, levels, data), kept in
/// curve order through every adaptation.
template <SpaceFillingCurve C, class Data>
class CellTree : public LinearLeaves<C> {
  using Leaves = LinearLeaves<C>;

 public:
  /// The space-filling curve that orders the leaves.
  using curve_type = C;
  /// The curve's index type.
  using index_type = typename C::index_type;
  /// What each leaf holds.
  using data_type = Data;
  /// Dimension of the cells.
  static constexpr int dim = C::dim;

  /// One leaf, the root, with a value-initialized Data.
  CellTree() requires std::default_initializable<Data>
      : Leaves({index_type{0}}, {0}), data_(1), marks_(1, Mark::keep) {}

  /// All cells of `level`, in curve order, data = init(cell) (or a copy of a value).
  /// Throws invalid_argument if level is outside [0, max_level].
  template <class Init>
  requires std::invocable < Init&, const Cell<C::dim>
  & > [[nodiscard]] static CellTree uniform(int level, Init init) {
    if (level < 0 || level > C::max_level)
      throw invalid_argument("irregular::CellTree::uniform: level " + std::to_string(level) +
                             " outside [0, max_level = " + std::to_string(C::max_level) + "]");
    const auto n = static_cast<std::size_t>(detail::index_end<C>() / detail::span_at<C>(level));
    CellTree t(0);
    t.reserve(n);
    t.data_.reserve(n);
    for (std::size_t k = 0; k < n; ++k) {
      t.push_back(static_cast<index_type>(k) * detail::span_at<C>(level), level);
      t.data_.push_back(init(C::cell(static_cast<index_type>(k), level)));
    }
    t.marks_.assign(n, Mark::keep);
    return t;
  }
  /// All cells of `level`, each holding a copy of `value`.
  [[nodiscard]] static CellTree uniform(int level, const Data& value) {
    return uniform(level, [&value](const Cell<C::dim>&) { return value; });
  }

  /// From given leaves (validated like HTree::from_leaves) and one datum per leaf.
  [[nodiscard]] static CellTree from_leaves(std::vector<index_type> starts, std::vector<int> levels,
                                            std::vector<Data> data) {
    detail::validate_tiling<C, int>(starts, levels, "irregular::CellTree::from_leaves");
    if (data.size() != starts.size())
      throw invalid_argument("irregular::CellTree::from_leaves: " + std::to_string(data.size()) +
                             " data for " + std::to_string(starts.size()) + " leaves");
    CellTree t(0);
    t.assign(std::move(starts), std::vector<std::uint8_t>(levels.begin(), levels.end()));
    t.data_ = std::move(data);
    t.marks_.assign(t.size(), Mark::keep);
    return t;
  }

  // ---- leaves: LinearLeaves (size, start, end, level, interval, cell, starts, levels) -------
  /// The datum of leaf `leaf`.
  [[nodiscard]] Data& data(std::size_t leaf) noexcept {
    IRREGULAR_ASSERT(leaf < this->size());
    return data_[leaf];
  }
  /// The datum of leaf `leaf`.
  [[nodiscard]] const Data& data(std::size_t leaf) const noexcept {
    IRREGULAR_ASSERT(leaf < this->size());
    return data_[leaf];
  }
  /// Every leaf's datum, in curve order (aligned with starts()).
  [[nodiscard]] std::span<Data> data() noexcept { return data_; }
  /// Every leaf's datum, in curve order (aligned with starts()).
  [[nodiscard]] std::span<const Data> data() const noexcept { return data_; }

  /// The leaf whose interval holds finest curve index `finest_index` (< the curve's end).
  [[nodiscard]] std::size_t leaf_containing(index_type finest_index) const noexcept {
    IRREGULAR_ASSERT(finest_index < detail::index_end<C>());
    return detail::leaf_at<index_type>(this->starts(), finest_index);
  }
  /// The leaf holding the first finest index of cell `c`: `c` itself, the leaf that contains
  /// it, or the first leaf inside it when the tree refines `c` further.
  [[nodiscard]] std::size_t leaf_containing(const Cell<dim>& c) const noexcept {
    return leaf_containing(detail::start_of<C>(c));
  }
  /// The leaves meeting interval `iv`, as [first, last); {k, k} when `iv` is empty.
  [[nodiscard]] std::pair<std::size_t, std::size_t> leaves_overlapping(
      IndexInterval<index_type> iv) const noexcept {
    return detail::leaves_meeting<index_type>(this->starts(), iv);
  }
  /// The leaf that is cell `c`, or nullopt when `c` is not a leaf (it is refined or inside a
  /// coarser leaf).
  [[nodiscard]] std::optional<std::size_t> find_leaf(const Cell<dim>& c) const noexcept {
    const std::size_t l = leaf_containing(c);
    if (this->level(l) == c.level) return l;
    return std::nullopt;
  }

  // ---- marks and adaptation ------------------------------------------------------------------
  /// Marks `leaf` to be refined, coarsened or kept by the next adapt().
  void mark(std::size_t leaf, Mark m) noexcept {
    IRREGULAR_ASSERT(leaf < this->size());
    marks_[leaf] = m;
  }
  /// The mark of `leaf` (Mark::keep unless set).
  [[nodiscard]] Mark mark(std::size_t leaf) const noexcept {
    IRREGULAR_ASSERT(leaf < this->size());
    return marks_[leaf];
  }
  /// Every leaf's mark, aligned with starts().
  [[nodiscard]] std::span<const Mark> marks() const noexcept { return marks_; }
  /// Resets every mark to Mark::keep.
  void clear_marks() noexcept { std::fill(marks_.begin(), marks_.end(), Mark::keep); }

  /// Applies the stored marks (see the overload below), then clears them.
  template <class Refine, class Coarsen>
  AdaptStats adapt(Refine&& refine_fn, Coarsen&& coarsen_fn) {
    const std::vector<Mark> m = marks_;
    return adapt(std::span<const Mark>(m), refine_fn, coarsen_fn);
  }

  /// Refines every leaf marked refine into its children (in curve order), each with data
  /// refine_fn(const Data& parent, const Cell<D>& child); merges every complete sibling family
  /// whose members are all marked coarsen into the parent, with data
  /// coarsen_fn(std::span<const Data> children) (children in curve order). Coarsen marks on
  /// incomplete families (a sibling refined further, or not marked) are ignored
  /// (tree/detail/adapt.hpp, the kernel CellDomain::adapt shares).
  /// Throws invalid_argument (tree unchanged) if marks.size() != size() or a leaf at max_level is
  /// marked refine. If a callback throws, the tree is unchanged too.
  template <class Refine, class Coarsen>
  AdaptStats adapt(std::span<const Mark> marks, Refine&& refine_fn, Coarsen&& coarsen_fn) {
    static_assert(std::is_invocable_r_v<Data, Refine&, const Data&, const Cell<C::dim>&>,
                  "irregular::CellTree::adapt: refine_fn must be callable as "
                  "refine_fn(const Data& parent, const Cell<D>& child) -> Data");
    static_assert(std::is_invocable_r_v<Data, Coarsen&, std::span<const Data>>,
                  "irregular::CellTree::adapt: coarsen_fn must be callable as "
                  "coarsen_fn(std::span<const Data> children) -> Data");
    if (marks.size() != this->size())
      throw invalid_argument("irregular::CellTree::adapt: " + std::to_string(marks.size()) +
                             " marks for " + std::to_string(this->size()) + " leaves");
    std::vector<index_type> ns;
    std::vector<std::uint8_t> nl;
    std::vector<Data> nd;
    ns.reserve(this->size());
    nl.reserve(this->size());
    detail::AdaptSources<Data> sources;
    const auto st = detail::adapt_leaves<C>(
        this->starts(), this->levels(), std::span<const Data>(data_), marks, refine_fn, coarsen_fn,
        ns, nl, nd, sources,
        [](std::size_t i) { return "irregular::CellTree::adapt: leaf " + std::to_string(i); },
        [](std::size_t) {});
    detail::assemble_adapted(std::span<Data>(data_), sources, nd);
    this->assign(std::move(ns), std::move(nl));
    data_ = std::move(nd);
    marks_.assign(this->size(), Mark::keep);
    return st;
  }

  /// Refines toward a predicate in one pass, as HTree::build does: every leaf below max_level for
  /// which split holds is split, and so is every new cell below max_level for which it holds,
  /// recursively. split is split(const Cell<D>&) or split(const Cell<D>&, const Data&); a new
  /// cell's data is init(const Data& parent, const Cell<D>& child), called once per new cell,
  /// parents before children, in curve order: before split sees the cell with split(cell, data);
  /// with split(cell), data wider than 8 bytes are made after every split is decided
  /// (tree/detail/refine_cells.hpp). Gives the tree that repeated mark-and-adapt passes give,
  /// without a pass per level. Marks are cleared. Returns the number of cells split (old leaves
  /// and new cells). Throws invalid_argument if max_level is outside [0, C::max_level]; if a
  /// callback throws, the tree is unchanged.
  template <class Split, class Init>
  std::size_t refine(Split&& split, int max_level, Init&& init) {
    constexpr bool with_data =
        std::is_invocable_r_v<bool, Split&, const Cell<C::dim>&, const Data&>;
    static_assert(with_data || std::is_invocable_r_v<bool, Split&, const Cell<C::dim>&>,
                  "irregular::CellTree::refine: split must be callable as split(const Cell<D>&) "
                  "or split(const Cell<D>&, const Data&) -> bool");
    static_assert(std::is_invocable_r_v<Data, Init&, const Data&, const Cell<C::dim>&>,
                  "irregular::CellTree::refine: init must be callable as "
                  "init(const Data& parent, const Cell<D>& child) -> Data");
    if (max_level < 0 || max_level > C::max_level)
      throw invalid_argument("irregular::CellTree::refine: max_level " + std::to_string(max_level) +
                             " outside [0, " + std::to_string(C::max_level) + "]");
    auto r = detail::refine_cells<C, with_data>(this->starts(), this->levels(),
                                                std::span<Data>(data_), split, max_level, init);
    if (r.n_split > 0) {
      this->assign(std::move(r.starts), std::move(r.levels));
      data_ = std::move(r.data);
    }
    marks_.assign(this->size(), Mark::keep);
    return r.n_split;
  }

  /// Refines to the coarsest 2:1 balanced tree (see balance_leaves); new leaves get data by
  /// repeated refine_fn(parent data, child cell) down from the old leaf that contains them.
  /// Returns the number of old leaves that were split.
  template <class Refine>
  std::size_t balance(BalanceKind kind, Refine&& refine_fn, Periodicity<C::dim> per = {}) {
    static_assert(std::is_invocable_r_v<Data, Refine&, const Data&, const Cell<C::dim>&>,
                  "irregular::CellTree::balance: refine_fn must be callable as "
                  "refine_fn(const Data& parent, const Cell<D>& child) -> Data");
    auto b = balance_leaves<C>(this->starts(), this->levels(), kind, per);
    if (b.starts.size() == this->size()) return 0;
    std::vector<Data> nd;
    nd.reserve(b.starts.size());
    std::size_t j = 0, split = 0;
    for (std::size_t i = 0; i < this->size(); ++i) {
      if (b.levels[j] == this->level(i)) {
        nd.push_back(data_[i]);
        ++j;
        continue;
      }
      ++split;
      descend(b, j, this->start(i), this->level(i), data_[i], refine_fn, nd);
    }
    this->assign(std::move(b.starts), std::move(b.levels));
    data_ = std::move(nd);
    marks_.assign(this->size(), Mark::keep);
    return split;
  }

 private:
  explicit CellTree(int /*empty*/) {}

  template <class Refine>
  static void descend(const LeafArrays<index_type>& b, std::size_t& j, index_type start, int lv,
                      const Data& d, Refine& refine_fn, std::vector<Data>& out) {
    if (b.levels[j] == lv) {
      IRREGULAR_ASSERT(b.starts[j] == start);
      out.push_back(d);
      ++j;
      return;
    }
    const index_type cs = detail::span_at<C>(lv + 1);
    for (int k = 0; k < detail::children_of<C>; ++k) {
      const index_type s = start + static_cast<index_type>(k) * cs;
      const Data cd = refine_fn(d, detail::cell_at<C>(s, lv + 1));
      descend(b, j, s, lv + 1, cd, refine_fn, out);
    }
  }

  std::vector<Data> data_;
  std::vector<Mark> marks_;
};

}  // namespace irregular
