// A lean binary archive pair for Boost.Serialization serialize() functions, for messages between
// ranks of one program on one kind of machine: fields as their bytes, no class ids, tracking or
// per-object version (both ends use the version the program was compiled with).
#pragma once

#include <irregular/core/error.hpp>

#include <boost/archive/basic_archive.hpp>
#include <boost/mpl/bool.hpp>
#include <boost/serialization/array_wrapper.hpp>
#include <boost/serialization/collection_size_type.hpp>
#include <boost/serialization/is_bitwise_serializable.hpp>
#include <boost/serialization/item_version_type.hpp>
#include <boost/serialization/level.hpp>
#include <boost/serialization/library_version_type.hpp>
#include <boost/serialization/nvp.hpp>
#include <boost/serialization/serialization.hpp>
#include <boost/serialization/version.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace irregular::detail {

namespace wire {

template <class T>
struct is_nvp : std::false_type {};
template <class T>
struct is_nvp<boost::serialization::nvp<T>> : std::true_type {};

template <class T>
struct is_array_wrapper : std::false_type {};
template <class T>
struct is_array_wrapper<boost::serialization::array_wrapper<T>> : std::true_type {};

template <class T>
struct is_string : std::false_type {};
template <class C, class Tr, class A>
struct is_string<std::basic_string<C, Tr, A>> : std::bool_constant<std::is_arithmetic_v<C>> {};

/// Types whose arrays travel as one copy of their bytes. bool is left out: its loaded bytes are
/// checked one by one (any other byte value than 0 or 1 would be undefined behaviour).
template <class T>
inline constexpr bool bulk = std::is_trivially_copyable_v<T> && !std::is_same_v<T, bool> &&
                             (std::is_arithmetic_v<T> || std::is_enum_v<T> ||
                              boost::serialization::is_bitwise_serializable<T>::value);

template <class T>
struct is_bulk_vector : std::false_type {};
template <class U, class A>
struct is_bulk_vector<std::vector<U, A>> : std::bool_constant<bulk<U>> {};

template <class T>
inline constexpr bool primitive_class =
    std::is_class_v<T>&& boost::serialization::implementation_level<T>::value ==
    boost::serialization::primitive_type;

template <class>
inline constexpr bool unsupported = false;

/// Instantiated where a serialize() hands the archive a pointer, or asks for pointer machinery.
template <class T>
constexpr void reject_pointer() {
  static_assert(
      unsupported<T>,
      "irregular's wire archive (sparse_exchange, migrate) carries no pointers or smart pointers "
      "(it tracks no objects): specialize irregular::mpi::packed_archive_transport<E> : "
      "std::true_type for the element type E to send it through Boost.MPI packed archives");
}

/// What both halves answer to Boost's serialization headers.
struct ArchiveBase {
  /// The loaders of Boost's collection headers are told the newest format, which the savers of
  /// the same headers write.
  [[nodiscard]] boost::serialization::library_version_type get_library_version() const {
    static const boost::serialization::library_version_type v =
        boost::archive::BOOST_ARCHIVE_VERSION();
    return v;
  }
  template <class T>
  const void* register_type(const T* = nullptr) {
    reject_pointer<T>();
    return nullptr;
  }
  template <class Helper>
  Helper& get_helper(void* id = nullptr) {
    reject_pointer<Helper>();
    return *static_cast<Helper*>(id);
  }
};

}  // namespace wire

/// Saving half. Appends to a caller-owned char vector (one whose growth leaves bytes
/// uninitialized saves a pass); finish(), or the destructor, trims it to what was written.
template <class Buffer>
class WireOArchive : public wire::ArchiveBase {
 public:
  using is_saving = boost::mpl::true_;
  using is_loading = boost::mpl::false_;

  explicit WireOArchive(Buffer& out) : out_(&out), size_(out.size()) {}
  WireOArchive(const WireOArchive&) = delete;
  WireOArchive& operator=(const WireOArchive&) = delete;
  ~WireOArchive() { finish(); }

  /// Bytes in the buffer, counting what was there before this archive.
  [[nodiscard]] std::size_t bytes() const { return size_; }
  void finish() {
    if (out_ != nullptr) out_->resize(size_);
    out_ = nullptr;
  }

  template <class T>
  WireOArchive& operator<<(const T& x) {
    save(x);
    return *this;
  }
  template <class T>
  WireOArchive& operator&(const T& x) {
    save(x);
    return *this;
  }

  void save_binary(const void* p, std::size_t n) { write(p, n); }

 private:
  template <class T>
  void save(const T& x) {
    namespace bs = boost::serialization;
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      write(&x, sizeof x);
    } else if constexpr (std::is_pointer_v<T> || std::is_member_pointer_v<T>) {
      wire::reject_pointer<T>();
    } else if constexpr (std::is_array_v<T>) {
      save_items(x, std::extent_v<T>);
    } else if constexpr (wire::is_nvp<T>::value) {
      save(x.const_value());
    } else if constexpr (wire::is_array_wrapper<T>::value) {
      save_items(x.address(), x.count());
    } else if constexpr (std::is_same_v<T, bs::collection_size_type>) {
      put<std::uint64_t>(static_cast<std::size_t>(x));
    } else if constexpr (std::is_same_v<T, bs::item_version_type>) {
      put<std::uint32_t>(static_cast<unsigned>(x));
    } else if constexpr (std::is_same_v<T, bs::library_version_type>) {
      put<std::uint16_t>(static_cast<std::uint_least16_t>(x));
    } else if constexpr (wire::is_string<T>::value || wire::is_bulk_vector<T>::value) {
      put<std::uint64_t>(x.size());
      write(x.data(), x.size() * sizeof(typename T::value_type));
    } else if constexpr (wire::primitive_class<T>) {
      static_assert(
          std::is_trivially_copyable_v<T>,
          "a class marked primitive_type must be trivially copyable to travel as its bytes");
      write(&x, sizeof x);
    } else {
      bs::serialize_adl(*this, const_cast<T&>(x), bs::version<T>::value);
    }
  }

  template <class U>
  void save_items(const U* p, std::size_t n) {
    using V = std::remove_cv_t<U>;
    if constexpr (wire::bulk<V>)
      write(p, n * sizeof(V));
    else
      for (std::size_t i = 0; i < n; ++i) save(p[i]);
  }

  template <class Wide, class T>
  void put(T v) {
    const Wide w = static_cast<Wide>(v);
    write(&w, sizeof w);
  }

  void write(const void* p, std::size_t n) {
    if (out_->size() - size_ < n) [[unlikely]]
      grow(n);
    if (n != 0) std::memcpy(out_->data() + size_, p, n);
    size_ += n;
  }
  // Out of line: the hot path above stays small enough to inline into every field's save.
  [[gnu::noinline]] void grow(std::size_t n) {
    out_->resize(std::max({2 * out_->size(), out_->capacity(), size_ + n + 64}));
  }

  Buffer* out_;
  std::size_t size_;  // bytes written; out_ may be longer (spare room)
};

/// Loading half over [data, data + size). Every read is bounds-checked: a short or corrupt
/// buffer throws irregular::parse_error, and a collection size larger than the bytes left is
/// rejected before anything is allocated for it (so a collection of items that take no bytes
/// cannot be longer than the rest of the message).
class WireIArchive : public wire::ArchiveBase {
 public:
  using is_saving = boost::mpl::false_;
  using is_loading = boost::mpl::true_;

  WireIArchive(const char* data, std::size_t size) : at_(data), end_(data + size) {}
  WireIArchive(const WireIArchive&) = delete;
  WireIArchive& operator=(const WireIArchive&) = delete;

  [[nodiscard]] std::size_t remaining() const { return static_cast<std::size_t>(end_ - at_); }

  template <class T>
  WireIArchive& operator>>(T&& x) {
    load(x);
    return *this;
  }
  template <class T>
  WireIArchive& operator&(T&& x) {
    load(x);
    return *this;
  }

  void load_binary(void* p, std::size_t n) { read(p, n); }
  void reset_object_address(const void*, const void*) {}  // nothing is tracked
  void delete_created_pointers() {}

 private:
  template <class Ref>
  void load(Ref& ref) {
    namespace bs = boost::serialization;
    using T = std::remove_cv_t<Ref>;
    // nvp and array_wrapper arrive as const temporaries; what they refer to is not const.
    T& x = const_cast<T&>(ref);
    if constexpr (std::is_same_v<T, bool>) {
      unsigned char b = 0;
      read(&b, 1);
      if (b > 1) throw parse_error("wire archive: a bool holds the byte " + std::to_string(b));
      x = b != 0;
    } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      read(&x, sizeof x);
    } else if constexpr (std::is_pointer_v<T> || std::is_member_pointer_v<T>) {
      wire::reject_pointer<T>();
    } else if constexpr (std::is_array_v<T>) {
      load_items(x, std::extent_v<T>);
    } else if constexpr (wire::is_nvp<T>::value) {
      load(x.value());
    } else if constexpr (wire::is_array_wrapper<T>::value) {
      load_items(x.address(), x.count());
    } else if constexpr (std::is_same_v<T, bs::collection_size_type>) {
      x = bs::collection_size_type(size_within(1));
    } else if constexpr (std::is_same_v<T, bs::item_version_type>) {
      x = bs::item_version_type(get<std::uint32_t>());
    } else if constexpr (std::is_same_v<T, bs::library_version_type>) {
      x = bs::library_version_type(get<std::uint16_t>());
    } else if constexpr (wire::is_string<T>::value || wire::is_bulk_vector<T>::value) {
      using V = typename T::value_type;
      const std::size_t n = size_within(sizeof(V));
      x.resize(n);
      read(x.data(), n * sizeof(V));
    } else if constexpr (wire::primitive_class<T>) {
      static_assert(
          std::is_trivially_copyable_v<T>,
          "a class marked primitive_type must be trivially copyable to travel as its bytes");
      read(&x, sizeof x);
    } else {
      bs::serialize_adl(*this, x, bs::version<T>::value);
    }
  }

  template <class U>
  void load_items(U* p, std::size_t n) {
    using V = std::remove_cv_t<U>;
    if constexpr (wire::bulk<V>) {
      if (n > remaining() / sizeof(V))
        too_long(std::to_string(n) + " items of " + std::to_string(sizeof(V)) + " bytes");
      read(const_cast<V*>(p), n * sizeof(V));
    } else {
      for (std::size_t i = 0; i < n; ++i) load(p[i]);
    }
  }

  /// A u64 count of items that take at least `item_bytes` each, checked against what is left.
  std::size_t size_within(std::size_t item_bytes) {
    const auto n = get<std::uint64_t>();
    if (n > remaining() / item_bytes)
      too_long(std::to_string(n) + " items of " + std::to_string(item_bytes) + " bytes or more");
    return static_cast<std::size_t>(n);
  }

  template <class Wide>
  Wide get() {
    Wide w{};
    read(&w, sizeof w);
    return w;
  }

  void read(void* p, std::size_t n) {
    if (n > remaining()) too_long(std::to_string(n) + " bytes");
    if (n != 0) std::memcpy(p, at_, n);
    at_ += n;
  }

  [[noreturn]] void too_long(const std::string& need) const {
    throw parse_error("wire archive: needs " + need + ", " + std::to_string(remaining()) +
                      " bytes left");
  }

  const char* at_;
  const char* end_;
};

}  // namespace irregular::detail
