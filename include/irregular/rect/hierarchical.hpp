// Hierarchical bipartitions of 2D and 3D load arrays (saule-bas-catalyurek §3.3): HIER-RB
// (recursive bisection), HIER-RELAXED (the DP's choice with an average-load estimate of the
// subproblems) in -LOAD/-DIST/-HOR/-VER, and HIER-OPT (exact, for small instances).
#pragma once

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
#include <string>
#include <vector>

namespace irregular::rect {

/// Which dimension a hierarchical node cuts: -LOAD tries every dimension and keeps the best
/// expected load, -DIST cuts the longest extent, -HOR / -VER alternate with depth starting with
/// dimension 0 / 1 (cycling through all dimensions in 3D).
enum class CutRule { load, dist, hor, ver };

}  // namespace irregular::rect

namespace irregular::detail {

/// The dimensions a node at `depth` may cut (only extents >= 2 can be cut properly).
template <int D>
int candidate_dims(const rect::Rect<D>& box, rect::CutRule rule, int depth, int out[D]) {
  int n = 0;
  if (rule == rect::CutRule::load) {
    for (int d = 0; d < D; ++d)
      if (box.extent(d) >= 2) out[n++] = d;
    return n;
  }
  if (rule == rect::CutRule::dist) {
    int best = -1;
    for (int d = 0; d < D; ++d)
      if (box.extent(d) >= 2 && (best < 0 || box.extent(d) > box.extent(best))) best = d;
    if (best >= 0) out[n++] = best;
    return n;
  }
  const int start = (rule == rect::CutRule::hor ? 0 : 1) + depth;
  for (int t = 0; t < D; ++t) {
    const int d = (start + t) % D;
    if (box.extent(d) >= 2) {
      out[n++] = d;
      break;
    }
  }
  return n;
}

/// A node with no proper cut (every extent < 2) and p > 1 parts: p - 1 empty parts and the box.
template <int D>
void emit_with_empties(rect::Partition<D>& out, std::uint32_t node, const rect::Rect<D>& box,
                       std::size_t p) {
  std::vector<std::size_t> b(p + 1, box.lo[0]);
  b[p] = box.hi[0];
  const std::uint32_t first = out.tree.split(node, 0, b);
  for (std::size_t k = 0; k < p; ++k) {
    rect::Rect<D> r = box;
    if (k + 1 < p) r.hi[0] = r.lo[0];
    emit_leaf(out, first + static_cast<std::uint32_t>(k), r);
  }
}

template <class T, int D>
struct HierBuilder {
  using S = rect::load_sum_t<T>;
  const rect::LoadGrid<T, D>& g;
  rect::CutRule rule;
  bool relaxed;
  rect::Partition<D>& out;

  struct Choice {
    double value = std::numeric_limits<double>::infinity();
    int dim = -1;
    std::size_t cut = 0, left = 0;
  };

  // Scans dimension d of `box` through pre(c) (load below c, up to a constant).
  template <class Pre>
  void scan(const Pre& pre, int d, const rect::Rect<D>& box, std::size_t p, double L,
            Choice& ch) const {
    const std::size_t lo = box.lo[d], hi = box.hi[d];
    const S base = pre(lo);
    const double pd = static_cast<double>(p);
    auto consider = [&](std::size_t c, std::size_t pl, double L1) {
      const double v =
          std::max(L1 / static_cast<double>(pl), (L - L1) / static_cast<double>(p - pl));
      if (v < ch.value) ch = Choice{v, d, c, pl};
    };
    if (relaxed) {
      // every cut, with the processor split that best fits its load
      for (std::size_t c = lo + 1; c < hi; ++c) {
        const double L1 = static_cast<double>(static_cast<S>(pre(c) - base));
        const double ideal = L > 0 ? L1 / L * pd : pd / 2;
        const auto f = static_cast<std::size_t>(ideal);
        consider(c, std::clamp<std::size_t>(f, 1, p - 1), L1);
        consider(c, std::clamp<std::size_t>(f + 1, 1, p - 1), L1);
      }
      return;
    }
    const std::size_t half = p / 2;
    for (std::size_t pl : {half, p - half}) {
      // first cut whose left load reaches the left side's share, and its left neighbour
      const double share = L * static_cast<double>(pl) / pd;
      std::size_t a = lo + 1, b = hi - 1;
      while (a < b) {
        const std::size_t m = a + (b - a) / 2;
        if (static_cast<double>(static_cast<S>(pre(m) - base)) < share)
          a = m + 1;
        else
          b = m;
      }
      consider(a, pl, static_cast<double>(static_cast<S>(pre(a) - base)));
      if (a > lo + 1) consider(a - 1, pl, static_cast<double>(static_cast<S>(pre(a - 1) - base)));
      if (p % 2 == 0) break;
    }
  }

  void run(std::uint32_t node, const rect::Rect<D>& box, std::size_t p, int depth) {
    if (p == 1) {
      emit_leaf(out, node, box);
      return;
    }
    int dims[D];
    const int nd = candidate_dims<D>(box, rule, depth, dims);
    if (nd == 0) {
      emit_with_empties(out, node, box, p);
      return;
    }
    const double L = static_cast<double>(g.load(box));
    Choice ch;
    for (int t = 0; t < nd; ++t) {
      const int d = dims[t];
      if constexpr (D == 2) {
        scan(main_view(g, d, box.lo[1 - d], box.hi[1 - d]), d, box, p, L, ch);
      } else {
        scan(
            [&](std::size_t c) {
              rect::Rect<D> r = box;
              r.lo[d] = 0;
              r.hi[d] = c;
              return g.load(r);
            },
            d, box, p, L, ch);
      }
    }
    const int bd = ch.dim;
    const std::size_t bc = ch.cut;
    const std::size_t b[3] = {box.lo[bd], bc, box.hi[bd]};
    const std::uint32_t first = out.tree.split(node, bd, b);
    rect::Rect<D> left = box, right = box;
    left.hi[bd] = bc;
    right.lo[bd] = bc;
    run(first, left, ch.left, depth + 1);
    run(first + 1, right, p - ch.left, depth + 1);
  }
};

template <class T, int D>
rect::Partition<D> hier_heuristic(const rect::LoadGrid<T, D>& g, const rect::Rect<D>& box,
                                  std::size_t P, rect::CutRule rule, bool relaxed) {
  rect::Partition<D> out;
  out.box = box;
  out.parts.reserve(P);
  out.tree.reserve(2 * P, 3 * P);
  HierBuilder<T, D>{g, rule, relaxed, out}.run(0, box, P, 0);
  return out;
}

/// HIER-OPT in decision form: need(box) = fewest parts of a hierarchical bipartition of `box`
/// with every part's load <= B (1 if load(box) <= B, else the best cut), memoised over all
/// sub-boxes; the smallest B with need(whole box) <= P is found by parametric search.
template <class T, int D>
class HierOpt {
 public:
  using S = rect::load_sum_t<T>;
  /// Memo size limit (4 bytes each): 64 x 64 has 4.3 million sub-boxes, 128 x 128 68 million.
  static constexpr std::size_t max_subboxes = std::size_t{1} << 27;
  HierOpt(const rect::LoadGrid<T, D>& g, const rect::Rect<D>& box, std::size_t P)
      : g_(g), box_(box), P_(P) {
    std::size_t count = 1;
    for (int d = 0; d < D; ++d) {
      const std::size_t n = box.extent(d);
      radix_[d] = count;
      count *= n * (n + 1) / 2;
      if (count > max_subboxes)
        throw invalid_argument("irregular::rect::hier_opt: the box has more than " +
                               std::to_string(max_subboxes) +
                               " sub-boxes; HIER-OPT is for small arrays (use hier_relaxed)");
    }
    memo_.assign(count, 0);
  }

  bool feasible(S B) {
    B_ = B;
    std::fill(memo_.begin(), memo_.end(), 0);
    return need(box_) <= P_;
  }

  /// Builds the partition at a feasible B (call feasible(B) first).
  rect::Partition<D> build() {
    rect::Partition<D> out;
    out.box = box_;
    const std::size_t used = need(box_);
    emit(out, 0, box_, P_ - used + 1);
    return out;
  }

 private:
  std::size_t id(const rect::Rect<D>& r) const {
    std::size_t v = 0;
    for (int d = 0; d < D; ++d) {
      const std::size_t l = r.lo[d] - box_.lo[d], h = r.hi[d] - box_.lo[d];  // 0 <= l < h <= n
      v += (h * (h - 1) / 2 + l) * radix_[d];
    }
    return v;
  }

  std::size_t need(const rect::Rect<D>& r) {
    if (r.empty()) return 0;
    std::uint32_t& m = memo_[id(r)];
    if (m) return m;
    const S l = g_.load(r);
    std::size_t best = P_ + 1;
    if (!(l > B_)) {
      best = 1;
    } else {
      // at least ceil(l / B) parts: stop when reached
      const long double lbp = static_cast<long double>(l) / static_cast<long double>(B_);
      const std::size_t floor_parts =
          B_ > S{}
              ? std::max<std::size_t>(2, static_cast<std::size_t>(std::ceil(lbp * (1 - 1e-12L))))
              : P_ + 1;
      for (int d = 0; d < D && best > floor_parts; ++d)
        for (std::size_t c = r.lo[d] + 1; c < r.hi[d] && best > floor_parts; ++c) {
          rect::Rect<D> a = r, b = r;
          a.hi[d] = c;
          b.lo[d] = c;
          const std::size_t na = need(a);
          if (na >= best) continue;
          const std::size_t nb = need(b);
          best = std::min(best, na + nb);
        }
      best = std::min(best, P_ + 1);
    }
    m = static_cast<std::uint32_t>(best);
    return best;
  }

  // `extra` > 1: this subtree must also absorb extra - 1 empty parts (spare processors).
  void emit(rect::Partition<D>& out, std::uint32_t node, const rect::Rect<D>& r,
            std::size_t extra) {
    const std::size_t n = need(r);
    if (n == 1) {
      if (extra > 1)
        emit_with_empties(out, node, r, extra);
      else
        emit_leaf(out, node, r);
      return;
    }
    for (int d = 0; d < D; ++d)
      for (std::size_t c = r.lo[d] + 1; c < r.hi[d]; ++c) {
        rect::Rect<D> a = r, b = r;
        a.hi[d] = c;
        b.lo[d] = c;
        if (need(a) + need(b) != n) continue;
        const std::size_t bnd[3] = {r.lo[d], c, r.hi[d]};
        const std::uint32_t first = out.tree.split(node, d, bnd);
        emit(out, first, a, extra);
        emit(out, first + 1, b, 1);
        return;
      }
    IRREGULAR_ASSERT(false);
  }

  const rect::LoadGrid<T, D>& g_;
  rect::Rect<D> box_;
  std::size_t P_;
  S B_{};
  std::size_t radix_[D]{};
  std::vector<std::uint32_t> memo_;
};

}  // namespace irregular::detail

namespace irregular::rect {

/// HIER-RB: recursive bisection, half the processors (floor / ceil, whichever side fits best
/// for odd counts) on each side of the cut that balances load per processor.
template <class T, int D>
Partition<D> hier_rb(const LoadGrid<T, D>& g, const Rect<D>& box, std::size_t P,
                     CutRule rule = CutRule::load) {
  irregular::detail::check_part_count(P, "hier_rb");
  irregular::detail::check_box<D>(box, g.extents(), "hier_rb");
  return irregular::detail::hier_heuristic(g, box, P, rule, false);
}
/// HIER-RB of the whole array.
template <class T, int D>
Partition<D> hier_rb(const LoadGrid<T, D>& g, std::size_t P, CutRule rule = CutRule::load) {
  return hier_rb(g, g.box(), P, rule);
}

/// HIER-RELAXED: at each node, the cut and processor split minimising
/// max(L1 / p1, L2 / p2) over all positions (the DP with its subproblems estimated by the
/// average load), then recursion.
template <class T, int D>
Partition<D> hier_relaxed(const LoadGrid<T, D>& g, const Rect<D>& box, std::size_t P,
                          CutRule rule = CutRule::load) {
  irregular::detail::check_part_count(P, "hier_relaxed");
  irregular::detail::check_box<D>(box, g.extents(), "hier_relaxed");
  return irregular::detail::hier_heuristic(g, box, P, rule, true);
}
/// HIER-RELAXED of the whole array.
template <class T, int D>
Partition<D> hier_relaxed(const LoadGrid<T, D>& g, std::size_t P, CutRule rule = CutRule::load) {
  return hier_relaxed(g, g.box(), P, rule);
}

/// HIER-OPT: an optimal hierarchical bipartition. Memory and time grow with the number of
/// sub-boxes (n1 (n1 + 1) / 2 * n2 (n2 + 1) / 2 in 2D): meant for small arrays (32 x 32).
template <class T, int D>
Partition<D> hier_opt(const LoadGrid<T, D>& g, const Rect<D>& box, std::size_t P) {
  using S = load_sum_t<T>;
  irregular::detail::check_part_count(P, "hier_opt");
  irregular::detail::check_box<D>(box, g.extents(), "hier_opt");
  if (box.empty()) return irregular::detail::hier_heuristic(g, box, P, CutRule::load, false);
  const auto seed = hier_relaxed(g, box, P);
  const S ub = max_load(g, seed), total = g.load(box);
  irregular::detail::HierOpt<T, D> opt(g, box, P);
  S B = ub;
  if (total > S{})
    B = partition::min_feasible_bottleneck(partition::average_bound(total, P), ub,
                                           [&](S x) { return opt.feasible(x); });
  if (!opt.feasible(B)) {
    if (!opt.feasible(ub)) return seed;  // only floating-point rounding gets here
  }
  return opt.build();
}
/// HIER-OPT of the whole array.
template <class T, int D>
Partition<D> hier_opt(const LoadGrid<T, D>& g, std::size_t P) {
  return hier_opt(g, g.box(), P);
}

}  // namespace irregular::rect
