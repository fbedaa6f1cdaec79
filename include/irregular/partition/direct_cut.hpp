// DirectCut (Miguet & Pierson): separator k at the prefix sum nearest to k * total / p.
// saule-bas-catalyurek §2.2: the fast heuristic, with Lmax <= Lavg + max task.
#pragma once

#include <irregular/partition/chain_partition.hpp>
#include <irregular/partition/detail/chain_search.hpp>
#include <irregular/partition/prefix_sums.hpp>

#include <cstddef>
#include <span>
#include <vector>

namespace irregular::partition {

/// Separators of DirectCut over existing prefix sums (p+1 entries).
template <class T>
[[nodiscard]] std::vector<std::size_t> direct_cut_separators(const PrefixSums<T>& ps,
                                                             std::size_t p) {
  using W = wide_t<T>;
  irregular::detail::check_parts(p, "irregular::partition::direct_cut");
  const std::size_t n = ps.size();
  const auto P = ps.data();
  const W total = ps.total();
  std::vector<std::size_t> s(p + 1, 0);
  s[p] = n;
  std::size_t prev = 0;
  for (std::size_t k = 1; k < p; ++k) {
    // y: last prefix at or below the target; the cut goes to whichever of y, y+1 is nearer.
    const std::size_t y = irregular::detail::gallop_last_true(prev, n, [&](std::size_t j) {
      return irregular::detail::CutTarget<W>::at_most(P[j], total, k, p);
    });
    std::size_t x = y;
    if (y < n) {
      bool up;
      if constexpr (std::is_floating_point_v<W>) {
        const double t = total * static_cast<double>(k) / static_cast<double>(p);
        up = (P[y + 1] - t) < (t - P[y]);
      } else {
        const uint128_t t = static_cast<uint128_t>(total) * k;
        const uint128_t lo = static_cast<uint128_t>(P[y]) * p;
        const uint128_t hi = static_cast<uint128_t>(P[y + 1]) * p;
        up = (hi - t) < (t - lo);
      }
      if (up) x = y + 1;
    }
    s[k] = x;
    prev = y;
  }
  return s;
}

/// DirectCut over existing prefix sums: Lmax <= Lavg + max task.
template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> direct_cut(const PrefixSums<T>& ps, std::size_t p) {
  return make_chain_partition(direct_cut_separators(ps, p), ps);
}

/// DirectCut of loads into p parts. Throws irregular::invalid_argument for p = 0 or a bad load.
template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> direct_cut(std::span<const T> loads, std::size_t p) {
  irregular::detail::check_parts(p, "irregular::partition::direct_cut");
  return direct_cut(PrefixSums<T>(loads), p);
}

}  // namespace irregular::partition
