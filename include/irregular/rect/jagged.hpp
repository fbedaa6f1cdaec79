// Jagged partitions of a 2D load matrix (saule-bas-catalyurek §3.2): P x Q-way (JAG-PQ-HEUR,
// JAG-PQ-OPT-NICOL, JAG-PQ-OPT-DP) and m-way (JAG-M-HEUR, JAG-M-PROBE, JAG-M-HEUR-PROBE,
// JAG-M-ALLOC, JAG-M-OPT), each with main dimension 0 (-HOR), 1 (-VER) or the better (-BEST).
#pragma once

#include <irregular/core/detail/search.hpp>
#include <irregular/core/error.hpp>
#include <irregular/rect/detail/chain.hpp>
#include <irregular/rect/detail/common.hpp>
#include <irregular/rect/detail/jagged_optimal.hpp>
#include <irregular/rect/load_matrix.hpp>
#include <irregular/rect/metrics.hpp>
#include <irregular/rect/partition.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace irregular::rect {

/// Which dimension is the main one: -HOR (dimension 0), -VER (dimension 1), -BEST (both tried,
/// the smaller Lmax kept; ties go to -HOR).
enum class Orientation { hor, ver, best };

/// P = p1 * p2 with p1 the largest divisor of P not above sqrt(P) (for square P: sqrt(P)^2).
inline std::pair<std::size_t, std::size_t> grid_shape(std::size_t P) {
  std::size_t p1 = static_cast<std::size_t>(std::sqrt(static_cast<double>(P)));
  while (p1 * p1 > P) --p1;
  while ((p1 + 1) * (p1 + 1) <= P) ++p1;
  while (p1 > 1 && P % p1 != 0) --p1;
  if (p1 == 0) p1 = 1;
  return {p1, P / p1};
}

/// ceil(sqrt(P)): JAG-M-HEUR's number of stripes.
inline std::size_t default_stripes(std::size_t P) {
  std::size_t m = static_cast<std::size_t>(std::sqrt(static_cast<double>(P)));
  while (m * m < P) ++m;
  while (m > 1 && (m - 1) * (m - 1) >= P) --m;
  return std::max<std::size_t>(m, 1);
}

}  // namespace irregular::rect

namespace irregular::detail {

/// Picks the better of the two orientations.
template <class T, class F>
rect::Partition<2> oriented(const rect::LoadGrid<T, 2>& g, rect::Orientation o, const F& run) {
  if (o == rect::Orientation::hor) return run(0);
  if (o == rect::Orientation::ver) return run(1);
  rect::Partition<2> h = run(0), v = run(1);
  return rect::max_load(g, v) < rect::max_load(g, h) ? std::move(v) : std::move(h);
}

template <class T>
rect::Partition<2> jag_pq_heur_oriented(const rect::LoadGrid<T, 2>& g, const rect::Rect<2>& box,
                                        std::size_t p1, std::size_t p2, int a) {
  using S = rect::load_sum_t<T>;
  const int b = 1 - a;
  std::vector<std::size_t> ends;
  chain_optimum<S>(main_view(g, a, box.lo[b], box.hi[b]), box.lo[a], box.hi[a], p1, &ends);
  return cut_stripes(g, box, a, with_start(box.lo[a], ends), std::vector<std::size_t>(p1, p2));
}

template <class T>
rect::Partition<2> jag_m_heur_oriented(const rect::LoadGrid<T, 2>& g, const rect::Rect<2>& box,
                                       std::size_t P, int a, std::size_t m) {
  using S = rect::load_sum_t<T>;
  if (m == 0) m = rect::default_stripes(P);
  m = std::min(m, P);
  const auto sb = main_stripes(g, box, a, m);
  std::vector<S> loads(sb.size() - 1);
  const auto mv = main_view(g, a, box.lo[1 - a], box.hi[1 - a]);
  for (std::size_t k = 0; k + 1 < sb.size(); ++k) loads[k] = mv(sb[k + 1]) - mv(sb[k]);
  return cut_stripes(g, box, a, sb, allocate_by_load(loads, P));
}

/// JAG-M-PROBE: optimal m-way jagged partition for given stripes (P >= number of stripes):
/// the smallest B whose greedy processor counts over all stripes sum to at most P.
template <class T>
rect::Partition<2> jag_m_probe_oriented(const rect::LoadGrid<T, 2>& g, const rect::Rect<2>& box,
                                        std::size_t P, int a, const std::vector<std::size_t>& sb) {
  using S = rect::load_sum_t<T>;
  const int b = 1 - a;
  const std::size_t m = sb.size() - 1;
  if (m > P)
    throw invalid_argument("irregular::rect::jag_m_probe: " + std::to_string(m) +
                           " stripes for only " + std::to_string(P) + " parts");
  const std::size_t lo = box.lo[b], hi = box.hi[b];
  std::vector<SlabView<S>> views;
  S total{}, ub{};
  for (std::size_t k = 0; k < m; ++k) {
    views.push_back(stripe_view(g, a, sb[k], sb[k + 1]));
    const S l = views.back()(hi) - views.back()(lo);
    total += l;
    ub = std::max(ub, l);
  }
  auto feasible = [&](S B) {
    std::size_t rem = P;
    for (std::size_t k = 0; k < m; ++k) {
      // every later stripe needs one part: keep them in reserve
      const std::size_t cap = rem - (m - 1 - k);
      const std::size_t c = partition::greedy_parts(views[k], lo, hi, B, cap);
      if (c > cap) return false;
      rem -= std::max<std::size_t>(c, 1);
    }
    return true;
  };
  S B = ub;
  if (total > S{})
    B = partition::min_feasible_bottleneck(partition::average_bound(total, P), ub, feasible);
  std::vector<std::vector<std::size_t>> cuts(m);
  std::vector<std::size_t> ends;
  std::size_t used = 0;
  for (std::size_t k = 0; k < m; ++k) {
    ends.clear();
    partition::greedy_parts(views[k], lo, hi, B, P, &ends);
    if (ends.empty()) ends.push_back(hi);
    cuts[k] = with_start(lo, ends);
    used += ends.size();
  }
  // spare processors: empty parts at the end of the last stripe
  for (; used < P; ++used) cuts[m - 1].push_back(hi);
  return make_jagged(box, a, sb, cuts);
}

}  // namespace irregular::detail

namespace irregular::rect {

/// JAG-PQ-HEUR with p1 stripes of p2 parts: optimal 1D cut of the main projection, then of each
/// stripe's projection.
template <class T>
Partition<2> jag_pq_heur(const LoadMatrix<T>& g, const Rect<2>& box, std::size_t p1, std::size_t p2,
                         Orientation o = Orientation::best) {
  irregular::detail::check_part_count(p1 * p2, "jag_pq_heur");
  irregular::detail::check_box<2>(box, g.extents(), "jag_pq_heur");
  return irregular::detail::oriented(
      g, o, [&](int a) { return irregular::detail::jag_pq_heur_oriented(g, box, p1, p2, a); });
}
/// JAG-PQ-HEUR with P = p1 * p2 from grid_shape(P).
template <class T>
Partition<2> jag_pq_heur(const LoadMatrix<T>& g, std::size_t P, Orientation o = Orientation::best) {
  irregular::detail::check_part_count(P, "jag_pq_heur");
  const auto [p1, p2] = grid_shape(P);
  return jag_pq_heur(g, g.box(), p1, p2, o);
}

/// JAG-PQ-OPT-NICOL: optimal P x Q-way jagged partition by Nicol's scheme on the main dimension.
template <class T>
Partition<2> jag_pq_opt_nicol(const LoadMatrix<T>& g, const Rect<2>& box, std::size_t p1,
                              std::size_t p2, Orientation o = Orientation::best) {
  irregular::detail::check_part_count(p1 * p2, "jag_pq_opt_nicol");
  irregular::detail::check_box<2>(box, g.extents(), "jag_pq_opt_nicol");
  const std::vector<std::size_t> q(p1, p2);
  return irregular::detail::oriented(
      g, o, [&](int a) { return irregular::detail::jag_m_alloc_oriented(g, box, q, a); });
}
/// JAG-PQ-OPT-NICOL of the whole matrix, P = p1 * p2 as grid_shape(P) gives.
template <class T>
Partition<2> jag_pq_opt_nicol(const LoadMatrix<T>& g, std::size_t P,
                              Orientation o = Orientation::best) {
  irregular::detail::check_part_count(P, "jag_pq_opt_nicol");
  const auto [p1, p2] = grid_shape(P);
  return jag_pq_opt_nicol(g, g.box(), p1, p2, o);
}

/// JAG-PQ-OPT-DP: optimal P x Q-way jagged partition by dynamic programming.
template <class T>
Partition<2> jag_pq_opt_dp(const LoadMatrix<T>& g, const Rect<2>& box, std::size_t p1,
                           std::size_t p2, Orientation o = Orientation::best) {
  irregular::detail::check_part_count(p1 * p2, "jag_pq_opt_dp");
  irregular::detail::check_box<2>(box, g.extents(), "jag_pq_opt_dp");
  return irregular::detail::oriented(
      g, o, [&](int a) { return irregular::detail::jag_pq_opt_dp_oriented(g, box, p1, p2, a); });
}
/// JAG-PQ-OPT-DP of the whole matrix, P = p1 * p2 as grid_shape(P) gives.
template <class T>
Partition<2> jag_pq_opt_dp(const LoadMatrix<T>& g, std::size_t P,
                           Orientation o = Orientation::best) {
  irregular::detail::check_part_count(P, "jag_pq_opt_dp");
  const auto [p1, p2] = grid_shape(P);
  return jag_pq_opt_dp(g, g.box(), p1, p2, o);
}

/// JAG-M-HEUR: `stripes` (default ceil(sqrt(P))) optimal stripes, processors allocated by load
/// with the paper's rounding rule, each stripe cut optimally.
template <class T>
Partition<2> jag_m_heur(const LoadMatrix<T>& g, const Rect<2>& box, std::size_t P,
                        Orientation o = Orientation::best, std::size_t stripes = 0) {
  irregular::detail::check_part_count(P, "jag_m_heur");
  irregular::detail::check_box<2>(box, g.extents(), "jag_m_heur");
  return irregular::detail::oriented(
      g, o, [&](int a) { return irregular::detail::jag_m_heur_oriented(g, box, P, a, stripes); });
}
/// JAG-M-HEUR of the whole matrix.
template <class T>
Partition<2> jag_m_heur(const LoadMatrix<T>& g, std::size_t P, Orientation o = Orientation::best,
                        std::size_t stripes = 0) {
  return jag_m_heur(g, g.box(), P, o, stripes);
}

/// JAG-M-PROBE: optimal m-way jagged partition for the given stripe boundaries
/// (lo = b[0] < b[1] < ... < b[m] = hi along main dimension `main_dim`); needs m <= P.
template <class T>
Partition<2> jag_m_probe(const LoadMatrix<T>& g, const Rect<2>& box, std::size_t P, int main_dim,
                         const std::vector<std::size_t>& stripe_bounds) {
  irregular::detail::check_part_count(P, "jag_m_probe");
  irregular::detail::check_box<2>(box, g.extents(), "jag_m_probe");
  if (main_dim < 0 || main_dim > 1 || stripe_bounds.size() < 2 ||
      stripe_bounds.front() != box.lo[main_dim] || stripe_bounds.back() != box.hi[main_dim] ||
      !std::is_sorted(stripe_bounds.begin(), stripe_bounds.end()))
    throw invalid_argument(
        "irregular::rect::jag_m_probe: stripe boundaries must rise from the "
        "box's low to its high end along the main dimension");
  return irregular::detail::jag_m_probe_oriented(g, box, P, main_dim, stripe_bounds);
}

/// JAG-M-HEUR-PROBE: the stripes of JAG-M-HEUR, then JAG-M-PROBE.
template <class T>
Partition<2> jag_m_heur_probe(const LoadMatrix<T>& g, const Rect<2>& box, std::size_t P,
                              Orientation o = Orientation::best, std::size_t stripes = 0) {
  irregular::detail::check_part_count(P, "jag_m_heur_probe");
  irregular::detail::check_box<2>(box, g.extents(), "jag_m_heur_probe");
  return irregular::detail::oriented(g, o, [&](int a) {
    const std::size_t m = std::min(P, stripes ? stripes : default_stripes(P));
    return irregular::detail::jag_m_probe_oriented(g, box, P, a,
                                                   irregular::detail::main_stripes(g, box, a, m));
  });
}
/// JAG-M-HEUR-PROBE of the whole matrix.
template <class T>
Partition<2> jag_m_heur_probe(const LoadMatrix<T>& g, std::size_t P,
                              Orientation o = Orientation::best, std::size_t stripes = 0) {
  return jag_m_heur_probe(g, g.box(), P, o, stripes);
}

/// JAG-M-ALLOC: optimal m-way jagged partition with q[k] processors in stripe k (m = q.size()).
template <class T>
Partition<2> jag_m_alloc(const LoadMatrix<T>& g, const Rect<2>& box,
                         const std::vector<std::size_t>& q, Orientation o = Orientation::best) {
  if (q.empty()) irregular::detail::check_part_count(0, "jag_m_alloc");
  for (auto v : q) irregular::detail::check_part_count(v, "jag_m_alloc");
  irregular::detail::check_box<2>(box, g.extents(), "jag_m_alloc");
  return irregular::detail::oriented(
      g, o, [&](int a) { return irregular::detail::jag_m_alloc_oriented(g, box, q, a); });
}

/// JAG-M-OPT: optimal m-way jagged partition (any number of stripes).
template <class T>
Partition<2> jag_m_opt(const LoadMatrix<T>& g, const Rect<2>& box, std::size_t P,
                       Orientation o = Orientation::best) {
  irregular::detail::check_part_count(P, "jag_m_opt");
  irregular::detail::check_box<2>(box, g.extents(), "jag_m_opt");
  return irregular::detail::oriented(g, o, [&](int a) {
    const std::size_t m = std::min(P, default_stripes(P));
    const auto seed = irregular::detail::jag_m_probe_oriented(
        g, box, P, a, irregular::detail::main_stripes(g, box, a, m));
    return irregular::detail::jag_m_opt_oriented(g, box, P, a, max_load(g, seed));
  });
}
/// JAG-M-OPT of the whole matrix.
template <class T>
Partition<2> jag_m_opt(const LoadMatrix<T>& g, std::size_t P, Orientation o = Orientation::best) {
  return jag_m_opt(g, g.box(), P, o);
}

/// JAG-M-OPT computed by the paper's dynamic program F(j, p) with its engineering (lazy
/// evaluation, binary search over the bi-monotonic function, bounds, branch and bound seeded
/// by JAG-M-HEUR-PROBE). Same optimum as jag_m_opt, far slower: for small instances and as a
/// cross-check.
template <class T>
Partition<2> jag_m_opt_dp(const LoadMatrix<T>& g, const Rect<2>& box, std::size_t P,
                          Orientation o = Orientation::best) {
  irregular::detail::check_part_count(P, "jag_m_opt_dp");
  irregular::detail::check_box<2>(box, g.extents(), "jag_m_opt_dp");
  return irregular::detail::oriented(g, o, [&](int a) {
    const std::size_t m = std::min(P, default_stripes(P));
    auto seed = irregular::detail::jag_m_probe_oriented(
        g, box, P, a, irregular::detail::main_stripes(g, box, a, m));
    const auto ub = max_load(g, seed);
    if (box.empty() || !(ub > load_sum_t<T>{})) return seed;
    irregular::detail::JagMOptDP<T> dp(g, box, P, a, ub);
    if (!(dp.solve() < ub)) return seed;  // the heuristic was already optimal
    return dp.build();
  });
}
/// JAG-M-OPT by the dynamic program, of the whole matrix.
template <class T>
Partition<2> jag_m_opt_dp(const LoadMatrix<T>& g, std::size_t P,
                          Orientation o = Orientation::best) {
  return jag_m_opt_dp(g, g.box(), P, o);
}

}  // namespace irregular::rect
