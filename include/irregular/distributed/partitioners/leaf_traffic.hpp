// LeafTraffic: what the leaves of a domain carry when they move or are read as ghosts, filled by
// the domain into every LeafChain, so a partitioner that weighs communication
// (partitioner::Auto) counts the bytes its maps would cost without knowing the domain's types.
#pragma once

#include <irregular/tree/stencil.hpp>

#include <cstddef>
#include <cstdint>

namespace irregular {

/// The bytes of one remap message on each transport, per leaf and per value: a segment shift
/// when the new map's parts are curve segments and the values travel raw, the general migration
/// otherwise (distributed/remap). Each store states its own.
struct RemapWire {
  bool shift = true;                ///< raw values: contiguous maps remap by segment shifts
  std::size_t shift_leaf = 0;       ///< segment shift: bytes per leaf
  std::size_t shift_payload = 0;    ///< segment shift: bytes per leaf of a payload (measured loads)
  std::size_t shift_value = 0;      ///< segment shift: bytes per value
  std::size_t shift_trailer = 0;    ///< segment shift: bytes per message
  std::size_t general_leaf = 0;     ///< general migration: bytes per leaf
  std::size_t general_value = 0;    ///< general migration: bytes per value
  std::size_t general_trailer = 0;  ///< general migration: bytes per message
  bool exact = true;                ///< false when values are serialized (counted at their sizeof)

  /// Bytes of one message carrying `leaves` leaves and `values` values; `segments`: the new map's
  /// parts are curve segments; `payload`: a measured load travels with each leaf.
  [[nodiscard]] constexpr std::uint64_t bytes(bool segments, bool payload, std::uint64_t leaves,
                                              std::uint64_t values) const noexcept {
    if (segments && shift)
      return leaves * (shift_leaf + (payload ? shift_payload : 0)) + values * shift_value +
             shift_trailer;
    return leaves * general_leaf + values * general_value + general_trailer;
  }
};

/// What the leaves carry (value_bytes == 0: unknown; nothing is weighed).
template <int D>
struct LeafTraffic {
  Periodicity<D> periodic{};    ///< axes that wrap around, as the domain's
  bool per_leaf = false;        ///< one value per leaf (cell data), else a leaf's element count
  std::size_t value_bytes = 0;  ///< bytes of one value in a ghost exchange
  RemapWire wire{};             ///< the remap's bytes per message
  /// The loads are measured seconds (load::Measured); they travel with the leaves in a remap.
  bool measured = false;
};

}  // namespace irregular
