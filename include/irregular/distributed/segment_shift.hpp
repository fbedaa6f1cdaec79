// Segment shift: the remap of a contiguous-segment map (baiardi-2001 §3, rebalancing by segment
// shifts). Leaves sorted by start and elements sorted by key go to new splitters as one run per
// destination; each rank keeps its middle run and splices the arrivals in front of and behind it.
// O(shipped + p log n) work per rank, besides one memmove of the kept run where arrivals land in front.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/distributed_sort.hpp>
#include <irregular/distributed/local_leaves.hpp>
#include <irregular/distributed/ownership_map.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/detail/nbx.hpp>
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/mpi/transport.hpp>

#include <boost/mpi/communicator.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace irregular {

namespace detail_shift {

/// Last bytes of a shift message: [elements][keys][starts][counts][payload][levels][trailer].
/// Keys travel with their elements: copying them is cheaper than computing them again.
struct Trailer {
  std::uint64_t elements;
  std::uint64_t leaves;
  std::uint64_t payload;  // 1 when a payload value travels with each leaf
};

/// v becomes low ++ v[a, b) ++ high: the kept run moves once (not at all when low.size() == a),
/// and storage is reallocated only when the result outgrows it.
template <class T>
void splice(std::vector<T>& v, std::size_t a, std::size_t b, std::span<const T> low, std::span<const T> high) {
  const std::size_t k = low.size(), n = k + (b - a) + high.size();
  if (n > v.capacity()) {
    std::vector<T> w;
    w.reserve(n);
    w.insert(w.end(), low.begin(), low.end());
    w.insert(w.end(), v.begin() + static_cast<std::ptrdiff_t>(a), v.begin() + static_cast<std::ptrdiff_t>(b));
    w.insert(w.end(), high.begin(), high.end());
    v.swap(w);
    return;
  }
  v.erase(v.begin() + static_cast<std::ptrdiff_t>(b), v.end());
  if (k >= a) {  // the dropped prefix [0, a) is overwritten, the rest of low inserted before it
    v.insert(v.begin(), low.begin(), low.begin() + static_cast<std::ptrdiff_t>(k - a));
    std::copy(low.begin() + static_cast<std::ptrdiff_t>(k - a), low.end(), v.begin() + static_cast<std::ptrdiff_t>(k - a));
  } else {
    std::copy(low.begin(), low.end(), v.begin() + static_cast<std::ptrdiff_t>(a - k));
    v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(a - k));
  }
  v.insert(v.end(), high.begin(), high.end());
}

/// The arrivals on one side of the kept run, in curve order (sources in rank order).
template <class E, class I>
struct Arrivals {
  std::vector<E> elements;
  std::vector<I> keys, starts;
  std::vector<std::uint64_t> counts;
  std::vector<double> payload;
  std::vector<std::uint8_t> levels;
};

/// Leaf offsets of a run of leaves over its sorted keys, from `base`: out gets one value per leaf.
/// Returns the number of keys that lie in the leaves (all of them when the run is whole).
template <SpaceFillingCurve C>
std::size_t run_offsets(std::span<const typename C::index_type> starts, std::span<const std::uint8_t> levels,
                        std::span<const typename C::index_type> keys, std::size_t base, std::vector<std::size_t>& out) {
  std::size_t e = 0;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    out.push_back(base + e);
    const auto end = starts[i] + curve::detail_interval::span<C>(C::max_level - levels[i]);
    while (e < keys.size() && keys[e] < end) ++e;
  }
  return e;
}

/// Leaf offsets of a run of leaves from their element counts, from `base`; returns the total.
inline std::size_t count_offsets(std::span<const std::uint64_t> counts, std::size_t base, std::vector<std::size_t>& out) {
  out.resize(counts.size());
  std::size_t e = base;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    out[i] = e;
    e += static_cast<std::size_t>(counts[i]);
  }
  return e - base;
}

}  // namespace detail_shift

/// Places leaves and elements on the segment map `map` by segment shifts, when it can: every
/// rank's leaves (sorted by start) and elements (sorted by key) split into one run per new
/// segment, found by binary search of the splitters; the runs of other segments travel straight
/// from the arrays with their keys (one merged message per partner, raw, no staging copy);
/// arrivals from lower ranks are spliced in front of the kept run, those from higher ranks
/// behind it. `payload` is one value per leaf that travels with it, or empty (nothing travels).
/// `offsets`, when given, holds the current first element of every leaf (leaves + 1 values) and
/// is kept so.
///
/// Returns nullopt on every rank, having changed and sent nothing, when the shift does not
/// apply: elements that need serialization (decided at compile time), or a new splitter strictly
/// inside a leaf on some rank (the general path holds such leaves whole). Otherwise returns what
/// this rank sent. Precondition (as under any contiguous map): the ranks' leaves and elements lie
/// in rank order; arrivals out of curve order are sorted locally. Collective over comm.
template <OwnershipMap M, class E>
  requires(M::contiguous_segments)
std::optional<mpi::MigrationCounters> shift_segments(const boost::mpi::communicator& comm, const M& map,
                                                     LocalLeaves<typename M::curve_type>& leaves,
                                                     std::vector<double>& payload, std::vector<E>& elements,
                                                     std::vector<typename M::curve_type::index_type>& keys,
                                                     std::vector<std::size_t>* offsets, int tag) {
  using C = typename M::curve_type;
  using I = typename C::index_type;
  using detail_shift::Trailer;
  if constexpr (!mpi::is_raw_transportable<E>) {
    return std::nullopt;
  } else {
    const int p = comm.size(), me = comm.rank();
    const auto P = static_cast<std::size_t>(p), self = static_cast<std::size_t>(me);
    const std::size_t n = leaves.size(), m = keys.size();
    const bool has_payload = !payload.empty();
    IRREGULAR_ASSERT(keys.size() == elements.size() && (!has_payload || payload.size() == n));
    IRREGULAR_ASSERT(!offsets || offsets->size() == n + 1);
    const auto& s = map.splitters();
    IRREGULAR_ASSERT(s.size() == P + 1);
    // Destination d gets leaves [lb[d], lb[d+1]) and elements [eb[d], eb[d+1]): leaf_owner is
    // the owner of a leaf's start, and owners grow along sorted starts and keys.
    std::vector<std::size_t> lb(P + 1), eb(P + 1);
    lb[0] = eb[0] = 0;
    lb[P] = n;
    eb[P] = m;
    for (std::size_t d = 1; d < P; ++d) {
      lb[d] = static_cast<std::size_t>(std::lower_bound(leaves.starts_.begin(), leaves.starts_.end(), s[d]) -
                                       leaves.starts_.begin());
      eb[d] = static_cast<std::size_t>(std::lower_bound(keys.begin(), keys.end(), s[d]) - keys.begin());
    }
    // A splitter strictly inside a leaf splits it: only the leaf before each cut can contain one.
    std::uint64_t flags[2] = {0, 0};  // {leaves split, something moves}
    for (std::size_t d = 1; d < P; ++d)
      if (lb[d] > 0 && leaves.interval(lb[d] - 1).end > s[d]) flags[0] = 1;
    flags[1] = lb[self] != 0 || lb[self + 1] != n || eb[self] != 0 || eb[self + 1] != m;
    std::uint64_t global[2] = {0, 0};
    BOOST_MPI_CHECK_RESULT(MPI_Allreduce, (flags, global, 2, MPI_UINT64_T, MPI_MAX, MPI_Comm(comm)));
    if (global[0] != 0) return std::nullopt;
    if (global[1] == 0) return mpi::MigrationCounters{};

    // Outgoing: every other destination's runs, addressed where they lie.
    mpi::MigrationCounters sent;
    std::vector<Trailer> trailers(P);
    std::vector<detail::ByteRegion> regions;
    std::vector<std::pair<int, std::size_t>> firsts;  // (dest, first region)
    auto bytes_of = [](const auto* data, std::size_t k) {
      return detail::ByteRegion{reinterpret_cast<const char*>(data), k * sizeof(*data)};
    };
    for (std::size_t d = 0; d < P; ++d) {
      const std::size_t nl = lb[d + 1] - lb[d], ne = eb[d + 1] - eb[d];
      if (d == self || nl + ne == 0) continue;
      trailers[d] = Trailer{ne, nl, has_payload ? 1u : 0u};
      const std::size_t first = regions.size();
      regions.push_back(bytes_of(elements.data() + eb[d], ne));
      regions.push_back(bytes_of(keys.data() + eb[d], ne));
      regions.push_back(bytes_of(leaves.starts_.data() + lb[d], nl));
      regions.push_back(bytes_of(leaves.counts_.data() + lb[d], nl));
      regions.push_back(bytes_of(payload.data() + (has_payload ? lb[d] : 0), has_payload ? nl : 0));
      regions.push_back(bytes_of(leaves.levels_.data() + lb[d], nl));
      regions.push_back(bytes_of(&trailers[d], 1));
      firsts.push_back({static_cast<int>(d), first});
      for (std::size_t k = first; k < regions.size(); ++k) sent.bytes += regions[k].bytes;
      sent.hnodes += nl;
      sent.elements += ne;
      sent.messages += 1;
    }
    std::vector<detail::OutgoingGather> sends;
    for (std::size_t k = 0; k < firsts.size(); ++k) {
      const std::size_t a = firsts[k].second, b = k + 1 < firsts.size() ? firsts[k + 1].second : regions.size();
      sends.push_back({firsts[k].first, std::span<const detail::ByteRegion>(regions).subspan(a, b - a)});
    }
    struct Sink {
      std::vector<std::pair<int, std::vector<char>>> got;
      char* reserve(int source, std::size_t offset, std::size_t bytes) {
        if (offset == 0) got.push_back({source, {}});
        auto& buf = got.back().second;
        buf.resize(offset + bytes);
        return buf.data() + offset;
      }
      void finish(int, std::size_t) {}
    } sink;
    mpi::detail_exchange::check_tag(tag);
    mpi::ExchangeStats stats;
    detail::nbx_exchange(comm, tag, std::span<const detail::OutgoingGather>(sends), sink, stats);
    std::sort(sink.got.begin(), sink.got.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

    // Arrivals, staged by side (a few typed copies of what arrived: O(received)).
    detail_shift::Arrivals<E, I> low, high;
    for (const auto& [source, msg] : sink.got) {
      Trailer t{};
      const std::size_t leaf_bytes = sizeof(I) + sizeof(std::uint64_t) + 1;
      bool ok = msg.size() >= sizeof t;
      if (ok) {
        std::memcpy(&t, msg.data() + msg.size() - sizeof t, sizeof t);
        ok = t.payload == (has_payload ? 1u : 0u) && t.leaves <= msg.size() && t.elements <= msg.size() &&
             msg.size() - sizeof t == t.elements * (sizeof(E) + sizeof(I)) + t.leaves * (leaf_bytes + (has_payload ? sizeof(double) : 0));
      }
      if (!ok || source == me)
        throw parse_error("irregular::shift_segments: rank " + std::to_string(me) + " received " +
                          std::to_string(msg.size()) + " bytes from rank " + std::to_string(source) +
                          " that do not parse as a segment shift");
      auto& side = source < me ? low : high;
      const char* at = msg.data();
      auto take = [&at](auto& v, std::size_t k) {
        const std::size_t old = v.size();
        v.resize(old + k);
        if (k) std::memcpy(static_cast<void*>(v.data() + old), at, k * sizeof(v[0]));
        at += k * sizeof(v[0]);
      };
      take(side.elements, t.elements);
      take(side.keys, t.elements);
      take(side.starts, t.leaves);
      take(side.counts, t.leaves);
      if (has_payload) take(side.payload, t.leaves);
      take(side.levels, t.leaves);
    }
    sink.got.clear();

    // Splice: low ++ kept ++ high, array by array.
    const std::size_t a = lb[self], b = lb[self + 1], ea = eb[self], ee = eb[self + 1];
    // Offsets of the kept leaves shift by one constant when they index exactly the kept elements.
    const bool offsets_kept = offsets && (*offsets)[a] == ea && (*offsets)[b] == ee;
    std::vector<std::size_t> low_offsets, high_offsets;
    bool whole = true;
    if (offsets_kept) {
      // A settled leaf holds all its elements, so its global count is its local run length.
      whole &= detail_shift::count_offsets(low.counts, 0, low_offsets) == low.keys.size();
      whole &= detail_shift::count_offsets(high.counts, 0, high_offsets) == high.keys.size();
      for (auto& o : high_offsets) o += low.keys.size() + (ee - ea);
    }
    detail_shift::splice<I>(leaves.starts_, a, b, low.starts, high.starts);
    detail_shift::splice<std::uint8_t>(leaves.levels_, a, b, low.levels, high.levels);
    detail_shift::splice<std::uint64_t>(leaves.counts_, a, b, low.counts, high.counts);
    if (has_payload) detail_shift::splice<double>(payload, a, b, low.payload, high.payload);
    detail_shift::splice<E>(elements, ea, ee, low.elements, high.elements);
    detail_shift::splice<I>(keys, ea, ee, low.keys, high.keys);

    // The blocks meet in curve order under a contiguous map; a source out of rank order (not a
    // contiguous layout before) is repaired by a local sort.
    bool ordered = true;
    auto meets = [](const auto& v, std::size_t at) { return at == 0 || at >= v.size() || !(v[at] < v[at - 1]); };
    ordered &= meets(leaves.starts_, low.starts.size()) && meets(leaves.starts_, low.starts.size() + (b - a));
    ordered &= meets(keys, low.keys.size()) && meets(keys, low.keys.size() + (ee - ea));
    for (const auto* side : {&low, &high})
      for (std::size_t k = 1; k < side->starts.size() && ordered; ++k) ordered = side->starts[k - 1] < side->starts[k];
    for (const auto* side : {&low, &high})
      for (std::size_t k = 1; k < side->keys.size() && ordered; ++k) ordered = side->keys[k - 1] <= side->keys[k];
    if (!ordered) {
      std::vector<std::size_t> order(leaves.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::sort(order.begin(), order.end(),
                [&](std::size_t x, std::size_t y) { return leaves.starts_[x] < leaves.starts_[y]; });
      LocalLeaves<C> sorted;
      std::vector<double> sorted_payload;
      for (std::size_t i : order) {
        sorted.push_back(leaves.starts_[i], leaves.levels_[i], leaves.counts_[i]);
        if (has_payload) sorted_payload.push_back(payload[i]);
      }
      leaves = std::move(sorted);
      if (has_payload) payload = std::move(sorted_payload);
      detail::sort_by_key(elements, keys);
    }

    if (offsets) {
      auto& off = *offsets;
      if (ordered && offsets_kept && whole) {
        const std::size_t nlow = low.starts.size(), kept = b - a, nlow_e = low.keys.size();
        detail_shift::splice<std::size_t>(off, a, b, low_offsets, high_offsets);
        for (std::size_t i = nlow; i < nlow + kept; ++i) off[i] = off[i] - ea + nlow_e;
        off.push_back(keys.size());
      } else {  // one linear pass, as ElementStore::index_leaves
        off.clear();
        [[maybe_unused]] const std::size_t in =
            detail_shift::run_offsets<C>(leaves.starts_, leaves.levels_, keys, 0, off);
        IRREGULAR_ASSERT(in == keys.size());
        off.push_back(keys.size());
      }
    }
    return sent;
  }
}

}  // namespace irregular
