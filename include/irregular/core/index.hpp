// Curve-index types: 64-bit by default, unsigned __int128 for deeper trees.
// DESIGN.md: every hnode is the aligned curve-index interval [start, end) at the finest level.
#pragma once

#include <cstdint>
#include <type_traits>

namespace irregular {

/// The 128-bit curve index, for trees deeper than 64-bit indices reach (e.g. 3D Hilbert beyond
/// level 21).
__extension__ typedef unsigned __int128 uint128_t;  // __extension__: no -Wpedantic noise

/// Number of value bits of an unsigned index type; std::numeric_limits is not specialised for
/// __int128 in strict ISO mode, so the library keeps its own trait.
template <class Index>
inline constexpr int index_bits = static_cast<int>(sizeof(Index) * 8);

/// The index types a curve may use: 32, 64 or 128-bit unsigned.
template <class Index>
concept CurveIndex = std::is_same_v<Index, std::uint32_t> || std::is_same_v<Index, std::uint64_t> ||
    std::is_same_v<Index, uint128_t>;

/// Half-open interval of curve indices at the finest level: the index set an hnode covers.
template <class Index>
struct IndexInterval {
  Index start{};  ///< first index
  Index end{};    ///< one past the last index
  /// True if `i` lies in [start, end).
  [[nodiscard]] constexpr bool contains(Index i) const noexcept { return start <= i && i < end; }
  /// True if `o` lies inside this interval.
  [[nodiscard]] constexpr bool contains(const IndexInterval& o) const noexcept {
    return start <= o.start && o.end <= end;
  }
  /// True if the two intervals share an index.
  [[nodiscard]] constexpr bool overlaps(const IndexInterval& o) const noexcept {
    return start < o.end && o.start < end;
  }
  /// Number of indices, end - start.
  [[nodiscard]] constexpr Index size() const noexcept { return end - start; }
  /// Same start and end.
  friend constexpr bool operator==(const IndexInterval&, const IndexInterval&) = default;
};

}  // namespace irregular
