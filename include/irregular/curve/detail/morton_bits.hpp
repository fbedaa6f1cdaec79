// Bit interleaving (Morton order) for 1..8 dimensions: BMI2 pdep/pext when __BMI2__ is defined,
// magic-mask bit spreading otherwise; both give identical results (the unit test compares them).
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/index.hpp>

#include <array>
#include <cstdint>

#if defined(__BMI2__)
#include <immintrin.h>
#endif

namespace irregular::detail {

/// Bits per coordinate that one 64-bit Morton word holds.
template <int D>
inline constexpr int morton_chunk_bits = 64 / D;

/// Masks of the magic-number spreading: bit j of a coordinate travels to bit j*D in log steps;
/// after the steps for powers >= s it sits at j + (j & ~(s-1)) * (D-1).
template <int D>
struct MortonSpread {
  static constexpr int nbits = morton_chunk_bits<D>;
  static constexpr int top = [] {
    int t = 1;
    while (t * 2 < nbits) t *= 2;
    return t;
  }();
  static constexpr int steps = [] {
    int n = 0;
    for (int s = top; s >= 1; s /= 2) ++n;
    return n;
  }();
  static constexpr std::uint64_t low_mask =
      nbits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << nbits) - 1;
  // mask[i]: positions after the step with s = top >> i.
  static constexpr std::array<std::uint64_t, steps> mask = [] {
    std::array<std::uint64_t, steps> m{};
    int i = 0;
    for (int s = top; s >= 1; s /= 2, ++i) {
      std::uint64_t v = 0;
      for (int j = 0; j < nbits; ++j) {
        const int pos = j + (j & ~(s - 1)) * (D - 1);
        v |= std::uint64_t{1} << pos;
      }
      m[static_cast<std::size_t>(i)] = v;
    }
    return m;
  }();
  // Axis-0 bit positions (every D-th bit) for pdep/pext.
  static constexpr std::uint64_t axis_mask = mask[steps - 1];
};

/// Spreads the low morton_chunk_bits<D> bits of x to every D-th bit.
template <int D>
constexpr std::uint64_t morton_spread_portable(std::uint64_t x) noexcept {
  using S = MortonSpread<D>;
  if constexpr (D == 1) {
    return x;
  } else {
    x &= S::low_mask;
    int i = 0;
    for (int s = S::top; s >= 1; s /= 2, ++i)
      x = (x | (x << (s * (D - 1)))) & S::mask[static_cast<std::size_t>(i)];
    return x;
  }
}

/// Inverse of morton_spread_portable: gathers every D-th bit (from bit 0) into the low bits.
template <int D>
constexpr std::uint64_t morton_compact_portable(std::uint64_t x) noexcept {
  using S = MortonSpread<D>;
  if constexpr (D == 1) {
    return x;
  } else {
    x &= S::axis_mask;
    for (int i = S::steps - 1; i >= 0; --i) {
      const int s = S::top >> i;
      const std::uint64_t m = i == 0 ? S::low_mask : S::mask[static_cast<std::size_t>(i - 1)];
      x = (x | (x >> (s * (D - 1)))) & m;
    }
    return x;
  }
}

/// Morton code of one chunk: bit j of coordinate d goes to bit j*D + d.
/// Precondition: every x[d] < 2^morton_chunk_bits<D>.
template <int D>
constexpr std::uint64_t morton_encode_portable(const std::array<coord_t, D>& x) noexcept {
  std::uint64_t r = 0;
  for (int d = 0; d < D; ++d) r |= morton_spread_portable<D>(x[static_cast<std::size_t>(d)]) << d;
  return r;
}

template <int D>
constexpr std::array<coord_t, D> morton_decode_portable(std::uint64_t code) noexcept {
  std::array<coord_t, D> x{};
  for (int d = 0; d < D; ++d)
    x[static_cast<std::size_t>(d)] = morton_compact_portable<D>(code >> d);
  return x;
}

#if defined(__BMI2__)
inline constexpr bool morton_has_bmi2 = true;

template <int D>
inline std::uint64_t morton_encode_bmi2(const std::array<coord_t, D>& x) noexcept {
  constexpr std::uint64_t m = MortonSpread<D>::axis_mask;
  std::uint64_t r = 0;
  for (int d = 0; d < D; ++d) r |= _pdep_u64(x[static_cast<std::size_t>(d)], m << d);
  return r;
}

template <int D>
inline std::array<coord_t, D> morton_decode_bmi2(std::uint64_t code) noexcept {
  constexpr std::uint64_t m = MortonSpread<D>::axis_mask;
  std::array<coord_t, D> x{};
  for (int d = 0; d < D; ++d) x[static_cast<std::size_t>(d)] = _pext_u64(code, m << d);
  return x;
}
#else
inline constexpr bool morton_has_bmi2 = false;
#endif

/// Fastest available 64-bit interleave (same result on every path).
template <int D>
inline std::uint64_t morton_encode64(const std::array<coord_t, D>& x) noexcept {
#if defined(__BMI2__)
  return morton_encode_bmi2<D>(x);
#else
  return morton_encode_portable<D>(x);
#endif
}

template <int D>
inline std::array<coord_t, D> morton_decode64(std::uint64_t code) noexcept {
#if defined(__BMI2__)
  return morton_decode_bmi2<D>(code);
#else
  return morton_decode_portable<D>(code);
#endif
}

/// Interleave of `bits` bits per coordinate into an Index (any width): 64-bit chunks of
/// morton_chunk_bits<D> bits per coordinate, from the lowest chunk up.
template <int D, class Index>
inline Index morton_encode_wide(const std::array<coord_t, D>& x, int bits) noexcept {
  constexpr int cb = morton_chunk_bits<D>;
  if constexpr (index_bits<Index> <= 64) {
    (void)bits;
    return static_cast<Index>(morton_encode64<D>(x));
  } else {
    if (bits <= cb) return static_cast<Index>(morton_encode64<D>(x));
    Index r = 0;
    constexpr std::uint64_t lo = cb >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << cb) - 1;
    for (int shift = 0; shift < bits; shift += cb) {
      std::array<coord_t, D> part{};
      for (int d = 0; d < D; ++d)
        part[static_cast<std::size_t>(d)] = (x[static_cast<std::size_t>(d)] >> shift) & lo;
      r |= static_cast<Index>(morton_encode64<D>(part)) << (shift * D);
    }
    return r;
  }
}

template <int D, class Index>
inline std::array<coord_t, D> morton_decode_wide(Index code, int bits) noexcept {
  constexpr int cb = morton_chunk_bits<D>;
  if constexpr (index_bits<Index> <= 64) {
    (void)bits;
    return morton_decode64<D>(static_cast<std::uint64_t>(code));
  } else {
    if (bits <= cb) return morton_decode64<D>(static_cast<std::uint64_t>(code));
    std::array<coord_t, D> x{};
    for (int shift = 0; shift < bits; shift += cb) {
      const auto part = morton_decode64<D>(static_cast<std::uint64_t>(code >> (shift * D)));
      for (int d = 0; d < D; ++d)
        x[static_cast<std::size_t>(d)] |= part[static_cast<std::size_t>(d)] << shift;
    }
    return x;
  }
}

}  // namespace irregular::detail
