// The pieces of the advisor's dry run that do not depend on the stencil: the records of a read
// across parts, the chain in curve order for the SFC family, the map of a build's shares, the
// owners of many leaves under one map, and the family of a registry name.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/htree/sample_sort.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/distributed/partitioners/registry.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/tree/detail/curve_math.hpp>

#include <boost/mpi/communicator.hpp>

#include <compare>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace irregular::advisor {

namespace detail {

/// One read across parts: part `reader` reads leaf `start` (with `values` values) of part `owner`.
template <class I>
struct CrossRead {
  I start;
  std::uint64_t values;
  std::int32_t reader, owner;
};

/// Parts a and b exchange ghosts (one reads a leaf of the other).
struct PartPair {
  std::int32_t a, b;
  friend constexpr auto operator<=>(const PartPair&, const PartPair&) = default;
};

/// The leaves and loads in curve order across the ranks: the chain itself when the leaves lie in
/// rank order, else a sorted copy of (start, level, load) (no element or datum travels), which
/// the SFC family needs (its cuts are prefix sums over the ranks).
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
        comm, recs, keys, irregular::detail::index_end<C>(), [](const Rec& r) { return r.start; },
        tag);
    leaves.reserve(recs.size());
    loads.reserve(recs.size());
    for (const auto& r : recs) {
      leaves.push_back(r.start, r.level, 0);
      loads.push_back(r.load);
    }
  }
};

/// Whether the leaves lie in rank order under `map`: its parts are curve segments.
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

/// The ranks' leaves as they lie, as a SegmentMap (a build's sorted shares before their map).
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

/// owners[i]: the part `map` gives each leaf of `leaves`, one visit of the variant.
template <SpaceFillingCurve C, class Leaves>
void leaf_owners(const AnyOwnershipMap<C>& map, const Leaves& leaves, std::vector<int>& owners) {
  owners.resize(leaves.size());
  std::visit(
      [&](const auto& m) {
        for (std::size_t i = 0; i < leaves.size(); ++i) owners[i] = m.leaf_owner(leaves.cell(i));
      },
      map.variant());
}

/// The family of the index of a policy in ByName's variant, or of a map in AnyOwnershipMap's (the
/// two list the families in the same order).
inline std::string family_name(std::size_t index) {
  switch (index) {
    case 0:
      return "SFC";
    case 1:
      return "rectangular";
    default:
      return "bounded neighbours";
  }
}

/// The family of a registry name, from the policy it stands for.
template <SpaceFillingCurve C>
std::string family_of(const partitioner::ByName& by) {
  return family_name(by.template by_name<C>().index());
}

}  // namespace detail

}  // namespace irregular::advisor
