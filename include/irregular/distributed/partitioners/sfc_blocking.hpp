// The SFC blocking partitioner as a Partitioner policy (baiardi-2001 §3): the chain of leaf
// loads in curve order is cut into p segments of consecutive leaves (the range property); the
// segment starts become the splitters of a SegmentMap.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/distributed/partitioners/blocking_cut.hpp>
#include <irregular/mpi/detail/index_wire.hpp>
#include <irregular/distributed/partitioners/partitioner.hpp>
#include <irregular/distributed/maps/segment_map.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/exception.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <functional>
#include <utility>
#include <vector>

#include <mpi.h>

namespace irregular::partitioner {

/// Segments of the SFC visit. `cut`: optimal (bottleneck and balanced separators equal to
/// sequential NicolPlus on the gathered chain) or greedy (one pass of prefix thresholds).
/// `max_gathered`: the optimal cut's separator windows meet on rank 0 while they hold fewer
/// positions than this (a constant), else they stay distributed (0: always distributed); see
/// blocking_partition.
struct SfcBlocking {
  BlockingCut cut = BlockingCut::optimal;
  std::uint64_t max_gathered = blocking_default_max_gathered;

  template <SpaceFillingCurve C>
  using map_type = SegmentMap<C>;

  template <SpaceFillingCurve C>
  void check(int parts) const {
    if (parts < 1) throw invalid_argument("irregular::partitioner::SfcBlocking: need at least one part");
  }

  /// Precondition: the ranks' chains lie in rank order (a contiguous map, or a sorted build).
  /// Collective over comm.
  template <SpaceFillingCurve C>
  SegmentMap<C> partition(const boost::mpi::communicator& comm, const LeafChain<C>& chain,
                          const SegmentMap<C>* /*current*/) const {
    using I = typename C::index_type;
    const auto cuts = blocking_partition(comm, chain.loads, cut, nullptr, max_gathered);
    // Separators are global leaf positions; the one rank holding leaf s names its start. Every
    // slot is written by at most one rank, so a bitwise-or all_reduce of fixed size (O(p) words,
    // no serialization) replicates them.
    constexpr std::size_t words = (sizeof(I) + 7) / 8;
    const std::uint64_t first = cuts.first, n = chain.leaves.size();
    const std::size_t slots = cuts.separators.size();
    // One buffer, this rank's words then the reduced ones (two vectors here set off a false
    // -Wfree-nonheap-object in g++ 12 once this is inlined).
    std::vector<std::uint64_t> buffer(2 * slots * words, 0);
    const std::span<std::uint64_t> mine(buffer.data(), slots * words), all(buffer.data() + slots * words, slots * words);
    for (std::size_t k = 1; k + 1 < slots; ++k) {
      const auto s = cuts.separators[k];
      if (s >= first && s < first + n) {
        const auto w = detail::IndexWire::from(chain.leaves.starts_[s - first]);
        mine[k * words] = w.lo;
        if constexpr (words > 1) mine[k * words + 1] = w.hi;
      }
    }
    BOOST_MPI_CHECK_RESULT(MPI_Allreduce, (mine.data(), all.data(), static_cast<int>(mine.size()), MPI_UINT64_T,
                                           MPI_BOR, MPI_Comm(comm)));
    const std::uint64_t total = cuts.separators.back();  // the chain's length: no leaf there
    std::vector<I> spl(slots, SegmentMap<C>::domain_end());
    spl[0] = 0;
    for (std::size_t k = 1; k + 1 < slots; ++k)
      if (cuts.separators[k] < total) {
        detail::IndexWire w;
        w.lo = all[k * words];
        if constexpr (words > 1) w.hi = all[k * words + 1];
        spl[k] = w.template as<I>();
      }
    return SegmentMap<C>(std::move(spl));
  }
};

}  // namespace irregular::partitioner
