// RectangleMap: the ownership map of the rectangular partitioners (saule-bas-catalyurek §3–5):
// one rectangle of grid cells per rank, found by cut-tree descent, plus the coarse leaves held
// whole across rectangles. Replicated state is O(p + whole-held cells).
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/core/index.hpp>
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>
#include <irregular/distributed/maps/detail/aligned_cover.hpp>
#include <irregular/distributed/maps/detail/rect_serialization.hpp>
#include <irregular/distributed/maps/detail/whole_held.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/rect/partition.hpp>
#include <irregular/tree/stencil.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace irregular {

/// The ownership map of the rectangular partitioners (saule-bas-catalyurek §3-5): one rectangle
/// of grid cells per rank, found by cut-tree descent, plus the coarse leaves held whole across
/// rectangles.
template <SpaceFillingCurve C>
requires(C::dim == 2 || C::dim == 3) class RectangleMap {
 public:
  /// The curve whose indices the map answers for.
  using curve_type = C;
  /// The curve's index type.
  using index_type = typename C::index_type;
  /// Dimension of the cells (2 or 3).
  static constexpr int dim = C::dim;
  /// Parts are rectangles of grid cells, not curve intervals.
  static constexpr bool contiguous_segments = false;

  /// A cell coarser than the grid, spanning several rectangles, held whole by `owner` (the
  /// grid owner of its first index, i.e. leaf_owner(cell)).
  using WholeHeld = detail::WholeHeld<C>;

  /// One rank holding a one-cell grid at level 0: everything on rank 0.
  RectangleMap() {
    for (int d = 0; d < dim; ++d) partition_.box.hi[d] = 1;
    partition_.parts.push_back(partition_.box);
  }

  /// `partition` cuts the grid of cells at `level` (arity^level cells per axis) into one
  /// rectangle per rank. Throws irregular::invalid_argument when the level is outside
  /// [0, max_level], the partition's box is not that grid, or it has no parts.
  RectangleMap(int level, rect::Partition<dim> partition)
      : level_(level), partition_(std::move(partition)) {
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

  /// Number of parts (ranks) p.
  [[nodiscard]] int parts() const noexcept { return static_cast<int>(partition_.parts.size()); }
  /// The level of the grid cells.
  [[nodiscard]] int level() const noexcept { return level_; }
  /// The rectangles, one per rank, over the grid.
  [[nodiscard]] const rect::Partition<dim>& partition() const noexcept { return partition_; }
  /// The whole-held cells, sorted by curve position (disjoint).
  [[nodiscard]] const std::vector<WholeHeld>& exceptions() const noexcept { return exceptions_; }

  /// Rank holding the data at finest index i: the owner of the whole-held cell containing i,
  /// else the owner of the rectangle holding i's grid cell. O(log E + cut-tree depth).
  [[nodiscard]] int owner(index_type i) const {
    if (const WholeHeld* e = held_containing({i, static_cast<index_type>(i + 1)})) return e->owner;
    return grid_owner(curve::cell_of_finest<C>(i, level_));
  }
  /// Rank holding all the data of a cell, or -1 when several ranks may hold parts of it.
  [[nodiscard]] int owner(const Cell<dim>& c) const {
    if (const WholeHeld* e = held_containing(curve::hnode_interval<C>(c))) return e->owner;
    if (c.level >= level_) return grid_owner(curve::ancestor_at<C>(c, level_));
    const auto h = holders(curve::hnode_interval<C>(c));
    return h.size() == 1 ? h[0] : -1;
  }
  /// Where a leaf with cell c lives, whole: the grid owner of its first finest index (so a leaf
  /// coarser than the grid goes whole to one rank). Independent of the whole-held cells.
  [[nodiscard]] int leaf_owner(const Cell<dim>& c) const {
    if (c.level >= level_) return grid_owner(curve::ancestor_at<C>(c, level_));
    return grid_owner(curve::cell_of_finest<C>(curve::finest_index<C>(c), level_));
  }

  /// Ranks whose non-empty rectangles meet the cell, sorted (ignores the whole-held cells).
  [[nodiscard]] std::vector<int> owners(const Cell<dim>& c) const {
    std::vector<int> r;
    append_rect_owners(c, r);
    std::sort(r.begin(), r.end());
    return r;
  }
  /// Ranks whose non-empty rectangles meet a curve-index interval (ignores the whole-held cells).
  [[nodiscard]] std::vector<int> owners(IndexInterval<index_type> iv) const {
    std::vector<int> r;
    detail::aligned_cover<C>(iv, [&](const Cell<dim>& c) { append_rect_owners(c, r); });
    sort_unique(r);
    return r;
  }

  /// Ranks that may hold data meeting the interval, sorted: a safe superset, as fault prevention
  /// needs (baiardi-2001 §4). For each maximal aligned cell of the interval: inside a whole-held
  /// cell, that cell's owner only; otherwise the rectangle owners of its grid block. These
  /// include the owners of the whole-held cells inside the cell (aligned cells nest or are
  /// disjoint, and such an owner holds the rectangle of the whole-held cell's first grid cell,
  /// which lies in the block). Exact for a single cell inside a whole-held cell and for a cell
  /// at or below the grid level outside them (its grid owner only).
  [[nodiscard]] std::vector<int> holders(IndexInterval<index_type> iv) const {
    std::vector<int> r;
    detail::aligned_cover<C>(iv, [&](const Cell<dim>& x) {
      if (const WholeHeld* e = held_containing(curve::hnode_interval<C>(x)))
        r.push_back(e->owner);
      else
        append_rect_owners(x, r);
    });
    sort_unique(r);
    return r;
  }

  /// Whether the cell is coarser than the grid and its grid block meets more than one non-empty
  /// rectangle (ignores the whole-held cells). Stops the cut-tree descent at the second part.
  [[nodiscard]] bool splits(const Cell<dim>& c) const {
    if (c.level >= level_) return false;
    std::size_t found = 0;
    count_parts(0, block_of(c), 2, found);
    return found >= 2;
  }

  /// This map whose whole-held cells are exactly those of `cells` (disjoint leaves of the
  /// current tree) that split, each held by its leaf_owner. Replaces the previous list.
  /// Precondition: the cells are disjoint (checked by IRREGULAR_ASSERT).
  [[nodiscard]] RectangleMap hold_whole(std::span<const Cell<dim>> cells) const {
    RectangleMap out = *this;
    out.exceptions_ = detail::whole_held_of<C>(*this, cells);
    return out;
  }

  /// Ranks holding data that touches rank's data across a face, edge or corner, also across the
  /// periodic axes; sorted, without rank. Exact: a rank's data is its rectangle less the
  /// whole-held cells of others, plus its own whole-held cells. Rectangles that no whole-held
  /// cell meets are compared as boxes; otherwise the grid cells along the contact are checked.
  /// O((1 + E_rank) · (P + E)) box tests plus the contact cells of the affected pieces.
  [[nodiscard]] std::vector<int> neighbour_ranks(int rank, Periodicity<dim> per = {}) const {
    const std::size_t P = partition_.parts.size();
    std::vector<char> eaten(P, 0);  // a whole-held cell meets the rectangle
    for (const auto& e : exceptions_) {
      for (std::size_t k : partition_.owners(block_of(e.cell))) eaten[k] = 1;
    }
    std::vector<Piece> mine, others;
    for (std::size_t k = 0; k < P; ++k) {
      if (partition_.parts[k].empty()) continue;
      const Piece p{partition_.parts[k], static_cast<int>(k), eaten[k] == 0};
      (static_cast<int>(k) == rank ? mine : others).push_back(p);
    }
    for (const auto& e : exceptions_)
      (e.owner == rank ? mine : others).push_back(Piece{block_of(e.cell), e.owner, true});
    std::vector<char> found(P, 0);
    for (const auto& a : mine)
      for (const auto& b : others) {
        if (found[static_cast<std::size_t>(b.rank)] || !boxes_touch(a.box, b.box, per)) continue;
        if ((a.whole && b.whole) || cells_touch(a, b, per))
          found[static_cast<std::size_t>(b.rank)] = 1;
      }
    std::vector<int> r;
    for (std::size_t k = 0; k < P; ++k)
      if (found[k]) r.push_back(static_cast<int>(k));
    return r;
  }

  friend bool operator==(const RectangleMap& a, const RectangleMap& b) {
    if (a.level_ != b.level_ || a.partition_.box != b.partition_.box ||
        a.partition_.parts != b.partition_.parts ||
        a.partition_.tree.bounds() != b.partition_.tree.bounds() || a.exceptions_ != b.exceptions_)
      return false;
    const auto& x = a.partition_.tree.nodes();
    const auto& y = b.partition_.tree.nodes();
    return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](const auto& p, const auto& q) {
      return p.dim == q.dim && p.first == q.first && p.count == q.count && p.bounds == q.bounds;
    });
  }

  /// Boost.Serialization: the grid level, the partition (box, parts, cut tree) and the
  /// whole-held cells. Loading validates like the constructor (irregular::invalid_argument or
  /// irregular::parse_error) and leaves the map unchanged when it throws.
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    if constexpr (Archive::is_saving::value) {
      std::int32_t level = level_;
      ar& level& partition_;
      detail::save_whole_held<C>(ar, exceptions_);
    } else {
      std::int32_t level = 0;
      rect::Partition<dim> part;
      ar& level& part;
      RectangleMap m(level, std::move(part));
      m.exceptions_ = detail::load_whole_held<C>(ar, m, "irregular::RectangleMap");
      *this = std::move(m);
    }
  }

 private:
  /// A rectangle or a whole-held cell of `rank`, in grid cells; `whole`: rank holds all of it.
  struct Piece {
    rect::Rect<dim> box;
    int rank;
    bool whole;
  };

  static void sort_unique(std::vector<int>& r) {
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
  }

  [[nodiscard]] int grid_owner(const Cell<dim>& g) const {
    std::array<std::size_t, dim> at;
    for (int d = 0; d < dim; ++d) at[d] = static_cast<std::size_t>(g.anchor[d]);
    return static_cast<int>(partition_.owner(at));
  }
  /// The grid cells under a cell coarser than (or at) the grid level.
  [[nodiscard]] rect::Rect<dim> block_of(const Cell<dim>& c) const {
    const coord_t f = ipow<coord_t>(static_cast<coord_t>(C::arity), level_ - c.level);
    rect::Rect<dim> b;
    for (int d = 0; d < dim; ++d) {
      b.lo[d] = static_cast<std::size_t>(c.anchor[d] * f);
      b.hi[d] = static_cast<std::size_t>((c.anchor[d] + 1) * f);
    }
    return b;
  }
  void append_rect_owners(const Cell<dim>& c, std::vector<int>& r) const {
    if (c.level >= level_) {
      r.push_back(grid_owner(curve::ancestor_at<C>(c, level_)));
      return;
    }
    for (std::size_t k : partition_.owners(block_of(c))) r.push_back(static_cast<int>(k));
  }
  /// Cut-tree descent counting the parts meeting `r`, stopping at `limit`.
  void count_parts(std::uint32_t v, const rect::Rect<dim>& r, std::size_t limit,
                   std::size_t& found) const {
    const auto& n = partition_.tree.nodes()[v];
    if (n.dim < 0) {
      ++found;
      return;
    }
    const std::size_t* b = partition_.tree.bounds().data() + n.bounds;
    for (std::uint32_t k = 0; k < n.count && found < limit; ++k)
      if (b[k] < b[k + 1] && b[k] < r.hi[n.dim] && r.lo[n.dim] < b[k + 1])
        count_parts(n.first + k, r, limit, found);
  }

  /// The whole-held cell containing all of `iv`, or nullptr.
  [[nodiscard]] const WholeHeld* held_containing(IndexInterval<index_type> iv) const {
    return detail::held_containing(exceptions_, iv);
  }
  /// Rank holding the data of grid cell u.
  [[nodiscard]] int grid_cell_holder(const std::array<std::size_t, dim>& u) const {
    Cell<dim> g;
    g.level = level_;
    for (int d = 0; d < dim; ++d) g.anchor[d] = u[d];
    if (!exceptions_.empty())
      if (const WholeHeld* e = held_containing(curve::hnode_interval<C>(g))) return e->owner;
    return static_cast<int>(partition_.owner(u));
  }

  /// Do the closed boxes meet, with wrap-around on the periodic axes?
  [[nodiscard]] bool boxes_touch(const rect::Rect<dim>& a, const rect::Rect<dim>& b,
                                 const Periodicity<dim>& per) const {
    const auto n = static_cast<std::int64_t>(n_);
    for (int d = 0; d < dim; ++d) {
      const auto alo = static_cast<std::int64_t>(a.lo[d]), ahi = static_cast<std::int64_t>(a.hi[d]);
      bool meet = false;
      for (std::int64_t k = per[d] ? -1 : 0; k <= (per[d] ? 1 : 0) && !meet; ++k)
        meet = static_cast<std::int64_t>(b.lo[d]) + k * n <= ahi &&
               alo <= static_cast<std::int64_t>(b.hi[d]) + k * n;
      if (!meet) return false;
    }
    return true;
  }

  /// Is some grid cell of `a` held by a.rank adjacent (with wrap) to a grid cell of `b` held by
  /// b.rank? Only the cells of `a` within one cell of `b` are visited.
  [[nodiscard]] bool cells_touch(const Piece& a, const Piece& b,
                                 const Periodicity<dim>& per) const {
    const auto n = static_cast<std::int64_t>(n_);
    std::array<std::vector<std::size_t>, dim> near;  // per axis: a's coordinates within 1 of b
    for (int d = 0; d < dim; ++d) {
      auto add = [&](std::int64_t lo, std::int64_t hi) {  // [lo, hi) clipped to a
        lo = std::max(lo, static_cast<std::int64_t>(a.box.lo[d]));
        hi = std::min(hi, static_cast<std::int64_t>(a.box.hi[d]));
        for (std::int64_t x = lo; x < hi; ++x) near[d].push_back(static_cast<std::size_t>(x));
      };
      const std::int64_t lo = static_cast<std::int64_t>(b.box.lo[d]) - 1,
                         hi = static_cast<std::int64_t>(b.box.hi[d]) + 1;
      if (!per[d])
        add(lo, hi);
      else if (hi - lo >= n)
        add(0, n);
      else {
        const std::int64_t s = (lo % n + n) % n, e = s + (hi - lo);
        add(s, std::min(e, n));
        if (e > n) add(0, e - n);
      }
      std::sort(near[d].begin(), near[d].end());
      near[d].erase(std::unique(near[d].begin(), near[d].end()), near[d].end());
      if (near[d].empty()) return false;
    }
    constexpr int combos = dim == 2 ? 9 : 27;
    std::array<std::size_t, dim> pos{};  // odometer over near[]
    for (;;) {
      std::array<std::size_t, dim> u;
      for (int d = 0; d < dim; ++d) u[d] = near[d][pos[d]];
      if (a.whole || grid_cell_holder(u) == a.rank) {
        for (int m = 0; m < combos; ++m) {
          std::array<std::size_t, dim> v;
          bool ok = true;
          for (int d = 0, t = m; d < dim && ok; ++d, t /= 3) {
            std::int64_t x = static_cast<std::int64_t>(u[d]) + t % 3 - 1;
            if (per[d]) x = (x + n) % n;
            ok = x >= 0 && x < n && b.box.lo[d] <= static_cast<std::size_t>(x) &&
                 static_cast<std::size_t>(x) < b.box.hi[d];
            v[d] = static_cast<std::size_t>(x);
          }
          if (ok && (b.whole || grid_cell_holder(v) == b.rank)) return true;
        }
      }
      int d = 0;
      while (d < dim && ++pos[d] == near[d].size()) pos[d++] = 0;
      if (d == dim) return false;
    }
  }

  int level_ = 0;
  coord_t n_ = 1;
  rect::Partition<dim> partition_;
  std::vector<WholeHeld> exceptions_;  // sorted by interval.start, disjoint
};

static_assert(OwnershipMap<RectangleMap<curve::Morton<2>>> &&
                  OwnershipMap<RectangleMap<curve::Morton<3>>> &&
                  OwnershipMap<RectangleMap<curve::Hilbert<2>>> &&
                  OwnershipMap<RectangleMap<curve::Hilbert<3>>> &&
                  OwnershipMap<RectangleMap<curve::Peano<2>>> &&
                  OwnershipMap<RectangleMap<curve::Peano<3>>> &&
                  OwnershipMap<RectangleMap<curve::Morton<2, uint128_t>>>,
              "irregular::RectangleMap must satisfy irregular::OwnershipMap");

}  // namespace irregular
