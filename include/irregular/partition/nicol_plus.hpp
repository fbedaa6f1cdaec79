// NicolPlus: optimal 1D chain partitioning with Pinar & Aykanat's engineering (saule-bas-catalyurek
// §2.2): on prefix sums, exact bisection with interpolated probes and separator-index windows;
// for general interval-load oracles, Nicol's first-separator search with the same bounds.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/partition/chain_partition.hpp>
#include <irregular/partition/detail/chain_search.hpp>
#include <irregular/partition/detail/prefix_bisection.hpp>
#include <irregular/partition/direct_cut.hpp>
#include <irregular/partition/prefix_sums.hpp>
#include <irregular/partition/probe.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace irregular::partition {

namespace detail_probe {
// First bottleneck for NicolPlus to try: a greedy part overshoots its budget by about the
// residual of the task it stops before, E[w^2] / (2 E[w]) for random loads (sampled from up
// to 1024 tasks). Only a hint: the search is exact whatever it is.
template <class T>
double bottleneck_guess(const PrefixSums<T>& ps, std::size_t p) {
  const std::size_t n = ps.size();
  const auto P = ps.data();
  double guess = static_cast<double>(ps.total()) / static_cast<double>(p);
  if (n > 0) {
    const std::size_t m = std::min<std::size_t>(n, 1024);
    double s1 = 0, s2 = 0;
    for (std::size_t i = 0; i < m; ++i) {
      const std::size_t t = i * n / m;
      const double w = static_cast<double>(P[t + 1] - P[t]);
      s1 += w;
      s2 += w * w;
    }
    if (s1 > 0) guess += s2 / (2 * s1);
  }
  return guess;
}
}  // namespace detail_probe

/// Optimal (minimum-bottleneck) partition of the chain into p parts, on existing prefix sums.
/// Typically a handful of probes, each searching every separator in a narrowing window.
template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> nicol_plus(const PrefixSums<T>& ps, std::size_t p) {
  using W = wide_t<T>;
  detail::check_parts(p, "irregular::partition::nicol_plus");
  const std::size_t n = ps.size();
  const auto P = ps.data();
  const W lb = detail_probe::chain_lower_bound(ps, p);
  const W ub = std::max(lb, detail_probe::chain_upper_bound(ps, p));
  const double guess = detail_probe::bottleneck_guess(ps, p);
  detail::PrefixBisection<W> search(P.data(), n, p);
  std::vector<std::size_t> s(p + 1);
  search.solve(lb, ub, ps.max_load(), guess, s.data());
  return make_chain_partition(std::move(s), ps);
}

/// Optimal partition of loads into p parts. Throws irregular::invalid_argument for p = 0 or a
/// negative/NaN load (naming its index).
template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> nicol_plus(std::span<const T> loads, std::size_t p) {
  detail::check_parts(p, "irregular::partition::nicol_plus");
  return nicol_plus(PrefixSums<T>(loads), p);
}

/// Optimal partition of n tasks into p parts for any interval-load oracle load(i, j) -> W
/// (0 <= i <= j <= n) that is nondecreasing when [i, j) grows and smallest (e.g. 0) on empty
/// intervals, e.g. the optimal bottleneck of a stripe of a 2D load array. O(p log n) probes
/// in the worst case, far fewer in practice; each probe costs O(p log(n/p)) load calls.
template <class W, class IntervalLoad>
  requires std::invocable<IntervalLoad&, std::size_t, std::size_t>
[[nodiscard]] ChainPartition<W> nicol_generic(std::size_t n, std::size_t p, IntervalLoad&& load) {
  detail::check_parts(p, "irregular::partition::nicol_generic");
  auto cost = [&load](std::size_t, std::size_t i, std::size_t j) {
    return static_cast<W>(load(i, j));
  };
  detail::ChainSearch<W, decltype(cost)> search(n, p, cost);
  // Everything in the first part is feasible; no lower bound is assumed.
  const W ub = cost(0, 0, n);
  std::vector<std::size_t> s(p + 1);
  search.nicol(cost(0, 0, 0), false, ub, s.data());
  return make_chain_partition<W>(std::move(s), load);
}

}  // namespace irregular::partition
