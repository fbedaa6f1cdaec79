// The rectangular partitioners as one Partitioner policy (saule-bas-catalyurek §3–5): leaf loads
// are projected onto a grid of cells at one level, summed over the ranks, and cut into one
// rectangle per rank by any algorithm of the rect registry; the result is a RectangleMap.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/maps/rectangle_map.hpp>
#include <irregular/distributed/partitioners/partitioner.hpp>
#include <irregular/rect/load_matrix.hpp>
#include <irregular/rect/registry.hpp>

#include <boost/mpi/collectives.hpp>

#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace irregular::partitioner {

/// Rectangles of a grid of leaf loads (2D and 3D). `algorithm`: any name rect::make_partitioner
/// accepts. `level`: the grid's cells are hnodes of this level; -1 chooses the coarsest level
/// with at least `cells_per_part` cells per part. The grid is replicated during a partition
/// (one all_reduce of doubles), so its size is bounded by `max_grid_cells`.
struct Rectangular {
  std::string algorithm = "JAG-M-HEUR-PROBE";  ///< name of the rectangular algorithm
  int level = -1;                              ///< level of the grid cells; -1: automatic
  std::uint64_t cells_per_part = 16;  ///< automatic level: at least this many grid cells per part
  /// Largest grid, in cells (replicated while partitioning: 2^22 doubles are 32 MiB).
  std::uint64_t max_grid_cells = std::uint64_t{1} << 22;

  /// The map it produces.
  template <SpaceFillingCurve C>
  using map_type = RectangleMap<C>;

  /// Number of grid cells at level g, saturating at UINT64_MAX.
  template <SpaceFillingCurve C>
  static std::uint64_t grid_cells(int g) {
    std::uint64_t cells = 1;
    for (int k = 0; k < C::dim * g; ++k) {
      if (cells > UINT64_MAX / C::arity) return UINT64_MAX;
      cells *= C::arity;
    }
    return cells;
  }

  /// The grid level used with `parts` ranks. Throws irregular::invalid_argument when the level
  /// is outside [0, max_level] or its grid exceeds max_grid_cells.
  template <SpaceFillingCurve C>
  int grid_level(int parts) const {
    static_assert(C::dim == 2 || C::dim == 3,
                  "irregular::partitioner::Rectangular: 2D or 3D curves");
    int g = level;
    if (g < 0) {
      g = 0;
      const std::uint64_t want = cells_per_part * static_cast<std::uint64_t>(parts);
      while (g < C::max_level && grid_cells<C>(g) < want && grid_cells<C>(g + 1) <= max_grid_cells)
        ++g;
    }
    if (g > C::max_level)
      throw invalid_argument("irregular::partitioner::Rectangular: grid level " +
                             std::to_string(g) + " exceeds the curve's max_level " +
                             std::to_string(C::max_level));
    const auto cells = grid_cells<C>(g);
    const std::uint64_t cap = std::min<std::uint64_t>(max_grid_cells, INT_MAX);
    if (cells > cap)
      throw invalid_argument(
          "irregular::partitioner::Rectangular: the grid at level " + std::to_string(g) + " has " +
          (cells == UINT64_MAX ? std::string("more than 2^64") : std::to_string(cells)) +
          " cells, more than the limit of " + std::to_string(cap) +
          " (max_grid_cells); choose a coarser level");
    return g;
  }

  /// Throws irregular::invalid_argument for an unknown algorithm, a bad level, or a grid
  /// larger than max_grid_cells.
  template <SpaceFillingCurve C>
  void check(int parts) const {
    (void)rect::make_partitioner<double, C::dim>(algorithm);  // unknown names throw here
    if (level < -1)
      throw invalid_argument(
          "irregular::partitioner::Rectangular: level must be >= 0, or -1 for automatic");
    (void)grid_level<C>(parts);
  }

  /// Collective over comm.
  template <SpaceFillingCurve C>
  RectangleMap<C> partition(const boost::mpi::communicator& comm, const LeafChain<C>& chain,
                            const RectangleMap<C>* /*current*/) const {
    constexpr int dim = C::dim;
    const int g = grid_level<C>(comm.size());
    const auto n = static_cast<std::size_t>(ipow<coord_t>(static_cast<coord_t>(C::arity), g));
    std::array<std::size_t, dim> ext;
    ext.fill(n);
    const auto cells = static_cast<std::size_t>(grid_cells<C>(g));
    std::vector<double> grid(cells, 0.0), total(cells, 0.0);
    auto at = [&](const Cell<dim>& c) {
      std::size_t i = 0;
      for (int d = 0; d < dim; ++d) i = i * n + static_cast<std::size_t>(c.anchor[d]);
      return i;
    };
    for (std::size_t i = 0; i < chain.leaves.size(); ++i) {
      const auto c = chain.leaves.cell(i);
      if (c.level >= g) {
        grid[at(curve::ancestor_at<C>(c, g))] += chain.loads[i];
        continue;
      }
      // A leaf coarser than the grid spreads its load evenly over its grid cells.
      const coord_t f = ipow<coord_t>(static_cast<coord_t>(C::arity), g - c.level);
      const auto block = static_cast<std::size_t>(ipow<coord_t>(f, dim));
      for (std::size_t k = 0; k < block; ++k) {
        Cell<dim> sub;
        sub.level = g;
        std::size_t t = k;
        for (int d = 0; d < dim; ++d, t /= f)
          sub.anchor[d] = c.anchor[d] * f + static_cast<coord_t>(t % f);
        grid[at(sub)] += chain.loads[i] / static_cast<double>(block);
      }
    }
    boost::mpi::all_reduce(comm, grid.data(), static_cast<int>(cells), total.data(),
                           std::plus<double>());
    const rect::LoadGrid<double, dim> matrix(ext, std::move(total));
    const auto cut = rect::make_partitioner<double, dim>(algorithm);
    return RectangleMap<C>(g, cut(matrix, matrix.box(), static_cast<std::size_t>(comm.size())));
  }
};

}  // namespace irregular::partitioner
