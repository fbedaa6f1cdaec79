// Lookup tables for the 2D and 3D Hilbert curve, built at compile time from the Skilling state
// machine (hilbert_skilling.hpp), so the table path gives exactly Skilling's indices.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/curve/detail/hilbert_skilling.hpp>
#include <irregular/curve/detail/morton_bits.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace irregular::detail {

/// A table the compiler fills: a plain array inside, because constant evaluation pays a call for
/// each std::array::operator[] (the 3D tables filled twice as fast this way).
template <class T, std::size_t N>
struct ConstTable {
  T v[N];
  constexpr const T& operator[](std::size_t i) const noexcept { return v[i]; }
};

/// The Skilling state machine reachable from the root (2D: 8 states, 3D: 48), minimized: states
/// that give every position the same digit and equivalent successors are merged (2D: 4 classes,
/// 3D: 24), which halves the tables (the 3D 3-level table then fits L1). A class is represented
/// by its first reachable state; class 0 is the root. Every table below is computed by the
/// compiler in each translation unit that uses it, so the loops here work on small integers
/// (packed states, one-level tables) rather than on SkillingState values: constant evaluation
/// costs per operation, and the 3D tables were seconds of it.
template <int D>
struct HilbertStates {
  static constexpr int children = 1 << D;

 private:
  static constexpr int max_raw = 64;
  // A state as one integer: perm (4 bits an axis), flip, parity.
  static constexpr std::uint64_t key(const SkillingState<D>& s) noexcept {
    std::uint64_t k = 0;
    for (int i = 0; i < D; ++i) k |= static_cast<std::uint64_t>(s.perm[i]) << (4 * i);
    return k | static_cast<std::uint64_t>(s.flip) << (4 * D) |
           static_cast<std::uint64_t>(s.parity) << (4 * D + 8);
  }
  struct Raw {
    std::array<SkillingState<D>, max_raw> st{};
    std::array<std::uint64_t, max_raw> key{};
    std::array<std::array<std::uint8_t, children>, max_raw> next{};  // by position
    std::array<std::array<std::uint8_t, children>, max_raw> digit{};
    int n = 0;
  };
  // Breadth-first over positions; next/digit are indexed by local position, not transformed bits.
  static constexpr Raw raw = [] {
    Raw r;
    r.st[0] = skilling_root<D>();
    r.key[0] = key(r.st[0]);
    r.n = 1;
    for (int i = 0; i < r.n; ++i)
      for (unsigned pos = 0; pos < children; ++pos) {
        const auto ns = skilling_next<D>(r.st[i], skilling_transformed<D>(r.st[i], pos));
        const std::uint64_t k = key(ns);
        int f = -1;
        for (int j = 0; j < r.n && f < 0; ++j)
          if (r.key[j] == k) f = j;
        if (f < 0) {
          f = r.n;
          r.st[r.n] = ns;
          r.key[r.n++] = k;
        }
        r.next[i][pos] = static_cast<std::uint8_t>(f);
        r.digit[i][pos] = static_cast<std::uint8_t>(skilling_digit<D>(r.st[i], pos));
      }
    return r;
  }();
  // Moore refinement: classes by digit function, then split by successor classes until a round
  // splits none (rounds only split, so an unchanged count is the fixed point).
  static constexpr std::array<std::uint8_t, max_raw> cls = [] {
    std::array<std::uint8_t, max_raw> cl{};
    int classes = 0;
    for (int round = 0; round <= raw.n; ++round) {
      std::array<std::uint8_t, max_raw> nc{};
      int m = 0;
      for (int s = 0; s < raw.n; ++s) {
        int f = -1;
        for (int r = 0; r < s && f < 0; ++r) {
          bool same = true;
          for (unsigned p = 0; p < children && same; ++p)
            same = raw.digit[s][p] == raw.digit[r][p] &&
                   (round == 0 || cl[raw.next[s][p]] == cl[raw.next[r][p]]);
          if (same) f = nc[r];
        }
        nc[s] = static_cast<std::uint8_t>(f < 0 ? m++ : f);
      }
      cl = nc;
      if (m == classes) break;
      classes = m;
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
        const std::uint64_t k = key(skilling_next<D>(states[c], y));
        for (int j = 0; j < raw.n; ++j)
          if (raw.key[j] == k) t[c][y] = cls[j];
      }
    return t;
  }();
  /// One level by local position: enc1[(c << D) | pos] = digit | next class << D; by digit:
  /// dec1[(c << D) | digit] = position | next class << D. The multi-level tables chain these.
  using Level = ConstTable<std::uint16_t, static_cast<std::size_t>(count) * children>;
  static constexpr Level enc1 = [] {
    Level t{};
    for (int c = 0; c < count; ++c)
      for (unsigned pos = 0; pos < children; ++pos)
        t.v[(c << D) | pos] = static_cast<std::uint16_t>(
            skilling_digit<D>(states[c], pos) |
            static_cast<unsigned>(next[c][skilling_transformed<D>(states[c], pos)]) << D);
    return t;
  }();
  static constexpr Level dec1 = [] {
    Level t{};
    for (int c = 0; c < count; ++c)
      for (unsigned digit = 0; digit < children; ++digit)
        t.v[(c << D) | digit] = static_cast<std::uint16_t>(
            skilling_position<D>(states[c], digit) |
            static_cast<unsigned>(next[c][skilling_y_of_digit<D>(states[c], digit)]) << D);
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

 private:
  using Table = ConstTable<std::uint16_t, size>;
  // Levels one-level steps through `one` (S::enc1 or S::dec1) from every state and digit string.
  static constexpr Table chain(const typename S::Level& one) {
    Table t{};
    constexpr unsigned low = (1U << D) - 1;
    for (unsigned s0 = 0; s0 < static_cast<unsigned>(S::count); ++s0)
      for (unsigned m = 0; m <= mask; ++m) {
        unsigned s = s0;
        unsigned out = 0;
        for (int l = Levels - 1; l >= 0; --l) {
          const unsigned e = one.v[(s << D) | ((m >> (l * D)) & low)];
          out = (out << D) | (e & low);
          s = e >> D;
        }
        t.v[(static_cast<std::size_t>(s0) << bits) | m] =
            static_cast<std::uint16_t>(out | (s << state_shift));
      }
    return t;
  }

 public:
  // Flat tables indexed by (state << bits) | digits; an entry's high part (e & ~mask) is thus
  // already the next row's offset, which keeps the dependent chain between lookups short.
  // enc[(state << bits) | morton digits of Levels levels] -> hilbert digits | next << bits
  static constexpr Table enc = chain(S::enc1);
  // dec[(state << bits) | hilbert digits of Levels levels] -> morton digits | next << bits
  static constexpr Table dec = chain(S::dec1);
};

/// The enc table of HilbertTable<D, Levels> split in two arrays read with the same index:
/// row = next state << bits (the next row's offset), dig = the output digits. The dependent
/// chain between lookups is then one add and one load.
template <int D, int Levels>
struct HilbertSplitTable {
  using T = HilbertTable<D, Levels>;
  static constexpr int bits = T::bits;
  using Digits = std::conditional_t<(bits <= 8), std::uint8_t, std::uint16_t>;
  static constexpr ConstTable<std::uint16_t, T::size> row = [] {
    ConstTable<std::uint16_t, T::size> r{};
    for (std::size_t i = 0; i < T::size; ++i)
      r.v[i] = static_cast<std::uint16_t>(T::enc.v[i] & ~T::mask);
    return r;
  }();
  static constexpr ConstTable<Digits, T::size> dig = [] {
    ConstTable<Digits, T::size> r{};
    for (std::size_t i = 0; i < T::size; ++i) r.v[i] = static_cast<Digits>(T::enc.v[i] & T::mask);
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
    using S = HilbertSplitTable<D, 4>;  // dependent: built only where 2D is used
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
    using T = HilbertTable<D, 3>;  // dependent: built only where 3D is used
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
/// and the padding levels are shifted out of the coordinates. A template (D = 3 only) so that
/// its table is built only in translation units that decode 3D indices.
template <int D = 3>
inline std::array<coord_t, D> hilbert3_decode_fixed(std::uint64_t i, int level) noexcept {
  static_assert(D == 3);
  const int pad = 21 - level;
  const std::uint64_t h = i << (3 * pad);  // 3 * level bits < 64: nothing falls off the top
  using T = HilbertTable<D, 3>;
  std::uint64_t m = 0;
  unsigned row = 0;
#pragma GCC unroll 7
  for (int k = 6; k >= 0; --k) {
    const unsigned e = T::dec[row | static_cast<unsigned>((h >> (9 * k)) & T::mask)];
    m = (m << 9) | (e & T::mask);
    row = e & ~T::mask;
  }
  const auto x = morton_decode64<D>(m);
  return {x[0] >> pad, x[1] >> pad, x[2] >> pad};
}

}  // namespace irregular::detail
