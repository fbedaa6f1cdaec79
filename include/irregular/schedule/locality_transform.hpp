// The one-dimensional locality transform of kaddoura-ranka-1995 §3.1: a permutation
// T: V -> {0..n-1} of graph vertices embedded in 2D/3D such that vertices close in space get close
// numbers, so contiguous blocks of the list are good partitions for any number of parts.
// Offered by any curve of the library (the H-Tree's SFC visit) and by recursive coordinate
// bisection (the paper's Figure 2).
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace irregular::schedule {

/// The runtime twin: which ordering renumbers the vertices.
enum class LocalityOrder { hilbert, morton, peano, rcb };

/// The order's lower-case name.
[[nodiscard]] constexpr std::string_view to_string(LocalityOrder o) noexcept {
  switch (o) {
    case LocalityOrder::hilbert:
      return "hilbert";
    case LocalityOrder::morton:
      return "morton";
    case LocalityOrder::peano:
      return "peano";
    case LocalityOrder::rcb:
      return "rcb";
  }
  return "unknown";
}

/// "hilbert", "morton", "peano" or "rcb"; throws irregular::invalid_argument otherwise.
[[nodiscard]] inline LocalityOrder parse_locality_order(std::string_view s) {
  for (auto o :
       {LocalityOrder::hilbert, LocalityOrder::morton, LocalityOrder::peano, LocalityOrder::rcb})
    if (to_string(o) == s) return o;
  throw invalid_argument("irregular::schedule::parse_locality_order: unknown order '" +
                         std::string(s) + "' (expected hilbert, morton, peano or rcb)");
}

namespace detail {
template <int D>
void check_coordinates(std::span<const std::array<double, D>> xs, const char* who) {
  for (std::size_t v = 0; v < xs.size(); ++v)
    for (int d = 0; d < D; ++d)
      if (!std::isfinite(xs[v][static_cast<std::size_t>(d)]))
        throw invalid_argument(std::string(who) + ": vertex " + std::to_string(v) +
                               " has a non-finite coordinate");
}

// The inverse of a visit order: T[order[k]] = k.
inline std::vector<std::int64_t> numbering(const std::vector<std::int64_t>& order) {
  std::vector<std::int64_t> T(order.size());
  for (std::size_t k = 0; k < order.size(); ++k)
    T[static_cast<std::size_t>(order[k])] = static_cast<std::int64_t>(k);
  return T;
}
}  // namespace detail

/// T by the curve C: the vertices' bounding box is the H-Tree root, each vertex falls in a cell
/// at level `level` (default: as fine as 2^20 cells per axis allow, at most C::max_level), and
/// the vertices are numbered in curve order of their cells (ties by vertex number), which is the
/// SFC visit of the H-Tree's leaves. Throws irregular::invalid_argument for non-finite coordinates.
template <SpaceFillingCurve C>
[[nodiscard]] std::vector<std::int64_t> curve_order(std::span<const std::array<double, C::dim>> xs,
                                                    int level = -1) {
  constexpr int D = C::dim;
  detail::check_coordinates<D>(xs, "irregular::schedule::curve_order");
  if (level < 0) {
    level = 0;
    while (level < C::max_level &&
           ipow<coord_t>(static_cast<coord_t>(C::arity), level + 1) <= (coord_t{1} << 20))
      ++level;
  }
  if (level > C::max_level)
    throw invalid_argument("irregular::schedule::curve_order: level " + std::to_string(level) +
                           " beyond max_level " + std::to_string(C::max_level));
  Box<D> box;
  for (int d = 0; d < D; ++d) {
    box.lo[static_cast<std::size_t>(d)] = xs.empty() ? 0.0 : xs[0][static_cast<std::size_t>(d)];
    box.hi[static_cast<std::size_t>(d)] = box.lo[static_cast<std::size_t>(d)];
  }
  for (const auto& x : xs)
    for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d) {
      box.lo[d] = std::min(box.lo[d], x[d]);
      box.hi[d] = std::max(box.hi[d], x[d]);
    }
  for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d)
    if (!(box.hi[d] > box.lo[d]))
      box.hi[d] = box.lo[d] + 1;  // a flat axis: one cell wide is enough
  const coord_t per_axis = ipow<coord_t>(static_cast<coord_t>(C::arity), level);
  std::vector<std::pair<typename C::index_type, std::int64_t>> keyed(xs.size());
  for (std::size_t v = 0; v < xs.size(); ++v)
    keyed[v] = {C::index(box.cell_of(xs[v], level, per_axis)), static_cast<std::int64_t>(v)};
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::int64_t> order(xs.size());
  for (std::size_t k = 0; k < keyed.size(); ++k) order[k] = keyed[k].second;
  return detail::numbering(order);
}

/// T by recursive coordinate bisection (Figure 2): split the vertex set at the median of the axis
/// of largest extent, number the lower half first, recurse on both halves. Deterministic (ties by
/// vertex number). O(n log n). Throws irregular::invalid_argument for non-finite coordinates.
template <int D>
[[nodiscard]] std::vector<std::int64_t> rcb_order(std::span<const std::array<double, D>> xs) {
  detail::check_coordinates<D>(xs, "irregular::schedule::rcb_order");
  std::vector<std::int64_t> order(xs.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::vector<std::pair<std::size_t, std::size_t>> stack{{0, order.size()}};
  while (!stack.empty()) {
    const auto [b, e] = stack.back();
    stack.pop_back();
    if (e - b < 2) continue;
    std::array<double, D> lo = xs[static_cast<std::size_t>(order[b])], hi = lo;
    for (std::size_t k = b; k < e; ++k)
      for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d) {
        lo[d] = std::min(lo[d], xs[static_cast<std::size_t>(order[k])][d]);
        hi[d] = std::max(hi[d], xs[static_cast<std::size_t>(order[k])][d]);
      }
    std::size_t axis = 0;
    for (std::size_t d = 1; d < static_cast<std::size_t>(D); ++d)
      if (hi[d] - lo[d] > hi[axis] - lo[axis]) axis = d;
    const std::size_t mid = b + (e - b) / 2;
    std::nth_element(order.begin() + static_cast<std::ptrdiff_t>(b),
                     order.begin() + static_cast<std::ptrdiff_t>(mid),
                     order.begin() + static_cast<std::ptrdiff_t>(e),
                     [&](std::int64_t u, std::int64_t v) {
                       const double a = xs[static_cast<std::size_t>(u)][axis],
                                    c = xs[static_cast<std::size_t>(v)][axis];
                       return a < c || (a == c && u < v);
                     });
    stack.push_back({mid, e});  // lower half popped first: the order is fixed by positions anyway
    stack.push_back({b, mid});
  }
  return detail::numbering(order);
}

/// T by the ordering picked at run time (D = 2 or 3; the curves use their 64-bit indices).
template <int D>
[[nodiscard]] std::vector<std::int64_t> locality_transform(
    LocalityOrder o, std::span<const std::array<double, D>> xs) {
  static_assert(D == 2 || D == 3, "irregular::schedule::locality_transform: vertices in 2D or 3D");
  switch (o) {
    case LocalityOrder::hilbert:
      return curve_order<curve::Hilbert<D>>(xs);
    case LocalityOrder::morton:
      return curve_order<curve::Morton<D>>(xs);
    case LocalityOrder::peano:
      return curve_order<curve::Peano<D>>(xs);
    case LocalityOrder::rcb:
      return rcb_order<D>(xs);
  }
  throw invalid_argument("irregular::schedule::locality_transform: invalid LocalityOrder value");
}

}  // namespace irregular::schedule
