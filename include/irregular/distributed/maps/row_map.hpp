// RowMap: the ownership map of the bounded-neighbours partitioner (baiardi-bounded-neighbours
// §3-4): the grid of cells at one level, linearized row-major (row = axis 1, column = axis 0),
// cut into one run of cells per rank; owner by binary search on the p+1 cuts, plus the coarse
// leaves held whole across runs. Replicated state is O(p + whole-held cells).
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
#include <irregular/distributed/maps/detail/whole_held.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/rows/grid.hpp>
#include <irregular/rows/neighbour_count.hpp>
#include <irregular/tree/stencil.hpp>

#include <boost/serialization/vector.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace irregular {

/// The ownership map of bounded neighbours (baiardi-bounded-neighbours §3-4): the grid of cells
/// at one level, linearized row-major, cut into one run of cells per rank (owner by binary search
/// on the p+1 cuts), plus the coarse leaves held whole across runs.
template <SpaceFillingCurve C>
requires(C::dim == 2) class RowMap {
 public:
  /// The curve whose indices the map answers for.
  using curve_type = C;
  /// The curve's index type.
  using index_type = typename C::index_type;
  /// Dimension of the cells: rows are 2D.
  static constexpr int dim = 2;
  /// Parts are runs of row-major grid cells, not curve intervals.
  static constexpr bool contiguous_segments = false;

  /// A cell coarser than the grid, spanning several runs, held whole by `owner` (the owner of
  /// its first row-major grid cell, i.e. leaf_owner(cell)).
  using WholeHeld = detail::WholeHeld<C>;

  /// Everything on rank 0, as `parts` parts of a one-cell grid at level 0 (the others empty).
  explicit RowMap(int parts = 1) {
    if (parts < 1) throw invalid_argument("irregular::RowMap: at least one part");
    cuts_.assign(static_cast<std::size_t>(parts) + 1, 1);
    cuts_[0] = 0;
  }

  /// The grid at `level` (n = arity^level cells per axis) cut row-major: rank k holds the grid
  /// cells at positions [cuts[k], cuts[k+1]) (position = row * n + column). Throws
  /// irregular::invalid_argument for a level outside [0, max_level], a grid of more than 2^62
  /// cells, or cuts that are not p+1 >= 2 nondecreasing values from 0 to n * n.
  RowMap(int level, std::vector<std::uint64_t> cuts) : level_(level), cuts_(std::move(cuts)) {
    if (level < 0 || level > C::max_level)
      throw invalid_argument("irregular::RowMap: grid level " + std::to_string(level) +
                             " outside [0, " + std::to_string(C::max_level) + "]");
    if (2 * level * (C::arity == 3 ? 2 : 1) > 62)
      throw invalid_argument("irregular::RowMap: the grid at level " + std::to_string(level) +
                             " is too large");
    n_ = ipow<std::uint64_t>(static_cast<std::uint64_t>(C::arity), level);
    if (cuts_.size() < 2 || cuts_.front() != 0 || cuts_.back() != n_ * n_)
      throw invalid_argument("irregular::RowMap: the cuts must run from 0 to " +
                             std::to_string(n_ * n_));
    for (std::size_t k = 1; k < cuts_.size(); ++k)
      if (cuts_[k] < cuts_[k - 1])
        throw invalid_argument("irregular::RowMap: the cuts decrease at " + std::to_string(k));
  }

  /// Number of parts (ranks) p.
  [[nodiscard]] int parts() const noexcept { return static_cast<int>(cuts_.size()) - 1; }
  /// The level of the grid cells.
  [[nodiscard]] int level() const noexcept { return level_; }
  /// The row grid (n x n cells at level()).
  [[nodiscard]] rows::Grid grid() const noexcept {
    return {static_cast<std::size_t>(n_), static_cast<std::size_t>(n_)};
  }
  /// The p+1 row-major cuts.
  [[nodiscard]] const std::vector<std::uint64_t>& cuts() const noexcept { return cuts_; }
  /// The whole-held cells, sorted by curve position (disjoint).
  [[nodiscard]] const std::vector<WholeHeld>& exceptions() const noexcept { return exceptions_; }
  /// The row-major position of a cell at or below the grid level (its grid cell's position).
  [[nodiscard]] std::uint64_t position(const Cell<dim>& c) const {
    IRREGULAR_ASSERT(c.level >= level_);
    const auto g = curve::ancestor_at<C>(c, level_);
    return static_cast<std::uint64_t>(g.anchor[1]) * n_ + static_cast<std::uint64_t>(g.anchor[0]);
  }
  /// The rank whose run holds row-major grid position x.
  [[nodiscard]] int run_owner(std::uint64_t x) const noexcept {
    return static_cast<int>(std::upper_bound(cuts_.begin(), cuts_.end(), x) - cuts_.begin()) - 1;
  }

  /// Rank holding the data at finest index i. O(log E + log p).
  [[nodiscard]] int owner(index_type i) const {
    if (const WholeHeld* e = held_containing({i, static_cast<index_type>(i + 1)})) return e->owner;
    return run_owner(position(curve::cell_of_finest<C>(i, level_)));
  }
  /// Where a leaf with cell c lives, whole: the run owner of its grid cell, or for a cell
  /// coarser than the grid of its first row-major grid cell (so its load, attributed there,
  /// stays inside its holder's run).
  [[nodiscard]] int leaf_owner(const Cell<dim>& c) const {
    if (c.level >= level_) return run_owner(position(c));
    const auto b = block_of(c);
    return run_owner(b.r0 * n_ + b.c0);
  }
  /// The row-major grid position a leaf's load is attributed to (see leaf_owner).
  [[nodiscard]] std::uint64_t load_position(const Cell<dim>& c) const {
    if (c.level >= level_) return position(c);
    const auto b = block_of(c);
    return b.r0 * n_ + b.c0;
  }

  /// Ranks that may hold data meeting the interval, sorted: a safe superset (baiardi-2001 §4).
  /// For each maximal aligned cell of the interval: inside a whole-held cell, its owner; at or
  /// below the grid level, its run owner; coarser, the owners of the runs meeting its block of
  /// grid cells, row by row (one range when the block spans whole rows). Owners of whole-held
  /// cells inside a block own their first grid cell, which lies in the block, so they are included.
  [[nodiscard]] std::vector<int> holders(IndexInterval<index_type> iv) const {
    std::vector<int> r;
    detail::aligned_cover<C>(iv, [&](const Cell<dim>& x) {
      if (const WholeHeld* e = held_containing(curve::hnode_interval<C>(x)))
        r.push_back(e->owner);
      else if (x.level >= level_)
        r.push_back(run_owner(position(x)));
      else
        append_block_owners(block_of(x), r);
    });
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    return r;
  }

  /// Whether the cell is coarser than the grid and its block meets more than one run: runs are
  /// contiguous, so it does exactly when its first and last row-major cells lie in different runs.
  [[nodiscard]] bool splits(const Cell<dim>& c) const {
    if (c.level >= level_) return false;
    const auto b = block_of(c);
    return run_owner(b.r0 * n_ + b.c0) != run_owner((b.r1 - 1) * n_ + b.c1 - 1);
  }

  /// This map whose whole-held cells are exactly those of `cells` (disjoint leaves) that split,
  /// each held by its leaf_owner. Replaces the previous list.
  [[nodiscard]] RowMap hold_whole(std::span<const Cell<dim>> cells) const {
    RowMap out = *this;
    out.exceptions_ = detail::whole_held_of<C>(*this, cells);
    return out;
  }

  /// Ranks holding data that touches rank's data across a face, edge or corner, also across the
  /// periodic axes; sorted, without rank. Exact. Without whole-held cells this is the exact
  /// neighbour count of the rows layer (8-neighbour stencil, only runs within one chain reach
  /// tested); with them, runs and whole-held blocks are compared as boxes and, where a
  /// whole-held cell eats into a run, cell by cell along the contact.
  [[nodiscard]] std::vector<int> neighbour_ranks(int rank, Periodicity<dim> per = {}) const {
    const rows::Adjacency adj{rows::Stencil::eight, per[0], per[1]};
    const auto g = grid();
    if (rank < 0 || rank >= parts()) return {};
    if (exceptions_.empty()) {  // the cuts are valid (checked on construction): no O(p) pass
      if constexpr (std::is_same_v<std::size_t, std::uint64_t>) {
        return rows::detail::neighbours_of(g, std::span<const std::size_t>(cuts_), adj,
                                           static_cast<std::size_t>(rank));
      } else {
        const std::vector<std::size_t> c(cuts_.begin(), cuts_.end());
        return rows::detail::neighbours_of(g, c, adj, static_cast<std::size_t>(rank));
      }
    }
    const std::vector<std::size_t> cuts(cuts_.begin(), cuts_.end());
    std::vector<Piece> mine, others;
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
      if (cuts[k] == cuts[k + 1]) continue;
      std::array<rows::detail::Rect, 3> rs{};
      const int nr = rows::detail::part_rects(g, cuts[k], cuts[k + 1], rs);
      for (int i = 0; i < nr; ++i) {
        bool eaten = false;
        for (const auto& e : exceptions_)
          if (e.owner != static_cast<int>(k) &&
              overlap(rs[static_cast<std::size_t>(i)], block_of(e.cell)))
            eaten = true;
        const Piece p{rs[static_cast<std::size_t>(i)], static_cast<int>(k), !eaten};
        (static_cast<int>(k) == rank ? mine : others).push_back(p);
      }
    }
    for (const auto& e : exceptions_)
      (e.owner == rank ? mine : others).push_back(Piece{block_of(e.cell), e.owner, true});
    std::vector<char> found(cuts.size() - 1, 0);
    for (const auto& a : mine)
      for (const auto& b : others) {
        if (found[static_cast<std::size_t>(b.rank)] ||
            !rows::detail::rects_touch(a.box, b.box, g, adj))
          continue;
        if ((a.whole && b.whole) || cells_touch(a, b, adj))
          found[static_cast<std::size_t>(b.rank)] = 1;
      }
    std::vector<int> r;
    for (std::size_t k = 0; k < found.size(); ++k)
      if (found[k]) r.push_back(static_cast<int>(k));
    return r;
  }

  friend bool operator==(const RowMap& a, const RowMap& b) {
    return a.level_ == b.level_ && a.cuts_ == b.cuts_ && a.exceptions_ == b.exceptions_;
  }

  /// Boost.Serialization: the grid level, the cuts and the whole-held cells. Loading validates
  /// like the constructor (irregular::invalid_argument or irregular::parse_error) and leaves
  /// the map unchanged when it throws.
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    if constexpr (Archive::is_saving::value) {
      std::int32_t level = level_;
      ar& level& cuts_;
      detail::save_whole_held<C>(ar, exceptions_);
    } else {
      std::int32_t level = 0;
      std::vector<std::uint64_t> cuts;
      ar& level& cuts;
      RowMap m(level, std::move(cuts));
      m.exceptions_ = detail::load_whole_held<C>(ar, m, "irregular::RowMap");
      *this = std::move(m);
    }
  }

 private:
  using Rect = rows::detail::Rect;  // cells [c0, c1) x [r0, r1)
  struct Piece {
    Rect box;
    int rank;
    bool whole;  // rank holds every cell of box
  };

  [[nodiscard]] Rect block_of(const Cell<dim>& c) const {
    const auto f = ipow<std::uint64_t>(static_cast<std::uint64_t>(C::arity), level_ - c.level);
    const auto x = static_cast<std::uint64_t>(c.anchor[0]),
               y = static_cast<std::uint64_t>(c.anchor[1]);
    return {static_cast<std::size_t>(x * f), static_cast<std::size_t>((x + 1) * f),
            static_cast<std::size_t>(y * f), static_cast<std::size_t>((y + 1) * f)};
  }
  static bool overlap(const Rect& a, const Rect& b) {
    return a.c0 < b.c1 && b.c0 < a.c1 && a.r0 < b.r1 && b.r0 < a.r1;
  }
  void append_run_owners(std::uint64_t lo, std::uint64_t hi,
                         std::vector<int>& r) const {  // cells [lo, hi)
    for (int k = run_owner(lo); k < parts() && cuts_[static_cast<std::size_t>(k)] < hi; ++k)
      if (cuts_[static_cast<std::size_t>(k)] < cuts_[static_cast<std::size_t>(k) + 1])
        r.push_back(k);
  }
  void append_block_owners(const Rect& b, std::vector<int>& r) const {
    if (b.c0 == 0 && b.c1 == n_) {
      append_run_owners(b.r0 * n_, b.r1 * n_, r);
      return;
    }
    for (std::size_t y = b.r0; y < b.r1; ++y) append_run_owners(y * n_ + b.c0, y * n_ + b.c1, r);
  }

  /// The whole-held cell containing all of `iv`, or nullptr.
  [[nodiscard]] const WholeHeld* held_containing(IndexInterval<index_type> iv) const {
    return detail::held_containing(exceptions_, iv);
  }
  /// Rank holding the data of grid cell (column x, row y).
  [[nodiscard]] int grid_cell_holder(std::size_t x, std::size_t y) const {
    Cell<dim> g;
    g.level = level_;
    g.anchor[0] = static_cast<coord_t>(x);
    g.anchor[1] = static_cast<coord_t>(y);
    if (const WholeHeld* e = held_containing(curve::hnode_interval<C>(g))) return e->owner;
    return run_owner(static_cast<std::uint64_t>(y) * n_ + x);
  }
  // Coordinates of [a0, a1) within distance 1 of [b0, b1) along an axis of n cells.
  static std::vector<std::size_t> near(std::size_t a0, std::size_t a1, std::size_t b0,
                                       std::size_t b1, std::size_t n, bool wrap) {
    std::vector<std::size_t> out;
    for (std::size_t x = a0; x < a1; ++x)
      if (rows::detail::axis_gap(x, x + 1, b0, b1, n, wrap) <= 1) out.push_back(x);
    return out;
  }
  /// Is some cell of `a` held by a.rank 8-adjacent (with wrap) to a cell of `b` held by b.rank?
  [[nodiscard]] bool cells_touch(const Piece& a, const Piece& b, const rows::Adjacency& adj) const {
    const auto n = static_cast<std::size_t>(n_);
    const auto xs = near(a.box.c0, a.box.c1, b.box.c0, b.box.c1, n, adj.wrap_columns);
    const auto ys = near(a.box.r0, a.box.r1, b.box.r0, b.box.r1, n, adj.wrap_rows);
    const auto N = static_cast<long long>(n);
    for (std::size_t y : ys)
      for (std::size_t x : xs) {
        if (!a.whole && grid_cell_holder(x, y) != a.rank) continue;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            long long vx = static_cast<long long>(x) + dx, vy = static_cast<long long>(y) + dy;
            if (adj.wrap_columns) vx = (vx + N) % N;
            if (adj.wrap_rows) vy = (vy + N) % N;
            if (vx < 0 || vy < 0 || vx >= N || vy >= N) continue;
            const auto ux = static_cast<std::size_t>(vx), uy = static_cast<std::size_t>(vy);
            if (ux < b.box.c0 || ux >= b.box.c1 || uy < b.box.r0 || uy >= b.box.r1) continue;
            if (b.whole || grid_cell_holder(ux, uy) == b.rank) return true;
          }
      }
    return false;
  }

  int level_ = 0;
  std::uint64_t n_ = 1;
  std::vector<std::uint64_t> cuts_;    // p+1 row-major separators
  std::vector<WholeHeld> exceptions_;  // sorted by interval.start, disjoint
};

static_assert(OwnershipMap<RowMap<curve::Morton<2>>> && OwnershipMap<RowMap<curve::Hilbert<2>>> &&
                  OwnershipMap<RowMap<curve::Peano<2>>>,
              "irregular::RowMap must satisfy irregular::OwnershipMap");

}  // namespace irregular
