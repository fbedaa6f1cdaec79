// Lookup tables for the 2D and 3D Hilbert curve, built at compile time from the Skilling state
// machine (hilbert_skilling.hpp), so the table path gives exactly Skilling's indices.
#pragma once

#include <array>
#include <cstdint>
#include <irregular/core/cell.hpp>
#include <irregular/curve/detail/hilbert_skilling.hpp>
#include <irregular/curve/detail/morton_bits.hpp>
#include <type_traits>

namespace irregular::detail {

/// Reachable Skilling states from the root (2D: 8, 3D: 48), in breadth-first order.
template <int D>
struct HilbertStates {
  static constexpr int children = 1 << D;
  static constexpr int count = [] {
    std::array<SkillingState<D>, 64> st{};
    int n = 1;
    st[0] = skilling_root<D>();
    for (int i = 0; i < n; ++i)
      for (unsigned y = 0; y < children; ++y) {
        const auto ns = skilling_next<D>(st[i], y);
        bool found = false;
        for (int j = 0; j < n; ++j) found = found || st[j] == ns;
        if (!found) st[n++] = ns;
      }
    return n;
  }();
  static constexpr std::array<SkillingState<D>, count> states = [] {
    std::array<SkillingState<D>, count> st{};
    int n = 1;
    st[0] = skilling_root<D>();
    for (int i = 0; i < n; ++i)
      for (unsigned y = 0; y < children; ++y) {
        const auto ns = skilling_next<D>(st[i], y);
        bool found = false;
        for (int j = 0; j < n; ++j) found = found || st[j] == ns;
        if (!found) st[n++] = ns;
      }
    return st;
  }();
  // next[s][y]: state number after a level whose transformed bits are y.
  static constexpr std::array<std::array<std::uint8_t, children>, count> next = [] {
    std::array<std::array<std::uint8_t, children>, count> t{};
    for (int i = 0; i < count; ++i)
      for (unsigned y = 0; y < children; ++y) {
        const auto ns = skilling_next<D>(states[i], y);
        for (int j = 0; j < count; ++j)
          if (states[j] == ns) t[i][y] = static_cast<std::uint8_t>(j);
      }
    return t;
  }();
};

/// Entry of a table: low `bits` bits the output digits, the bits above the next state number.
template <int D, int Levels>
struct HilbertTable {
  using S = HilbertStates<D>;
  static constexpr int bits = D * Levels;
  static constexpr unsigned mask = (1U << bits) - 1;
  static constexpr int state_shift = bits;
  static_assert(S::count <= 255 && (S::count - 1) < (1 << (16 - bits)), "entry must fit 16 bits");
  static constexpr std::size_t size = static_cast<std::size_t>(S::count) << bits;
  // Flat tables indexed by (state << bits) | digits; an entry's high part (e & ~mask) is thus
  // already the next row's offset, which keeps the dependent chain between lookups short.
  // enc[(state << bits) | morton digits of Levels levels] -> hilbert digits | next << bits
  static constexpr std::array<std::uint16_t, size> enc = [] {
    std::array<std::uint16_t, size> t{};
    for (int s0 = 0; s0 < S::count; ++s0)
      for (unsigned m = 0; m <= mask; ++m) {
        int s = s0;
        unsigned out = 0;
        for (int l = Levels - 1; l >= 0; --l) {
          const unsigned pos = (m >> (l * D)) & ((1U << D) - 1);
          const auto& st = S::states[s];
          out = (out << D) | skilling_digit<D>(st, pos);
          s = S::next[s][skilling_transformed<D>(st, pos)];
        }
        t[(static_cast<std::size_t>(s0) << bits) | m] =
            static_cast<std::uint16_t>(out | (static_cast<unsigned>(s) << state_shift));
      }
    return t;
  }();
  // dec[(state << bits) | hilbert digits of Levels levels] -> morton digits | next << bits
  static constexpr std::array<std::uint16_t, size> dec = [] {
    std::array<std::uint16_t, size> t{};
    for (int s0 = 0; s0 < S::count; ++s0)
      for (unsigned h = 0; h <= mask; ++h) {
        int s = s0;
        unsigned out = 0;
        for (int l = Levels - 1; l >= 0; --l) {
          const unsigned digit = (h >> (l * D)) & ((1U << D) - 1);
          const auto& st = S::states[s];
          out = (out << D) | skilling_position<D>(st, digit);
          s = S::next[s][skilling_y_of_digit<D>(st, digit)];
        }
        t[(static_cast<std::size_t>(s0) << bits) | h] =
            static_cast<std::uint16_t>(out | (static_cast<unsigned>(s) << state_shift));
      }
    return t;
  }();
};

/// The enc table of HilbertTable<D, Levels> split in two arrays read with the same index:
/// row = next state << bits (the next row's offset), dig = the output digits. The dependent
/// chain between lookups is then one add and one load.
template <int D, int Levels>
struct HilbertSplitTable {
  using T = HilbertTable<D, Levels>;
  static constexpr int bits = T::bits;
  using Digits = std::conditional_t<(bits <= 8), std::uint8_t, std::uint16_t>;
  static constexpr std::array<std::uint16_t, T::size> row = [] {
    std::array<std::uint16_t, T::size> r{};
    for (std::size_t i = 0; i < T::size; ++i)
      r[i] = static_cast<std::uint16_t>(T::enc[i] & ~T::mask);
    return r;
  }();
  static constexpr std::array<Digits, T::size> dig = [] {
    std::array<Digits, T::size> r{};
    for (std::size_t i = 0; i < T::size; ++i) r[i] = static_cast<Digits>(T::enc[i] & T::mask);
    return r;
  }();
};

/// 2D/3D Hilbert index of a cell whose index fits 64 bits, with a fixed, fully unrolled number
/// of lookups: the coordinates are padded with zero levels at the bottom up to Levels * Chunks
/// levels (bottom levels never change higher digits), and the padding digits are shifted out.
/// 2D: 32 levels, 4 per lookup (split tables, 4 KiB); 3D: 21 levels, 3 per lookup.
template <int D>
inline std::uint64_t hilbert_encode_fixed(const std::array<coord_t, D>& anchor,
                                          int level) noexcept {
  constexpr int levels = D == 2 ? 32 : 21;
  const int pad = levels - level;
  std::array<coord_t, D> x{};
  for (int d = 0; d < D; ++d)
    x[static_cast<std::size_t>(d)] = anchor[static_cast<std::size_t>(d)] << pad;
  const std::uint64_t m = morton_encode64<D>(x);
  std::uint64_t h = 0;
  if constexpr (D == 2) {
    using S = HilbertSplitTable<2, 4>;
    unsigned row = 0;
#pragma GCC unroll 8
    for (int k = 7; k >= 0; --k) {
      const unsigned i = row + static_cast<unsigned>((m >> (8 * k)) & 255U);
      h = (h << 8) | S::dig[i];
      row = S::row[i];
    }
    // pad == 32 (level 0) would shift by the full width.
    return level == 0 ? 0 : h >> (2 * pad);
  } else {
    // One 48 KiB table: the split pair would not stay in L1.
    using T = HilbertTable<3, 3>;
    unsigned row = 0;
#pragma GCC unroll 7
    for (int k = 6; k >= 0; --k) {
      const unsigned e = T::enc[row | static_cast<unsigned>((m >> (9 * k)) & T::mask)];
      h = (h << 9) | (e & T::mask);
      row = e & ~T::mask;
    }
    return h >> (3 * pad);
  }
}

}  // namespace irregular::detail
