// Validation and quality of rectangular partitions: exact cover check, part loads, Lmax and the
// load imbalance Lmax / Lavg - 1 (saule-bas-catalyurek §2.1).
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/rect/load_matrix.hpp>
#include <irregular/rect/partition.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace irregular::detail {
template <int D>
std::string point_string(const std::array<std::size_t, D>& a) {
  std::string s = "(";
  for (int d = 0; d < D; ++d) s += (d ? ", " : "") + std::to_string(a[d]);
  return s + ")";
}
}  // namespace irregular::detail

namespace irregular::rect {

/// Throws irregular::invalid_argument unless `parts` cover every cell of `box` exactly once.
/// O(P 2^D log P): the signed corner counts of the parts must equal those of the box. (Why it is
/// exact: the mixed difference of sum_k 1[R_k] - 1[box] vanishes iff the corners cancel, and a
/// function of finite support with vanishing mixed difference is zero, so every cell is covered
/// exactly once.)
template <int D>
void validate(const std::vector<Rect<D>>& parts, const Rect<D>& box) {
  using Point = std::array<std::size_t, D>;
  std::vector<std::pair<Point, int>> corners;
  corners.reserve((parts.size() + 1) << D);
  auto add = [&corners](const Rect<D>& r, int sign) {
    for (unsigned m = 0; m < (1u << D); ++m) {
      Point p;
      int lows = 0;
      for (int d = 0; d < D; ++d) {
        const bool low = (m >> d) & 1u;
        lows += low;
        p[d] = low ? r.lo[d] : r.hi[d];
      }
      corners.emplace_back(p, (lows % 2 == D % 2) ? sign : -sign);
    }
  };
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const Rect<D>& r = parts[k];
    for (int d = 0; d < D; ++d)
      if (r.lo[d] > r.hi[d] || (!r.empty() && (r.lo[d] < box.lo[d] || r.hi[d] > box.hi[d])))
        throw invalid_argument("irregular::rect::validate: part " + std::to_string(k) + " " +
                               irregular::detail::point_string<D>(r.lo) + "-" +
                               irregular::detail::point_string<D>(r.hi) + " lies outside the box");
    if (!r.empty()) add(r, 1);
  }
  if (!box.empty()) add(box, -1);
  std::sort(corners.begin(), corners.end());
  for (std::size_t i = 0; i < corners.size();) {
    std::size_t j = i;
    int sum = 0;
    while (j < corners.size() && corners[j].first == corners[i].first) sum += corners[j++].second;
    if (sum != 0)
      throw invalid_argument(
          "irregular::rect::validate: parts do not cover the box exactly once (overlap or gap "
          "at the corner " +
          irregular::detail::point_string<D>(corners[i].first) + ")");
    i = j;
  }
}

/// Checks that the parts of `p` tile its box, as validate(parts, box).
template <int D>
void validate(const Partition<D>& p) {
  validate(p.parts, p.box);
}

/// Load of every part.
template <class T, int D>
[[nodiscard]] std::vector<load_sum_t<T>> part_loads(const LoadGrid<T, D>& g,
                                                    const Partition<D>& p) {
  std::vector<load_sum_t<T>> out;
  out.reserve(p.parts.size());
  for (const auto& r : p.parts) out.push_back(g.load(r));
  return out;
}

/// Lmax: the load of the most loaded part.
template <class T, int D>
[[nodiscard]] load_sum_t<T> max_load(const LoadGrid<T, D>& g, const Partition<D>& p) {
  load_sum_t<T> m{};
  for (const auto& r : p.parts) m = std::max(m, g.load(r));
  return m;
}

/// Load imbalance Lmax / Lavg - 1 with Lavg = load(box) / P; 0 for an unloaded box.
template <class T, int D>
[[nodiscard]] double imbalance(const LoadGrid<T, D>& g, const Partition<D>& p) {
  const double total = static_cast<double>(g.load(p.box));
  if (total <= 0 || p.parts.empty()) return 0.0;
  return static_cast<double>(max_load(g, p)) * static_cast<double>(p.parts.size()) / total - 1.0;
}

}  // namespace irregular::rect
