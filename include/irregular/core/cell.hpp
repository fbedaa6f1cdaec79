// Cell: a cube of the hierarchical decomposition, given by its level and its anchor (the integer
// coordinates of its lowest corner in units of its own level). baiardi-2001 §2 (H-Tree spaces).
#pragma once

#include <array>
#include <compare>
#include <cstdint>

namespace irregular {

/// Integer coordinate of a cell along one axis, in units of the cell's own level:
/// at level l with arity a, 0 <= coordinate < a^l.
using coord_t = std::uint64_t;

/// A cell at `level`; its anchor is in units of its own level, so the parent's anchor is
/// anchor / arity and the children's anchors are anchor * arity + digit.
template <int D>
struct Cell {
  static_assert(D >= 1 && D <= 8, "irregular::Cell supports 1 to 8 dimensions");
  std::array<coord_t, D> anchor{};  ///< integer coordinates at the cell's own level
  int level = 0;                    ///< level in the H-Tree; 0 is the root

  /// Same level and anchor.
  friend constexpr bool operator==(const Cell&, const Cell&) = default;
  /// Anchor first, then level: an order for containers, not the curve order.
  friend constexpr auto operator<=>(const Cell&, const Cell&) = default;
};

/// arity^e for small exponents, in the index type (constant-evaluated where possible).
template <class Int>
constexpr Int ipow(Int base, int e) noexcept {
  Int r = 1;
  for (; e > 0; e >>= 1, base *= base)
    if (e & 1) r *= base;
  return r;
}

}  // namespace irregular
