// Lookup tables for the 2D and 3D Hilbert curve, built at compile time from the Skilling state
// machine (hilbert_skilling.hpp), so the table path gives exactly Skilling's indices.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/curve/detail/hilbert_skilling.hpp>
#include <irregular/curve/detail/morton_bits.hpp>

#include <array>
#include <cstdint>
#include <type_traits>

namespace irregular::detail {

/// The Skilling state machine reachable from the root (2D: 8 states, 3D: 48), minimized: states
/// that give every position the same digit and equivalent successors are merged (2D: 4 classes,
/// 3D: 24), which halves the tables (the 3D 3-level table then fits L1). A class is represented
/// by its first reachable state; class 0 is the root.
template <int D>
struct HilbertStates {
  static constexpr int children = 1 << D;

 private:
  static constexpr int max_raw = 64;
  struct Raw {
    std::array<SkillingState<D>, max_raw> st{};
    std::array<std::array<std::uint8_t, children>, max_raw> next{};  // by position
    std::array<std::array<std::uint8_t, children>, max_raw> digit{};
    int n = 0;
  };
  // Breadth-first over positions; next/digit are indexed by local position, not transformed bits.
  static constexpr Raw raw = [] {
    Raw r;
    r.st[0] = skilling_root<D>();
    r.n = 1;
    for (int i = 0; i < r.n; ++i)
      for (unsigned pos = 0; pos < children; ++pos) {
        const auto ns = skilling_next<D>(r.st[i], skilling_transformed<D>(r.st[i], pos));
        int f = -1;
        for (int j = 0; j < r.n; ++j)
          if (r.st[j] == ns) f = j;
        if (f < 0) {
          f = r.n;
          r.st[r.n++] = ns;
        }
        r.next[i][pos] = static_cast<std::uint8_t>(f);
        r.digit[i][pos] = static_cast<std::uint8_t>(skilling_digit<D>(r.st[i], pos));
      }
    return r;
  }();
  // Moore refinement: classes by digit function, then split by successor classes until stable.
  static constexpr std::array<std::uint8_t, max_raw> cls = [] {
    std::array<std::uint8_t, max_raw> cl{};
    for (int round = 0; round <= raw.n; ++round) {
      std::array<std::uint8_t, max_raw> nc{};
      int m = 0;
      for (int s = 0; s < raw.n; ++s) {
        int f = -1;
        for (int r = 0; r < s && f < 0; ++r) {
          bool same = true;
          for (unsigned p = 0; p < children; ++p)
            same = same && raw.digit[s][p] == raw.digit[r][p] &&
                   (round == 0 || cl[raw.next[s][p]] == cl[raw.next[r][p]]);
          if (same) f = nc[r];
        }
        nc[s] = static_cast<std::uint8_t>(f < 0 ? m++ : f);
      }
      cl = nc;
    }
    return cl;
  }();

 public:
  static constexpr int count = [] {
    int m = 0;
    for (int s = 0; s < raw.n; ++s) m = m > cls[s] + 1 ? m : cls[s] + 1;
    return m;
  }();
  /// Representative Skilling state of each class.
  static constexpr std::array<SkillingState<D>, count> states = [] {
    std::array<SkillingState<D>, count> st{};
    for (int s = raw.n - 1; s >= 0; --s) st[cls[s]] = raw.st[s];
    return st;
  }();
  // next[c][y]: class after a level whose transformed bits (in the representative) are y.
  static constexpr std::array<std::array<std::uint8_t, children>, count> next = [] {
    std::array<std::array<std::uint8_t, children>, count> t{};
    for (int c = 0; c < count; ++c)
      for (unsigned y = 0; y < children; ++y) {
        const auto ns = skilling_next<D>(states[c], y);
        for (int j = 0; j < raw.n; ++j)
          if (raw.st[j] == ns) t[c][y] = cls[j];
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
/// 2D: 32 levels, 4 per lookup (split tables, 3 KiB); 3D: 21 levels, 3 per lookup (24 KiB).
template <int D>
inline std::uint64_t hilbert_encode_fixed(const std::array<coord_t, D>& anchor,
                                          int level) noexcept {
  constexpr int levels = D == 2 ? 32 : 21;
  const int pad = levels - level;
  std::uint64_t h = 0;
  if constexpr (D == 2) {
    std::array<coord_t, D> x{};
    for (int d = 0; d < D; ++d)
      x[static_cast<std::size_t>(d)] = anchor[static_cast<std::size_t>(d)] << pad;
    const std::uint64_t m = morton_encode64<D>(x);
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
    // One 24 KiB table: a split pair (36 KiB) would not stay in L1. The code is padded with
    // one shift (3 * level bits < 64, so nothing falls off the top).
    const std::uint64_t m = morton_encode64<D>(anchor) << (3 * pad);
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

/// 3D Hilbert cell of an index that fits 64 bits, the inverse of hilbert_encode_fixed<3>: the
/// index is padded with zero digits at the bottom up to 21 levels (7 unrolled 3-level lookups)
/// and the padding levels are shifted out of the coordinates.
inline std::array<coord_t, 3> hilbert3_decode_fixed(std::uint64_t i, int level) noexcept {
  const int pad = 21 - level;
  const std::uint64_t h = i << (3 * pad);  // 3 * level bits < 64: nothing falls off the top
  using T = HilbertTable<3, 3>;
  std::uint64_t m = 0;
  unsigned row = 0;
#pragma GCC unroll 7
  for (int k = 6; k >= 0; --k) {
    const unsigned e = T::dec[row | static_cast<unsigned>((h >> (9 * k)) & T::mask)];
    m = (m << 9) | (e & T::mask);
    row = e & ~T::mask;
  }
  const auto x = morton_decode64<3>(m);
  return {x[0] >> pad, x[1] >> pad, x[2] >> pad};
}

}  // namespace irregular::detail
