// The efficiency of a data-parallel run in a nonuniform environment (kaddoura-ranka §4):
// E = 1 / (T · sum_i 1/T(p_i)), T the parallel time and T(p_i) processor i's time for the whole
// task alone. With capacities c_i (work per second), T(p_i) = W / c_i, so E = W / (T · sum c).
#pragma once

#include <irregular/core/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>

namespace irregular::partition {

namespace detail {
inline void check(std::span<const double> v, const char* what, const char* who) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!(v[i] >= 0) || !std::isfinite(v[i]))
      throw invalid_argument(std::string(who) + ": " + what + " " + std::to_string(i) +
                             " must be finite and >= 0, got " + std::to_string(v[i]));
}
}  // namespace detail

/// §4's efficiency of parts with loads `loads[i]` on processors of capacities `capacities[i]`
/// (work per unit time): W / (sum c · max_i loads_i / c_i). 1 for a capacity-proportional split;
/// 1 when there is no work. Throws irregular::invalid_argument for sizes that differ, negative or
/// non-finite values, all capacities zero, or work on a processor of zero capacity.
[[nodiscard]] inline double nonuniform_efficiency(std::span<const double> loads,
                                                  std::span<const double> capacities) {
  const char* who = "irregular::partition::nonuniform_efficiency";
  if (loads.size() != capacities.size() || loads.empty())
    throw invalid_argument(std::string(who) + ": need one load per capacity");
  detail::check(loads, "load", who);
  detail::check(capacities, "capacity", who);
  double w = 0, c = 0, t = 0;
  for (std::size_t i = 0; i < loads.size(); ++i) {
    w += loads[i];
    c += capacities[i];
    if (loads[i] > 0) {
      if (!(capacities[i] > 0))
        throw invalid_argument(std::string(who) + ": processor " + std::to_string(i) +
                               " has work but capacity 0");
      t = std::max(t, loads[i] / capacities[i]);
    }
  }
  if (!(c > 0)) throw invalid_argument(std::string(who) + ": all capacities are zero");
  return w > 0 ? w / (c * t) : 1.0;
}

/// The same from measurements: processor i did `work[i]` units in `seconds[i]` (so its capacity
/// is work/seconds, and the phase took max seconds). Processors that did no work or took no time
/// contribute nothing to sum c. Throws as nonuniform_efficiency.
[[nodiscard]] inline double measured_efficiency(std::span<const double> work,
                                                std::span<const double> seconds) {
  const char* who = "irregular::partition::measured_efficiency";
  if (work.size() != seconds.size() || work.empty())
    throw invalid_argument(std::string(who) + ": need one time per work");
  detail::check(work, "work", who);
  detail::check(seconds, "time", who);
  double w = 0, c = 0, t = 0;
  for (std::size_t i = 0; i < work.size(); ++i) {
    w += work[i];
    t = std::max(t, seconds[i]);
    if (work[i] > 0 && seconds[i] > 0) c += work[i] / seconds[i];
  }
  return w > 0 && c > 0 && t > 0 ? w / (c * t) : 1.0;
}

}  // namespace irregular::partition
