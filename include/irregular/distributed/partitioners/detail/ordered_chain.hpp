// The leaf chain in curve order across the ranks, for the SFC family (its cuts are prefix sums
// over the ranks, so the ranks' shares must lie in rank order): whether a map keeps them so, a
// sorted copy of the chain when it does not, and the map of sorted shares. Used by
// partitioner::ByName and by the advisor's dry runs.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/htree/sample_sort.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/tree/detail/curve_math.hpp>

#include <boost/mpi/communicator.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace irregular::detail {

/// The tag of OrderedChain's exchange when a partitioner sorts (the caller's comm; next to
/// window_cut's scan_tag and scan_tag + 1).
inline constexpr int ordered_chain_tag = 0x1c09;

/// The leaves and loads in curve order across the ranks: a sorted copy of (start, level, load)
/// (no element or datum travels; counts are 0). Each rank ends with a contiguous run of the curve.
/// Collective over comm; messages carry `tag`.
template <SpaceFillingCurve C>
struct OrderedChain {
  struct Rec {
    typename C::index_type start;
    double load;
    std::uint8_t level;
  };
  LocalLeaves<C> leaves;
  std::vector<double> loads;

  OrderedChain(const boost::mpi::communicator& comm, const LocalLeaves<C>& from,
               std::span<const double> from_loads, int tag) {
    using I = typename C::index_type;
    std::vector<Rec> recs(from.size());
    std::vector<I> keys(from.size());
    for (std::size_t i = 0; i < from.size(); ++i) {
      recs[i] = {from.starts()[i], from_loads[i], from.levels()[i]};
      keys[i] = from.starts()[i];
    }
    (void)sample_sort(
        comm, recs, keys, index_end<C>(), [](const Rec& r) { return r.start; }, tag);
    leaves.reserve(recs.size());
    loads.reserve(recs.size());
    for (const auto& r : recs) {
      leaves.push_back(r.start, r.level, 0);
      loads.push_back(r.load);
    }
  }
};

/// Whether the leaves lie in rank order under `map` (nullptr: a sorted build before its map):
/// its parts are curve segments. A function of the replicated map: the same on every rank.
template <OwnershipMap M>
bool in_rank_order(const M* map) {
  if (map == nullptr) return true;
  if constexpr (M::contiguous_segments)
    return true;
  else if constexpr (requires { map->template get_if<SegmentMap<typename M::curve_type>>(); })
    return map->template get_if<SegmentMap<typename M::curve_type>>() != nullptr;
  else
    return false;
}

/// The ranks' leaves as they lie, as a SegmentMap (sorted shares in rank order before their map).
/// Collective over comm.
template <SpaceFillingCurve C>
SegmentMap<C> shares_map(const boost::mpi::communicator& comm, const LocalLeaves<C>& leaves) {
  using I = typename C::index_type;
  const auto end = SegmentMap<C>::domain_end();
  const I first = leaves.size() ? leaves.starts()[0] : end;
  std::vector<int> counts;
  auto firsts = mpi::all_gather_raw(comm, std::span<const I>(&first, 1), counts);
  std::vector<I> spl(firsts.size() + 1, end);
  for (std::size_t r = firsts.size(); r-- > 0;)  // an empty rank starts where the next does
    spl[r] = firsts[r] == end ? spl[r + 1] : firsts[r];
  spl[0] = 0;
  return SegmentMap<C>(std::move(spl));
}

}  // namespace irregular::detail
