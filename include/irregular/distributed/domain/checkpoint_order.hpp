// A checkpoint's sections in global curve order under any ownership map. Under a map without
// the range property (rectangles, rows) a rank holds leaves scattered along the curve, so rank
// order is not curve order: each rank's leaves split into runs (local leaves consecutive on the
// curve), each run learns its place in the curve order (runs bucketed by key, sorted, prefix
// sums), and a two-phase write moves every run's bytes to the rank whose even share of the
// section covers them (one merged message per partner), so each rank writes one contiguous share.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/index.hpp>
#include <irregular/distributed/checkpoint/sections.hpp>
#include <irregular/distributed/htree/sample_sort.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/mpi/sparse_exchange.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

namespace irregular::checkpoint {

/// A curve index as two 64-bit words, high then low (the high word is 0 for 64-bit indices), so
/// that the code below does not depend on the index type; words compare as the indices do.
using KeyWords = std::array<std::uint64_t, 2>;
/// The words of curve index `x`.
template <class I>
KeyWords key_words(I x) noexcept {
  if constexpr (sizeof(I) > 8)
    return {static_cast<std::uint64_t>(x >> 64), static_cast<std::uint64_t>(x)};
  else
    return {0, static_cast<std::uint64_t>(x)};
}

/// Whether the leaves concatenated in rank order are in curve order: each rank that holds leaves
/// starts after the last leaf of every rank before it (always so under a map with the range
/// property). Then each rank's share of the file is its own leaves. `first` and `last`: this
/// rank's first and last leaf start (ignored when `any` is false). One all_gather of five words
/// per rank. Collective over comm.
inline bool rank_order_is_curve_order(const boost::mpi::communicator& comm, bool any,
                                      KeyWords first, KeyWords last) {
  const std::array<std::uint64_t, 5> mine{any ? 1u : 0u, first[0], first[1], last[0], last[1]};
  std::vector<int> counts;
  const auto all =
      mpi::all_gather_raw(comm, std::span<const std::array<std::uint64_t, 5>>(&mine, 1), counts);
  bool seen = false;
  KeyWords prev{};
  for (const auto& r : all) {
    if (r[0] == 0) continue;
    if (seen && !(prev < KeyWords{r[1], r[2]})) return false;
    seen = true;
    prev = {r[3], r[4]};
  }
  return true;
}

/// This rank's runs: maximal sequences of local leaves (sorted by start) that are consecutive on
/// the curve (leaf i ends where leaf i + 1 starts), so that no other rank's leaf lies inside one.
template <class I>
struct CurveRuns {
  std::vector<std::size_t> first_leaf;  ///< runs + 1: run k is local leaves [first_leaf[k], [k+1])
  std::vector<I> start;                 ///< each run's first curve index
};
/// The runs of `leaves` (a LinearLeaves: size(), start(i), end(i)). Local.
template <class I, class Leaves>
CurveRuns<I> curve_runs(const Leaves& leaves) {
  CurveRuns<I> runs;
  for (std::size_t i = 0; i < leaves.size(); ++i)
    if (i == 0 || leaves.end(i - 1) != leaves.start(i)) {
      runs.first_leaf.push_back(i);
      runs.start.push_back(leaves.start(i));
    }
  runs.first_leaf.push_back(leaves.size());
  return runs;
}

/// Which rank sorts which runs: rank r takes the runs whose start lies in the r-th of p key
/// ranges, cut by sample_sort's splitters so that each rank takes about as many runs. Returns
/// CSR offsets (p + 1) into this rank's runs. Collective over comm.
template <class I>
std::vector<std::size_t> run_buckets(const boost::mpi::communicator& comm,
                                     std::span<const I> starts, I domain_end) {
  const auto p = static_cast<std::size_t>(comm.size());
  const auto split = irregular::detail::select_splitters(comm, starts, domain_end, p);
  std::vector<std::size_t> offsets(p + 1, starts.size());
  offsets[0] = 0;
  for (std::size_t r = 1; r < p; ++r)
    offsets[r] = static_cast<std::size_t>(
        std::lower_bound(starts.begin(), starts.end(), split[r - 1]) - starts.begin());
  return offsets;
}

/// Where each of this rank's runs lies in the file, and the totals of all ranks.
struct RunPlaces {
  std::vector<std::uint64_t> leaf;  ///< each run's first leaf: its index in curve order
  std::vector<std::uint64_t> byte;  ///< each run's first record byte in the records section
  std::uint64_t leaves = 0;         ///< leaves of all ranks
  std::uint64_t bytes = 0;          ///< record bytes of all ranks
};

/// Places the runs (start `keys`, `leaf_counts` and record `byte_counts` of each, in curve order):
/// each is sent to the rank `buckets` names (run_buckets), which sorts what it receives by start
/// and sums; an exclusive scan over the ranks gives each range's base, and the places go back to
/// the runs' ranks. One message per partner each way. Collective over comm.
inline RunPlaces place_runs(const boost::mpi::communicator& comm, std::span<const KeyWords> keys,
                            std::span<const std::uint64_t> leaf_counts,
                            std::span<const std::uint64_t> byte_counts,
                            std::span<const std::size_t> buckets, int tag) {
  const auto p = static_cast<std::size_t>(comm.size());
  const std::size_t n = keys.size();
  std::vector<std::uint64_t> out(4 * n);  // start (2 words), leaves, bytes
  for (std::size_t k = 0; k < n; ++k) {
    out[4 * k] = keys[k][0];
    out[4 * k + 1] = keys[k][1];
    out[4 * k + 2] = leaf_counts[k];
    out[4 * k + 3] = byte_counts[k];
  }
  std::vector<std::size_t> offsets(buckets.begin(), buckets.end());
  for (auto& o : offsets) o *= 4;
  const auto got = mpi::sparse_exchange(comm, std::span<const std::uint64_t>(out),
                                        std::span<const std::size_t>(offsets), tag);
  const auto& in = got.values;
  const std::size_t m = in.size() / 4;
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return KeyWords{in[4 * a], in[4 * a + 1]} < KeyWords{in[4 * b], in[4 * b + 1]};
  });
  // This range's sums, then its base among all ranks' (ranges ascend with the rank).
  std::array<std::uint64_t, 2> sums{0, 0}, upto{0, 0}, totals{0, 0};
  for (std::size_t j = 0; j < m; ++j) {
    sums[0] += in[4 * j + 2];
    sums[1] += in[4 * j + 3];
  }
  boost::mpi::scan(comm, sums.data(), 2, upto.data(), std::plus<std::uint64_t>());
  mpi::all_reduce_sum(comm, std::span<const std::uint64_t>(sums), std::span<std::uint64_t>(totals));
  std::vector<std::uint64_t> reply(2 * m);  // leaf, byte of each run, in arrival order
  std::uint64_t leaf = upto[0] - sums[0], byte = upto[1] - sums[1];
  for (const std::size_t j : order) {
    reply[2 * j] = leaf;
    reply[2 * j + 1] = byte;
    leaf += in[4 * j + 2];
    byte += in[4 * j + 3];
  }
  // Arrivals are grouped by source, ascending: the replies go back in the same groups.
  std::vector<std::size_t> back(p + 1, 0);
  for (std::size_t i = 0; i < got.sources.size(); ++i)
    back[static_cast<std::size_t>(got.sources[i]) + 1] = (got.offsets[i + 1] - got.offsets[i]) / 2;
  std::partial_sum(back.begin(), back.end(), back.begin());
  const auto places = mpi::sparse_exchange(comm, std::span<const std::uint64_t>(reply),
                                           std::span<const std::size_t>(back), tag);
  // Runs went out in local order to ascending ranks; the replies arrive from ascending ranks.
  IRREGULAR_ASSERT(places.values.size() == 2 * n);
  RunPlaces r;
  r.leaves = totals[0];
  r.bytes = totals[1];
  r.leaf.resize(n);
  r.byte.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    r.leaf[k] = places.values[2 * k];
    r.byte[k] = places.values[2 * k + 1];
  }
  return r;
}

/// Even shares of a section of `total` bytes over p ranks: rank r writes [r·total/p,
/// (r+1)·total/p).
inline SectionShares even_shares(std::uint64_t total, int p) {
  SectionShares s;
  s.begin.resize(static_cast<std::size_t>(p) + 1);
  for (int r = 0; r <= p; ++r)
    s.begin[static_cast<std::size_t>(r)] = static_cast<std::uint64_t>(
        static_cast<uint128_t>(total) * static_cast<unsigned>(r) / static_cast<unsigned>(p));
  return s;
}

/// The leaves and records sections as one contiguous share per rank, in curve order.
struct StagedSections {
  SectionShares leaf_shares;       ///< the leaves section's even shares
  SectionShares record_shares;     ///< the records section's even shares
  std::vector<std::byte> leaves;   ///< this rank's share of the leaves section
  std::vector<std::byte> records;  ///< this rank's share of the records section
};

/// The two-phase write's exchange: the leaf records of run k (`leaf_bytes`, `rec` bytes a leaf,
/// its leaves `first_leaf[k]` .. `first_leaf[k+1]`) and its records (`records`, bytes
/// `first_byte[k]` .. `first_byte[k+1]`) go to the ranks whose even shares cover their places;
/// a message is a count, then (section, offset, length) per piece, then the pieces' bytes.
/// Collective over comm.
inline StagedSections stage_in_curve_order(const boost::mpi::communicator& comm,
                                           std::span<const std::size_t> first_leaf,
                                           std::span<const std::uint64_t> first_byte,
                                           const RunPlaces& places,
                                           std::span<const std::byte> leaf_bytes, std::uint64_t rec,
                                           std::span<const std::byte> records, int tag) {
  const int me = comm.rank(), p = comm.size();
  StagedSections st{even_shares(places.leaves * rec, p), even_shares(places.bytes, p), {}, {}};
  struct Piece {
    int to;
    std::uint64_t section, at, len;
    const std::byte* from;
  };
  std::vector<Piece> pieces;
  std::vector<std::uint64_t> message(static_cast<std::size_t>(p), 0);
  const auto cut = [&](std::uint64_t section, const SectionShares& shares, std::uint64_t at,
                       std::span<const std::byte> from) {
    while (!from.empty()) {  // [at, at + size) split by the shares it meets
      const int to = shares.holder(at);
      const std::uint64_t len =
          std::min<std::uint64_t>(from.size(), shares.begin[static_cast<std::size_t>(to) + 1] - at);
      pieces.push_back({to, section, at, len, from.data()});
      message[static_cast<std::size_t>(to)] += 24 + len;
      at += len;
      from = from.subspan(len);
    }
  };
  for (std::size_t k = 0; k + 1 < first_leaf.size(); ++k) {
    cut(SectionId::leaves, st.leaf_shares, places.leaf[k] * rec,
        leaf_bytes.subspan(first_leaf[k] * rec, (first_leaf[k + 1] - first_leaf[k]) * rec));
    cut(SectionId::records, st.record_shares, places.byte[k],
        records.subspan(first_byte[k], first_byte[k + 1] - first_byte[k]));
  }
  // One message per partner: its piece count, the pieces' (section, offset, length), their bytes.
  std::vector<std::uint64_t> count(static_cast<std::size_t>(p), 0);
  for (const auto& x : pieces) ++count[static_cast<std::size_t>(x.to)];
  std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(p));
  std::vector<std::size_t> head(static_cast<std::size_t>(p), 8), body(static_cast<std::size_t>(p));
  for (std::size_t d = 0; d < out.size(); ++d) {
    if (count[d] == 0) continue;
    out[d].resize(8 + message[d]);
    std::memcpy(out[d].data(), &count[d], 8);
    body[d] = 8 + 24 * count[d];
  }
  for (const auto& x : pieces) {
    const auto d = static_cast<std::size_t>(x.to);
    const std::array<std::uint64_t, 3> h{x.section, x.at, x.len};
    std::memcpy(out[d].data() + head[d], h.data(), 24);
    std::memcpy(out[d].data() + body[d], x.from, x.len);
    head[d] += 24;
    body[d] += x.len;
  }
  const auto got = mpi::sparse_exchange(comm, out, tag);
  std::vector<std::vector<std::byte>>().swap(out);
  // Each piece lands in this rank's share; together they fill it exactly.
  const auto mine = [&](const SectionShares& s) {
    return std::pair(s.begin[static_cast<std::size_t>(me)],
                     s.begin[static_cast<std::size_t>(me) + 1]);
  };
  const auto [lb, le] = mine(st.leaf_shares);
  const auto [rb, re] = mine(st.record_shares);
  st.leaves.resize(le - lb);
  st.records.resize(re - rb);
  std::uint64_t placed = 0;
  for (std::size_t i = 0; i < got.sources.size(); ++i) {
    const auto m = got.from_index(i);
    std::uint64_t n = 0;
    std::memcpy(&n, m.data(), 8);
    std::size_t at = 8 + 24 * n;
    for (std::uint64_t j = 0; j < n; ++j) {
      std::array<std::uint64_t, 3> h{};
      std::memcpy(h.data(), m.data() + 8 + 24 * j, 24);
      const bool leaf = h[0] == SectionId::leaves;
      const std::uint64_t b = leaf ? lb : rb, e = leaf ? le : re;
      IRREGULAR_ASSERT(h[1] >= b && h[1] + h[2] <= e && at + h[2] <= m.size());
      std::memcpy((leaf ? st.leaves : st.records).data() + (h[1] - b), m.data() + at, h[2]);
      at += h[2];
      placed += h[2];
    }
  }
  IRREGULAR_ASSERT(placed == (le - lb) + (re - rb));
  return st;
}

}  // namespace irregular::checkpoint
