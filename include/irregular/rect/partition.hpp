// Rectangular partitions of a load array: a list of half-open boxes plus the cut tree that
// generated them (saule-bas-catalyurek §3: jagged cuts, bisection trees), so owner(cell) is a
// descent.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace irregular::rect {

/// A half-open box of cells [lo[d], hi[d]) in every dimension d. Empty when lo[d] == hi[d]
/// somewhere.
template <int D>
struct Rect {
  static_assert(D >= 1 && D <= 4, "irregular::rect::Rect supports 1 to 4 dimensions");
  std::array<std::size_t, D> lo{};  ///< first cell in each dimension
  std::array<std::size_t, D> hi{};  ///< one past the last cell in each dimension

  /// True if the box holds no cell.
  [[nodiscard]] constexpr bool empty() const noexcept {
    for (int d = 0; d < D; ++d)
      if (hi[d] <= lo[d]) return true;
    return false;
  }
  /// Cells along dimension `d` (0 when empty there).
  [[nodiscard]] constexpr std::size_t extent(int d) const noexcept {
    return hi[d] > lo[d] ? hi[d] - lo[d] : 0;
  }
  /// Number of cells.
  [[nodiscard]] constexpr std::size_t volume() const noexcept {
    std::size_t v = 1;
    for (int d = 0; d < D; ++d) v *= extent(d);
    return v;
  }
  /// True if cell `c` lies in the box.
  [[nodiscard]] constexpr bool contains(const std::array<std::size_t, D>& c) const noexcept {
    for (int d = 0; d < D; ++d)
      if (c[d] < lo[d] || c[d] >= hi[d]) return false;
    return true;
  }
  /// Same corners.
  friend constexpr bool operator==(const Rect&, const Rect&) = default;
};

/// The tree of cuts behind a partition. Every internal node splits its box along one dimension
/// into `count` consecutive slabs given by `count + 1` boundaries; every leaf is one part.
///  - rectilinear and 2D jagged partitions: root splits the main dimension into stripes, each
///    stripe node splits the auxiliary dimension (so owner(cell) is two binary searches);
///  - m-way jagged in 3D: three levels;  hierarchical partitions: binary nodes (a bisection tree).
/// Empty slabs are allowed (P larger than the number of cells); owner() never lands in one.
template <int D>
class CutTree {
 public:
  /// One node of the tree: a leaf (a part) or a split into consecutive slabs.
  struct Node {
    int dim = -1;              ///< split dimension; -1 for a leaf
    std::uint32_t first = 0;   ///< leaf: part index; internal: index of the first child node
    std::uint32_t count = 0;   ///< internal: number of children (consecutive nodes)
    std::uint32_t bounds = 0;  ///< internal: offset of the count + 1 boundaries in bounds()
  };

  /// A tree with a single leaf (part 0): the whole box.
  CutTree() : nodes_(1) {}

  /// The nodes; node 0 is the root.
  [[nodiscard]] const std::vector<Node>& nodes() const noexcept { return nodes_; }
  /// The slab boundaries of every internal node, back to back.
  [[nodiscard]] const std::vector<std::size_t>& bounds() const noexcept { return bounds_; }
  /// Number of leaves (parts).
  [[nodiscard]] std::size_t leaf_count() const noexcept {
    std::size_t n = 0;
    for (const auto& v : nodes_) n += v.dim < 0 ? 1 : 0;
    return n;
  }

  /// Turns `node` into an internal node splitting dimension `dim` at `b` (b.size() - 1 slabs);
  /// returns the index of its first child. Children start as leaves for part 0.
  std::uint32_t split(std::uint32_t node, int dim, std::span<const std::size_t> b) {
    const auto first = static_cast<std::uint32_t>(nodes_.size());
    const auto off = static_cast<std::uint32_t>(bounds_.size());
    bounds_.insert(bounds_.end(), b.begin(), b.end());
    nodes_.resize(nodes_.size() + b.size() - 1);
    nodes_[node] = Node{dim, first, static_cast<std::uint32_t>(b.size() - 1), off};
    return first;
  }
  /// Makes `node` a leaf for part `part`.
  void set_leaf(std::uint32_t node, std::uint32_t part) { nodes_[node] = Node{-1, part, 0, 0}; }
  /// Capacity for `nodes` nodes and `bounds` boundaries (avoids regrowth while building).
  void reserve(std::size_t nodes, std::size_t bounds) {
    nodes_.reserve(nodes);
    bounds_.reserve(bounds);
  }

  /// Index of the part that owns `cell` (which must lie inside the partitioned box).
  [[nodiscard]] std::size_t owner(const std::array<std::size_t, D>& cell) const noexcept {
    std::uint32_t v = 0;
    while (nodes_[v].dim >= 0) {
      const Node& n = nodes_[v];
      const std::size_t* b = bounds_.data() + n.bounds;
      // last slab whose lower boundary is <= x: skips empty slabs.
      const auto k = std::upper_bound(b + 1, b + n.count, cell[n.dim]) - (b + 1);
      v = n.first + static_cast<std::uint32_t>(k);
    }
    return nodes_[v].first;
  }

  /// Appends the parts whose slabs meet the half-open `region` (inside the partitioned box;
  /// empty parts never): the ranks a region touches, for ghost collection. Parts come in
  /// tree order, each once.
  void owners(const Rect<D>& region, std::vector<std::size_t>& out) const {
    if (region.empty()) return;
    owners_rec(0, region, out);
  }

  /// Replaces leaf `node` by a copy of `sub`, whose part indices are shifted by `part_offset`.
  void graft(std::uint32_t node, const CutTree& sub, std::uint32_t part_offset) {
    graft_rec(node, sub, 0, part_offset);
  }

 private:
  void owners_rec(std::uint32_t v, const Rect<D>& r, std::vector<std::size_t>& out) const {
    const Node& n = nodes_[v];
    if (n.dim < 0) {
      out.push_back(n.first);
      return;
    }
    const std::size_t* b = bounds_.data() + n.bounds;
    for (std::uint32_t k = 0; k < n.count; ++k)
      if (b[k] < b[k + 1] && b[k] < r.hi[n.dim] && r.lo[n.dim] < b[k + 1])
        owners_rec(n.first + k, r, out);
  }

  void graft_rec(std::uint32_t node, const CutTree& sub, std::uint32_t sv, std::uint32_t off) {
    const Node& s = sub.nodes_[sv];
    if (s.dim < 0) {
      set_leaf(node, s.first + off);
      return;
    }
    const std::span<const std::size_t> b(sub.bounds_.data() + s.bounds, s.count + 1);
    const std::uint32_t first = split(node, s.dim, b);
    for (std::uint32_t k = 0; k < s.count; ++k) graft_rec(first + k, sub, s.first + k, off);
  }

  std::vector<Node> nodes_;
  std::vector<std::size_t> bounds_;
};

/// A partition of a box into P rectangles (some possibly empty) with the tree that locates them.
template <int D>
struct Partition {
  Rect<D> box{};               ///< the partitioned box
  std::vector<Rect<D>> parts;  ///< part k is processor k
  CutTree<D> tree;             ///< leaves refer to indices in `parts`

  /// Number of parts P.
  [[nodiscard]] std::size_t size() const noexcept { return parts.size(); }
  /// Part that owns `cell` (inside `box`), by descent of the cut tree.
  [[nodiscard]] std::size_t owner(const std::array<std::size_t, D>& cell) const noexcept {
    return tree.owner(cell);
  }
  /// Non-empty parts meeting `region` (clipped to `box`), by descent of the cut tree.
  [[nodiscard]] std::vector<std::size_t> owners(Rect<D> region) const {
    for (int d = 0; d < D; ++d) {
      region.lo[d] = std::max(region.lo[d], box.lo[d]);
      region.hi[d] = std::min(region.hi[d], box.hi[d]);
    }
    std::vector<std::size_t> out;
    tree.owners(region, out);
    return out;
  }
};

/// The cuts of a 2D jagged (or rectilinear) partition, as the jagged algorithms build them.
struct JaggedCuts {
  int main_dim = 0;                             ///< dimension of the stripes
  std::vector<std::size_t> stripes;             ///< m + 1 stripe boundaries
  std::vector<std::vector<std::size_t>> parts;  ///< per stripe: its part boundaries
  std::vector<std::size_t> first_part;          ///< per stripe: index of its first part
};

/// The jagged cuts of `p` when its tree has the jagged shape (a root split into stripes, each
/// a leaf or split along the other dimension into leaves numbered consecutively); false
/// otherwise (hierarchical partitions: use the tree itself).
inline bool jagged_cuts(const Partition<2>& p, JaggedCuts& out) {
  const auto& nodes = p.tree.nodes();
  const auto& bounds = p.tree.bounds();
  const auto& root = nodes[0];
  if (root.dim < 0) return false;
  out = JaggedCuts{};
  out.main_dim = root.dim;
  out.stripes.assign(bounds.begin() + root.bounds, bounds.begin() + root.bounds + root.count + 1);
  for (std::uint32_t k = 0; k < root.count; ++k) {
    const auto& s = nodes[root.first + k];
    if (s.dim < 0) {
      out.parts.push_back({p.box.lo[1 - root.dim], p.box.hi[1 - root.dim]});
      out.first_part.push_back(s.first);
      continue;
    }
    if (s.dim == root.dim) return false;
    for (std::uint32_t t = 0; t < s.count; ++t)
      if (nodes[s.first + t].dim >= 0 || nodes[s.first + t].first != nodes[s.first].first + t)
        return false;
    out.parts.emplace_back(bounds.begin() + s.bounds, bounds.begin() + s.bounds + s.count + 1);
    out.first_part.push_back(nodes[s.first].first);
  }
  return true;
}

}  // namespace irregular::rect

namespace irregular::detail {

/// Incremental construction: a leaf gets the next part index and its box.
template <int D>
inline void emit_leaf(rect::Partition<D>& out, std::uint32_t node, const rect::Rect<D>& r) {
  out.tree.set_leaf(node, static_cast<std::uint32_t>(out.parts.size()));
  out.parts.push_back(r);
}

/// Replaces the leaf of part k of `outer` by inner[k] (which partitions outer.parts[k]).
template <int D>
rect::Partition<D> compose(const rect::Partition<D>& outer,
                           const std::vector<rect::Partition<D>>& inner) {
  rect::Partition<D> out;
  out.box = outer.box;
  std::vector<std::uint32_t> offset(inner.size() + 1, 0);
  for (std::size_t k = 0; k < inner.size(); ++k)
    offset[k + 1] = offset[k] + static_cast<std::uint32_t>(inner[k].parts.size());
  for (const auto& in : inner) out.parts.insert(out.parts.end(), in.parts.begin(), in.parts.end());
  // copy the outer tree, grafting inner trees at its leaves
  struct Rec {
    const rect::Partition<D>& o;
    const std::vector<rect::Partition<D>>& in;
    const std::vector<std::uint32_t>& off;
    rect::CutTree<D>& t;
    void run(std::uint32_t node, std::uint32_t ov) {
      const auto& n = o.tree.nodes()[ov];
      if (n.dim < 0) {
        t.graft(node, in[n.first].tree, off[n.first]);
        return;
      }
      const std::span<const std::size_t> b(o.tree.bounds().data() + n.bounds, n.count + 1);
      const std::uint32_t first = t.split(node, n.dim, b);
      for (std::uint32_t k = 0; k < n.count; ++k) run(first + k, n.first + k);
    }
  };
  Rec{outer, inner, offset, out.tree}.run(0, 0);
  return out;
}
}  // namespace irregular::detail
