// Sparse data exchange: one merged message per partner per phase, receivers not told who sends
// (NBX with termination; baiardi-collecting-remote-data "message merging", "non-blocking
// exchange").
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/detail/nbx.hpp>
#include <irregular/mpi/detail/packed_frames.hpp>
#include <irregular/mpi/transport.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular::mpi {

/// What one rank received, grouped by source rank in increasing order: the values from
/// sources[i] are values[offsets[i] .. offsets[i+1]). Only ranks that sent something appear
/// (this rank too, for its self-delivery).
template <class T>
struct Received {
  std::vector<int> sources;             ///< ranks that sent, ascending
  std::vector<std::size_t> offsets{0};  ///< sources.size() + 1 offsets into values
  std::vector<T> values;                ///< what they sent, source after source

  /// Values that the i-th source sent.
  [[nodiscard]] std::span<const T> from_index(std::size_t i) const {
    return std::span<const T>(values).subspan(offsets[i], offsets[i + 1] - offsets[i]);
  }
  /// Values that rank `source` sent (empty if it sent nothing).
  [[nodiscard]] std::span<const T> from_rank(int source) const {
    const auto it = std::lower_bound(sources.begin(), sources.end(), source);
    if (it == sources.end() || *it != source) return {};
    return from_index(static_cast<std::size_t>(it - sources.begin()));
  }
};

namespace detail {

inline void check_tag(int tag) {
  if (tag < 0 || tag > boost::mpi::environment::max_tag())
    throw invalid_argument("irregular::mpi::sparse_exchange: tag " + std::to_string(tag) +
                           " outside [0, " + std::to_string(boost::mpi::environment::max_tag()) +
                           "]");
}

// Receives each message into its own buffer (of T for raw types, so the bytes land in place;
// a frame buffer for serialized types).
template <class Unit, class Vector = std::vector<Unit>>
struct BufferSink {
  std::vector<std::pair<int, Vector>> got;
  bool ragged = false;  // a raw message whose length is not a multiple of sizeof(Unit)

  char* reserve(int source, std::size_t offset, std::size_t bytes) {
    if (offset == 0) {
      if constexpr (std::is_same_v<Vector, irregular::detail::FrameBuffer>)
        got.emplace_back(source, irregular::detail::take_frame_buffer(bytes));
      else
        got.emplace_back(source, Vector{});
    }
    Vector& v = got.back().second;
    const std::size_t need = (offset + bytes + sizeof(Unit) - 1) / sizeof(Unit);
    if (need > v.capacity()) v.reserve(std::max(need, 2 * v.capacity()));
    if (need > v.size()) v.resize(need);
    return reinterpret_cast<char*>(v.data()) + offset;
  }
  void finish(int, std::size_t total) {
    if (total % sizeof(Unit) != 0) ragged = true;
    got.back().second.resize(total / sizeof(Unit));
  }
};

}  // namespace detail

}  // namespace irregular::mpi

namespace irregular::detail {

/// The sending side of one sparse exchange (message merging): raw values are addressed where
/// they lie; serialized ones are archived into frames, one gathered message per destination.
template <class T>
struct ExchangeOutbox {
  std::vector<OutgoingBytes> sends;
  // Serialized path: per destination, archive frames sent as one gathered message.
  std::vector<PackedFrames> packed;
  std::vector<ByteRegion> regions;
  std::vector<OutgoingGather> gathers;

  /// One message per destination d != me with values (slice(d) gives them as a span).
  template <class Slice>
  void address(const boost::mpi::communicator& comm, const Slice& slice, std::size_t frame_bytes) {
    const int p = comm.size();
    const int me = comm.rank();
    if constexpr (!mpi::is_raw_transportable<T>) {
      pack(comm, slice, frame_bytes);
    } else {
      for (int d = 0; d < p; ++d) {
        const std::span<const T> s = slice(d);
        if (d == me || s.empty()) continue;
        sends.push_back({d, reinterpret_cast<const char*>(s.data()), s.size_bytes()});
      }
    }
  }

  template <class Slice>
  void pack(const boost::mpi::communicator& comm, const Slice& slice, std::size_t frame_bytes) {
    const int p = comm.size();
    const int me = comm.rank();
    packed.reserve(static_cast<std::size_t>(p));
    // serialize() is user code: one rank's failure fails every rank before anything is sent.
    mpi::agree(comm, [&] {
      for (int d = 0; d < p; ++d) {
        const std::span<const T> s = slice(d);
        if (d == me || s.empty()) continue;
        packed.emplace_back();
        detail::write_frames<T>(
            comm, s.size(), [&](std::size_t i) -> const T& { return s[i]; }, packed.back(),
            frame_bytes);
      }
    });
    std::size_t k = 0;
    for (const auto& f : packed) k += 2 * f.headers.size();
    regions.reserve(k);
    std::size_t at = 0;
    k = 0;
    for (int d = 0; d < p; ++d) {
      if (d == me || slice(d).empty()) continue;
      packed[k++].append_regions(regions);
      gathers.push_back({d, std::span<const ByteRegion>(regions).subspan(at, regions.size() - at)});
      at = regions.size();
    }
  }

  /// The NBX round: sends every message, receives into `sink` until every rank is done.
  template <class Sink>
  void send(const boost::mpi::communicator& comm, int tag, Sink& sink, mpi::ExchangeStats& stats,
            std::size_t piece_bytes) {
    if constexpr (mpi::is_raw_transportable<T>)
      detail::nbx_exchange(comm, tag, std::span<const OutgoingBytes>(sends), sink, stats,
                           piece_bytes);
    else
      detail::nbx_exchange(comm, tag, std::span<const OutgoingGather>(gathers), sink, stats,
                           piece_bytes);
    packed.clear();
  }
};

/// Sorts the arrivals by source (arrival order is arbitrary) and reserves the result's
/// per-source arrays; returns where this rank's own values go among the arrivals.
template <class T, class Got>
auto sort_arrivals_by_source(Got& got, mpi::Received<T>& out, int me) {
  std::sort(got.begin(), got.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  out.sources.reserve(got.size() + 1);
  out.offsets.reserve(got.size() + 2);
  return std::lower_bound(got.begin(), got.end(), me,
                          [](const auto& a, int r) { return a.first < r; });
}

/// This rank's self-delivery, as one source (none when empty).
template <class T>
void append_own_values(mpi::Received<T>& out, int me, std::span<const T> self) {
  if (self.empty()) return;
  out.sources.push_back(me);
  out.values.insert(out.values.end(), self.begin(), self.end());
  out.offsets.push_back(out.values.size());
}

/// Raw values: every message's buffer holds its values already; they are appended in source
/// order, or a lone partner's buffer is handed over without a copy.
template <class T>
mpi::Received<T> received_raw(int me, mpi::detail::BufferSink<T, std::vector<T>>& sink,
                              std::span<const T> self) {
  auto& got = sink.got;
  mpi::Received<T> out;
  const auto self_at = sort_arrivals_by_source(got, out, me);
  if (sink.ragged)
    throw parse_error("irregular::mpi::sparse_exchange: rank " + std::to_string(me) +
                      " received a raw message whose length is not a multiple of " +
                      std::to_string(sizeof(T)) + " bytes (sender and receiver disagree on T?)");
  if (self.empty() && got.size() == 1) {  // one partner: hand its buffer over without a copy
    out.sources.push_back(got[0].first);
    out.values = std::move(got[0].second);
    out.offsets.push_back(out.values.size());
    return out;
  }
  std::size_t total = self.size();
  for (const auto& g : got) total += g.second.size();
  out.values.reserve(total);
  for (auto it = got.begin(); it != got.end(); ++it) {
    if (it == self_at) append_own_values(out, me, self);
    out.values.insert(out.values.end(), it->second.begin(), it->second.end());
    out.sources.push_back(it->first);
    out.offsets.push_back(out.values.size());
  }
  if (self_at == got.end()) append_own_values(out, me, self);
  return out;
}

/// Serialized values: what each message's frames announce, so the values are reserved once
/// (never beyond one per received byte: a corrupt count cannot demand memory). Records the
/// counts and parse errors per message; an allocation failure goes to `failure`.
template <class T, class Got>
void reserve_announced(int me, const Got& got, std::size_t own, std::vector<std::size_t>& counts,
                       std::vector<std::string>& errors, std::vector<T>& values,
                       std::optional<std::string>& failure) {
  std::size_t total = own;
  for (std::size_t m = 0; m < got.size(); ++m) {
    errors[m] = detail::frames_count(got[m].second, counts[m]);
    total += std::min(counts[m], got[m].second.size());
  }
  try {
    values.reserve(total);
  } catch (const std::exception& e) {  // out of memory here must still reach the agreement
    failure = "irregular::mpi::sparse_exchange: rank " + std::to_string(me) + " cannot hold " +
              std::to_string(total) + " values: " + e.what();
  }
}

/// Loads one message's `count` values in place (reading runs user code: failures are recorded
/// for the agreement, never thrown) and recycles its buffer.
template <class T, class Message>
void load_message_values(const boost::mpi::communicator& comm, Message& message, std::size_t count,
                         std::string& error, std::vector<T>& values,
                         std::optional<std::string>& failure) {
  const int me = comm.rank();
  auto& [source, bytes] = message;
  std::size_t read = 0;
  if (error.empty() && !failure) {
    try {
      error = detail::read_frames(comm, bytes, 0, bytes.size(), values, count, read);
    } catch (const std::exception& e) {
      failure = "irregular::mpi::sparse_exchange: loading an element from rank " +
                std::to_string(source) + " on rank " + std::to_string(me) + ": " + e.what();
    }
    if (error.empty() && !failure && read != count)
      error = "frames hold fewer values than announced";
  }
  if (!error.empty() && !failure)
    failure = "irregular::mpi::sparse_exchange: rank " + std::to_string(me) + " received " +
              std::to_string(bytes.size()) + " bytes from rank " + std::to_string(source) +
              " that do not parse: " + error;
  detail::recycle_frame_buffer(bytes);  // as we go: peak memory stays near one copy
}

/// Serialized values, loaded message by message in source order; every rank agrees on the
/// outcome before any returns.
template <class T>
mpi::Received<T> received_serialized(const boost::mpi::communicator& comm,
                                     mpi::detail::BufferSink<char, FrameBuffer>& sink,
                                     std::span<const T> self) {
  const int me = comm.rank();
  auto& got = sink.got;
  mpi::Received<T> out;
  const auto self_at = sort_arrivals_by_source(got, out, me);
  std::optional<std::string> failure;
  std::vector<std::size_t> counts(got.size(), 0);
  std::vector<std::string> errors(got.size());
  reserve_announced(me, got, self.size(), counts, errors, out.values, failure);
  for (auto it = got.begin(); it != got.end(); ++it) {
    if (it == self_at) append_own_values(out, me, self);
    const auto m = static_cast<std::size_t>(it - got.begin());
    load_message_values(comm, *it, counts[m], errors[m], out.values, failure);
    out.sources.push_back(it->first);
    out.offsets.push_back(out.values.size());
  }
  if (self_at == got.end()) append_own_values(out, me, self);
  mpi::agree_on(comm, failure);
  return out;
}

}  // namespace irregular::detail

namespace irregular::mpi {

namespace detail {

// Common body. slice(d) gives the values for destination d as a span.
template <class T, class Slice>
Received<T> exchange(const boost::mpi::communicator& comm, int tag, Slice slice,
                     ExchangeStats* stats_out, std::size_t piece_bytes,
                     std::size_t frame_bytes = irregular::detail::packed_frame_bytes) {
  check_tag(tag);
  ExchangeStats stats;
  irregular::detail::ExchangeOutbox<T> outbox;
  outbox.address(comm, slice, frame_bytes);
  using Unit = std::conditional_t<is_raw_transportable<T>, T, char>;
  using Vector =
      std::conditional_t<is_raw_transportable<T>, std::vector<T>, irregular::detail::FrameBuffer>;
  BufferSink<Unit, Vector> sink;
  outbox.send(comm, tag, sink, stats, piece_bytes);
  if (stats_out != nullptr) *stats_out += stats;
  // The result is grouped by source rank, this rank's own values in their place.
  if constexpr (is_raw_transportable<T>)
    return irregular::detail::received_raw<T>(comm.rank(), sink, slice(comm.rank()));
  else
    return irregular::detail::received_serialized<T>(comm, sink, slice(comm.rank()));
}

}  // namespace detail

/// Sends outgoing[d] to rank d for every d with a non-empty vector (one message each; nothing to
/// partners with nothing), receives from ranks unknown in advance, and returns what arrived
/// grouped by source rank in increasing order. outgoing[comm.rank()] is delivered locally.
/// Raw types travel as bytes straight from outgoing; others through a lean binary archive
/// (detail/wire_archive.hpp; Boost.MPI packed archives for types opted out by
/// packed_archive_transport), each element's serialize() called directly.
/// Messages over 1 GiB are split into pieces, never rejected. `tag` and `comm` belong to the
/// caller; back-to-back calls with the same tag do not mix. Collective over comm.
/// When outgoing.size() differs from comm.size() or the tag is out of range on any rank, every
/// rank throws the same irregular::collective_error before anything is sent; so it does when an
/// element's serialize() throws on any rank, while saving or loading.
template <class T>
Received<T> sparse_exchange(const boost::mpi::communicator& comm,
                            const std::vector<std::vector<T>>& outgoing, int tag,
                            ExchangeStats* stats = nullptr) {
  agree(comm, [&] {
    detail::check_tag(tag);
    if (outgoing.size() != static_cast<std::size_t>(comm.size()))
      throw invalid_argument("irregular::mpi::sparse_exchange: " + std::to_string(outgoing.size()) +
                             " outgoing vectors on rank " + std::to_string(comm.rank()) +
                             ", expected one per rank (" + std::to_string(comm.size()) + ")");
  });
  return detail::exchange<T>(
      comm, tag, [&](int d) { return std::span<const T>(outgoing[static_cast<std::size_t>(d)]); },
      stats, irregular::detail::nbx_piece_bytes);
}

/// CSR form, the hot path of migration: values grouped by destination, those for rank d are
/// values[offsets[d] .. offsets[d+1]); offsets.size() == comm.size() + 1. Collective over comm.
template <class T>
Received<T> sparse_exchange(const boost::mpi::communicator& comm, std::span<const T> values,
                            std::span<const std::size_t> offsets, int tag,
                            ExchangeStats* stats = nullptr) {
  const auto p = static_cast<std::size_t>(comm.size());
  agree(comm, [&] {
    const std::string where =
        "irregular::mpi::sparse_exchange (rank " + std::to_string(comm.rank()) + "): ";
    detail::check_tag(tag);
    if (offsets.size() != p + 1)
      throw invalid_argument(where + std::to_string(offsets.size()) +
                             " offsets, expected comm.size()+1 = " + std::to_string(p + 1));
    if (offsets.front() != 0 || offsets.back() != values.size())
      throw invalid_argument(where + "offsets must start at 0 and end at values.size() = " +
                             std::to_string(values.size()));
    if (!std::is_sorted(offsets.begin(), offsets.end()))
      throw invalid_argument(where + "offsets must be non-decreasing");
  });
  return detail::exchange<T>(
      comm, tag,
      [&](int d) {
        const auto i = static_cast<std::size_t>(d);
        return values.subspan(offsets[i], offsets[i + 1] - offsets[i]);
      },
      stats, irregular::detail::nbx_piece_bytes);
}

/// sparse_exchange over vectors. Collective over comm.
template <class T>
Received<T> sparse_exchange(const boost::mpi::communicator& comm, const std::vector<T>& values,
                            const std::vector<std::size_t>& offsets, int tag,
                            ExchangeStats* stats = nullptr) {
  return sparse_exchange(comm, std::span<const T>(values), std::span<const std::size_t>(offsets),
                         tag, stats);
}

}  // namespace irregular::mpi
