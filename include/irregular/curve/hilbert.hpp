// Hilbert curve: consecutive cells are face neighbours. 2D and 3D through compile-time state
// tables (several levels per lookup; 2D decode by prefix parities), any D from 1 to 8 through
// Skilling's transform (2004).
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/index.hpp>
#include <irregular/curve/detail/common.hpp>
#include <irregular/curve/detail/hilbert_2d_bits.hpp>
#include <irregular/curve/detail/hilbert_skilling.hpp>
#include <irregular/curve/detail/hilbert_tables.hpp>
#include <irregular/curve/detail/morton_bits.hpp>

#include <cstdint>
#include <type_traits>

namespace irregular::curve {

/// Hilbert order on D dimensions (arity 2). Every level is computed from the same root
/// orientation, so a cell's index is the prefix of its descendants' indices, and an hnode
/// (cell c at level l) is the aligned finest-level interval
/// [index(c) * 2^(D*(L-l)), (index(c) + 1) * 2^(D*(L-l))) with L = max_level.
/// Both paths give exactly Skilling's indices; the 2D/3D tables are that transform tabulated.
template <int D, class Index = std::uint64_t>
struct Hilbert {
  /// The name a checkpoint records for this curve.
  static constexpr const char* name = "hilbert";
  static_assert(D >= 1 && D <= 8, "irregular::curve::Hilbert supports 1 to 8 dimensions");
  static_assert(CurveIndex<Index>, "Hilbert index type must be uint32, uint64 or uint128");

 private:
  static constexpr bool table_path = D == 2 || D == 3;
  // Levels per table lookup (fewer dependent lookups): 2D 5 levels (4 states x 1024 entries,
  // 8 KiB), 3D 3 levels (24 states x 512 entries, 24 KiB).
  static constexpr int chunk = D == 2 ? 5 : 3;

 public:
  /// Dimension of the cells it visits.
  static constexpr int dim = D;
  /// Children per axis when a cell splits (2^D children).
  static constexpr int arity = 2;
  /// Deepest level: 2^(D * max_level) < 2^bits (the last finest interval ends inside
  /// Index) and 2^max_level cells per axis fit in coord_t.
  static constexpr int max_level = irregular::detail::curve_max_level(2, D, index_bits<Index>);
  /// Curve index type (uint32, uint64 or uint128).
  using index_type = Index;
  /// 2D/3D: the number of a tabulated (minimized) Skilling state; other D: the Skilling state.
  using state_type =
      std::conditional_t<table_path, std::uint8_t, irregular::detail::SkillingState<D>>;

  /// Position of `c` along the curve at its own level, in [0, 2^(D*level)).
  /// Preconditions (IRREGULAR_ASSERT): level in [0, max_level], anchors < 2^level.
  [[nodiscard]] static index_type index(const Cell<D>& c) {
    IRREGULAR_ASSERT((irregular::detail::cell_in_range<2, max_level, D>(c)));
    if constexpr (table_path && index_bits<Index> <= 64) {
      return static_cast<Index>(irregular::detail::hilbert_encode_fixed<D>(c.anchor, c.level));
    } else if constexpr (table_path) {
      using One = irregular::detail::HilbertTable<D, 1>;
      using Many = irregular::detail::HilbertTable<D, chunk>;
      const Index m = irregular::detail::morton_encode_wide<D, Index>(c.anchor, c.level);
      Index h = 0;
      unsigned s = 0;
      int j = c.level;
      // Leading levels one at a time, so the chunks below start at level multiples of chunk.
      for (int r = c.level % chunk; r > 0; --r) {
        --j;
        const unsigned e =
            One::enc[(s << One::bits) | (static_cast<unsigned>(m >> (j * D)) & One::mask)];
        h = (h << D) | static_cast<Index>(e & One::mask);
        s = e >> One::state_shift;
      }
      unsigned row = s << Many::bits;  // (state << bits): the table row of the current state
      while (j > 0) {
        j -= chunk;
        const unsigned e = Many::enc[row | (static_cast<unsigned>(m >> (j * D)) & Many::mask)];
        h = (h << (D * chunk)) | static_cast<Index>(e & Many::mask);
        row = e & ~Many::mask;
      }
      return h;
    } else {
      return irregular::detail::skilling_index<D, Index>(c.anchor, c.level);
    }
  }

  /// The cell at `level` whose index is `i`. Preconditions: level in [0, max_level],
  /// i < 2^(D*level).
  [[nodiscard]] static Cell<D> cell(index_type i, int level) {
    IRREGULAR_ASSERT(level >= 0 && level <= max_level);
    IRREGULAR_ASSERT(irregular::detail::index_below_pow2(i, D * level));
    Cell<D> c;
    c.level = level;
    if constexpr (D == 2 && index_bits<Index> <= 64) {
      c.anchor = irregular::detail::hilbert2_decode_bits(static_cast<std::uint64_t>(i), level);
    } else if constexpr (D == 3 && index_bits<Index> <= 64) {
      c.anchor = irregular::detail::hilbert3_decode_fixed(static_cast<std::uint64_t>(i), level);
    } else if constexpr (table_path) {
      using One = irregular::detail::HilbertTable<D, 1>;
      using Many = irregular::detail::HilbertTable<D, chunk>;
      Index m = 0;
      unsigned s = 0;
      int j = level;
      for (int r = level % chunk; r > 0; --r) {
        --j;
        const unsigned e =
            One::dec[(s << One::bits) | (static_cast<unsigned>(i >> (j * D)) & One::mask)];
        m |= static_cast<Index>(e & One::mask) << (j * D);
        s = e >> One::state_shift;
      }
      unsigned row = s << Many::bits;
      while (j > 0) {
        j -= chunk;
        const unsigned e = Many::dec[row | (static_cast<unsigned>(i >> (j * D)) & Many::mask)];
        m |= static_cast<Index>(e & Many::mask) << (j * D);
        row = e & ~Many::mask;
      }
      c.anchor = irregular::detail::morton_decode_wide<D, Index>(m, level);
    } else {
      c.anchor = irregular::detail::skilling_axes<D, Index>(i, level);
    }
    return c;
  }

  /// The state of the root cell: the orientation the curve starts from.
  [[nodiscard]] static constexpr state_type root_state() noexcept {
    if constexpr (table_path) {
      return 0;
    } else {
      return irregular::detail::skilling_root<D>();
    }
  }

  /// Local position (sum_d digit_d * 2^d) of the k-th child in curve order.
  [[nodiscard]] static constexpr int child_position(state_type s, int k) noexcept {
    if constexpr (table_path) {
      return static_cast<int>(
          irregular::detail::HilbertTable<D, 1>::dec[(static_cast<unsigned>(s) << D) |
                                                     static_cast<unsigned>(k)] &
          irregular::detail::HilbertTable<D, 1>::mask);
    } else {
      return static_cast<int>(irregular::detail::skilling_position<D>(s, static_cast<unsigned>(k)));
    }
  }

  /// The state of the k-th child in curve order of a cell in state `s`.
  [[nodiscard]] static constexpr state_type child_state(state_type s, int k) noexcept {
    if constexpr (table_path) {
      return static_cast<state_type>(
          irregular::detail::HilbertTable<D, 1>::dec[(static_cast<unsigned>(s) << D) |
                                                     static_cast<unsigned>(k)] >>
          irregular::detail::HilbertTable<D, 1>::state_shift);
    } else {
      return irregular::detail::skilling_next<D>(
          s, irregular::detail::skilling_y_of_digit<D>(s, static_cast<unsigned>(k)));
    }
  }
};

static_assert(SpaceFillingCurve<Hilbert<2>>);
static_assert(SpaceFillingCurve<Hilbert<3>>);
static_assert(SpaceFillingCurve<Hilbert<4>>);
static_assert(SpaceFillingCurve<Hilbert<3, uint128_t>>);

}  // namespace irregular::curve
