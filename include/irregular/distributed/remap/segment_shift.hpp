// Segment shift: the remap of a contiguous-segment map (baiardi-2001 §3, rebalancing by segment
// shifts). Leaves sorted by start and elements sorted by key go to new splitters as one run per
// destination; each rank keeps its middle run and splices the arrivals in front of and behind it.
// O(shipped + p log n) work per rank, besides one memmove of the kept run where arrivals land in front.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/core/detail/open_around.hpp>
#include <irregular/distributed/remap/detail/shift_wire.hpp>
#include <irregular/distributed/htree/sample_sort.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
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
#include <functional>
#include <memory>
#include <new>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular {

namespace detail_shift {

/// Leaf offsets of a run of leaves over its sorted keys, from `base`: out gets one value per leaf.
/// Returns the number of keys that lie in the leaves (all of them when the run is whole).
template <SpaceFillingCurve C, class OV>
std::size_t run_offsets(std::span<const typename C::index_type> starts, std::span<const std::uint8_t> levels,
                        std::span<const typename C::index_type> keys, std::size_t base, OV& out) {
  std::size_t e = 0;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    out.push_back(base + e);
    const auto end = starts[i] + curve::detail_interval::span<C>(C::max_level - levels[i]);
    while (e < keys.size() && keys[e] < end) ++e;
  }
  return e;
}

}  // namespace detail_shift


/// Places leaves and elements on the segment map `map` by segment shifts, when it can: every
/// rank's leaves (sorted by start) and elements (sorted by key) split into one run per new
/// segment, found by binary search of the splitters; the runs of other segments travel straight
/// from the arrays with their keys (one merged message per partner, raw, no staging copy);
/// arrivals from lower ranks are spliced in front of the kept run, those from higher ranks
/// behind it. `payload` is one value per leaf that travels with it, or empty (nothing travels).
/// `offsets`, when given, holds the current first element of every leaf (leaves + 1 values) and
/// is kept so. `layout`, when given, says where the kept leaves and the arrivals now lie.
///
/// Returns nullopt on every rank, having changed and sent nothing, when the shift does not
/// apply: elements that need serialization (decided at compile time), or a new splitter strictly
/// inside a leaf on some rank (the general path holds such leaves whole). Otherwise returns what
/// this rank sent. Precondition (as under any contiguous map): the ranks' leaves and elements lie
/// in rank order; arrivals out of curve order are sorted locally. `piece_bytes`: a message longer
/// than this travels in pieces (tests shrink it). Collective over comm.
/// The `offsets` argument of a caller that keeps none.
inline constexpr std::vector<std::size_t>* no_offsets = nullptr;

/// The `keys` argument of a caller whose elements are one per leaf, keyed by its start (a cell
/// datum): the starts are the keys and every count is 1, so neither travels nor splices twice.
struct LeafKeyed {};

template <OwnershipMap M, class LV, class EV, class KV, class OV>
  requires(M::contiguous_segments)
std::optional<mpi::MigrationCounters> shift_segments(const boost::mpi::communicator& comm, const M& map,
                                                     LocalLeaves<typename M::curve_type>& leaves, LV& payload,
                                                     EV& elements, KV& keys, OV* offsets, int tag,
                                                     ShiftLayout* layout = nullptr,
                                                     std::size_t piece_bytes = detail::nbx_piece_bytes) {
  using E = typename EV::value_type;
  using C = typename M::curve_type;
  using I = typename C::index_type;
  using detail_shift::Trailer;
  if constexpr (!mpi::is_raw_transportable<E>) {
    return std::nullopt;
  } else {
    constexpr bool leaf_keyed = std::is_same_v<KV, LeafKeyed>;
    const int p = comm.size(), me = comm.rank();
    const auto P = static_cast<std::size_t>(p), self = static_cast<std::size_t>(me);
    const std::size_t n = leaves.size(), m = elements.size();
    if constexpr (leaf_keyed) IRREGULAR_ASSERT(m == n && !offsets);
    else IRREGULAR_ASSERT(keys.size() == m);
    IRREGULAR_ASSERT(payload.empty() || payload.size() == n);
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
      if constexpr (leaf_keyed) eb[d] = lb[d];
      else eb[d] = static_cast<std::size_t>(std::lower_bound(keys.begin(), keys.end(), s[d]) - keys.begin());
    }
    // A splitter strictly inside a leaf splits it: only the leaf before each cut can contain one.
    // {leaves split, something moves, a payload travels}: a rank without leaves has an empty
    // payload even when the others carry one, so whether one travels is agreed here.
    std::uint64_t flags[3] = {0, 0, payload.empty() ? 0u : 1u};
    for (std::size_t d = 1; d < P; ++d)
      if (lb[d] > 0 && leaves.interval(lb[d] - 1).end > s[d]) flags[0] = 1;
    flags[1] = lb[self] != 0 || lb[self + 1] != n || eb[self] != 0 || eb[self + 1] != m;
    std::uint64_t global[3] = {0, 0, 0};
    BOOST_MPI_CHECK_RESULT(MPI_Allreduce, (flags, global, 3, MPI_UINT64_T, MPI_MAX, MPI_Comm(comm)));
    const bool has_payload = global[2] != 0;
    if (global[0] != 0) return std::nullopt;
    if (global[1] == 0) {
      if (layout) *layout = ShiftLayout{true, 0, 0, n, 0};
      return mpi::MigrationCounters{};
    }

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
      if constexpr (leaf_keyed) {
        regions.push_back(bytes_of(elements.data() + eb[d], ne));
      } else {
        for (std::size_t at = eb[d]; at < eb[d + 1]; at += detail_shift::block_elements) {
          const std::size_t k = std::min(detail_shift::block_elements, eb[d + 1] - at);
          regions.push_back(bytes_of(keys.data() + at, k));
          regions.push_back(bytes_of(elements.data() + at, k));
        }
      }
      regions.push_back(bytes_of(leaves.starts_.data() + lb[d], nl));
      if constexpr (!leaf_keyed) regions.push_back(bytes_of(leaves.counts_.data() + lb[d], nl));
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
    // Arrivals land in arrays of their own, whole blocks in place (detail_shift::LandingSink):
    // never in the arrays the sends still read from.
    using LandingKeys = std::conditional_t<leaf_keyed, std::vector<I>, KV>;
    EV landing;
    LandingKeys landing_keys;
    const bool keeps_none = eb[self + 1] == eb[self];
    detail_shift::LandingSink<E, I, EV, LandingKeys, !leaf_keyed> sink(me, landing, &landing_keys, has_payload,
                                                                       keeps_none, piece_bytes);
    mpi::detail_exchange::check_tag(tag);
    mpi::ExchangeStats stats;
    detail::nbx_exchange(comm, tag, std::span<const detail::OutgoingGather>(sends), sink, stats, piece_bytes);
    if (!sink.error().empty()) throw parse_error(sink.error());
    auto& landed = sink.landed();
    const auto by_source = [](const auto& x, const auto& y) { return x.source < y.source; };
    const bool landed_in_order = std::is_sorted(landed.begin(), landed.end(), by_source);
    if (!landed_in_order) std::stable_sort(landed.begin(), landed.end(), by_source);

    // Arrivals: elements and keys in the landing arrays, leaf parts in the sink's tails; those
    // from lower ranks go in front of the kept run, those from higher ranks behind it.
    std::vector<detail_shift::Arrival> arrivals;
    arrivals.reserve(landed.size());
    std::size_t n_low = 0;  // arrivals from lower ranks: arrivals[0, n_low)
    std::size_t low_l = 0, low_e = 0, high_l = 0, high_e = 0;
    // A leaf count travels unless the elements are leaf-keyed (then every count is 1).
    constexpr std::size_t count_bytes = leaf_keyed ? 0 : sizeof(std::uint64_t);
    for (const auto& l : landed) {
      const Trailer& t = l.t;
      detail_shift::Arrival r{};
      r.t = t;
      const char* at = sink.tails() + l.tail;
      auto skip = [&at](std::size_t bytes) {
        const char* here = at;
        at += bytes;
        return here;
      };
      if (l.whole) {  // the element part as it came
        r.elements = sink.messages() + l.at;
        r.blocked = !leaf_keyed;
      } else {
        r.elements = reinterpret_cast<const char*>(landing.data() + l.at);
        if constexpr (!leaf_keyed) r.keys = reinterpret_cast<const char*>(landing_keys.data() + l.at);
      }
      r.starts = skip(t.leaves * sizeof(I));
      r.counts = skip(t.leaves * count_bytes);
      r.payload = skip(has_payload ? t.leaves * sizeof(double) : 0);
      r.levels = skip(t.leaves);
      arrivals.push_back(r);
      if (l.source < me) {
        ++n_low;
        low_l += t.leaves;
        low_e += t.elements;
      } else {
        high_l += t.leaves;
        high_e += t.elements;
      }
    }
    const std::span<const detail_shift::Arrival> low(arrivals.data(), n_low),
        high(arrivals.data() + n_low, arrivals.size() - n_low);

    // Splice, array by array: low ++ kept ++ high, the kept run moved once.
    const std::size_t a = lb[self], b = lb[self + 1], ea = eb[self], ee = eb[self + 1];
    const std::size_t kept = b - a, kept_e = ee - ea;
    // Offsets of the kept leaves shift by one constant when they index exactly the kept elements.
    const bool offsets_kept = offsets && (*offsets)[a] == ea && (*offsets)[b] == ee;
    auto splice = [&](auto& v, std::size_t first, std::size_t last, std::size_t nl, std::size_t nh, auto field,
                      auto count) {
      using T = typename std::remove_reference_t<decltype(v)>::value_type;
      detail::open_around(v, first, last, nl, nh);
      detail_shift::copy_runs<T>(v.data(), low, field, count);
      detail_shift::copy_runs<T>(v.data() + nl + (last - first), high, field, count);
    };
    const auto per_leaf = [](const detail_shift::Arrival& r) { return static_cast<std::size_t>(r.t.leaves); };
    splice(leaves.starts_, a, b, low_l, high_l, [](const auto& r) { return r.starts; }, per_leaf);
    splice(leaves.levels_, a, b, low_l, high_l, [](const auto& r) { return r.levels; }, per_leaf);
    if constexpr (leaf_keyed) {  // one element per leaf: the arrivals' counts are 1
      detail::open_around(leaves.counts_, a, b, low_l, high_l);
      std::fill_n(leaves.counts_.data(), low_l, std::uint64_t{1});
      std::fill_n(leaves.counts_.data() + low_l + kept, high_l, std::uint64_t{1});
    } else {
      splice(leaves.counts_, a, b, low_l, high_l, [](const auto& r) { return r.counts; }, per_leaf);
    }
    if (has_payload) splice(payload, a, b, low_l, high_l, [](const auto& r) { return r.payload; }, per_leaf);
    if (kept_e == 0 && landed_in_order) {
      // Nothing kept: the landing arrays, in rank order already, are the result (no copy).
      elements.swap(landing);
      if constexpr (!leaf_keyed) keys.swap(landing_keys);
    } else {
      detail::open_around(elements, ea, ee, low_e, high_e);
      I* kd = nullptr;
      if constexpr (!leaf_keyed) {
        detail::open_around(keys, ea, ee, low_e, high_e);
        kd = keys.data();
      }
      detail_shift::copy_elements<E, I>(elements.data(), kd, low);
      detail_shift::copy_elements<E, I>(elements.data() + low_e + kept_e, kd ? kd + low_e + kept_e : nullptr, high);
    }
    arrivals.clear();

    // The blocks meet in curve order under a contiguous map; a source out of rank order (not a
    // contiguous layout before) is repaired by a local sort. Every run (an arrival, the kept run)
    // is sorted where it came from, so only the seams between runs are checked.
    bool ordered = true;
    {
      std::size_t at_l = 0, at_e = 0;
      auto seam = [&](std::size_t nl, std::size_t ne) {  // a run of nl leaves and ne elements follows
        const auto& st = leaves.starts_;
        if (at_l != 0 && nl != 0 && !(st[at_l - 1] < st[at_l])) ordered = false;
        if constexpr (!leaf_keyed)
          if (at_e != 0 && ne != 0 && keys[at_e] < keys[at_e - 1]) ordered = false;
        // An empty run keeps the previous last value as the one to compare with.
        at_l += nl;
        at_e += ne;
      };
      const auto l_of = [](const auto& x) { return static_cast<std::size_t>(x.t.leaves); };
      const auto e_of = [](const auto& x) { return static_cast<std::size_t>(x.t.elements); };
      for (std::size_t k = 0; k < n_low; ++k) seam(l_of(landed[k]), e_of(landed[k]));
      seam(kept, kept_e);
      for (std::size_t k = n_low; k < landed.size(); ++k) seam(l_of(landed[k]), e_of(landed[k]));
    }
    if (!ordered) {
      std::vector<std::size_t> order(leaves.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::sort(order.begin(), order.end(),
                [&](std::size_t x, std::size_t y) { return leaves.starts_[x] < leaves.starts_[y]; });
      LocalLeaves<C> sorted;
      LV sorted_payload;
      EV sorted_elements;
      for (std::size_t i : order) {
        sorted.push_back(leaves.starts_[i], leaves.levels_[i], leaves.counts_[i]);
        if (has_payload) sorted_payload.push_back(payload[i]);
        if constexpr (leaf_keyed) sorted_elements.push_back(elements[i]);
      }
      leaves = std::move(sorted);
      if (has_payload) payload = std::move(sorted_payload);
      if constexpr (leaf_keyed) elements = std::move(sorted_elements);
      else detail::sort_by_key(elements, keys);
    }

    if constexpr (!leaf_keyed) {  // leaf-keyed callers keep no offsets (asserted above)
      if (offsets) {
        auto& off = *offsets;
        // A settled leaf holds all its elements, so its global count is its local run length.
        bool whole = ordered && offsets_kept;
        if (whole) {
          std::size_t sum = 0;
          for (std::size_t i = 0; i < low_l; ++i) sum += static_cast<std::size_t>(leaves.counts_[i]);
          whole = sum == low_e;
          sum = 0;
          for (std::size_t i = low_l + kept; i < leaves.size(); ++i) sum += static_cast<std::size_t>(leaves.counts_[i]);
          whole = whole && sum == high_e;
        }
        if (whole) {
          off.pop_back();  // the end marker; kept leaves' offsets move by one constant
          if (low_e == ea) {
            detail::open_around(off, a, b, low_l, high_l);
          } else {
            const std::size_t up = low_e, down = ea;
            detail::open_around(off, a, b, low_l, high_l, [up, down](std::size_t o) { return o - down + up; });
          }
          std::size_t e = 0;
          for (std::size_t i = 0; i < low_l; ++i) {
            off[i] = e;
            e += static_cast<std::size_t>(leaves.counts_[i]);
          }
          e = low_e + kept_e;
          for (std::size_t i = low_l + kept; i < leaves.size(); ++i) {
            off[i] = e;
            e += static_cast<std::size_t>(leaves.counts_[i]);
          }
          off.push_back(keys.size());
        } else {  // one linear pass, as ElementStore::index_leaves
          off.clear();
          [[maybe_unused]] const std::size_t in =
              detail_shift::run_offsets<C>(leaves.starts_, leaves.levels_, keys, 0, off);
          IRREGULAR_ASSERT(in == keys.size());
          off.push_back(keys.size());
        }
      }
    }
    if (layout) *layout = ShiftLayout{ordered, low_l, a, kept, high_l};
    return sent;
  }
}

}  // namespace irregular
