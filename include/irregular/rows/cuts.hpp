// Cuts computation (baiardi-bounded-neighbours §4.2): the balanced cuts of the row-major chain,
// which may be illegal. Two kinds: the optimal 1D partition (NicolPlus, partition/), and the
// paper's cuts at multiples of the optimal load (Figure 3), with the split of that computation
// among the processes of the old partition (ListCuts: the cuts inside one's old sub-domain;
// ReceiveCuts: how many fall inside each other one).
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/core/index.hpp>
#include <irregular/partition/nicol_plus.hpp>
#include <irregular/partition/prefix_sums.hpp>
#include <irregular/rows/grid.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace irregular::rows {

namespace detail {
inline void check_parts(std::size_t p, const char* who) {
  if (p == 0) throw invalid_argument(std::string(who) + ": zero parts");
}
// prefix >= k * total / p (both non-negative), exactly for integers (128-bit), in long double for
// floating point.
template <class W>
bool reaches(W prefix, W total, std::size_t k, std::size_t p) {
  if constexpr (std::is_floating_point_v<W>) {
    return static_cast<long double>(prefix) * static_cast<long double>(p) >=
           static_cast<long double>(total) * static_cast<long double>(k);
  } else {
    using U = uint128_t;  // loads are validated non-negative, so signed sums are too
    return static_cast<U>(prefix) * static_cast<U>(p) >= static_cast<U>(total) * static_cast<U>(k);
  }
}
}  // namespace detail

/// The optimal (minimum-bottleneck) cuts of the chain into `parts` parts: p+1 separators, no
/// empty part when the chain has at least p cells. Ignores the neighbour bound. Throws
/// irregular::invalid_argument for zero parts or a negative, NaN or infinite load.
template <class T>
[[nodiscard]] std::vector<std::size_t> balanced_cuts(std::span<const T> loads, std::size_t parts) {
  irregular::detail::check_parts(parts, "irregular::rows::balanced_cuts");
  return partition::nicol_plus(partition::PrefixSums<T>(loads), parts).separators;
}

/// The paper's cuts (Figure 3): cut k (1 <= k < p) at the first position whose prefix load
/// reaches k * total / p, the optimal load per process being total / p; with a zero total, the
/// cells are split evenly. Throws like balanced_cuts.
template <class T>
[[nodiscard]] std::vector<std::size_t> paper_cuts(std::span<const T> loads, std::size_t parts) {
  irregular::detail::check_parts(parts, "irregular::rows::paper_cuts");
  const partition::PrefixSums<T> ps(loads);
  using W = partition::wide_t<T>;
  const auto P = ps.data();
  const std::size_t n = loads.size();
  const W total = ps.total();
  std::vector<std::size_t> cuts(parts + 1, n);
  cuts[0] = 0;
  for (std::size_t k = 1; k < parts; ++k) {
    if (!(total > W{0})) {
      cuts[k] = n * k / parts;
      continue;
    }
    const auto it =
        std::partition_point(P.begin() + static_cast<std::ptrdiff_t>(cuts[k - 1]), P.end(),
                             [&](W x) { return !detail::reaches<W>(x, total, k, parts); });
    cuts[k] = static_cast<std::size_t>(it - P.begin());
  }
  return cuts;
}

/// Which process of the old partition computes each new cut (Figure 3's loop over ElPart, the
/// old loads): holder[k-1] for cut k = the old part whose load interval (before, before + load]
/// holds k * total / p. The ReceiveCuts of any process are the counts of this vector. Needs
/// only the gathered loads, so every process computes it alike. Throws irregular::invalid_argument
/// for zero parts or a negative or non-finite load; with a zero total it is empty (the cells are
/// then cut evenly, without loads).
template <class W>
[[nodiscard]] std::vector<int> cut_holders(std::span<const W> old_loads, std::size_t parts) {
  irregular::detail::check_parts(parts, "irregular::rows::cut_holders");
  const partition::PrefixSums<W> ps(old_loads);
  using V = partition::wide_t<W>;
  const auto P = ps.data();
  const V total = ps.total();
  std::vector<int> holder;
  if (!(total > V{0}) || old_loads.empty()) return holder;
  holder.reserve(parts - 1);
  std::size_t i = 0;  // old part under consideration
  for (std::size_t k = 1; k < parts; ++k) {
    while (i + 1 < old_loads.size() && !detail::reaches<V>(P[i + 1], total, k, parts)) ++i;
    holder.push_back(static_cast<int>(i));
  }
  return holder;
}

/// ReceiveCuts: how many new cuts fall inside each old sub-domain (see cut_holders).
template <class W>
[[nodiscard]] std::vector<std::size_t> receive_cuts(std::span<const W> old_loads,
                                                    std::size_t parts) {
  std::vector<std::size_t> count(old_loads.size(), 0);
  for (int h : cut_holders(old_loads, parts)) ++count[static_cast<std::size_t>(h)];
  return count;
}

/// ListCuts of one process: the positions of the cuts k whose target k * total / p lies in its
/// old sub-domain, given that sub-domain's cell loads `segment` (chain positions [start,
/// start + segment.size())) and the load before it. Equals paper_cuts on the whole chain at
/// those k when the prefix sums agree (exact for integer loads). Local: no other process's
/// cells are needed.
template <class T, class W>
[[nodiscard]] std::vector<std::size_t> list_cuts(std::span<const T> segment, std::size_t start,
                                                 W load_before, W total, std::size_t parts) {
  irregular::detail::check_parts(parts, "irregular::rows::list_cuts");
  std::vector<std::size_t> out;
  if (!(total > W{0})) return out;
  W prefix = load_before;
  std::size_t k = 1;
  while (k < parts && detail::reaches<W>(prefix, total, k, parts)) ++k;  // targets before us
  for (std::size_t i = 0; i < segment.size() && k < parts; ++i) {
    prefix += static_cast<W>(segment[i]);
    while (k < parts && detail::reaches<W>(prefix, total, k, parts)) {
      out.push_back(start + i + 1);
      ++k;
    }
  }
  return out;
}

}  // namespace irregular::rows
