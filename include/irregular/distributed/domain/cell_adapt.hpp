// The map around a change of a CellDomain's tree (adapt, balance): before an adapt, the cut
// families it merges are gathered whole; after adapt or balance, the map is made to hold every
// new leaf where it is, as a remap leaves it (baiardi-2001 §3: the map follows the tree).
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/distributed/domain/cell_store.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/distributed/remap/remap.hpp>
#include <irregular/tree/detail/adapt.hpp>
#include <irregular/tree/detail/curve_math.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/operations.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace irregular::detail {

/// Families that a part boundary cuts and that an adapt with `marks` merges move whole to one
/// rank (the map holds their parents whole), so the adapt merges them locally; families whose
/// marks the adapt ignores stay where they are. The marks travel with their leaves. Returns the
/// state before, when anything moved, for the adapt to restore if it fails. Collective.
template <class Core>
std::optional<typename Core::Saved> hold_families(Core& core, std::vector<Mark>& marks) {
  using C = typename Core::curve_type;
  const auto cells = merged_cut_families<C>(core.comm_.get(), core.map_, core.leaves_.starts(),
                                            core.leaves_.levels(), std::span<const Mark>(marks),
                                            Core::tag_families);
  if (cells.empty()) return std::nullopt;
  auto saved = core.snapshot();
  std::vector<double> payload(core.leaves_.size());
  for (std::size_t i = 0; i < core.leaves_.size(); ++i) payload[i] = static_cast<double>(marks[i]);
  core.migration_ = {};
  core.map_ =
      core.store_.move(core.comm_.get(), core.map_.hold_whole(std::span<const Cell<C::dim>>(cells)),
                       core.leaves_, payload, Core::tag_families, core.migration_, false, nullptr);
  core.finish_counters();
  marks.resize(core.leaves_.size());
  for (std::size_t i = 0; i < core.leaves_.size(); ++i)
    marks[i] = static_cast<Mark>(static_cast<int>(payload[i]));
  return saved;
}

/// What a change of the tree leaves stale in the map (bits, agreed by every rank).
enum TreeChange : int {
  whole_held_stale = 1,  ///< a leaf the map splits was made or removed: its list changes
  leaves_misplaced = 2,  ///< a new leaf belongs to another rank (a held-whole leaf refined)
};

/// Compares the leaves before (core.leaves_) and after a change (`next`, both in curve order):
/// only the leaves of one and not the other matter, since the map held every old leaf where it
/// was. Segment maps never go stale (a local family's parent and a leaf's children lie in its
/// segment), so they agree on 0 without communication. Collective over comm.
template <class Core>
int tree_change(const Core& core, const LocalLeaves<typename Core::curve_type>& next) {
  using C = typename Core::curve_type;
  const auto& map = core.map_;
  if constexpr (Core::segments) {
    return 0;
  } else {
    if constexpr (requires { map.template get_if<SegmentMap<C>>(); })
      if (map.template get_if<SegmentMap<C>>()) return 0;  // replicated: the same everywhere
    const auto os = core.leaves_.starts(), ns = next.starts();
    const auto ol = core.leaves_.levels(), nl = next.levels();
    const int me = core.comm_.rank();
    int here = 0;
    const auto removed = [&](std::size_t i) {
      if (map.splits(cell_at<C>(os[i], ol[i]))) here |= whole_held_stale;
    };
    const auto made = [&](std::size_t j) {
      const auto c = cell_at<C>(ns[j], nl[j]);
      if (map.splits(c)) here |= whole_held_stale;
      if (map.leaf_owner(c) != me) here |= leaves_misplaced;
    };
    for (std::size_t i = 0, j = 0; i < os.size() || j < ns.size();) {
      if (j == ns.size() || (i < os.size() && os[i] < ns[j])) {
        removed(i++);
      } else if (i == os.size() || ns[j] < os[i]) {
        made(j++);
      } else {  // the same start: the same leaf, or one refined or merged in place
        if (ol[i] != nl[j]) {
          removed(i);
          made(j);
        }
        ++i;
        ++j;
      }
    }
    int any = 0;
    boost::mpi::all_reduce(core.comm_.get(), here, any, boost::mpi::bitwise_or<int>());
    return any;
  }
}

/// Whether placing the changed tree may fail after data moved: then the caller keeps a snapshot.
template <class Core>
bool placing_can_fail(int change) {
  return (change & leaves_misplaced) && Core::remap_can_fail;
}

/// After the new leaves are committed: leaves that belong elsewhere move there, and the map holds
/// whole exactly the leaves it splits (the list a remap would make), the same on every rank.
/// `counted`: this call already moved leaves, whose counters the move adds to. Collective.
template <class Core>
void place_changed(Core& core, int change, bool counted) {
  using C = typename Core::curve_type;
  if (change & leaves_misplaced) {
    if (!counted) core.migration_ = {};
    core.map_ = core.settle_on(core.map_);
    core.finish_counters();
  } else if (change & whole_held_stale) {
    const auto split = splitting_leaves(core.comm_.get(), core.map_, core.leaves_);
    core.map_ = core.map_.hold_whole(std::span<const Cell<C::dim>>(split));
  }
}

}  // namespace irregular::detail
