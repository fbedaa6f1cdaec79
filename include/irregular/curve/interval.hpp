// Generic helpers over any SpaceFillingCurve: an hnode as an aligned finest-level index interval,
// ancestors, curve-order children, states. DESIGN.md "The one idea"; baiardi-2001 §2–3.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/core/index.hpp>
#include <irregular/curve/detail/common.hpp>

#include <string>

namespace irregular::detail {
template <SpaceFillingCurve C>
constexpr typename C::index_type levels_span(int levels) noexcept {
  // arity^(dim*levels): the number of finest indices under a cell `levels` above the finest.
  if constexpr (C::arity == 2)
    return typename C::index_type{1} << (C::dim * levels);
  else
    return ipow<typename C::index_type>(static_cast<typename C::index_type>(C::arity),
                                        C::dim * levels);
}
}  // namespace irregular::detail

namespace irregular::curve {

/// The finest-level interval (L = C::max_level) that cell `c` covers:
/// [index(c) * arity^(D*(L-l)), (index(c) + 1) * arity^(D*(L-l))).
template <SpaceFillingCurve C>
[[nodiscard]] IndexInterval<typename C::index_type> hnode_interval(const Cell<C::dim>& c) {
  const auto w = irregular::detail::levels_span<C>(C::max_level - c.level);
  const auto i = C::index(c);
  return {i * w, (i + 1) * w};
}

/// Start of hnode_interval(c): the finest index of c's first descendant.
template <SpaceFillingCurve C>
[[nodiscard]] typename C::index_type finest_index(const Cell<C::dim>& c) {
  return C::index(c) * irregular::detail::levels_span<C>(C::max_level - c.level);
}

/// The ancestor of `c` at `level` (c itself when level == c.level). Precondition: level in
/// [0, c.level].
template <SpaceFillingCurve C>
[[nodiscard]] Cell<C::dim> ancestor_at(const Cell<C::dim>& c, int level) {
  IRREGULAR_ASSERT(level >= 0 && level <= c.level);
  const coord_t f = ipow<coord_t>(static_cast<coord_t>(C::arity), c.level - level);
  Cell<C::dim> a;
  a.level = level;
  for (int d = 0; d < C::dim; ++d) a.anchor[d] = c.anchor[d] / f;
  return a;
}

/// The k-th child of `parent` in curve order, where `state` is the parent's traversal state.
template <SpaceFillingCurve C>
[[nodiscard]] Cell<C::dim> child_in_curve_order(const Cell<C::dim>& parent,
                                                typename C::state_type state, int k) {
  IRREGULAR_ASSERT(k >= 0 && k < ipow<int>(C::arity, C::dim));
  int pos = C::child_position(state, k);
  Cell<C::dim> child;
  child.level = parent.level + 1;
  for (int d = 0; d < C::dim; ++d) {
    child.anchor[d] =
        parent.anchor[d] * static_cast<coord_t>(C::arity) + static_cast<coord_t>(pos % C::arity);
    pos /= C::arity;
  }
  return child;
}

/// The traversal state of `c`, found by walking from the root along c's ancestors.
template <SpaceFillingCurve C>
[[nodiscard]] typename C::state_type state_of(const Cell<C::dim>& c) {
  // index(c) is the concatenation of the child ranks along the path (each curve refines
  // itself), so the digits of one index give every step of the walk.
  using I = typename C::index_type;
  const I i = C::index(c);
  const I digits = irregular::detail::levels_span<C>(1);
  auto s = C::root_state();
  for (int l = 1; l <= c.level; ++l) {
    const I above = ipow<I>(digits, c.level - l);
    s = C::child_state(s, static_cast<int>((i / above) % digits));
  }
  return s;
}

/// The level-`level` ancestor of the finest-level index i (L = C::max_level).
template <SpaceFillingCurve C>
[[nodiscard]] Cell<C::dim> cell_of_finest(typename C::index_type i, int level) {
  IRREGULAR_ASSERT(level >= 0 && level <= C::max_level);
  return C::cell(i / irregular::detail::levels_span<C>(C::max_level - level), level);
}

/// index(c) after validating c: throws irregular::invalid_argument when the level is outside
/// [0, max_level] or a coordinate is >= arity^level.
template <SpaceFillingCurve C>
[[nodiscard]] typename C::index_type checked_index(const Cell<C::dim>& c) {
  if (c.level < 0 || c.level > C::max_level)
    throw invalid_argument("irregular::curve::checked_index: level " + std::to_string(c.level) +
                           " outside [0, " + std::to_string(C::max_level) + "]");
  const coord_t n = ipow<coord_t>(static_cast<coord_t>(C::arity), c.level);
  for (int d = 0; d < C::dim; ++d)
    if (c.anchor[d] >= n)
      throw invalid_argument("irregular::curve::checked_index: coordinate " +
                             std::to_string(c.anchor[d]) + " of axis " + std::to_string(d) +
                             " is >= " + std::to_string(n) + " (cells per axis at level " +
                             std::to_string(c.level) + ")");
  return C::index(c);
}

}  // namespace irregular::curve
