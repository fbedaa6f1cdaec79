// Loading a checkpoint (checkpoint.hpp saves it) on any number of ranks: every check that decides
// acceptance depends on the file alone (each leaf against its neighbours in file order, each
// record against its leaf), so a file is accepted or refused alike, with one error, at every p.
#pragma once

#include <irregular/checkpoint/format.hpp>
#include <irregular/core/box.hpp>
#include <irregular/core/detail/headroom.hpp>
#include <irregular/core/detail/splice_vector.hpp>
#include <irregular/core/element_traits.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/checkpoint/record_archive.hpp>
#include <irregular/distributed/checkpoint/sections.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/mpi/file.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/stencil.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

namespace irregular {

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

namespace detail {

/// Values stored as their bytes (trivially copyable) or through Boost.Serialization.
template <class T>
inline constexpr bool raw_records = std::is_trivially_copyable_v<T>;

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

/// An open checkpoint: its file and decoded, checked header.
struct OpenedCheckpoint {
  mpi::File file;
  checkpoint::Header header;
  std::string path;
};

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

/// Opens a checkpoint for a domain of curve C and value T and checks that it is one: the header,
/// the kind, dimension, curve, depth, value format and size, type tag, periodicity and held
/// level. Throws irregular::checkpoint_error alike on every rank. Collective over comm.
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

/// Where a load is, for errors that name the leaf or record and its byte offset.
struct LoadErrors {
  const checkpoint::Header& h;
  const std::string& path;
  int rank;
  [[noreturn]] void leaf(std::uint64_t k, const std::string& what) const {
    namespace ck = checkpoint;
    const std::uint64_t at = h.sections[ck::leaves].offset + k * h.leaf_record_bytes();
    throw checkpoint_error("irregular checkpoint '" + path + "': section leaves, leaf " +
                               std::to_string(k) + " (byte offset " + std::to_string(at) +
                               "): " + what,
                           rank, "leaves", -1, at);
  }
  [[noreturn]] void record(std::uint64_t j, std::uint64_t k, std::uint64_t pos,
                           const std::string& what) const {
    namespace ck = checkpoint;
    const std::uint64_t at = h.sections[ck::records].offset + pos;
    throw checkpoint_error("irregular checkpoint '" + path + "': section records, record " +
                               std::to_string(j) + " of leaf " + std::to_string(k) +
                               " (byte offset " + std::to_string(at) + "): " + what,
                           rank, "records", -1, at);
  }
};

/// One leaf record as stored (fields the file lacks are zero; count is 1 for cells).
template <class I>
struct StoredLeaf {
  I start{};
  int level = 0;
  std::uint64_t count = 1;
  double load = 0;
  std::uint64_t first = 0;  ///< serialized records: the first byte of the leaf's records
};
template <class I>
StoredLeaf<I> read_stored_leaf(std::span<const std::byte> in, const checkpoint::Header& h) {
  checkpoint::detail::Reader r(in, h.foreign_order);
  StoredLeaf<I> x;
  x.start = static_cast<I>(r.get<std::uint64_t>());
  if constexpr (sizeof(I) == 16) x.start |= static_cast<I>(r.get<std::uint64_t>()) << 64;
  x.level = r.get<std::uint8_t>();
  if (h.kind == checkpoint::Kind::elements) x.count = r.get<std::uint64_t>();
  if (h.has_loads) x.load = r.get<double>();
  if (h.format == checkpoint::RecordFormat::serialized) x.first = r.get<std::uint64_t>();
  return x;
}

/// A double in messages, exactly.
inline std::string number(double x) {
  char s[32];
  std::snprintf(s, sizeof s, "%.17g", x);
  return s;
}

/// x + y, or the largest value when that overflows: counts summed in any grouping agree. A type,
/// not a function: Boost.MPI default-constructs its reduction operations.
struct SaturatingAdd {
  std::uint64_t operator()(std::uint64_t x, std::uint64_t y) const noexcept {
    return x > std::numeric_limits<std::uint64_t>::max() - y
               ? std::numeric_limits<std::uint64_t>::max()
               : x + y;
  }
};

/// The largest stored load accepted: any sum the partitioner forms of loads and of loads scaled
/// by element counts stays finite.
inline double max_stored_load(const checkpoint::Header& h) {
  return std::numeric_limits<double>::max() / 4 / (static_cast<double>(h.leaf_count) + 1) /
         (static_cast<double>(h.record_count) + 1);
}

/// This rank's share [a, b) of the leaves, decoded from the leaf records [lo, hi) (one beyond
/// each end of the share where there is one), each leaf checked in file order against its
/// neighbours: a cell inside the curve that starts where the previous one ends (the first at 0,
/// the last ending the curve), a count no larger than the file's, a finite load >= 0, and
/// (serialized records) a first byte at 0 for the first leaf, else at least 8 bytes per record
/// of the previous leaf beyond that leaf's, inside the record section. Local.
template <class C>
struct LeafShare {
  LocalLeaves<C> leaves;
  std::vector<double> measured;
  std::vector<std::uint64_t> first;  ///< serialized: first byte of each leaf, and of the next
  std::uint64_t count = 0;           ///< records of the share
};
template <class C>
LeafShare<C> decode_leaf_share(std::span<const std::byte> in, const checkpoint::Header& h,
                               std::uint64_t a, std::uint64_t b, std::uint64_t lo,
                               const LoadErrors& err) {
  using I = typename C::index_type;
  namespace ck = checkpoint;
  const std::uint64_t rec = h.leaf_record_bytes(), L = h.leaf_count;
  const std::uint64_t bytes = h.sections[ck::records].bytes;
  const bool serialized = h.format == ck::RecordFormat::serialized;
  const double load_limit = max_stored_load(h);
  const auto record = [&](std::uint64_t k) {
    return read_stored_leaf<I>(in.subspan((k - lo) * rec, rec), h);
  };
  const auto is_cell = [](const StoredLeaf<I>& x) {
    if (x.level > C::max_level || x.start % detail::span_at<C>(x.level) != 0) return false;
    return x.start < detail::index_end<C>() &&
           detail::span_at<C>(x.level) <= detail::index_end<C>() - x.start;
  };
  const auto str = [](auto v) { return std::to_string(static_cast<std::uint64_t>(v)); };
  LeafShare<C> out;
  out.leaves.reserve(b - a);
  for (std::uint64_t k = a; k < b; ++k) {
    const auto x = record(k);
    if (!is_cell(x))
      err.leaf(k, "start " + str(x.start) + " at level " + std::to_string(x.level) +
                      " is not a cell of the curve");
    const I end = x.start + detail::span_at<C>(x.level);
    if (k == 0 && x.start != I{0}) err.leaf(k, "does not start at the curve's first index");
    if (k > 0) {
      const auto prev = record(k - 1);
      if (is_cell(prev) && prev.start + detail::span_at<C>(prev.level) != x.start)
        err.leaf(
            k, "starts at " + str(x.start) + ", not where leaf " + std::to_string(k - 1) + " ends");
      if (serialized && !(prev.first <= x.first && (x.first - prev.first) / 8 >= prev.count))
        err.leaf(k, "its records' first byte " + std::to_string(x.first) +
                        " leaves no room for the " + std::to_string(prev.count) +
                        " records of leaf " + std::to_string(k - 1) + " from byte " +
                        std::to_string(prev.first));
    }
    if (k + 1 == L && end != detail::index_end<C>())
      err.leaf(k, "is the last leaf but does not end the curve");
    if (x.count > h.record_count)
      err.leaf(k, "holds " + std::to_string(x.count) + " records, the file " +
                      std::to_string(h.record_count));
    if (h.has_loads && !(std::isfinite(x.load) && x.load >= 0 && x.load <= load_limit))
      err.leaf(k, "has load " + number(x.load) + ", not a finite number in [0, " +
                      number(load_limit) + "]");
    if (serialized) {
      if (k == 0 && x.first != 0) err.leaf(k, "its records do not start the record section");
      if (x.first > bytes || (k + 1 == L && (bytes - x.first) / 8 < x.count))
        err.leaf(k, "its records' first byte " + std::to_string(x.first) +
                        " leaves no room for its " + std::to_string(x.count) +
                        " records in the record section of " + std::to_string(bytes) + " bytes");
      out.first.push_back(x.first);
    }
    out.leaves.push_back(x.start, x.level, x.count);
    out.count = SaturatingAdd{}(out.count, x.count);
    if (h.has_loads) out.measured.push_back(x.load);
  }
  if (serialized && a < b) out.first.push_back(b < L ? record(b).first : bytes);
  return out;
}

/// The records of the share, decoded into `values` in file order and checked: each serialized
/// record ends inside its leaf's bytes and leaves none unread, each leaf's records end where the
/// next leaf's first byte says, and (elements) each element lies in the box, inside its leaf
/// and in key order within it. `key` gives an element's curve key, `inside` whether it lies in
/// the box. Local; a user serialize or position may throw (named with the record).
template <class C, class V, class Inside, class Key>
void decode_records(std::span<const std::byte> bytes, const LeafShare<C>& share, std::uint64_t a,
                    std::uint64_t first_record, std::uint64_t rec_begin, V& values,
                    const LoadErrors& err, Inside&& inside, Key&& key) {
  using T = typename V::value_type;
  using I = typename C::index_type;
  constexpr bool elements = !std::is_same_v<Inside, std::nullptr_t>;
  const auto& leaves = share.leaves;
  if constexpr (!raw_records<T>) values.reserve(share.count);
  std::uint64_t j = first_record, pos = rec_begin;  // global record number, section offset
  std::size_t i = 0;                                // local value
  for (std::size_t l = 0; l < leaves.size(); ++l) {
    const std::uint64_t k = a + l;
    if constexpr (!raw_records<T>) {
      if (pos != share.first[l])
        err.leaf(k, "its records' first byte says " + std::to_string(share.first[l]) +
                        ", but leaf " + std::to_string(k - 1) + "'s records end at " +
                        std::to_string(pos));
    }
    const std::uint64_t leaf_end = raw_records<T> ? 0 : share.first[l + 1];
    I prev_key{};
    for (std::uint64_t n = 0; n < leaves.counts()[l]; ++n, ++j, ++i) {
      const std::uint64_t at = pos;
      try {
        if constexpr (raw_records<T>) {
          pos += sizeof(T);
        } else {
          std::uint64_t len = 0;
          if (leaf_end - pos < 8) err.record(j, k, at, "its length runs past its leaf's records");
          std::memcpy(&len, bytes.data() + (pos - rec_begin), 8);
          if (len > leaf_end - pos - 8)
            err.record(j, k, at,
                       "its length " + std::to_string(len) + " runs past its leaf's records");
          values.emplace_back();
          checkpoint::read_record(bytes.subspan(pos + 8 - rec_begin, len), values.back());
          pos += 8 + len;
        }
        if constexpr (elements) {
          if (!inside(values[i])) err.record(j, k, at, "lies outside the domain box");
          const I x = key(values[i]);
          if (x < leaves.start(l) || !(x < leaves.end(l)))
            err.record(j, k, at, "lies outside its leaf");
          if (n > 0 && x < prev_key) err.record(j, k, at, "is out of key order within its leaf");
          prev_key = x;
        }
      } catch (const checkpoint_error&) {
        throw;
      } catch (const std::exception& e) {
        err.record(j, k, at, std::string("cannot be read: ") + e.what());
      }
    }
  }
  if constexpr (!raw_records<T>) {
    if (!leaves.empty() && pos != share.first.back()) {
      const std::uint64_t k = a + leaves.size();
      if (k == err.h.leaf_count)
        err.leaf(k - 1, "its records end at " + std::to_string(pos) +
                            ", before the end of the record section");
      err.leaf(k, "its records' first byte says " + std::to_string(share.first.back()) +
                      ", but leaf " + std::to_string(k - 1) + "'s records end at " +
                      std::to_string(pos));
    }
  }
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
  const LoadErrors err{h, path, me};
  const std::uint64_t L = h.leaf_count, rec = h.leaf_record_bytes();
  const auto share = [&](int r) {  // r * L / p without overflow
    return L / static_cast<std::uint64_t>(p) * static_cast<std::uint64_t>(r) +
           L % static_cast<std::uint64_t>(p) * static_cast<std::uint64_t>(r) /
               static_cast<std::uint64_t>(p);
  };
  const std::uint64_t a = share(me), b = share(me + 1);
  // One leaf record beyond each end of the share: every leaf is checked against both neighbours.
  const std::uint64_t lo = a < b && a > 0 ? a - 1 : a, hi = a < b && b < L ? b + 1 : b;

  ck::agree(comm, [&] {  // rank 0 vets the tables; every rank reads only its blocks' entries
    if (me == 0)
      for (int s = 0; s < ck::section_count; ++s) ck::verify_table(in.file, h, s, path, me);
  });
  const auto leaf_in = ck::agree(
      comm, [&] { return ck::read_section(in.file, h, ck::leaves, lo * rec, hi * rec, path, me); });
  auto mine = ck::agree(comm, [&] { return decode_leaf_share<C>(leaf_in, h, a, b, lo, err); });
  // The counts add up to the header's (a sum that saturates: the same in any grouping).
  std::uint64_t total = 0, first_record = 0;
  boost::mpi::all_reduce(comm, mine.count, total, SaturatingAdd{});
  boost::mpi::scan(comm, mine.count, first_record, SaturatingAdd{});
  first_record -= mine.count;  // used only once the total is the header's: no saturation
  ck::agree(comm, [&] {
    if (total != h.record_count)
      ck::bad_header(path,
                     "the leaves hold " + std::to_string(total) +
                         " records, the header's record count says " +
                         std::to_string(h.record_count),
                     ck::record_count_at, me);
  });
  // Within the section now: the leaf checks bound the first bytes, the totals the raw counts.
  const std::uint64_t rec_begin =
      raw_records<T> ? first_record * sizeof(T) : (a < b ? mine.first.front() : 0);
  const std::uint64_t rec_end =
      raw_records<T> ? rec_begin + mine.count * sizeof(T) : (a < b ? mine.first.back() : 0);
  detail::store_vector<T> values;  // raw records are read straight into the store's array
  std::vector<std::byte> serialized;
  if constexpr (raw_records<T>) {
    // With the store's headroom now, so indexing the leaves later does not copy them again.
    detail::reserve_headroom(values, mine.count);
    detail::resize_for_overwrite(values, mine.count);
  } else {
    serialized.resize(rec_end - rec_begin);
  }
  const auto bytes = raw_records<T>
                         ? std::as_writable_bytes(std::span<T>(values.data(), values.size()))
                         : std::span<std::byte>(serialized);
  ck::agree(comm, [&] {
    ck::read_section_into(in.file, h, ck::records, rec_begin, rec_end, bytes, path, me);
  });
  ck::agree(comm, [&] {
    const auto& store = core.store_;
    if constexpr (Core::store_type::per_leaf)
      decode_records(bytes, mine, a, first_record, rec_begin, values, err, nullptr, nullptr);
    else
      decode_records(
          bytes, mine, a, first_record, rec_begin, values, err,
          [&](const T& e) { return store.box().contains(element_traits<T>::position(e)); },
          [&](const T& e) { return store.key_of(e); });
  });
  // The user section is verified even when not asked for: every byte of the file is checked.
  const auto user_in = ck::agree(comm, [&] {
    return ck::read_section(in.file, h, ck::user, 0, h.sections[ck::user].bytes, path, me);
  });
  if (opt.user) opt.user->assign(reinterpret_cast<const char*>(user_in.data()), user_in.size());
  in.file.close();
  ck::agree(comm, [&] { core.store_.adopt(std::move(values), mine.leaves); });
  core.adopt(std::move(mine.leaves), std::move(mine.measured));
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
