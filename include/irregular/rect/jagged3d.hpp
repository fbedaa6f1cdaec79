// m-way jagged partitions of 3D load arrays, the extension left as future work in
// saule-bas-catalyurek §6: slabs along a first dimension, stripes along a second, intervals
// along the third, processors allocated by load at each level (JAG-M-HEUR's rule).
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/rect/detail/chain.hpp>
#include <irregular/rect/detail/common.hpp>
#include <irregular/rect/load_matrix.hpp>
#include <irregular/rect/metrics.hpp>
#include <irregular/rect/partition.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>
#include <vector>

namespace irregular::detail {

/// Smallest m with m^r >= p.
inline std::size_t root_up(std::size_t p, int r) {
  std::size_t m = 1;
  auto pw = [r](std::size_t x) {
    std::size_t v = 1;
    for (int i = 0; i < r; ++i) v *= x;
    return v;
  };
  while (pw(m) < p) ++m;
  return m;
}

template <class T, int D>
struct JaggedND {
  using S = rect::load_sum_t<T>;
  const rect::LoadGrid<T, D>& g;
  std::array<int, D> order;
  bool probe_last;  // the last two levels by multi-chain probe (JAG-M-HEUR-PROBE)
  rect::Partition<D>& out;

  auto chain(const rect::Rect<D>& box, int a) const {
    return [this, box, a](std::size_t x) {
      rect::Rect<D> r = box;
      r.hi[a] = x;
      return g.load(r);
    };
  }

  std::vector<std::size_t> stripes(const rect::Rect<D>& box, int a, std::size_t m) const {
    std::vector<std::size_t> ends;
    chain_optimum<S>(chain(box, a), box.lo[a], box.hi[a], m, &ends);
    std::vector<std::size_t> sb{box.lo[a]};
    for (auto e : ends)
      if (e > sb.back()) sb.push_back(e);
    if (sb.size() < 2) sb.push_back(box.hi[a]);
    return sb;
  }

  static rect::Rect<D> slab(rect::Rect<D> box, int a, std::size_t lo, std::size_t hi) {
    box.lo[a] = lo;
    box.hi[a] = hi;
    return box;
  }

  void leaves(std::uint32_t node, const rect::Rect<D>& box, int a,
              const std::vector<std::size_t>& b) {
    if (b.size() == 2) {
      emit_leaf(out, node, box);
      return;
    }
    const std::uint32_t first = out.tree.split(node, a, b);
    for (std::size_t k = 0; k + 1 < b.size(); ++k)
      emit_leaf(out, first + static_cast<std::uint32_t>(k), slab(box, a, b[k], b[k + 1]));
  }

  void run(std::uint32_t node, const rect::Rect<D>& box, std::size_t p, int level) {
    const int a = order[level];
    if (level == D - 1) {
      std::vector<std::size_t> ends;
      chain_optimum<S>(chain(box, a), box.lo[a], box.hi[a], p, &ends);
      leaves(node, box, a, with_start(box.lo[a], ends));
      return;
    }
    const std::size_t m = std::min(p, root_up(p, D - level));
    const auto sb = stripes(box, a, m);
    const std::size_t ns = sb.size() - 1;
    const std::uint32_t first = out.tree.split(node, a, sb);
    if (probe_last && level == D - 2) {
      // optimal processor counts for these stripes: smallest B whose greedy counts fit in p
      const int b = order[D - 1];
      S total{}, ub{};
      std::vector<rect::Rect<D>> boxes;
      for (std::size_t k = 0; k < ns; ++k) {
        boxes.push_back(slab(box, a, sb[k], sb[k + 1]));
        const S l = g.load(boxes.back());
        total += l;
        ub = std::max(ub, l);
      }
      auto feasible = [&](S B) {
        std::size_t rem = p;
        for (std::size_t k = 0; k < ns; ++k) {
          const std::size_t cap = rem - (ns - 1 - k);
          const std::size_t c =
              partition::greedy_parts(chain(boxes[k], b), box.lo[b], box.hi[b], B, cap);
          if (c > cap) return false;
          rem -= std::max<std::size_t>(c, 1);
        }
        return true;
      };
      S B = ub;
      if (total > S{})
        B = partition::min_feasible_bottleneck(partition::average_bound(total, p), ub, feasible);
      std::size_t used = 0;
      std::vector<std::vector<std::size_t>> ends(ns);
      for (std::size_t k = 0; k < ns; ++k) {
        partition::greedy_parts(chain(boxes[k], b), box.lo[b], box.hi[b], B, p, &ends[k]);
        if (ends[k].empty()) ends[k].push_back(box.hi[b]);
        used += ends[k].size();
      }
      for (; used < p; ++used) ends[ns - 1].push_back(box.hi[b]);
      for (std::size_t k = 0; k < ns; ++k)
        leaves(first + static_cast<std::uint32_t>(k), boxes[k], b, with_start(box.lo[b], ends[k]));
      return;
    }
    std::vector<S> loads(ns);
    for (std::size_t k = 0; k < ns; ++k) loads[k] = g.load(slab(box, a, sb[k], sb[k + 1]));
    const auto q = allocate_by_load(loads, p);
    for (std::size_t k = 0; k < ns; ++k)
      run(first + static_cast<std::uint32_t>(k), slab(box, a, sb[k], sb[k + 1]), q[k], level + 1);
  }
};

template <class T, int D>
rect::Partition<D> jagged_nd(const rect::LoadGrid<T, D>& g, const rect::Rect<D>& box, std::size_t P,
                             const std::type_identity_t<std::array<int, D>>& order,
                             bool probe_last) {
  rect::Partition<D> out;
  out.box = box;
  JaggedND<T, D>{g, order, probe_last, out}.run(0, box, P, 0);
  return out;
}

template <int D>
void check_order(const std::array<int, D>& order, const char* who) {
  std::array<int, D> s = order;
  std::sort(s.begin(), s.end());
  for (int d = 0; d < D; ++d)
    if (s[d] != d)
      throw invalid_argument(std::string("irregular::rect::") + who +
                             ": the dimension order must be a permutation of 0..D-1");
}

template <class T, int D>
rect::Partition<D> jagged_nd_best(const rect::LoadGrid<T, D>& g, const rect::Rect<D>& box,
                                  std::size_t P, bool probe_last) {
  std::array<int, D> order;
  for (int d = 0; d < D; ++d) order[d] = d;
  rect::Partition<D> best;
  bool have = false;
  do {
    auto p = jagged_nd(g, box, P, order, probe_last);
    if (!have || rect::max_load(g, p) < rect::max_load(g, best)) best = std::move(p);
    have = true;
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

}  // namespace irregular::detail

namespace irregular::rect {

/// 3D JAG-M-HEUR along `order` (first dimension: ceil(P^(1/3)) slabs; each slab with its
/// processors: ceil(p^(1/2)) stripes along order[1]; each stripe cut along order[2]).
template <class T>
Partition<3> jag_m_heur(const LoadVolume<T>& g, const Rect<3>& box, std::size_t P,
                        const std::array<int, 3>& order) {
  irregular::detail::check_part_count(P, "jag_m_heur");
  irregular::detail::check_box<3>(box, g.extents(), "jag_m_heur");
  irregular::detail::check_order<3>(order, "jag_m_heur");
  return irregular::detail::jagged_nd(g, box, P, order, false);
}
/// 3D JAG-M-HEUR-BEST: the best of the six dimension orders.
template <class T>
Partition<3> jag_m_heur(const LoadVolume<T>& g, const Rect<3>& box, std::size_t P) {
  irregular::detail::check_part_count(P, "jag_m_heur");
  irregular::detail::check_box<3>(box, g.extents(), "jag_m_heur");
  return irregular::detail::jagged_nd_best(g, box, P, false);
}
/// 3D JAG-M-HEUR-BEST of the whole volume.
template <class T>
Partition<3> jag_m_heur(const LoadVolume<T>& g, std::size_t P) {
  return jag_m_heur(g, g.box(), P);
}

/// 3D JAG-M-HEUR-PROBE: slabs as JAG-M-HEUR, then inside each slab its stripes get their
/// processor counts by the multi-chain probe (optimal for those stripes and the slab's count).
template <class T>
Partition<3> jag_m_heur_probe(const LoadVolume<T>& g, const Rect<3>& box, std::size_t P,
                              const std::array<int, 3>& order) {
  irregular::detail::check_part_count(P, "jag_m_heur_probe");
  irregular::detail::check_box<3>(box, g.extents(), "jag_m_heur_probe");
  irregular::detail::check_order<3>(order, "jag_m_heur_probe");
  return irregular::detail::jagged_nd(g, box, P, order, true);
}
/// 3D JAG-M-HEUR-PROBE, the best of the six dimension orders.
template <class T>
Partition<3> jag_m_heur_probe(const LoadVolume<T>& g, const Rect<3>& box, std::size_t P) {
  irregular::detail::check_part_count(P, "jag_m_heur_probe");
  irregular::detail::check_box<3>(box, g.extents(), "jag_m_heur_probe");
  return irregular::detail::jagged_nd_best(g, box, P, true);
}
/// 3D JAG-M-HEUR-PROBE of the whole volume.
template <class T>
Partition<3> jag_m_heur_probe(const LoadVolume<T>& g, std::size_t P) {
  return jag_m_heur_probe(g, g.box(), P);
}

}  // namespace irregular::rect
