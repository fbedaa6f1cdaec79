// OwnershipMap: the small replicated answer to "which rank holds the data of this space?"
// (DESIGN.md "Ownership map"; baiardi-2001 §3–4). Migration, neighbour queries, ghost
// collection and schedules talk to this concept, never to a particular partitioner.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/index.hpp>
#include <irregular/tree/stencil.hpp>

#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>

#include <algorithm>
#include <concepts>
#include <span>
#include <vector>

namespace irregular {

/// A replicated map from curve space to ranks. Its answers name where the data *is*:
///  - `owner(i)`: the rank holding the data at finest curve index i (elements, leaf data);
///  - `leaf_owner(cell)`: the rank holding a leaf with that cell, whole;
///  - `holders(interval)`: every rank that may hold data meeting a curve interval, sorted: the
///    safe approximation fault prevention needs (baiardi-2001 §4); exact where cheap;
///  - `neighbour_ranks(rank, periodic)`: ranks whose parts touch rank's part across a face, edge
///    or corner, across the periodic axes too, sorted, without rank;
///  - `parts()`: the number of parts (ranks);
///  - `splits(cell)`: whether the map's part boundaries cut the cell (a leaf with such a cell
///    cannot be held whole until `hold_whole` is applied);
///  - `hold_whole(cells)`: the same map adjusted so that each of these disjoint cells (leaves
///    that split) is held whole by its leaf_owner, and `owner(i)` agrees with it inside them;
///  - Boost.Serialization (`serialize`), so one rank's map can be replicated to the others;
///  - `contiguous_segments`: true when each part is one curve interval, `segment(rank)` (then
///    cheaper paths apply: range queries clip to segments, the leaf chain is in rank order).
template <class M>
concept OwnershipMap = requires {
  typename M::curve_type;
  typename M::index_type;
  requires SpaceFillingCurve<typename M::curve_type>;
  { M::contiguous_segments } -> std::convertible_to<bool>;
}
&&std::default_initializable<M>&& std::copyable<M>&& requires(
    const M& m, M& mut, typename M::index_type i, const Cell<M::curve_type::dim>& c,
    IndexInterval<typename M::index_type> iv, int rank, Periodicity<M::curve_type::dim> per,
    std::span<const Cell<M::curve_type::dim>> cells, boost::archive::binary_oarchive& oa,
    boost::archive::binary_iarchive& ia) {
  { m.parts() } -> std::same_as<int>;
  { m.owner(i) } -> std::same_as<int>;
  { m.leaf_owner(c) } -> std::same_as<int>;
  { m.holders(iv) } -> std::same_as<std::vector<int>>;
  { m.neighbour_ranks(rank, per) } -> std::same_as<std::vector<int>>;
  { m.splits(c) } -> std::same_as<bool>;
  { m.hold_whole(cells) } -> std::same_as<M>;
  mut.serialize(oa, 0u);
  mut.serialize(ia, 0u);
};

/// Calls f(rank, part) for every holder of `iv` with the part of `iv` it may hold: the
/// intersection with its segment when parts are curve intervals, `iv` itself otherwise.
template <OwnershipMap M, class F>
void for_each_holder(const M& map, IndexInterval<typename M::index_type> iv, F&& f) {
  for (int r : map.holders(iv)) {
    if constexpr (M::contiguous_segments) {
      const auto seg = map.segment(r);
      f(r, IndexInterval<typename M::index_type>{std::max(iv.start, seg.start),
                                                 std::min(iv.end, seg.end)});
    } else {
      f(r, iv);
    }
  }
}

}  // namespace irregular
