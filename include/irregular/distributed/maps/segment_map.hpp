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
    int combos = 1;
    for (int d = 0; d < dim; ++d) combos *= 3;
    for (const auto& root : private_roots(rank)) {
      const coord_t n = ipow<coord_t>(static_cast<coord_t>(C::arity), root.level);
      for (int m = 0; m < combos; ++m) {
        Cell<dim> nb = root;
        bool inside = true, self = true;
        for (int d = 0, t = m; d < dim; ++d, t /= 3) {
          const int off = t % 3 - 1;
          if (off == 0) continue;
          self = false;
          if (off < 0) {
            if (nb.anchor[d] > 0)
              --nb.anchor[d];
            else if (per[d])
              nb.anchor[d] = n - 1;
            else
              inside = false;
          } else {
            if (nb.anchor[d] + 1 < n)
              ++nb.anchor[d];
            else if (per[d])
              nb.anchor[d] = 0;
            else
              inside = false;
          }
        }
        if (!self && inside) collect_touching(nb, root, rank, per, out);
      }
    }
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
  /// Do the closed boxes of two cells meet (share at least a corner), with wrap-around on the
  /// periodic axes? Compared at the finer level; 128-bit arithmetic, since arity^max_level may
  /// not fit a signed 64-bit integer.
  static bool touches(const Cell<dim>& a, const Cell<dim>& b,
                      const Periodicity<dim>& per) noexcept {
    __extension__ typedef __int128 wide;
    const int m = std::max(a.level, b.level);
    const wide n = static_cast<wide>(ipow<uint128_t>(static_cast<uint128_t>(C::arity), m));
    const wide fa = static_cast<wide>(ipow<coord_t>(static_cast<coord_t>(C::arity), m - a.level));
    const wide fb = static_cast<wide>(ipow<coord_t>(static_cast<coord_t>(C::arity), m - b.level));
    for (int d = 0; d < dim; ++d) {
      const wide a0 = static_cast<wide>(a.anchor[d]) * fa, b0 = static_cast<wide>(b.anchor[d]) * fb;
      bool meet = false;
      for (int k = per[d] ? -1 : 0; k <= (per[d] ? 1 : 0) && !meet; ++k) {
        const wide s = b0 + k * n;
        meet = s <= a0 + fa && a0 <= s + fb;
      }
      if (!meet) return false;
    }
    return true;
  }

  /// Adds the owners (other than rank) of the parts of `x` that touch `root`.
  void collect_touching(const Cell<dim>& x, const Cell<dim>& root, int rank,
                        const Periodicity<dim>& per, std::vector<int>& out) const {
    const auto ow = owners(x);
    if (ow.size() <= 1 || x.level >= C::max_level) {
      for (int k : ow)
        if (k != rank) out.push_back(k);
      return;
    }
    const int children = ipow<int>(C::arity, dim);
    for (int pos = 0; pos < children; ++pos) {
      Cell<dim> child;
      child.level = x.level + 1;
      for (int d = 0, t = pos; d < dim; ++d, t /= C::arity)
        child.anchor[d] =
            x.anchor[d] * static_cast<coord_t>(C::arity) + static_cast<coord_t>(t % C::arity);
      if (touches(child, root, per)) collect_touching(child, root, rank, per, out);
    }
  }

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
