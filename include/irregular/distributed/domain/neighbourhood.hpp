// Neighbourhood: the answer of IrregularDomain::neighbours(i), the leaves whose space meets the
// stencil cells of a local leaf: local ones by id, remote ones as index ranges with a holder.
#pragma once

#include <irregular/core/index.hpp>

#include <cstddef>
#include <vector>

namespace irregular {

/// The neighbours of one local leaf: local leaf ids and the index ranges held by other ranks.
template <class Index>
struct Neighbourhood {
  /// A range of remote indices and a rank that holds data there.
  struct Remote {
    IndexInterval<Index> interval;  ///< finest-level curve indices of the remote space
    int owner;                      ///< a rank that holds data there
  };
  std::vector<std::size_t> local;  ///< ids of the local leaves met
  std::vector<Remote> remote;      ///< the remote ranges met, sorted by start, then by owner
};

}  // namespace irregular
