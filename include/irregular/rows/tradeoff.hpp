// Trade-off evaluation (baiardi-bounded-neighbours §4.1): after the loads are exchanged, balance
// only when it pays. P, the minimum occupancy: skip when the elements are fewer than P% of the
// grid positions; V, the maximum unbalance: skip when the largest load exceeds the optimal one
// (total / processes) by at most V.
#pragma once

#include <irregular/core/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>

namespace irregular::rows {

/// What trade-off evaluation found.
struct TradeOffDecision {
  bool balance = false;  ///< run cuts computation, checking and data exchange
  bool sparse = false;   ///< fewer elements than P% of the grid positions
  bool within = false;   ///< max load - optimal load <= V
  double total = 0;      ///< sum of the process loads
  double optimal = 0;    ///< total / processes
  double max_load = 0;   ///< MaxD: the largest process load
};

/// The thresholds P and V of §4.1 (both 0: balance whenever the loads are not all equal).
struct TradeOff {
  double min_occupancy = 0;  ///< P, in percent of the grid positions, [0, 100]
  double max_unbalance = 0;  ///< V, in load units (elements), >= 0

  /// Throws irregular::invalid_argument for P outside [0, 100] or V negative or not finite.
  void validate() const {
    if (!(min_occupancy >= 0 && min_occupancy <= 100))
      throw invalid_argument(
          "irregular::rows::TradeOff: the minimum occupancy P must lie in [0, 100] percent, got " +
          std::to_string(min_occupancy));
    if (!(max_unbalance >= 0) || !std::isfinite(max_unbalance))
      throw invalid_argument(
          "irregular::rows::TradeOff: the maximum unbalance V must be finite and >= 0, got " +
          std::to_string(max_unbalance));
  }

  /// The decision for the current process loads (the all-gathered ElPart) on a grid of
  /// `positions` cells. Throws irregular::invalid_argument for no processes or a negative or
  /// non-finite load (naming the process).
  [[nodiscard]] TradeOffDecision evaluate(std::span<const double> process_loads,
                                          std::size_t positions) const {
    validate();
    if (process_loads.empty())
      throw invalid_argument("irregular::rows::TradeOff: no process loads");
    TradeOffDecision d;
    for (std::size_t i = 0; i < process_loads.size(); ++i) {
      const double l = process_loads[i];
      if (!(l >= 0) || !std::isfinite(l))
        throw invalid_argument("irregular::rows::TradeOff: the load of process " +
                               std::to_string(i) + " is negative or not finite (" +
                               std::to_string(l) + ")");
      d.total += l;
      d.max_load = std::max(d.max_load, l);
    }
    d.optimal = d.total / static_cast<double>(process_loads.size());
    d.sparse = d.total < min_occupancy / 100.0 * static_cast<double>(positions);
    d.within = d.max_load - d.optimal <= max_unbalance;
    d.balance = !d.sparse && !d.within;
    return d;
  }
};

}  // namespace irregular::rows
