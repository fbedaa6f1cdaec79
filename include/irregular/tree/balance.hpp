// 2:1 balance of a linear H-Tree: the coarsest refinement in which leaves that touch (across a
// face, or at any corner) differ by at most one level. Used by mesh codes and the AMM of
// baiardi-collecting-remote-data §4 (neighbouring grids one level apart).
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/index.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/detail/linear_tree.hpp>
#include <irregular/tree/htree.hpp>
#include <irregular/tree/neighbours.hpp>
#include <irregular/tree/stencil.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace irregular {

/// Which leaves must be within one level of each other: those sharing a (D-1)-face, or those
/// sharing any point (faces, edges, corners).
enum class BalanceKind { face, full };

/// Leaves as two parallel arrays (starts sorted, tiling the index range).
template <class Index>
struct LeafArrays {
  std::vector<Index> starts;
  std::vector<std::uint8_t> levels;
};

namespace detail {

template <SpaceFillingCurve C>
void split_to_required(typename C::index_type start, int level, int target,
                       const typename C::index_type* rlo, const typename C::index_type* rhi,
                       LeafArrays<typename C::index_type>& out) {
  using I = typename C::index_type;
  if (rlo == rhi || level >= target) {
    out.starts.push_back(start);
    out.levels.push_back(static_cast<std::uint8_t>(level));
    return;
  }
  const I cs = span_at<C>(level + 1);
  I s = start;
  for (int k = 0; k < children_of<C>; ++k, s += cs) {
    const I* mid = std::lower_bound(rlo, rhi, s + cs);
    split_to_required<C>(s, level + 1, target, rlo, mid, out);
    rlo = mid;
  }
}

template <SpaceFillingCurve C, Stencil Adj>
LeafArrays<typename C::index_type> balance_impl(LeafArrays<typename C::index_type> cur,
                                                Periodicity<C::dim> per) {
  using I = typename C::index_type;
  int deepest = 0;
  for (auto l : cur.levels) deepest = std::max(deepest, static_cast<int>(l));
  std::vector<I> req;
  LeafArrays<I> next;
  // Leaves at level l need every neighbour of their parent (level l-1) to be an hnode. Leaves
  // created while serving level l are at most at level l-1, so one deepest-first sweep suffices.
  for (int l = deepest; l >= 2; --l) {
    req.clear();
    for (std::size_t i = 0; i < cur.starts.size(); ++i) {
      if (cur.levels[i] != l) continue;
      const Cell<C::dim> parent = parent_of<C::dim, C::arity>(cell_at<C>(cur.starts[i], l));
      stencil_cells<C, Adj>(parent, per,
                            [&](const Cell<C::dim>& nb) { req.push_back(start_of<C>(nb)); });
    }
    if (req.empty()) continue;
    std::sort(req.begin(), req.end());
    req.erase(std::unique(req.begin(), req.end()), req.end());
    next.starts.clear();
    next.levels.clear();
    next.starts.reserve(cur.starts.size() + req.size());
    next.levels.reserve(cur.starts.size() + req.size());
    const I* r = req.data();
    const I* rend = req.data() + req.size();
    for (std::size_t i = 0; i < cur.starts.size(); ++i) {
      const int lv = cur.levels[i];
      const I s = cur.starts[i], e = s + span_at<C>(lv);
      while (r != rend && *r < s) ++r;
      const I* q = r;
      while (q != rend && *q < e) ++q;
      split_to_required<C>(s, lv, l - 1, r, q, next);
      r = q;
    }
    std::swap(cur, next);
  }
  return cur;
}

}  // namespace detail

/// The coarsest 2:1 balanced refinement of a tiling leaf sequence: every input leaf is a union
/// of output leaves, and output leaves that touch (kind) differ by at most one level. Along
/// periodic axes, leaves touch across the wrap. O(n log n) per level.
template <SpaceFillingCurve C>
[[nodiscard]] LeafArrays<typename C::index_type> balance_leaves(
    std::span<const typename C::index_type> starts, std::span<const std::uint8_t> levels,
    BalanceKind kind = BalanceKind::full, Periodicity<C::dim> per = {}) {
  detail::validate_tiling<C, std::uint8_t>(starts, levels, "irregular::balance_leaves");
  LeafArrays<typename C::index_type> in{{starts.begin(), starts.end()},
                                        {levels.begin(), levels.end()}};
  if (kind == BalanceKind::face)
    return detail::balance_impl<C, stencil::VonNeumann<C::dim, 1>>(std::move(in), per);
  return detail::balance_impl<C, stencil::Moore<C::dim, 1>>(std::move(in), per);
}

/// The 2:1 balanced refinement of an HTree (as a new tree without elements: attach them again
/// with assign_elements).
template <SpaceFillingCurve C>
[[nodiscard]] HTree<C> balance(const HTree<C>& tree, BalanceKind kind = BalanceKind::full,
                               Periodicity<C::dim> per = {}) {
  auto r = balance_leaves<C>(tree.starts(), tree.levels(), kind, per);
  return HTree<C>::from_leaves(std::move(r.starts),
                               std::vector<int>(r.levels.begin(), r.levels.end()));
}

}  // namespace irregular
