// Morton (Z-order) curve: the curve index interleaves the bits of the cell coordinates.
// baiardi-2001 §2 (SFC visit of the H-Tree); any dimension from 1 to 8, arity 2.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/index.hpp>
#include <irregular/curve/detail/common.hpp>
#include <irregular/curve/detail/morton_bits.hpp>

#include <cstdint>

namespace irregular::curve {

/// Morton order on D dimensions. Bit j of axis d is bit j*D + d of the index, so a cell's
/// children are visited in the order of their local position (sum_d digit_d * 2^d).
/// An hnode (cell c at level l) is the aligned finest-level interval
/// [index(c) * 2^(D*(L-l)), (index(c) + 1) * 2^(D*(L-l))) with L = max_level.
template <int D, class Index = std::uint64_t>
struct Morton {
  /// The name a checkpoint records for this curve.
  static constexpr const char* name = "morton";
  static_assert(D >= 1 && D <= 8, "irregular::curve::Morton supports 1 to 8 dimensions");
  static_assert(CurveIndex<Index>, "Morton index type must be uint32, uint64 or uint128");

  /// Dimension of the cells it visits.
  static constexpr int dim = D;
  /// Children per axis when a cell splits (2^D children).
  static constexpr int arity = 2;
  /// Deepest level: 2^(D * max_level) < 2^bits (the last finest interval ends inside
  /// Index) and 2^max_level cells per axis fit in coord_t.
  static constexpr int max_level = irregular::detail::curve_max_level(2, D, index_bits<Index>);
  /// Curve index type (uint32, uint64 or uint128).
  using index_type = Index;
  /// Morton order is the same in every cell: one state.
  using state_type = std::uint8_t;

  /// Position of `c` along the curve at its own level, in [0, 2^(D*level)).
  /// Preconditions (IRREGULAR_ASSERT): level in [0, max_level], anchors < 2^level.
  [[nodiscard]] static index_type index(const Cell<D>& c) {
    IRREGULAR_ASSERT((irregular::detail::cell_in_range<2, max_level, D>(c)));
    return irregular::detail::morton_encode_wide<D, Index>(c.anchor, c.level);
  }

  /// The cell at `level` whose index is `i`. Preconditions: level in [0, max_level],
  /// i < 2^(D*level).
  [[nodiscard]] static Cell<D> cell(index_type i, int level) {
    IRREGULAR_ASSERT(level >= 0 && level <= max_level);
    IRREGULAR_ASSERT(irregular::detail::index_below_pow2(i, D * level));
    Cell<D> c;
    c.anchor = irregular::detail::morton_decode_wide<D, Index>(i, level);
    c.level = level;
    return c;
  }

  /// The state of the root cell: the orientation the curve starts from.
  [[nodiscard]] static constexpr state_type root_state() noexcept { return 0; }
  /// Local position (sum_d digit_d * 2^d) of the k-th child: Morton visits the children in
  /// that order.
  [[nodiscard]] static constexpr int child_position(state_type, int k) noexcept { return k; }
  /// The state of the k-th child in curve order of a cell in state `s`.
  [[nodiscard]] static constexpr state_type child_state(state_type s, int) noexcept { return s; }
};

static_assert(SpaceFillingCurve<Morton<2>>);
static_assert(SpaceFillingCurve<Morton<3, uint128_t>>);

}  // namespace irregular::curve
