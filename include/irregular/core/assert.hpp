/// \file
/// IRREGULAR_ASSERT: hot-path precondition checks, on in debug and test builds.
/// A failed assertion throws irregular::assertion_failure (never aborts, never prints), so tests
/// can check that a precondition is enforced.
#pragma once

#include <irregular/core/error.hpp>

#include <string>

namespace irregular {

/// Thrown by a failed IRREGULAR_ASSERT; it signals a bug in the caller, not bad data.
class assertion_failure : public error {
 public:
  using error::error;
};

namespace detail {
[[noreturn]] inline void assertion_failed(const char* expr, const char* file, int line) {
  throw assertion_failure(std::string("irregular: assertion '") + expr + "' failed at " + file +
                          ":" + std::to_string(line));
}
}  // namespace detail

}  // namespace irregular

// Enabled when IRREGULAR_ENABLE_ASSERTS is defined, or in builds without NDEBUG.
#if defined(IRREGULAR_ENABLE_ASSERTS) || !defined(NDEBUG)
/// 1 when IRREGULAR_ASSERT checks, 0 when it compiles to nothing.
#define IRREGULAR_ASSERTS_ON 1
/// Throws irregular::assertion_failure naming `expr`, file and line when `expr` is false; checked
/// when IRREGULAR_ENABLE_ASSERTS is defined or NDEBUG is not, otherwise not evaluated (but still
/// compiled, so a variable only an assertion reads is not an unused variable under NDEBUG).
#define IRREGULAR_ASSERT(expr) \
  ((expr) ? static_cast<void>(0) : ::irregular::detail::assertion_failed(#expr, __FILE__, __LINE__))
#else
#define IRREGULAR_ASSERTS_ON 0
#define IRREGULAR_ASSERT(expr) static_cast<void>(sizeof(!(expr)))
#endif
