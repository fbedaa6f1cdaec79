// 1D chain kernels for the rectangular partitioners (saule-bas-catalyurek §2.2): greedy probe by
// galloping search on a prefix view, parametric search on the bottleneck, Nicol's scheme over a
// monotone interval-load oracle. Chains are callables pre(j), so stripes of a 2D prefix array
// are partitioned without materialising their projection.
#pragma once

#include <algorithm>
#include <cstddef>
#include <irregular/core/assert.hpp>
#include <irregular/core/detail/search.hpp>
#include <limits>
#include <type_traits>
#include <vector>

namespace irregular::detail {

/// Smallest e in [s, hi] with pre(e) >= target (hi if none).
template <class S, class Pre>
inline std::size_t first_reaching(const Pre& pre, std::size_t s, std::size_t hi, S target) {
  auto reaches = [&](std::size_t e) { return pre(e) >= target; };
  if (reaches(s)) return s;
  if (!reaches(hi)) return hi;
  return bisect_first_true(s, hi, reaches);
}

/// Greedy probe: number of maximal parts of load <= B covering [lo, hi); pmax + 1 when more
/// than pmax are needed, SIZE_MAX when a single element exceeds B (both compare > pmax). Appends
/// the part ends to `ends` and tracks the largest part load in `maxload` when given.
template <class S, class Pre>
inline std::size_t greedy_parts(const Pre& pre, std::size_t lo, std::size_t hi, S B,
                                std::size_t pmax, std::vector<std::size_t>* ends = nullptr,
                                S* maxload = nullptr) {
  std::size_t s = lo, count = 0;
  S ps = pre(lo);
  while (s < hi) {
    if (count == pmax) return pmax + 1;
    // Galloping from s: parts are usually short, so this costs O(log(e - s)).
    const S limit = static_cast<S>(ps + B);
    const std::size_t e = gallop_last_true(s, hi, [&](std::size_t x) { return pre(x) <= limit; });
    if (e == s) return std::numeric_limits<std::size_t>::max();
    const S pe = pre(e);
    if (maxload && pe - ps > *maxload) *maxload = pe - ps;
    if (ends) ends->push_back(e);
    ++count;
    s = e;
    ps = pe;
  }
  return count;
}

/// Ceil(a / b) for integers, a / b for floating point.
template <class S>
inline S ratio_up(S a, std::size_t b) {
  if constexpr (std::is_floating_point_v<S>)
    return a / static_cast<S>(b);
  else
    return a / static_cast<S>(b) + (a % static_cast<S>(b) != 0 ? 1 : 0);
}

/// Smallest feasible bottleneck in [lo, hi] (hi must be feasible) by bisection; exact for
/// integer sums, within a relative 1e-13 for floating point ones (callers then take the
/// actual bottleneck of the partition they build at the returned value).
template <class S, class Feasible>
inline S parametric_min(S lo, S hi, const Feasible& feasible) {
  if constexpr (std::is_floating_point_v<S>) {
    for (int it = 0; it < 200 && hi - lo > hi * 1e-13; ++it) {
      const S mid = lo + (hi - lo) / 2;
      if (mid <= lo || mid >= hi) break;
      if (feasible(mid))
        hi = mid;
      else
        lo = mid;
    }
    return hi;
  } else {
    while (lo < hi) {
      const S mid = lo + (hi - lo) / 2;
      if (feasible(mid))
        hi = mid;
      else
        lo = mid + 1;
    }
    return hi;
  }
}

/// Floating-point sums only: widens a bottleneck that should be feasible by a few ulps until
/// the (rounding) greedy test agrees. Integer sums are returned unchanged.
template <class S, class Feasible>
inline S settle(S B, const Feasible& feasible) {
  if constexpr (std::is_floating_point_v<S>) {
    for (int it = 0; it < 200 && !feasible(B); ++it)
      B = B * (1 + 1e-15) + std::numeric_limits<S>::denorm_min();
  }
  return B;
}

/// Direct cut (DC) on [lo, hi) with p parts: part k ends at the first index whose prefix reaches
/// the ideal cumulative load (k + 1) L / p. Returns the bottleneck; a cheap upper bound.
template <class S, class Pre>
inline S direct_cut_bottleneck(const Pre& pre, std::size_t lo, std::size_t hi, std::size_t p) {
  const S base = pre(lo), total = pre(hi) - base;
  S worst{};
  std::size_t s = lo;
  S ps = base;
  for (std::size_t k = 0; k + 1 < p && s < hi; ++k) {
    S target;
    if constexpr (std::is_floating_point_v<S>)
      target = base + total * static_cast<S>(k + 1) / static_cast<S>(p);
    else
      target = base + total / p * (k + 1) + total % p * (k + 1) / p;
    const std::size_t e = first_reaching<S>(pre, s, hi, target);
    const S pe = pre(e);
    worst = std::max(worst, static_cast<S>(pe - ps));
    s = e;
    ps = pe;
  }
  return std::max(worst, static_cast<S>(pre(hi) - ps));
}

/// Optimal 1D partition of [lo, hi) into p parts: the bottleneck (exact for integer sums).
/// When `ends` is given, it receives p part ends (trailing parts may be empty, ending at hi).
template <class S, class Pre>
S chain_optimum(const Pre& pre, std::size_t lo, std::size_t hi, std::size_t p,
                std::vector<std::size_t>* ends = nullptr) {
  IRREGULAR_ASSERT(p >= 1);
  const S total = pre(hi) - pre(lo);
  // B is feasible: cut greedily at B; the bottleneck is the largest part then (exactly B for
  // integer sums; for floating point ones it avoids re-probing at a rounded value).
  auto finish = [&](S B) {
    S actual{};
    const std::size_t before = ends ? ends->size() : 0;
    std::size_t c = greedy_parts<S>(pre, lo, hi, B, p, ends, &actual);
    if constexpr (std::is_floating_point_v<S>) {
      // prefix differences round: widen B by a few ulps until the greedy cut fits
      for (int it = 0; c > p && it < 200; ++it) {
        if (ends) ends->resize(before);
        B = B * (1 + 1e-15) + std::numeric_limits<S>::denorm_min();
        actual = S{};
        c = greedy_parts<S>(pre, lo, hi, B, p, ends, &actual);
      }
    }
    IRREGULAR_ASSERT(c <= p);
    if (ends)
      for (std::size_t k = c; k < p; ++k) ends->push_back(hi);
    return actual;
  };
  if (hi <= lo || !(total > S{})) return finish(S{});
  if (p == 1) return finish(total);
  const S lb = ratio_up<S>(total, p);
  auto feasible = [&](S B) { return greedy_parts<S>(pre, lo, hi, B, p) <= p; };
  if (feasible(lb)) return finish(lb);
  const S ub = direct_cut_bottleneck<S>(pre, lo, hi, p);
  return finish(parametric_min<S>(lb, ub, feasible));
}

/// Nicol's optimal scheme over a chain [lo, hi) cut into m intervals whose loads come from an
/// oracle f(k, i, j) (interval k = [i, j)), monotone by inclusion (saule-bas-catalyurek §2.2:
/// the first interval is either minimal feasible, or maximal infeasible and then fixed).
/// `feasible(k, s, B)` tells whether [s, hi) can be cut into intervals k..m-1 of load <= B.
/// `lb` is a lower bound of the optimum (avoids probes); returns the optimal bottleneck.
template <class S, class F, class Feasible>
S nicol(std::size_t lo, std::size_t hi, std::size_t m, const F& f, const Feasible& feasible, S lb,
        S ub) {
  std::size_t s = lo;
  for (std::size_t k = 0; k + 1 < m; ++k) {
    // smallest j in [s, hi] with f(k, s, j) >= ub or feasible
    auto pred = [&](std::size_t j) {
      const S v = f(k, s, j);
      if (v >= ub) return true;
      if (v < lb) return false;
      return static_cast<bool>(feasible(k, s, v));
    };
    // pred(hi) holds: one interval takes the rest
    const std::size_t b = pred(s) ? s : bisect_first_true(s, hi, pred);
    const S v = f(k, s, b);
    if (v < ub) {
      ub = v;
    } else if (!feasible(k, s, v)) {
      return ub;  // the first interval must exceed ub: nothing better remains
    }
    if (b == s) return ub;
    s = b - 1;
  }
  const S v = f(m - 1, s, hi);
  return v < ub ? v : ub;
}

}  // namespace irregular::detail
