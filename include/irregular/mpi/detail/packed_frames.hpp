// Serialized values on the wire of sparse exchanges and migration: Boost.MPI packed archives in
// frames, each element saved by a direct call of its serialize() (bench/README.md, transport:
// 3-4x faster than binary archives through std::streambuf with per-object class bookkeeping).
#pragma once

#include <irregular/mpi/detail/nbx.hpp>

#include <boost/archive/archive_exception.hpp>
#include <boost/archive/basic_archive.hpp>
#include <boost/mpi/packed_iarchive.hpp>
#include <boost/mpi/packed_oarchive.hpp>
#include <boost/serialization/level.hpp>
#include <boost/serialization/serialization.hpp>
#include <boost/serialization/version.hpp>

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace irregular::detail {

/// Buffer type of Boost.MPI packed archives (MPI_Alloc_mem memory).
using PackedBuffer = boost::mpi::packed_oarchive::buffer_type;

/// A frame starts a new archive once its buffer holds this many bytes: Boost.MPI's packed
/// iarchive keeps its read position in an int, so one archive must stay below 2 GiB (an element
/// that serializes to more than 1 GiB on its own is not supported).
inline constexpr std::size_t packed_frame_bytes = std::size_t{1} << 30;

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
    std::is_class_v<T> && boost::serialization::implementation_level<T>::value >=
                              boost::serialization::object_serializable;

template <class Archive, class T>
void save_value(Archive& ar, const T& v) {
  if constexpr (direct_serialize<T>)
    boost::serialization::serialize_adl(ar, const_cast<T&>(v), boost::serialization::version<T>::value);
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
  std::vector<PackedBuffer> buffers;

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
    out.buffers.emplace_back();
    PackedBuffer& buf = out.buffers.back();
    // Most element types serialize to about their own size: one allocation in the common case.
    buf.reserve(std::min(frame_bytes, (n - i) * (sizeof(T) + 8)) + 64);
    std::uint64_t count = 0;
    {
      boost::mpi::packed_oarchive ar(comm, buf, boost::archive::no_header);
      for (; i < n && buf.size() < frame_bytes; ++i, ++count) save_value(ar, static_cast<const T&>(get(i)));
    }
    out.headers.push_back({count, buf.size()});
  }
}

/// Reads frames from bytes [begin, end) of msg into out[at], out[at+1], ... (the slots exist
/// already) and returns how many values it read, at most `limit`. Returns an error text instead
/// when the frames do not tile the range, hold more than `limit` values, or an archive fails.
template <class T>
std::string read_frames(MPI_Comm comm, PackedBuffer& msg, std::size_t begin, std::size_t end, std::vector<T>& out,
                        std::size_t at, std::size_t limit, std::size_t& read) {
  read = 0;
  std::size_t pos = begin;
  while (pos < end) {
    if (end - pos < sizeof(FrameHeader)) return "a frame header is cut short";
    FrameHeader h{};
    std::memcpy(&h, msg.data() + pos, sizeof h);
    pos += sizeof h;
    if (h.bytes > end - pos) return "a frame announces " + std::to_string(h.bytes) + " bytes, " +
                                    std::to_string(end - pos) + " follow";
    if (h.count > limit - read) return "the frames hold more values than announced";
    try {
      auto load = [&](PackedBuffer& buf, int position) {
        boost::mpi::packed_iarchive ar(comm, buf, boost::archive::no_header, position);
        for (std::uint64_t k = 0; k < h.count; ++k) load_value(ar, out[at + read + static_cast<std::size_t>(k)]);
      };
      if (pos + h.bytes <= static_cast<std::size_t>(INT_MAX)) {
        load(msg, static_cast<int>(pos));
      } else {  // beyond the archive's int position: a frame of its own (messages over 2 GiB only)
        PackedBuffer frame(msg.data() + pos, msg.data() + pos + h.bytes);
        load(frame, 0);
      }
    } catch (const boost::archive::archive_exception& e) {
      return std::string("archive error: ") + e.what();
    }
    read += static_cast<std::size_t>(h.count);
    pos += static_cast<std::size_t>(h.bytes);
  }
  return {};
}

}  // namespace irregular::detail
