// Recursive bisection: split the chain, and the processors into halves floor(q/2), ceil(q/2),
// at the load proportional to the halves; recurse. saule-bas-catalyurek §2.2 (RB heuristic).
#pragma once

#include <irregular/partition/chain_partition.hpp>
#include <irregular/partition/detail/chain_search.hpp>
#include <irregular/partition/prefix_sums.hpp>

#include <cstddef>
#include <span>
#include <vector>

namespace irregular::partition {

namespace detail {
// The cut between y and y+1 (the task holding the target) is chosen by the weighted rule
// (t - P[y]) * q <= w * q1, which keeps every child's average within wmax * (1/q_child - 1/q)
// of what the induction needs: it yields Lmax <= Lavg + wmax * (1 - 1/p)
// (doc/guide/partitioners.md).
template <class W>
void bisect(std::span<const W> P, std::size_t a, std::size_t b, std::size_t first, std::size_t q,
            std::vector<std::size_t>& s) {
  while (q > 1) {
    const std::size_t q1 = q / 2;
    const W len = P[b] - P[a];
    const std::size_t y = irregular::detail::gallop_last_true(a, b, [&](std::size_t j) {
      if constexpr (std::is_floating_point_v<W>)
        return (P[j] - P[a]) * static_cast<double>(q) <= len * static_cast<double>(q1);
      else
        return static_cast<uint128_t>(P[j] - P[a]) * q <= static_cast<uint128_t>(len) * q1;
    });
    std::size_t cut = y;
    if (y < b) {
      bool keep;
      const W w = P[y + 1] - P[y];
      if constexpr (std::is_floating_point_v<W>) {
        const double t = len * static_cast<double>(q1) / static_cast<double>(q);
        keep = (t - (P[y] - P[a])) * static_cast<double>(q) <= w * static_cast<double>(q1);
      } else {
        const uint128_t lhs =
            static_cast<uint128_t>(len) * q1 - static_cast<uint128_t>(P[y] - P[a]) * q;
        keep = lhs <= static_cast<uint128_t>(w) * q1;
      }
      if (!keep) cut = y + 1;
    }
    s[first + q1] = cut;
    bisect(P, a, cut, first, q1, s);
    // tail-iterate on the right half
    a = cut;
    first += q1;
    q -= q1;
  }
}
}  // namespace detail

/// The p+1 separators of recursive bisection over existing prefix sums: each step splits the
/// parts in half and the load in proportion.
template <class T>
[[nodiscard]] std::vector<std::size_t> recursive_bisection_separators(const PrefixSums<T>& ps,
                                                                      std::size_t p) {
  irregular::detail::check_parts(p, "irregular::partition::recursive_bisection");
  std::vector<std::size_t> s(p + 1, 0);
  s[p] = ps.size();
  detail::bisect<wide_t<T>>(ps.data(), 0, ps.size(), 0, p, s);
  return s;
}

/// Recursive bisection over existing prefix sums.
template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> recursive_bisection(const PrefixSums<T>& ps,
                                                            std::size_t p) {
  return make_chain_partition(recursive_bisection_separators(ps, p), ps);
}

/// Recursive bisection of loads into p parts; Lmax <= Lavg + max task * (1 - 1/p) <= 2 opt.
template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> recursive_bisection(std::span<const T> loads,
                                                            std::size_t p) {
  irregular::detail::check_parts(p, "irregular::partition::recursive_bisection");
  return recursive_bisection(PrefixSums<T>(loads), p);
}

}  // namespace irregular::partition
