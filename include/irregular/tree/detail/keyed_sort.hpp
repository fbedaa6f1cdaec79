// The curve order of keyed items for partition_points: input positions sorted stably by key.
// One counting scatter of (key, position) on the highest key bits in which the keys differ, then
// each bucket finished in cache by sort_pairs (pair_sort.hpp). An LSD radix sort moves every
// record through memory once per 11-bit digit (six passes for 62-bit keys); this reads the keys
// once, scatters them once and writes 4-byte positions out, so the passes after it (prefix sums,
// part ids) read positions rather than records.
#pragma once

#include <irregular/core/block_pool.hpp>
#include <irregular/tree/detail/pair_sort.hpp>
#include <irregular/tree/detail/radix_sort.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace irregular::detail {

/// Digit width of the scatter: 2048 buckets, few enough that every bucket's write stream stays
/// in the TLB and the caches.
inline constexpr int keyed_digit_bits = 11;
inline constexpr std::size_t keyed_radix = std::size_t{1} << keyed_digit_bits;
/// Buckets up to this long are finished in cache by sort_pairs.
inline constexpr std::size_t keyed_in_cache = std::size_t{1} << 16;

/// Digit counts of a scatter: count[d] keys have (key >> shift) & (keyed_radix - 1) == d.
using KeyedCounts = std::array<std::size_t, keyed_radix>;

/// Shift of the scatter digit for keys that agree above bit `diff` (diff = used_bits(lo ^ hi)).
[[nodiscard]] constexpr int keyed_shift(int diff) noexcept {
  return std::max(0, diff - keyed_digit_bits);
}

template <class Index>
[[nodiscard]] std::size_t keyed_digit(Index key, int shift) noexcept {
  return static_cast<std::size_t>(key >> shift) & (keyed_radix - 1);
}

/// Scratch array of n trivial values, uninitialised, on a block of the thread's pool
/// (core/block_pool.hpp): a second call finds its pages mapped instead of faulting in one per
/// 4 KiB, which cost as much as the sort itself.
template <class T>
class PooledArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  explicit PooledArray(std::size_t n)
      : block_(n > 0 ? BlockPool::take(n * sizeof(T)) : BlockPool::Block{}) {}
  PooledArray(const PooledArray&) = delete;
  PooledArray& operator=(const PooledArray&) = delete;
  ~PooledArray() { BlockPool::give(block_); }
  [[nodiscard]] T* get() const noexcept { return static_cast<T*>(block_.p); }

 private:
  BlockPool::Block block_;
};

/// A `ties` that leaves runs of equal keys in input order (the keys are the whole keys).
struct KeyedNoTies {
  template <class Pos>
  void operator()(Pos*, std::size_t) const noexcept {}
};

/// A key with its position in its bucket: what the in-cache finish sorts.
template <class Index, class Pos>
struct KeyedLocal {
  Index key;
  Pos pos;
};

/// Sorts positions [0, n) stably by keys[position] into out[0, n): out[j] is the input position
/// of the j-th key in key order, equal keys in input order. `lo`, `hi`: the least and largest
/// key; `count`: digit counts at `shift`, which must be keyed_shift(bits) for keys below
/// 2^bits (recounted here when every key has the same digit there). `done(b, e)` is called on
/// the sorted ranges out[b, e) in order, while they are in cache. `sorted_keys`, when not null,
/// receives the keys in that order. `ties(p, m)` is called on each run out[p, p + m) of m > 1 equal
/// keys (in input order) before `done`: keys that are a prefix of longer ones (the top bits, a
/// 4-byte sort) get their order finished there. Pos: an unsigned type that counts to n.
template <class Index, class Pos, class Ties, class Done>
void keyed_order(const Index* keys, std::size_t n, Index lo, Index hi, int shift,
                 KeyedCounts& count, Pos* out, Index* sorted_keys, Ties&& ties, Done&& done) {
  constexpr bool has_ties = !std::is_same_v<std::remove_cvref_t<Ties>, KeyedNoTies>;
  std::vector<KeyedLocal<Index, Pos>> local, scratch;
  std::vector<std::uint32_t> buckets;
  std::vector<Pos> before;
  // Sorts out[b, e), whose keys are at skey[b, e) (skey[i] the key of out[i]).
  const auto finish = [&](const Index* skey, std::size_t b, std::size_t e) {
    const std::size_t len = e - b;
    if (len > 1) {
      local.resize(len);
      for (std::size_t j = 0; j < len; ++j) local[j] = {skey[b + j], static_cast<Pos>(j)};
      sort_pairs(local.data(), len, scratch, buckets);
      // The bucket's positions, rearranged through a small copy that stays in cache.
      before.assign(out + b, out + e);
      for (std::size_t j = 0; j < len; ++j)
        out[b + j] = before[static_cast<std::size_t>(local[j].pos)];
      if (sorted_keys)
        for (std::size_t j = 0; j < len; ++j) sorted_keys[b + j] = local[j].key;
      if constexpr (has_ties) {
        for (std::size_t j = 0, t = 1; j < len; j = t++) {
          while (t < len && local[t].key == local[j].key) ++t;
          if (t - j > 1) ties(out + b + j, t - j);
        }
      }
    } else if (sorted_keys) {
      sorted_keys[b] = skey[b];
    }
    done(b, e);
  };
  if (n == 0) return;
  if (lo == hi) {  // one key: input order
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Pos>(i);
    if (sorted_keys) std::fill(sorted_keys, sorted_keys + n, lo);
    if (n > 1) ties(out, n);
    done(std::size_t{0}, n);
    return;
  }
  if (n <= keyed_in_cache) {
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Pos>(i);
    finish(keys, 0, n);
    return;
  }
  if ((lo >> shift) == (hi >> shift)) {  // one bucket: count the digit where the keys differ
    shift = keyed_shift(used_bits(static_cast<Index>(lo ^ hi)));
    count.fill(0);
    for (std::size_t i = 0; i < n; ++i) ++count[keyed_digit(keys[i], shift)];
  }
  KeyedCounts next;  // next free slot of each bucket
  std::size_t sum = 0;
  for (std::size_t d = 0; d < keyed_radix; ++d) {
    next[d] = sum;
    sum += count[d];
  }
  PooledArray<Index> scattered(n);
  Index* const skey = scattered.get();
  for (std::size_t i = 0; i < n; ++i) {
    const Index k = keys[i];
    const std::size_t to = next[keyed_digit(k, shift)]++;
    skey[to] = k;
    out[to] = static_cast<Pos>(i);
  }
  // next[d] is now the end of bucket d. A bucket with shift 0 holds one key, in input order;
  // one too long for the cache is still sorted by sort_pairs, only more slowly.
  for (std::size_t d = 0, b = 0; d < keyed_radix; b = next[d], ++d) {
    const std::size_t e = next[d];
    if (e == b) continue;
    if (shift == 0) {
      if (sorted_keys) std::copy(skey + b, skey + e, sorted_keys + b);
      if (e - b > 1) ties(out + b, e - b);
      done(b, e);
    } else {
      finish(skey, b, e);
    }
  }
}

}  // namespace irregular::detail
