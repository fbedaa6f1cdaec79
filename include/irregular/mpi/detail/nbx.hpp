// NBX sparse data exchange over byte buffers (Hoefler, Siebert, Lumsdaine, PPoPP 2010): the
// "non-blocking exchange with termination" of baiardi-collecting-remote-data, shared by the raw
// and the serialized paths of sparse_exchange.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/detail/uninitialized_allocator.hpp>
#include <irregular/mpi/counters.hpp>

#include <boost/mpi/config.hpp>  // <mpi.h>, without its C++ bindings
#include <boost/mpi/exception.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace irregular::detail {

/// One merged message: bytes to one partner (never empty: empty messages are not sent).
struct OutgoingBytes {
  int dest;
  const char* data;
  std::size_t bytes;
};

/// MPI counts are int: a message longer than this travels as consecutive pieces. A piece of
/// exactly this size means "more follows" (a message of an exact multiple of it ends with a
/// zero-byte piece); non-overtaking keeps the pieces of one sender in order.
inline constexpr std::size_t nbx_piece_bytes = std::size_t{1} << 30;

/// A contiguous run of bytes that is part of one outgoing message.
struct ByteRegion {
  const char* data;
  std::size_t bytes;
};

/// One merged message gathered from several regions (e.g. [elements][leaf records][trailer]):
/// it travels as one MPI message whose datatype addresses the regions where they are, so
/// nothing is copied into a staging buffer. Empty regions are allowed; the whole message is not.
struct OutgoingGather {
  int dest;
  std::span<const ByteRegion> regions;
};

/// Calls f(p, at, len) for each part of the bytes [offset, offset + n) of a message laid over
/// `regions`: len bytes at p, which are the piece's bytes [at, at + len).
template <class F>
void for_each_part(std::span<const ByteRegion> regions, std::size_t offset, std::size_t n, F&& f) {
  std::size_t at = 0;  // logical offset of the current region
  for (const ByteRegion& r : regions) {
    if (at >= offset + n) break;
    const std::size_t lo = std::max(at, offset), hi = std::min(at + r.bytes, offset + n);
    if (lo < hi) f(r.data + (lo - at), lo - offset, hi - lo);
    at += r.bytes;
  }
}

/// Runs f(buffer, count, datatype) over the bytes [offset, offset + n) of a message laid over
/// `regions`: straight at the region when the piece lies in one, else through an hindexed
/// datatype over absolute addresses (freed once f returns; MPI keeps it alive for a pending
/// operation). Sends and receives share it: a receive's regions are writable memory.
template <class F>
void with_piece(std::span<const ByteRegion> regions, std::size_t offset, std::size_t n, F&& f) {
  std::vector<int> lengths;
  std::vector<MPI_Aint> displacements;
  const char* single = nullptr;
  for_each_part(regions, offset, n, [&](const char* p, std::size_t, std::size_t len) {
    if (lengths.empty()) single = p;
    MPI_Aint address = 0;
    BOOST_MPI_CHECK_RESULT(MPI_Get_address, (p, &address));
    lengths.push_back(static_cast<int>(len));
    displacements.push_back(address);
  });
  // MPI's C binding takes a non-const buffer pointer only in MPI-2 headers; the cast is harmless.
  if (lengths.size() <= 1) {
    f(static_cast<void*>(const_cast<char*>(single)), static_cast<int>(n), MPI_BYTE);
    return;
  }
  MPI_Datatype type = MPI_DATATYPE_NULL;
  BOOST_MPI_CHECK_RESULT(
      MPI_Type_create_hindexed,
      (static_cast<int>(lengths.size()), lengths.data(), displacements.data(), MPI_BYTE, &type));
  BOOST_MPI_CHECK_RESULT(MPI_Type_commit, (&type));
  f(MPI_BOTTOM, 1, type);
  BOOST_MPI_CHECK_RESULT(MPI_Type_free, (&type));
}

/// Posts every message of `sends` in pieces of at most piece_bytes (a piece of exactly that size
/// means "more follows"), synchronous or standard mode, and counts them.
inline void post_messages(MPI_Comm comm, int tag, std::span<const OutgoingGather> sends,
                          bool synchronous, std::vector<MPI_Request>& requests,
                          irregular::mpi::ExchangeStats& stats, std::size_t piece_bytes) {
  for (const OutgoingGather& m : sends) {
    std::size_t bytes = 0;
    for (const ByteRegion& r : m.regions) bytes += r.bytes;
    ++stats.messages_sent;
    stats.bytes_sent += bytes;
    std::size_t offset = 0;
    for (;;) {
      const std::size_t n = std::min(bytes - offset, piece_bytes);
      requests.emplace_back();
      MPI_Request* request = &requests.back();
      with_piece(m.regions, offset, n, [&](void* buffer, int count, MPI_Datatype type) {
        if (synchronous) {
          BOOST_MPI_CHECK_RESULT(MPI_Issend, (buffer, count, type, m.dest, tag, comm, request));
        } else {
          BOOST_MPI_CHECK_RESULT(MPI_Isend, (buffer, count, type, m.dest, tag, comm, request));
        }
      });
      offset += n;
      if (n < piece_bytes) break;
    }
  }
}

/// Receives the message whose first piece `msg` matched (status `first`) into the sink, piece
/// after piece, and closes it with sink.finish.
template <class Sink>
void receive_message(MPI_Comm comm, int tag, MPI_Message msg, const MPI_Status& first, Sink& sink,
                     irregular::mpi::ExchangeStats& stats, std::size_t piece_bytes) {
  const int source = first.MPI_SOURCE;
  MPI_Status status = first;
  std::size_t total = 0;
  for (;;) {
    int n = 0;
    BOOST_MPI_CHECK_RESULT(MPI_Get_count, (&status, MPI_BYTE, &n));
    const auto un = static_cast<std::size_t>(n);
    if constexpr (requires { sink.regions(source, total, un); }) {
      // A scattering sink: the piece lands in the first un bytes of its regions.
      auto mrecv = [&](void* buffer, int count, MPI_Datatype type) {
        BOOST_MPI_CHECK_RESULT(MPI_Mrecv, (buffer, count, type, &msg, MPI_STATUS_IGNORE));
      };
      with_piece(sink.regions(source, total, un), 0, un, mrecv);
    } else {
      char* dst = sink.reserve(source, total, un);
      BOOST_MPI_CHECK_RESULT(MPI_Mrecv, (dst, n, MPI_BYTE, &msg, MPI_STATUS_IGNORE));
    }
    total += un;
    if (un != piece_bytes) break;
    // The rest of this message is already posted by its sender: block for it.
    BOOST_MPI_CHECK_RESULT(MPI_Mprobe, (source, tag, comm, &msg, &status));
  }
  sink.finish(source, total);
  ++stats.messages_received;
  stats.bytes_received += total;
}

/// NBX: synchronous sends (their completion means the partner matched them), a probe loop that
/// receives whatever arrives, and a non-blocking barrier entered once all own sends completed;
/// its completion means every message of this round was received everywhere. A closing barrier
/// keeps a fast rank from starting the next round (same tag) while a slow rank still probes.
///
/// Sink: `char* reserve(int source, std::size_t offset, std::size_t bytes)` returns where the
/// next `bytes` bytes of source's message (at byte offset `offset`) go (or, instead,
/// `std::span<const ByteRegion> regions(source, offset, bytes)` returns regions whose first
/// `bytes` bytes receive them, scattered by a datatype); `void finish(int source,
/// std::size_t total)` closes it. The sink runs inside the loop, so it must not throw; it records
/// problems and its owner reports them after the exchange. Collective over comm.
template <class Sink>
void nbx_exchange(MPI_Comm comm, int tag, std::span<const OutgoingGather> sends, Sink& sink,
                  irregular::mpi::ExchangeStats& stats, std::size_t piece_bytes = nbx_piece_bytes) {
  IRREGULAR_ASSERT(piece_bytes > 0 && piece_bytes <= static_cast<std::size_t>(INT32_MAX));
  std::vector<MPI_Request> requests;
  requests.reserve(sends.size());
#if IRREGULAR_ASSERTS_ON
  for (const OutgoingGather& m : sends) {
    std::size_t bytes = 0;
    for (const ByteRegion& r : m.regions) bytes += r.bytes;
    IRREGULAR_ASSERT(bytes > 0);
  }
#endif
  detail::post_messages(comm, tag, sends, true, requests, stats, piece_bytes);

  MPI_Request barrier = MPI_REQUEST_NULL;
  bool in_barrier = false;
  for (;;) {
    int arrived = 0;
    MPI_Message msg;
    MPI_Status status;
    BOOST_MPI_CHECK_RESULT(MPI_Improbe, (MPI_ANY_SOURCE, tag, comm, &arrived, &msg, &status));
    if (arrived) {
      detail::receive_message(comm, tag, msg, status, sink, stats, piece_bytes);
      continue;
    }
    int done = 0;
    if (!in_barrier) {
      BOOST_MPI_CHECK_RESULT(MPI_Testall, (static_cast<int>(requests.size()), requests.data(),
                                           &done, MPI_STATUSES_IGNORE));
      if (done) {
        BOOST_MPI_CHECK_RESULT(MPI_Ibarrier, (comm, &barrier));
        in_barrier = true;
      }
    } else {
      BOOST_MPI_CHECK_RESULT(MPI_Test, (&barrier, &done, MPI_STATUS_IGNORE));
      if (done) break;
    }
  }
  BOOST_MPI_CHECK_RESULT(MPI_Barrier, (comm));
}

/// A round between partners that both ends know (a cached schedule): one message to each entry
/// of `sends`, which may be empty (zero bytes travel, so every receiver gets exactly one message
/// from each of its sources whatever the sender had to say), and one from each rank of `sources`,
/// received in that order. Pieces as in nbx_exchange. Every send is posted (MPI_Isend) before
/// any blocking receive, so no cycle of partners can deadlock; no collective: ranks that are
/// nobody's partner take no part. Returns once every own send completed. Sink as nbx_exchange's,
/// and it must not throw either.
template <class Sink>
void partner_exchange(MPI_Comm comm, int tag, std::span<const OutgoingGather> sends,
                      std::span<const int> sources, Sink& sink,
                      irregular::mpi::ExchangeStats& stats,
                      std::size_t piece_bytes = nbx_piece_bytes) {
  IRREGULAR_ASSERT(piece_bytes > 0 && piece_bytes <= static_cast<std::size_t>(INT32_MAX));
  std::vector<MPI_Request> requests;
  requests.reserve(sends.size());
  detail::post_messages(comm, tag, sends, false, requests, stats, piece_bytes);
  for (const int source : sources) {
    MPI_Message msg;
    MPI_Status status;
    BOOST_MPI_CHECK_RESULT(MPI_Mprobe, (source, tag, comm, &msg, &status));
    detail::receive_message(comm, tag, msg, status, sink, stats, piece_bytes);
  }
  BOOST_MPI_CHECK_RESULT(MPI_Waitall,
                         (static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
}

/// A sink that keeps every message whole, in a buffer of its own that nothing zeroes first,
/// with its source; sort_by_source() puts them in rank order.
struct MessageBuffers {
  std::vector<std::pair<int, std::vector<char, UninitializedAllocator<char>>>> got;

  char* reserve(int source, std::size_t offset, std::size_t bytes) {
    if (offset == 0) got.push_back({source, {}});
    auto& buf = got.back().second;
    buf.resize(offset + bytes);
    return buf.data() + offset;
  }
  void finish(int, std::size_t) {}
  void sort_by_source() {
    std::sort(got.begin(), got.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  }
};

/// One contiguous buffer per message: the gather form with one region each.
template <class Sink>
void nbx_exchange(MPI_Comm comm, int tag, std::span<const OutgoingBytes> sends, Sink& sink,
                  irregular::mpi::ExchangeStats& stats, std::size_t piece_bytes = nbx_piece_bytes) {
  std::vector<ByteRegion> regions;
  regions.reserve(sends.size());
  for (const OutgoingBytes& m : sends) regions.push_back({m.data, m.bytes});
  std::vector<OutgoingGather> gathers;
  gathers.reserve(sends.size());
  for (std::size_t i = 0; i < sends.size(); ++i)
    gathers.push_back({sends[i].dest, std::span<const ByteRegion>(regions).subspan(i, 1)});
  nbx_exchange(comm, tag, std::span<const OutgoingGather>(gathers), sink, stats, piece_bytes);
}

}  // namespace irregular::detail
