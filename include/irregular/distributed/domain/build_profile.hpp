// BuildProfile: where the time of a domain's last build() or remap went, phase by phase.
#pragma once

#include <cstdint>

namespace irregular {

/// Seconds this rank spent in each phase of the last build() (or the remap of rebalance()).
struct BuildProfile {
  double sort = 0;               ///< distributed sort of the elements by curve index
  double leaves = 0;             ///< leaf construction (shared hnode counts reduced once)
  double partition = 0;          ///< the partitioner: leaf chain -> ownership map
  double migration = 0;          ///< moving leaves and elements to their holders
  std::uint64_t sort_bytes = 0;  ///< bytes this rank sent during the sort
};

}  // namespace irregular
