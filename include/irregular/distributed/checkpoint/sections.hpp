// The sections of a checkpoint file, written and read by all ranks at once: each rank writes its
// bytes at the offset its prefix sum gives, and the checksum of every block is computed by the
// rank where the block starts, with the few bytes of the block held by later ranks sent to it;
// a reader verifies every block it touches (read independently: see read_section_into). No rank
// gathers the payload. The failures of a save or load are agreed into one
// irregular::checkpoint_error on every rank.
#pragma once

#include <irregular/checkpoint/checksum.hpp>
#include <irregular/checkpoint/format.hpp>
#include <irregular/core/error.hpp>
#include <irregular/mpi/file.hpp>
#include <irregular/mpi/operations.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/nonblocking.hpp>
#include <boost/mpi/request.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace irregular::checkpoint {

/// Runs f() on every rank; when it throws on any rank, every rank throws the same
/// irregular::checkpoint_error: the lowest failing rank's message, section, block and offset
/// (another exception becomes a checkpoint_error of no section). Collective over comm.
template <class F>
auto agree(const boost::mpi::communicator& comm, F&& f) -> decltype(f()) {
  using Result = decltype(f());
  std::optional<std::string> failure;
  std::string section;
  std::array<std::int64_t, 3> where{-1, 0, comm.rank()};  // block, offset, reported rank
  std::conditional_t<std::is_void_v<Result>, bool, std::optional<Result>> result{};
  try {
    if constexpr (std::is_void_v<Result>)
      std::forward<F>(f)();
    else
      result.emplace(std::forward<F>(f)());
  } catch (const checkpoint_error& e) {
    failure = e.what();
    section = e.section();
    where = {e.block(), static_cast<std::int64_t>(e.offset()), e.failing_rank()};
  } catch (const collective_error& e) {
    failure = e.what();
    where[2] = e.failing_rank();
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "unknown exception (not derived from std::exception)";
  }
  // The lowest reported failing rank wins; among the ranks reporting it, the lowest holds the
  // details (one reduction; broadcasts only on failure).
  const std::int64_t p = comm.size(), none = p * p;
  const std::int64_t key = failure ? where[2] * p + comm.rank() : none;
  std::int64_t min_key = none;
  boost::mpi::all_reduce(comm, key, min_key, boost::mpi::minimum<std::int64_t>());
  if (min_key != none) {
    const int root = static_cast<int>(min_key % p);
    std::string message = failure.value_or(std::string());
    boost::mpi::broadcast(comm, message, root);
    boost::mpi::broadcast(comm, section, root);
    boost::mpi::broadcast(comm, where.data(), 3, root);
    throw checkpoint_error(message, static_cast<int>(min_key / p), section, where[0],
                           static_cast<std::uint64_t>(where[1]));
  }
  if constexpr (!std::is_void_v<Result>) return std::move(*result);
}

/// Every rank's byte range [begin, end) of one section, replicated (O(p)).
struct SectionShares {
  std::vector<std::uint64_t> begin;  ///< p + 1 entries: rank r writes [begin[r], begin[r+1])

  /// From each rank's byte count: one exclusive prefix sum, gathered. Collective over comm.
  static SectionShares of(const boost::mpi::communicator& comm, std::uint64_t mine) {
    std::vector<std::uint64_t> counts;
    boost::mpi::all_gather(comm, mine, counts);
    SectionShares s;
    s.begin.assign(counts.size() + 1, 0);
    for (std::size_t r = 0; r < counts.size(); ++r) s.begin[r + 1] = s.begin[r] + counts[r];
    return s;
  }
  /// Bytes of the whole section: every rank's share.
  [[nodiscard]] std::uint64_t total() const noexcept { return begin.back(); }
  /// The rank whose non-empty share holds byte x (x < total()).
  [[nodiscard]] int holder(std::uint64_t x) const noexcept {
    return static_cast<int>(std::upper_bound(begin.begin(), begin.end(), x) - begin.begin()) - 1;
  }
};

/// Writes this rank's bytes of section `s` (its share given by `shares`) and returns the
/// checksums of the blocks that start in its share (in block order; rank order concatenates
/// them into the section's table). A block that reaches into later ranks' shares is completed
/// with their first bytes, sent to this rank: one message per such rank. A write that fails is
/// kept in `failed` (the first failure), never thrown midway, so every rank completes the same
/// MPI calls; the caller agrees on it. Collective over comm.
inline std::vector<std::uint64_t> write_section(mpi::File& file,
                                                const boost::mpi::communicator& comm,
                                                const Section& s, const SectionShares& shares,
                                                std::span<const std::byte> mine,
                                                std::uint64_t block_bytes, int tag,
                                                std::optional<std::string>& failed) {
  const int me = comm.rank(), p = comm.size();
  const std::uint64_t b = shares.begin[me], e = shares.begin[me + 1];
  try {
    file.write_at_all(s.offset + b, mine);
  } catch (const std::exception& x) {
    if (!failed) failed = x.what();
  }
  // My head belongs to the block that started before my share, at another rank.
  std::vector<boost::mpi::request> requests;
  const std::uint64_t head_end = std::min(e, (b / block_bytes + 1) * block_bytes);
  if (b < e && b % block_bytes != 0) {
    const int to = shares.holder(b / block_bytes * block_bytes);
    requests.push_back(comm.isend(to, tag, reinterpret_cast<const char*>(mine.data()),
                                  static_cast<int>(head_end - b)));
  }
  // Blocks that start in my share; the last may need the heads of the ranks after me.
  std::vector<std::uint64_t> sums;
  if (b < e) {
    const std::uint64_t first = (b + block_bytes - 1) / block_bytes,
                        last = (e - 1) / block_bytes;  // inclusive
    for (std::uint64_t k = first; k <= last; ++k) {
      const std::uint64_t kb = k * block_bytes, ke = std::min(kb + block_bytes, shares.total());
      StreamingChecksum sum;
      sum.add(mine.subspan(kb - b, std::min(ke, e) - kb));
      for (int q = me + 1; q < p && shares.begin[q] < ke; ++q) {
        const std::uint64_t qb = shares.begin[q], qe = shares.begin[q + 1];
        if (qb == qe) continue;
        std::vector<char> piece(std::min(qe, ke) - qb);
        comm.recv(q, tag, piece.data(), static_cast<int>(piece.size()));
        sum.add(std::as_bytes(std::span<const char>(piece)));
      }
      sums.push_back(sum.value());
    }
  }
  boost::mpi::wait_all(requests.begin(), requests.end());
  return sums;
}

/// The section's full table of block checksums on rank 0 (the blocks' sums gathered in rank
/// order; O(section bytes / block bytes)), empty elsewhere. Collective over comm.
inline std::vector<std::uint64_t> gather_table(const boost::mpi::communicator& comm,
                                               const std::vector<std::uint64_t>& mine) {
  std::vector<int> sizes;
  return mpi::gather_raw(comm, std::span<const std::uint64_t>(mine), 0, sizes);
}

/// Checks a section's whole table of block checksums against the header (one rank does this:
/// the table is O(section bytes / block bytes)). Local.
inline void verify_table(mpi::File& file, const Header& h, int s, const std::string& path,
                         int rank) {
  const Section& sec = h.sections[s];
  std::vector<std::byte> table(8 * block_count(sec.bytes, h.block_bytes));
  file.read_at(sec.table_offset, table);
  if (checksum(table) != sec.table_checksum)
    throw checkpoint_error("irregular checkpoint '" + path + "': the checksum table of section " +
                               section_name(s) + " is corrupt",
                           rank, "checksums", -1, sec.table_offset);
}

/// Entries [k0, k1) of a section's table of block checksums, in this machine's order. Local.
inline std::vector<std::uint64_t> table_entries(mpi::File& file, const Header& h, int s,
                                                std::uint64_t k0, std::uint64_t k1) {
  std::vector<std::uint64_t> t(k1 - k0);
  file.read_at(h.sections[s].table_offset + 8 * k0,
               std::as_writable_bytes(std::span<std::uint64_t>(t)));
  if (h.foreign_order)
    for (auto& v : t) v = detail::swapped(v);
  return t;
}

/// Reads bytes [b, e) of section `s` into `out` (e - b bytes), verifying every block they touch
/// against its entry of the section's table (only those entries are read): the interior lands in
/// `out` directly, the parts of the first and last blocks outside [b, e) in small side buffers.
/// Throws irregular::checkpoint_error naming the section, the block and its byte offset on a
/// mismatch. Local: the reads are independent, because the ranges of neighbouring ranks overlap
/// (the blocks both verify, the leaf records both check) and Open MPI 4.1's collective reads
/// return wrong bytes for overlapping ranges (open-mpi/ompi#10546, its data sieving).
inline void read_section_into(mpi::File& file, const Header& h, int s, std::uint64_t b,
                              std::uint64_t e, std::span<std::byte> out, const std::string& path,
                              int rank) {
  const Section& sec = h.sections[s];
  const std::uint64_t B = h.block_bytes;
  const std::uint64_t rb = b < e ? b / B * B : 0;
  const std::uint64_t re = b < e ? std::min(sec.bytes, (e + B - 1) / B * B) : 0;
  std::vector<std::byte> head(b < e ? b - rb : 0), tail(b < e ? re - e : 0);
  const auto table = table_entries(file, h, s, rb / B, (re + B - 1) / B);
  file.read_at(sec.offset + rb, head);
  file.read_at(sec.offset + b, out.first(b < e ? e - b : 0));
  file.read_at(sec.offset + e, tail);
  for (std::uint64_t at = rb; at < re; at += B) {
    const std::uint64_t k = at / B, end = std::min(at + B, re);
    StreamingChecksum sum;
    const auto piece = [&](std::uint64_t from, std::uint64_t to) {  // [from, to) of the section
      if (from < b)
        sum.add(std::span<const std::byte>(head).subspan(from - rb, std::min(to, b) - from));
      if (to > b && from < e)
        sum.add(std::span<const std::byte>(out).subspan(std::max(from, b) - b,
                                                        std::min(to, e) - std::max(from, b)));
      if (to > e)
        sum.add(std::span<const std::byte>(tail).subspan(std::max(from, e) - e,
                                                         to - std::max(from, e)));
    };
    piece(at, end);
    if (sum.value() != table[k - rb / B])
      throw checkpoint_error("irregular checkpoint '" + path + "': checksum mismatch in section " +
                                 section_name(s) + ", block " + std::to_string(k) +
                                 " (byte offset " + std::to_string(sec.offset + at) + ")",
                             rank, section_name(s), static_cast<std::int64_t>(k), sec.offset + at);
  }
}

/// read_section_into a new buffer of e - b bytes.
inline std::vector<std::byte> read_section(mpi::File& file, const Header& h, int s, std::uint64_t b,
                                           std::uint64_t e, const std::string& path, int rank) {
  std::vector<std::byte> out(b < e ? e - b : 0);
  read_section_into(file, h, s, b, e, out, path, rank);
  return out;
}

}  // namespace irregular::checkpoint
