// Refinement conditions of the H-Tree: the problem-dependent test that decides whether the space
// of an hnode is split into arity^D equal subspaces (baiardi-2001 §2).
#pragma once

#include <irregular/core/cell.hpp>

#include <concepts>
#include <cstddef>
#include <span>

namespace irregular {

/// The count form of a refinement condition: `cond(cell, count) -> bool`, true = split the cell,
/// where `count` is the (global) number of elements in the cell. The distributed build can use
/// only this form, because it knows counts, not the elements themselves.
///
/// Policy on the deepest level: refinement never goes below the curve's `max_level`. A condition
/// that still asks to split a cell at `max_level` is clamped there (the cell stays a leaf and the
/// condition is not even asked). An explicit request to refine a cell at `max_level` through the
/// cell-data API (CellTree) throws irregular::invalid_argument.
template <class R, int D>
concept RefineCondition = std::predicate < const R&,
        const Cell<D>
&, std::size_t > ;

/// The key form, for the serial HTree only: `cond(cell, keys) -> bool` where `keys` are the
/// sorted finest curve indices of the elements in the cell.
template <class R, int D, class Index>
concept KeyRefineCondition = std::predicate < const R&,
        const Cell<D>
&, std::span < const Index >> ;

namespace refine {

/// Split while the cell holds more than `k` elements and its level is below `level_limit`
/// (-1: no limit other than the curve's max_level).
struct MaxElements {
  std::size_t k = 32;    ///< most elements a leaf may hold
  int level_limit = -1;  ///< no split at or below this level; -1: only max_level stops

  /// True if cell `c`, holding `count` elements, must split.
  template <int D>
  [[nodiscard]] constexpr bool operator()(const Cell<D>& c, std::size_t count) const noexcept {
    return count > k && (level_limit < 0 || c.level < level_limit);
  }
};

/// Split while a cell holds more than `k` elements (and its level is below `level_limit`).
[[nodiscard]] constexpr MaxElements max_elements(std::size_t k, int level_limit = -1) noexcept {
  return MaxElements{k, level_limit};
}

/// Uniform refinement: split every cell above `level` (clamped to the curve's max_level).
struct MaxLevel {
  int level = 0;  ///< the level every leaf reaches

  /// True if cell `c` lies above `level`.
  template <int D>
  [[nodiscard]] constexpr bool operator()(const Cell<D>& c, std::size_t /*count*/) const noexcept {
    return c.level < level;
  }
};

/// Uniform refinement to level `l`.
[[nodiscard]] constexpr MaxLevel max_level(int l) noexcept { return MaxLevel{l}; }

}  // namespace refine

static_assert(RefineCondition<refine::MaxElements, 2> && RefineCondition<refine::MaxElements, 3>);
static_assert(RefineCondition<refine::MaxLevel, 2> && RefineCondition<refine::MaxLevel, 3>);

}  // namespace irregular
