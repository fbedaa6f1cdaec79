// Loop- and table-free 2D Hilbert decode (index -> cell) on a 64-bit index: the orientation at
// every level is a prefix parity of the digits above it, so all levels are done at once.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/curve/detail/morton_bits.hpp>

#include <array>
#include <cstdint>

namespace irregular::detail {

/// 2D Hilbert decode of `level` (<= 31) digits, bit-identical to the table path. The four
/// states of the minimized machine (hilbert_tables.hpp) are a select flag s and a complement
/// flag c: the high digit bit is (s ? y : x) ^ c and the low digit bit x ^ y in every state;
/// digit 0 toggles s, digit 3 toggles s and c, the others keep the state. So c at a level is
/// the parity of the 3 digits above it and s that of the 0 and 3 digits, which prefix xor scans
/// over the interleaved index give for all levels together.
inline std::array<coord_t, 2> hilbert2_decode_bits(std::uint64_t h, int level) noexcept {
  constexpr std::uint64_t even = 0x5555555555555555ULL;  // low digit bits
  // Pad the digits at the bottom to 32 levels (pad >= 1 since level <= 31; two steps keep the
  // shift below 64 at level 0): zero digits below never change the levels above.
  const int pad = 32 - level;
  h = (h << 1) << (2 * pad - 1);
  const std::uint64_t lo = h & even;
  const std::uint64_t hi = (h >> 1) & even;
  // Per level (bit 2i): the digit is 3 (both bits set) at even bits, the digit is 0 at odd bits.
  std::uint64_t t = (lo & hi) | ((~(lo | hi) & even) << 1);
  // Inclusive xor over this level and all above, per bit parity: shifts by whole levels.
  t ^= t >> 2;
  t ^= t >> 4;
  t ^= t >> 8;
  t ^= t >> 16;
  t ^= t >> 32;
  t >>= 2;  // exclusive: levels strictly above
  const std::uint64_t c = t & even;
  const std::uint64_t s = ((t >> 1) & even) ^ c;
  const std::uint64_t a = hi ^ c;  // the coordinate that the high bit reads, uncomplemented
  const std::uint64_t x = a ^ (s & lo);
  const std::uint64_t y = a ^ (~s & lo);
  const auto xy = morton_decode64<2>(x | (y << 1));
  return {xy[0] >> pad, xy[1] >> pad};
}

}  // namespace irregular::detail
