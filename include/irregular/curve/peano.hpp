// Peano curve (arity 3: every level trisects each axis), the switch-back curve whose consecutive
// cells are face neighbours. baiardi-2001 §2 (SFC visit); chunk tables for 2D and 3D.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/index.hpp>
#include <irregular/curve/detail/common.hpp>
#include <irregular/curve/detail/peano_tables.hpp>

#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace irregular::detail {

/// Per-level Peano index (any D): ternary digits by division, one level at a time.
template <int D, class Index>
constexpr Index peano_index_generic(std::array<coord_t, D> x, int level) noexcept {
  std::array<int, 64> pos{};
  for (int j = 0; j < level; ++j) {
    int p = 0;
    for (int d = 0; d < D; ++d) {
      p += static_cast<int>(x[d] % 3) * pow3_int[static_cast<std::size_t>(d)];
      x[d] /= 3;
    }
    pos[static_cast<std::size_t>(j)] = p;
  }
  Index h = 0;
  unsigned s = 0;
  for (int j = level - 1; j >= 0; --j) {
    const int p = pos[static_cast<std::size_t>(j)];
    h = h * static_cast<Index>(pow3_int[D]) + static_cast<Index>(peano_rank<D>(s, p));
    s ^= peano_reflection<D>(p);
  }
  return h;
}

template <int D, class Index>
constexpr std::array<coord_t, D> peano_axes_generic(Index h, int level) noexcept {
  std::array<int, 64> rank{};
  for (int j = 0; j < level; ++j) {
    rank[static_cast<std::size_t>(j)] = static_cast<int>(h % static_cast<Index>(pow3_int[D]));
    h /= static_cast<Index>(pow3_int[D]);
  }
  std::array<coord_t, D> x{};
  unsigned s = 0;
  for (int j = level - 1; j >= 0; --j) {
    const int p = peano_position<D>(s, rank[static_cast<std::size_t>(j)]);
    for (int d = 0; d < D; ++d)
      x[d] = x[d] * 3 + static_cast<coord_t>((p / pow3_int[static_cast<std::size_t>(d)]) % 3);
    s ^= peano_reflection<D>(p);
  }
  return x;
}

}  // namespace irregular::detail

namespace irregular::curve {

/// Peano order on D dimensions (arity 3; 2D and 3D use lookup tables, other D a per-level
/// loop). The root state is the identity and the first child of the root keeps it, so leading
/// zero digits change nothing. An hnode (cell c at level l) is the aligned finest-level interval
/// [index(c) * 3^(D*(L-l)), (index(c) + 1) * 3^(D*(L-l))) with L = max_level.
template <int D, class Index = std::uint64_t>
struct Peano {
  /// The name a checkpoint records for this curve.
  static constexpr const char* name = "peano";
  static_assert(D >= 1 && D <= 8, "irregular::curve::Peano supports 1 to 8 dimensions");
  static_assert(CurveIndex<Index>, "Peano index type must be uint32, uint64 or uint128");

  /// Dimension of the cells it visits.
  static constexpr int dim = D;
  /// Children per axis when a cell splits (3^D children).
  static constexpr int arity = 3;
  /// Deepest level: 3^(D * max_level) < 2^bits (the last finest interval ends inside
  /// Index) and 3^max_level cells per axis fit in coord_t.
  static constexpr int max_level = irregular::detail::curve_max_level(3, D, index_bits<Index>);
  /// Curve index type (uint32, uint64 or uint128).
  using index_type = Index;
  /// Reflection mask: bit d set when the cell's curve runs backwards along axis d.
  using state_type = std::uint8_t;

 private:
  static constexpr bool table_path = D == 2 || D == 3;
  static constexpr int chunk = D == 2 ? 3 : 2;  // levels per lookup: 3^(D*chunk) == 729
  static constexpr int n_chunks = (max_level + chunk - 1) / chunk;
  // Coordinates below 3^max_level: 32-bit arithmetic when it fits (cheaper division).
  using Coord =
      std::conditional_t<(irregular::detail::cells_per_axis<3>(max_level) - 1 <= 0xffffffffULL),
                         std::uint32_t, std::uint64_t>;
  // Rank digits below 3^(D*max_level): 64-bit arithmetic unless the index is wider.
  using Wide = std::conditional_t<(index_bits<Index> <= 64), std::uint64_t, Index>;

  // Table keys of every chunk of the coordinates (chunk 0 lowest): sum_d digits_d * per^d.
  template <std::size_t... J>
  static std::array<std::uint16_t, n_chunks> chunk_keys(const std::array<Coord, D>& x,
                                                        std::index_sequence<J...>) noexcept {
    return {static_cast<std::uint16_t>(chunk_key<J>(x))...};
  }
  template <std::size_t J>
  static unsigned chunk_key(const std::array<Coord, D>& x) noexcept {
    using T = irregular::detail::PeanoTable<D, chunk>;
    constexpr Coord scale =
        static_cast<Coord>(ipow<std::uint64_t>(T::per_axis, static_cast<int>(J)));
    unsigned k = 0;
    unsigned w = 1;
    for (int d = 0; d < D; ++d) {
      k += static_cast<unsigned>((x[d] / scale) % T::per_axis) * w;
      w *= T::per_axis;
    }
    return k;
  }
  // Rank digits of every chunk of the index, base 3^(D*chunk) == 729 (chunk 0 lowest).
  template <std::size_t... J>
  static std::array<std::uint16_t, n_chunks> rank_keys(Wide h, std::index_sequence<J...>) noexcept {
    using T = irregular::detail::PeanoTable<D, chunk>;
    return {static_cast<std::uint16_t>(
        (h / static_cast<Wide>(ipow<std::uint64_t>(T::entries, static_cast<int>(J)))) %
        T::entries)...};
  }

 public:
  /// Position of `c` along the curve at its own level, in [0, 3^(D*level)).
  /// Preconditions (IRREGULAR_ASSERT): level in [0, max_level], anchors < 3^level.
  [[nodiscard]] static index_type index(const Cell<D>& c) {
    IRREGULAR_ASSERT((irregular::detail::cell_in_range<3, max_level, D>(c)));
    if constexpr (D == 2 && index_bits<Index> <= 64) {
      return static_cast<Index>(irregular::detail::peano2_encode(
          static_cast<std::uint32_t>(c.anchor[0]), static_cast<std::uint32_t>(c.anchor[1])));
    } else if constexpr (table_path) {
      using T = irregular::detail::PeanoTable<D, chunk>;
      std::array<Coord, D> x{};
      for (int d = 0; d < D; ++d) x[d] = static_cast<Coord>(c.anchor[d]);
      // Every chunk of every level count at once: divisions by compile-time powers of
      // 3^chunk do not depend on each other, so they run in parallel.
      const auto key = chunk_keys(x, std::make_index_sequence<n_chunks>{});
      // Chunks above the cell's level hold leading zero digits: from the root they add rank 0
      // and keep the state, so they change nothing.
      Index h = 0;
      unsigned s = 0;
      for (int j = n_chunks - 1; j >= 0; --j) {
        const unsigned e = T::enc[s][key[static_cast<std::size_t>(j)]];
        h = h * static_cast<Index>(T::entries) + static_cast<Index>(e & 1023U);
        s = e >> 10;
      }
      return h;
    } else {
      return irregular::detail::peano_index_generic<D, Index>(c.anchor, c.level);
    }
  }

  /// The cell at `level` whose index is `i`. Preconditions: level in [0, max_level],
  /// i < 3^(D*level).
  [[nodiscard]] static Cell<D> cell(index_type i, int level) {
    IRREGULAR_ASSERT(level >= 0 && level <= max_level);
    IRREGULAR_ASSERT(i < ipow<Index>(3, D * level));
    Cell<D> c;
    c.level = level;
    if constexpr (table_path && index_bits<Index> <= 64) {
      using T = irregular::detail::PeanoTable<D, chunk>;
      const auto key = rank_keys(static_cast<Wide>(i), std::make_index_sequence<n_chunks>{});
      std::array<Coord, D> x{};
      unsigned s = 0;
      for (int j = n_chunks - 1; j >= 0; --j) {
        const unsigned e = T::dec[s][key[static_cast<std::size_t>(j)]];
        for (int d = 0; d < D; ++d)
          x[d] =
              static_cast<Coord>(x[d] * T::per_axis + ((e >> (T::axis_bits * d)) & T::axis_mask));
        s = e >> (T::axis_bits * D);
      }
      for (int d = 0; d < D; ++d) c.anchor[d] = x[d];
    } else {
      // 128-bit division has no cheap constant form; the per-level loop is fine there.
      c.anchor = irregular::detail::peano_axes_generic<D, Index>(i, level);
    }
    return c;
  }

  /// The state of the root cell: the orientation the curve starts from.
  [[nodiscard]] static constexpr state_type root_state() noexcept { return 0; }

  /// Local position (sum_d digit_d * 3^d) of the k-th child in curve order.
  [[nodiscard]] static constexpr int child_position(state_type s, int k) noexcept {
    return irregular::detail::peano_position<D>(s, k);
  }

  /// The state of the k-th child in curve order of a cell in state `s`.
  [[nodiscard]] static constexpr state_type child_state(state_type s, int k) noexcept {
    return static_cast<state_type>(
        s ^ irregular::detail::peano_reflection<D>(irregular::detail::peano_position<D>(s, k)));
  }
};

static_assert(SpaceFillingCurve<Peano<2>>);
static_assert(SpaceFillingCurve<Peano<3>>);
static_assert(SpaceFillingCurve<Peano<2, uint128_t>>);

}  // namespace irregular::curve
