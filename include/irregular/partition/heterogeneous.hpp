// Chain partitioning over heterogeneous processors (kaddoura-ranka §3.1/§3.4): part k goes to
// processor k of capacity c_k (order fixed) and the bottleneck max_k load_k / c_k is minimized.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/partition/chain_partition.hpp>
#include <irregular/partition/detail/chain_search.hpp>
#include <irregular/partition/prefix_sums.hpp>

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace irregular::partition {

namespace detail {
template <class W>
auto capacity_cost(std::span<const W> P, std::span<const double> cap) {
  return [P, cap](std::size_t k, std::size_t i, std::size_t j) {
    return static_cast<double>(P[j] - P[i]) / cap[k];
  };
}
}  // namespace detail

/// DirectCut with capacities: separator k nearest to total * (c_0 + ... + c_{k-1}) / sum c.
template <class T>
[[nodiscard]] ChainPartition<double> direct_cut(const PrefixSums<T>& ps,
                                                std::span<const double> capacities) {
  const std::size_t p = capacities.size();
  irregular::detail::check_capacities(capacities.data(), p, "irregular::partition::direct_cut");
  const std::size_t n = ps.size();
  const auto P = ps.data();
  double csum = 0;
  for (double c : capacities) csum += c;
  const double total = static_cast<double>(ps.total());
  std::vector<std::size_t> s(p + 1, 0);
  s[p] = n;
  double cprefix = 0;
  std::size_t prev = 0;
  for (std::size_t k = 1; k < p; ++k) {
    cprefix += capacities[k - 1];
    const double t = total * (cprefix / csum);
    const std::size_t y = irregular::detail::gallop_last_true(
        prev, n, [&](std::size_t j) { return static_cast<double>(P[j]) <= t; });
    std::size_t x = y;
    if (y < n && static_cast<double>(P[y + 1]) - t < t - static_cast<double>(P[y])) x = y + 1;
    s[k] = x;
    prev = y;
  }
  return make_chain_partition(std::move(s), ps, capacities);
}

/// Optimal partition over capacities (Nicol's search on the costs load / c_k, bounded by
/// total / sum c below and DirectCut above).
template <class T>
[[nodiscard]] ChainPartition<double> nicol_plus(const PrefixSums<T>& ps,
                                                std::span<const double> capacities) {
  const std::size_t p = capacities.size();
  irregular::detail::check_capacities(capacities.data(), p, "irregular::partition::nicol_plus");
  auto cost = detail::capacity_cost<wide_t<T>>(ps.data(), capacities);
  irregular::detail::ChainSearch<double, decltype(cost)> search(ps.size(), p, cost);
  auto dc = direct_cut(ps, capacities);
  double csum = 0;
  for (double c : capacities) csum += c;
  const double lb = static_cast<double>(ps.total()) / csum * (1.0 - 1e-12);
  if (!(lb < dc.bottleneck)) return dc;
  std::vector<std::size_t> s(p + 1);
  search.nicol(lb, false, dc.bottleneck, s.data());
  return make_chain_partition(std::move(s), ps, capacities);
}

/// Optimal partition over capacities by dynamic programming, O(p n).
template <class T>
[[nodiscard]] ChainPartition<double> optimal_dp(const PrefixSums<T>& ps,
                                                std::span<const double> capacities) {
  const std::size_t p = capacities.size();
  irregular::detail::check_capacities(capacities.data(), p, "irregular::partition::optimal_dp");
  auto cost = detail::capacity_cost<wide_t<T>>(ps.data(), capacities);
  const double best = irregular::detail::dp_bottleneck<double>(ps.size(), p, cost);
  irregular::detail::ChainSearch<double, decltype(cost)> search(ps.size(), p, cost);
  std::vector<std::size_t> s(p + 1);
  search.greedy(best, s.data());
  return make_chain_partition(std::move(s), ps, capacities);
}

/// DirectCut with capacities over loads. Throws irregular::invalid_argument for empty,
/// non-positive, infinite or NaN capacities and bad loads.
template <class T>
[[nodiscard]] ChainPartition<double> direct_cut(std::span<const T> loads,
                                                std::span<const double> capacities) {
  irregular::detail::check_capacities(capacities.data(), capacities.size(),
                                      "irregular::partition::direct_cut");
  return direct_cut(PrefixSums<T>(loads), capacities);
}

/// Optimal partition minimizing max_k load_k / capacities[k]. Throws irregular::invalid_argument
/// for empty, non-positive, infinite or NaN capacities and bad loads (naming the index).
template <class T>
[[nodiscard]] ChainPartition<double> nicol_plus(std::span<const T> loads,
                                                std::span<const double> capacities) {
  irregular::detail::check_capacities(capacities.data(), capacities.size(),
                                      "irregular::partition::nicol_plus");
  return nicol_plus(PrefixSums<T>(loads), capacities);
}

/// The dynamic-programming optimum with capacities over loads (the oracle for nicol_plus).
/// Throws irregular::invalid_argument as direct_cut does.
template <class T>
[[nodiscard]] ChainPartition<double> optimal_dp(std::span<const T> loads,
                                                std::span<const double> capacities) {
  irregular::detail::check_capacities(capacities.data(), capacities.size(),
                                      "irregular::partition::optimal_dp");
  return optimal_dp(PrefixSums<T>(loads), capacities);
}

}  // namespace irregular::partition
