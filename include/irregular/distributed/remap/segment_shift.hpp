// Segment shift: the remap of a contiguous-segment map (baiardi-2001 §3, rebalancing by segment
// shifts). Leaves sorted by start and elements sorted by key go to new splitters as one run per
// destination; each rank keeps its middle run and splices the arrivals in front of and behind it.
// O(shipped + p log n) work per rank, besides one memmove of the kept run where arrivals land in
// front.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/detail/open_around.hpp>
#include <irregular/core/error.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/htree/sample_sort.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/remap/detail/shift_wire.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/detail/nbx.hpp>
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/mpi/transport.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/operations.hpp>

#include <algorithm>
#include <array>
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

namespace detail {

/// Leaf offsets of a run of leaves over its sorted keys, from `base`: out gets one value per leaf.
/// Returns the number of keys that lie in the leaves (all of them when the run is whole).
template <SpaceFillingCurve C, class OV>
std::size_t run_offsets(std::span<const typename C::index_type> starts,
                        std::span<const std::uint8_t> levels,
                        std::span<const typename C::index_type> keys, std::size_t base, OV& out) {
  std::size_t e = 0;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    out.push_back(base + e);
    const auto end = starts[i] + irregular::detail::levels_span<C>(C::max_level - levels[i]);
    while (e < keys.size() && keys[e] < end) ++e;
  }
  return e;
}

}  // namespace detail

/// The `offsets` argument of a caller that keeps none.
inline constexpr std::vector<std::size_t>* no_offsets = nullptr;

/// The `keys` argument of a caller whose elements are one per leaf, keyed by its start (a cell
/// datum): the starts are the keys and every count is 1, so neither travels nor splices twice.
struct LeafKeyed {};

namespace detail {

/// The phases of one segment shift (see shift_segments) on this rank: the runs per new segment,
/// the agreement, the outgoing messages, the arrivals, the splice around the kept run, the seam
/// check and the leaf offsets.
template <OwnershipMap M, class LV, class EV, class KV, class OV>
struct SegmentShift {
  using E = typename EV::value_type;
  using C = typename M::curve_type;
  using I = typename C::index_type;
  using Trailer = detail::ShiftTrailer;
  using Arrival = detail::Arrival;
  static constexpr bool leaf_keyed = std::is_same_v<KV, LeafKeyed>;
  using LandingKeys = std::conditional_t<leaf_keyed, std::vector<I>, KV>;
  using Sink = detail::LandingSink<E, I, EV, LandingKeys, !leaf_keyed>;
  // A leaf count travels unless the elements are leaf-keyed (then every count is 1).
  static constexpr std::size_t count_bytes = leaf_keyed ? 0 : sizeof(std::uint64_t);

  const boost::mpi::communicator& comm;
  const M& map;
  LocalLeaves<C>& leaves;
  LV& payload;
  EV& elements;
  KV& keys;
  OV* offsets;
  const int me;
  const std::size_t P, self, n, m;  // ranks, this rank, leaves, elements
  // Destination d gets leaves [lb[d], lb[d+1]) and elements [eb[d], eb[d+1]); this rank keeps
  // leaves [a, b) and elements [ea, ee).
  std::vector<std::size_t> lb, eb;
  std::size_t a = 0, b = 0, ea = 0, ee = 0, kept = 0, kept_e = 0;
  bool has_payload = false;
  mpi::MigrationCounters sent;
  std::vector<Trailer> trailers;
  std::vector<ByteRegion> regions;
  std::vector<OutgoingGather> sends;
  // Arrivals land in arrays of their own, whole blocks in place (detail::LandingSink):
  // never in the arrays the sends still read from.
  EV landing;
  LandingKeys landing_keys;
  bool landed_in_order = true;
  std::vector<Arrival> arrivals;  // those from lower ranks first: arrivals[0, n_low)
  std::size_t n_low = 0, low_l = 0, low_e = 0, high_l = 0, high_e = 0;
  bool ordered = true;  // leaves and elements in curve order after the splice

  SegmentShift(const boost::mpi::communicator& comm_, const M& map_, LocalLeaves<C>& leaves_,
               LV& payload_, EV& elements_, KV& keys_, OV* offsets_)
      : comm(comm_),
        map(map_),
        leaves(leaves_),
        payload(payload_),
        elements(elements_),
        keys(keys_),
        offsets(offsets_),
        me(comm_.rank()),
        P(static_cast<std::size_t>(comm_.size())),
        self(static_cast<std::size_t>(me)),
        n(leaves_.size()),
        m(elements_.size()) {
    if constexpr (leaf_keyed)
      IRREGULAR_ASSERT(m == n && !offsets);
    else
      IRREGULAR_ASSERT(keys.size() == m);
    IRREGULAR_ASSERT(payload.empty() || payload.size() == n);
    IRREGULAR_ASSERT(!offsets || offsets->size() == n + 1);
  }

  /// The runs, by binary search of the splitters: leaf_owner is the owner of a leaf's start,
  /// and owners grow along sorted starts and keys.
  void cut_runs() {
    const auto& s = map.splitters();
    IRREGULAR_ASSERT(s.size() == P + 1);
    lb.resize(P + 1);
    eb.resize(P + 1);
    lb[0] = eb[0] = 0;
    lb[P] = n;
    eb[P] = m;
    for (std::size_t d = 1; d < P; ++d) {
      lb[d] = static_cast<std::size_t>(
          std::lower_bound(leaves.starts().begin(), leaves.starts().end(), s[d]) -
          leaves.starts().begin());
      if constexpr (leaf_keyed)
        eb[d] = lb[d];
      else
        eb[d] = static_cast<std::size_t>(std::lower_bound(keys.begin(), keys.end(), s[d]) -
                                         keys.begin());
    }
    a = lb[self];
    b = lb[self + 1];
    ea = eb[self];
    ee = eb[self + 1];
    kept = b - a;
    kept_e = ee - ea;
  }

  /// {leaves split, something moves, a payload travels}, agreed by one all_reduce. A splitter
  /// strictly inside a leaf splits it: only the leaf before each cut can contain one. A rank
  /// without leaves has an empty payload even when the others carry one, so whether one travels
  /// is agreed here.
  std::array<std::uint64_t, 3> agree() {
    const auto& s = map.splitters();
    std::uint64_t flags[3] = {0, 0, payload.empty() ? 0u : 1u};
    for (std::size_t d = 1; d < P; ++d)
      if (lb[d] > 0 && leaves.interval(lb[d] - 1).end > s[d]) flags[0] = 1;
    flags[1] = lb[self] != 0 || lb[self + 1] != n || eb[self] != 0 || eb[self + 1] != m;
    std::array<std::uint64_t, 3> global{0, 0, 0};
    boost::mpi::all_reduce(comm, flags, 3, global.data(), boost::mpi::maximum<std::uint64_t>());
    has_payload = global[2] != 0;
    return global;
  }

  template <class T>
  static ByteRegion bytes_of(const T* data, std::size_t k) {
    return ByteRegion{reinterpret_cast<const char*>(data), k * sizeof(T)};
  }

  /// Outgoing: every other destination's runs, addressed where they lie (one merged message per
  /// partner: [element blocks][starts][counts][payload][levels][trailer]).
  void address_runs() {
    trailers.resize(P);
    std::vector<std::pair<int, std::size_t>> firsts;  // (dest, first region)
    for (std::size_t d = 0; d < P; ++d) {
      const std::size_t nl = lb[d + 1] - lb[d], ne = eb[d + 1] - eb[d];
      if (d == self || nl + ne == 0) continue;
      trailers[d] = Trailer{ne, nl, has_payload ? 1u : 0u};
      const std::size_t first = regions.size();
      if constexpr (leaf_keyed) {
        regions.push_back(bytes_of(elements.data() + eb[d], ne));
      } else {
        for (std::size_t at = eb[d]; at < eb[d + 1]; at += detail::block_elements) {
          const std::size_t k = std::min(detail::block_elements, eb[d + 1] - at);
          regions.push_back(bytes_of(keys.data() + at, k));
          regions.push_back(bytes_of(elements.data() + at, k));
        }
      }
      regions.push_back(bytes_of(leaves.starts().data() + lb[d], nl));
      if constexpr (!leaf_keyed) regions.push_back(bytes_of(leaves.counts().data() + lb[d], nl));
      regions.push_back(bytes_of(payload.data() + (has_payload ? lb[d] : 0), has_payload ? nl : 0));
      regions.push_back(bytes_of(leaves.levels().data() + lb[d], nl));
      regions.push_back(bytes_of(&trailers[d], 1));
      firsts.push_back({static_cast<int>(d), first});
      for (std::size_t k = first; k < regions.size(); ++k) sent.bytes += regions[k].bytes;
      sent.hnodes += nl;
      sent.elements += ne;
      sent.messages += 1;
    }
    for (std::size_t k = 0; k < firsts.size(); ++k) {
      const std::size_t x = firsts[k].second;
      const std::size_t y = k + 1 < firsts.size() ? firsts[k + 1].second : regions.size();
      sends.push_back({firsts[k].first, std::span<const ByteRegion>(regions).subspan(x, y - x)});
    }
  }

  /// Arrivals: elements and keys in the landing arrays, leaf parts in the sink's tails, sources
  /// in rank order; those from lower ranks go in front of the kept run, those from higher ranks
  /// behind it.
  void take_arrivals(Sink& sink) {
    auto& landed = sink.landed();
    const auto by_source = [](const auto& x, const auto& y) { return x.source < y.source; };
    landed_in_order = std::is_sorted(landed.begin(), landed.end(), by_source);
    if (!landed_in_order) std::stable_sort(landed.begin(), landed.end(), by_source);
    arrivals.reserve(landed.size());
    for (const auto& l : landed) {
      const Trailer& t = l.t;
      Arrival r{};
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
        if constexpr (!leaf_keyed)
          r.keys = reinterpret_cast<const char*>(landing_keys.data() + l.at);
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
  }

  [[nodiscard]] std::span<const Arrival> low() const { return {arrivals.data(), n_low}; }
  [[nodiscard]] std::span<const Arrival> high() const {
    return {arrivals.data() + n_low, arrivals.size() - n_low};
  }

  /// One leaf array spliced: low ++ kept ++ high, the kept run moved once.
  template <class V, class Field>
  void splice_leaf_array(V& v, Field field) {
    using T = typename V::value_type;
    const auto per_leaf = [](const Arrival& r) { return static_cast<std::size_t>(r.t.leaves); };
    detail::open_around(v, a, b, low_l, high_l);
    detail::copy_runs<T>(v.data(), low(), field, per_leaf);
    detail::copy_runs<T>(v.data() + low_l + kept, high(), field, per_leaf);
  }

  /// Splice, array by array: low ++ kept ++ high, the kept run moved once.
  void splice() {
    leaves.splice([&](auto& starts, auto& levels, auto& counts) {
      splice_leaf_array(starts, [](const auto& r) { return r.starts; });
      splice_leaf_array(levels, [](const auto& r) { return r.levels; });
      if constexpr (leaf_keyed) {  // one element per leaf: the arrivals' counts are 1
        detail::open_around(counts, a, b, low_l, high_l);
        std::fill_n(counts.data(), low_l, std::uint64_t{1});
        std::fill_n(counts.data() + low_l + kept, high_l, std::uint64_t{1});
      } else {
        splice_leaf_array(counts, [](const auto& r) { return r.counts; });
      }
    });
    if (has_payload) splice_leaf_array(payload, [](const auto& r) { return r.payload; });
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
      detail::copy_elements<E, I>(elements.data(), kd, low());
      detail::copy_elements<E, I>(elements.data() + low_e + kept_e,
                                  kd ? kd + low_e + kept_e : nullptr, high());
    }
    arrivals.clear();
  }

  /// The blocks meet in curve order under a contiguous map; a source out of rank order (not a
  /// contiguous layout before) is repaired by a local sort. Every run (an arrival, the kept run)
  /// is sorted where it came from, so only the seams between runs are checked.
  template <class Landed>
  void check_seams(const Landed& landed) {
    std::size_t at_l = 0, at_e = 0;
    auto seam = [&](std::size_t nl, std::size_t ne) {  // a run of nl leaves and ne elements follows
      const auto st = leaves.starts();
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

  /// The repair when the seams are out of order: leaves (with payload, and leaf-keyed elements)
  /// sorted by start, keyed elements by key.
  void sort_locally() {
    std::vector<std::size_t> order(leaves.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      return leaves.starts()[x] < leaves.starts()[y];
    });
    LocalLeaves<C> sorted;
    LV sorted_payload;
    EV sorted_elements;
    for (std::size_t i : order) {
      sorted.push_back(leaves.starts()[i], leaves.levels()[i], leaves.counts()[i]);
      if (has_payload) sorted_payload.push_back(payload[i]);
      if constexpr (leaf_keyed) sorted_elements.push_back(elements[i]);
    }
    leaves = std::move(sorted);
    if (has_payload) payload = std::move(sorted_payload);
    if constexpr (leaf_keyed)
      elements = std::move(sorted_elements);
    else
      irregular::sort_by_key(elements, keys);
  }

  /// Whether every arrived leaf came whole (a settled leaf holds all its elements, so its global
  /// count is its local run length) and the kept leaves index exactly the kept elements: then
  /// the offsets move by constants.
  [[nodiscard]] bool offsets_shift_whole() const {
    // Offsets of the kept leaves shift by one constant when they index exactly the kept elements.
    const bool offsets_kept = (*offsets)[a] == ea && (*offsets)[b] == ee;
    if (!(ordered && offsets_kept)) return false;
    std::size_t sum = 0;
    for (std::size_t i = 0; i < low_l; ++i) sum += static_cast<std::size_t>(leaves.counts()[i]);
    if (sum != low_e) return false;
    sum = 0;
    for (std::size_t i = low_l + kept; i < leaves.size(); ++i)
      sum += static_cast<std::size_t>(leaves.counts()[i]);
    return sum == high_e;
  }

  /// The offsets kept up to date: the kept leaves' move by one constant and the arrivals' are
  /// counted, or (when that does not hold) one linear pass, as ElementStore::index_leaves.
  void update_offsets() {
    auto& off = *offsets;
    if (offsets_shift_whole()) {
      off.pop_back();  // the end marker; kept leaves' offsets move by one constant
      if (low_e == ea) {
        detail::open_around(off, a, b, low_l, high_l);
      } else {
        const std::size_t up = low_e, down = ea;
        detail::open_around(off, a, b, low_l, high_l,
                            [up, down](std::size_t o) { return o - down + up; });
      }
      std::size_t e = 0;
      for (std::size_t i = 0; i < low_l; ++i) {
        off[i] = e;
        e += static_cast<std::size_t>(leaves.counts()[i]);
      }
      e = low_e + kept_e;
      for (std::size_t i = low_l + kept; i < leaves.size(); ++i) {
        off[i] = e;
        e += static_cast<std::size_t>(leaves.counts()[i]);
      }
      off.push_back(keys.size());
    } else {
      off.clear();
      [[maybe_unused]] const std::size_t in =
          detail::run_offsets<C>(leaves.starts(), leaves.levels(), keys, 0, off);
      IRREGULAR_ASSERT(in == keys.size());
      off.push_back(keys.size());
    }
  }
};

}  // namespace detail

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
template <OwnershipMap M, class LV, class EV, class KV, class OV>
requires(M::contiguous_segments) std::optional<mpi::MigrationCounters> shift_segments(
    const boost::mpi::communicator& comm, const M& map, LocalLeaves<typename M::curve_type>& leaves,
    LV& payload, EV& elements, KV& keys, OV* offsets, int tag, ShiftLayout* layout = nullptr,
    std::size_t piece_bytes = detail::nbx_piece_bytes) {
  if constexpr (!mpi::is_raw_transportable<typename EV::value_type>) {
    return std::nullopt;
  } else {
    using Shift = detail::SegmentShift<M, LV, EV, KV, OV>;
    Shift shift(comm, map, leaves, payload, elements, keys, offsets);
    shift.cut_runs();
    const std::array<std::uint64_t, 3> agreed = shift.agree();
    if (agreed[0] != 0) return std::nullopt;  // a splitter inside a leaf: the general path
    if (agreed[1] == 0) {
      if (layout) *layout = ShiftLayout{true, 0, 0, shift.n, 0};
      return mpi::MigrationCounters{};
    }
    shift.address_runs();
    typename Shift::Sink sink(shift.me, shift.landing, &shift.landing_keys, shift.has_payload,
                              shift.kept_e == 0, piece_bytes);
    mpi::detail::check_tag(tag);
    mpi::ExchangeStats stats;
    detail::nbx_exchange(comm, tag, std::span<const detail::OutgoingGather>(shift.sends), sink,
                         stats, piece_bytes);
    if (!sink.error().empty()) throw parse_error(sink.error());
    shift.take_arrivals(sink);
    shift.splice();
    shift.check_seams(sink.landed());
    if (!shift.ordered) shift.sort_locally();
    if constexpr (!Shift::leaf_keyed) {  // leaf-keyed callers keep no offsets (asserted above)
      if (offsets) shift.update_offsets();
    }
    if (layout)
      *layout = ShiftLayout{shift.ordered, shift.low_l, shift.a, shift.kept, shift.high_l};
    return shift.sent;
  }
}

}  // namespace irregular
