// Cuts checking (baiardi-bounded-neighbours §4.3): turning balanced but illegal cuts into legal
// ones. The paper's greedy shifting, and our optimal legal partition: the minimum bottleneck
// among all partitions that satisfy the NS rule (bound.hpp), by a constrained probe inside the
// 1D parametric search of partition/ (saule-bas-catalyurek §2.2).
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/partition/chain_partition.hpp>
#include <irregular/partition/nicol_plus.hpp>
#include <irregular/partition/prefix_sums.hpp>
#include <irregular/partition/probe.hpp>
#include <irregular/rows/bound.hpp>
#include <irregular/rows/grid.hpp>
#include <irregular/rows/neighbour_count.hpp>

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace irregular::rows {

/// The paper's cuts checking, generalized to the rule's minimum part size L (L = m for NS = 2
/// and the 4-neighbour stencil, the paper's case). The sub-domains are visited in order:
///  - one with fewer than L cells gets its end shifted forward to L cells (the following cuts
///    move with it as they are visited);
///  - when the cells after a sub-domain cannot host the remaining sub-domains at L cells each,
///    that end and all the following ones are pulled back so the remaining sub-domains hold
///    exactly L cells.
/// Loads are not looked at, so the result may be far from balanced; compare optimal_legal_cuts.
/// Throws irregular::invalid_argument for malformed cuts or when the grid cannot host the parts.
[[nodiscard]] inline std::vector<std::size_t> greedy_check(const Grid& grid,
                                                           const NeighbourBound& bound,
                                                           std::vector<std::size_t> cuts) {
  validate_cuts(grid, cuts);
  const std::size_t p = cuts.size() - 1, N = grid.cells();
  bound.validate(grid, p);
  const std::size_t L = bound.min_cells(grid, p);
  for (std::size_t k = 0; k + 1 < p; ++k) {
    cuts[k + 1] = std::max(cuts[k + 1], cuts[k] + L);  // first condition: at least L cells
    const std::size_t left = p - k - 1;                // sub-domains still to be considered
    if (N - std::min(N, cuts[k + 1]) < left * L) {     // second: the rest can host them
      for (std::size_t j = k + 1; j < p; ++j) cuts[j] = N - (p - j) * L;
      break;
    }
  }
  return cuts;
}

namespace detail {
// The greatest separators u with every part in [L cells, load <= B], or false. Every solution
// x stays below u throughout: u starts at the length bounds N - (p - i) L and is only lowered by
// rules every solution obeys:
//  - x_i <= g(x_{i-1}) <= g(u_{i-1}) (g(s): the furthest end of a part from s with load <= B,
//    nondecreasing);
//  - x_i is a good start (i < p): its next L cells weigh <= B, since the part from x_i holds
//    them; so u_i drops to the nearest good start at or below it (good[]);
//  - x_i <= x_{i+1} - L <= u_{i+1} - L.
// A forward sweep applies the first two; where the spacing to u_{i-1} fails it walks back,
// lowering u_{i-1}, u_{i-2}, ... until the spacing holds, and sweeps on from there. Jumping
// straight to the previous good start is what keeps the walk short: lowering a bad start by one
// cell at a time ping-pongs (tens of thousands of rounds at p = 6000). When the sweep reaches
// the end, u satisfies every constraint and is the greatest solution (feasible separators are
// closed under componentwise max); the last part's load decides. Each step advances i or lowers
// some u_i, so it ends.
template <class W>
bool constrained_probe(std::span<const W> P, std::size_t p, std::size_t L, W B, W max_window,
                       std::vector<std::size_t>& u, std::vector<std::size_t>& good) {
  const std::size_t N = P.size() - 1, none = static_cast<std::size_t>(-1);
  if (p * L > N) return false;
  u.assign(p + 1, 0);
  for (std::size_t i = 1; i <= p; ++i) u[i] = N - (p - i) * L;
  // good[x]: the largest good start <= x (none when there is none); starts beyond N - L are never
  // good. When no L cells weigh more than B, every start is good and the table is skipped.
  const bool all_good = max_window <= B;
  if (!all_good) {
    good.resize(N - L + 1);
    std::size_t last = none;
    for (std::size_t x = 0; x + L <= N; ++x) {
      if (static_cast<W>(P[x + L] - P[x]) <= B) last = x;
      good[x] = last;
    }
  }
  auto prev_good = [&](std::size_t x) {
    return all_good ? std::min(x, N - L) : good[std::min(x, N - L)];
  };
  auto g = [&](std::size_t s) {
    const auto it = std::partition_point(P.begin() + static_cast<std::ptrdiff_t>(s), P.end(),
                                         [&](W x) { return static_cast<W>(x - P[s]) <= B; });
    return static_cast<std::size_t>(it - P.begin()) - 1;
  };
  std::size_t i = 1;
  while (i < p) {
    const std::size_t v = prev_good(std::min(u[i], g(u[i - 1])));
    if (v == none || v < i * L) return false;
    u[i] = v;
    if (v >= u[i - 1] + L) {
      ++i;
      continue;
    }
    std::size_t j = i - 1;  // x_j <= u_{j+1} - L, walking back while the spacing fails
    for (;;) {
      if (j == 0) return false;
      const std::size_t w = prev_good(u[j + 1] - L);
      if (w == none || w < j * L) return false;
      u[j] = w;
      if (w >= u[j - 1] + L) break;
      --j;
    }
    i = j + 1;
  }
  return static_cast<W>(P[N] - P[u[p - 1]]) <= B;
}
}  // namespace detail

/// Our optimal legal partition: among all partitions into `parts` parts that satisfy the rule
/// of `bound` (every part at least bound.min_cells cells, which implies at most NS
/// neighbours), one of minimum bottleneck (largest part load). Exact for integer loads; for
/// floating-point loads within a relative 1e-13 of the optimum. Parametric search over the
/// bottleneck, each probe constrained_probe above: O(N) for the good starts plus O(p log N) and
/// the walks back.
/// Throws irregular::invalid_argument for NS < 2, a negative or non-finite load, or parts the
/// grid cannot host (the message gives the largest feasible number).
template <class T>
[[nodiscard]] partition::ChainPartition<partition::wide_t<T>> optimal_legal_cuts(
    const Grid& grid, const NeighbourBound& bound, std::span<const T> loads, std::size_t parts) {
  using W = partition::wide_t<T>;
  grid.validate();
  bound.validate(grid, parts);
  if (loads.size() != grid.cells())
    throw invalid_argument("irregular::rows::optimal_legal_cuts: " + std::to_string(loads.size()) +
                           " loads for " + std::to_string(grid.cells()) + " cells");
  const partition::PrefixSums<T> ps(loads);
  const std::size_t L = bound.min_cells(grid, parts);
  if (L <= 1) return partition::nicol_plus(ps, parts);  // no part is empty: N >= parts
  const auto P = ps.data();
  W max_window{0};  // the heaviest L consecutive cells
  for (std::size_t x = 0; x + L <= grid.cells(); ++x)
    max_window = std::max(max_window, static_cast<W>(P[x + L] - P[x]));
  std::vector<std::size_t> u, good;
  auto feasible = [&](W B) {
    return detail::constrained_probe<W>(P, parts, L, B, max_window, u, good);
  };
  W lo = partition::average_bound(ps.total(), parts);
  if constexpr (std::is_floating_point_v<W>)
    lo = std::max(W{0}, lo - 16 * std::numeric_limits<W>::epsilon() * ps.total());
  const W hi = std::max(lo, ps.total());
  const W best = partition::min_feasible_bottleneck<W>(std::min(lo, hi), hi, feasible);
  if (!feasible(best)) (void)feasible(hi);  // hi is always feasible: parts * L <= N
  return partition::make_chain_partition(std::move(u), ps);
}

}  // namespace irregular::rows
