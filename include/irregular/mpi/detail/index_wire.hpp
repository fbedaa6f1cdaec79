// Curve indices on the wire as two 64-bit halves, so uint128 indices travel through Boost.MPI
// collectives that know no 128-bit type.
#pragma once

#include <cstdint>

namespace irregular::detail {

struct IndexWire {
  std::uint64_t lo = 0, hi = 0;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& lo& hi;
  }

  template <class Index>
  static IndexWire from(Index k) noexcept {
    IndexWire w{static_cast<std::uint64_t>(k), 0};
    if constexpr (sizeof(Index) > 8) w.hi = static_cast<std::uint64_t>(k >> 64);
    return w;
  }
  template <class Index>
  [[nodiscard]] Index as() const noexcept {
    Index k = static_cast<Index>(lo);
    if constexpr (sizeof(Index) > 8) k |= static_cast<Index>(hi) << 64;
    return k;
  }
};

}  // namespace irregular::detail
