// How a value type travels between ranks (DESIGN.md "Policies", element adaptation): trivially
// copyable types as raw bytes, everything else through Boost.Serialization. pack()/unpack() write
// self-contained binary archives; sparse_exchange and migrate use the lean wire archive
// (detail/wire_archive.hpp, 1.2-2x faster than Boost's archives in bench/results/transport.md;
// see packed_archive_transport there).
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/mpi/detail/byte_streambuf.hpp>
#include <irregular/mpi/detail/packed_frames.hpp>

#include <boost/archive/archive_exception.hpp>
#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/mpi/datatype.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace irregular::mpi {

namespace detail {
template <class T>
concept HasSerializeMember = requires(T& t, boost::archive::binary_oarchive& ar) {
  t.serialize(ar, 0u);
};
}  // namespace detail

/// Opt-in/opt-out trait for the raw path. Default: trivially copyable without a serialize()
/// member. Specialize to std::true_type for a trivially copyable type that has serialize() but
/// may travel as bytes, or to std::false_type to force Boost.Serialization.
template <class T>
struct raw_transport
    : std::bool_constant<std::is_trivially_copyable_v<T> && !detail::HasSerializeMember<T>> {};

/// True when T travels as its object bytes (MPI_BYTE), false when through Boost.Serialization.
/// boost::mpi::is_mpi_datatype<T> (BOOST_IS_MPI_DATATYPE) also opts a type in.
template <class T>
inline constexpr bool is_raw_transportable = std::is_trivially_copyable_v<T> &&
                                             (raw_transport<T>::value ||
                                              boost::mpi::is_mpi_datatype<T>::value);

/// Size of the header pack() writes before the payload: element count and payload bytes.
inline constexpr std::size_t pack_header_bytes = 2 * sizeof(std::uint64_t);

/// Flags of the binary archives used here: no header (the envelope is ours), no locale facet.
inline constexpr unsigned archive_flags = boost::archive::no_header | boost::archive::no_codecvt;

/// Appends [count: u64][payload bytes: u64][payload] to out. The payload is the values' bytes for
/// raw types and a Boost binary archive otherwise (each value's serialize() called directly, see
/// irregular::detail::save_value). unpack() inverts it exactly.
template <class T>
void pack(std::span<const T> values, std::vector<char>& out) {
  const std::size_t header_at = out.size();
  const std::uint64_t count = values.size();
  out.resize(header_at + pack_header_bytes);
  std::memcpy(out.data() + header_at, &count, sizeof count);
  const std::size_t payload_at = out.size();
  if constexpr (is_raw_transportable<T>) {
    const std::size_t bytes = values.size_bytes();
    out.resize(payload_at + bytes);
    if (bytes != 0) std::memcpy(out.data() + payload_at, values.data(), bytes);
  } else {
    irregular::detail::VectorOutBuf buf(out);
    {
      boost::archive::binary_oarchive ar(buf, archive_flags);
      for (const T& v : values) irregular::detail::save_value(ar, v);
    }
    buf.finish();
  }
  const std::uint64_t payload = out.size() - payload_at;
  std::memcpy(out.data() + header_at + sizeof count, &payload, sizeof payload);
}

/// pack() of a vector.
template <class T>
void pack(const std::vector<T>& values, std::vector<char>& out) {
  pack(std::span<const T>(values), out);
}

/// Reads one pack() record from the front of in, appends its values to out and returns the bytes
/// consumed (header + payload). Throws irregular::parse_error on a truncated or malformed record
/// (out keeps what it held before).
template <class T>
std::size_t unpack(std::span<const char> in, std::vector<T>& out) {
  if (in.size() < pack_header_bytes)
    throw parse_error("irregular::mpi::unpack: record of " + std::to_string(in.size()) +
                      " bytes is shorter than its 16-byte header");
  std::uint64_t count = 0;
  std::uint64_t payload = 0;
  std::memcpy(&count, in.data(), sizeof count);
  std::memcpy(&payload, in.data() + sizeof count, sizeof payload);
  if (payload > in.size() - pack_header_bytes)
    throw parse_error("irregular::mpi::unpack: header announces " + std::to_string(payload) +
                      " payload bytes but only " + std::to_string(in.size() - pack_header_bytes) +
                      " follow");
  const char* data = in.data() + pack_header_bytes;
  if constexpr (is_raw_transportable<T>) {
    if (payload % sizeof(T) != 0 || payload / sizeof(T) != count)
      throw parse_error("irregular::mpi::unpack: " + std::to_string(count) + " raw values of " +
                        std::to_string(sizeof(T)) + " bytes cannot fill " +
                        std::to_string(payload) + " payload bytes");
    const std::size_t old = out.size();
    out.resize(old + count);
    if (payload != 0) std::memcpy(static_cast<void*>(out.data() + old), data, payload);
  } else {
    const std::size_t old = out.size();
    irregular::detail::SpanInBuf buf(std::span<const char>(data, payload));
    try {
      boost::archive::binary_iarchive ar(buf, archive_flags);
      // Read in place, no temporary per value. Sized up front, but never beyond one value per
      // payload byte, so a corrupt count cannot demand absurd memory (values of empty types,
      // which take no bytes, grow the vector one by one).
      out.resize(old + static_cast<std::size_t>(std::min<std::uint64_t>(count, payload)));
      for (std::uint64_t i = 0; i < count; ++i) {
        const std::size_t at = old + static_cast<std::size_t>(i);
        if (at == out.size()) out.emplace_back();
        irregular::detail::load_value(ar, out[at]);
      }
    } catch (const boost::archive::archive_exception& e) {
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(old), out.end());
      throw parse_error(std::string("irregular::mpi::unpack: archive error: ") + e.what());
    }
    if (buf.consumed() != payload) {
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(old), out.end());
      throw parse_error("irregular::mpi::unpack: archive of " + std::to_string(count) +
                        " values used " + std::to_string(buf.consumed()) + " of " +
                        std::to_string(payload) + " payload bytes");
    }
  }
  return pack_header_bytes + payload;
}

/// Serialized exchanges (sparse_exchange, migrate) keep their send and receive buffers on the
/// calling thread between calls, at most 16 buffers and 256 MiB, so that repeated migrations
/// reuse memory already touched. transport_buffers_held() says how many bytes are kept;
/// release_transport_buffers() gives them back to the system. Local.
[[nodiscard]] inline std::size_t transport_buffers_held() {
  return irregular::detail::frame_pool_held();
}
/// Frees the buffers kept between exchanges (see transport_buffers_held()). Local.
inline void release_transport_buffers() {
  std::vector<irregular::detail::FrameBuffer>().swap(irregular::detail::frame_pool());
}

}  // namespace irregular::mpi
