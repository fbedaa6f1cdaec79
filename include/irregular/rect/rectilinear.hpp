// Rectilinear (general block) partitions of a 2D load matrix (saule-bas-catalyurek §3.1):
// RECT-UNIFORM (equal extents) and RECT-NICOL (iterative refinement, Nicol 1994).
#pragma once

#include <irregular/core/detail/search.hpp>
#include <irregular/partition/probe.hpp>
#include <irregular/rect/detail/chain.hpp>
#include <irregular/rect/detail/common.hpp>
#include <irregular/rect/jagged.hpp>
#include <irregular/rect/load_matrix.hpp>
#include <irregular/rect/partition.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace irregular::detail {

/// The p1 x p2 grid partition with boundaries c0 (dimension 0) and c1 (dimension 1).
inline rect::Partition<2> make_grid(const rect::Rect<2>& box, const std::vector<std::size_t>& c0,
                                    const std::vector<std::size_t>& c1) {
  return make_jagged(box, 0, c0, std::vector<std::vector<std::size_t>>(c0.size() - 1, c1));
}

/// One RECT-NICOL step: the optimal cut of dimension v into p parts when an interval's load is
/// its largest load over the fixed stripes `fixed` of the other dimension. Prefix loads of all
/// stripes are laid out position-major so one interval test is a vectorisable max over stripes.
template <class T>
std::vector<std::size_t> refine_dimension(const rect::LoadGrid<T, 2>& g, const rect::Rect<2>& box,
                                          int v, const std::vector<std::size_t>& fixed,
                                          std::size_t p, std::vector<rect::load_sum_t<T>>& M) {
  using S = rect::load_sum_t<T>;
  const int f = 1 - v;
  const std::size_t K = fixed.size() - 1, lo = box.lo[v], hi = box.hi[v], n = hi - lo;
  M.resize((n + 1) * K);
  S lb{}, ub{};
  for (std::size_t k = 0; k < K; ++k) {
    const auto view = stripe_view(g, f, fixed[k], fixed[k + 1]);
    const S base = view(lo);
    for (std::size_t x = 0; x <= n; ++x) M[x * K + k] = view(lo + x) - base;
    ub = std::max(ub, M[n * K + k]);
  }
  // an interval fits when it does in every stripe: a vectorisable max over the stripes
  auto fits = [&](std::size_t s, std::size_t e, S B) {
    const S* a = M.data() + s * K;
    const S* b = M.data() + e * K;
    bool ok = true;
    for (std::size_t k = 0; k < K; ++k) ok &= (b[k] - a[k] <= B);
    return ok;
  };
  auto count = [&](S B, std::vector<std::size_t>* ends) {
    return partition::greedy_parts_by(
        0, n, p, [&](std::size_t s, std::size_t e) { return fits(s, e, B); }, ends);
  };
  std::vector<std::size_t> rel;
  if (ub > S{}) {
    lb = partition::average_bound(ub, p);
    const S B =
        partition::min_feasible_bottleneck(lb, ub, [&](S x) { return count(x, nullptr) <= p; });
    rel.reserve(p);
    count(B, &rel);
  }
  std::vector<std::size_t> b{lo};
  for (auto e : rel) b.push_back(lo + e);
  if (rel.empty()) b.push_back(hi);
  while (b.size() < p + 1) b.push_back(hi);
  return b;
}

}  // namespace irregular::detail

namespace irregular::rect {

/// RECT-UNIFORM: p1 x p2 grid of (nearly) equal extents; balances area, not load.
template <class T>
Partition<2> rect_uniform(const LoadMatrix<T>& g, const Rect<2>& box, std::size_t p1,
                          std::size_t p2) {
  irregular::detail::check_part_count(p1 * p2, "rect_uniform");
  irregular::detail::check_box<2>(box, g.extents(), "rect_uniform");
  auto cuts = [](std::size_t lo, std::size_t hi, std::size_t p) {
    std::vector<std::size_t> c(p + 1);
    for (std::size_t k = 0; k <= p; ++k) c[k] = lo + (hi - lo) * k / p;
    return c;
  };
  return irregular::detail::make_grid(box, cuts(box.lo[0], box.hi[0], p1),
                                      cuts(box.lo[1], box.hi[1], p2));
}
/// RECT-UNIFORM of the whole matrix, P = p1 * p2 as grid_shape(P) gives.
template <class T>
Partition<2> rect_uniform(const LoadMatrix<T>& g, std::size_t P) {
  irregular::detail::check_part_count(P, "rect_uniform");
  const auto [p1, p2] = grid_shape(P);
  return rect_uniform(g, g.box(), p1, p2);
}

/// RECT-NICOL: starts from the optimal cut of dimension 0's projection, then alternately
/// re-cuts each dimension optimally against the other's stripes until two successive
/// iterations return the same partition (at most `max_iterations`).
template <class T>
Partition<2> rect_nicol(const LoadMatrix<T>& g, const Rect<2>& box, std::size_t p1, std::size_t p2,
                        int max_iterations = 100) {
  using S = load_sum_t<T>;
  irregular::detail::check_part_count(p1 * p2, "rect_nicol");
  irregular::detail::check_box<2>(box, g.extents(), "rect_nicol");
  std::vector<std::size_t> ends;
  irregular::detail::chain_optimum<S>(irregular::detail::main_view(g, 0, box.lo[1], box.hi[1]),
                                      box.lo[0], box.hi[0], p1, &ends);
  std::vector<std::size_t> c0 = irregular::detail::with_start(box.lo[0], ends), c1;
  std::vector<S> scratch;
  for (int it = 0; it < max_iterations; ++it) {
    auto n1 = irregular::detail::refine_dimension(g, box, 1, c0, p2, scratch);
    auto n0 = irregular::detail::refine_dimension(g, box, 0, n1, p1, scratch);
    const bool same = n0 == c0 && n1 == c1;
    c0 = std::move(n0);
    c1 = std::move(n1);
    if (same) break;
  }
  return irregular::detail::make_grid(box, c0, c1);
}
/// RECT-NICOL of the whole matrix, P = p1 * p2 as grid_shape(P) gives.
template <class T>
Partition<2> rect_nicol(const LoadMatrix<T>& g, std::size_t P) {
  irregular::detail::check_part_count(P, "rect_nicol");
  const auto [p1, p2] = grid_shape(P);
  return rect_nicol(g, g.box(), p1, p2);
}

}  // namespace irregular::rect
