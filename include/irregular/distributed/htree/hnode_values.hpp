// HnodeValues: a value on every hnode a rank knows: its leaves, the hnodes of its private
// H-Trees, the replicated hnodes above them (baiardi-2001 §2–3), and remote hnodes a traversal
// collected (distributed/htree/hnode_collection.hpp). Linked as a tree in flat arrays: an
// internal hnode's children are one block of links, in curve order.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/tree/detail/curve_math.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

namespace irregular {

/// What a rank knows of an hnode's subtree.
enum class HnodeKind : std::uint8_t {
  internal,  ///< its children are here (child())
  leaf,      ///< a leaf of the H-Tree whose elements are here (a remote one: during a walk)
  closed,    ///< another rank's hnode whose children (or, for a leaf, elements) are not here
};

/// One hnode as it travels: where it is, whether it is a leaf, and its value.
template <class Index, class V>
struct HnodeRecord {
  Index start;         ///< first finest curve index
  std::uint8_t level;  ///< level in the H-Tree
  std::uint8_t leaf;   ///< 1 for a leaf of the H-Tree
  V value;             ///< the reduced value
};

/// Values on hnodes, held as a tree: root() is the whole domain, and an internal hnode's
/// children_of<C> children are child(n, 0 .. children - 1), in curve order. Every
/// hnode records its holder: owner(n) is the rank whose private H-Tree holds it, or -1 for a
/// replicated hnode above the private roots. V must be trivially copyable (it travels as bytes)
/// and default-constructible.
template <SpaceFillingCurve C, class V>
class HnodeValues {
  static_assert(std::is_trivially_copyable_v<V> && std::is_default_constructible_v<V>,
                "irregular::HnodeValues: the hnode value must be trivially copyable and "
                "default-constructible (it travels between ranks as bytes)");

 public:
  using curve_type = C;                                    ///< the curve of the tree
  using index_type = typename C::index_type;               ///< finest curve indices
  using value_type = V;                                    ///< the value on each hnode
  using record_type = HnodeRecord<index_type, V>;          ///< an hnode as it travels
  static constexpr int dim = C::dim;                       ///< dimension
  static constexpr int children = detail::children_of<C>;  ///< children of an internal hnode
  static constexpr std::size_t no_leaf = static_cast<std::size_t>(-1);  ///< not a local leaf

  /// The hnode of the whole domain.
  [[nodiscard]] std::size_t root() const noexcept { return root_; }
  /// Number of hnodes known here.
  [[nodiscard]] std::size_t size() const noexcept { return starts_.size(); }
  /// Its space.
  [[nodiscard]] Cell<dim> cell(std::size_t n) const noexcept { return cells_[n]; }
  /// Its first finest curve index.
  [[nodiscard]] index_type start(std::size_t n) const noexcept { return starts_[n]; }
  /// Its level (0: the root).
  [[nodiscard]] int level(std::size_t n) const noexcept { return cells_[n].level; }
  /// Its value.
  [[nodiscard]] const V& value(std::size_t n) const noexcept { return values_[n]; }
  /// Every value, indexed by hnode.
  [[nodiscard]] std::span<const V> values() const noexcept { return values_; }
  /// What is known of its subtree.
  [[nodiscard]] HnodeKind kind(std::size_t n) const noexcept { return kinds_[n]; }
  /// Whether it is a leaf of the H-Tree (its elements may be elsewhere: kind() says).
  [[nodiscard]] bool is_leaf(std::size_t n) const noexcept { return leaf_[n] != 0; }
  /// Its k-th child in curve order (kind(n) == HnodeKind::internal, k < children).
  [[nodiscard]] std::size_t child(std::size_t n, int k) const noexcept {
    return links_[first_link_[n] + static_cast<std::size_t>(k)];
  }
  /// The rank whose private H-Tree holds it, or -1 above the private roots.
  [[nodiscard]] int owner(std::size_t n) const noexcept { return owners_[n]; }
  /// Its index among this rank's leaves (local_tree()), or no_leaf.
  [[nodiscard]] std::size_t local_leaf(std::size_t n) const noexcept { return local_leaf_[n]; }
  /// The hnode with this start and level, or size() when it is not known here: a descent from
  /// the root, O(level).
  [[nodiscard]] std::size_t find(index_type start, int level) const noexcept {
    std::size_t n = root_;
    while (this->level(n) < level) {
      if (kinds_[n] != HnodeKind::internal) return size();
      const auto k = (start - starts_[n]) / detail::span_at<C>(this->level(n) + 1);
      n = child(n, static_cast<int>(k));
    }
    return starts_[n] == start ? n : size();
  }
  /// The private roots of this rank (hnodes it holds whose parent it does not), in curve order.
  [[nodiscard]] std::span<const std::size_t> private_roots() const noexcept { return roots_; }
  /// Every rank's private roots, in curve order (they tile the domain; owner() names the rank).
  [[nodiscard]] std::span<const std::size_t> all_private_roots() const noexcept {
    return all_roots_;
  }

  // ---- building (reduce_up, hnode collection) ------------------------------------------

  /// Appends an hnode; returns its index.
  std::size_t add(index_type start, int level, HnodeKind kind, int owner, const V& value,
                  bool is_leaf = false, std::size_t local_leaf = no_leaf) {
    const std::size_t n = size();
    starts_.push_back(start);
    cells_.push_back(detail::cell_at<C>(start, level));
    kinds_.push_back(kind);
    leaf_.push_back(static_cast<std::uint8_t>(is_leaf || kind == HnodeKind::leaf));
    first_link_.push_back(0);
    owners_.push_back(owner);
    local_leaf_.push_back(local_leaf);
    values_.push_back(value);
    return n;
  }
  /// Makes n internal with children not linked yet (link() them all).
  void open_links(std::size_t n) {
    const std::size_t first = links_.size();
    links_.resize(first + static_cast<std::size_t>(children), size());  // may throw: n unchanged
    first_link_[n] = first;
    kinds_[n] = HnodeKind::internal;
  }
  /// Links `c` as n's k-th child.
  void link(std::size_t n, int k, std::size_t c) noexcept {
    links_[first_link_[n] + static_cast<std::size_t>(k)] = c;
  }
  /// The start of n's k-th child.
  [[nodiscard]] index_type child_start(std::size_t n, int k) const noexcept {
    return starts_[n] + static_cast<index_type>(k) * detail::span_at<C>(level(n) + 1);
  }
  /// Writes n's value and kind.
  void set(std::size_t n, HnodeKind kind, const V& value, std::size_t local_leaf = no_leaf) {
    kinds_[n] = kind;
    leaf_[n] = static_cast<std::uint8_t>(kind == HnodeKind::leaf);
    values_[n] = value;
    local_leaf_[n] = local_leaf;
  }
  /// A remote leaf whose elements arrived.
  void mark_present(std::size_t n) noexcept { kinds_[n] = HnodeKind::leaf; }
  /// A remote leaf whose elements are gone (the walk that held them ended).
  void mark_closed(std::size_t n) noexcept { kinds_[n] = HnodeKind::closed; }
  /// Sets the root, this rank's private roots and every rank's.
  void finish(std::size_t root, std::vector<std::size_t> private_roots,
              std::vector<std::size_t> all_private_roots) {
    root_ = root;
    roots_ = std::move(private_roots);
    all_roots_ = std::move(all_private_roots);
  }
  /// The state of the domain these values describe (set by the domain's reduce_up, checked by
  /// its walk_hnodes).
  [[nodiscard]] std::uint64_t stamp() const noexcept { return stamp_; }
  /// Sets stamp().
  void set_stamp(std::uint64_t s) noexcept { stamp_ = s; }
  /// The record of hnode n.
  [[nodiscard]] record_type record(std::size_t n) const {
    return {starts_[n], static_cast<std::uint8_t>(level(n)), leaf_[n], values_[n]};
  }
  /// Reserves room for n hnodes.
  void reserve(std::size_t n) {
    starts_.reserve(n);
    cells_.reserve(n);
    kinds_.reserve(n);
    leaf_.reserve(n);
    first_link_.reserve(n);
    links_.reserve(n);
    owners_.reserve(n);
    local_leaf_.reserve(n);
    values_.reserve(n);
  }

 private:
  std::size_t root_ = 0;
  std::uint64_t stamp_ = 0;
  std::vector<index_type> starts_;
  std::vector<Cell<dim>> cells_;
  std::vector<HnodeKind> kinds_;
  std::vector<std::uint8_t> leaf_;
  std::vector<std::size_t> first_link_;
  std::vector<std::size_t> links_;
  std::vector<int> owners_;
  std::vector<std::size_t> local_leaf_;
  std::vector<V> values_;
  std::vector<std::size_t> roots_, all_roots_;
};

}  // namespace irregular
