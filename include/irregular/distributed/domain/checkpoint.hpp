// Checkpoint and restart of a domain (both fronts): save writes one MPI-IO file whose bytes do
// not depend on the number of ranks that wrote it (checkpoint/format.hpp); load reads it on any
// number of ranks, each rank its even share of the leaves and their records, and the partitioner
// in force then maps the leaves by their loads. Crash-safe: the file is written under a temporary
// name in the same directory, synced, then renamed over the previous checkpoint.
#pragma once

#include <irregular/checkpoint/checksum.hpp>
#include <irregular/checkpoint/format.hpp>
#include <irregular/core/box.hpp>
#include <irregular/core/detail/headroom.hpp>
#include <irregular/core/detail/splice_vector.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/checkpoint/sections.hpp>
#include <irregular/distributed/ghost/store.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/mpi/file.hpp>
#include <irregular/tree/detail/curve_math.hpp>

#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <system_error>
#include <type_traits>
#include <unistd.h>
#include <vector>

namespace irregular {

/// What a checkpoint carries besides the domain.
struct SaveOptions {
  /// Names the value type and its version (at most 63 characters); a load must give the same.
  std::string type_tag{};
  /// The application's own bytes (a step number, a random generator's state): rank 0's are
  /// written, and every rank receives them on load.
  std::string user{};
  /// Bytes per checksum block: a corrupt block is found and named at this granularity.
  std::uint64_t block_bytes = std::uint64_t{1} << 20;
};

/// What a load checks and returns besides the domain.
struct LoadOptions {
  std::string type_tag{};       ///< must equal the saved one
  std::string* user = nullptr;  ///< receives the saved user bytes (on every rank)
};

/// What a checkpoint says about itself, read without loading it: the header (box, curve, hold
/// level, counts...) and the user section, so that a restart can take its options from the file
/// before it loads the domain.
struct CheckpointInfo {
  checkpoint::Header header;  ///< the decoded header
  std::string user;           ///< the user section's bytes
};

namespace checkpoint::detail {
/// Test seam: called on every rank after each phase of a save ("records", "tables", "synced")
/// when set. The crash-safety test kills a writer here.
inline void (*after_phase)(const char* phase) = nullptr;
/// Test seam: write the library's fields in the other byte order, as a machine of that order
/// would (the conversion test reads such a file back).
inline bool write_foreign_order = false;
inline void reached(const char* phase) {
  if (after_phase) after_phase(phase);
}
}  // namespace checkpoint::detail

namespace detail {

/// Values stored as their bytes (trivially copyable) or through Boost.Serialization.
template <class T>
inline constexpr bool raw_records = std::is_trivially_copyable_v<T>;

/// One serialized value, length-prefixed.
template <class T>
void append_serialized(std::vector<std::byte>& out, const T& v) {
  std::ostringstream os(std::ios::binary);
  {
    boost::archive::binary_oarchive ar(os, boost::archive::no_header);
    ar << v;
  }
  const std::string s = os.str();
  const std::uint64_t n = s.size();
  const auto at = out.size();
  out.resize(at + 8 + n);
  std::memcpy(out.data() + at, &n, 8);
  std::memcpy(out.data() + at + 8, s.data(), n);
}

/// Byte strings in lexicographic order (how records at one position are ordered in a file).
inline bool by_bytes(const std::vector<std::byte>& x, const std::vector<std::byte>& y) noexcept {
  const std::size_t n = std::min(x.size(), y.size());
  const int c = n ? std::memcmp(x.data(), y.data(), n) : 0;
  return c != 0 ? c < 0 : x.size() < y.size();
}

/// A domain's description as a checkpoint header (before counts and places).
template <class C, class T>
checkpoint::Header describe(checkpoint::Kind kind, const Box<C::dim>& box,
                            const Periodicity<C::dim>& periodic, int hold_level, bool has_loads,
                            const std::string& type_tag) {
  checkpoint::Header h;
  h.kind = kind;
  h.dim = C::dim;
  h.curve = checkpoint::curve_name<C>();
  h.max_level = C::max_level;
  h.index_bytes = sizeof(typename C::index_type);
  for (int d = 0; d < C::dim; ++d) {
    h.lo[d] = box.lo[d];
    h.hi[d] = box.hi[d];
    if (periodic[d]) h.periodic |= 1u << d;
  }
  h.hold_level = hold_level;
  h.format = raw_records<T> ? checkpoint::RecordFormat::raw : checkpoint::RecordFormat::serialized;
  h.record_bytes = raw_records<T> ? sizeof(T) : 0;
  h.type_tag = type_tag;
  h.has_loads = has_loads;
  return h;
}

/// The directory a checkpoint goes to must exist and be writable (checked by one rank).
inline void check_writable(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw checkpoint_error(
        "irregular checkpoint '" + path + "': directory '" + dir.string() + "' does not exist", 0);
  if (::access(dir.c_str(), W_OK) != 0)
    throw checkpoint_error(
        "irregular checkpoint '" + path + "': directory '" + dir.string() + "' is not writable", 0);
}

/// Flushes a directory entry (the rename) to the storage device; best effort.
inline void sync_directory(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : ".";
  const int fd = ::open(dir.c_str(), O_RDONLY);
  if (fd >= 0) {
    (void)::fsync(fd);
    ::close(fd);
  }
}

/// This rank's records in curve order, raw or serialized, and each leaf's first byte among them;
/// equal keys (elements at one position) ordered by their stored bytes, so the file does not
/// depend on the order a sort left them in. Returns the records: the values themselves when
/// they are raw and have no ties, else `encoded`. Local; a user serialize may throw.
template <bool per_leaf, class I, class T>
std::span<const std::byte> encode_records(std::span<const I> keys, const LeafPayload<T>& payload,
                                          std::vector<std::uint64_t>& first_byte,
                                          std::vector<std::byte>& encoded) {
  const auto vals = payload.values;
  const std::size_t n_leaves = first_byte.size() - 1;
  std::span<const std::byte> records;
  bool ties = false;
  if constexpr (!per_leaf)
    for (std::size_t i = 1; i < keys.size() && !ties; ++i) ties = keys[i] == keys[i - 1];
  if constexpr (raw_records<T>) {
    if (!ties) {
      records = std::as_bytes(vals);
    } else {
      encoded.resize(vals.size_bytes());
      std::memcpy(encoded.data(), vals.data(), vals.size_bytes());
      for (std::size_t i = 0; i < keys.size();) {
        std::size_t j = i + 1;
        while (j < keys.size() && keys[j] == keys[i]) ++j;
        std::vector<std::array<std::byte, sizeof(T)>> run(j - i);
        std::memcpy(run.data(), encoded.data() + i * sizeof(T), (j - i) * sizeof(T));
        std::sort(run.begin(), run.end());
        std::memcpy(encoded.data() + i * sizeof(T), run.data(), (j - i) * sizeof(T));
        i = j;
      }
      records = encoded;
    }
    for (std::size_t i = 0; i <= n_leaves; ++i) first_byte[i] = payload.offsets[i] * sizeof(T);
  } else {
    std::vector<std::vector<std::byte>> run;
    for (std::size_t l = 0; l < n_leaves; ++l) {
      first_byte[l] = encoded.size();
      for (std::size_t i = payload.offsets[l]; i < payload.offsets[l + 1];) {
        std::size_t j = i + 1;
        while (ties && j < payload.offsets[l + 1] && keys[j] == keys[i]) ++j;
        run.assign(j - i, {});
        for (std::size_t k = i; k < j; ++k) append_serialized(run[k - i], vals[k]);
        if (run.size() > 1) std::sort(run.begin(), run.end(), by_bytes);
        for (const auto& r : run) encoded.insert(encoded.end(), r.begin(), r.end());
        i = j;
      }
    }
    first_byte[n_leaves] = encoded.size();
    records = encoded;
  }
  return records;
}

/// Writes the sections (each rank its share) and the checksum tables and header (rank 0) to a
/// temporary file next to `path`, syncs it and renames it over `path`: the previous checkpoint
/// stays whole until the rename. On an agreed failure the temporary file is removed. Collective.
inline void write_file(
    const boost::mpi::communicator& comm, const std::string& path, checkpoint::Header& h,
    const std::array<const checkpoint::SectionShares*, checkpoint::section_count>& shares,
    const std::array<std::span<const std::byte>, checkpoint::section_count>& mine, int tag) {
  namespace ck = checkpoint;
  const int me = comm.rank();
  std::string tmp;
  if (me == 0) {
    const auto nonce = static_cast<unsigned long long>(
        std::chrono::steady_clock::now().time_since_epoch().count() ^ (::getpid() << 16));
    tmp = path + ".tmp-" + std::to_string(nonce);
  }
  boost::mpi::broadcast(comm, tmp, 0);
  // Collective steps never throw between their MPI calls: a local failure is kept and agreed
  // once the step's collectives are done, so no rank waits for one that left.
  std::optional<std::string> failed;
  const auto keep = [&](auto&& f) {
    if (failed) return;
    try {
      f();
    } catch (const std::exception& e) {
      failed = e.what();
    }
  };
  const auto agree_step = [&](const char* phase) {
    ck::agree(comm, [&] {
      if (failed) throw checkpoint_error("irregular checkpoint '" + path + "': " + *failed, me);
      if (phase) ck::detail::reached(phase);
    });
  };
  try {
    auto file = ck::agree(comm, [&] {
      return std::optional<mpi::File>(std::in_place, comm, tmp, mpi::File::Mode::create);
    });
    std::array<std::vector<std::uint64_t>, ck::section_count> sums;
    for (int s = 0; s < ck::section_count; ++s)
      sums[s] = ck::write_section(*file, comm, h.sections[s], *shares[s], mine[s], h.block_bytes,
                                  tag, failed);
    agree_step("records");
    for (int s = 0; s < ck::section_count; ++s) {
      auto table = ck::gather_table(comm, sums[s]);
      if (me != 0) continue;
      if (ck::detail::write_foreign_order)
        for (auto& v : table) v = ck::detail::swapped(v);
      const auto bytes = std::as_bytes(std::span<const std::uint64_t>(table));
      h.sections[s].table_checksum = ck::checksum(bytes);
      keep([&] { file->write_at(h.sections[s].table_offset, bytes); });
    }
    if (me == 0) keep([&] { file->write_at(0, ck::encode(h, ck::detail::write_foreign_order)); });
    agree_step("tables");
    keep([&] { file->sync(); });
    keep([&] { file->close(); });
    agree_step("synced");
    // 4. The rename makes the new checkpoint the one at `path`, atomically.
    ck::agree(comm, [&] {
      if (me != 0) return;
      std::error_code ec;
      std::filesystem::rename(tmp, path, ec);
      if (ec)
        throw checkpoint_error("irregular checkpoint '" + path + "': rename from '" + tmp +
                                   "' failed: " + ec.message(),
                               0);
      sync_directory(path);
    });
  } catch (const checkpoint_error&) {
    if (me == 0) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
    }
    throw;
  }
}

/// Saves a domain core (collective). `kind`: which front; the values are the store's payload.
template <class Core>
void save_core(Core& core, const std::string& path, checkpoint::Kind kind, const SaveOptions& opt) {
  using C = typename Core::curve_type;
  using T = typename Core::value_type;
  using I = typename C::index_type;
  namespace ck = checkpoint;
  const boost::mpi::communicator& comm = core.comm_.get();
  const int me = comm.rank();
  const auto& leaves = core.leaves_;
  const auto payload = core.payload();
  const bool elements = kind == ck::Kind::elements;
  if constexpr (Core::measured) core.loads_.agree_unit(comm, leaves);  // the seconds timed so far
  ck::Header h = describe<C, T>(kind, core.store_.box(), core.options_.periodic,
                                core.options_.hold_level, Core::measured, opt.type_tag);
  h.block_bytes = opt.block_bytes;

  // 1. This rank's records, in curve order (encode_records).
  std::vector<std::byte> encoded;
  std::vector<std::uint64_t> first_byte(leaves.size() + 1, 0);
  std::span<const std::byte> records;
  ck::agree(comm, [&] {
    if (opt.type_tag.size() >= ck::type_tag_bytes)
      throw invalid_argument("irregular checkpoint: type_tag longer than 63 characters");
    if (opt.block_bytes < 64 || opt.block_bytes > (std::uint64_t{1} << 40))
      throw invalid_argument("irregular checkpoint: block_bytes outside [64, 2^40]");
    if (me == 0) check_writable(path);
    records = encode_records<Core::store_type::per_leaf>(core.store_.keys_of(leaves), payload,
                                                         first_byte, encoded);
  });

  // 2. Shares and counts: one prefix sum per section.
  const auto record_shares = ck::SectionShares::of(comm, records.size());
  const std::uint64_t rec = h.leaf_record_bytes();
  std::vector<std::byte> leaf_bytes(leaves.size() * rec);
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    ck::detail::Writer w(std::span<std::byte>(leaf_bytes).subspan(i * rec, rec),
                         ck::detail::write_foreign_order);
    const I s = leaves.starts()[i];
    if constexpr (sizeof(I) == 16) {
      w.put(static_cast<std::uint64_t>(s));
      w.put(static_cast<std::uint64_t>(s >> 64));
    } else {
      w.put(static_cast<std::uint64_t>(s));
    }
    w.put(static_cast<std::uint8_t>(leaves.levels()[i]));
    if (elements) w.put(static_cast<std::uint64_t>(payload.offsets[i + 1] - payload.offsets[i]));
    if (h.has_loads) w.put(core.loads_.values()[i]);
    if (!raw_records<T>) w.put(record_shares.begin[me] + first_byte[i]);
  }
  const auto leaf_shares = ck::SectionShares::of(comm, leaf_bytes.size());
  h.leaf_count = leaf_shares.total() / rec;
  h.record_count = 0;
  {
    const std::uint64_t mine = payload.values.size();
    boost::mpi::all_reduce(comm, mine, h.record_count, std::plus<std::uint64_t>());
  }
  std::string user = opt.user;
  boost::mpi::broadcast(comm, user, 0);
  h.place(leaf_shares.total(), record_shares.total(), user.size());

  // 3. A temporary file next to the target, synced, then renamed over it (write_file).
  const auto user_shares = ck::SectionShares::of(comm, me == 0 ? user.size() : 0);
  write_file(comm, path, h, {&leaf_shares, &record_shares, &user_shares},
             {std::span<const std::byte>(leaf_bytes), records,
              me == 0 ? std::as_bytes(std::span<const char>(user)) : std::span<const std::byte>()},
             Core::tag_checkpoint);
}

/// An open checkpoint: its file and decoded, checked header.
struct OpenedCheckpoint {
  mpi::File file;
  checkpoint::Header header;
  std::string path;
};

/// Opens a checkpoint for a domain of curve C and value T and checks that it is one: the header,
/// the kind, dimension, curve, depth, value format and size, type tag, periodicity and held
/// level. Throws irregular::checkpoint_error alike on every rank. Collective over comm.
/// Opens a checkpoint on every rank and decodes its header (rank 0 reads it, every rank checks
/// it). Throws irregular::checkpoint_error alike on every rank. Collective over comm.
inline OpenedCheckpoint open_checkpoint_file(const boost::mpi::communicator& comm,
                                             const std::string& path) {
  namespace ck = checkpoint;
  const int me = comm.rank();
  ck::agree(comm, [&] {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      throw checkpoint_error("irregular checkpoint '" + path + "': no such file", me);
  });
  auto file = ck::agree(comm, [&] {
    return std::optional<mpi::File>(std::in_place, comm, path, mpi::File::Mode::read);
  });
  std::array<std::byte, ck::header_bytes> raw{};
  std::uint64_t size = 0;
  ck::agree(comm, [&] {  // rank 0 reads the header; every rank decodes it
    if (me != 0) return;
    size = file->size();
    file->read_at(0, std::span<std::byte>(raw).first(std::min<std::uint64_t>(size, raw.size())));
  });
  boost::mpi::broadcast(comm, size, 0);
  boost::mpi::broadcast(comm, reinterpret_cast<char*>(raw.data()), static_cast<int>(raw.size()), 0);
  auto h = ck::agree(comm, [&] { return ck::decode(raw, size, path, me); });
  return OpenedCheckpoint{std::move(*file), std::move(h), path};
}

template <class C, class T, int D>
OpenedCheckpoint open_checkpoint(const boost::mpi::communicator& comm, const std::string& path,
                                 checkpoint::Kind kind, const std::string& type_tag,
                                 const Periodicity<D>& periodic, int hold_level) {
  namespace ck = checkpoint;
  const int me = comm.rank();
  auto in = open_checkpoint_file(comm, path);
  ck::agree(comm, [&] {
    const auto& got = in.header;
    const auto want = describe<C, T>(kind, Box<D>{}, periodic, hold_level, false, type_tag);
    const auto differ = [&](const std::string& what, const std::string& file_has,
                            const std::string& wanted) {
      if (file_has != wanted)
        ck::bad_header(path, what + ": the file has " + file_has + ", this domain " + wanted, 0,
                       me);
    };
    const auto kind_name = [](ck::Kind k) {
      return std::string(k == ck::Kind::elements ? "IrregularDomain" : "CellDomain");
    };
    differ("domain", kind_name(got.kind), kind_name(want.kind));
    differ("dimension", std::to_string(got.dim), std::to_string(want.dim));
    differ("curve", got.curve, want.curve);
    differ("max_level", std::to_string(got.max_level), std::to_string(want.max_level));
    differ("index width", std::to_string(got.index_bytes), std::to_string(want.index_bytes));
    const auto fmt = [](const ck::Header& x) {
      return x.format == ck::RecordFormat::raw
                 ? "raw records of " + std::to_string(x.record_bytes) + " bytes"
                 : std::string("serialized records");
    };
    differ("record format", fmt(got), fmt(want));
    differ("type tag", "'" + got.type_tag + "'", "'" + want.type_tag + "'");
    differ("periodic axes", std::to_string(got.periodic), std::to_string(want.periodic));
    differ("hold_level", std::to_string(got.hold_level), std::to_string(want.hold_level));
    if (got.foreign_order && got.record_count > 0)
      ck::bad_header(path,
                     "written on a machine of the other byte order: its records (" + fmt(got) +
                         ") cannot be converted",
                     8, me);
    for (std::uint32_t d = 0; d < got.dim; ++d)
      if (!(got.lo[d] < got.hi[d])) ck::bad_header(path, "an empty box", 0, me);
  });
  return in;
}

/// The box a checkpoint was saved with.
template <int D>
Box<D> saved_box(const checkpoint::Header& h) {
  Box<D> b;
  for (int d = 0; d < D; ++d) {
    b.lo[d] = h.lo[d];
    b.hi[d] = h.hi[d];
  }
  return b;
}

/// Where a rank's serialized records lie, for errors that name them.
struct RecordsAt {
  const std::string& path;
  int rank;
  std::uint64_t first_record;  ///< global number of the first
  std::uint64_t offset;        ///< byte offset of the first in the file
};

/// Decodes `count` length-prefixed serialized values into `values`; throws
/// irregular::checkpoint_error when a record overruns the bytes or they are not filled exactly.
/// Local; a user serialize may throw.
template <class V>
void decode_serialized(const std::vector<std::byte>& serialized, std::uint64_t count_mine,
                       V& values, const RecordsAt& where) {
  using T = typename V::value_type;
  values.reserve(count_mine);
  std::size_t at = 0;
  const std::span<const std::byte> src(serialized);
  for (std::uint64_t i = 0; i < count_mine; ++i) {
    std::uint64_t n = 0;
    if (at + 8 > src.size() || (std::memcpy(&n, src.data() + at, 8), n > src.size() - at - 8))
      throw checkpoint_error("irregular checkpoint '" + where.path + "': record " +
                                 std::to_string(where.first_record + i) + " overruns its section",
                             where.rank, "records", -1, where.offset + at);
    std::istringstream is(std::string(reinterpret_cast<const char*>(src.data() + at + 8), n),
                          std::ios::binary);
    boost::archive::binary_iarchive ar(is, boost::archive::no_header);
    T v{};
    ar >> v;
    values.push_back(std::move(v));
    at += 8 + n;
  }
  if (at != src.size())
    throw checkpoint_error(
        "irregular checkpoint '" + where.path + "': records do not fill the leaves", where.rank,
        "records", -1, where.offset + at);
}

/// The leaves that all ranks read tile the curve in rank order, and their counts add up to the
/// header's record count (one all-gather of O(p) words). Collective over comm.
template <class C>
void check_tiling(const boost::mpi::communicator& comm, const LocalLeaves<C>& leaves,
                  std::uint64_t count_mine, const checkpoint::Header& h, const std::string& path) {
  namespace ck = checkpoint;
  using I = typename C::index_type;
  const int me = comm.rank();
  const std::uint64_t L = h.leaf_count;
  const auto words = [](I x) {
    return std::array<std::uint64_t, 2>{
        static_cast<std::uint64_t>(x),
        sizeof(I) == 16 ? static_cast<std::uint64_t>(x >> 32 >> 32) : 0};
  };
  const auto s0 = words(leaves.empty() ? I{0} : leaves.start(0));
  const auto e0 = words(leaves.empty() ? I{0} : leaves.end(leaves.size() - 1));
  const std::array<std::uint64_t, 6> mine{
      leaves.empty() ? 0u : 1u, s0[0], s0[1], e0[0], e0[1], count_mine};
  std::vector<std::array<std::uint64_t, 6>> all;
  boost::mpi::all_gather(comm, mine, all);
  ck::agree(comm, [&] {
    std::array<std::uint64_t, 2> at{0, 0};
    std::uint64_t total = 0;
    for (const auto& r : all) {
      total += r[5];
      if (!r[0]) continue;
      if (r[1] != at[0] || r[2] != at[1])
        throw checkpoint_error(
            "irregular checkpoint '" + path + "': the leaves do not tile the domain", me, "leaves",
            -1, h.sections[ck::leaves].offset);
      at = {r[3], r[4]};
    }
    if (at != words(detail::index_end<C>()) && L > 0)
      throw checkpoint_error(
          "irregular checkpoint '" + path + "': the leaves do not cover the domain", me, "leaves",
          -1, h.sections[ck::leaves].offset);
    if (total != h.record_count)
      throw checkpoint_error("irregular checkpoint '" + path + "': the leaves hold " +
                                 std::to_string(total) + " records, the header says " +
                                 std::to_string(h.record_count),
                             me, "leaves", -1, h.sections[ck::leaves].offset);
  });
}

/// This rank's share [a, b) of the leaf table, decoded and checked: the leaves with their counts
/// and (stored loads) seconds, and, for serialized records, their byte range (raw records' range
/// follows from the counts). `b_read` is b + 1 when the next leaf's first byte ends the range.
template <class C>
struct LeafShare {
  LocalLeaves<C> leaves;
  std::vector<double> measured;
  std::uint64_t count = 0, rec_begin = 0, rec_end = 0;
};
template <class C, bool Raw>
LeafShare<C> decode_leaf_share(std::span<const std::byte> leaf_in, const checkpoint::Header& h,
                               std::uint64_t a, std::uint64_t b, std::uint64_t b_read,
                               const std::string& path, int me) {
  using I = typename C::index_type;
  namespace ck = checkpoint;
  const bool elements = h.kind == ck::Kind::elements;
  const std::uint64_t rec = h.leaf_record_bytes();
  const auto bad = [&](std::uint64_t leaf, const std::string& what) {
    throw checkpoint_error(
        "irregular checkpoint '" + path + "': leaf " + std::to_string(leaf) + " " + what, me,
        "leaves", -1, h.sections[ck::leaves].offset + leaf * rec);
  };
  LeafShare<C> out;
  out.leaves.reserve(b - a);
  std::uint64_t first_byte_a = 0;
  for (std::uint64_t k = a; k < b_read; ++k) {
    ck::detail::Reader r(leaf_in.subspan((k - a) * rec, rec), h.foreign_order);
    I s = static_cast<I>(r.get<std::uint64_t>());
    if constexpr (sizeof(I) == 16) s |= static_cast<I>(r.get<std::uint64_t>()) << 64;
    const int level = r.get<std::uint8_t>();
    const std::uint64_t count = elements ? r.get<std::uint64_t>() : 1;
    const double load = h.has_loads ? r.get<double>() : 0.0;
    const std::uint64_t fb = Raw ? 0 : r.get<std::uint64_t>();
    if (k == a) first_byte_a = fb;
    if (k == b) {  // the extra record: only its first byte counts
      out.rec_end = fb;
      break;
    }
    if (level > C::max_level || s % detail::span_at<C>(level) != 0) bad(k, "is not a cell");
    if (!out.leaves.empty() && out.leaves.end(out.leaves.size() - 1) != s)
      bad(k, "does not follow its predecessor");
    out.leaves.push_back(s, level, count);
    out.count += count;
    if (h.has_loads) {
      if (!(load >= 0)) bad(k, "has a negative load");
      out.measured.push_back(load);
    }
  }
  if (!Raw) {
    out.rec_begin = first_byte_a;
    if (b == h.leaf_count) out.rec_end = h.sections[ck::records].bytes;
    if (a == b) out.rec_begin = out.rec_end = 0;
  }
  return out;
}

/// Reads this rank's even share of the leaves and their records into an (empty) core, checks
/// them, and lets the partitioner map them by their loads. Collective over comm.
template <class Core>
void load_core(Core& core, OpenedCheckpoint& in, const LoadOptions& opt) {
  using C = typename Core::curve_type;
  using T = typename Core::value_type;
  namespace ck = checkpoint;
  const boost::mpi::communicator& comm = core.comm_.get();
  const int me = comm.rank(), p = comm.size();
  const auto& h = in.header;
  const std::string& path = in.path;
  const std::uint64_t L = h.leaf_count, rec = h.leaf_record_bytes();
  const auto share = [&](int r) {  // r * L / p without overflow
    return L / static_cast<std::uint64_t>(p) * static_cast<std::uint64_t>(r) +
           L % static_cast<std::uint64_t>(p) * static_cast<std::uint64_t>(r) /
               static_cast<std::uint64_t>(p);
  };
  const std::uint64_t a = share(me), b = share(me + 1);
  // The serialized records' end is the next leaf's first byte: one more leaf record is read.
  const std::uint64_t b_read = !raw_records<T> && b < L ? b + 1 : b;

  detail::store_vector<T> values;  // raw records are read straight into the store's array
  ck::agree(comm, [&] {  // rank 0 vets the tables; every rank reads only its blocks' entries
    if (me == 0)
      for (int s = 0; s < ck::section_count; ++s) ck::verify_table(in.file, h, s, path, me);
  });
  auto leaf_in = ck::agree(comm, [&] {
    return ck::read_section(in.file, h, ck::leaves, a * rec, b_read * rec, path, me);
  });
  auto share_in = ck::agree(comm, [&] {
    return decode_leaf_share<C, raw_records<T>>(leaf_in, h, a, b, b_read, path, me);
  });
  LocalLeaves<C>& leaves = share_in.leaves;
  const std::uint64_t count_mine = share_in.count;
  std::uint64_t rec_begin = share_in.rec_begin, rec_end = share_in.rec_end;
  // The leaves of all ranks tile the curve, and the counts add up (O(p) replicated).
  std::uint64_t first_record = 0;
  boost::mpi::scan(comm, count_mine, first_record, std::plus<std::uint64_t>());
  first_record -= count_mine;
  check_tiling(comm, leaves, count_mine, in.header, path);
  if constexpr (raw_records<T>) {
    rec_begin = first_record * sizeof(T);
    rec_end = rec_begin + count_mine * sizeof(T);
  }
  ck::agree(comm, [&] {
    if (rec_begin > rec_end || rec_end > h.sections[ck::records].bytes)
      throw checkpoint_error("irregular checkpoint '" + path + "': records beyond their section",
                             me, "records", -1, h.sections[ck::records].offset);
  });
  std::vector<std::byte> serialized;
  if constexpr (raw_records<T>) {
    // With the store's headroom now, so indexing the leaves later does not copy them again.
    detail::reserve_headroom(values, count_mine);
    detail::resize_for_overwrite(values, count_mine);
  } else
    serialized.resize(rec_end - rec_begin);
  ck::agree(comm, [&] {
    const auto into = raw_records<T>
                          ? std::as_writable_bytes(std::span<T>(values.data(), values.size()))
                          : std::span<std::byte>(serialized);
    ck::read_section_into(in.file, h, ck::records, rec_begin, rec_end, into, path, me);
  });
  if constexpr (!raw_records<T>)
    ck::agree(comm, [&] {
      decode_serialized(serialized, count_mine, values,
                        {path, me, first_record, h.sections[ck::records].offset + rec_begin});
    });
  // The user section is verified even when not asked for: every byte of the file is checked.
  const auto user_in = ck::agree(comm, [&] {
    return ck::read_section(in.file, h, ck::user, 0, h.sections[ck::user].bytes, path, me);
  });
  if (opt.user) opt.user->assign(reinterpret_cast<const char*>(user_in.data()), user_in.size());
  in.file.close();
  ck::agree(comm, [&] { core.store_.adopt(std::move(values), leaves); });  // user element_traits
  core.adopt(std::move(leaves), std::move(share_in.measured));
}

}  // namespace detail

/// Reads a checkpoint's header and user section, each verified, on every rank of comm, without
/// loading the domain (a restart takes its options from them). Throws the same
/// irregular::checkpoint_error on every rank for a missing, truncated or corrupt file.
/// Collective over comm.
inline CheckpointInfo read_checkpoint_info(const boost::mpi::communicator& comm,
                                           const std::string& path) {
  namespace ck = checkpoint;
  const int me = comm.rank();
  auto in = detail::open_checkpoint_file(comm, path);
  ck::agree(comm, [&] {
    if (me == 0) ck::verify_table(in.file, in.header, ck::user, path, me);
  });
  const auto user = ck::agree(comm, [&] {
    return ck::read_section(in.file, in.header, ck::user, 0, in.header.sections[ck::user].bytes,
                            path, me);
  });
  in.file.close();
  return {in.header, std::string(reinterpret_cast<const char*>(user.data()), user.size())};
}

}  // namespace irregular
