// LSD radix sort of finest curve indices: the sorting step of the serial H-Tree build
// (baiardi-2001 §3, the SFC visit needs the elements in curve order). 11-bit digits, one
// histogram pass for all digits, digits on which every key agrees are skipped.
#pragma once

#include <irregular/core/index.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular::detail {

/// Sorts keys ascending. `bits`: keys are < 2^bits (fewer passes for short keys). Uses a
/// scratch buffer of keys.size(). 128-bit keys fall back to std::sort.
template <class Index>
void radix_sort(std::vector<Index>& keys, int bits = index_bits<Index>) {
  if constexpr (!std::is_same_v<Index, std::uint32_t> && !std::is_same_v<Index, std::uint64_t>) {
    std::sort(keys.begin(), keys.end());
  } else {
    const std::size_t n = keys.size();
    if (n < 256) {
      std::sort(keys.begin(), keys.end());
      return;
    }
    constexpr int digit_bits = 11;
    constexpr std::size_t radix = std::size_t{1} << digit_bits;
    constexpr int max_digits = (index_bits<Index> + digit_bits - 1) / digit_bits;
    bits = std::clamp(bits, 1, index_bits<Index>);
    const int digits = (bits + digit_bits - 1) / digit_bits;
    std::vector<std::array<std::size_t, radix>> hist(static_cast<std::size_t>(max_digits));
    for (auto& h : hist) h.fill(0);
    for (const Index k : keys)
      for (int d = 0; d < digits; ++d)
        ++hist[static_cast<std::size_t>(d)][(k >> (d * digit_bits)) & (radix - 1)];
    std::vector<Index> tmp(n);
    Index* src = keys.data();
    Index* dst = tmp.data();
    for (int d = 0; d < digits; ++d) {
      auto& h = hist[static_cast<std::size_t>(d)];
      const int shift = d * digit_bits;
      if (h[(src[0] >> shift) & (radix - 1)] == n) continue;  // all keys share this digit
      std::size_t sum = 0;
      for (auto& c : h) sum += std::exchange(c, sum);
      for (std::size_t i = 0; i < n; ++i) {
        const Index k = src[i];
        dst[h[(k >> shift) & (radix - 1)]++] = k;
      }
      std::swap(src, dst);
    }
    if (src != keys.data()) keys.swap(tmp);
  }
}

/// Number of bits of `x` up to its highest set bit (0 for 0); `x` an unsigned curve index.
template <class Index>
[[nodiscard]] constexpr int used_bits(Index x) noexcept {
  if constexpr (sizeof(Index) > 8) {
    const auto hi = static_cast<std::uint64_t>(x >> 64);
    return hi != 0 ? 64 + std::bit_width(hi) : std::bit_width(static_cast<std::uint64_t>(x));
  } else {
    return std::bit_width(x);
  }
}

/// Number of bits needed for the largest key of `records` (key(r) an unsigned curve index).
template <class R, class KeyOf>
[[nodiscard]] int key_bits(const std::vector<R>& records, KeyOf key) {
  using Index = std::remove_cvref_t<decltype(key(records.front()))>;
  Index all{0};
  for (const R& r : records) all |= key(r);
  return used_bits(all);
}

/// Stable LSD radix sort of records by an unsigned key (uint32, uint64 or uint128): equal keys
/// keep their order in `v`. `key(r)` reads a record's key; keys are < 2^bits. 11-bit digits,
/// one histogram pass for all digits, digits every key shares are skipped; `scratch` is
/// resized to v.size() (pass the same buffer again to reuse its memory).
template <class R, class KeyOf>
void radix_sort_records(std::vector<R>& v, KeyOf key, int bits, std::vector<R>& scratch) {
  using Index = std::remove_cvref_t<decltype(key(v.front()))>;
  const std::size_t n = v.size();
  if (n < 256) {
    std::stable_sort(v.begin(), v.end(), [&](const R& a, const R& b) { return key(a) < key(b); });
    return;
  }
  constexpr int digit_bits = 11;
  constexpr std::size_t radix = std::size_t{1} << digit_bits;
  constexpr int max_digits = (index_bits<Index> + digit_bits - 1) / digit_bits;
  bits = std::clamp(bits, 1, index_bits<Index>);
  const int digits = (bits + digit_bits - 1) / digit_bits;
  std::vector<std::array<std::size_t, radix>> hist(static_cast<std::size_t>(max_digits));
  for (int d = 0; d < digits; ++d) hist[static_cast<std::size_t>(d)].fill(0);
  for (const R& r : v) {
    const Index k = key(r);
    for (int d = 0; d < digits; ++d)
      ++hist[static_cast<std::size_t>(d)]
            [static_cast<std::size_t>(k >> (d * digit_bits)) & (radix - 1)];
  }
  scratch.resize(n);
  R* src = v.data();
  R* dst = scratch.data();
  for (int d = 0; d < digits; ++d) {
    auto& h = hist[static_cast<std::size_t>(d)];
    const int shift = d * digit_bits;
    if (h[static_cast<std::size_t>(key(src[0]) >> shift) & (radix - 1)] == n)
      continue;  // shared digit
    std::size_t sum = 0;
    for (auto& c : h) sum += std::exchange(c, sum);
    for (std::size_t i = 0; i < n; ++i)
      dst[h[static_cast<std::size_t>(key(src[i]) >> shift) & (radix - 1)]++] = std::move(src[i]);
    std::swap(src, dst);
  }
  if (src != v.data()) v.swap(scratch);
}

template <class R, class KeyOf>
void radix_sort_records(std::vector<R>& v, KeyOf key, int bits) {
  std::vector<R> scratch;
  radix_sort_records(v, key, bits, scratch);
}

}  // namespace irregular::detail
