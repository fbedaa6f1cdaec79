// Local sorts by curve key, in one place: elements with their keys sorted stably by key (an MSD
// scatter into cache-sized buckets finished by an in-cache sort of (key, position) pairs, or a
// stable LSD radix sort of the pairs for elements that cannot be default constructed), and the
// stable merge of sorted runs. The local step of the distributed sample sort (baiardi-2001 §3:
// the SFC visit orders the elements) and of every remap that receives unsorted elements.
#pragma once

#include <irregular/core/detail/headroom.hpp>
#include <irregular/core/index.hpp>
#include <irregular/tree/detail/pair_sort.hpp>
#include <irregular/tree/detail/radix_sort.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular {

namespace detail {

/// A key with the position it came from (the stable tie-break).
template <class Index, class Pos>
struct KeyPos {
  Index key;
  Pos pos;
};

/// Moves elements[order[i].pos] to position i (each element moves once) and sets keys[i].
/// `EV`, `KV`: std::vector or SpliceVector (the store's arrays), here and below.
template <class EV, class KV, class Order>
void apply_order(EV& elements, KV& keys, const Order& order) {
  const std::size_t n = order.size();
  EV out;
  detail::reserve_headroom(out, n);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(std::move(elements[static_cast<std::size_t>(order[i].pos)]));
    keys[i] = order[i].key;
  }
  elements.swap(out);
}

/// Calls f.template operator()<Pos>() with the narrowest position type that counts to n.
template <class F>
void with_position_type(std::size_t n, F&& f) {
  if (n <= std::numeric_limits<std::uint32_t>::max())
    f.template operator()<std::uint32_t>();
  else
    f.template operator()<std::uint64_t>();
}

/// Sorts elements[b, e) and keys[b, e) by key, stably: an in-cache sort of (key, position)
/// pairs (tree/detail/pair_sort.hpp), then each element moves once into place through `tmp`.
/// Meant for ranges that fit in cache; `order`, `scratch`, `count`, `tmp` are reused buffers.
template <class EV, class KV, class Index, class Pos>
void sort_range_by_pairs(EV& elements, KV& keys, std::size_t b, std::size_t e,
                         std::vector<KeyPos<Index, Pos>>& order,
                         std::vector<KeyPos<Index, Pos>>& scratch,
                         std::vector<std::uint32_t>& count,
                         std::vector<typename EV::value_type>& tmp) {
  using E = typename EV::value_type;
  const std::size_t m = e - b;
  order.resize(m);
  Index* const k = keys.data() + b;  // raw pointers: see msd_sort_range
  E* const el = elements.data() + b;
  for (std::size_t i = 0; i < m; ++i) order[i] = {k[i], static_cast<Pos>(i)};
  sort_pairs(order, scratch, count);
  tmp.clear();
  for (std::size_t i = 0; i < m; ++i)
    tmp.push_back(std::move(el[static_cast<std::size_t>(order[i].pos)]));
  for (std::size_t i = 0; i < m; ++i) {
    el[i] = std::move(tmp[i]);
    k[i] = order[i].key;
  }
}

/// Stable MSD radix sort of elements[b, e) (keys alike): one counting scatter on the 11
/// highest bits in which the keys of the range differ, so that each bucket is small enough to
/// be finished in cache by sort_range_by_pairs (larger buckets recurse). Every element moves
/// once per level through memory and once more in cache, never by a random gather over the
/// whole array.
template <class EV, class KV>
void msd_sort_range(EV& elements, KV& keys, std::size_t b, std::size_t e) {
  using E = typename EV::value_type;
  using Index = typename KV::value_type;
  constexpr std::size_t in_cache = std::size_t{1} << 16;
  constexpr int digit_bits = 11;
  constexpr std::size_t radix = std::size_t{1} << digit_bits;
  using Pos = std::uint32_t;
  std::vector<KeyPos<Index, Pos>> order, scratch;
  std::vector<std::uint32_t> count_buffer;
  std::vector<E> tmp;
  // The loops below run over raw pointers: a store through a SpliceVector's operator[] may
  // alias its own pointer members, and the compiler would reload them every element.
  const auto bounds_of = [&](std::size_t x, std::size_t y) {
    const Index* k = keys.data();
    Index lo = k[x], hi = k[x];
    for (std::size_t i = x + 1; i < y; ++i) {
      lo = std::min(lo, k[i]);
      hi = std::max(hi, k[i]);
    }
    return std::pair{lo, hi};
  };
  // Ranges still to sort (an explicit stack: no deep recursion).
  struct Range {
    std::size_t b, e;
  };
  std::vector<Range> todo{{b, e}};
  EV out_el;
  KV out_keys;
  while (!todo.empty()) {
    const Range r = todo.back();
    todo.pop_back();
    if (r.e - r.b < 2) continue;
    if (r.e - r.b <= in_cache) {  // the pair sort finds the range's key bounds itself
      sort_range_by_pairs(elements, keys, r.b, r.e, order, scratch, count_buffer, tmp);
      continue;
    }
    const auto [lo, hi] = bounds_of(r.b, r.e);
    if (lo == hi) continue;
    const int diff = used_bits(static_cast<Index>(lo ^ hi));  // the keys agree above this bit
    const int shift = std::max(0, diff - digit_bits);
    std::vector<std::size_t> count(radix + 1, 0);
    const Index* const in_keys = keys.data();
    for (std::size_t i = r.b; i < r.e; ++i)
      ++count[(static_cast<std::size_t>(in_keys[i] >> shift) & (radix - 1)) + 1];
    for (std::size_t d = 0; d < radix; ++d) count[d + 1] += count[d];
    const std::size_t m = r.e - r.b;
    if (m == elements.size() && out_el.capacity() < m) {  // these buffers become the arrays
      detail::reserve_headroom(out_el, m);
      detail::reserve_headroom(out_keys, m);
    }
    resize_for_overwrite(out_el, m);  // every slot is written below
    resize_for_overwrite(out_keys, m);
    std::vector<std::size_t> at(count.begin(), count.end() - 1);
    E* const in_el = elements.data();
    E* const to_el = out_el.data();
    Index* const to_keys = out_keys.data();
    std::size_t* const next = at.data();
    for (std::size_t i = r.b; i < r.e; ++i) {
      const Index k = in_keys[i];
      const std::size_t to = next[static_cast<std::size_t>(k >> shift) & (radix - 1)]++;
      to_el[to] = std::move(in_el[i]);
      to_keys[to] = k;
    }
    if (m == elements.size()) {  // the whole array: the buffers change places
      elements.swap(out_el);
      keys.swap(out_keys);
      EV().swap(out_el);
    } else {
      std::move(out_el.begin(), out_el.begin() + static_cast<std::ptrdiff_t>(m),
                elements.begin() + static_cast<std::ptrdiff_t>(r.b));
      std::copy(out_keys.begin(), out_keys.begin() + static_cast<std::ptrdiff_t>(m),
                keys.begin() + static_cast<std::ptrdiff_t>(r.b));
    }
    if (shift == 0) continue;  // the buckets hold one key each
    for (std::size_t d = 0; d < radix; ++d)
      if (count[d + 1] - count[d] > 1) todo.push_back({r.b + count[d], r.b + count[d + 1]});
  }
}

}  // namespace detail

/// Sorts elements (and their keys) locally by key; equal keys keep their input order.
/// Default-constructible elements: msd_sort_range (no random gather over the whole array);
/// others: a stable LSD radix sort of (key, position) pairs, then each element moves once.
template <class EV, class KV>
void sort_by_key(EV& elements, KV& keys) {
  using E = typename EV::value_type;
  using Index = typename KV::value_type;
  const std::size_t n = elements.size();
  if (std::is_sorted(keys.begin(), keys.end())) return;
  if constexpr (std::is_default_constructible_v<E> && std::is_move_assignable_v<E>) {
    if (n <= std::numeric_limits<std::uint32_t>::max()) {
      detail::msd_sort_range(elements, keys, 0, n);
      return;
    }
  }
  detail::with_position_type(n, [&]<class Pos>() {
    std::vector<detail::KeyPos<Index, Pos>> order(n);
    Index all{0};
    for (std::size_t i = 0; i < n; ++i) {
      order[i] = {keys[i], static_cast<Pos>(i)};
      all |= keys[i];
    }
    detail::radix_sort_records(
        order, [](const detail::KeyPos<Index, Pos>& x) { return x.key; }, detail::used_bits(all));
    detail::apply_order(elements, keys, order);
  });
}

/// Stable merge of the sorted runs elements[offsets[i] .. offsets[i+1]) (keys alike): equal
/// keys keep run order, then position order. `spare` is an empty buffer whose capacity (pages
/// already touched) takes the merged elements when there are two runs.
template <class EV, class KV>
void merge_sorted_runs(EV& elements, KV& keys, std::span<const std::size_t> offsets,
                       EV&& spare = {}) {
  using Index = typename KV::value_type;
  const std::size_t n = keys.size();
  std::vector<std::size_t> bnd;  // boundaries of the non-empty runs
  bnd.push_back(0);
  for (std::size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i] != bnd.back()) bnd.push_back(offsets[i]);
  bool sorted = true;  // runs that do not overlap need no merge
  for (std::size_t i = 1; i + 1 < bnd.size(); ++i)
    sorted = sorted && !(keys[bnd[i]] < keys[bnd[i] - 1]);
  if (sorted) return;
  if (bnd.size() == 3) {  // two runs: one direct merge, every element moves once
    EV out = std::move(spare);
    out.clear();
    if (out.capacity() < n)
      detail::reserve_headroom(out, n);  // else the spare's touched pages serve
    KV out_keys;
    detail::reserve_headroom(out_keys, n);
    out_keys.resize(n);
    std::size_t i = 0, j = bnd[1], o = 0;
    const std::size_t ie = bnd[1];
    while (i < ie && j < n) {  // branch-free choice: runs interleave finely
      const bool right = keys[j] < keys[i];
      const std::size_t from = right ? j : i;
      out.push_back(std::move(elements[from]));
      out_keys[o++] = keys[from];
      i += !right;
      j += right;
    }
    for (; i < ie; ++i, ++o) {
      out.push_back(std::move(elements[i]));
      out_keys[o] = keys[i];
    }
    for (; j < n; ++j, ++o) {
      out.push_back(std::move(elements[j]));
      out_keys[o] = keys[j];
    }
    elements.swap(out);
    keys.swap(out_keys);
    return;
  }
  detail::with_position_type(n, [&]<class Pos>() {
    using KP = detail::KeyPos<Index, Pos>;
    std::vector<KP> a(n), b(n);
    for (std::size_t i = 0; i < n; ++i) a[i] = {keys[i], static_cast<Pos>(i)};
    const auto by_key = [](const KP& x, const KP& y) { return x.key < y.key; };
    while (bnd.size() > 2) {  // pairwise merges of neighbouring runs: ceil(log2 runs) passes
      std::vector<std::size_t> next{0};
      std::size_t k = 0;
      for (; k + 2 < bnd.size(); k += 2) {
        std::merge(a.begin() + static_cast<std::ptrdiff_t>(bnd[k]),
                   a.begin() + static_cast<std::ptrdiff_t>(bnd[k + 1]),
                   a.begin() + static_cast<std::ptrdiff_t>(bnd[k + 1]),
                   a.begin() + static_cast<std::ptrdiff_t>(bnd[k + 2]),
                   b.begin() + static_cast<std::ptrdiff_t>(bnd[k]), by_key);
        next.push_back(bnd[k + 2]);
      }
      if (k + 1 < bnd.size()) {  // an odd run out: carried over
        std::copy(a.begin() + static_cast<std::ptrdiff_t>(bnd[k]),
                  a.begin() + static_cast<std::ptrdiff_t>(bnd[k + 1]),
                  b.begin() + static_cast<std::ptrdiff_t>(bnd[k]));
        next.push_back(bnd[k + 1]);
      }
      a.swap(b);
      bnd.swap(next);
    }
    detail::apply_order(elements, keys, a);
  });
}

}  // namespace irregular
