// Jagged partitions of a 2D load matrix (saule-bas-catalyurek §3.2): P x Q-way (JAG-PQ-HEUR,
// JAG-PQ-OPT-NICOL, JAG-PQ-OPT-DP) and m-way (JAG-M-HEUR, JAG-M-PROBE, JAG-M-HEUR-PROBE,
// JAG-M-ALLOC, JAG-M-OPT), each with main dimension 0 (-HOR), 1 (-VER) or the better (-BEST).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <irregular/core/detail/search.hpp>
#include <irregular/core/error.hpp>
#include <irregular/rect/detail/chain.hpp>
#include <irregular/rect/detail/common.hpp>
#include <irregular/rect/load_matrix.hpp>
#include <irregular/rect/metrics.hpp>
#include <irregular/rect/partition.hpp>
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

/// Optimal cut of each stripe [sb[k], sb[k+1]) into q[k] parts along the auxiliary dimension.
template <class T>
rect::Partition<2> cut_stripes(const rect::LoadGrid<T, 2>& g, const rect::Rect<2>& box, int a,
                               const std::vector<std::size_t>& sb,
                               const std::vector<std::size_t>& q) {
  using S = rect::load_sum_t<T>;
  const int b = 1 - a;
  std::vector<std::vector<std::size_t>> cuts(q.size());
  std::vector<std::size_t> ends;
  for (std::size_t k = 0; k < q.size(); ++k) {
    ends.clear();
    chain_optimum<S>(stripe_view(g, a, sb[k], sb[k + 1]), box.lo[b], box.hi[b], q[k], &ends);
    cuts[k] = with_start(box.lo[b], ends);
  }
  return make_jagged(box, a, sb, cuts);
}

/// Optimal 1D stripes of the main dimension: m boundaries pairs, empty stripes dropped.
template <class T>
std::vector<std::size_t> main_stripes(const rect::LoadGrid<T, 2>& g, const rect::Rect<2>& box,
                                      int a, std::size_t m) {
  using S = rect::load_sum_t<T>;
  const int b = 1 - a;
  std::vector<std::size_t> ends;
  chain_optimum<S>(main_view(g, a, box.lo[b], box.hi[b]), box.lo[a], box.hi[a], m, &ends);
  std::vector<std::size_t> sb{box.lo[a]};
  for (auto e : ends)
    if (e > sb.back()) sb.push_back(e);
  if (sb.size() < 2) sb.push_back(box.hi[a]);
  return sb;
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

/// The optimal cost f(k, i, j) of stripe [i, j) on q[k] processors, and the greedy test of a
/// bottleneck over the main dimension, for JAG-M-ALLOC / JAG-PQ-OPT.
template <class T>
struct StripeOracle {
  using S = rect::load_sum_t<T>;
  const rect::LoadGrid<T, 2>& g;
  int a;
  std::size_t lo, hi;  // auxiliary extent
  S value(std::size_t i, std::size_t j, std::size_t q) const {
    return chain_optimum<S>(stripe_view(g, a, i, j), lo, hi, q);
  }
  bool fits(std::size_t i, std::size_t j, std::size_t q, S B) const {
    return partition::greedy_parts(stripe_view(g, a, i, j), lo, hi, B, q) <= q;
  }
};

/// Greedy construction over the main dimension [s, hi_a) with stripes k.. of q[k] processors at
/// bottleneck B; returns the stripe ends (fewer when B is infeasible and [s, hi_a) not covered).
template <class T>
std::vector<std::size_t> greedy_stripes(const StripeOracle<T>& o, const std::vector<std::size_t>& q,
                                        std::size_t k0, std::size_t s, std::size_t hi_a,
                                        rect::load_sum_t<T> B) {
  std::vector<std::size_t> ends;
  for (std::size_t k = k0; k < q.size() && s < hi_a; ++k) {
    const std::size_t e =
        gallop_last_true(s, hi_a, [&](std::size_t j) { return o.fits(s, j, q[k], B); });
    ends.push_back(e);
    s = e;
  }
  return ends;
}

/// Builds the m-way jagged partition with q[k] processors in stripe k at an achievable B.
template <class T>
rect::Partition<2> build_alloc(const rect::LoadGrid<T, 2>& g, const rect::Rect<2>& box, int a,
                               const std::vector<std::size_t>& q, rect::load_sum_t<T> B) {
  using S = rect::load_sum_t<T>;
  const StripeOracle<T> o{g, a, box.lo[1 - a], box.hi[1 - a]};
  std::vector<std::size_t> ends;
  for (int attempt = 0;; ++attempt) {
    ends = greedy_stripes(o, q, 0, box.lo[a], box.hi[a], B);
    if (box.lo[a] == box.hi[a] || (!ends.empty() && ends.back() == box.hi[a])) break;
    // only floating-point rounding gets here: relax B by a hair
    IRREGULAR_ASSERT(std::is_floating_point_v<S> && attempt < 64);
    if constexpr (std::is_floating_point_v<S>) B = B * (1 + 1e-12) + 1e-300;
  }
  std::vector<std::size_t> sb{box.lo[a]};
  sb.insert(sb.end(), ends.begin(), ends.end());
  while (sb.size() < q.size() + 1) sb.push_back(box.hi[a]);
  std::vector<std::vector<std::size_t>> cuts(q.size());
  std::vector<std::size_t> e2;
  for (std::size_t k = 0; k < q.size(); ++k) {
    e2.clear();
    chain_optimum<S>(stripe_view(g, a, sb[k], sb[k + 1]), box.lo[1 - a], box.hi[1 - a], q[k], &e2);
    cuts[k] = with_start(box.lo[1 - a], e2);
  }
  return make_jagged(box, a, sb, cuts);
}

/// JAG-M-ALLOC: optimal stripes for given processor counts q[k], by Nicol's scheme over the
/// main dimension with the optimal stripe cost as interval load.
template <class T>
rect::Partition<2> jag_m_alloc_oriented(const rect::LoadGrid<T, 2>& g, const rect::Rect<2>& box,
                                        const std::vector<std::size_t>& q, int a) {
  using S = rect::load_sum_t<T>;
  const StripeOracle<T> o{g, a, box.lo[1 - a], box.hi[1 - a]};
  const std::size_t lo = box.lo[a], hi = box.hi[a], m = q.size();
  std::size_t P = 0;
  for (auto v : q) P += v;
  // stripe k on rows [lo + i, lo + j): its optimal cost, and the cheaper greedy decision
  auto cost = [&](std::size_t k, std::size_t i, std::size_t j) {
    return o.value(lo + i, lo + j, q[k]);
  };
  auto fits = [&](std::size_t k, std::size_t i, std::size_t j, const S& B) {
    return o.fits(lo + i, lo + j, q[k], B);
  };
  const S total = g.load(box);
  const S lb = total > S{} ? partition::average_bound(total, P) : S{};
  const S B = partition::nicol_oracle<S>(hi - lo, m, cost, fits, lb, cost(0, 0, hi - lo));
  return build_alloc(g, box, a, q, B);
}

/// JAG-PQ-OPT-DP: dynamic program over the main dimension, F_b(j) = min_i max(F_{b-1}(i),
/// f(i, j)), the minimum found by binary search since F is non-decreasing and f non-increasing
/// in i; f is evaluated lazily and memoised.
template <class T>
rect::Partition<2> jag_pq_opt_dp_oriented(const rect::LoadGrid<T, 2>& g, const rect::Rect<2>& box,
                                          std::size_t p1, std::size_t p2, int a) {
  using S = rect::load_sum_t<T>;
  const StripeOracle<T> o{g, a, box.lo[1 - a], box.hi[1 - a]};
  const std::size_t lo = box.lo[a], n = box.hi[a] - lo;
  std::vector<S> memo((n + 1) * (n + 1));
  std::vector<char> known((n + 1) * (n + 1), 0);
  auto f = [&](std::size_t i, std::size_t j) {  // relative indices
    const std::size_t id = i * (n + 1) + j;
    if (!known[id]) {
      memo[id] = o.value(lo + i, lo + j, p2);
      known[id] = 1;
    }
    return memo[id];
  };
  std::vector<S> F(n + 1), G(n + 1);
  for (std::size_t j = 0; j <= n; ++j) F[j] = f(0, j);
  for (std::size_t b = 2; b <= p1; ++b) {
    for (std::size_t j = 0; j <= n; ++j) {
      // smallest i with F[i] >= f(i, j); i = j always qualifies (f(j, j) = 0)
      std::size_t x = 0, y = j;
      if (F[0] >= f(0, j)) {
        y = 0;
      } else {
        while (y - x > 1) {
          const std::size_t mid = x + (y - x) / 2;
          if (F[mid] >= f(mid, j))
            y = mid;
          else
            x = mid;
        }
      }
      S best = F[y];
      if (y > 0) best = std::min(best, f(y - 1, j));
      G[j] = best;
    }
    std::swap(F, G);
  }
  return build_alloc(g, box, a, std::vector<std::size_t>(p1, p2), F[n]);
}

/// JAG-M-OPT as the paper's dynamic program (§3.2.2): F(j, p) = min over the last stripe
/// [i, j) and its q processors of max(F(i, p - q), G(i, j, q)), G the optimal 1D cost of the
/// stripe. Engineering: F and G evaluated lazily and memoised; for each q the best i is found by
/// binary search (F non-decreasing, G non-increasing in i); lower bounds load / processors stop
/// a state early; branch and bound with the heuristic's Lmax `ub`: values >= ub are not
/// computed exactly. Meant for small instances; jag_m_opt_oriented is the fast exact method.
template <class T>
class JagMOptDP {
 public:
  using S = rect::load_sum_t<T>;
  JagMOptDP(const rect::LoadGrid<T, 2>& g, const rect::Rect<2>& box, std::size_t P, int a, S ub)
      : g_(g),
        box_(box),
        a_(a),
        n_(box.hi[a] - box.lo[a]),
        P_(P),
        ub_(ub),
        mv_(main_view(g, a, box.lo[1 - a], box.hi[1 - a])),
        F_((n_ + 1) * (P + 1)),
        known_((n_ + 1) * (P + 1), 0),
        arg_((n_ + 1) * (P + 1)) {}

  /// The optimum, or ub when nothing beats ub.
  S solve() { return F(n_, P_); }

  /// The partition reaching solve() (call solve() first and only when it beat ub).
  rect::Partition<2> build() {
    std::vector<std::size_t> sb, q;
    for (std::size_t j = n_, p = P_; j > 0;) {
      const auto [i, qq] = arg_[j * (P_ + 1) + p];
      sb.push_back(box_.lo[a_] + j);
      q.push_back(qq);
      j = i;
      p -= qq;
    }
    sb.push_back(box_.lo[a_]);
    std::reverse(sb.begin(), sb.end());
    std::reverse(q.begin(), q.end());
    std::size_t used = 0;
    for (auto v : q) used += v;
    q.back() += P_ - used;  // spare processors: empty parts
    return cut_stripes(g_, box_, a_, sb, q);
  }

 private:
  S load(std::size_t i, std::size_t j) const { return mv_(box_.lo[a_] + j) - mv_(box_.lo[a_] + i); }

  S G(std::size_t i, std::size_t j, std::size_t q) {
    if (i == j) return S{};
    if (!(partition::average_bound(load(i, j), q) < ub_)) return ub_;  // cannot matter: bounded
    const std::uint64_t key = (static_cast<std::uint64_t>(i) * (n_ + 1) + j) * (P_ + 1) + q;
    if (auto it = G_.find(key); it != G_.end()) return it->second;
    const S v =
        std::min(ub_, chain_optimum<S>(stripe_view(g_, a_, box_.lo[a_] + i, box_.lo[a_] + j),
                                       box_.lo[1 - a_], box_.hi[1 - a_], q));
    G_.emplace(key, v);
    return v;
  }

  S F(std::size_t j, std::size_t p) {
    if (j == 0) return S{};
    if (p == 0) return ub_;  // infeasible; ub stands for "no better than ub"
    const std::size_t id = j * (P_ + 1) + p;
    if (known_[id]) return F_[id];
    const S lb = partition::average_bound(load(0, j), p);
    S best = ub_;
    std::pair<std::size_t, std::size_t> arg{0, p};
    if (lb < ub_) {
      for (std::size_t q = 1; q <= p && best > lb; ++q) {
        // smallest i in [0, j - 1] with F(i, p - q) >= G(i, j, q)
        auto pred = [&](std::size_t i) { return F(i, p - q) >= G(i, j, q); };
        const std::size_t istar = pred(0)        ? 0
                                  : !pred(j - 1) ? j
                                                 : bisect_first_true(0, j - 1, pred);
        if (istar < j) {
          const S v = std::max(F(istar, p - q), G(istar, j, q));
          if (v < best) best = v, arg = {istar, q};
        }
        if (istar > 0) {
          const S v = std::max(F(istar - 1, p - q), G(istar - 1, j, q));
          if (v < best) best = v, arg = {istar - 1, q};
        }
      }
    }
    known_[id] = 1;
    F_[id] = best;
    arg_[id] = arg;
    return best;
  }

  const rect::LoadGrid<T, 2>& g_;
  rect::Rect<2> box_;
  int a_;
  std::size_t n_, P_;
  S ub_;
  SlabView<S> mv_;
  std::vector<S> F_;
  std::vector<char> known_;
  std::vector<std::pair<std::size_t, std::size_t>> arg_;
  std::unordered_map<std::uint64_t, S> G_;
};

/// JAG-M-OPT: optimal m-way jagged partition. Dynamic program over the main dimension in its
/// decision form: need(j) = min_i need(i) + c(i, j, B) is the fewest processors for rows [lo, j)
/// at bottleneck B (c: greedy count of the stripe), evaluated lazily with lower-bound pruning;
/// the smallest feasible B is found by parametric search between Lavg and the Lmax of the
/// JAG-M-HEUR-PROBE solution (branch and bound seed).
template <class T>
rect::Partition<2> jag_m_opt_oriented(const rect::LoadGrid<T, 2>& g, const rect::Rect<2>& box,
                                      std::size_t P, int a, rect::load_sum_t<T> ub) {
  using S = rect::load_sum_t<T>;
  const int b = 1 - a;
  const std::size_t lo = box.lo[a], n = box.hi[a] - lo, blo = box.lo[b], bhi = box.hi[b];
  const S total = g.load(box);
  const auto mv = main_view(g, a, blo, bhi);
  std::vector<std::size_t> need(n + 1), from(n + 1);
  constexpr std::size_t inf = std::numeric_limits<std::size_t>::max() / 4;
  auto decide = [&](S B) {
    need[0] = 0;
    for (std::size_t j = 1; j <= n; ++j) {
      std::size_t best = inf, arg = 0;
      for (std::size_t i = j; i-- > 0;) {
        if (need[i] >= best) continue;
        // lower bound ceil(load / B) on the stripe's processors
        const S l = mv(lo + j) - mv(lo + i);
        if (B > S{}) {
          const long double lbp = static_cast<long double>(l) / static_cast<long double>(B);
          if (static_cast<long double>(need[i]) + lbp >
                  static_cast<long double>(best - 1) + 1e-9L &&
              best != inf)
            continue;
        }
        const std::size_t cap = std::min(P, best == inf ? P : best - 1 - need[i]);
        const std::size_t c = std::max<std::size_t>(
            1, partition::greedy_parts(stripe_view(g, a, lo + i, lo + j), blo, bhi, B, cap));
        if (c > cap) {
          // a stripe whose single column exceeds B stays infeasible for every smaller i
          if (c == std::numeric_limits<std::size_t>::max()) break;
          continue;
        }
        if (need[i] + c < best) {
          best = need[i] + c;
          arg = i;
        }
      }
      need[j] = best;
      from[j] = arg;
      if (best > P) return false;
    }
    return need[n] <= P;
  };
  S B = ub;
  if (total > S{})
    B = partition::min_feasible_bottleneck(partition::average_bound(total, P), ub, decide);
  if constexpr (std::is_floating_point_v<S>) {
    if (!decide(B)) B = ub, decide(B);
  } else {
    decide(B);
  }
  if (n == 0 || need[n] > P) {  // empty box, or rounding: fall back to one stripe
    return cut_stripes(g, box, a, {box.lo[a], box.hi[a]}, {P});
  }
  std::vector<std::size_t> sb;
  for (std::size_t j = n; j > 0; j = from[j]) sb.push_back(lo + j);
  sb.push_back(lo);
  std::reverse(sb.begin(), sb.end());
  std::vector<std::vector<std::size_t>> cuts(sb.size() - 1);
  std::vector<std::size_t> ends;
  std::size_t used = 0;
  for (std::size_t k = 0; k + 1 < sb.size(); ++k) {
    ends.clear();
    partition::greedy_parts(stripe_view(g, a, sb[k], sb[k + 1]), blo, bhi, B, P, &ends);
    if (ends.empty()) ends.push_back(bhi);
    cuts[k] = with_start(blo, ends);
    used += ends.size();
  }
  for (; used < P; ++used) cuts.back().push_back(bhi);
  return make_jagged(box, a, sb, cuts);
}

}  // namespace irregular::detail

namespace irregular::rect {

/// JAG-PQ-HEUR with p1 stripes of p2 parts: optimal 1D cut of the main projection, then of each
/// stripe's projection.
template <class T>
Partition<2> jag_pq_heur(const LoadMatrix<T>& g, const Rect<2>& box, std::size_t p1, std::size_t p2,
                         Orientation o = Orientation::best) {
  detail::check_part_count(p1 * p2, "jag_pq_heur");
  detail::check_box<2>(box, g.extents(), "jag_pq_heur");
  return detail::oriented(g, o,
                          [&](int a) { return detail::jag_pq_heur_oriented(g, box, p1, p2, a); });
}
/// JAG-PQ-HEUR with P = p1 * p2 from grid_shape(P).
template <class T>
Partition<2> jag_pq_heur(const LoadMatrix<T>& g, std::size_t P, Orientation o = Orientation::best) {
  detail::check_part_count(P, "jag_pq_heur");
  const auto [p1, p2] = grid_shape(P);
  return jag_pq_heur(g, g.box(), p1, p2, o);
}

/// JAG-PQ-OPT-NICOL: optimal P x Q-way jagged partition by Nicol's scheme on the main dimension.
template <class T>
Partition<2> jag_pq_opt_nicol(const LoadMatrix<T>& g, const Rect<2>& box, std::size_t p1,
                              std::size_t p2, Orientation o = Orientation::best) {
  detail::check_part_count(p1 * p2, "jag_pq_opt_nicol");
  detail::check_box<2>(box, g.extents(), "jag_pq_opt_nicol");
  const std::vector<std::size_t> q(p1, p2);
  return detail::oriented(g, o, [&](int a) { return detail::jag_m_alloc_oriented(g, box, q, a); });
}
template <class T>
Partition<2> jag_pq_opt_nicol(const LoadMatrix<T>& g, std::size_t P,
                              Orientation o = Orientation::best) {
  detail::check_part_count(P, "jag_pq_opt_nicol");
  const auto [p1, p2] = grid_shape(P);
  return jag_pq_opt_nicol(g, g.box(), p1, p2, o);
}

/// JAG-PQ-OPT-DP: optimal P x Q-way jagged partition by dynamic programming.
template <class T>
Partition<2> jag_pq_opt_dp(const LoadMatrix<T>& g, const Rect<2>& box, std::size_t p1,
                           std::size_t p2, Orientation o = Orientation::best) {
  detail::check_part_count(p1 * p2, "jag_pq_opt_dp");
  detail::check_box<2>(box, g.extents(), "jag_pq_opt_dp");
  return detail::oriented(g, o,
                          [&](int a) { return detail::jag_pq_opt_dp_oriented(g, box, p1, p2, a); });
}
template <class T>
Partition<2> jag_pq_opt_dp(const LoadMatrix<T>& g, std::size_t P,
                           Orientation o = Orientation::best) {
  detail::check_part_count(P, "jag_pq_opt_dp");
  const auto [p1, p2] = grid_shape(P);
  return jag_pq_opt_dp(g, g.box(), p1, p2, o);
}

/// JAG-M-HEUR: `stripes` (default ceil(sqrt(P))) optimal stripes, processors allocated by load
/// with the paper's rounding rule, each stripe cut optimally.
template <class T>
Partition<2> jag_m_heur(const LoadMatrix<T>& g, const Rect<2>& box, std::size_t P,
                        Orientation o = Orientation::best, std::size_t stripes = 0) {
  detail::check_part_count(P, "jag_m_heur");
  detail::check_box<2>(box, g.extents(), "jag_m_heur");
  return detail::oriented(
      g, o, [&](int a) { return detail::jag_m_heur_oriented(g, box, P, a, stripes); });
}
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
  detail::check_part_count(P, "jag_m_probe");
  detail::check_box<2>(box, g.extents(), "jag_m_probe");
  if (main_dim < 0 || main_dim > 1 || stripe_bounds.size() < 2 ||
      stripe_bounds.front() != box.lo[main_dim] || stripe_bounds.back() != box.hi[main_dim] ||
      !std::is_sorted(stripe_bounds.begin(), stripe_bounds.end()))
    throw invalid_argument(
        "irregular::rect::jag_m_probe: stripe boundaries must rise from the "
        "box's low to its high end along the main dimension");
  return detail::jag_m_probe_oriented(g, box, P, main_dim, stripe_bounds);
}

/// JAG-M-HEUR-PROBE: the stripes of JAG-M-HEUR, then JAG-M-PROBE.
template <class T>
Partition<2> jag_m_heur_probe(const LoadMatrix<T>& g, const Rect<2>& box, std::size_t P,
                              Orientation o = Orientation::best, std::size_t stripes = 0) {
  detail::check_part_count(P, "jag_m_heur_probe");
  detail::check_box<2>(box, g.extents(), "jag_m_heur_probe");
  return detail::oriented(g, o, [&](int a) {
    const std::size_t m = std::min(P, stripes ? stripes : default_stripes(P));
    return detail::jag_m_probe_oriented(g, box, P, a, detail::main_stripes(g, box, a, m));
  });
}
template <class T>
Partition<2> jag_m_heur_probe(const LoadMatrix<T>& g, std::size_t P,
                              Orientation o = Orientation::best, std::size_t stripes = 0) {
  return jag_m_heur_probe(g, g.box(), P, o, stripes);
}

/// JAG-M-ALLOC: optimal m-way jagged partition with q[k] processors in stripe k (m = q.size()).
template <class T>
Partition<2> jag_m_alloc(const LoadMatrix<T>& g, const Rect<2>& box,
                         const std::vector<std::size_t>& q, Orientation o = Orientation::best) {
  if (q.empty()) detail::check_part_count(0, "jag_m_alloc");
  for (auto v : q) detail::check_part_count(v, "jag_m_alloc");
  detail::check_box<2>(box, g.extents(), "jag_m_alloc");
  return detail::oriented(g, o, [&](int a) { return detail::jag_m_alloc_oriented(g, box, q, a); });
}

/// JAG-M-OPT: optimal m-way jagged partition (any number of stripes).
template <class T>
Partition<2> jag_m_opt(const LoadMatrix<T>& g, const Rect<2>& box, std::size_t P,
                       Orientation o = Orientation::best) {
  detail::check_part_count(P, "jag_m_opt");
  detail::check_box<2>(box, g.extents(), "jag_m_opt");
  return detail::oriented(g, o, [&](int a) {
    const std::size_t m = std::min(P, default_stripes(P));
    const auto seed =
        detail::jag_m_probe_oriented(g, box, P, a, detail::main_stripes(g, box, a, m));
    return detail::jag_m_opt_oriented(g, box, P, a, max_load(g, seed));
  });
}
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
  detail::check_part_count(P, "jag_m_opt_dp");
  detail::check_box<2>(box, g.extents(), "jag_m_opt_dp");
  return detail::oriented(g, o, [&](int a) {
    const std::size_t m = std::min(P, default_stripes(P));
    auto seed = detail::jag_m_probe_oriented(g, box, P, a, detail::main_stripes(g, box, a, m));
    const auto ub = max_load(g, seed);
    if (box.empty() || !(ub > load_sum_t<T>{})) return seed;
    detail::JagMOptDP<T> dp(g, box, P, a, ub);
    if (!(dp.solve() < ub)) return seed;  // the heuristic was already optimal
    return dp.build();
  });
}
template <class T>
Partition<2> jag_m_opt_dp(const LoadMatrix<T>& g, std::size_t P,
                          Orientation o = Orientation::best) {
  return jag_m_opt_dp(g, g.box(), P, o);
}

}  // namespace irregular::rect
