// OwnershipMap: the small replicated answer to "which rank owns this space?" (DESIGN.md
// "Ownership map"). Migration, ghost collection and schedules use it, never a partitioner.
#pragma once

#include <irregular/core/cell.hpp>

#include <concepts>
#include <vector>

namespace irregular {

/// A replicated map from space to ranks:
///  - `owner(cell)`: the rank owning the cell, or -1 when the cell is split among ranks;
///  - `owners(cell)`: every rank whose part meets the cell, sorted (the safe approximation that
///    fault prevention uses, baiardi-2001 §4);
///  - `neighbour_ranks(rank)`: ranks whose parts touch that rank's part (faces, edges, corners);
///  - `parts()`: the number of parts (ranks).
template <class M, int D>
concept OwnershipMap = requires(const M& m, const Cell<D>& c, int rank) {
  { m.owner(c) } -> std::convertible_to<int>;
  { m.owners(c) } -> std::same_as<std::vector<int>>;
  { m.neighbour_ranks(rank) } -> std::same_as<std::vector<int>>;
  { m.parts() } -> std::convertible_to<int>;
};

}  // namespace irregular
