// Shared internals of the rectangular partitioners: prefix views of 2D stripes, input checks,
// the JAG-M-HEUR processor allocation rule (saule-bas-catalyurek §3.2.2, also used by HYBRID §5).
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/rect/load_matrix.hpp>
#include <irregular/rect/partition.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

namespace irregular::detail {

/// Prefix view of a slab of a 2D prefix array: value(x) = p[j*sf + x*sv] - p[i*sf + x*sv], the
/// load of [i, j) in the fixed dimension times [0, x) in the varying one (up to a constant).
template <class S>
struct SlabView {
  const S* p;
  std::size_t sf, sv, i, j;
  S operator()(std::size_t x) const noexcept { return p[j * sf + x * sv] - p[i * sf + x * sv]; }
};

/// Stripe [i, j) of main dimension a, seen as a chain along the other dimension of a 2D grid.
template <class T>
SlabView<rect::load_sum_t<T>> stripe_view(const rect::LoadGrid<T, 2>& g, int a, std::size_t i,
                                          std::size_t j) {
  // stripes along dimension 1 read the transposed copy, so the chain is contiguous
  if (a == 1) return {g.prefix_transposed().data(), g.extent(0) + 1, 1, i, j};
  return {g.prefix().data(), g.stride(0), g.stride(1), i, j};
}
/// The chain along main dimension a of the box's extent [lo, hi) in the other dimension.
template <class T>
SlabView<rect::load_sum_t<T>> main_view(const rect::LoadGrid<T, 2>& g, int a, std::size_t lo,
                                        std::size_t hi) {
  return {g.prefix().data(), g.stride(1 - a), g.stride(a), lo, hi};
}

inline void check_part_count(std::size_t p, const char* who) {
  if (p == 0) throw invalid_argument(std::string("irregular::rect::") + who + ": P = 0 parts");
}

template <int D>
void check_box(const rect::Rect<D>& box, const std::array<std::size_t, D>& n, const char* who) {
  for (int d = 0; d < D; ++d)
    if (box.lo[d] > box.hi[d] || box.hi[d] > n[d])
      throw invalid_argument(std::string("irregular::rect::") + who +
                             ": box outside the load array in dimension " + std::to_string(d));
}

/// JAG-M-HEUR's rule: distribute P - m processors proportionally to the loads, rounding up
/// (so at most P are given), at least one each; the rest go one by one to the part with the
/// largest load per processor. Requires 1 <= m <= P.
template <class S>
std::vector<std::size_t> allocate_by_load(const std::vector<S>& loads, std::size_t P) {
  const std::size_t m = loads.size();
  std::vector<std::size_t> q(m, 1);
  long double total = 0;
  for (const S& l : loads) total += static_cast<long double>(l);
  if (total > 0) {
    for (std::size_t i = 0; i < m; ++i) {
      const long double share =
          static_cast<long double>(P - m) * static_cast<long double>(loads[i]) / total;
      q[i] = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(share - 1e-12L)));
    }
  }
  std::size_t sum = 0;
  for (auto v : q) sum += v;
  auto per = [&](std::size_t i, std::size_t c) {
    return static_cast<long double>(loads[i]) / static_cast<long double>(c);
  };
  while (sum > P) {  // rounding guard: take back from the part that suffers least
    std::size_t best = m;
    for (std::size_t i = 0; i < m; ++i)
      if (q[i] > 1 && (best == m || per(i, q[i] - 1) < per(best, q[best] - 1))) best = i;
    --q[best];
    --sum;
  }
  while (sum < P) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < m; ++i)
      if (per(i, q[i]) > per(best, q[best])) best = i;
    ++q[best];
    ++sum;
  }
  return q;
}

/// Appends a 2D jagged layout under `node`: stripes [sb[k], sb[k+1]) of main dimension a, each
/// cut along the other dimension at the boundaries ends[k] (first = box low end, last = high).
inline void emit_jagged(rect::Partition<2>& out, std::uint32_t node, const rect::Rect<2>& box,
                        int a, const std::vector<std::size_t>& sb,
                        const std::vector<std::vector<std::size_t>>& cuts) {
  const int b = 1 - a;
  const std::uint32_t first = out.tree.split(node, a, sb);
  for (std::size_t k = 0; k + 1 < sb.size(); ++k) {
    const auto& c = cuts[k];
    if (c.size() == 2) {
      rect::Rect<2> r = box;
      r.lo[a] = sb[k];
      r.hi[a] = sb[k + 1];
      emit_leaf(out, first + static_cast<std::uint32_t>(k), r);
      continue;
    }
    const std::uint32_t f2 = out.tree.split(first + static_cast<std::uint32_t>(k), b, c);
    for (std::size_t t = 0; t + 1 < c.size(); ++t) {
      rect::Rect<2> r;
      r.lo[a] = sb[k];
      r.hi[a] = sb[k + 1];
      r.lo[b] = c[t];
      r.hi[b] = c[t + 1];
      emit_leaf(out, f2 + static_cast<std::uint32_t>(t), r);
    }
  }
}

/// A whole 2D jagged partition of `box`.
inline rect::Partition<2> make_jagged(const rect::Rect<2>& box, int a,
                                      const std::vector<std::size_t>& sb,
                                      const std::vector<std::vector<std::size_t>>& cuts) {
  rect::Partition<2> out;
  out.box = box;
  std::size_t parts = 0;
  for (const auto& c : cuts) parts += c.size() - 1;
  out.parts.reserve(parts);
  out.tree.reserve(1 + cuts.size() + parts, sb.size() + parts + cuts.size());
  emit_jagged(out, 0, box, a, sb, cuts);
  return out;
}

/// Boundaries lo, ends... for a chain cut by `ends` (as chain_optimum returns them).
inline std::vector<std::size_t> with_start(std::size_t lo, const std::vector<std::size_t>& ends) {
  std::vector<std::size_t> b;
  b.reserve(ends.size() + 1);
  b.push_back(lo);
  b.insert(b.end(), ends.begin(), ends.end());
  return b;
}

}  // namespace irregular::detail
