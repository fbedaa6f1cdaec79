// Bounded Neighbours as a Partitioner policy (baiardi-bounded-neighbours §4): the leaf loads on
// a grid of cells at one level, cut row-major into one run per rank with at most NS neighbours
// each. The paper's four phases run inside `partition`: trade-off evaluation (one all-gather),
// cuts computation (ListCuts / ReceiveCuts, then one collective), cuts checking, and data
// exchange, which is the domain's migration onto the RowMap returned (one merged message per
// partner).
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/maps/row_map.hpp>
#include <irregular/distributed/partitioners/partitioner.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/rows/bound.hpp>
#include <irregular/rows/cuts.hpp>
#include <irregular/rows/cuts_check.hpp>
#include <irregular/rows/grid.hpp>
#include <irregular/rows/tradeoff.hpp>

#include <boost/mpi/collectives.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace irregular::partitioner {

/// How the cuts are computed and made legal.
enum class CutsChecking {
  greedy,   ///< the paper's protocol: cuts at multiples of the optimal load, greedy shifting
  optimal,  ///< our optimal legal partition (rows::optimal_legal_cuts) on the replicated grid
};

/// Bounded Neighbours (2D): row-major runs of grid cells, no run with more than `ns`
/// neighbours under `stencil` (4 or 8 neighbours; `toroidal` counts across the wrap). `level`:
/// the grid's cells are hnodes of this level; -1 chooses the coarsest level with at least
/// `cells_per_part` cells per part whose grid hosts `room_factor` times the parts under the NS
/// rule (within `max_grid_cells`).
/// `trade_off` holds the paper's P and V: a rebalance keeps the current map when balancing
/// would not pay (§4.1). A build always partitions.
struct BoundedNeighbours {
  int ns = 2;                                   ///< NS: most neighbours a run may have (>= 2)
  int level = -1;                               ///< level of the grid cells; -1: automatic
  rows::Stencil stencil = rows::Stencil::four;  ///< which grid cells interact: 4 or 8 neighbours
  bool toroidal = false;  ///< neighbours count across the wrap of a toroidal domain
  CutsChecking checking = CutsChecking::greedy;  ///< how the cuts are computed and made legal
  rows::TradeOff trade_off{};         ///< P and V: when a rebalance keeps the current map (§4.1)
  std::uint64_t cells_per_part = 16;  ///< automatic level: at least this many grid cells per part
  std::uint64_t room_factor =
      4;  ///< automatic level: the grid hosts at least this many times the parts
  /// Largest grid, in cells (replicated while partitioning: 2^22 doubles are 32 MiB).
  std::uint64_t max_grid_cells = std::uint64_t{1} << 22;

  /// The map it produces.
  template <SpaceFillingCurve C>
  using map_type = RowMap<C>;

  /// The NS rule: `ns` neighbours under `stencil`, across the wrap if `toroidal`.
  [[nodiscard]] rows::NeighbourBound bound() const noexcept { return {ns, stencil, toroidal}; }

  /// The row grid at level g (arity^g cells per axis; saturating at UINT64_MAX cells).
  template <SpaceFillingCurve C>
  static std::uint64_t grid_cells(int g) {
    std::uint64_t n = 1;
    for (int k = 0; k < g; ++k) {
      if (n > (std::uint64_t{1} << 31) / C::arity) return UINT64_MAX;
      n *= C::arity;
    }
    return n * n;
  }

  /// The grid level used with `parts` ranks. Throws irregular::invalid_argument when NS < 2,
  /// the level is outside [0, max_level], its grid exceeds max_grid_cells, or the grid cannot
  /// host the parts under the NS rule (the message gives the largest feasible number).
  template <SpaceFillingCurve C>
  int grid_level(int parts) const {
    static_assert(C::dim == 2,
                  "irregular::partitioner::BoundedNeighbours: 2D curves (row-major grids)");
    const auto b = bound();
    (void)b.min_cells({1, 1}, 1);  // NS < 2 throws here
    trade_off.validate();
    if (level < -1)
      throw invalid_argument(
          "irregular::partitioner::BoundedNeighbours: level must be >= 0, or -1 for automatic");
    if (parts < 1) throw invalid_argument("irregular::partitioner::BoundedNeighbours: zero parts");
    const std::uint64_t cap = std::min<std::uint64_t>(max_grid_cells, INT_MAX);
    // Room to balance: a grid that hosts exactly p parts leaves the cuts no freedom (NS = 2 on
    // p rows: one row each, whatever the loads), so the automatic level asks for room_factor x.
    auto hosts = [&](int g, std::uint64_t room) {
      const auto n =
          static_cast<std::size_t>(std::sqrt(static_cast<double>(grid_cells<C>(g))) + 0.5);
      return b.max_parts({n, n}) >= room * static_cast<std::size_t>(parts);
    };
    int g = level;
    if (g < 0) {
      g = 0;
      const std::uint64_t want = cells_per_part * static_cast<std::uint64_t>(parts);
      while (g < C::max_level && (grid_cells<C>(g) < want || !hosts(g, room_factor)) &&
             grid_cells<C>(g + 1) <= cap)
        ++g;
    }
    if (g > C::max_level)
      throw invalid_argument("irregular::partitioner::BoundedNeighbours: grid level " +
                             std::to_string(g) + " exceeds the curve's max_level " +
                             std::to_string(C::max_level));
    const auto cells = grid_cells<C>(g);
    if (cells > cap)
      throw invalid_argument("irregular::partitioner::BoundedNeighbours: the grid at level " +
                             std::to_string(g) + " has more than " + std::to_string(cap) +
                             " cells (max_grid_cells); choose a coarser level");
    const auto n = static_cast<std::size_t>(std::sqrt(static_cast<double>(cells)) + 0.5);
    b.validate({n, n},
               static_cast<std::size_t>(parts));  // names the largest feasible number of parts
    return g;
  }

  /// Throws irregular::invalid_argument when no grid level works for `parts` ranks (see
  /// grid_level()).
  template <SpaceFillingCurve C>
  void check(int parts) const {
    (void)grid_level<C>(parts);
  }

  /// Collective over comm. Throws irregular::collective_error on every rank when any rank has
  /// a negative or non-finite load; nothing is changed then.
  template <SpaceFillingCurve C>
  RowMap<C> partition(const boost::mpi::communicator& comm, const LeafChain<C>& chain,
                      const RowMap<C>* current) const {
    const int np = comm.size(), me = comm.rank();
    const int g = mpi::agree(comm, [&] { return grid_level<C>(np); });
    const RowMap<C> shape(g,
                          std::vector<std::uint64_t>{0, grid_cells<C>(g)});  // positions at level g
    const std::uint64_t N = grid_cells<C>(g);
    const auto pnp = static_cast<std::size_t>(np);

    // This rank's loads on the grid: (row-major position, load), sorted and merged. A leaf
    // coarser than the grid puts its load on its first row-major cell, where its holder is.
    std::vector<std::pair<std::uint64_t, double>> mine;
    mpi::agree(comm, [&] {
      if (chain.loads.size() != chain.leaves.size())
        throw invalid_argument(
            "irregular::partitioner::BoundedNeighbours: " + std::to_string(chain.loads.size()) +
            " loads for " + std::to_string(chain.leaves.size()) + " leaves");
      mine.reserve(chain.leaves.size());
      for (std::size_t i = 0; i < chain.leaves.size(); ++i) {
        const double l = chain.loads[i];
        if (!(l >= 0) || !std::isfinite(l))
          throw invalid_argument("irregular::partitioner::BoundedNeighbours: leaf " +
                                 std::to_string(i) + " on rank " + std::to_string(me) +
                                 " has load " + std::to_string(l) +
                                 " (loads must be non-negative and finite)");
        mine.emplace_back(shape.load_position(chain.leaves.cell(i)), l);
      }
      return 0;
    });
    std::sort(mine.begin(), mine.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });

    // Phase 1, trade-off evaluation: one all-gather of (current load, loads inside my old run).
    const bool same_grid = current && current->level() == g && current->parts() == np;
    double local[2] = {0, 1};
    for (const auto& [x, l] : mine) {
      local[0] += l;
      if (!same_grid || x < current->cuts()[static_cast<std::size_t>(me)] ||
          x >= current->cuts()[static_cast<std::size_t>(me) + 1])
        local[1] = 0;
    }
    std::vector<double> gathered(2 * pnp);
    boost::mpi::all_gather(comm, local, 2, gathered.data());
    std::vector<double> el_part(pnp);
    bool protocol = same_grid;
    for (std::size_t r = 0; r < pnp; ++r) {
      el_part[r] = gathered[2 * r];
      protocol = protocol && gathered[2 * r + 1] != 0;
    }
    if (current) {
      const auto d = trade_off.evaluate(el_part, static_cast<std::size_t>(N));
      if (!d.balance) return *current;
    }

    const auto grid = rows::Grid{static_cast<std::size_t>(shape.grid().rows),
                                 static_cast<std::size_t>(shape.grid().columns)};
    std::vector<std::size_t> cuts;
    if (checking == CutsChecking::optimal || !protocol) {
      // The whole grid, replicated (one all_reduce): our optimal legal partition needs every
      // cell, and without an old run map of this grid no process can place cuts alone.
      std::vector<double> dense(static_cast<std::size_t>(N), 0.0),
          total(static_cast<std::size_t>(N), 0.0);
      for (const auto& [x, l] : mine) dense[static_cast<std::size_t>(x)] += l;
      boost::mpi::all_reduce(comm, dense.data(), static_cast<int>(N), total.data(),
                             std::plus<double>());
      if (checking == CutsChecking::optimal)
        return RowMap<C>(
            g, widen(rows::optimal_legal_cuts<double>(grid, bound(), total, pnp).separators));
      cuts = rows::paper_cuts<double>(total, pnp);
    } else {
      cuts = list_and_share_cuts(comm, *current, mine, el_part);
    }
    // Phase 3, cuts checking (replicated: it needs only the cuts).
    return RowMap<C>(g, widen(rows::greedy_check(grid, bound(), std::move(cuts))));
  }

 private:
  static std::vector<std::uint64_t> widen(const std::vector<std::size_t>& c) {
    return {c.begin(), c.end()};
  }

  /// Phase 2, cuts computation, on the old runs: every process places the new cuts whose
  /// targets k * total / p fall inside its old run (ListCuts, from its own cells only) and
  /// knows from the gathered loads how many fall inside each other run (ReceiveCuts). The
  /// paper then loops over broadcasts, one per cut and sender; here the exact positions travel
  /// in ONE all_gatherv whose counts are the ReceiveCuts every process already knows.
  /// Collective over comm.
  template <SpaceFillingCurve C>
  static std::vector<std::size_t> list_and_share_cuts(
      const boost::mpi::communicator& comm, const RowMap<C>& old,
      const std::vector<std::pair<std::uint64_t, double>>& mine,
      const std::vector<double>& el_part) {
    const auto np = static_cast<std::size_t>(comm.size()),
               me = static_cast<std::size_t>(comm.rank());
    const std::uint64_t N = old.cuts().back();
    const double total = std::accumulate(el_part.begin(), el_part.end(), 0.0);
    std::vector<std::size_t> cuts(np + 1, static_cast<std::size_t>(N));
    cuts[0] = 0;
    if (!(total > 0)) {  // nothing to balance: the cells evenly
      for (std::size_t k = 1; k < np; ++k) cuts[k] = static_cast<std::size_t>(N * k / np);
      return cuts;
    }
    const auto holders = rows::cut_holders<double>(el_part, np);
    std::vector<int> receive(np, 0);
    for (int h : holders) ++receive[static_cast<std::size_t>(h)];
    const auto lo = static_cast<std::size_t>(old.cuts()[me]),
               hi = static_cast<std::size_t>(old.cuts()[me + 1]);
    std::vector<double> segment(hi - lo, 0.0);
    for (const auto& [x, l] : mine) segment[static_cast<std::size_t>(x) - lo] += l;
    const double before =
        std::accumulate(el_part.begin(), el_part.begin() + static_cast<std::ptrdiff_t>(me), 0.0);
    auto list = rows::list_cuts<double, double>(segment, lo, before, total, np);
    // Rounding may disagree with the gathered sums by an ulp: keep exactly ReceiveCuts[me].
    list.resize(static_cast<std::size_t>(receive[me]), hi);
    std::vector<std::uint64_t> out(list.begin(), list.end()), all(holders.size());
    mpi::all_gatherv_raw(comm, std::span<const std::uint64_t>(out), std::span<std::uint64_t>(all),
                         std::span<const int>(receive));
    for (std::size_t k = 0; k < all.size(); ++k) cuts[k + 1] = static_cast<std::size_t>(all[k]);
    for (std::size_t k = 1; k < np; ++k)
      cuts[k] = std::max(cuts[k], cuts[k - 1]);  // monotone after rounding
    return cuts;
  }
};

}  // namespace irregular::partitioner
