// The coarse leaves a grid map (RectangleMap, RowMap) holds whole across its parts: a list
// sorted by curve interval and disjoint, built, looked up and loaded the same way for both maps.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/curve/interval.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace irregular::detail {

/// A cell coarser than the grid, spanning several parts, held whole by `owner` (the map's
/// leaf_owner of the cell: the owner of its first grid cell).
template <SpaceFillingCurve C>
struct WholeHeld {
  Cell<C::dim> cell;
  IndexInterval<typename C::index_type> interval;
  int owner = 0;
  friend bool operator==(const WholeHeld&, const WholeHeld&) = default;
};

template <SpaceFillingCurve C>
[[nodiscard]] bool disjoint_in_order(const std::vector<WholeHeld<C>>& held) {
  return std::adjacent_find(held.begin(), held.end(),
                            [](const WholeHeld<C>& a, const WholeHeld<C>& b) {
                              return a.interval.end > b.interval.start;
                            }) == held.end();
}

/// The cells of `cells` (disjoint leaves) that `map` splits, each held by map.leaf_owner,
/// sorted by curve interval.
template <SpaceFillingCurve C, class Map>
[[nodiscard]] std::vector<WholeHeld<C>> whole_held_of(const Map& map,
                                                      std::span<const Cell<C::dim>> cells) {
  std::vector<WholeHeld<C>> out;
  for (const auto& c : cells)
    if (map.splits(c))
      out.push_back(WholeHeld<C>{c, curve::hnode_interval<C>(c), map.leaf_owner(c)});
  std::sort(out.begin(), out.end(), [](const WholeHeld<C>& a, const WholeHeld<C>& b) {
    return a.interval.start < b.interval.start;
  });
  IRREGULAR_ASSERT(disjoint_in_order(out));
  return out;
}

/// The whole-held cell containing all of `iv`, or nullptr. O(log E).
template <SpaceFillingCurve C>
[[nodiscard]] const WholeHeld<C>* held_containing(const std::vector<WholeHeld<C>>& held,
                                                  IndexInterval<typename C::index_type> iv) {
  auto it = std::upper_bound(
      held.begin(), held.end(), iv.start,
      [](typename C::index_type x, const WholeHeld<C>& e) { return x < e.interval.start; });
  if (it == held.begin()) return nullptr;
  --it;
  return iv.end <= it->interval.end ? &*it : nullptr;
}

/// Boost.Serialization of the list: its length, then each cell as level and anchor.
template <SpaceFillingCurve C, class Archive>
void save_whole_held(Archive& ar, const std::vector<WholeHeld<C>>& held) {
  std::uint64_t count = held.size();
  ar& count;
  for (const auto& e : held) {
    std::int32_t l = e.cell.level;
    ar& l;
    for (int d = 0; d < C::dim; ++d) {
      std::uint64_t x = e.cell.anchor[d];
      ar& x;
    }
  }
}

/// The list save_whole_held stored, for `map`: each cell must be valid and split by the map,
/// and together in order and disjoint. Throws irregular::parse_error naming `who` otherwise.
template <SpaceFillingCurve C, class Archive, class Map>
[[nodiscard]] std::vector<WholeHeld<C>> load_whole_held(Archive& ar, const Map& map,
                                                        const char* who) {
  std::uint64_t count = 0;
  ar& count;
  std::vector<WholeHeld<C>> held;
  for (std::uint64_t k = 0; k < count; ++k) {
    Cell<C::dim> c;
    std::int32_t l = 0;
    ar& l;
    c.level = l;
    for (int d = 0; d < C::dim; ++d) {
      std::uint64_t x = 0;
      ar& x;
      c.anchor[d] = static_cast<coord_t>(x);
    }
    (void)curve::checked_index<C>(c);
    if (!map.splits(c))
      throw parse_error(std::string(who) + ": a stored whole-held cell does not split");
    held.push_back(WholeHeld<C>{c, curve::hnode_interval<C>(c), map.leaf_owner(c)});
  }
  if (!disjoint_in_order(held))
    throw parse_error(std::string(who) + ": stored whole-held cells overlap or are out of order");
  return held;
}

}  // namespace irregular::detail
