// Distributed sort of elements by curve index: the first step of building the H-Tree from
// elements given on any rank in any distribution (baiardi-2001 §3: the SFC visit orders the
// elements before the blocking partition).
//
// 1. Local sort: a stable MSD scatter by the 11 highest differing key bits into cache-sized
//    buckets, each finished by an in-cache sort of (key, position) pairs whose digit is as wide
//    as the bucket is long (tree/detail/pair_sort.hpp). Elements that cannot be default
//    constructed: a stable LSD radix sort of the pairs, then every element moves once.
// 2. Splitters by histogram refinement (no samples, no root): splitter r targets global
//    position T_r = floor(r·N/p). Each splitter keeps a key interval [lo, hi) with
//    C(lo) <= T_r < C(hi), C(x) = number of keys < x over all ranks. A round cuts every open
//    interval at 15 candidate keys (16 equal sub-intervals), each rank counts its keys below
//    each candidate by binary search in its sorted run, and one all_reduce (sum) of the counts
//    tells every rank the same C(candidate): the interval shrinks 16-fold. A splitter stops
//    when C(lo) = T_r (an exact cut) or hi = lo + 1 (then lo is the key at position T_r and
//    the cut goes before or after all its copies, whichever is closer to T_r). At most
//    ceil(bits/4) rounds for keys < 2^bits, each an all_reduce of at most 15·(p-1) 64-bit
//    counts (splitters sharing an interval share candidates), plus one all_reduce for N:
//    O(p) values per rank and round, no rank does more than another.
// 3. Exchange of the contiguous runs, then a stable merge of the sorted runs that arrive in
//    rank order. Raw elements travel with their keys and merge in place in the old arrays
//    (detail/sorted_runs_exchange.hpp); others are keyed again on arrival, two runs merged
//    directly, more by pairwise merges of (key, position) pairs, then every element moves once.
#pragma once

#include <irregular/core/detail/headroom.hpp>
#include <irregular/core/index.hpp>
#include <irregular/mpi/detail/index_wire.hpp>
#include <irregular/distributed/htree/detail/sorted_runs_exchange.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/tree/detail/pair_sort.hpp>
#include <irregular/tree/detail/radix_sort.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/utility.hpp>  // kept: includers rely on them (pairs, vectors on the wire)
#include <boost/serialization/vector.hpp>

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

/// What the splitter selection of sample_sort cost this rank: all_reduce rounds and the 64-bit
/// values this rank contributed to them (every rank contributes the same). `bytes` = 8·values.
struct SplitterStats {
  std::uint64_t rounds = 0;
  std::uint64_t values = 0;
  std::uint64_t bytes = 0;
};

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
  reserve_headroom(out, n);
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
                         std::vector<KeyPos<Index, Pos>>& order, std::vector<KeyPos<Index, Pos>>& scratch,
                         std::vector<std::uint32_t>& count, std::vector<typename EV::value_type>& tmp) {
  using E = typename EV::value_type;
  const std::size_t m = e - b;
  order.resize(m);
  Index* const k = keys.data() + b;  // raw pointers: see msd_sort_range
  E* const el = elements.data() + b;
  for (std::size_t i = 0; i < m; ++i) order[i] = {k[i], static_cast<Pos>(i)};
  sort_pairs(order, scratch, count);
  tmp.clear();
  for (std::size_t i = 0; i < m; ++i) tmp.push_back(std::move(el[static_cast<std::size_t>(order[i].pos)]));
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
    for (std::size_t i = r.b; i < r.e; ++i) ++count[(static_cast<std::size_t>(in_keys[i] >> shift) & (radix - 1)) + 1];
    for (std::size_t d = 0; d < radix; ++d) count[d + 1] += count[d];
    const std::size_t m = r.e - r.b;
    if (m == elements.size() && out_el.capacity() < m) {  // these buffers become the arrays
      reserve_headroom(out_el, m);
      reserve_headroom(out_keys, m);
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
      msd_sort_range(elements, keys, 0, n);
      return;
    }
  }
  with_position_type(n, [&]<class Pos>() {
    std::vector<KeyPos<Index, Pos>> order(n);
    Index all{0};
    for (std::size_t i = 0; i < n; ++i) {
      order[i] = {keys[i], static_cast<Pos>(i)};
      all |= keys[i];
    }
    radix_sort_records(order, [](const KeyPos<Index, Pos>& x) { return x.key; }, used_bits(all));
    apply_order(elements, keys, order);
  });
}

/// Stable merge of the sorted runs elements[offsets[i] .. offsets[i+1]) (keys alike): equal
/// keys keep run order, then position order. `spare` is an empty buffer whose capacity (pages
/// already touched) takes the merged elements when there are two runs.
template <class EV, class KV>
void merge_runs(EV& elements, KV& keys, std::span<const std::size_t> offsets, EV&& spare = {}) {
  using Index = typename KV::value_type;
  const std::size_t n = keys.size();
  std::vector<std::size_t> bnd;  // boundaries of the non-empty runs
  bnd.push_back(0);
  for (std::size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i] != bnd.back()) bnd.push_back(offsets[i]);
  bool sorted = true;  // runs that do not overlap need no merge
  for (std::size_t i = 1; i + 1 < bnd.size(); ++i) sorted = sorted && !(keys[bnd[i]] < keys[bnd[i] - 1]);
  if (sorted) return;
  if (bnd.size() == 3) {  // two runs: one direct merge, every element moves once
    EV out = std::move(spare);
    out.clear();
    if (out.capacity() < n) reserve_headroom(out, n);  // else the spare's touched pages serve
    KV out_keys;
    reserve_headroom(out_keys, n);
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
  with_position_type(n, [&]<class Pos>() {
    using KP = KeyPos<Index, Pos>;
    std::vector<KP> a(n), b(n);
    for (std::size_t i = 0; i < n; ++i) a[i] = {keys[i], static_cast<Pos>(i)};
    const auto by_key = [](const KP& x, const KP& y) { return x.key < y.key; };
    while (bnd.size() > 2) {  // pairwise merges of neighbouring runs: ceil(log2 runs) passes
      std::vector<std::size_t> next{0};
      std::size_t k = 0;
      for (; k + 2 < bnd.size(); k += 2) {
        std::merge(a.begin() + static_cast<std::ptrdiff_t>(bnd[k]), a.begin() + static_cast<std::ptrdiff_t>(bnd[k + 1]),
                   a.begin() + static_cast<std::ptrdiff_t>(bnd[k + 1]), a.begin() + static_cast<std::ptrdiff_t>(bnd[k + 2]),
                   b.begin() + static_cast<std::ptrdiff_t>(bnd[k]), by_key);
        next.push_back(bnd[k + 2]);
      }
      if (k + 1 < bnd.size()) {  // an odd run out: carried over
        std::copy(a.begin() + static_cast<std::ptrdiff_t>(bnd[k]), a.begin() + static_cast<std::ptrdiff_t>(bnd[k + 1]),
                  b.begin() + static_cast<std::ptrdiff_t>(bnd[k]));
        next.push_back(bnd[k + 1]);
      }
      a.swap(b);
      bnd.swap(next);
    }
    apply_order(elements, keys, a);
  });
}

/// ceil(bits / 4): the rounds after which every splitter interval of keys < 2^bits is closed.
[[nodiscard]] constexpr std::uint64_t splitter_round_bound(int bits) noexcept {
  return static_cast<std::uint64_t>((bits + 3) / 4);
}

/// The parts-1 splitters of sample_sort (see the file comment) over the sorted local `keys`
/// (all < domain_end). Splitter r-1 (r = 1 .. parts-1) cuts the global order near position
/// floor(r·N/parts): exactly there when the key at that position starts there, else before or
/// after all copies of that key, whichever is closer (ties before). Non-decreasing; all
/// domain_end when there are no keys. Deterministic: a function of the global key multiset
/// and parts only. Collective over comm (every rank passes the same parts and domain_end).
template <class Index>
std::vector<Index> select_splitters(const boost::mpi::communicator& comm, std::span<const Index> keys,
                                    Index domain_end, std::size_t parts, SplitterStats* stats = nullptr) {
  SplitterStats st;
  const auto reduce = [&](const std::vector<std::uint64_t>& in, std::vector<std::uint64_t>& out) {
    out.resize(in.size());
    boost::mpi::all_reduce(comm, in.data(), static_cast<int>(in.size()), out.data(), std::plus<std::uint64_t>());
    ++st.rounds;
    st.values += in.size();
  };
  std::vector<std::uint64_t> in{static_cast<std::uint64_t>(keys.size())}, out;
  reduce(in, out);
  const std::uint64_t N = out[0];
  const std::size_t m = parts > 0 ? parts - 1 : 0;
  std::vector<Index> split(m, domain_end);
  if (N > 0 && m > 0) {
    struct Search {
      Index lo, hi;             // C(lo) <= target < C(hi)
      std::uint64_t clo, chi;   // C(lo), C(hi)
      std::uint64_t target;
      bool done;
    };
    constexpr int fan = 16;  // sub-intervals per round: fan - 1 candidates
    std::vector<Search> s(m);
    const auto settle = [&](std::size_t r) {
      auto& x = s[r];
      if (x.clo == x.target) {
        x.done = true;
        split[r] = x.lo;
      } else if (x.hi - x.lo == Index{1}) {  // lo is the key at position target; cut before or after it
        x.done = true;
        split[r] = x.target - x.clo <= x.chi - x.target ? x.lo : x.hi;
      }
    };
    for (std::size_t r = 0; r < m; ++r) {
      const auto t = static_cast<std::uint64_t>(static_cast<uint128_t>(r + 1) * N / parts);
      s[r] = {Index{0}, domain_end, 0, N, t, false};
      settle(r);
    }
    std::vector<std::size_t> group(m);
    std::vector<Index> cand;
    for (;;) {
      // Open splitters with the same interval share one set of candidates.
      cand.clear();
      std::size_t groups = 0;
      const Search* last = nullptr;
      for (std::size_t r = 0; r < m; ++r) {
        if (s[r].done) continue;
        if (last == nullptr || last->lo != s[r].lo || last->hi != s[r].hi) {
          const Index lo = s[r].lo, w = s[r].hi - s[r].lo, q = w / fan, rem = w % fan;
          for (int j = 1; j < fan; ++j)  // lo + floor(w·j / fan), without overflow
            cand.push_back(lo + q * static_cast<Index>(j) + rem * static_cast<Index>(j) / fan);
          ++groups;
          last = &s[r];
        }
        group[r] = groups - 1;
      }
      if (groups == 0) break;
      in.resize(cand.size());
      for (std::size_t c = 0; c < cand.size(); ++c)
        in[c] = static_cast<std::uint64_t>(std::lower_bound(keys.begin(), keys.end(), cand[c]) - keys.begin());
      reduce(in, out);
      for (std::size_t r = 0; r < m; ++r) {
        auto& x = s[r];
        if (x.done) continue;
        const std::size_t base = group[r] * (fan - 1);
        int j = 0;  // candidates 1 .. j have C <= target (C is non-decreasing in the candidate)
        while (j < fan - 1 && out[base + static_cast<std::size_t>(j)] <= x.target) ++j;
        if (j > 0) {
          x.lo = cand[base + static_cast<std::size_t>(j) - 1];
          x.clo = out[base + static_cast<std::size_t>(j) - 1];
        }
        if (j < fan - 1) {
          x.hi = cand[base + static_cast<std::size_t>(j)];
          x.chi = out[base + static_cast<std::size_t>(j)];
        }
        settle(r);
      }
    }
    for (std::size_t r = 1; r < m; ++r) split[r] = std::max(split[r], split[r - 1]);  // (already so)
  }
  st.bytes = st.values * sizeof(std::uint64_t);
  if (stats != nullptr) {
    stats->rounds += st.rounds;
    stats->values += st.values;
    stats->bytes += st.bytes;
  }
  return split;
}

}  // namespace detail

/// Sorts the elements of all ranks by key. On return every rank holds a contiguous run of the
/// global order, sorted, and the returned p+1 boundaries (replicated, O(p)) say which keys each
/// rank holds: rank r's keys lie in [bounds[r], bounds[r+1]); bounds[0] = 0 and bounds[p] =
/// `domain_end`. The global order is by key, equal keys by source rank, then by position on
/// the source; equal keys always land on one rank. `key_of(e)` recomputes a key after transport.
///
/// Balance: with N elements and M the largest number of copies of one key, rank r holds
/// floor((r+1)·N/p) - floor(r·N/p) elements up to half the copies of the key at each of its
/// two cuts: at most ceil(N/p) + M (exactly floor or ceil of N/p when keys are distinct).
/// No elements at all: rank 0 holds the whole key range.
///
/// Cost per rank: the local radix sort and merge, the exchange of the elements that change
/// rank (`stats`), and for the splitters (`splitter_stats`) at most 1 + ceil(bits/4) all_reduce
/// rounds of at most 15·(p-1) 64-bit counts each (bits = bit width of domain_end), with
/// 15·(p-1)·ceil(log2 n) binary-search steps per round. Collective over comm.
template <class EV, class KV, class KeyOf>
std::vector<typename KV::value_type> sample_sort(const boost::mpi::communicator& comm, EV& elements, KV& keys,
                                                 typename KV::value_type domain_end, KeyOf&& key_of, int tag,
                                                 mpi::ExchangeStats* stats = nullptr,
                                                 SplitterStats* splitter_stats = nullptr) {
  using E = typename EV::value_type;
  using Index = typename KV::value_type;
  const int p = comm.size();
  const auto up = static_cast<std::size_t>(p);
  detail::sort_by_key(elements, keys);
  std::vector<Index> bounds(up + 1, domain_end);
  bounds[0] = 0;
  if (p == 1) return bounds;

  const auto split =
      detail::select_splitters(comm, std::span<const Index>(keys), domain_end, up, splitter_stats);
  std::copy(split.begin(), split.end(), bounds.begin() + 1);
  // Rank r receives keys in [bounds[r], bounds[r+1]); keys are sorted, so groups are contiguous.
  std::vector<std::size_t> offsets(up + 1);
  offsets[0] = 0;
  for (std::size_t r = 1; r < up; ++r)
    offsets[r] = static_cast<std::size_t>(std::lower_bound(keys.begin(), keys.end(), bounds[r]) - keys.begin());
  offsets[up] = keys.size();
  if constexpr (detail::sorted_runs_direct<E, Index>) {
    detail::exchange_sorted_runs(comm, elements, keys, std::span<const std::size_t>(offsets), tag, stats);
  } else {
    auto got = mpi::sparse_exchange(comm, std::span<const E>(elements), std::span<const std::size_t>(offsets),
                                    tag, stats);
    // This rank's own run keeps its keys; the others' are recomputed.
    const auto me = static_cast<std::size_t>(comm.rank());
    std::vector<Index> own(keys.begin() + static_cast<std::ptrdiff_t>(offsets[me]),
                           keys.begin() + static_cast<std::ptrdiff_t>(offsets[me + 1]));
    EV spare = std::move(elements);  // its pages take the merged run
    spare.clear();
    if constexpr (std::is_same_v<EV, std::vector<E>>)
      elements = std::move(got.values);
    else
      elements.assign(got.values.begin(), got.values.end());
    keys.resize(elements.size());
    for (std::size_t i = 0; i < got.sources.size(); ++i) {
      const std::size_t b = got.offsets[i], e = got.offsets[i + 1];
      if (static_cast<std::size_t>(got.sources[i]) == me && e - b == own.size())
        std::copy(own.begin(), own.end(), keys.begin() + static_cast<std::ptrdiff_t>(b));
      else
        for (std::size_t j = b; j < e; ++j) keys[j] = key_of(elements[j]);
    }
    // Runs arrive sorted and grouped by source in rank order: a stable merge keeps determinism.
    detail::merge_runs(elements, keys, std::span<const std::size_t>(got.offsets), std::move(spare));
  }
  return bounds;
}

}  // namespace irregular
