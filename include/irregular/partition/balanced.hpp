// Balanced separators among bottleneck-optimal cuts: given a feasible bottleneck B (normally
// the optimum), separators with every part <= B, no empty part whenever n >= p, and part loads
// as close to total / p as the bound allows. A secondary objective on top of
// saule-bas-catalyurek §2.2's optimal cuts (the greedy ones leave the slack to the last parts).
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/detail/search.hpp>
#include <irregular/core/error.hpp>
#include <irregular/partition/detail/chain_search.hpp>
#include <irregular/partition/prefix_sums.hpp>
#include <irregular/partition/probe.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace irregular::partition {

namespace detail {

// One step of balance(): s_k in [a, b] nearest to target (the prefix relative to base), moved
// right to the leftmost position whose part up to the next separator (prefix pnext) fits B.
// guess in [a, b] only speeds the search up. at(x) may report any value <= target whose part
// to pnext exceeds B (e.g. -infinity) for positions left of the answer's window: the result
// does not depend on it (the distributed cut reads only separator windows).
template <class W, class At>
std::size_t balance_step(const At& at, W base, W B, double target, std::size_t a, std::size_t b,
                         std::size_t guess, W pnext) {
  auto below = [&](std::size_t j) { return static_cast<double>(at(j) - base) <= target; };
  std::size_t x = a;
  if (a < b && below(a)) {
    x = irregular::detail::gallop_last_true_from(a, b, std::min(guess, b), below);
    if (x < b &&
        static_cast<double>(at(x + 1) - base) - target < target - static_cast<double>(at(x) - base))
      ++x;
  }
  if (x < b && !(static_cast<W>(pnext - at(x)) <= B))  // too far left: the leftmost that fits
    x = irregular::detail::gallop_first_true_down(
        x + 1, b, [&](std::size_t i) { return static_cast<W>(pnext - at(i)) <= B; });
  return x;
}

// Separators s_p = n, s_{p-1}, ..., s_1, s_0 = 0 placed from the right, given R[0..p], the greedy
// (maximal-prefix) separators at B. m = 1 when n >= p (parts must be non-empty), else 0.
// Each s_k is the position nearest to the ideal prefix k * total / p, clamped to
//   [max(back(s_{k+1}), k m), min(R_k, s_{k+1} - m)],
// back(e) = the smallest i with P(e) - P(i) <= B. Why the window is never empty and the result
// feasible, by induction on k = p-1 .. 1 with the invariant (I): (k+1) m <= s_{k+1} <= R_{k+1}
// and every part right of s_{k+1} is <= B and has >= m tasks. (I) holds for s_p = n
// (R_p = n since B is feasible; n >= p m). The four bounds compare as needed:
//   back(s_{k+1}) <= R_k: s_{k+1} <= R_{k+1} and [R_k, R_{k+1}) <= B, so [R_k, s_{k+1}) <= B;
//   back(s_{k+1}) <= s_{k+1} - m: a single task is <= B (B >= the largest task);
//   k m <= R_k: with m = 1, the greedy parts are non-empty until n, and n >= p > k;
//   k m <= s_{k+1} - m: from (I).
// So the window is non-empty; any s_k in it makes [s_k, s_{k+1}) <= B with >= m tasks and keeps
// (I) at k. At k = 1, s_1 <= R_1 means [0, s_1) <= B, and s_1 >= m. Hence every part is <= B
// (the bottleneck does not grow) and, when n >= p, no part is empty.
template <class W, class Pre>
void balance(const Pre& P, std::size_t n, std::size_t p, W B, const std::size_t* R,
             std::size_t* out) {
  auto at = [&](std::size_t x) -> W { return prefix_at(P, x); };
  out[0] = 0;
  out[p] = n;
  if (p == 1) return;
  const std::size_t m = n >= p ? 1 : 0;
  const W base = at(0);
  const double total = static_cast<double>(at(n) - base);
  std::size_t next = n, len = n / p;  // len: last part's length, a guess for the next one
  W pnext = at(n);
  for (std::size_t k = p - 1; k >= 1; --k) {
    const std::size_t a = k * m, b = std::min(R[k], next - m);
    IRREGULAR_ASSERT(a <= b);
    const double target = total * static_cast<double>(k) / static_cast<double>(p);
    const std::size_t x =
        balance_step<W>(at, base, B, target, a, b, next - a > len ? next - len : a, pnext);
    IRREGULAR_ASSERT(x >= a && x <= b && static_cast<W>(pnext - at(x)) <= B);
    len = next - x;
    out[k] = x;
    next = x;
    pnext = at(x);
  }
}

// Sum of squared part loads (relative to the mean, in double) and number of empty parts: the
// evenness order balanced separators are compared in.
template <class W, class Pre>
std::pair<std::size_t, double> unevenness(const Pre& P, std::size_t p, const std::size_t* s) {
  std::size_t empty = 0;
  double ssq = 0;
  W prev = prefix_at(P, s[0]);
  for (std::size_t k = 0; k < p; ++k) {
    const W cur = prefix_at(P, s[k + 1]);
    const double l = static_cast<double>(static_cast<W>(cur - prev));
    ssq += l * l;
    empty += s[k + 1] == s[k];
    prev = cur;
  }
  return {empty, ssq};
}

// balance(), keeping the greedy separators R instead when they are strictly more even (fewer
// empty parts, then a smaller sum of squared loads): the result is never less even than the
// plain greedy cut.
template <class W, class Pre>
void balance_or_greedy(const Pre& P, std::size_t n, std::size_t p, W B, const std::size_t* R,
                       std::size_t* out) {
  balance<W>(P, n, p, B, R, out);
  if (p == 1) return;
  if (n >= p) {  // out has no empty part: a greedy cut with one is less even, no loads needed
    for (std::size_t k = 0; k < p; ++k)
      if (R[k] == R[k + 1]) return;
  }
  if (unevenness<W>(P, p, R) < unevenness<W>(P, p, out)) std::copy(R, R + p + 1, out);
}

}  // namespace detail

/// Balanced separators of the sub-chain [lo, hi) of pre into p parts at a feasible bottleneck B
/// (normally the optimum): every part <= B, no empty part when hi - lo >= p, and each separator
/// as near to its ideal k * total / p as that allows; never less even (fewer empty parts, then
/// sum of squared loads) than the greedy separators at B. Writes p+1 absolute separators
/// (seps[0] = lo, seps[p] = hi). Throws irregular::invalid_argument when B is infeasible.
/// O(p log(n/p)) accesses.
template <PrefixAccessor A, class W>
void balanced_separators(const A& pre, std::size_t lo, std::size_t hi, std::size_t p, W B,
                         std::size_t* seps) {
  irregular::detail::check_parts(p, "irregular::partition::balanced_separators");
  const std::size_t n = hi - lo;
  const auto P = detail::shifted(pre, lo);
  std::vector<std::size_t> R;
  R.reserve(p + 1);
  R.push_back(0);
  const std::size_t c = greedy_parts(P, 0, n, B, p, &R);
  if (c > p)
    throw invalid_argument(
        "irregular::partition::balanced_separators: the bottleneck is infeasible for p = " +
        std::to_string(p));
  R.resize(p + 1, n);
  detail::balance_or_greedy<W>(P, n, p, B, R.data(), seps);
  for (std::size_t k = 0; k <= p; ++k) seps[k] += lo;
}

/// Balanced separators over prefix sums (p+1 entries); see above.
template <class T>
[[nodiscard]] std::vector<std::size_t> balanced_separators(const PrefixSums<T>& ps, std::size_t p,
                                                           wide_t<T> B) {
  irregular::detail::check_parts(p, "irregular::partition::balanced_separators");
  std::vector<std::size_t> s(p + 1);
  balanced_separators(ps.data().data(), 0, ps.size(), p, B, s.data());
  return s;
}

}  // namespace irregular::partition
