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
  irregular::detail::check_parts(p, "irregular::partition::probe");
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
    good = irregular::detail::bisect_last_true(good, std::min(boundary, n + 1), [&](std::size_t j) {
      return P[j] - P[prev] <= bottleneck;
    });
    prev = good;
    if (separators) cuts[k + 1] = good;
  }
  if (!(P[n] - P[prev] <= bottleneck)) return false;
  if (separators) *separators = std::move(cuts);
  return true;
}

/// Returned by greedy_parts when a single task does not fit.
inline constexpr std::size_t no_fit = std::numeric_limits<std::size_t>::max();

/// Greedy cover of tasks [lo, hi) by maximal parts [s, e) with fits(s, e) (an interval
/// predicate, true on empty intervals and monotone: true on every sub-interval of a fitting
/// one). Returns the number of parts; cap + 1 as soon as more than cap are needed, no_fit when
/// a single task does not fit (both compare > cap). Appends the part ends to ends when given.
/// O(parts * log(part length)) predicate calls.
template <class Fits>
std::size_t greedy_parts_by(std::size_t lo, std::size_t hi, std::size_t cap, Fits&& fits,
                            std::vector<std::size_t>* ends = nullptr) {
  std::size_t s = lo, count = 0;
  while (s < hi) {
    if (count == cap) return cap + 1;
    // galloping from s: parts are usually short, so this costs O(log(e - s))
    const std::size_t e =
        irregular::detail::gallop_last_true(s, hi, [&](std::size_t x) { return fits(s, x); });
    if (e == s) return no_fit;
    if (ends) ends->push_back(e);
    ++count;
    s = e;
  }
  return count;
}

/// greedy_parts_by on a sub-chain [lo, hi) of prefix sums: parts of load pre(e) - pre(s) <= B.
/// Tracks the largest part load in *maxload when given. Part ends are absolute (in [lo, hi]).
template <PrefixAccessor A, class W>
std::size_t greedy_parts(const A& pre, std::size_t lo, std::size_t hi, W B, std::size_t cap,
                         std::vector<std::size_t>* ends = nullptr, W* maxload = nullptr) {
  std::size_t s = lo, count = 0;
  W ps = prefix_at(pre, lo);
  while (s < hi) {
    if (count == cap) return cap + 1;
    std::size_t e;
    if constexpr (std::is_floating_point_v<W>) {  // the cost model: rounded differences
      e = irregular::detail::gallop_last_true(
          s, hi, [&](std::size_t x) { return static_cast<W>(prefix_at(pre, x) - ps) <= B; });
    } else {  // integers: one comparison against a saturated limit, the same test exactly
      const W top = ~W{0} > W{0} ? ~W{0} : std::numeric_limits<W>::max();
      const W limit = B > top - ps ? top : static_cast<W>(ps + B);
      e = irregular::detail::gallop_last_true(
          s, hi, [&](std::size_t x) { return prefix_at(pre, x) <= limit; });
    }
    if (e == s) return no_fit;
    const W pe = prefix_at(pre, e);
    if (maxload && *maxload < static_cast<W>(pe - ps)) *maxload = static_cast<W>(pe - ps);
    if (ends) ends->push_back(e);
    ++count;
    s = e;
    ps = pe;
  }
  return count;
}

/// The average-load lower bound of p parts: ceil(total / p) for integer sums (exact), total / p
/// for floating-point ones.
template <class W>
[[nodiscard]] constexpr W average_bound(W total, std::size_t p) {
  if constexpr (std::is_floating_point_v<W>)
    return total / static_cast<W>(p);
  else
    return total / static_cast<W>(p) + (total % static_cast<W>(p) != 0 ? 1 : 0);
}

/// Parametric search for any monotone feasibility test (e.g. several chains sharing p parts,
/// or a 2D decision procedure): the smallest B in [lo, hi] with feasible(B), hi feasible.
/// Integer B: exact, O(log(hi - lo)) tests. Floating-point B: the returned value is feasible
/// and within a relative 1e-13 above the smallest feasible one (the search stops when
/// hi - lo <= 1e-13 hi; at most 200 tests). If no test succeeded and rounding makes hi itself
/// infeasible, hi is widened by a few ulps until it is feasible.
template <class W, class Feasible>
[[nodiscard]] W min_feasible_bottleneck(W lo, W hi, Feasible&& feasible) {
  if constexpr (std::is_floating_point_v<W>) {
    bool verified = false;
    for (int it = 0; it < 200 && hi - lo > hi * 1e-13; ++it) {
      const W mid = lo + (hi - lo) / 2;
      if (mid <= lo || mid >= hi) break;
      if (feasible(mid)) {
        hi = mid;
        verified = true;
      } else {
        lo = mid;
      }
    }
    for (int it = 0; !verified && it < 200; ++it) {
      if (feasible(hi)) break;
      hi = hi * (1 + 1e-15) + std::numeric_limits<W>::denorm_min();
    }
    return hi;
  } else {
    while (lo < hi) {
      const W mid = lo + (hi - lo) / 2;
      if (feasible(mid))
        hi = mid;
      else
        lo = mid + 1;
    }
    return hi;
  }
}

namespace detail {
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
}  // namespace detail

/// Optimal partition by exact bisection over probes (Pinar & Aykanat's EBS), for comparison.
template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> probe_bisection(const PrefixSums<T>& ps, std::size_t p) {
  using W = wide_t<T>;
  irregular::detail::check_parts(p, "irregular::partition::probe_bisection");
  const auto P = ps.data();
  auto cost = [P](std::size_t, std::size_t i, std::size_t j) { return P[j] - P[i]; };
  irregular::detail::ChainSearch<W, decltype(cost)> search(ps.size(), p, cost);
  const W ub = direct_cut(ps, p).bottleneck;
  const W lb = std::min(ub, detail::chain_lower_bound(ps, p));
  const W best = search.exact_bisection(lb, ub);
  std::vector<std::size_t> s(p + 1);
  search.greedy(best, s.data());
  return make_chain_partition(std::move(s), ps);
}

/// Exact bisection over probes of loads into p parts. Throws irregular::invalid_argument for
/// p = 0 or a bad load.
template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> probe_bisection(std::span<const T> loads, std::size_t p) {
  irregular::detail::check_parts(p, "irregular::partition::probe_bisection");
  return probe_bisection(PrefixSums<T>(loads), p);
}

}  // namespace irregular::partition
