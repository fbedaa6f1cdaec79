// Migration: moves leaves (hnodes with their load) and their elements to the owners a new
// ownership map gives them, one merged message per partner (baiardi-2001 §3: remapping by
// segment shifts). Nothing is lost or duplicated: the sender keeps nothing it sent.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/detail/open_around.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/htree/sample_sort.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/detail/nbx.hpp>
#include <irregular/mpi/detail/packed_frames.hpp>
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/mpi/transport.hpp>

#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular {

namespace detail {
/// A leaf on the wire (trivially copyable: travels raw).
template <class Index>
struct LeafRecord {
  Index start;
  std::uint64_t count;
  double load;
  std::uint8_t level;
};
}  // namespace detail

namespace detail {

/// Where each destination's part of a sequence lies. `grouped`: every destination's items form
/// one contiguous run of the input (elements sorted by key under a contiguous map), so they are
/// sent from where they are; otherwise `order` lists the items destination by destination.
struct Groups {
  std::vector<std::size_t> begin,
      count;                       // per destination: first position (in order or input), size
  std::vector<std::size_t> order;  // empty when grouped
  bool grouped = true;

  [[nodiscard]] std::size_t at(std::size_t k) const { return grouped ? k : order[k]; }
};

inline Groups group(std::span<const int> dest, std::size_t p, bool allow_in_place) {
  Groups g;
  g.begin.assign(p, 0);
  g.count.assign(p, 0);
  // One pass over the runs of equal destinations: counts, and whether each destination has one run.
  std::vector<char> seen(allow_in_place ? p : 0, 0);
  g.grouped = allow_in_place;
  for (std::size_t i = 0; i < dest.size();) {
    const int d = dest[i];
    std::size_t j = i + 1;
    while (j < dest.size() && dest[j] == d) ++j;
    const auto ud = static_cast<std::size_t>(d);
    g.count[ud] += j - i;
    if (g.grouped) {
      if (seen[ud]) g.grouped = false;
      seen[ud] = 1;
      g.begin[ud] = i;
    }
    i = j;
  }
  if (g.grouped) return g;
  // Counting sort by destination keeps each group in its input (sorted) order.
  for (std::size_t r = 0, at = 0; r < p; ++r) {
    g.begin[r] = at;
    at += g.count[r];
  }
  g.order.resize(dest.size());
  auto fill = g.begin;
  for (std::size_t i = 0; i < dest.size(); ++i)
    g.order[fill[static_cast<std::size_t>(dest[i])]++] = i;
  return g;
}

/// Last bytes of every migration message: how many elements and leaf records it carries.
struct MigrationTrailer {
  std::uint64_t elements;
  std::uint64_t records;
};

/// One received message, in arrival order: its elements start at `first` (raw path: in the
/// arrivals vector) and its records at `first_record`.
struct Segment {
  int source;
  std::size_t first, count, first_record, records;
};

}  // namespace detail

namespace detail {

/// The phases of one migration (see migrate) on this rank: leaves and elements grouped by
/// destination, the outgoing messages, the exchange with its receiving side, the arrivals laid
/// out around this rank's own part, and the leaves merged in rank order.
template <SpaceFillingCurve C, class LV, class EV, class KV, class KeyOf>
struct Migration {
  using E = typename EV::value_type;
  using I = typename C::index_type;
  using Record = LeafRecord<I>;
  using Groups = detail::Groups;
  using Segment = detail::Segment;
  using Trailer = detail::MigrationTrailer;
  static constexpr bool raw = mpi::is_raw_transportable<E>;

  const boost::mpi::communicator& comm;
  LocalLeaves<C>& leaves;
  LV& loads;
  EV& elements;
  KV& keys;
  KeyOf& key_of;
  const int me;
  const std::size_t P, self;
  // Leaves and elements grouped by destination: leaf records always (leaves are few), a copy
  // of the raw elements that leave only when they are not grouped in place.
  Groups lg, eg;
  std::vector<Record> records;
  std::vector<E> staged;
  std::size_t staying = 0;  // elements that stay here
  // The raw run that ends its array (elements, or the staged copy) may carry its message's
  // records and trailer in the slots behind it: the array's size before, restored after.
  std::size_t tail_size = SIZE_MAX;
  // Outgoing messages: regions per partner, trailers and archives kept alive until the end.
  mpi::MigrationCounters sent;
  std::vector<Trailer> trailers;
  std::vector<PackedFrames> frames;
  std::vector<ByteRegion> regions;
  std::vector<OutgoingGather> sends;
  std::optional<std::string> failure;
  // Arrivals: one segment per message (arrival order, then rank order), their leaf records.
  mpi::ExchangeStats stats;
  std::vector<Segment> segments;
  std::vector<Record> in_records;
  std::string error;
  EV result;
  KV result_keys;
  bool keys_sorted = false;  // known sorted: the final sort is skipped
  bool in_order = true;      // keys computed so far are in order

  Migration(const boost::mpi::communicator& comm_, LocalLeaves<C>& leaves_, LV& loads_,
            EV& elements_, KV& keys_, KeyOf& key_of_)
      : comm(comm_),
        leaves(leaves_),
        loads(loads_),
        elements(elements_),
        keys(keys_),
        key_of(key_of_),
        me(comm_.rank()),
        P(static_cast<std::size_t>(comm_.size())),
        self(static_cast<std::size_t>(me)) {}

  /// Leaves are few and stored as structure of arrays: records grouped by destination.
  void group_leaves(std::span<const int> leaf_dest) {
    lg = detail::group(leaf_dest, P, false);
    records.resize(leaves.size());
    for (std::size_t k = 0; k < records.size(); ++k) {
      const std::size_t i = lg.order[k];
      records[k] = Record{leaves.starts()[i], leaves.counts()[i], loads[i], leaves.levels()[i]};
    }
  }

  /// Raw elements are sent in place when grouped, else from a grouped copy of those that leave
  /// (what stays is never copied for sending); serialized ones are archived straight from
  /// `elements` in group order.
  void group_elements(std::span<const int> elem_dest) {
    eg = detail::group(elem_dest, P, true);
    staying = eg.count[self];
    if constexpr (raw) {
      if (!eg.grouped) {
        // Room behind for the last destination's records and trailer (see tail_fits).
        std::size_t last = P;
        for (std::size_t r = P; r-- > 0;)
          if (r != self && eg.count[r] != 0) {
            last = r;
            break;
          }
        staged.reserve(elements.size() - staying + (last < P ? tail_slots(last) : 0));
        for (std::size_t k = 0; k < eg.order.size(); ++k)
          if (k < eg.begin[self] || k >= eg.begin[self] + staying)
            staged.push_back(elements[eg.order[k]]);
      }
    }
  }

  /// Where destination r's group starts in the sent sequence: the input, or the staged copy.
  [[nodiscard]] std::size_t sent_begin(std::size_t r) const {
    return eg.grouped || r < self ? eg.begin[r] : eg.begin[r] - staying;
  }

  /// Trailers, and the archives of serialized elements. A user serialize() that throws on one
  /// rank must fail every rank before anything is sent.
  void write_messages() {
    trailers.resize(P);
    frames.resize(raw ? 0 : P);
    try {
      for (std::size_t r = 0; r < P; ++r) {
        const std::size_t nl = lg.count[r], ne = eg.count[r];
        if (r == self || nl + ne == 0) continue;  // what stays is handed over, never packed
        if constexpr (!raw)
          detail::write_frames<E>(
              comm, ne, [&](std::size_t k) -> const E& { return elements[eg.at(eg.begin[r] + k)]; },
              frames[r]);
        trailers[r] = Trailer{ne, nl};
      }
    } catch (const std::exception& e) {
      failure = std::string("irregular::migrate: serializing an element on rank ") +
                std::to_string(me) + ": " + e.what();
    }
    if constexpr (!raw) mpi::agree_on(comm, failure);
  }

  /// Slots of E that hold destination r's records and trailer.
  [[nodiscard]] std::size_t tail_slots(std::size_t r) const {
    return (lg.count[r] * sizeof(Record) + sizeof(Trailer) + sizeof(E) - 1) / sizeof(E);
  }

  /// The destination whose raw run ends `v`, when v's spare capacity holds that message's
  /// records and trailer (else P): write_tail() copies them behind the run, so the message is
  /// one contiguous region, which MPI moves by a single copy (Open MPI's CMA), where a gathered
  /// datatype takes the two copies of the pipelined fragments (bench_transport (d)).
  /// restore_tail() gives v its size back.
  template <class V>
  [[nodiscard]] std::size_t tail_fits(const V& v) const {
    for (std::size_t r = 0; r < P; ++r) {
      const std::size_t ne = eg.count[r];
      if (r == self || ne == 0 || sent_begin(r) + ne != v.size()) continue;
      return v.capacity() - v.size() >= tail_slots(r) ? r : P;
    }
    return P;
  }
  template <class V>
  void write_tail(V& v, std::size_t r) {
    const std::size_t size = v.size();
    detail::resize_for_overwrite(v, size + tail_slots(r));  // within capacity: nothing moves
    char* at = reinterpret_cast<char*>(v.data() + size);
    const std::size_t record_bytes = lg.count[r] * sizeof(Record);
    if (record_bytes != 0) std::memcpy(at, records.data() + lg.begin[r], record_bytes);
    std::memcpy(at + record_bytes, &trailers[r], sizeof(Trailer));
    tail_size = size;
  }
  void restore_tail() noexcept {
    if (tail_size == SIZE_MAX) return;
    if (eg.grouped)
      elements.resize(tail_size);
    else
      staged.resize(tail_size);
    tail_size = SIZE_MAX;
  }

  /// One message per partner, [elements][leaf records][trailer], gathered by an MPI datatype
  /// from where the parts lie; counts what is sent.
  void address_messages() {
    std::size_t tail_dest = P;  // the destination whose message is its array's last bytes
    if constexpr (raw) tail_dest = eg.grouped ? tail_fits(elements) : tail_fits(staged);
    const E* grouped_elements = raw && !eg.grouped ? staged.data() : elements.data();
    std::vector<std::pair<int, std::size_t>> message_regions;  // (dest, first region)
    for (std::size_t r = 0; r < P; ++r) {
      const std::size_t nl = lg.count[r], ne = eg.count[r];
      if (r == self || nl + ne == 0) continue;
      const std::size_t first = regions.size();
      if (r == tail_dest) {  // one contiguous region: elements, then records and trailer
        regions.push_back({reinterpret_cast<const char*>(grouped_elements + sent_begin(r)),
                           ne * sizeof(E) + nl * sizeof(Record) + sizeof(Trailer)});
      } else {
        if constexpr (raw)
          regions.push_back(
              {reinterpret_cast<const char*>(grouped_elements + sent_begin(r)), ne * sizeof(E)});
        else
          frames[r].append_regions(regions);
        regions.push_back(
            {reinterpret_cast<const char*>(records.data() + lg.begin[r]), nl * sizeof(Record)});
        regions.push_back({reinterpret_cast<const char*>(&trailers[r]), sizeof(Trailer)});
      }
      message_regions.push_back({static_cast<int>(r), first});
      std::size_t bytes = 0;
      for (std::size_t k = first; k < regions.size(); ++k) bytes += regions[k].bytes;
      sent.hnodes += nl;
      sent.elements += ne;
      sent.bytes += bytes;
      sent.messages += 1;
    }
    sends.reserve(message_regions.size());
    for (std::size_t m = 0; m < message_regions.size(); ++m) {
      const std::size_t first = message_regions[m].second;
      const std::size_t end =
          m + 1 < message_regions.size() ? message_regions[m + 1].second : regions.size();
      sends.push_back({message_regions[m].first,
                       std::span<const ByteRegion>(regions).subspan(first, end - first)});
    }
    if constexpr (raw) {  // last: nothing that may throw runs until the exchange restores it
      if (tail_dest != P) {
        if (eg.grouped)
          write_tail(elements, tail_dest);
        else
          write_tail(staged, tail_dest);
      }
    }
  }

  void bad_message(int source, std::size_t total, const std::string& what) {
    if (error.empty())
      error = "irregular::migrate: rank " + std::to_string(me) + " received " +
              std::to_string(total) + " bytes from rank " + std::to_string(source) +
              " that do not parse: " + what;
  }

  /// Splits a received message [element part][records][trailer]: its records are appended to
  /// in_records and its segment to segments. Returns the element part's size, or SIZE_MAX
  /// (recorded in `error`) when the message does not parse.
  std::size_t split(int source, const char* msg, std::size_t total, Trailer& t) {
    if (total < sizeof(Trailer)) {
      bad_message(source, total, "no trailer");
      return SIZE_MAX;
    }
    std::memcpy(&t, msg + total - sizeof t, sizeof t);
    const std::size_t body = total - sizeof t;
    if (t.records > body / sizeof(Record)) {
      bad_message(source, total, std::to_string(t.records) + " leaf records announced");
      return SIZE_MAX;
    }
    const std::size_t element_bytes = body - static_cast<std::size_t>(t.records) * sizeof(Record);
    if constexpr (raw) {
      if (element_bytes != t.elements * sizeof(E)) {
        bad_message(source, total,
                    std::to_string(t.elements) + " raw elements of " + std::to_string(sizeof(E)) +
                        " bytes announced for " + std::to_string(element_bytes) + " bytes");
        return SIZE_MAX;
      }
    }
    const std::size_t first_record = in_records.size();
    in_records.resize(first_record + static_cast<std::size_t>(t.records));
    if (t.records != 0)
      std::memcpy(static_cast<void*>(in_records.data() + first_record), msg + element_bytes,
                  static_cast<std::size_t>(t.records) * sizeof(Record));
    segments.push_back(Segment{source, 0, static_cast<std::size_t>(t.elements), first_record,
                               static_cast<std::size_t>(t.records)});
    return element_bytes;
  }

  // The own part: contiguous in the grouped input, or gathered through the order.
  E& self_element(std::size_t k) { return elements[eg.at(eg.begin[self] + k)]; }
  const I& self_key(std::size_t k) { return keys[eg.at(eg.begin[self] + k)]; }

  /// Receives raw messages into one arrivals array, one after another; the [records][trailer]
  /// tail of each message lands past its elements and is cut off once split.
  struct RawSink {
    EV* out;
    std::size_t base = 0;
    Migration* m;
    char* reserve(int, std::size_t offset, std::size_t bytes) {
      if (offset == 0) base = out->size();
      const std::size_t need = base + (offset + bytes + sizeof(E) - 1) / sizeof(E);
      if (need > out->capacity()) out->reserve(std::max(need, out->size() + out->size() / 2));
      if (need > out->size()) detail::resize_for_overwrite(*out, need);  // the receive writes them
      return reinterpret_cast<char*>(out->data() + base) + offset;
    }
    void finish(int source, std::size_t total) {
      Trailer t{};
      const std::size_t element_bytes =
          m->split(source, reinterpret_cast<const char*>(out->data() + base), total, t);
      if (element_bytes == SIZE_MAX) {
        out->resize(base);
        return;
      }
      out->resize(base + static_cast<std::size_t>(t.elements));
      m->segments.back().first = base;
    }
  };

  /// Raw path: the exchange, arrivals straight into `arrivals`. A rank that keeps none of its
  /// elements and sends none from its array (empty, or sending a staged copy) lends that
  /// array's storage: its pages are touched already, a fresh buffer's would fault one by one.
  /// A message that does not parse leaves the arrays as they were and throws.
  void land_raw(int tag, EV& arrivals) {
    const bool lend = staying == 0 && (elements.empty() || !eg.grouped);
    if (lend) arrivals.swap(elements);
    const std::size_t lent = arrivals.size();  // restored on error: the staged copy holds them all
    arrivals.clear();
    RawSink sink{&arrivals, 0, this};
    struct Restore {  // the sent array's size back, also when MPI throws
      Migration* m;
      ~Restore() { m->restore_tail(); }
    } restore{this};
    detail::nbx_exchange(comm, tag, std::span<const OutgoingGather>(sends), sink, stats);
    restore_tail();        // every send has completed
    if (!error.empty()) {  // leave the arrays as they were
      if (lend) {
        elements.swap(arrivals);
        elements.resize(lent);
        for (std::size_t k = 0; k < lent; ++k) elements[eg.order[k]] = staged[k];
      }
      throw parse_error(error);
    }
  }

  /// Sources in rank order, with this rank's own part in its place: contiguous segments stay
  /// sorted. Lays the arrivals out in rank order once when they came out of order (rare:
  /// several partners out of order).
  void order_arrivals(EV& arrivals) {
    const auto by_source = [](const Segment& x, const Segment& y) { return x.source < y.source; };
    if (std::is_sorted(segments.begin(), segments.end(), by_source)) return;
    std::stable_sort(segments.begin(), segments.end(), by_source);
    EV ordered;
    ordered.reserve(arrivals.size());
    for (Segment& sg : segments) {
      const auto f = arrivals.begin() + static_cast<std::ptrdiff_t>(sg.first);
      sg.first = ordered.size();
      ordered.insert(ordered.end(), f, f + static_cast<std::ptrdiff_t>(sg.count));
    }
    arrivals.swap(ordered);
  }

  /// Keys of es[from, to) into ks, checked for order as they are computed.
  void key_range(KV& ks, const EV& es, std::size_t from, std::size_t to) {
    if (from == to) return;
    I prev = ks[from] = key_of(es[from]);
    bool up = true;
    for (std::size_t j = from + 1; j < to; ++j) {
      const I k = key_of(es[j]);
      ks[j] = k;
      up &= !(k < prev);
      prev = k;
    }
    in_order = in_order && up;
  }

  /// The raw result: arrivals from lower ranks, the own run, arrivals from higher ranks. Keys
  /// are computed once, for the arrivals only, where they end up; the own run (its keys may
  /// come in any order) and its two seams are checked after.
  void place_raw(EV& arrivals) {
    std::size_t low_e = 0;  // arrivals from lower ranks: arrivals[0, low_e)
    for (const Segment& sg : segments)
      if (sg.source < me) low_e += sg.count;
    const std::size_t high_e = arrivals.size() - low_e;
    const auto low_end = arrivals.begin() + static_cast<std::ptrdiff_t>(low_e);
    if (staying == 0) {
      result.swap(arrivals);
      result_keys.swap(keys);  // no own key is needed any more: its storage takes theirs
      detail::resize_for_overwrite(result_keys, result.size());
      key_range(result_keys, result, 0, result.size());
    } else if (eg.grouped) {
      // Every send has completed: the own run stays in its array, the arrivals go around it.
      const std::size_t b = eg.begin[self], e = b + staying;
      detail::open_around(elements, b, e, low_e, high_e);
      detail::open_around(keys, b, e, low_e, high_e);
      std::copy(arrivals.begin(), low_end, elements.begin());
      std::copy(low_end, arrivals.end(),
                elements.begin() + static_cast<std::ptrdiff_t>(low_e + staying));
      key_range(keys, elements, 0, low_e);
      key_range(keys, elements, low_e + staying, elements.size());
      result.swap(elements);
      result_keys.swap(keys);
    } else {  // the own part is scattered: gathered between the arrivals
      detail::resize_for_overwrite(result, arrivals.size() + staying);
      detail::resize_for_overwrite(result_keys, result.size());
      std::copy(arrivals.begin(), low_end, result.begin());
      for (std::size_t k = 0; k < staying; ++k) {
        result[low_e + k] = self_element(k);
        result_keys[low_e + k] = self_key(k);
      }
      std::copy(low_end, arrivals.end(),
                result.begin() + static_cast<std::ptrdiff_t>(low_e + staying));
      key_range(result_keys, result, 0, low_e);
      key_range(result_keys, result, low_e + staying, result.size());
    }
    if (staying != 0) {
      const auto own = result_keys.begin() + static_cast<std::ptrdiff_t>(low_e);
      const auto seam = [&](std::size_t j) {
        return j == 0 || j >= result_keys.size() || !(result_keys[j] < result_keys[j - 1]);
      };
      in_order = in_order && std::is_sorted(own, own + static_cast<std::ptrdiff_t>(staying)) &&
                 seam(low_e) && seam(low_e + staying);
    }
    keys_sorted = in_order;
  }

  void receive_raw(int tag) {
    EV arrivals;
    land_raw(tag, arrivals);
    order_arrivals(arrivals);
    place_raw(arrivals);
  }

  /// Serialized path, reading: splits every message first, so the result is reserved once and
  /// a bad message changes nothing (throws). Received elements are constructed in place as
  /// they are read and keyed while in cache; the own part gets its slots (from self_at) here
  /// and its elements once every rank agrees.
  template <class Got>
  void read_arrivals(Got& got, std::size_t& self_at) {
    std::vector<std::size_t> element_bytes;
    for (auto& [source, msg] : got) {
      Trailer t{};
      element_bytes.push_back(split(source, msg.data(), msg.size(), t));
    }
    if (!error.empty()) throw parse_error(error);
    // Never beyond one element per received byte: a corrupt count demands no memory.
    std::size_t room = staying;
    for (std::size_t m = 0; m < segments.size(); ++m)
      room += std::min(segments[m].count, element_bytes[m]);
    if (elements.empty()) {
      // Nothing to keep: the empty arrays lend their storage, whose pages are mapped already
      // (a fresh result's would fault one by one); empty they stay empty on failure.
      result.swap(elements);
      result_keys.swap(keys);
    }
    result.reserve(room);
    result_keys.reserve(room);
    auto own_slots = [&] {
      self_at = result.size();
      result.resize(self_at + staying);
      result_keys.resize(self_at + staying);
    };
    bool self_done = false;
    for (std::size_t m = 0; m < got.size(); ++m) {
      auto& [source, msg] = got[m];
      if (!self_done && source > me) {
        own_slots();
        self_done = true;
      }
      segments[m].first = result.size();
      std::size_t read = 0;
      std::string why =
          detail::read_frames(comm, msg, 0, element_bytes[m], result, segments[m].count, read,
                              [&](const E& e) { result_keys.push_back(key_of(e)); });
      if (why.empty() && read != segments[m].count)
        why = "frames hold fewer elements than announced";
      if (!why.empty()) {
        bad_message(source, msg.size(), why);
        throw parse_error(error);
      }
      detail::recycle_frame_buffer(msg);  // as we go
    }
    if (!self_done) own_slots();
  }

  /// Serialized path: reading runs user deserialization, so every rank agrees on the outcome
  /// before the own part leaves `elements`: a failure anywhere leaves every rank's arrays as
  /// they were.
  void receive_serialized(int tag) {
    mpi::detail::BufferSink<char, FrameBuffer> sink;
    detail::nbx_exchange(comm, tag, std::span<const OutgoingGather>(sends), sink, stats);
    std::sort(sink.got.begin(), sink.got.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::size_t self_at = 0;
    try {
      read_arrivals(sink.got, self_at);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    mpi::agree_on(comm, failure);
    for (std::size_t k = 0; k < staying; ++k) {
      result[self_at + k] = std::move(self_element(k));
      result_keys[self_at + k] = self_key(k);
    }
  }

  /// Leaves: sources in rank order with the own records in place, as the elements (both paths
  /// left `segments` in rank order). Contiguous segments arrive in rank order, already sorted;
  /// other maps need a sort.
  void merge_leaves() {
    std::vector<Record> all_in;
    all_in.reserve(in_records.size() + lg.count[self]);
    IRREGULAR_ASSERT(
        std::is_sorted(segments.begin(), segments.end(),
                       [](const Segment& a, const Segment& b) { return a.source < b.source; }));
    bool self_done = false;
    auto take_self = [&] {
      all_in.insert(all_in.end(), records.begin() + static_cast<std::ptrdiff_t>(lg.begin[self]),
                    records.begin() + static_cast<std::ptrdiff_t>(lg.begin[self] + lg.count[self]));
      self_done = true;
    };
    for (const Segment& s : segments) {
      if (!self_done && s.source > me) take_self();
      all_in.insert(all_in.end(), in_records.begin() + static_cast<std::ptrdiff_t>(s.first_record),
                    in_records.begin() + static_cast<std::ptrdiff_t>(s.first_record + s.records));
    }
    if (!self_done) take_self();
    std::vector<Record>().swap(records);
    std::vector<Record>().swap(in_records);
    const auto by_start = [](const Record& a, const Record& b) { return a.start < b.start; };
    if (!std::is_sorted(all_in.begin(), all_in.end(), by_start))
      std::sort(all_in.begin(), all_in.end(), by_start);
    leaves.clear();
    loads.clear();
    leaves.reserve(all_in.size());
    loads.reserve(all_in.size());
    for (const auto& rec : all_in) {
      leaves.push_back(rec.start, rec.level, rec.count);
      loads.push_back(rec.load);
    }
  }

  /// The result becomes the arrays, sorted by key unless known sorted.
  void settle_elements() {
    elements.swap(result);
    keys.swap(result_keys);
    EV().swap(result);
    IRREGULAR_ASSERT(keys.size() == elements.size());
    if (!keys_sorted)
      irregular::sort_by_key(elements, keys);  // returns at once when already sorted
  }
};

}  // namespace detail

/// Sends local leaf i to rank leaf_dest[i] and element j to rank elem_dest[j], one merged message
/// per partner: [elements][leaf records][trailer], gathered by an MPI datatype from where the
/// parts lie (no staging copy when each partner's elements are contiguous, as under segment
/// maps). Trivially copyable elements (mpi::is_raw_transportable) travel as bytes and are
/// received straight into the result; others through the wire archive
/// (mpi/detail/wire_archive.hpp). `keys` are the keys of `elements` (element by element, in
/// any order), `loads` one value per leaf. On return the arrays hold what this
/// rank owns, leaves sorted by start and elements by key; what stays here is never packed.
/// Returns what this rank sent to others. Collective over comm.
template <SpaceFillingCurve C, class LV, class EV, class KV, class KeyOf>
mpi::MigrationCounters migrate(const boost::mpi::communicator& comm, std::span<const int> leaf_dest,
                               std::span<const int> elem_dest, LocalLeaves<C>& leaves, LV& loads,
                               EV& elements, KV& keys, KeyOf&& key_of, int tag) {
  using I = typename C::index_type;
  static_assert(std::is_same_v<typename KV::value_type, I> &&
                std::is_same_v<typename LV::value_type, double>);
  using Migration = detail::Migration<C, LV, EV, KV, std::remove_reference_t<KeyOf>>;
  if (comm.size() == 1) return {};  // everything stays: nothing to stage, pack or re-sort
  IRREGULAR_ASSERT(leaf_dest.size() == leaves.size() && elem_dest.size() == elements.size() &&
                   keys.size() == elements.size() && loads.size() == leaves.size());
  Migration m(comm, leaves, loads, elements, keys, key_of);
  m.group_leaves(leaf_dest);
  m.group_elements(elem_dest);
  m.write_messages();
  mpi::detail::check_tag(tag);  // before the sent array may grow by a message's tail
  m.address_messages();
  if constexpr (Migration::raw)
    m.receive_raw(tag);
  else
    m.receive_serialized(tag);
  m.merge_leaves();
  m.settle_elements();
  return m.sent;
}

}  // namespace irregular
