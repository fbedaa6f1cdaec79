// SegmentMap: the ownership map of the SFC blocking partitioner, p+1 splitters over the curve
// index space (baiardi-2001 §3, the range property: rank r owns [splitter_r, splitter_{r+1})).
// Replicated state is O(p); owner lookups are binary searches, no communication.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/core/index.hpp>
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>
#include <irregular/distributed/maps/detail/aligned_cover.hpp>
#include <irregular/distributed/maps/detail/touching_ranks.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/tree/stencil.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace irregular {

/// The ownership map of SFC blocking (baiardi-2001 §3, the range property): p+1 splitters over
/// the curve, rank r owns the segment [splitter_r, splitter_{r+1}). O(p) replicated state; owner
/// lookups are binary searches, with no communication.
template <SpaceFillingCurve C>
class SegmentMap {
 public:
  /// The curve whose indices the map answers for.
  using curve_type = C;
  /// The curve's index type.
  using index_type = typename C::index_type;
  /// Dimension of the cells.
  static constexpr int dim = C::dim;
  /// Each part is one curve interval (a segment).
  static constexpr bool contiguous_segments = true;

  /// Finest indices of the whole domain: arity^(dim * max_level).
  static constexpr index_type domain_end() noexcept {
    return ipow<index_type>(static_cast<index_type>(C::arity), C::dim * C::max_level);
  }

  /// Everything on rank 0 of `parts` ranks (the others' segments are empty).
  explicit SegmentMap(int parts = 1)
      : splitters_(static_cast<std::size_t>(parts) + 1, domain_end()) {
    if (parts < 1) throw invalid_argument("irregular::SegmentMap: need at least one part");
    splitters_[0] = 0;
  }

  /// p+1 splitters: 0 = s_0 <= s_1 <= ... <= s_p = domain_end(). Throws irregular::invalid_argument
  /// otherwise.
  explicit SegmentMap(std::vector<index_type> splitters) : splitters_(std::move(splitters)) {
    if (splitters_.size() < 2 || splitters_.front() != 0 || splitters_.back() != domain_end() ||
        !std::is_sorted(splitters_.begin(), splitters_.end()))
      throw invalid_argument(
          "irregular::SegmentMap: splitters must run non-decreasing from 0 to "
          "the domain end, one more than the number of parts");
  }

  /// Number of parts (ranks) p.
  [[nodiscard]] int parts() const noexcept { return static_cast<int>(splitters_.size()) - 1; }
  /// The p+1 splitters, from 0 to domain_end().
  [[nodiscard]] const std::vector<index_type>& splitters() const noexcept { return splitters_; }
  /// The segment of `rank`: [splitter_rank, splitter_rank+1).
  [[nodiscard]] IndexInterval<index_type> segment(int rank) const noexcept {
    return {splitters_[static_cast<std::size_t>(rank)],
            splitters_[static_cast<std::size_t>(rank) + 1]};
  }

  /// Rank whose segment holds finest index i (empty segments never own anything).
  [[nodiscard]] int owner(index_type i) const noexcept {
    const auto it = std::upper_bound(splitters_.begin(), splitters_.end(), i);
    return static_cast<int>(it - splitters_.begin()) - 1;
  }
  /// Owner of a whole cell, or -1 when the cell spans several segments (a replicated hnode).
  [[nodiscard]] int owner(const Cell<dim>& c) const {
    const auto iv = curve::hnode_interval<C>(c);
    const int a = owner(iv.start);
    return owner(iv.end - 1) == a ? a : -1;
  }
  /// Ranks [first, last] whose non-empty segments meet the interval; empty when iv is empty.
  [[nodiscard]] std::vector<int> owners(IndexInterval<index_type> iv) const {
    std::vector<int> r;
    if (iv.start >= iv.end) return r;
    const int first = owner(iv.start), last = owner(iv.end - 1);
    for (int k = first; k <= last; ++k)
      if (splitters_[static_cast<std::size_t>(k)] < splitters_[static_cast<std::size_t>(k) + 1])
        r.push_back(k);
    return r;
  }
  /// Ranks whose non-empty segments meet cell `c`.
  [[nodiscard]] std::vector<int> owners(const Cell<dim>& c) const {
    return owners(curve::hnode_interval<C>(c));
  }

  /// Where a leaf with cell c lives, whole: the owner of its first finest index.
  [[nodiscard]] int leaf_owner(const Cell<dim>& c) const {
    return owner(curve::finest_index<C>(c));
  }
  /// Ranks holding data that meets the interval: exactly the non-empty segments it meets, sorted.
  [[nodiscard]] std::vector<int> holders(IndexInterval<index_type> iv) const { return owners(iv); }
  /// Whether the cell's interval meets more than one non-empty segment (a leaf with this cell
  /// cannot be held whole until hold_whole moves the splitters inside it).
  [[nodiscard]] bool splits(const Cell<dim>& c) const {
    const auto iv = curve::hnode_interval<C>(c);
    // a splitter strictly inside the interval that starts a non-empty segment
    return owner(iv.start) != owner(iv.end - 1);
  }
  /// This map with every splitter strictly inside one of `cells` (disjoint cells) moved back to
  /// that cell's start, so each cell lies in one segment: leaf_owner(c) == owner(i) for i in c.
  /// O(cells · log p) plus the splitters moved.
  [[nodiscard]] SegmentMap hold_whole(std::span<const Cell<dim>> cells) const {
    SegmentMap out = *this;
    auto& s = out.splitters_;
    for (const auto& c : cells) {
      const auto iv = curve::hnode_interval<C>(c);
      // moving splitters down to iv.start keeps them sorted: none lies in (iv.start, moved)
      for (auto it = std::upper_bound(s.begin(), s.end(), iv.start); it != s.end() && *it < iv.end;
           ++it)
        *it = iv.start;
    }
    return out;
  }

  /// The roots of rank's private H-Trees: the maximal aligned intervals inside its segment, in
  /// curve order (at most 2 * max_level * (arity^dim - 1) cells).
  [[nodiscard]] std::vector<Cell<dim>> private_roots(int rank) const {
    std::vector<Cell<dim>> roots;
    detail::aligned_cover<C>(segment(rank), [&](const Cell<dim>& c) { roots.push_back(c); });
    return roots;
  }

  /// Ranks whose segments touch rank's segment across a face, edge or corner, also across the
  /// periodic axes (a part at the face 0 touches a part at the opposite face), sorted, without
  /// rank itself. Each private root's same-level Moore neighbours (wrapped on periodic axes) are
  /// looked up; a neighbour cell split among several ranks is refined, keeping only the
  /// sub-cells that touch the root, so the answer is exact, not a superset.
  [[nodiscard]] std::vector<int> neighbour_ranks(int rank, Periodicity<dim> per = {}) const {
    std::vector<int> out;
    detail::TouchingRanks<C, SegmentMap> touching(*this, rank, Contact::corner, per);
    for (const auto& root : private_roots(rank)) touching(root, [&](int r) { out.push_back(r); });
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  friend bool operator==(const SegmentMap&, const SegmentMap&) = default;

  /// Boost.Serialization: splitters travel as pairs of 64-bit halves (works for uint128 indices).
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    std::uint64_t n = splitters_.size();
    ar& n;
    splitters_.resize(static_cast<std::size_t>(n));
    for (auto& s : splitters_) {
      std::uint64_t lo = static_cast<std::uint64_t>(s), hi = 0;
      if constexpr (sizeof(index_type) > 8) hi = static_cast<std::uint64_t>(s >> 64);
      ar& lo& hi;
      s = static_cast<index_type>(lo);
      if constexpr (sizeof(index_type) > 8) s |= static_cast<index_type>(hi) << 64;
    }
  }

 private:
  std::vector<index_type> splitters_;
};

static_assert(OwnershipMap<SegmentMap<curve::Morton<2>>> &&
                  OwnershipMap<SegmentMap<curve::Morton<3>>> &&
                  OwnershipMap<SegmentMap<curve::Hilbert<2>>> &&
                  OwnershipMap<SegmentMap<curve::Hilbert<3>>> &&
                  OwnershipMap<SegmentMap<curve::Peano<2>>> &&
                  OwnershipMap<SegmentMap<curve::Peano<3>>> &&
                  OwnershipMap<SegmentMap<curve::Morton<2, uint128_t>>>,
              "irregular::SegmentMap must satisfy irregular::OwnershipMap");

}  // namespace irregular
