// Checkpoint and restart of a domain (both fronts): save writes one MPI-IO file whose bytes do
// not depend on the number of ranks that wrote it nor on the map (checkpoint/format.hpp; under a
// map without the range property the sections are staged into curve order, checkpoint_order.hpp);
// load (checkpoint_load.hpp) reads it on any number of ranks. Crash-safe: the file is written under
// a temporary name in the same directory, synced, then renamed over the previous checkpoint.
#pragma once

#include <irregular/checkpoint/checksum.hpp>
#include <irregular/checkpoint/format.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/checkpoint/sections.hpp>
#include <irregular/distributed/domain/checkpoint_load.hpp>
#include <irregular/distributed/domain/checkpoint_order.hpp>
#include <irregular/distributed/ghost/store.hpp>
#include <irregular/mpi/file.hpp>

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
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <system_error>
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

/// The save's sections under a map without the range property: runs of curve-consecutive leaves
/// are placed in the file (`first_byte` becomes each record's file offset, then `write_leaves`
/// encodes the leaf records), and both sections are staged into curve order (checkpoint_order.hpp).
template <class C, class Leaves, class WriteLeaves>
checkpoint::StagedSections stage_runs(const boost::mpi::communicator& comm, const Leaves& leaves,
                                      std::vector<std::uint64_t>& first_byte,
                                      WriteLeaves& write_leaves,
                                      std::span<const std::byte> leaf_bytes, std::uint64_t rec,
                                      std::span<const std::byte> records, int tag) {
  using I = typename C::index_type;
  namespace ck = checkpoint;
  const auto runs = ck::curve_runs<I>(leaves);
  const std::size_t n = runs.start.size();
  std::vector<ck::KeyWords> keys(n);
  std::vector<std::uint64_t> counts(n), bytes(n), run_byte(n + 1, first_byte[leaves.size()]);
  for (std::size_t k = 0; k < n; ++k) {
    keys[k] = ck::key_words(runs.start[k]);
    counts[k] = runs.first_leaf[k + 1] - runs.first_leaf[k];
    run_byte[k] = first_byte[runs.first_leaf[k]];
    bytes[k] = first_byte[runs.first_leaf[k + 1]] - run_byte[k];
  }
  const auto buckets = ck::run_buckets<I>(comm, runs.start, irregular::detail::index_end<C>());
  const auto places = ck::place_runs(comm, keys, counts, bytes, buckets, tag);
  for (std::size_t k = 0; k < n; ++k)  // each record's place: its run's, plus its offset in it
    for (std::size_t i = runs.first_leaf[k]; i < runs.first_leaf[k + 1]; ++i)
      first_byte[i] += places.byte[k] - run_byte[k];
  write_leaves([&](std::size_t i) { return first_byte[i]; });
  return ck::stage_in_curve_order(comm, runs.first_leaf, run_byte, places, leaf_bytes, rec, records,
                                  tag);
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

  // 2. The leaf records, each with its first record byte in the file (`record_base(i)`).
  const std::uint64_t rec = h.leaf_record_bytes();
  std::vector<std::byte> leaf_bytes(leaves.size() * rec);
  const auto write_leaves = [&](auto&& record_base) {
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
      if (!raw_records<T>) w.put(record_base(i));
    }
  };
  // The file is in curve order. When rank order is curve order (a map with the range property),
  // each rank writes its own leaves and records at one prefix sum per section; otherwise the
  // sections are staged into curve order first (checkpoint_order.hpp).
  const bool any = !leaves.empty();
  const bool in_rank_order =
      ck::rank_order_is_curve_order(comm, any, ck::key_words(any ? leaves.start(0) : I{}),
                                    ck::key_words(any ? leaves.start(leaves.size() - 1) : I{}));
  std::optional<ck::StagedSections> staged;
  std::optional<ck::SectionShares> record_shares, leaf_shares;
  if (in_rank_order) {
    record_shares = ck::SectionShares::of(comm, records.size());
    write_leaves([&](std::size_t i) { return record_shares->begin[me] + first_byte[i]; });
    leaf_shares = ck::SectionShares::of(comm, leaf_bytes.size());
  } else {
    staged = stage_runs<C>(comm, leaves, first_byte, write_leaves, leaf_bytes, rec, records,
                           Core::tag_checkpoint);
    leaf_shares = staged->leaf_shares;
    record_shares = staged->record_shares;
  }
  h.leaf_count = leaf_shares->total() / rec;
  h.record_count = 0;
  {
    const std::uint64_t mine = payload.values.size();
    boost::mpi::all_reduce(comm, mine, h.record_count, std::plus<std::uint64_t>());
  }
  std::string user = opt.user;
  boost::mpi::broadcast(comm, user, 0);
  h.place(leaf_shares->total(), record_shares->total(), user.size());

  // 3. A temporary file next to the target, synced, then renamed over it (write_file).
  const auto user_shares = ck::SectionShares::of(comm, me == 0 ? user.size() : 0);
  write_file(comm, path, h, {&*leaf_shares, &*record_shares, &user_shares},
             {staged ? std::span<const std::byte>(staged->leaves) : leaf_bytes,
              staged ? std::span<const std::byte>(staged->records) : records,
              me == 0 ? std::as_bytes(std::span<const char>(user)) : std::span<const std::byte>()},
             Core::tag_checkpoint);
}

}  // namespace detail
}  // namespace irregular
