// irregular::error and its family: what the library throws for bad input at public entry points.
// DESIGN.md "Errors and bad input": a rejected call leaves the object unchanged.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace irregular {

/// Base of every exception the library throws for bad input or a failed collective.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A value outside what the entry point accepts (negative load, p = 0, level beyond max_level...).
class invalid_argument : public error {
 public:
  using error::error;
};

/// A position or cell outside the domain box.
class out_of_domain : public error {
 public:
  using error::error;
};

/// A resource limit the caller set or the library derived was reached (the leaf budget of a
/// runaway refinement); nothing was committed.
class limit_exceeded : public error {
 public:
  using error::error;
};

/// Malformed input file or stream (checkpoints, load matrices); the message names line or offset.
class parse_error : public error {
 public:
  using error::error;
};

/// Thrown on every rank of a collective call when some rank rejected its part of the input;
/// the message is the first failing rank's (lowest rank number), so all ranks report alike.
class collective_error : public error {
 public:
  /// The error `what` that rank `failing_rank` raised, to be thrown on every rank.
  collective_error(const std::string& what, int failing_rank)
      : error(what), failing_rank_(failing_rank) {}
  /// The rank whose input or code failed first (the lowest such rank).
  [[nodiscard]] int failing_rank() const noexcept { return failing_rank_; }

 private:
  int failing_rank_;
};

/// A checkpoint file that cannot be read or written as asked: missing, not writable, truncated,
/// corrupt, or written for another domain. Thrown alike on every rank of a collective save or
/// load; says where: the section ("header", "leaves", "records", "user", "checksums" or "" when
/// the file as a whole), the checksum block (-1 when none) and the byte offset in the file.
class checkpoint_error : public collective_error {
 public:
  /// The error `what`, first raised on `failing_rank`, at `offset` in `section` (block `block`).
  checkpoint_error(const std::string& what, int failing_rank, std::string section = {},
                   std::int64_t block = -1, std::uint64_t offset = 0)
      : collective_error(what, failing_rank),
        section_(std::move(section)),
        block_(block),
        offset_(offset) {}
  /// The section where the file is wrong, or "" for the file as a whole.
  [[nodiscard]] const std::string& section() const noexcept { return section_; }
  /// The checksum block that failed, or -1 when none did.
  [[nodiscard]] std::int64_t block() const noexcept { return block_; }
  /// The byte offset in the file.
  [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }

 private:
  std::string section_;
  std::int64_t block_;
  std::uint64_t offset_;
};

}  // namespace irregular
