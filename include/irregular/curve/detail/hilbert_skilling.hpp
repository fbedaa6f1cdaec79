// Hilbert curve in any dimension through Skilling's transform (J. Skilling, "Programming the
// Hilbert curve", AIP Conf. Proc. 707, 2004), plus the same transform as a per-level state machine.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/index.hpp>
#include <irregular/curve/detail/morton_bits.hpp>

#include <array>
#include <cstdint>

namespace irregular::detail {

/// Skilling's AxestoTranspose on `bits`-bit coordinates: afterwards bit j of X[i] is bit
/// (D-1-i) of the Hilbert digit of level j (X[0] most significant within a digit).
template <int D>
constexpr void skilling_axes_to_transpose(std::array<coord_t, D>& x, int bits) noexcept {
  if (bits <= 0) return;
  const coord_t m = coord_t{1} << (bits - 1);
  // Inverse undo: each level's bits decide how the lower bits are reflected and exchanged.
  for (coord_t q = m; q > 1; q >>= 1) {
    const coord_t p = q - 1;
    for (int i = 0; i < D; ++i) {
      if (x[i] & q) {
        x[0] ^= p;
      } else {
        const coord_t t = (x[0] ^ x[i]) & p;
        x[0] ^= t;
        x[i] ^= t;
      }
    }
  }
  // Gray encode.
  for (int i = 1; i < D; ++i) x[i] ^= x[i - 1];
  coord_t t = 0;
  for (coord_t q = m; q > 1; q >>= 1)
    if (x[D - 1] & q) t ^= q - 1;
  for (int i = 0; i < D; ++i) x[i] ^= t;
}

/// Skilling's TransposetoAxes: the inverse of skilling_axes_to_transpose.
template <int D>
constexpr void skilling_transpose_to_axes(std::array<coord_t, D>& x, int bits) noexcept {
  if (bits <= 0) return;
  // Gray decode by H ^ (H/2).
  coord_t t = x[D - 1] >> 1;
  for (int i = D - 1; i > 0; --i) x[i] ^= x[i - 1];
  x[0] ^= t;
  // Undo excess work, from the lowest level up.
  const coord_t top = coord_t{1} << (bits - 1);
  for (coord_t q = 2; q != 0 && q <= top; q <<= 1) {
    const coord_t p = q - 1;
    for (int i = D - 1; i >= 0; --i) {
      if (x[i] & q) {
        x[0] ^= p;
      } else {
        t = (x[0] ^ x[i]) & p;
        x[0] ^= t;
        x[i] ^= t;
      }
    }
  }
}

/// Hilbert index of `bits`-bit coordinates by Skilling's transform. Taking `bits` = the cell's
/// level gives the same digits as shifting the coordinates up to any deeper level L and
/// shifting the index down: the transform works from the top bit, so lower zero bits never
/// change higher digits (the unit test checks this prefix property).
template <int D, class Index>
constexpr Index skilling_index(std::array<coord_t, D> x, int bits) noexcept {
  skilling_axes_to_transpose<D>(x, bits);
  std::array<coord_t, D> rev{};
  for (int i = 0; i < D; ++i) rev[D - 1 - i] = x[i];
  return morton_encode_wide<D, Index>(rev, bits);
}

template <int D, class Index>
constexpr std::array<coord_t, D> skilling_axes(Index h, int bits) noexcept {
  const auto rev = morton_decode_wide<D, Index>(h, bits);
  std::array<coord_t, D> x{};
  for (int i = 0; i < D; ++i) x[i] = rev[D - 1 - i];
  skilling_transpose_to_axes<D>(x, bits);
  return x;
}

/// Skilling's transform read as a state machine over levels (top down). The state is the
/// signed permutation that earlier levels applied to the lower bits (transformed axis i reads
/// original axis perm[i], inverted when flip bit i is set) and the parity the final Gray step
/// carries down.
template <int D>
struct SkillingState {
  std::array<std::uint8_t, D> perm{};
  std::uint8_t flip = 0;
  std::uint8_t parity = 0;
  friend constexpr bool operator==(const SkillingState&, const SkillingState&) = default;
};

template <int D>
constexpr SkillingState<D> skilling_root() noexcept {
  SkillingState<D> s;
  for (int i = 0; i < D; ++i) s.perm[i] = static_cast<std::uint8_t>(i);
  return s;
}

/// Next state after a level whose transformed bits are `y` (bit i = transformed axis i).
template <int D>
constexpr SkillingState<D> skilling_next(SkillingState<D> s, unsigned y) noexcept {
  unsigned yparity = 0;
  for (int i = 0; i < D; ++i) yparity ^= (y >> i) & 1U;
  for (int i = 0; i < D; ++i) {
    if ((y >> i) & 1U) {
      s.flip = static_cast<std::uint8_t>(s.flip ^ 1U);
    } else if (i != 0) {
      const auto p0 = s.perm[0];
      s.perm[0] = s.perm[i];
      s.perm[i] = p0;
      const unsigned f0 = s.flip & 1U;
      const unsigned fi = (s.flip >> i) & 1U;
      if (f0 != fi) s.flip = static_cast<std::uint8_t>(s.flip ^ (1U | (1U << i)));
    }
  }
  s.parity = static_cast<std::uint8_t>(s.parity ^ yparity);
  return s;
}

/// Transformed bits of local position `pos` (bit d = digit of axis d).
template <int D>
constexpr unsigned skilling_transformed(const SkillingState<D>& s, unsigned pos) noexcept {
  unsigned y = 0;
  for (int i = 0; i < D; ++i) y |= (((pos >> s.perm[i]) & 1U) ^ ((s.flip >> i) & 1U)) << i;
  return y;
}

/// Curve rank (Hilbert digit) of the child at local position `pos`.
template <int D>
constexpr unsigned skilling_digit(const SkillingState<D>& s, unsigned pos) noexcept {
  const unsigned y = skilling_transformed<D>(s, pos);
  unsigned acc = 0;
  unsigned digit = 0;
  for (int i = 0; i < D; ++i) {
    acc ^= (y >> i) & 1U;
    digit |= (acc ^ s.parity) << (D - 1 - i);
  }
  return digit;
}

/// Transformed bits of the child with curve rank `digit` (inverse of the Gray step).
template <int D>
constexpr unsigned skilling_y_of_digit(const SkillingState<D>& s, unsigned digit) noexcept {
  unsigned y = 0;
  unsigned prev = 0;
  for (int i = 0; i < D; ++i) {
    const unsigned xs = ((digit >> (D - 1 - i)) & 1U) ^ s.parity;
    y |= (xs ^ prev) << i;
    prev = xs;
  }
  return y;
}

/// Local position of the child with curve rank `digit`.
template <int D>
constexpr unsigned skilling_position(const SkillingState<D>& s, unsigned digit) noexcept {
  const unsigned y = skilling_y_of_digit<D>(s, digit);
  unsigned pos = 0;
  for (int i = 0; i < D; ++i) pos |= (((y >> i) & 1U) ^ ((s.flip >> i) & 1U)) << s.perm[i];
  return pos;
}

}  // namespace irregular::detail
