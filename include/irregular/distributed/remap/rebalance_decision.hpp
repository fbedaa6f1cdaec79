// The rebalance decision of baiardi-2001 §3, shared by the element and the cell-data domains:
// one threshold agreed by every rank, every rank's load gathered, and the unbalance that decides.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/partition/chain_partition.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace irregular {

/// How a remap moves the data (baiardi-2001 §3; see distributed/remap/neighbour_shift.hpp).
enum class RemapStrategy {
  direct,          ///< the new cuts at once, each leaf straight to its new holder
  neighbour_shift  ///< rounds of prefix/suffix shifts between ranks adjacent in the chain order
};

/// How the ranks are arranged along the chain by a remap (kaddoura-ranka §3.4); the procedure
/// behind each is chosen in one place, arrangement_procedure (remap_plan.hpp).
enum class ChainArrangement {
  keep,              ///< the current order (or `order` when given)
  minimize_cost,     ///< MinimizeCostRedistribution, the paper's heuristic by name
  optimal,           ///< the arrangement of largest overlap (p <= 16)
  overlap_matching,  ///< Zoltan-style renumbering by overlap matching (a baseline)
  /// The largest overlap the cost allows: optimal up to partition::
  /// best_arrangement_exact_max_processors ranks, MinimizeCostRedistribution beyond
  /// (partition::best_arrangement). Use it to ask for the best arrangement.
  best
};

/// Options of one rebalance() call; both domains honour them all (distributed/domain/core.hpp).
struct RebalanceOptions {
  /// Remap only when max_unbalance, the largest |load_r - average| / average over the ranks,
  /// exceeds this (baiardi-2001 §3's user-defined threshold T, relative to the average load;
  /// with capacities, of each rank's time load_r / c_r against the ideal time).
  double threshold = 0.05;
  RemapStrategy strategy =
      RemapStrategy::direct;  ///< how the data moves: at once, or by neighbour shifts
  /// Relative capacity of every rank of the domain's communicator (kaddoura-ranka §3.1): segment
  /// loads become proportional to them. Empty: equal, unless measured.
  std::vector<double> capacities{};
  /// Capacities measured over the last phase (kaddoura-ranka §5): elements per measured second
  /// of each rank (load::Measured).
  bool measure_capacities = false;
  /// Profitability (kaddoura-ranka §3.5): remap only if the estimated migration cost is below the
  /// time saved over this many iterations. Unset: no check.
  std::optional<double> horizon{};
  /// Migration cost per byte; unset: measured at the last migration (build or remap).
  std::optional<double> seconds_per_byte{};
  /// Seconds per unit of load for the profitability check (1 for load::Measured: loads are
  /// seconds).
  double seconds_per_load = 1.0;
  /// SP: the ranks (of the domain's communicator) in chain order; empty keeps the current order.
  std::vector<int> order{};
  ChainArrangement arrangement =
      ChainArrangement::keep;  ///< how the ranks are arranged along the chain
  /// Neighbour shift: most rounds (0: 2p + 2).
  int max_rounds = 0;
};

/// Loads of all ranks (replicated), as a rebalance decision sees them.
struct LoadReport {
  std::vector<double> loads;  ///< load of every rank
  double average = 0;         ///< their mean
  double max_unbalance = 0;   ///< max_r |load_r - average| / average (0 for an empty domain)
  /// Lmax / Lavg - 1 (partition::load_imbalance, saule-bas-catalyurek §2): 0 is perfect, 0 for
  /// an empty domain; the one meaning of `imbalance` across the library.
  double imbalance = 0;
};

/// Every rank's load (`mine` on this rank), the average and the unbalance. Collective over comm.
inline LoadReport gather_load_report(const boost::mpi::communicator& comm, double mine) {
  LoadReport r;
  boost::mpi::all_gather(comm, mine, r.loads);
  double total = 0;
  for (double l : r.loads) total += l;
  r.average = total / static_cast<double>(r.loads.size());
  if (r.average > 0)
    for (double l : r.loads)
      r.max_unbalance = std::max(r.max_unbalance, std::abs(l - r.average) / r.average);
  r.imbalance = partition::load_imbalance<double>(r.loads);
  return r;
}

/// Every rank must take the same decision: a threshold that is negative or not finite on any
/// rank, or that differs between ranks, makes every rank throw the same
/// irregular::collective_error (naming `who`). One all_reduce when all is well. Collective over
/// comm.
inline void agree_threshold(const boost::mpi::communicator& comm, double threshold,
                            const std::string& who) {
  const bool bad = !(threshold >= 0) || !std::isfinite(threshold);
  std::array<double, 3> t{bad ? 0.0 : threshold, bad ? 0.0 : -threshold, bad ? 1.0 : 0.0}, tmax{};
  boost::mpi::all_reduce(comm, t.data(), 3, tmax.data(), boost::mpi::maximum<double>());
  if (tmax[2] != 0)
    mpi::agree(comm, [&] {
      if (bad)
        throw invalid_argument(who + ": threshold " + std::to_string(threshold) + " on rank " +
                               std::to_string(comm.rank()) + " must be finite and >= 0");
    });
  if (tmax[0] != -tmax[1])  // the lowest rank below the largest threshold is named
    mpi::agree_on(comm, threshold == tmax[0]
                            ? std::nullopt
                            : std::optional<std::string>(
                                  who + ": threshold " + std::to_string(threshold) + " on rank " +
                                  std::to_string(comm.rank()) + " differs from " +
                                  std::to_string(tmax[0]) + " on another rank"));
}

}  // namespace irregular
