// Partitioner: the policy that turns the leaf chain (cells and loads, each rank its share) and
// the current ownership map into the next map (DESIGN.md "The domain is a composition").
// The domain, the migration and the ghost layer see only the map it produces.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/partitioners/leaf_traffic.hpp>

#include <boost/mpi/communicator.hpp>

#include <concepts>
#include <span>

namespace irregular {

/// This rank's share of the leaf chain: its leaves sorted by start and one load per leaf.
/// With a map whose parts are contiguous curve intervals, the shares lie in rank order, so the
/// ranks' chains concatenated are the SFC visit Sq(v(sf)) of baiardi-2001 §2.
template <SpaceFillingCurve C>
struct LeafChain {
  const LocalLeaves<C>& leaves;   ///< this rank's leaves, sorted by start
  std::span<const double> loads;  ///< one load per leaf
  /// Relative capacity of each part in chain order (kaddoura-ranka §3.1): part k's share of the
  /// load follows capacities[k]. Empty: equal parts. Partitioners whose parts are curve segments
  /// honour it; rebalance() refuses capacities for the others before calling them.
  std::span<const double> capacities{};
  /// What the leaves carry (the domain fills it): for partitioners that weigh communication.
  LeafTraffic<C::dim> traffic{};
};

/// A partitioner policy P for curve C:
///  - `P::map_type<C>`: the OwnershipMap it produces;
///  - `p.check<C>(parts)`: throws irregular::invalid_argument when its options cannot work
///    (an unknown algorithm, a grid too large); called when a domain is constructed;
///  - `p.partition<C>(comm, chain, current)`: the next map, identical on every rank;
///    `current` is the map in force (nullptr on the first partition of a build, whose shares are
///    sorted, and when ByName hands the SFC family a sorted copy of the chain). Collective.
/// The policy is the only door to a new map: the domains never cut the chain themselves.
template <class P, class C>
concept Partitioner = SpaceFillingCurve<C> && std::copy_constructible<P> && requires {
  typename P::template map_type<C>;
} && OwnershipMap<typename P::template map_type<C>> &&
    requires(const P& p, const boost::mpi::communicator& comm, const LeafChain<C>& chain,
             const typename P::template map_type<C>* current, int parts) {
  p.template check<C>(parts);
  {
    p.template partition<C>(comm, chain, current)
    } -> std::same_as<typename P::template map_type<C>>;
};

}  // namespace irregular
