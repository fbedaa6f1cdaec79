// irregular::error and its family: what the library throws for bad input at public entry points.
// DESIGN.md "Errors and bad input": a rejected call leaves the object unchanged.
#pragma once

#include <stdexcept>
#include <string>

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
  collective_error(const std::string& what, int failing_rank)
      : error(what), failing_rank_(failing_rank) {}
  [[nodiscard]] int failing_rank() const noexcept { return failing_rank_; }

 private:
  int failing_rank_;
};

}  // namespace irregular
