// Optimal 1D chain partitioning by dynamic programming (Manne & Olstad), O(p n): the exact
// oracle the faster algorithms are tested against. saule-bas-catalyurek §2.2.
#pragma once

#include <irregular/partition/chain_partition.hpp>
#include <irregular/partition/detail/chain_search.hpp>
#include <irregular/partition/prefix_sums.hpp>

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace irregular::partition {

/// The optimal partition (Manne & Olstad's dynamic programming): the exact oracle.
template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> optimal_dp(const PrefixSums<T>& ps, std::size_t p) {
  using W = wide_t<T>;
  irregular::detail::check_parts(p, "irregular::partition::optimal_dp");
  const std::size_t n = ps.size();
  const auto P = ps.data();
  auto cost = [P](std::size_t, std::size_t i, std::size_t j) { return P[j] - P[i]; };
  // More parts than tasks cannot lower the bottleneck below the largest task: cap the rows.
  const std::size_t rows = std::max<std::size_t>(1, std::min(p, n));
  const W best = irregular::detail::dp_bottleneck<W>(n, rows, cost);
  irregular::detail::ChainSearch<W, decltype(cost)> search(n, p, cost);
  std::vector<std::size_t> s(p + 1);
  search.greedy(best, s.data());
  return make_chain_partition(std::move(s), ps);
}

/// Optimal partition of loads into p parts by dynamic programming, O(p n) time, O(n) memory.
template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> optimal_dp(std::span<const T> loads, std::size_t p) {
  irregular::detail::check_parts(p, "irregular::partition::optimal_dp");
  return optimal_dp(PrefixSums<T>(loads), p);
}

}  // namespace irregular::partition
