// One serialized checkpoint record read in Boost's binary archive format (what save writes), by
// an archive that refuses sizes its bytes cannot hold: garbage in a record is an error, never a
// huge allocation (a string or collection length of 2^60) nor an invalid bool.
#pragma once

#include <irregular/core/error.hpp>

#include <boost/archive/archive_exception.hpp>
#include <boost/archive/basic_binary_iarchive.hpp>
#include <boost/archive/basic_binary_iprimitive.hpp>
#include <boost/archive/binary_iarchive_impl.hpp>
#include <boost/archive/detail/register_archive.hpp>
#include <boost/archive/impl/archive_serializer_map.ipp>
#include <boost/archive/impl/basic_binary_iarchive.ipp>
#include <boost/archive/impl/basic_binary_iprimitive.ipp>
#include <boost/serialization/collection_size_type.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <streambuf>
#include <string>

namespace irregular::checkpoint {

namespace detail {
/// The bytes of one record as a read-only stream buffer (no copy).
class RecordBuf : public std::streambuf {
 public:
  explicit RecordBuf(std::span<const std::byte> bytes) {
    char* b = const_cast<char*>(reinterpret_cast<const char*>(bytes.data()));
    setg(b, b, b + bytes.size());
  }
  /// Bytes not read yet.
  [[nodiscard]] std::size_t left() const noexcept {
    return static_cast<std::size_t>(egptr() - gptr());
  }
};
}  // namespace detail

/// Boost's binary input archive (no header), bounded by the bytes of one record: a string longer
/// than the bytes left, a collection of more items than bytes left, or a bool other than 0 or 1
/// throws irregular::parse_error before anything is allocated.
class RecordArchive
    : public boost::archive::binary_iarchive_impl<RecordArchive, char, std::char_traits<char>> {
  using base = boost::archive::binary_iarchive_impl<RecordArchive, char, std::char_traits<char>>;
  using primitive =
      boost::archive::basic_binary_iprimitive<RecordArchive, char, std::char_traits<char>>;
  friend class boost::archive::detail::interface_iarchive<RecordArchive>;
  friend class boost::archive::basic_binary_iarchive<RecordArchive>;
  friend primitive;
  friend class boost::archive::load_access;

 public:
  /// An archive reading one record from `buf`.
  explicit RecordArchive(detail::RecordBuf& buf)
      : base(buf, boost::archive::no_header), buf_(buf) {}
  /// Bytes of the record not read yet.
  [[nodiscard]] std::size_t left() const noexcept { return buf_.left(); }

 protected:
  /// Anything else: as Boost's binary archive reads it.
  template <class T>
  void load_override(T& t) {
    base::load_override(t);
  }
  // Every collection holds at least one byte per item, except that an unordered container's
  // bucket count (the size read right after its item count) is a hint: clamped, not refused.
  /// A collection's size, refused when it cannot fit in the bytes left.
  void load_override(boost::serialization::collection_size_type& t) {
    const bool bucket_count = left() == after_size_;
    base::load_override(t);
    after_size_ = left();
    if (static_cast<std::size_t>(t) <= left()) return;
    if (bucket_count) {
      t = boost::serialization::collection_size_type(left());
      return;
    }
    throw parse_error("a collection of " + std::to_string(static_cast<std::size_t>(t)) +
                      " items with " + std::to_string(left()) + " bytes left");
  }

  using primitive::load;
  /// A bool: byte 0 or 1, anything else refused.
  void load(bool& t) {
    std::uint8_t x = 0;
    this->load_binary(&x, 1);
    if (x > 1) throw parse_error("a bool of value " + std::to_string(x));
    t = x != 0;
  }
  /// A string: refused when longer than the bytes left.
  void load(std::string& s) {
    std::size_t n = 0;
    this->load_binary(&n, sizeof n);
    if (n > left())
      throw parse_error("a string of " + std::to_string(n) + " bytes with " +
                        std::to_string(left()) + " left");
    s.resize(n);
    if (n > 0) this->load_binary(s.data(), n);
  }
  /// A wide string: refused when longer than the bytes left.
  void load(std::wstring& s) {
    std::size_t n = 0;
    this->load_binary(&n, sizeof n);
    if (n > left() / sizeof(wchar_t))
      throw parse_error("a wide string of " + std::to_string(n) + " characters with " +
                        std::to_string(left()) + " bytes left");
    s.resize(n);
    if (n > 0) this->load_binary(s.data(), n * sizeof(wchar_t));
  }

 private:
  detail::RecordBuf& buf_;
  std::size_t after_size_ = ~std::size_t{0};  // left() right after the last collection size
};

/// Reads one value from the whole of `bytes` (one record's archive); throws irregular::parse_error
/// when a size exceeds the bytes or bytes are left over, boost::archive::archive_exception when
/// the archive is malformed, and whatever the value's serialize throws.
template <class T>
void read_record(std::span<const std::byte> bytes, T& value) {
  detail::RecordBuf buf(bytes);
  RecordArchive ar(buf);
  ar >> value;
  if (buf.left() != 0)
    throw parse_error(std::to_string(buf.left()) + " bytes left over after the value");
}

}  // namespace irregular::checkpoint

// As boost::archive::binary_iarchive: exported classes can be read, and arrays of bitwise
// serializable values are read in one piece (the format binary_oarchive writes them in).
BOOST_SERIALIZATION_REGISTER_ARCHIVE(irregular::checkpoint::RecordArchive)
BOOST_SERIALIZATION_USE_ARRAY_OPTIMIZATION(irregular::checkpoint::RecordArchive)
