// The checkpoint file format (version 1): a self-describing header, then three sections — the
// leaves in curve order, the records (elements or data) in curve order, a small user section —
// then one table of block checksums per section. Nothing in it depends on how many ranks wrote
// it: the same domain saved from any number of ranks gives the same bytes.
//
//   [0, 512)          header: magic, version, byte-order mark, domain description, counts,
//                     section places and checksums, file size; XXH3-64 of bytes [0, 504) last
//   leaves            one fixed-size record per leaf: start, level, [count], [load], [first byte]
//   records           raw: the values' bytes; serialized: per value a u64 length, then the bytes
//   user              the application's own bytes (a step number, a random generator's state)
//   checksum tables   per section, XXH3-64 of every block of block_bytes (the last one shorter)
//
// The library's own fields are written in the writer's byte order, which the byte-order mark
// records; a reader of the other order converts them. Raw records stay as they were written.
#pragma once

#include <irregular/checkpoint/checksum.hpp>
#include <irregular/core/error.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

namespace irregular::checkpoint {

/// The first 8 bytes of every checkpoint.
inline constexpr std::array<char, 8> magic{'I', 'R', 'R', 'E', 'G', 'C', 'K', 'P'};
/// The version this library writes, and the only one it reads.
inline constexpr std::uint32_t format_version = 1;
/// Written in the writer's byte order: a reader that finds it swapped converts the fields.
inline constexpr std::uint32_t byte_order_mark = 0x01020304u;
/// Size of the header; the first section starts right after it.
inline constexpr std::size_t header_bytes = 512;
/// Where the header's XXH3-64 lies: the last 8 bytes, covering every byte before them.
inline constexpr std::size_t header_checksum_at = header_bytes - 8;
/// Width of the curve name field (NUL-padded).
inline constexpr std::size_t curve_name_bytes = 16;
/// Width of the type tag field (NUL-padded: at most 63 characters).
inline constexpr std::size_t type_tag_bytes = 64;
/// Where the header's record count lies (errors about the counts name it).
inline constexpr std::size_t record_count_at = 192;

/// Which domain wrote the file.
enum class Kind : std::uint32_t { elements = 1, cells = 2 };
/// How records are stored: their bytes, or Boost.Serialization with a length prefix each.
enum class RecordFormat : std::uint32_t { raw = 0, serialized = 1 };

/// The sections, in file order; they index Header::sections.
enum SectionId : int {
  leaves = 0,   ///< one fixed-size record per leaf, in curve order
  records = 1,  ///< the elements or data, in curve order
  user = 2      ///< the application's own bytes
};
/// Number of sections.
inline constexpr int section_count = 3;
/// The name of section `s` for messages ("leaves", "records", "user"; "?" out of range).
[[nodiscard]] inline const char* section_name(int s) noexcept {
  constexpr const char* names[] = {"leaves", "records", "user"};
  return s >= 0 && s < section_count ? names[s] : "?";
}

/// Where a section lies, and the checksum of its table of block checksums.
struct Section {
  std::uint64_t offset = 0;          ///< where the section starts in the file
  std::uint64_t bytes = 0;           ///< its size
  std::uint64_t table_offset = 0;    ///< where its table of block checksums starts
  std::uint64_t table_checksum = 0;  ///< XXH3-64 of that table
};

/// The decoded header.
struct Header {
  std::uint32_t version = format_version;   ///< the format version
  bool foreign_order = false;               ///< written on a machine of the other byte order
  Kind kind = Kind::elements;               ///< which domain wrote the file
  std::uint32_t dim = 0;                    ///< the domain's dimension
  std::string curve;                        ///< "morton", "hilbert", "peano" or a user curve's name
  std::uint32_t max_level = 0;              ///< the curve's finest level
  std::uint32_t index_bytes = 8;            ///< width of a curve index: 8 or 16
  std::array<double, 3> lo{};               ///< the box's lower corner (0 beyond dim)
  std::array<double, 3> hi{};               ///< the box's upper corner (0 beyond dim)
  std::uint32_t periodic = 0;               ///< bit d: axis d is periodic
  std::int32_t hold_level = -1;             ///< DomainOptions::hold_level (-1: none)
  RecordFormat format = RecordFormat::raw;  ///< how the records are stored
  std::uint64_t record_bytes = 0;           ///< raw: the size of one value; serialized: 0
  std::string type_tag;            ///< the value type's name and version (SaveOptions::type_tag)
  bool has_loads = false;          ///< measured leaf loads are stored
  std::uint64_t leaf_count = 0;    ///< leaves in the file
  std::uint64_t record_count = 0;  ///< records in the file: elements, or one datum per leaf
  std::uint64_t block_bytes = 1u << 20;  ///< size of a checksum block (a section's last is shorter)
  std::array<Section, section_count> sections{};  ///< where each section lies, by SectionId
  std::uint64_t file_bytes = 0;                   ///< the size of the whole file

  /// Bytes of one leaf record: start, level, then count (elements), load, first byte (serialized).
  [[nodiscard]] std::uint64_t leaf_record_bytes() const noexcept {
    return index_bytes + 1 + (kind == Kind::elements ? 8 : 0) + (has_loads ? 8 : 0) +
           (format == RecordFormat::serialized ? 8 : 0);
  }
  /// Lays the sections out after the header, the tables after them, and sets file_bytes.
  void place(std::uint64_t leaf_bytes, std::uint64_t record_section_bytes,
             std::uint64_t user_bytes) {
    const std::array<std::uint64_t, section_count> sizes{leaf_bytes, record_section_bytes,
                                                         user_bytes};
    std::uint64_t at = header_bytes;
    for (int s = 0; s < section_count; ++s) {
      sections[s].offset = at;
      sections[s].bytes = sizes[s];
      at += sizes[s];
    }
    for (int s = 0; s < section_count; ++s) {
      sections[s].table_offset = at;
      at += 8 * block_count(sizes[s], block_bytes);
    }
    file_bytes = at;
  }
};

namespace detail {

template <class T>
T swapped(T v) noexcept {
  static_assert(std::is_trivially_copyable_v<T>);
  std::array<std::byte, sizeof(T)> b;
  std::memcpy(b.data(), &v, sizeof(T));
  for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
  std::memcpy(&v, b.data(), sizeof(T));
  return v;
}

/// Writes fields in this machine's byte order, or (for tests of the conversion) the other.
class Writer {
 public:
  Writer(std::span<std::byte> out, bool foreign = false) : out_(out), foreign_(foreign) {}
  template <class T>
  void put(T v) {
    if (foreign_) v = swapped(v);
    std::memcpy(out_.data() + at_, &v, sizeof(T));
    at_ += sizeof(T);
  }
  void put_text(const std::string& s, std::size_t width) {
    std::memset(out_.data() + at_, 0, width);
    std::memcpy(out_.data() + at_, s.data(), std::min(s.size(), width - 1));
    at_ += width;
  }
  [[nodiscard]] std::size_t at() const noexcept { return at_; }

 private:
  std::span<std::byte> out_;
  bool foreign_;
  std::size_t at_ = 0;
};

/// Reads fields written by a machine of either byte order. Never reads past its span.
class Reader {
 public:
  Reader(std::span<const std::byte> in, bool foreign) : in_(in), foreign_(foreign) {}
  template <class T>
  T get() {
    T v{};
    if (at_ + sizeof(T) > in_.size()) return v;  // callers check sizes first; stay in bounds
    std::memcpy(&v, in_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return foreign_ ? swapped(v) : v;
  }
  std::string get_text(std::size_t width) {
    if (at_ + width > in_.size()) return {};
    const char* p = reinterpret_cast<const char*>(in_.data() + at_);
    at_ += width;
    return std::string(p, strnlen(p, width - 1));
  }
  void skip(std::size_t n) noexcept { at_ += n; }

 private:
  std::span<const std::byte> in_;
  bool foreign_;
  std::size_t at_ = 0;
};

}  // namespace detail

/// The header's 512 bytes; `foreign` writes them as a machine of the other byte order would.
[[nodiscard]] inline std::array<std::byte, header_bytes> encode(const Header& h,
                                                                bool foreign = false) {
  std::array<std::byte, header_bytes> out{};
  detail::Writer w(out, foreign);
  for (char c : magic) w.put(c);
  w.put(byte_order_mark);
  w.put(h.version);
  w.put(static_cast<std::uint32_t>(h.kind));
  w.put(h.dim);
  w.put_text(h.curve, curve_name_bytes);
  w.put(h.max_level);
  w.put(h.index_bytes);
  for (double v : h.lo) w.put(v);
  for (double v : h.hi) w.put(v);
  w.put(h.periodic);
  w.put(h.hold_level);
  w.put(static_cast<std::uint32_t>(h.format));
  w.put(static_cast<std::uint32_t>(h.has_loads ? 1 : 0));
  w.put(h.record_bytes);
  w.put_text(h.type_tag, type_tag_bytes);
  w.put(h.leaf_count);
  w.put(h.record_count);
  w.put(h.block_bytes);
  for (const auto& s : h.sections) {
    w.put(s.offset);
    w.put(s.bytes);
    w.put(s.table_offset);
    w.put(s.table_checksum);
  }
  w.put(h.file_bytes);
  // The checksum covers the bytes as stored, whatever their order.
  std::uint64_t sum = checksum(std::span<const std::byte>(out.data(), header_checksum_at));
  std::memcpy(out.data() + header_checksum_at, &sum, 8);
  return out;
}

/// A file-level problem with the header, at a byte offset; `rank` is the reporting rank.
[[noreturn]] inline void bad_header(const std::string& path, const std::string& what,
                                    std::uint64_t offset = 0, int rank = 0) {
  throw checkpoint_error("irregular checkpoint '" + path + "': " + what, rank, "header", -1,
                         offset);
}

/// Decodes and checks a header read from a file of `file_size` bytes: the magic, the byte-order
/// mark, the version, the header checksum, and that every section lies inside the file. Throws
/// irregular::checkpoint_error naming what is wrong and where.
[[nodiscard]] inline Header decode(std::span<const std::byte> in, std::uint64_t file_size,
                                   const std::string& path, int rank = 0) {
  if (in.size() < header_bytes || file_size < header_bytes)
    bad_header(path,
               "truncated: " + std::to_string(file_size) + " bytes, shorter than the header (" +
                   std::to_string(header_bytes) + ")",
               file_size, rank);
  if (std::memcmp(in.data(), magic.data(), magic.size()) != 0)
    bad_header(path, "not an irregular checkpoint (wrong magic)", 0, rank);
  std::uint32_t mark = 0;
  std::memcpy(&mark, in.data() + 8, 4);
  const bool foreign = mark != byte_order_mark;
  if (foreign && mark != detail::swapped(byte_order_mark))
    bad_header(path, "unknown byte-order mark", 8, rank);
  std::uint64_t stored = 0;
  std::memcpy(&stored, in.data() + header_checksum_at, 8);
  if (checksum(in.first(header_checksum_at)) != stored)
    bad_header(path, "header checksum mismatch (the header is corrupt)", 0, rank);
  detail::Reader r(in.first(header_bytes), foreign);
  r.skip(12);
  Header h;
  h.foreign_order = foreign;
  h.version = r.get<std::uint32_t>();
  if (h.version != format_version)
    bad_header(path,
               "format version " + std::to_string(h.version) + ", this library reads version " +
                   std::to_string(format_version),
               12, rank);
  h.kind = static_cast<Kind>(r.get<std::uint32_t>());
  h.dim = r.get<std::uint32_t>();
  h.curve = r.get_text(curve_name_bytes);
  h.max_level = r.get<std::uint32_t>();
  h.index_bytes = r.get<std::uint32_t>();
  for (double& v : h.lo) v = r.get<double>();
  for (double& v : h.hi) v = r.get<double>();
  h.periodic = r.get<std::uint32_t>();
  h.hold_level = r.get<std::int32_t>();
  h.format = static_cast<RecordFormat>(r.get<std::uint32_t>());
  h.has_loads = r.get<std::uint32_t>() != 0;
  h.record_bytes = r.get<std::uint64_t>();
  h.type_tag = r.get_text(type_tag_bytes);
  h.leaf_count = r.get<std::uint64_t>();
  h.record_count = r.get<std::uint64_t>();
  h.block_bytes = r.get<std::uint64_t>();
  for (auto& s : h.sections) {
    s.offset = r.get<std::uint64_t>();
    s.bytes = r.get<std::uint64_t>();
    s.table_offset = r.get<std::uint64_t>();
    s.table_checksum = r.get<std::uint64_t>();
  }
  h.file_bytes = r.get<std::uint64_t>();
  // A consistent layout (the checksum makes an inconsistent one unlikely, not impossible).
  if (h.kind != Kind::elements && h.kind != Kind::cells) bad_header(path, "unknown kind", 0, rank);
  if (h.index_bytes != 8 && h.index_bytes != 16)
    bad_header(path, "index width " + std::to_string(h.index_bytes), 0, rank);
  if (h.format != RecordFormat::raw && h.format != RecordFormat::serialized)
    bad_header(path, "unknown record format", 0, rank);
  if (h.block_bytes < 64 || h.block_bytes > (std::uint64_t{1} << 40))
    bad_header(path, "checksum block size " + std::to_string(h.block_bytes), 0, rank);
  if (h.dim < 1 || h.dim > 3) bad_header(path, "dimension " + std::to_string(h.dim), 20, rank);
  for (std::uint32_t d = 0; d < h.dim; ++d)
    if (!(std::isfinite(h.lo[d]) && std::isfinite(h.hi[d]) && h.lo[d] < h.hi[d]))
      bad_header(path, "the box is empty or not finite along axis " + std::to_string(d), 48, rank);
  Header expect = h;
  expect.place(h.sections[leaves].bytes, h.sections[records].bytes, h.sections[user].bytes);
  for (int s = 0; s < section_count; ++s)
    if (expect.sections[s].offset != h.sections[s].offset ||
        expect.sections[s].table_offset != h.sections[s].table_offset)
      bad_header(path, std::string("section ") + section_name(s) + " misplaced", 0, rank);
  if (expect.file_bytes != h.file_bytes ||
      h.sections[leaves].bytes / h.leaf_record_bytes() != h.leaf_count ||
      h.sections[leaves].bytes % h.leaf_record_bytes() != 0)
    bad_header(path, "inconsistent section sizes", 0, rank);
  // The counts fit the sections, so nothing sized by them can exceed the file.
  const std::uint64_t record_section = h.sections[records].bytes;
  if (h.format == RecordFormat::raw &&
      (h.record_bytes == 0 || record_section % h.record_bytes != 0 ||
       record_section / h.record_bytes != h.record_count))
    bad_header(path, "record section size differs from count x size", record_count_at, rank);
  if (h.format == RecordFormat::serialized && h.record_count > record_section / 8)
    bad_header(path,
               "record count " + std::to_string(h.record_count) +
                   " exceeds what the record section holds (8 bytes or more each)",
               record_count_at, rank);
  if (h.kind == Kind::cells && h.record_count != h.leaf_count)
    bad_header(path, "a cell domain with a record count other than its leaf count", record_count_at,
               rank);
  if (file_size < h.file_bytes)
    bad_header(path,
               "truncated: " + std::to_string(file_size) + " bytes, the header says " +
                   std::to_string(h.file_bytes),
               file_size, rank);
  if (file_size > h.file_bytes)
    bad_header(path,
               std::to_string(file_size - h.file_bytes) +
                   " bytes beyond the end the header gives (" + std::to_string(h.file_bytes) + ")",
               h.file_bytes, rank);
  return h;
}

/// The name a curve is stored under: its `name` member ("morton", "hilbert", "peano").
template <class C>
[[nodiscard]] std::string curve_name() {
  static_assert(
      requires { C::name; },
      "irregular::checkpoint: give the curve a `static constexpr const char* name`");
  return std::string(C::name);
}

}  // namespace irregular::checkpoint
