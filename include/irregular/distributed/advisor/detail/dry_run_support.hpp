// The pieces of the advisor's dry run that do not depend on the stencil: the records of a read
// across parts, the owners of many leaves under one map, and the family of a registry name; the
// chain in curve order and the map of a build's shares are the partitioners' (ordered_chain.hpp).
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/partitioners/detail/ordered_chain.hpp>
#include <irregular/distributed/partitioners/registry.hpp>

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

// The chain in curve order for the SFC family, shared with partitioner::ByName.
using irregular::detail::in_rank_order;
using irregular::detail::OrderedChain;
using irregular::detail::shares_map;

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
