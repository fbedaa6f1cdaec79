// Checksums of a checkpoint: XXH3-64 of every fixed-size block of a section, and of a section's
// table of block checksums. Header-only: xxHash is compiled inline (XXH_INLINE_ALL).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

namespace irregular::checkpoint {

/// XXH3-64 of a byte range.
[[nodiscard]] inline std::uint64_t checksum(std::span<const std::byte> bytes) noexcept {
  return XXH3_64bits(bytes.data(), bytes.size());
}

/// XXH3-64 of bytes that arrive in pieces (a block that spans several ranks' data), equal to
/// checksum() of their concatenation.
class StreamingChecksum {
 public:
  StreamingChecksum() noexcept { XXH3_64bits_reset(&state_); }
  /// Appends the next piece.
  void add(std::span<const std::byte> bytes) noexcept {
    XXH3_64bits_update(&state_, bytes.data(), bytes.size());
  }
  /// XXH3-64 of every byte added so far.
  [[nodiscard]] std::uint64_t value() const noexcept { return XXH3_64bits_digest(&state_); }

 private:
  XXH3_state_t state_;
};

/// The number of checksum blocks of a section of `bytes` bytes.
[[nodiscard]] constexpr std::uint64_t block_count(std::uint64_t bytes,
                                                  std::uint64_t block_bytes) noexcept {
  return (bytes + block_bytes - 1) / block_bytes;
}

}  // namespace irregular::checkpoint
