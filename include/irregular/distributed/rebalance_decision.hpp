// The rebalance decision of baiardi-2001 §3, shared by the element and the cell-data domains:
// one threshold agreed by every rank, every rank's load gathered, and the unbalance that decides.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/mpi/collective_error.hpp>

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

/// Options of one rebalance() call.
struct RebalanceOptions {
  /// Remap only when max_unbalance, the largest |load_r - average| / average over the ranks,
  /// exceeds this (baiardi-2001 §3's user-defined threshold T, relative to the average load).
  double threshold = 0.05;
};

/// Loads of all ranks (replicated), as a rebalance decision sees them.
struct LoadReport {
  std::vector<double> loads;
  double average = 0;
  double max_unbalance = 0;  ///< max_r |load_r - average| / average (0 for an empty domain)
  double imbalance = 0;      ///< Lmax / Lavg - 1, the metric of the partitioning papers
};

/// Every rank's load (`mine` on this rank), the average and the unbalance. Collective over comm.
inline LoadReport gather_load_report(const boost::mpi::communicator& comm, double mine) {
  LoadReport r;
  boost::mpi::all_gather(comm, mine, r.loads);
  double total = 0, lmax = 0;
  for (double l : r.loads) {
    total += l;
    lmax = std::max(lmax, l);
  }
  r.average = total / static_cast<double>(r.loads.size());
  if (r.average > 0) {
    for (double l : r.loads) r.max_unbalance = std::max(r.max_unbalance, std::abs(l - r.average) / r.average);
    r.imbalance = lmax / r.average - 1;
  }
  return r;
}

/// Every rank must take the same decision: a threshold that is negative or not finite on any
/// rank, or that differs between ranks, makes every rank throw the same
/// irregular::collective_error (naming `who`). One all_reduce when all is well. Collective over comm.
inline void agree_threshold(const boost::mpi::communicator& comm, double threshold, const std::string& who) {
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
    mpi::agree_on(comm, threshold == tmax[0] ? std::nullopt
                                             : std::optional<std::string>(who + ": threshold " + std::to_string(threshold) +
                                                                          " on rank " + std::to_string(comm.rank()) +
                                                                          " differs from " + std::to_string(tmax[0]) +
                                                                          " on another rank"));
}

}  // namespace irregular
