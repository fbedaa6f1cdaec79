// Serialized values on the wire of sparse exchanges and migration: frames of the wire archive
// (detail/wire_archive.hpp), each element's serialize() called directly; element types opted out
// by mpi::packed_archive_transport travel through Boost.MPI packed archives instead.
// bench/results/transport.md: the wire archive saves and loads 10^6 small elements in 111-114 ms,
// Boost's archives in 132-235 ms.
#pragma once

#include <irregular/core/detail/uninitialized_allocator.hpp>
#include <irregular/core/error.hpp>
#include <irregular/mpi/detail/nbx.hpp>
#include <irregular/mpi/detail/wire_archive.hpp>

#include <boost/archive/archive_exception.hpp>
#include <boost/archive/basic_archive.hpp>
#include <boost/mpi/config.hpp>  // <mpi.h>, without its C++ bindings
#include <boost/mpi/packed_iarchive.hpp>
#include <boost/mpi/packed_oarchive.hpp>
#include <boost/serialization/level.hpp>
#include <boost/serialization/serialization.hpp>
#include <boost/serialization/version.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace irregular::mpi {

/// Serialized element types travel through the wire archive, which has no object tracking and so
/// rejects pointers at compile time. Specialize to std::true_type for a type whose serialize()
/// saves pointers or smart pointers: it then travels through Boost.MPI packed archives (slower).
template <class T>
struct packed_archive_transport : std::false_type {};

}  // namespace irregular::mpi

namespace irregular::detail {

/// Buffer type of Boost.MPI packed archives (MPI_Alloc_mem memory).
using PackedBuffer = boost::mpi::packed_oarchive::buffer_type;

/// Frames are written and received into these: growth leaves the bytes uninitialized, as they
/// are overwritten at once.
using FrameBuffer = std::vector<char, UninitializedAllocator<char>>;

/// Frame buffers kept on this thread between exchanges, so that a program that migrates every
/// step reuses pages it has already touched: fresh pages of a large buffer are faulted in one by
/// one. At most frame_pool_buffers buffers and frame_pool_bytes bytes stay.
inline constexpr std::size_t frame_pool_buffers = 16;
inline constexpr std::size_t frame_pool_bytes = std::size_t{256} << 20;

inline std::vector<FrameBuffer>& frame_pool() {
  thread_local std::vector<FrameBuffer> pool;
  return pool;
}

/// An empty buffer: the smallest kept one that holds `bytes`, else the largest kept one.
inline FrameBuffer take_frame_buffer(std::size_t bytes) {
  auto& pool = frame_pool();
  if (pool.empty()) return {};
  std::size_t best = 0;
  for (std::size_t i = 1; i < pool.size(); ++i) {
    const std::size_t c = pool[i].capacity(), b = pool[best].capacity();
    if (b < bytes ? c > b : (c >= bytes && c < b)) best = i;
  }
  FrameBuffer out = std::move(pool[best]);
  pool[best] = std::move(pool.back());
  pool.pop_back();
  out.clear();
  return out;
}

/// Bytes the pool of this thread holds.
[[nodiscard]] inline std::size_t frame_pool_held() {
  std::size_t kept = 0;
  for (const auto& b : frame_pool()) kept += b.capacity();
  return kept;
}

/// Hands a buffer back (it is left empty); dropped when the pool is full.
inline void recycle_frame_buffer(FrameBuffer& buf) {
  auto& pool = frame_pool();
  if (buf.capacity() != 0 && pool.size() < frame_pool_buffers &&
      frame_pool_held() + buf.capacity() <= frame_pool_bytes)
    pool.push_back(std::move(buf));
  FrameBuffer().swap(buf);
}

/// A frame starts a new archive once its buffer holds this many bytes: Boost.MPI's packed
/// iarchive keeps its read position in an int, so one archive must stay below 2 GiB (an element
/// that serializes to more than 1 GiB on its own is not supported there).
inline constexpr std::size_t packed_frame_bytes = std::size_t{1} << 30;

/// True when T's frames are wire archives, false when Boost.MPI packed archives.
template <class T>
inline constexpr bool wire_serialized = !mpi::packed_archive_transport<T>::value;

/// [count: u64][archive bytes: u64], raw, before each frame's archive.
struct FrameHeader {
  std::uint64_t count;
  std::uint64_t bytes;
};
static_assert(sizeof(FrameHeader) == 16 && std::is_trivially_copyable_v<FrameHeader>);

/// Class types are saved by calling their serialize() directly: the per-object path of Boost
/// archives (class-info lookup, tracking, version byte) costs more than the fields themselves.
/// Both ends of a message do the same, with the class version the program was compiled with.
/// Types at the primitive level (arithmetic, std::string) go through the archive as usual.
template <class T>
inline constexpr bool direct_serialize =
    std::is_class_v<T>&& boost::serialization::implementation_level<T>::value >=
    boost::serialization::object_serializable;

template <class Archive, class T>
void save_value(Archive& ar, const T& v) {
  if constexpr (direct_serialize<T>)
    boost::serialization::serialize_adl(ar, const_cast<T&>(v),
                                        boost::serialization::version<T>::value);
  else
    ar << v;
}

template <class Archive, class T>
void load_value(Archive& ar, T& v) {
  if constexpr (direct_serialize<T>)
    boost::serialization::serialize_adl(ar, v, boost::serialization::version<T>::value);
  else
    ar >> v;
}

/// The frames of one message: header i describes buffers[i].
struct PackedFrames {
  std::vector<FrameHeader> headers;
  std::vector<FrameBuffer> buffers;

  PackedFrames() = default;
  PackedFrames(PackedFrames&&) noexcept = default;
  PackedFrames& operator=(PackedFrames&&) noexcept = default;
  ~PackedFrames() {
    for (auto& b : buffers) recycle_frame_buffer(b);
  }

  [[nodiscard]] std::size_t bytes() const {
    std::size_t b = 0;
    for (const auto& h : headers) b += sizeof(FrameHeader) + h.bytes;
    return b;
  }
  /// Appends [header][archive] per frame to a gather list (pointers stay valid while *this does).
  void append_regions(std::vector<ByteRegion>& regions) const {
    for (std::size_t i = 0; i < headers.size(); ++i) {
      regions.push_back({reinterpret_cast<const char*>(&headers[i]), sizeof(FrameHeader)});
      regions.push_back({buffers[i].data(), buffers[i].size()});
    }
  }
};

/// Serializes get(0) .. get(n-1) (each a const T&) into frames of about frame_bytes.
template <class T, class Get>
void write_frames(MPI_Comm comm, std::size_t n, Get&& get, PackedFrames& out,
                  std::size_t frame_bytes = packed_frame_bytes) {
  std::size_t i = 0;
  while (i < n) {
    // Most element types serialize to about their own size: one allocation in the common case.
    const std::size_t guess = std::min(frame_bytes, (n - i) * (sizeof(T) + 8)) + 64;
    out.buffers.push_back(take_frame_buffer(guess));
    FrameBuffer& buf = out.buffers.back();
    std::uint64_t count = 0;
    if constexpr (wire_serialized<T>) {
      buf.reserve(guess);
      WireOArchive<FrameBuffer> ar(buf);
      for (; i < n && ar.bytes() < frame_bytes; ++i, ++count) ar << static_cast<const T&>(get(i));
    } else {
      PackedBuffer packed;
      packed.reserve(guess);
      {
        boost::mpi::packed_oarchive ar(comm, packed, boost::archive::no_header);
        for (; i < n && packed.size() < frame_bytes; ++i, ++count)
          save_value(ar, static_cast<const T&>(get(i)));
      }
      buf.assign(packed.begin(), packed.end());
    }
    out.headers.push_back({count, buf.size()});
  }
}

/// Adds up the values the frames of a whole message announce; returns an error text when the
/// frames do not tile it.
inline std::string frames_count(const FrameBuffer& msg, std::size_t& count) {
  count = 0;
  for (std::size_t pos = 0; pos < msg.size();) {
    FrameHeader h{};
    if (msg.size() - pos < sizeof h) return "a frame header is cut short";
    std::memcpy(&h, msg.data() + pos, sizeof h);
    if (h.bytes > msg.size() - pos - sizeof h) return "a frame overruns the message";
    if (h.count > SIZE_MAX - count) return "the frames announce more values than memory holds";
    count += static_cast<std::size_t>(h.count);
    pos += sizeof h + static_cast<std::size_t>(h.bytes);
  }
  return {};
}

/// Does nothing with a value just loaded.
struct IgnoreLoaded {
  template <class T>
  void operator()(const T&) const {}
};

/// Appends h.count values read from one frame's bytes to out, each constructed in place and then
/// loaded, and calls loaded(value) while it is still in cache. Returns an error text when the
/// bytes do not parse (or, for the wire archive, do not end with the last value).
template <class T, class Out, class Loaded>
std::string read_frame(MPI_Comm comm, const char* data, std::size_t bytes, std::uint64_t count,
                       Out& out, Loaded& loaded) {
  if constexpr (wire_serialized<T>) {
    WireIArchive ar(data, bytes);
    try {
      for (std::uint64_t k = 0; k < count; ++k) {
        T& v = out.emplace_back();
        ar >> v;
        loaded(static_cast<const T&>(v));
      }
    } catch (const parse_error& e) {
      return e.what();
    }
    if (ar.remaining() != 0)
      return "a frame holds " + std::to_string(ar.remaining()) + " bytes past its values";
  } else {
    // The packed iarchive reads from its own buffer type; frames stay below 2 GiB.
    PackedBuffer frame(data, data + bytes);
    try {
      boost::mpi::packed_iarchive ar(comm, frame, boost::archive::no_header, 0);
      for (std::uint64_t k = 0; k < count; ++k) {
        T& v = out.emplace_back();
        load_value(ar, v);
        loaded(static_cast<const T&>(v));
      }
    } catch (const boost::archive::archive_exception& e) {
      return std::string("archive error: ") + e.what();
    }
  }
  return {};
}

/// Reads the frames in bytes [begin, end) of msg, appending their values to out (see
/// read_frame), and counts them in `read`, at most `limit`. Returns an error text instead when
/// the frames do not tile the range, hold more than `limit` values, or an archive fails; out
/// then holds what was read so far.
template <class Out, class Loaded = IgnoreLoaded>
std::string read_frames(MPI_Comm comm, const FrameBuffer& msg, std::size_t begin, std::size_t end,
                        Out& out, std::size_t limit, std::size_t& read, Loaded loaded = {}) {
  read = 0;
  std::size_t pos = begin;
  while (pos < end) {
    if (end - pos < sizeof(FrameHeader)) return "a frame header is cut short";
    FrameHeader h{};
    std::memcpy(&h, msg.data() + pos, sizeof h);
    pos += sizeof h;
    if (h.bytes > end - pos)
      return "a frame announces " + std::to_string(h.bytes) + " bytes, " +
             std::to_string(end - pos) + " follow";
    if (h.count > limit - read) return "the frames hold more values than announced";
    std::string why = read_frame<typename Out::value_type>(
        comm, msg.data() + pos, static_cast<std::size_t>(h.bytes), h.count, out, loaded);
    if (!why.empty()) return why;
    read += static_cast<std::size_t>(h.count);
    pos += static_cast<std::size_t>(h.bytes);
  }
  return {};
}

}  // namespace irregular::detail
