// NicolPlus: optimal 1D chain partitioning with Pinar & Aykanat's engineering (saule-bas-catalyurek
// §2.2): on prefix sums, exact bisection with interpolated probes and separator-index windows;
// for general interval-load oracles, Nicol's first-separator search with the same bounds.
// This is the library's one 1D engine: rect/ calls optimal_bottleneck and nicol_oracle on
// stripes of its 2D/3D prefix arrays.
//
// Exactness. Integer sums (int64, uint64, uint128): exact. Floating-point sums: the optimum is
// exact in the cost model every algorithm here shares, a part [i, j) costing the rounded
// difference P[j] - P[i] of the prefix sums (the search snaps to realised part costs, so the
// result equals the DP oracle on the same sums bit for bit). Against real arithmetic on the
// loads, the prefix sums carry the usual summation error, so the bottleneck is within an
// absolute 2 (n + 1) u total of the exact optimum (u = 2^-53); see doc/guide/partitioners.md.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/partition/balanced.hpp>
#include <irregular/partition/chain_partition.hpp>
#include <irregular/partition/detail/chain_search.hpp>
#include <irregular/partition/detail/prefix_bisection.hpp>
#include <irregular/partition/direct_cut.hpp>
#include <irregular/partition/prefix_sums.hpp>
#include <irregular/partition/probe.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace irregular::partition {

namespace detail {
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
}  // namespace detail

/// Which optimal separators to return: balanced (default: no empty part when n >= p, loads as
/// even as the optimal bottleneck allows, see balanced.hpp) or greedy (every part maximal from
/// the left, the slack left to the last parts).
enum class SeparatorChoice { balanced, greedy };

namespace detail {
// The engine's driver: optimal bottleneck of the shifted chain P[0..n] into p parts, separators
// (relative) into seps when non-null.
template <class W, class Pre>
W solve_chain(const Pre& P, std::size_t n, std::size_t p, W lb, W ub, W max_task, double guess,
              std::size_t* seps, SeparatorChoice choice) {
  if (p > std::numeric_limits<std::size_t>::max() / 2)  // also tells the compiler p + 1 > 0
    throw invalid_argument("irregular::partition: too many parts");
  irregular::detail::PrefixBisection<W, Pre> search(P, n, p);
  std::vector<std::size_t> greedy(p + 1);
  const W best = search.solve(lb, ub, max_task, guess, greedy.data());
  if (seps) {
    if (choice == SeparatorChoice::balanced)
      detail::balance_or_greedy<W>(P, n, p, best, greedy.data(), seps);
    else
      std::copy(greedy.begin(), greedy.end(), seps);
  }
  return best;
}
}  // namespace detail

/// The optimal (minimum) bottleneck of the sub-chain [lo, hi) of prefix sums pre (a pointer or a
/// callable, see PrefixAccessor) cut into p parts; when seps is non-null it receives p+1
/// absolute separators (seps[0] = lo, seps[p] = hi) of an optimal partition. Integer sums are
/// exact; floating-point ones exact in the prefix-difference cost model (header comment).
/// No O(n) pass: a few probes of O(p log(n/p)) accesses, the first at the average load.
template <PrefixAccessor A>
[[nodiscard]] prefix_value_t<A> optimal_bottleneck(
    const A& pre, std::size_t lo, std::size_t hi, std::size_t p, std::size_t* seps = nullptr,
    SeparatorChoice choice = SeparatorChoice::balanced) {
  using W = prefix_value_t<A>;
  irregular::detail::check_parts(p, "irregular::partition::optimal_bottleneck");
  const std::size_t n = hi - lo;
  const auto P = detail::shifted(pre, lo);
  const W total = static_cast<W>(prefix_at(P, n) - prefix_at(P, 0));
  W lb = average_bound(total, p);
  if constexpr (std::is_floating_point_v<W>)
    lb = std::max(W{0}, lb - 16 * std::numeric_limits<W>::epsilon() * total);
  const W ub = std::max(lb, total);
  const W best =
      detail::solve_chain<W>(P, n, p, lb, ub, W{0}, static_cast<double>(lb), seps, choice);
  if (seps)
    for (std::size_t k = 0; k <= p; ++k) seps[k] += lo;
  return best;
}

/// Optimal (minimum-bottleneck) partition of the chain into p parts, on existing prefix sums.
/// Typically a handful of probes, each searching every separator in a narrowing window. The
/// separators are the balanced ones by default (SeparatorChoice).
template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> nicol_plus(
    const PrefixSums<T>& ps, std::size_t p, SeparatorChoice choice = SeparatorChoice::balanced) {
  using W = wide_t<T>;
  irregular::detail::check_parts(p, "irregular::partition::nicol_plus");
  const std::size_t n = ps.size();
  const W* P = ps.data().data();
  const W lb = detail::chain_lower_bound(ps, p);
  const W ub = std::max(lb, detail::chain_upper_bound(ps, p));
  const double guess = detail::bottleneck_guess(ps, p);
  std::vector<std::size_t> s(p + 1);
  detail::solve_chain<W>(P, n, p, lb, ub, ps.max_load(), guess, s.data(), choice);
  return make_chain_partition(std::move(s), ps);
}

/// Optimal partition of loads into p parts. Throws irregular::invalid_argument for p = 0 or a
/// negative/NaN load (naming its index).
template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> nicol_plus(
    std::span<const T> loads, std::size_t p, SeparatorChoice choice = SeparatorChoice::balanced) {
  irregular::detail::check_parts(p, "irregular::partition::nicol_plus");
  return nicol_plus(PrefixSums<T>(loads), p, choice);
}

/// Optimal partition of n tasks into p parts for any interval-load oracle load(i, j) -> W
/// (0 <= i <= j <= n) that is nondecreasing when [i, j) grows and smallest (e.g. 0) on empty
/// intervals, e.g. the optimal bottleneck of a stripe of a 2D load array. O(p log n) probes
/// in the worst case, far fewer in practice; each probe costs O(p log(n/p)) load calls.
template <class W, class IntervalLoad>
requires std::invocable<IntervalLoad&, std::size_t, std::size_t>
[[nodiscard]] ChainPartition<W> nicol_generic(std::size_t n, std::size_t p, IntervalLoad&& load) {
  irregular::detail::check_parts(p, "irregular::partition::nicol_generic");
  auto cost = [&load](std::size_t, std::size_t i, std::size_t j) {
    return static_cast<W>(load(i, j));
  };
  irregular::detail::ChainSearch<W, decltype(cost)> search(n, p, cost);
  // Everything in the first part is feasible; no lower bound is assumed.
  const W ub = cost(0, 0, n);
  std::vector<std::size_t> s(p + 1);
  search.nicol(cost(0, 0, 0), false, ub, s.data());
  return make_chain_partition<W>(std::move(s), load);
}

/// Nicol's optimal scheme for part-dependent interval costs: tasks [0, n) into p parts, part k
/// on [i, j) costing cost(k, i, j) (nondecreasing when [i, j) grows, smallest on empty
/// intervals), with a decision oracle fits(k, i, j, B) == (cost(k, i, j) <= B) that may be much
/// cheaper than the cost (e.g. a greedy count instead of an optimal sub-partition). lb: a lower
/// bound of the optimum; ub: an upper bound (not necessarily realised). Returns the optimal
/// bottleneck and, when seps is non-null, writes p+1 separators of an optimal partition.
template <class W, class Cost, class Fits>
requires std::invocable<Cost&, std::size_t, std::size_t, std::size_t>
[[nodiscard]] W nicol_oracle(std::size_t n, std::size_t p, Cost&& cost, Fits&& fits, W lb, W ub,
                             std::size_t* seps = nullptr) {
  irregular::detail::check_parts(p, "irregular::partition::nicol_oracle");
  auto c = [&cost](std::size_t k, std::size_t i, std::size_t j) {
    return static_cast<W>(cost(k, i, j));
  };
  auto f = [&fits](std::size_t k, std::size_t i, std::size_t j, const W& b) {
    return static_cast<bool>(fits(k, i, j, b));
  };
  irregular::detail::ChainSearch<W, decltype(c), irregular::detail::NoPrefetch, decltype(f)> search(
      n, p, c, {}, f);
  std::vector<std::size_t> s(p + 1);
  const W best = search.nicol(lb, false, std::max(lb, ub), s.data());
  if (seps) std::copy(s.begin(), s.end(), seps);
  return best;
}

}  // namespace irregular::partition
