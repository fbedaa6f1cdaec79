// ChainPartition: the result of every 1D chain partitioner (separators, part loads, bottleneck,
// imbalance), and the load-imbalance metric Lmax/Lavg - 1 of saule-bas-catalyurek §2.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/partition/prefix_sums.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace irregular::partition {

/// p contiguous parts of a chain of n tasks; part k is [separators[k], separators[k+1]).
template <class W>
struct ChainPartition {
  std::vector<std::size_t> separators;  ///< p+1 entries, 0 = s[0] <= ... <= s[p] = n
  std::vector<W> loads;                 ///< p part loads
  W bottleneck{};        ///< max part load (with capacities: max of load_k / capacity_k)
  double imbalance = 0;  ///< Lmax/Lavg - 1 (0 when the total is 0)

  /// Number of parts p.
  [[nodiscard]] std::size_t parts() const noexcept { return loads.size(); }
};

/// Lmax/Lavg - 1 of part loads; 0 for no parts or a zero total.
template <class W>
[[nodiscard]] double load_imbalance(std::span<const W> part_loads) {
  if (part_loads.empty()) return 0.0;
  double total = 0, lmax = 0;
  for (const W& l : part_loads) {
    total += static_cast<double>(l);
    lmax = std::max(lmax, static_cast<double>(l));
  }
  if (!(total > 0)) return 0.0;
  return lmax / (total / static_cast<double>(part_loads.size())) - 1.0;
}

namespace detail {
inline void check_separators(const std::vector<std::size_t>& s, std::size_t n) {
  if (s.size() < 2)
    throw invalid_argument("irregular::partition: a chain partition needs at least 2 separators");
  if (s.front() != 0)
    throw invalid_argument("irregular::partition: separators[0] must be 0, got " +
                           std::to_string(s.front()));
  if (s.back() != n)
    throw invalid_argument("irregular::partition: separators[" + std::to_string(s.size() - 1) +
                           "] must be n = " + std::to_string(n) + ", got " +
                           std::to_string(s.back()));
  for (std::size_t k = 1; k < s.size(); ++k)
    if (s[k] < s[k - 1])
      throw invalid_argument("irregular::partition: separators decrease at index " +
                             std::to_string(k));
}
}  // namespace detail

/// Builds a partition from separators over a chain's prefix sums (throws on invalid separators).
template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> make_chain_partition(std::vector<std::size_t> separators,
                                                             const PrefixSums<T>& ps) {
  detail::check_separators(separators, ps.size());
  ChainPartition<wide_t<T>> r;
  const std::size_t p = separators.size() - 1;
  r.loads.resize(p);
  for (std::size_t k = 0; k < p; ++k) {
    r.loads[k] = ps.interval(separators[k], separators[k + 1]);
    r.bottleneck = std::max(r.bottleneck, r.loads[k]);
  }
  r.imbalance = load_imbalance<wide_t<T>>(r.loads);
  r.separators = std::move(separators);
  return r;
}

/// Builds a partition over capacities: loads are raw interval loads, the bottleneck is
/// max_k load_k / capacity_k and the imbalance is bottleneck / (total / sum capacities) - 1.
template <class T>
[[nodiscard]] ChainPartition<double> make_chain_partition(std::vector<std::size_t> separators,
                                                          const PrefixSums<T>& ps,
                                                          std::span<const double> capacities) {
  detail::check_separators(separators, ps.size());
  const std::size_t p = separators.size() - 1;
  if (capacities.size() != p)
    throw invalid_argument("irregular::partition: " + std::to_string(capacities.size()) +
                           " capacities for " + std::to_string(p) + " parts");
  ChainPartition<double> r;
  r.loads.resize(p);
  double csum = 0;
  for (std::size_t k = 0; k < p; ++k) {
    r.loads[k] = static_cast<double>(ps.interval(separators[k], separators[k + 1]));
    r.bottleneck = std::max(r.bottleneck, r.loads[k] / capacities[k]);
    csum += capacities[k];
  }
  const double total = static_cast<double>(ps.total());
  r.imbalance = total > 0 ? r.bottleneck / (total / csum) - 1.0 : 0.0;
  r.separators = std::move(separators);
  return r;
}

/// Builds a partition from separators and an interval-load oracle load(i, j) -> W.
template <class W, class IntervalLoad>
requires std::invocable<IntervalLoad&, std::size_t, std::size_t>
[[nodiscard]] ChainPartition<W> make_chain_partition(std::vector<std::size_t> separators,
                                                     IntervalLoad&& load) {
  if (separators.size() < 2)
    throw invalid_argument("irregular::partition: a chain partition needs at least 2 separators");
  detail::check_separators(separators, separators.back());
  ChainPartition<W> r;
  const std::size_t p = separators.size() - 1;
  r.loads.resize(p);
  for (std::size_t k = 0; k < p; ++k) {
    r.loads[k] = static_cast<W>(load(separators[k], separators[k + 1]));
    if (k == 0 || r.bottleneck < r.loads[k]) r.bottleneck = r.loads[k];
  }
  r.imbalance = load_imbalance<W>(r.loads);
  r.separators = std::move(separators);
  return r;
}

}  // namespace irregular::partition
