// Peano curve internals: the per-level child order and reflections (the classic switch-back
// Peano curve, any D), and compile-time chunk tables for the 2D and 3D fast paths.
#pragma once

#include <array>
#include <cstdint>
#include <irregular/core/cell.hpp>

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

}  // namespace irregular::detail
