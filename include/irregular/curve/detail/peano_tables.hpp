// Peano curve internals: the per-level child order and reflections (the classic switch-back
// Peano curve, any D), and compile-time chunk tables for the 2D and 3D fast paths.
#pragma once

#include <irregular/core/cell.hpp>

#include <array>
#include <cstdint>

namespace irregular::detail {

inline constexpr std::array<int, 9> pow3_int = {1, 3, 9, 27, 81, 243, 729, 2187, 6561};

/// Reflection mask of the child at local position `pos` (sum_d digit_d * 3^d): axis i is
/// reflected when the digits of the other axes have odd sum. Reflecting a digit (2 - d) keeps
/// its parity, so this is the same in every state and a cell's state is the XOR of its
/// ancestors' masks.
template <int D>
constexpr unsigned peano_reflection(int pos) noexcept {
  int sum = 0;
  std::array<int, D> d{};
  for (int i = 0; i < D; ++i) {
    d[i] = pos % 3;
    pos /= 3;
    sum += d[i];
  }
  unsigned r = 0;
  for (int i = 0; i < D; ++i) r |= static_cast<unsigned>((sum - d[i]) & 1) << i;
  return r;
}

/// Curve rank of the child at local position `pos` in a cell with reflection mask `s`:
/// a reflected ternary Gray code whose most significant digit is axis D-1.
template <int D>
constexpr int peano_rank(unsigned s, int pos) noexcept {
  std::array<int, D> c{};
  for (int i = 0; i < D; ++i) {
    const int d = pos % 3;
    pos /= 3;
    c[i] = ((s >> i) & 1U) ? 2 - d : d;
  }
  int k = 0;
  int parity = 0;
  for (int i = D - 1; i >= 0; --i) {
    const int a = parity ? 2 - c[i] : c[i];
    k = k * 3 + a;
    parity ^= c[i] & 1;
  }
  return k;
}

/// Local position of the child with curve rank `k` in a cell with reflection mask `s`.
template <int D>
constexpr int peano_position(unsigned s, int k) noexcept {
  std::array<int, D> a{};  // a[i]: ternary digit of k for axis i (axis D-1 most significant)
  for (int i = 0; i < D; ++i) {
    a[i] = k % 3;
    k /= 3;
  }
  int pos = 0;
  int parity = 0;
  for (int i = D - 1; i >= 0; --i) {
    const int c = parity ? 2 - a[i] : a[i];
    parity ^= c & 1;
    const int d = ((s >> i) & 1U) ? 2 - c : c;
    pos += d * pow3_int[static_cast<std::size_t>(i)];
  }
  return pos;
}

/// Chunk tables: Levels levels per lookup, 3^(D*Levels) == 729 entries per state.
/// enc[s][sum_d chunk_d * 3^(Levels*d)] = rank digits (base 3^D, < 729) | next state << 10
/// dec[s][rank digits] = sum_d chunk_d << (Bits*d) | next state << (Bits*D)
template <int D, int Levels>
struct PeanoTable {
  static constexpr int states = 1 << D;
  static constexpr int per_axis = pow3_int[Levels];  // 3^Levels values of one axis chunk
  static constexpr int entries = pow3_int[D * Levels];
  static constexpr int axis_bits = per_axis <= 16 ? 4 : 5;
  static constexpr unsigned axis_mask = (1U << axis_bits) - 1;
  static_assert(entries <= 1024 && axis_bits * D + D <= 16);

  static constexpr std::array<std::array<std::uint16_t, entries>, states> enc = [] {
    std::array<std::array<std::uint16_t, entries>, states> t{};
    for (int s0 = 0; s0 < states; ++s0)
      for (int e = 0; e < entries; ++e) {
        unsigned s = static_cast<unsigned>(s0);
        int out = 0;
        for (int l = Levels - 1; l >= 0; --l) {
          int pos = 0;
          for (int d = 0; d < D; ++d) {
            const int chunk = (e / pow3_int[static_cast<std::size_t>(Levels * d)]) % per_axis;
            pos += ((chunk / pow3_int[static_cast<std::size_t>(l)]) % 3) *
                   pow3_int[static_cast<std::size_t>(d)];
          }
          out = out * pow3_int[D] + peano_rank<D>(s, pos);
          s ^= peano_reflection<D>(pos);
        }
        t[static_cast<std::size_t>(s0)][static_cast<std::size_t>(e)] =
            static_cast<std::uint16_t>(static_cast<unsigned>(out) | (s << 10));
      }
    return t;
  }();

  static constexpr std::array<std::array<std::uint16_t, entries>, states> dec = [] {
    std::array<std::array<std::uint16_t, entries>, states> t{};
    for (int s0 = 0; s0 < states; ++s0)
      for (int e = 0; e < entries; ++e) {
        unsigned s = static_cast<unsigned>(s0);
        std::array<int, D> chunk{};
        for (int l = Levels - 1; l >= 0; --l) {
          const int k = (e / pow3_int[static_cast<std::size_t>(D * l)]) % pow3_int[D];
          const int pos = peano_position<D>(s, k);
          for (int d = 0; d < D; ++d)
            chunk[static_cast<std::size_t>(d)] = chunk[static_cast<std::size_t>(d)] * 3 +
                                                 (pos / pow3_int[static_cast<std::size_t>(d)]) % 3;
          s ^= peano_reflection<D>(pos);
        }
        unsigned v = s << (axis_bits * D);
        for (int d = 0; d < D; ++d)
          v |= static_cast<unsigned>(chunk[static_cast<std::size_t>(d)]) << (axis_bits * d);
        t[static_cast<std::size_t>(s0)][static_cast<std::size_t>(e)] =
            static_cast<std::uint16_t>(v);
      }
    return t;
  }();
};

/// Tables of the 2D Peano encoder for coordinates below 3^20 (peano2_encode). A coordinate is
/// cut into pieces of 6 ternary digits by divisions by constants; both 3-level chunks of a
/// piece come from one lookup each for x and y. The state entering a chunk (the reflection
/// mask) needs no chain: it is the parity of the other axis' digit sum above the chunk, i.e.
/// the parity of (that coordinate / 27^(chunk+1)), since 3 is odd. A template (D = 2 only), as
/// peano2_encode, so the compiler builds the tables only where the 2D Peano curve is used.
template <int D = 2>
struct Peano2Encode {
  static_assert(D == 2);
  // piece[r], r = (coordinate / 729^k) mod 1458 (the piece plus the parity of everything
  // above it): the 32-bit word of the piece's two chunk keys, low chunk in bits 0-11, high
  // chunk in bits 16-27; a key is dx | dy << 5 | state << 10 (state bit 0: y parity above,
  // bit 1: x parity above). piece_x for the x coordinate, piece_y for y; OR them.
  static constexpr std::array<std::uint32_t, 1458> piece_x = [] {
    std::array<std::uint32_t, 1458> t{};
    for (unsigned r = 0; r < 1458; ++r) {
      const unsigned p = r % 729;
      t[r] = (p % 27) | (((r / 27) & 1U) << 11) | ((p / 27) << 16) | (((r / 729) & 1U) << 27);
    }
    return t;
  }();
  static constexpr std::array<std::uint32_t, 1458> piece_y = [] {
    std::array<std::uint32_t, 1458> t{};
    for (unsigned r = 0; r < 1458; ++r) {
      const unsigned p = r % 729;
      t[r] =
          ((p % 27) << 5) | (((r / 27) & 1U) << 10) | ((p / 27) << 21) | (((r / 729) & 1U) << 26);
    }
    return t;
  }();
  // rank[key]: the 3 rank digits (base 9) of a chunk; rank_hi = rank * 729 (the upper chunk
  // of a piece, so a piece's ranks combine with one add).
  static constexpr std::array<std::uint16_t, 4096> rank = [] {
    std::array<std::uint16_t, 4096> t{};
    for (unsigned k = 0; k < 4096; ++k) {
      const unsigned dx = k & 31U, dy = (k >> 5) & 31U, st = k >> 10;
      if (dx < 27 && dy < 27)
        t[k] = static_cast<std::uint16_t>(PeanoTable<D, 3>::enc[st][dx + 27 * dy] & 1023U);
    }
    return t;
  }();
  static constexpr std::array<std::uint32_t, 4096> rank_hi = [] {
    std::array<std::uint32_t, 4096> t{};
    for (unsigned k = 0; k < 4096; ++k) t[k] = rank[k] * 729U;
    return t;
  }();
};

/// 2D Peano index of coordinates below 3^20 (any level up to 20: leading zero digits keep the
/// root state and add rank 0).
template <int D = 2>
inline std::uint64_t peano2_encode(std::uint32_t x, std::uint32_t y) noexcept {
  using T = Peano2Encode<D>;
  constexpr std::uint32_t p1 = 729, p2 = 729 * 729, p3 = 729 * 729 * 729;
  const std::uint32_t x1 = x / p1, x2 = x / p2, x3 = x / p3;
  const std::uint32_t y1 = y / p1, y2 = y / p2, y3 = y / p3;
  // (x / 729^k) mod 1458
  const std::uint32_t rx0 = x - 1458 * (x1 >> 1), rx1 = x1 - 1458 * (x2 >> 1),
                      rx2 = x2 - 1458 * (x3 >> 1);
  const std::uint32_t ry0 = y - 1458 * (y1 >> 1), ry1 = y1 - 1458 * (y2 >> 1),
                      ry2 = y2 - 1458 * (y3 >> 1);
  const std::uint32_t k0 = T::piece_x[rx0] | T::piece_y[ry0];
  const std::uint32_t k1 = T::piece_x[rx1] | T::piece_y[ry1];
  const std::uint32_t k2 = T::piece_x[rx2] | T::piece_y[ry2];
  const std::uint32_t k3 = T::piece_x[x3] | T::piece_y[y3];  // x3, y3 < 9: one chunk
  const std::uint64_t r0 = T::rank[k0 & 4095U] + T::rank_hi[k0 >> 16];
  const std::uint64_t r1 = T::rank[k1 & 4095U] + T::rank_hi[k1 >> 16];
  const std::uint64_t r2 = T::rank[k2 & 4095U] + T::rank_hi[k2 >> 16];
  const std::uint64_t r3 = T::rank[k3 & 4095U];
  constexpr std::uint64_t b = 531441;  // 9^6: rank digits of one piece
  return ((r3 * b + r2) * b + r1) * b + r0;
}

}  // namespace irregular::detail
