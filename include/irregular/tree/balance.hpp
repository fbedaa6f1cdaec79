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
#include <array>
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
  std::vector<Index> starts;         ///< first finest index of each leaf, ascending
  std::vector<std::uint8_t> levels;  ///< level of each leaf
};

namespace detail {

// The balanced tree is known by its internal nodes. Leaves touching a leaf L at level l lie in
// the neighbours of L's parent P (level l-1), so "touching leaves are at level >= l-1" is "every
// neighbour of P is an hnode", i.e. "every neighbour of P has an internal parent". Those parents
// are parent(P) and, per axis where P lies against its parent's boundary, the parent's neighbour
// on that side: at most 2^D cells (full) or D+1 (face), where pushing P's 3^D-1 neighbours, once
// per child of P, would repeat each request up to 2^D times before sorting. The rule holds for
// every internal node (a balanced tree satisfies it, and it implies balance), so the closure is
// taken level by level from the deepest: internal nodes at level j make those at level j-1.
template <SpaceFillingCurve C>
void push_neighbour_parents(typename C::index_type inner_start, int j, bool full,
                            Periodicity<C::dim> per, std::vector<typename C::index_type>& out) {
  constexpr int D = C::dim;
  const Cell<D> c = cell_at<C>(inner_start, j);
  const Cell<D> pc = parent_of<D, C::arity>(c);
  const auto n = static_cast<std::int64_t>(axis_cells<C>(j - 1));
  // Per axis, the side (-1, +1) where P touches its parent's face (none for Peano's middle
  // digit); has[d]: the parent has a neighbour there (in the domain or across a wrap), other[d].
  std::array<std::int64_t, static_cast<std::size_t>(D)> other{};
  std::array<bool, static_cast<std::size_t>(D)> has{};
  for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d) {
    const auto digit = static_cast<int>(c.anchor[d] % static_cast<coord_t>(C::arity));
    const int side = digit == 0 ? -1 : (digit == C::arity - 1 ? 1 : 0);
    has[d] = false;
    if (side == 0) continue;
    std::int64_t x = static_cast<std::int64_t>(pc.anchor[d]) + side;
    if (x < 0 || x >= n) {
      if (!per[d]) continue;
      x = (x + n) % n;
    }
    if (x == static_cast<std::int64_t>(pc.anchor[d])) continue;  // wrapped onto itself
    other[d] = x;
    has[d] = true;
  }
  if (!full) {
    for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d) {
      if (!has[d]) continue;
      Cell<D> nb = pc;
      nb.anchor[d] = static_cast<coord_t>(other[d]);
      out.push_back(start_of<C>(nb));
    }
    return;
  }
  // Every non-empty subset of the axes that have a neighbour side.
  for (unsigned mask = 1; mask < (1u << D); ++mask) {
    Cell<D> nb = pc;
    bool ok = true;
    for (std::size_t d = 0; d < static_cast<std::size_t>(D) && ok; ++d) {
      if (!(mask >> d & 1u)) continue;
      ok = has[d];
      nb.anchor[d] = static_cast<coord_t>(other[d]);
    }
    if (ok) out.push_back(start_of<C>(nb));
  }
}

// Emits leaf (s, lv) of the input, split where the balanced tree has internal nodes; `cur[j]`
// walks inner[j] in curve order, as the leaves do.
template <SpaceFillingCurve C>
void emit_balanced(typename C::index_type s, int lv,
                   const std::vector<std::vector<typename C::index_type>>& inner,
                   std::vector<std::size_t>& cur, LeafArrays<typename C::index_type>& out) {
  using I = typename C::index_type;
  if (static_cast<std::size_t>(lv) < inner.size()) {
    const auto& in = inner[static_cast<std::size_t>(lv)];
    std::size_t& k = cur[static_cast<std::size_t>(lv)];
    while (k < in.size() && in[k] < s) ++k;
    if (k < in.size() && in[k] == s) {
      const I cs = span_at<C>(lv + 1);
      I t = s;
      for (int c = 0; c < children_of<C>; ++c, t += cs)
        emit_balanced<C>(t, lv + 1, inner, cur, out);
      return;
    }
  }
  out.starts.push_back(s);
  out.levels.push_back(static_cast<std::uint8_t>(lv));
}

// The parent of every leaf at level >= 1, into inner[level - 1] (leaves sorted: siblings
// adjacent, so each parent is pushed once per run).
template <SpaceFillingCurve C>
void seed_inner(std::span<const typename C::index_type> starts,
                std::span<const std::uint8_t> levels,
                std::vector<std::vector<typename C::index_type>>& inner) {
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const int l = levels[i];
    if (l == 0) continue;
    auto& in = inner[static_cast<std::size_t>(l - 1)];
    const auto p = ancestor_start<C>(starts[i], l - 1);
    if (in.empty() || in.back() != p) in.push_back(p);
  }
}

// One step of the closure: `in` (internal nodes at level j >= 1) sorted and unique, then the
// parents and neighbour parents of its nodes appended to `up` (level j - 1, unsorted).
template <SpaceFillingCurve C>
void close_level(std::vector<typename C::index_type>& in, int j, bool full, Periodicity<C::dim> per,
                 std::vector<typename C::index_type>& up) {
  using I = typename C::index_type;
  std::sort(in.begin(), in.end());
  in.erase(std::unique(in.begin(), in.end()), in.end());
  I last_parent = index_end<C>();
  for (const I s : in) {
    const I p = ancestor_start<C>(s, j - 1);
    if (p != last_parent) up.push_back(p);
    last_parent = p;
    push_neighbour_parents<C>(s, j, full, per, up);
  }
}

// The balanced leaves once the closure is complete down to level 1: inner[0] sorted, then
// every input leaf split where the balanced tree has internal nodes. `room`: output capacity.
template <SpaceFillingCurve C>
LeafArrays<typename C::index_type> emit_leaves(
    std::span<const typename C::index_type> starts, std::span<const std::uint8_t> levels,
    std::vector<std::vector<typename C::index_type>>& inner, std::size_t room) {
  auto& root = inner[0];
  std::sort(root.begin(), root.end());
  root.erase(std::unique(root.begin(), root.end()), root.end());
  LeafArrays<typename C::index_type> out;
  out.starts.reserve(room);
  out.levels.reserve(room);
  std::vector<std::size_t> pos(inner.size(), 0);
  for (std::size_t i = 0; i < starts.size(); ++i)
    emit_balanced<C>(starts[i], levels[i], inner, pos, out);
  return out;
}

template <SpaceFillingCurve C>
LeafArrays<typename C::index_type> balance_impl(std::span<const typename C::index_type> starts,
                                                std::span<const std::uint8_t> levels, bool full,
                                                Periodicity<C::dim> per) {
  using I = typename C::index_type;
  int deepest = 0;
  for (auto l : levels) deepest = std::max(deepest, static_cast<int>(l));
  if (deepest < 2)  // neighbours of level-1 cells are all hnodes
    return {{starts.begin(), starts.end()}, {levels.begin(), levels.end()}};
  // inner[j]: starts of internal nodes at level j (sorted unique once level j is processed).
  std::vector<std::vector<I>> inner(static_cast<std::size_t>(deepest));
  seed_inner<C>(starts, levels, inner);
  for (int j = deepest - 1; j >= 1; --j)
    close_level<C>(inner[static_cast<std::size_t>(j)], j, full, per,
                   inner[static_cast<std::size_t>(j - 1)]);
  return emit_leaves<C>(starts, levels, inner, starts.size() + starts.size() / 4);
}

}  // namespace detail

/// The coarsest 2:1 balanced refinement of a tiling leaf sequence: every input leaf is a union
/// of output leaves, and output leaves that touch (kind) differ by at most one level. Along
/// periodic axes, leaves touch across the wrap. O(n log n) in all.
template <SpaceFillingCurve C>
[[nodiscard]] LeafArrays<typename C::index_type> balance_leaves(
    std::span<const typename C::index_type> starts, std::span<const std::uint8_t> levels,
    BalanceKind kind = BalanceKind::full, Periodicity<C::dim> per = {}) {
  detail::validate_tiling<C, std::uint8_t>(starts, levels, "irregular::balance_leaves");
  return detail::balance_impl<C>(starts, levels, kind == BalanceKind::full, per);
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
