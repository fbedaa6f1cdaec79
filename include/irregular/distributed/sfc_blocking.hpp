// The SFC blocking partitioner as a Partitioner policy (baiardi-2001 §3): the chain of leaf
// loads in curve order is cut into p segments of consecutive leaves (the range property); the
// segment starts become the splitters of a SegmentMap.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/distributed/blocking_partitioner.hpp>
#include <irregular/distributed/detail/index_wire.hpp>
#include <irregular/distributed/partitioner.hpp>
#include <irregular/distributed/segment_map.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace irregular::partitioner {

/// Segments of the SFC visit. `cut`: optimal (bottleneck equal to sequential NicolPlus on the
/// gathered chain) or greedy (one pass of prefix thresholds).
struct SfcBlocking {
  BlockingCut cut = BlockingCut::optimal;

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
    const auto cuts = blocking_partition(comm, chain.loads, cut);
    // Separators are global leaf positions; the rank holding leaf s names its start.
    std::uint64_t first = 0, n = chain.leaves.size();
    boost::mpi::scan(comm, n, first, std::plus<std::uint64_t>());
    first -= n;
    std::vector<std::pair<std::uint64_t, detail::IndexWire>> mine;
    for (std::size_t k = 1; k + 1 < cuts.separators.size(); ++k) {
      const auto s = cuts.separators[k];
      if (s >= first && s < first + n) mine.push_back({k, detail::IndexWire::from(chain.leaves.starts_[s - first])});
    }
    std::vector<std::vector<std::pair<std::uint64_t, detail::IndexWire>>> all;
    boost::mpi::all_gather(comm, mine, all);
    std::vector<I> spl(cuts.separators.size(), SegmentMap<C>::domain_end());
    spl[0] = 0;
    for (const auto& v : all)
      for (const auto& [k, w] : v) spl[k] = w.template as<I>();
    return SegmentMap<C>(std::move(spl));
  }
};

}  // namespace irregular::partitioner
