// The SFC blocking partitioner as a Partitioner policy (baiardi-2001 §3): the chain of leaf
// loads in curve order is cut into p segments of consecutive leaves (the range property); the
// segment starts become the splitters of a SegmentMap.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/distributed/partitioners/blocking_cut.hpp>
#include <irregular/distributed/partitioners/capacity_cut.hpp>
#include <irregular/distributed/partitioners/detail/cut_support.hpp>
#include <irregular/distributed/partitioners/detail/ordered_chain.hpp>
#include <irregular/distributed/partitioners/partitioner.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace irregular::partitioner {

/// Segments of the SFC visit. `cut`: optimal (bottleneck and balanced separators equal to
/// sequential NicolPlus on the gathered chain) or greedy (one pass of prefix thresholds).
/// `max_gathered`: the optimal cut's separator windows meet on rank 0 while they hold fewer
/// positions than this (a constant), else they stay distributed (0: always distributed); see
/// blocking_partition.
struct SfcBlocking {
  BlockingCut cut = BlockingCut::optimal;  ///< optimal or greedy cut
  std::uint64_t max_gathered =
      blocking_default_max_gathered;  ///< optimal cut: gather the windows on rank 0 below this many
                                      ///< positions.

  /// The map it produces.
  template <SpaceFillingCurve C>
  using map_type = SegmentMap<C>;

  /// Throws irregular::invalid_argument for fewer than one part.
  template <SpaceFillingCurve C>
  void check(int parts) const {
    if (parts < 1)
      throw invalid_argument("irregular::partitioner::SfcBlocking: need at least one part");
  }

  /// Precondition: the ranks' chains lie in rank order: `current` is the segment map in force,
  /// or nullptr for sorted shares without a map (a build, or a chain ByName sorted).
  /// Collective over comm.
  /// With capacities, the optimal capacity-proportional cut (capacity_cut.hpp).
  template <SpaceFillingCurve C>
  SegmentMap<C> partition(const boost::mpi::communicator& comm, const LeafChain<C>& chain,
                          const SegmentMap<C>* current) const {
    using I = typename C::index_type;
    if (!chain.capacities.empty()) {
      // capacity_cut names a cut at the end of a rank's share by the next share's start.
      const SegmentMap<C> shares =
          current ? *current : irregular::detail::shares_map(comm, chain.leaves);
      return capacity_cut(comm, shares, chain.leaves, chain.loads, chain.capacities).map();
    }
    const auto cuts = blocking_partition(comm, chain.loads, cut, nullptr, max_gathered);
    // Separators are global leaf positions; the one rank holding leaf s names its start.
    const std::uint64_t first = cuts.first, n = chain.leaves.size();
    const std::size_t slots = cuts.separators.size();
    irregular::detail::SplitterSlots<I, false> named(slots);
    for (std::size_t k = 1; k + 1 < slots; ++k) {
      const auto s = cuts.separators[k];
      if (s >= first && s < first + n) named.claim(k, chain.leaves.starts()[s - first]);
    }
    named.replicate(comm);
    const std::uint64_t total = cuts.separators.back();  // the chain's length: no leaf there
    std::vector<I> spl(slots, SegmentMap<C>::domain_end());
    spl[0] = 0;
    for (std::size_t k = 1; k + 1 < slots; ++k)
      if (cuts.separators[k] < total) spl[k] = named.start(k);
    return SegmentMap<C>(std::move(spl));
  }
};

}  // namespace irregular::partitioner
