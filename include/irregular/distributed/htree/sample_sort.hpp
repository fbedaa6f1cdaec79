// Distributed sort of elements by curve index: the first step of building the H-Tree from
// elements given on any rank in any distribution (baiardi-2001 §3: the SFC visit orders the
// elements before the blocking partition).
//
// 1. Local sort: a stable MSD scatter by the 11 highest differing key bits into cache-sized
//    buckets, each finished by an in-cache sort of (key, position) pairs whose digit is as wide
//    as the bucket is long (tree/sort.hpp, the local sorts in one place). Elements that cannot be
//    default constructed: a stable LSD radix sort of the pairs, then every element moves once.
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
#include <irregular/distributed/htree/detail/sorted_runs_exchange.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/detail/index_wire.hpp>
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/tree/sort.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/utility.hpp>  // pairs and vectors on the wire
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
  std::uint64_t rounds = 0;  ///< all_reduce rounds.
  std::uint64_t values = 0;  ///< 64-bit values this rank contributed to them
  std::uint64_t bytes = 0;   ///< 8 · values
};

namespace detail {

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
std::vector<Index> select_splitters(const boost::mpi::communicator& comm,
                                    std::span<const Index> keys, Index domain_end,
                                    std::size_t parts, SplitterStats* stats = nullptr) {
  SplitterStats st;
  const auto reduce = [&](const std::vector<std::uint64_t>& in, std::vector<std::uint64_t>& out) {
    out.resize(in.size());
    boost::mpi::all_reduce(comm, in.data(), static_cast<int>(in.size()), out.data(),
                           std::plus<std::uint64_t>());
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
      Index lo, hi;            // C(lo) <= target < C(hi)
      std::uint64_t clo, chi;  // C(lo), C(hi)
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
      } else if (x.hi - x.lo ==
                 Index{1}) {  // lo is the key at position target; cut before or after it
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
        in[c] = static_cast<std::uint64_t>(std::lower_bound(keys.begin(), keys.end(), cand[c]) -
                                           keys.begin());
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
    for (std::size_t r = 1; r < m; ++r)
      split[r] = std::max(split[r], split[r - 1]);  // (already so)
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
std::vector<typename KV::value_type> sample_sort(const boost::mpi::communicator& comm, EV& elements,
                                                 KV& keys, typename KV::value_type domain_end,
                                                 KeyOf&& key_of, int tag,
                                                 mpi::ExchangeStats* stats = nullptr,
                                                 SplitterStats* splitter_stats = nullptr) {
  using E = typename EV::value_type;
  using Index = typename KV::value_type;
  const int p = comm.size();
  const auto up = static_cast<std::size_t>(p);
  irregular::sort_by_key(elements, keys);
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
    offsets[r] = static_cast<std::size_t>(std::lower_bound(keys.begin(), keys.end(), bounds[r]) -
                                          keys.begin());
  offsets[up] = keys.size();
  if constexpr (detail::sorted_runs_direct<E, Index>) {
    detail::exchange_sorted_runs(comm, elements, keys, std::span<const std::size_t>(offsets), tag,
                                 stats);
  } else {
    auto got = mpi::sparse_exchange(comm, std::span<const E>(elements),
                                    std::span<const std::size_t>(offsets), tag, stats);
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
    irregular::merge_sorted_runs(elements, keys, std::span<const std::size_t>(got.offsets),
                                 std::move(spare));
  }
  return bounds;
}

}  // namespace irregular
