// In-cache stable sort of (key, position) records: the finishing step of the local sort by curve
// index (distributed_sort.hpp), which splits the elements into cache-sized buckets first.
// An LSD radix sort with fixed 11-bit digits pays a 2048-entry histogram per digit however short
// the range; here each level takes a digit as wide as the range is long (about one record per
// bucket), so a bucket of a few hundred keys spread over 40 bits costs one counting scatter and
// an insertion sort of tiny buckets instead of four histogram passes.
#pragma once

#include <irregular/tree/detail/radix_sort.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace irregular::detail {

/// Buckets this short finish by insertion sort.
inline constexpr std::size_t pair_sort_insertion = 16;

/// Stable insertion sort of v[0, m) by key (records with equal keys keep their order).
template <class R>
void insertion_sort_by_key(R* v, std::size_t m) {
  for (std::size_t i = 1; i < m; ++i) {
    if (!(v[i].key < v[i - 1].key)) continue;
    const R x = v[i];
    std::size_t j = i;
    do {
      v[j] = v[j - 1];
      --j;
    } while (j > 0 && x.key < v[j - 1].key);
    v[j] = x;
  }
}

/// Sorts v[0, n) (records with an unsigned `key` member, trivially copyable) by key, stably,
/// in place. `scratch` and `count` are reused buffers. Each level scatters a range by its next
/// bit_width(m) key bits below those all its keys share; buckets longer than
/// pair_sort_insertion go to the next level, shorter ones are insertion-sorted.
template <class R>
void sort_pairs(R* v, std::size_t n, std::vector<R>& scratch, std::vector<std::uint32_t>& count) {
  static_assert(std::is_trivially_copyable_v<R>);
  using Index = std::remove_cvref_t<decltype(v->key)>;
  if (n <= pair_sort_insertion) {
    insertion_sort_by_key(v, n);
    return;
  }
  scratch.resize(n);
  struct Range {
    std::size_t b, e;
  };
  std::vector<Range> todo{{0, n}};
  while (!todo.empty()) {
    const Range r = todo.back();
    todo.pop_back();
    const std::size_t m = r.e - r.b;
    R* const a = v + r.b;
    Index lo = a[0].key, hi = a[0].key;
    for (std::size_t i = 1; i < m; ++i) {
      lo = std::min(lo, a[i].key);
      hi = std::max(hi, a[i].key);
    }
    if (lo == hi) continue;
    const int diff = used_bits(static_cast<Index>(lo ^ hi));  // every key agrees above this bit
    const int bits = std::min(diff, std::clamp(static_cast<int>(std::bit_width(m)), 4, 16));
    const int shift = diff - bits;
    const std::size_t buckets = std::size_t{1} << bits, mask = buckets - 1;
    count.assign(buckets + 1, 0);
    for (std::size_t i = 0; i < m; ++i)
      ++count[(static_cast<std::size_t>(a[i].key >> shift) & mask) + 1];
    for (std::size_t d = 0; d < buckets; ++d) count[d + 1] += count[d];
    R* const s = scratch.data();
    for (std::size_t i = 0; i < m; ++i)
      s[count[(static_cast<std::size_t>(a[i].key >> shift) & mask)]++] = a[i];
    std::memcpy(static_cast<void*>(a), s, m * sizeof(R));
    // count[d] is now the end of bucket d (the start of d + 1). With shift 0 the digit covers
    // every bit in which the keys differ: each bucket holds one key, already in input order.
    if (shift == 0) continue;
    for (std::size_t d = 0, begin = 0; d < buckets; begin = count[d], ++d) {
      const std::size_t len = count[d] - begin;
      if (len <= 1) continue;
      if (len <= pair_sort_insertion)
        insertion_sort_by_key(a + begin, len);
      else
        todo.push_back({r.b + begin, r.b + count[d]});
    }
  }
}

/// The same on a whole vector.
template <class R>
void sort_pairs(std::vector<R>& v, std::vector<R>& scratch, std::vector<std::uint32_t>& count) {
  sort_pairs(v.data(), v.size(), scratch, count);
}

}  // namespace irregular::detail
