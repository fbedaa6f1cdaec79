// The optimal jagged algorithms of saule-bas-catalyurek §3.2 behind rect/jagged.hpp: optimal cuts
// of given stripes, JAG-M-ALLOC, JAG-PQ-OPT-DP and JAG-M-OPT (the paper's dynamic program and
// its decision form with parametric search).
#pragma once

#include <irregular/core/detail/search.hpp>
#include <irregular/core/error.hpp>
#include <irregular/rect/detail/chain.hpp>
#include <irregular/rect/detail/common.hpp>
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

namespace irregular::detail {

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
