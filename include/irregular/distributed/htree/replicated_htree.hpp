// The replicated H-Tree (baiardi-2001 §2–3): every hnode on the paths from the root to the roots
// of all ranks' private H-Trees, each leaf of it (a private root) recording its owner. Built from
// the p+1 splitters alone, so every rank holds the same O(p · max_level · arity^dim) hnodes.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/maps/segment_map.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace irregular {

/// The replicated H-Tree (baiardi-2001 §2-3): the hnodes from the root down to every rank's
/// private root, each private root with its owner. Built from a SegmentMap's splitters alone, so
/// every rank holds the same one.
template <SpaceFillingCurve C>
class ReplicatedHTree {
 public:
  /// The curve's index type.
  using index_type = typename C::index_type;
  /// Dimension of the cells.
  static constexpr int dim = C::dim;

  /// One replicated hnode: its space, its curve interval and its owner (-1 when its space is
  /// split among ranks, i.e. it is an internal node of the replicated tree).
  struct Hnode {
    Cell<dim> cell;                      ///< the hnode's cell
    IndexInterval<index_type> interval;  ///< its finest curve indices
    int owner;  ///< the rank whose private root it is, or -1 for an internal hnode
  };

  /// The replicated tree of the segments of `map`.
  explicit ReplicatedHTree(const SegmentMap<C>& map) {
    for (int r = 0; r < map.parts(); ++r)
      for (const auto& root : map.private_roots(r)) {
        leaves_.push_back({root, curve::hnode_interval<C>(root), r});
        for (int l = 0; l < root.level; ++l) {
          const auto a = curve::ancestor_at<C>(root, l);
          internal_.push_back({a, curve::hnode_interval<C>(a), -1});
        }
      }
    // Ancestors repeat across roots: keep each once, in curve order (start, then coarser first).
    auto order = [](const Hnode& a, const Hnode& b) {
      return a.interval.start != b.interval.start ? a.interval.start < b.interval.start
                                                  : a.cell.level < b.cell.level;
    };
    std::sort(internal_.begin(), internal_.end(), order);
    internal_.erase(std::unique(internal_.begin(), internal_.end(),
                                [](const Hnode& a, const Hnode& b) { return a.cell == b.cell; }),
                    internal_.end());
  }

  /// The private roots of all ranks in curve order: they tile the whole domain.
  [[nodiscard]] std::span<const Hnode> leaves() const noexcept { return leaves_; }
  /// The hnodes above the private roots (owner -1), in curve order.
  [[nodiscard]] std::span<const Hnode> internal() const noexcept { return internal_; }
  /// Number of hnodes: private roots plus internal hnodes.
  [[nodiscard]] std::size_t size() const noexcept { return leaves_.size() + internal_.size(); }

  /// The replicated leaf (private root) containing finest index i: O(log size).
  [[nodiscard]] const Hnode& leaf_containing(index_type i) const {
    auto it = std::upper_bound(leaves_.begin(), leaves_.end(), i,
                               [](index_type x, const Hnode& h) { return x < h.interval.start; });
    return *(it - 1);
  }

 private:
  std::vector<Hnode> leaves_, internal_;
};

}  // namespace irregular
