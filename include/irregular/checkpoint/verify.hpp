// Serial inspection of a checkpoint file, without MPI: the header, and every section's blocks
// checked against their checksums. What irregular-inspect prints; also usable from a test or
// a script to vet a file before a restart.
#pragma once

#include <irregular/checkpoint/checksum.hpp>
#include <irregular/checkpoint/format.hpp>
#include <irregular/core/error.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <span>
#include <string>
#include <vector>

namespace irregular::checkpoint {

/// The verdict on one section.
struct SectionReport {
  std::uint64_t blocks = 0;               ///< checksum blocks in the section
  bool table_ok = false;                  ///< its checksum table matches the header
  std::vector<std::uint64_t> bad_blocks;  ///< blocks whose checksum differs
  /// Whether the table and every block check out.
  [[nodiscard]] bool ok() const noexcept { return table_ok && bad_blocks.empty(); }
};

/// What inspect() found: the header and each section's verdict.
struct Report {
  Header header;                                      ///< the decoded header
  std::array<SectionReport, section_count> sections;  ///< each section's verdict, by SectionId
  /// Whether every section checks out.
  [[nodiscard]] bool ok() const noexcept {
    for (const auto& s : sections)
      if (!s.ok()) return false;
    return true;
  }
};

/// Reads the file at `path`, decodes its header and checks every block of every section.
/// Throws irregular::checkpoint_error when the file is missing or its header unusable (wrong
/// magic or version, corrupt, truncated); block mismatches are reported, not thrown. Reads the
/// file once, one block at a time.
[[nodiscard]] inline Report inspect(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw checkpoint_error("irregular checkpoint '" + path + "': cannot open", 0);
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  std::array<std::byte, header_bytes> raw{};
  in.read(reinterpret_cast<char*>(raw.data()),
          static_cast<std::streamsize>(std::min<std::uint64_t>(size, header_bytes)));
  Report rep;
  rep.header = decode(raw, size, path);
  const Header& h = rep.header;
  std::vector<std::byte> block;
  for (int s = 0; s < section_count; ++s) {
    const Section& sec = h.sections[s];
    auto& r = rep.sections[s];
    r.blocks = block_count(sec.bytes, h.block_bytes);
    std::vector<std::uint64_t> table(r.blocks);
    in.seekg(static_cast<std::streamoff>(sec.table_offset));
    in.read(reinterpret_cast<char*>(table.data()), static_cast<std::streamsize>(8 * r.blocks));
    r.table_ok =
        static_cast<bool>(in) &&
        checksum(std::as_bytes(std::span<const std::uint64_t>(table))) == sec.table_checksum;
    if (h.foreign_order)
      for (auto& v : table) v = detail::swapped(v);
    in.seekg(static_cast<std::streamoff>(sec.offset));
    for (std::uint64_t k = 0; k < r.blocks; ++k) {
      block.resize(std::min(h.block_bytes, sec.bytes - k * h.block_bytes));
      in.read(reinterpret_cast<char*>(block.data()), static_cast<std::streamsize>(block.size()));
      if (!in || checksum(block) != table[k]) r.bad_blocks.push_back(k);
    }
  }
  return rep;
}

}  // namespace irregular::checkpoint
