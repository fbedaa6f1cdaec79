// Shared helpers of the space-filling curves: max_level computation and precondition checks.
// DESIGN.md "The one idea": every hnode is an aligned interval of finest-level curve indices.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/index.hpp>

#include <cstdint>

namespace irregular::detail {

/// Largest L with arity^(dim*L) <= 2^bits - 1 (half-open finest intervals never overflow) and
/// arity^L <= 2^64 - 1 (cells per axis fit coord_t).
constexpr int curve_max_level(int arity, int dim, int bits) noexcept {
  const uint128_t limit = bits >= 128 ? ~uint128_t{0} : (uint128_t{1} << bits) - 1;
  const uint128_t coord_limit = ~std::uint64_t{0};
  const auto a = static_cast<uint128_t>(arity);
  uint128_t p = 1;
  uint128_t q = 1;
  int level = 0;
  for (;;) {
    uint128_t np = p;
    for (int i = 0; i < dim; ++i) {
      if (np > limit / a) return level;
      np *= a;
    }
    if (q > coord_limit / a) return level;
    p = np;
    q *= a;
    ++level;
  }
}

/// arity^level as coord_t; precondition: level <= the curve's max_level.
template <int Arity>
constexpr coord_t cells_per_axis(int level) noexcept {
  if constexpr (Arity == 2) {
    return coord_t{1} << level;
  } else {
    return ipow<coord_t>(Arity, level);
  }
}

/// True if the cell's level is in [0, max_level] and every anchor coordinate is < arity^level.
template <int Arity, int MaxLevel, int D>
constexpr bool cell_in_range(const Cell<D>& c) noexcept {
  if (c.level < 0 || c.level > MaxLevel) return false;
  const coord_t n = cells_per_axis<Arity>(c.level);
  for (int d = 0; d < D; ++d)
    if (c.anchor[d] >= n) return false;
  return true;
}

/// True if i < 2^bits, i.e. the index fits in `bits` low bits (bits < index width).
template <class Index>
constexpr bool index_below_pow2(Index i, int bits) noexcept {
  return bits >= index_bits<Index> || (i >> bits) == 0;
}

}  // namespace irregular::detail
