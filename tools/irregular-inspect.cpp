// irregular-inspect FILE: prints a checkpoint's header, counts, sections and checksum verdict.
// Exit status: 0 when every block matches its checksum, 1 when some do not, 2 when the file is
// missing or its header unusable.
#include <irregular/checkpoint/verify.hpp>

#include <cstdio>
#include <string>

namespace ck = irregular::checkpoint;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: irregular-inspect FILE\n");
    return 2;
  }
  try {
    const auto rep = ck::inspect(argv[1]);
    const auto& h = rep.header;
    const auto u = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
    std::printf("irregular checkpoint %s\n", argv[1]);
    std::printf("  format        version %u, %s byte order\n", h.version,
                h.foreign_order ? "the other" : "this machine's");
    std::printf("  domain        %s, %uD, curve %s, max_level %u, %u-byte indices\n",
                h.kind == ck::Kind::elements ? "IrregularDomain" : "CellDomain", h.dim,
                h.curve.c_str(), h.max_level, h.index_bytes);
    std::printf("  box           [");
    for (std::uint32_t d = 0; d < h.dim && d < 3; ++d)
      std::printf("%s%g..%g", d ? ", " : "", h.lo[d], h.hi[d]);
    std::printf("], periodic axes mask %u, hold_level %d\n", h.periodic, h.hold_level);
    if (h.format == ck::RecordFormat::raw)
      std::printf("  records       raw, %llu bytes each, type tag '%s'\n", u(h.record_bytes),
                  h.type_tag.c_str());
    else
      std::printf("  records       serialized (Boost.Serialization), type tag '%s'\n",
                  h.type_tag.c_str());
    std::printf("  counts        %llu leaves, %llu records, loads %s\n", u(h.leaf_count),
                u(h.record_count), h.has_loads ? "stored (measured)" : "recomputed on load");
    std::printf("  file          %llu bytes, checksum blocks of %llu bytes\n", u(h.file_bytes),
                u(h.block_bytes));
    std::printf("  | section | offset | bytes | blocks | verdict |\n");
    std::printf("  |---------|-------:|------:|-------:|---------|\n");
    for (int s = 0; s < ck::section_count; ++s) {
      const auto& r = rep.sections[s];
      const auto& sec = h.sections[s];
      std::string verdict = r.ok() ? "ok" : !r.table_ok ? "checksum table corrupt" : "";
      if (r.table_ok && !r.bad_blocks.empty()) {
        char item[96];
        std::snprintf(item, sizeof item, "%zu corrupt block(s):", r.bad_blocks.size());
        verdict = item;
        for (std::size_t i = 0; i < r.bad_blocks.size() && i < 8; ++i) {
          std::snprintf(item, sizeof item, " %llu (offset %llu)", u(r.bad_blocks[i]),
                        u(sec.offset + r.bad_blocks[i] * h.block_bytes));
          verdict.append(item);
        }
      }
      std::printf("  | %-7s | %6llu | %5llu | %6llu | %s |\n", ck::section_name(s), u(sec.offset),
                  u(sec.bytes), u(r.blocks), verdict.c_str());
    }
    std::printf("verdict: %s\n", rep.ok() ? "every block matches its checksum" : "CORRUPT");
    return rep.ok() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "irregular-inspect: %s\n", e.what());
    return 2;
  }
}
