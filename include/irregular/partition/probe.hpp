// Probe (Han, Narahari & Choi): can the chain be cut into p parts of load <= B? Greedy maximal
// prefixes, each found by advancing over n/p-sized slices then binary search in one slice; and
// the optimal partition by exact bisection over probes. saule-bas-catalyurek §2.2.
#pragma once

#include <irregular/core/detail/search.hpp>
#include <irregular/core/error.hpp>
#include <irregular/partition/chain_partition.hpp>
#include <irregular/partition/detail/chain_search.hpp>
#include <irregular/partition/direct_cut.hpp>
#include <irregular/partition/prefix_sums.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

namespace irregular::partition {

/// True when the chain can be cut into p parts of load <= bottleneck. On success and when
/// separators is non-null, *separators receives the greedy (maximal prefix) p+1 separators;
/// on failure it is left unchanged. O(p log(n/p)) comparisons.
template <class T>
[[nodiscard]] bool probe(const PrefixSums<T>& ps, std::size_t p, wide_t<T> bottleneck,
                         std::vector<std::size_t>* separators = nullptr) {
  using W = wide_t<T>;
  detail::check_parts(p, "irregular::partition::probe");
  if constexpr (std::is_floating_point_v<W>)
    if (std::isnan(bottleneck))
      throw invalid_argument("irregular::partition::probe: the bottleneck is NaN");
  const std::size_t n = ps.size();
  const auto P = ps.data();
  if (bottleneck < W{0}) return false;
  const std::size_t slice = std::max<std::size_t>(1, (n + p - 1) / p);
  std::vector<std::size_t> cuts;
  if (separators) cuts.assign(p + 1, n);
  if (separators) cuts[0] = 0;
  std::size_t prev = 0;
  std::size_t boundary = slice;  // next slice boundary not yet known to fit
  for (std::size_t k = 0; k + 1 < p && prev < n; ++k) {
    // Advance whole slices while they fit, then binary search inside the slice.
    std::size_t good = prev;
    if (boundary <= prev) boundary = (prev / slice + 1) * slice;
    while (boundary <= n && P[boundary] - P[prev] <= bottleneck) {
      good = boundary;
      boundary += slice;
    }
    good = detail::bisect_last_true(good, std::min(boundary, n + 1), [&](std::size_t j) {
      return P[j] - P[prev] <= bottleneck;
    });
    prev = good;
    if (separators) cuts[k + 1] = good;
  }
  if (!(P[n] - P[prev] <= bottleneck)) return false;
  if (separators) *separators = std::move(cuts);
  return true;
}

namespace detail_probe {
// LB = max(total / p, max task): every part averages total/p and some part holds the largest
// task. For floating point, part costs are rounded differences of prefix sums, so the bound is
// lowered by a few ulps of the total to stay below the optimum of that cost model.
template <class T>
wide_t<T> chain_lower_bound(const PrefixSums<T>& ps, std::size_t p) {
  using W = wide_t<T>;
  const W total = ps.total();
  if constexpr (std::is_floating_point_v<W>) {
    const W lb = std::max(total / static_cast<W>(p), ps.max_load()) -
                 16 * std::numeric_limits<W>::epsilon() * total;
    return std::max(W{0}, lb);
  } else {
    const W avg = total / static_cast<W>(p) + (total % static_cast<W>(p) != 0 ? 1 : 0);
    return std::max(ps.max_load(), avg);
  }
}
// UB = total / p + max task >= optimum: DirectCut realises it (Lmax <= Lavg + max task).
template <class T>
wide_t<T> chain_upper_bound(const PrefixSums<T>& ps, std::size_t p) {
  using W = wide_t<T>;
  const W total = ps.total();
  if constexpr (std::is_floating_point_v<W>) {
    return (total / static_cast<W>(p) + ps.max_load()) * (1 + 1e-12) +
           16 * std::numeric_limits<W>::epsilon() * total;
  } else {
    return std::min(total, total / static_cast<W>(p) + ps.max_load());
  }
}
}  // namespace detail_probe

/// Optimal partition by exact bisection over probes (Pinar & Aykanat's EBS), for comparison.
template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> probe_bisection(const PrefixSums<T>& ps, std::size_t p) {
  using W = wide_t<T>;
  detail::check_parts(p, "irregular::partition::probe_bisection");
  const auto P = ps.data();
  auto cost = [P](std::size_t, std::size_t i, std::size_t j) { return P[j] - P[i]; };
  detail::ChainSearch<W, decltype(cost)> search(ps.size(), p, cost);
  const W ub = direct_cut(ps, p).bottleneck;
  const W lb = std::min(ub, detail_probe::chain_lower_bound(ps, p));
  const W best = search.exact_bisection(lb, ub);
  std::vector<std::size_t> s(p + 1);
  search.greedy(best, s.data());
  return make_chain_partition(std::move(s), ps);
}

template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> probe_bisection(std::span<const T> loads, std::size_t p) {
  detail::check_parts(p, "irregular::partition::probe_bisection");
  return probe_bisection(PrefixSums<T>(loads), p);
}

}  // namespace irregular::partition
