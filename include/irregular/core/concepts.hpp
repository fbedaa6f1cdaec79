// Concepts shared by every layer: SpaceFillingCurve (DESIGN.md "Policies").
// Curves order the children of every cell, so each cell is one aligned index interval.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/index.hpp>

#include <concepts>

namespace irregular {

/// A space-filling curve policy (stateless type, all static members):
///  - `dim`, `arity` (2: halve each axis; 3: trisect), `max_level` (deepest level whose finest
///    indices arity^(dim*max_level) still fit strictly inside `index_type`, so half-open
///    intervals never overflow);
///  - `index(cell)`: the cell's rank in the curve order of its own level, in [0,
///  arity^(dim*level));
///  - `cell(index, level)`: the inverse;
///  - the traversal state machine: `root_state()`, `child_position(state, k)` gives the local
///    position of the k-th child in curve order (position = sum_d digit_d * arity^d, where
///    digit_d = child.anchor[d] - arity * parent.anchor[d]), `child_state(state, k)` its state.
/// Every curve refines itself: index(child) == index(parent) * arity^dim + k for the k-th child,
/// so a cell at level l is the interval [index * arity^(dim*(L-l)), (index + 1) * ...) at L.
template <class C>
concept SpaceFillingCurve = requires {
  { C::dim } -> std::convertible_to<int>;
  { C::arity } -> std::convertible_to<int>;
  { C::max_level } -> std::convertible_to<int>;
  typename C::index_type;
  typename C::state_type;
}
&&CurveIndex<typename C::index_type>&& requires(const Cell<C::dim>& c, typename C::index_type i,
                                                int level, typename C::state_type s, int k) {
  { C::index(c) } -> std::same_as<typename C::index_type>;
  { C::cell(i, level) } -> std::same_as<Cell<C::dim>>;
  { C::root_state() } -> std::same_as<typename C::state_type>;
  { C::child_position(s, k) } -> std::convertible_to<int>;
  { C::child_state(s, k) } -> std::same_as<typename C::state_type>;
};

}  // namespace irregular
