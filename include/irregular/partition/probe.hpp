// Probe (Han, Narahari & Choi): can the chain be cut into p parts of load <= B? Greedy maximal
// prefixes, each found by advancing over n/p-sized slices then binary search in one slice; and
// the optimal partition by exact bisection over probes. saule-bas-catalyurek §2.2.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/partition/chain_partition.hpp>
#include <irregular/partition/detail/chain_search.hpp>
#include <irregular/partition/direct_cut.hpp>
#include <irregular/partition/prefix_sums.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
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
    std::size_t bad = std::min(boundary, n + 1);
    while (bad - good > 1) {
      const std::size_t mid = good + (bad - good) / 2;
      if (P[mid] - P[prev] <= bottleneck)
        good = mid;
      else
        bad = mid;
    }
    prev = good;
    if (separators) cuts[k + 1] = good;
  }
  if (!(P[n] - P[prev] <= bottleneck)) return false;
  if (separators) *separators = std::move(cuts);
  return true;
}

namespace detail_probe {
template <class W>
W chain_lower_bound(std::span<const W> P, std::size_t p) {
  W wmax{0};
  for (std::size_t i = 0; i + 1 < P.size(); ++i) wmax = std::max(wmax, P[i + 1] - P[i]);
  W avg;
  if constexpr (std::is_floating_point_v<W>) {
    // Slightly below total/p: the part costs are rounded differences, whose sum may fall a few
    // ulps short of the total.
    avg = P.back() / static_cast<double>(p) * (1.0 - 1e-12);
  } else {
    avg = P.back() / static_cast<W>(p) + (P.back() % static_cast<W>(p) != 0 ? 1 : 0);
  }
  return std::max(wmax, avg);
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
  const W lb = std::min(ub, detail_probe::chain_lower_bound<W>(P, p));
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
