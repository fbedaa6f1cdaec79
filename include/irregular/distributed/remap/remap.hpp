// The remap pipeline: partition -> map -> migrate (baiardi-2001 §3). Any OwnershipMap places
// leaves and elements; `settle_on_map` first adjusts the map so that every leaf is held whole (a
// leaf that a part boundary cuts goes to its leaf_owner), so afterwards all of a leaf's elements
// are on the rank that holds the leaf and owner() names that rank exactly.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/remap/migration.hpp>
#include <irregular/distributed/remap/segment_shift.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/detail/index_wire.hpp>
#include <irregular/mpi/operations.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace irregular {

/// Sends local leaf i to map.leaf_owner(cell_i) (with payload[i]) and element j to
/// map.owner(keys[j]); returns at once, with nothing staged, when nothing needs to move on any
/// rank. Leaves come back sorted by start, elements by key. Collective over comm.
template <OwnershipMap M, class LV, class EV, class KV, class KeyOf>
mpi::MigrationCounters place(const boost::mpi::communicator& comm, const M& map,
                             LocalLeaves<typename M::curve_type>& leaves, LV& payload, EV& elements,
                             KV& keys, KeyOf&& key_of, int tag) {
  std::vector<int> leaf_dest(leaves.size()), elem_dest(keys.size());
  const int me = comm.rank();
  int moving = 0;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    leaf_dest[i] = map.leaf_owner(leaves.cell(i));
    moving |= leaf_dest[i] != me;
  }
  for (std::size_t j = 0; j < keys.size(); ++j) {
    elem_dest[j] = map.owner(keys[j]);
    moving |= elem_dest[j] != me;
  }
  int any = 0;
  boost::mpi::all_reduce(comm, moving, any, boost::mpi::maximum<int>());
  if (!any) {
    irregular::sort_by_key(elements, keys);
    return {};
  }
  return migrate<typename M::curve_type>(comm, leaf_dest, elem_dest, leaves, payload, elements,
                                         keys, std::forward<KeyOf>(key_of),
                                         tag);  // sorts what it returns
}

/// Every rank's leaves that map's part boundaries cut (replicated, in rank order; O(p) for
/// segment maps, the leaves coarser than the grid that meet several rectangles for rectangle
/// maps). Collective over comm.
template <OwnershipMap M>
std::vector<Cell<M::curve_type::dim>> splitting_leaves(
    const boost::mpi::communicator& comm, const M& map,
    const LocalLeaves<typename M::curve_type>& leaves) {
  using C = typename M::curve_type;
  // Each splitting leaf as three words (start's halves, level), gathered raw in rank order.
  std::vector<std::uint64_t> mine;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const auto c = leaves.cell(i);
    if (map.splits(c)) {
      const auto w = detail::IndexWire::from(leaves.starts()[i]);
      mine.insert(mine.end(), {w.lo, w.hi, static_cast<std::uint64_t>(leaves.levels()[i])});
    }
  }
  std::vector<int> counts;
  const auto all = mpi::all_gather_raw(comm, std::span<const std::uint64_t>(mine), counts);
  std::vector<Cell<C::dim>> out;
  for (std::size_t k = 0; k + 2 < all.size(); k += 3) {
    const detail::IndexWire w{all[k], all[k + 1]};
    out.push_back(curve::cell_of_finest<C>(w.template as<typename C::index_type>(),
                                           static_cast<int>(all[k + 2])));
  }
  return out;
}

/// `map` adjusted so that every leaf is held whole, with leaves and elements placed on it;
/// `sent` accumulates what this rank sent. `payload` travels with the leaves (one value each) or
/// is empty (nothing travels; it stays empty). `offsets`, when given, holds every leaf's first
/// element (leaves + 1 values, as ElementStore::offsets) and is kept so. `layout`, when given,
/// tells a segment shift's kept run and arrivals (ShiftLayout::spliced is false after the general
/// path). Contiguous maps whose
/// splitters cut no leaf remap by segment shifts (segment_shift.hpp, O(shipped) per rank); other
/// maps and cut leaves take the general path, the same on every rank. Collective over comm.
template <OwnershipMap M, class LV, class EV, class KV, class KeyOf,
          class OV = std::vector<std::size_t>>
M settle_on_map(const boost::mpi::communicator& comm, const M& map,
                LocalLeaves<typename M::curve_type>& leaves, LV& payload, EV& elements, KV& keys,
                KeyOf&& key_of, int tag, mpi::MigrationCounters& sent, OV* offsets = nullptr,
                ShiftLayout* layout = nullptr) {
  if (layout) *layout = ShiftLayout{};
  if constexpr (M::contiguous_segments) {
    if (auto shifted =
            shift_segments(comm, map, leaves, payload, elements, keys, offsets, tag, layout)) {
      sent += *shifted;
      return map;  // no leaf is cut: holding leaves whole changes nothing
    }
  }
  const auto split = splitting_leaves(comm, map, leaves);
  M fitted = map.hold_whole(std::span<const Cell<M::curve_type::dim>>(split));
  if constexpr (M::contiguous_segments) {
    // The fitted splitters cut no leaf: a segment shift moves only the cut leaves' runs (the
    // general path below would copy every array, as a build's sorted runs would pay).
    if (auto shifted =
            shift_segments(comm, fitted, leaves, payload, elements, keys, offsets, tag, layout)) {
      sent += *shifted;
      return fitted;
    }
  }
  const bool no_payload = payload.empty();
  if (no_payload) payload.assign(leaves.size(), 0.0);
  sent += place(comm, fitted, leaves, payload, elements, keys, std::forward<KeyOf>(key_of), tag);
  if (no_payload) payload.clear();
  if (offsets) {
    offsets->clear();
    [[maybe_unused]] const std::size_t in = detail::run_offsets<typename M::curve_type>(
        leaves.starts(), leaves.levels(), keys, 0, *offsets);
    IRREGULAR_ASSERT(in == keys.size());
    offsets->push_back(keys.size());
  }
  return fitted;
}

}  // namespace irregular
