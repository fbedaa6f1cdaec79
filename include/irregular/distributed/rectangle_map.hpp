// RectangleMap: the ownership map of the rectangular partitioners (saule-bas-catalyurek §3–5).
// The leaves' loads are projected on a grid at a chosen level, the grid is cut into one
// rectangle per rank, and owner(cell) descends the cut tree (binary searches for jagged cuts,
// a bisection-tree descent for hierarchical ones). Replicated state is O(p).
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/core/index.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/detail/aligned_cover.hpp>
#include <irregular/distributed/ownership_map.hpp>
#include <irregular/rect/partition.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace irregular {

template <SpaceFillingCurve C>
  requires(C::dim == 2 || C::dim == 3)
class RectangleMap {
 public:
  using curve_type = C;
  using index_type = typename C::index_type;
  static constexpr int dim = C::dim;

  /// `partition` cuts the grid of cells at `level` (arity^level cells per axis) into one
  /// rectangle per rank. Throws irregular::invalid_argument when the level is outside
  /// [0, max_level], the partition's box is not that grid, or it has no parts.
  RectangleMap(int level, rect::Partition<dim> partition) : level_(level), partition_(std::move(partition)) {
    if (level < 0 || level > C::max_level)
      throw invalid_argument("irregular::RectangleMap: grid level " + std::to_string(level) +
                             " outside [0, " + std::to_string(C::max_level) + "]");
    n_ = ipow<coord_t>(static_cast<coord_t>(C::arity), level);
    for (int d = 0; d < dim; ++d)
      if (partition_.box.lo[d] != 0 || partition_.box.hi[d] != n_)
        throw invalid_argument("irregular::RectangleMap: the partition must cover the grid [0, " +
                               std::to_string(n_) + ") in every dimension");
    if (partition_.parts.empty()) throw invalid_argument("irregular::RectangleMap: no parts");
  }

  [[nodiscard]] int parts() const noexcept { return static_cast<int>(partition_.parts.size()); }
  [[nodiscard]] int level() const noexcept { return level_; }
  [[nodiscard]] const rect::Partition<dim>& partition() const noexcept { return partition_; }

  /// Rank owning the grid cell that contains finest index i.
  [[nodiscard]] int owner(index_type i) const { return grid_owner(curve::cell_of_finest<C>(i, level_)); }
  /// Owner of a whole cell, or -1 when the cell spans several rectangles.
  [[nodiscard]] int owner(const Cell<dim>& c) const {
    if (c.level >= level_) return grid_owner(curve::ancestor_at<C>(c, level_));
    const auto o = owners(c);
    return o.size() == 1 ? o[0] : -1;
  }
  /// Where a leaf lives: the owner of the grid cell holding its first curve index, so a leaf
  /// coarser than the grid goes whole to one rank.
  [[nodiscard]] int leaf_owner(const Cell<dim>& c) const { return owner(curve::finest_index<C>(c)); }

  /// Ranks whose non-empty rectangles meet the cell, sorted.
  [[nodiscard]] std::vector<int> owners(const Cell<dim>& c) const {
    if (c.level >= level_) return {owner(c)};
    const coord_t f = ipow<coord_t>(static_cast<coord_t>(C::arity), level_ - c.level);
    rect::Rect<dim> block;
    for (int d = 0; d < dim; ++d) {
      block.lo[d] = static_cast<std::size_t>(c.anchor[d] * f);
      block.hi[d] = static_cast<std::size_t>((c.anchor[d] + 1) * f);
    }
    std::vector<int> r;
    for (std::size_t k = 0; k < partition_.parts.size(); ++k)
      if (intersects(partition_.parts[k], block, false)) r.push_back(static_cast<int>(k));
    return r;
  }
  /// Ranks meeting any part of a curve-index interval (its maximal aligned cells), sorted.
  [[nodiscard]] std::vector<int> owners(IndexInterval<index_type> iv) const {
    std::vector<int> r;
    detail::aligned_cover<C>(iv, [&](const Cell<dim>& c) {
      for (int k : owners(c)) r.push_back(k);
    });
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    return r;
  }

  /// Ranks that may hold a leaf meeting the interval: the rectangle owners plus, for leaves
  /// coarser than the grid (held whole by leaf_owner), the holders of every coarse ancestor of
  /// the interval's cells. A safe superset, as fault prevention needs (baiardi-2001 §4).
  [[nodiscard]] std::vector<int> holders(IndexInterval<index_type> iv) const {
    std::vector<int> r = owners(iv);
    detail::aligned_cover<C>(iv, [&](const Cell<dim>& c) {
      for (int l = 0; l < level_ && l <= c.level; ++l) r.push_back(leaf_owner(curve::ancestor_at<C>(c, l)));
    });
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    return r;
  }

  /// Ranks whose rectangles share a face, edge or corner with rank's rectangle.
  [[nodiscard]] std::vector<int> neighbour_ranks(int rank) const {
    std::vector<int> r;
    const auto& mine = partition_.parts[static_cast<std::size_t>(rank)];
    if (mine.empty()) return r;
    for (std::size_t k = 0; k < partition_.parts.size(); ++k)
      if (static_cast<int>(k) != rank && !partition_.parts[k].empty() && intersects(partition_.parts[k], mine, true))
        r.push_back(static_cast<int>(k));
    return r;
  }

 private:
  [[nodiscard]] int grid_owner(const Cell<dim>& g) const {
    std::array<std::size_t, dim> at;
    for (int d = 0; d < dim; ++d) at[d] = static_cast<std::size_t>(g.anchor[d]);
    return static_cast<int>(partition_.owner(at));
  }
  /// Do two non-empty boxes overlap (closed: also when they only touch)?
  static bool intersects(const rect::Rect<dim>& a, const rect::Rect<dim>& b, bool closed) {
    if (a.empty() || b.empty()) return false;
    for (int d = 0; d < dim; ++d) {
      if (closed ? (a.hi[d] < b.lo[d] || b.hi[d] < a.lo[d]) : (a.hi[d] <= b.lo[d] || b.hi[d] <= a.lo[d]))
        return false;
    }
    return true;
  }

  int level_;
  coord_t n_ = 1;
  rect::Partition<dim> partition_;
};

}  // namespace irregular
