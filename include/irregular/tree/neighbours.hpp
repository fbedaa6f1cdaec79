// Neighbour search on linear H-Trees: the leaves whose space meets the stencil cells of a leaf,
// at the same, coarser or finer levels, optionally periodic (baiardi-collecting-remote-data §2).
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/index.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/detail/linear_tree.hpp>
#include <irregular/tree/stencil.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace irregular {

/// A sorted sequence of disjoint leaves (an HTree, a CellTree, or a rank's local leaves):
/// `starts()` and `levels()` as spans, with the curve as `curve_type`.
template <class T>
concept LeafSequence = requires(const T& t) {
  typename T::curve_type;
  { t.starts() } -> std::convertible_to<std::span<const typename T::curve_type::index_type>>;
  { t.levels() } -> std::convertible_to<std::span<const std::uint8_t>>;
};

/// Calls emit(cell) for each stencil cell of `c` at c's level: c.anchor + offset. Along a
/// periodic axis coordinates wrap around; along the others cells outside the domain are dropped.
/// With periodic axes shorter than the stencil (coarse levels) a cell can repeat or equal `c`.
template <SpaceFillingCurve C, Stencil S, class Emit>
void stencil_cells(const Cell<C::dim>& c, Periodicity<C::dim> per, Emit&& emit) {
  static_assert(S::dim == C::dim, "irregular::stencil_cells: stencil and curve dimensions differ");
  const auto n = static_cast<std::int64_t>(detail::axis_cells<C>(c.level));
  for (const auto& o : S::offsets) {
    Cell<C::dim> nb;
    nb.level = c.level;
    bool inside = true;
    for (std::size_t d = 0; d < static_cast<std::size_t>(C::dim); ++d) {
      std::int64_t x = static_cast<std::int64_t>(c.anchor[d]) + o[d];
      if (x < 0 || x >= n) {
        if (!per[d]) {
          inside = false;
          break;
        }
        x %= n;
        if (x < 0) x += n;
      }
      nb.anchor[d] = static_cast<coord_t>(x);
    }
    if (inside) emit(nb);
  }
}

/// Appends to `out` (cleared first) the indices of the leaves of a sorted disjoint sequence whose
/// space meets a stencil cell of `c`, restricted to the levels the stencil reaches
/// (S::same_level / coarser / finer relative to c.level); sorted, unique, without leaves that
/// overlap `c` itself. The sequence need not tile the domain (a rank's local leaves).
template <SpaceFillingCurve C, Stencil S>
void neighbours_of_cell(std::span<const typename C::index_type> starts,
                        std::span<const std::uint8_t> levels, const Cell<C::dim>& c,
                        Periodicity<C::dim> per, std::vector<std::size_t>& out) {
  out.clear();
  const auto self = detail::interval_of<C>(c);
  stencil_cells<C, S>(c, per, [&](const Cell<C::dim>& nb) {
    const auto [f, l] =
        detail::leaves_meeting_sparse<C>(starts, levels, detail::interval_of<C>(nb));
    for (std::size_t i = f; i < l; ++i) {
      const int lv = levels[i];
      if (lv == c.level ? !S::same_level : (lv < c.level ? !S::coarser : !S::finer)) continue;
      const IndexInterval<typename C::index_type> iv{starts[i], starts[i] + detail::span_at<C>(lv)};
      if (iv.overlaps(self)) continue;
      out.push_back(i);
    }
  });
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

/// Calls emit(IndexInterval) for each part of a stencil cell of `c` that no leaf of the sorted
/// disjoint sequence covers: the index ranges another rank must provide. Parts are reported per
/// stencil cell (in stencil order), so overlapping stencil cells may report a range twice.
template <SpaceFillingCurve C, Stencil S, class Emit>
void uncovered_stencil_intervals(std::span<const typename C::index_type> starts,
                                 std::span<const std::uint8_t> levels, const Cell<C::dim>& c,
                                 Periodicity<C::dim> per, Emit&& emit) {
  using I = typename C::index_type;
  stencil_cells<C, S>(c, per, [&](const Cell<C::dim>& nb) {
    const auto iv = detail::interval_of<C>(nb);
    const auto [f, l] = detail::leaves_meeting_sparse<C>(starts, levels, iv);
    I pos = iv.start;
    for (std::size_t i = f; i < l; ++i) {
      if (starts[i] > pos) emit(IndexInterval<I>{pos, starts[i]});
      pos = std::max(pos, starts[i] + detail::span_at<C>(levels[i]));
    }
    if (pos < iv.end) emit(IndexInterval<I>{pos, iv.end});
  });
}

/// Neighbours of leaf `leaf` of a leaf sequence (HTree, CellTree): sorted unique leaf ids,
/// excluding the leaf itself, written to `out` (no allocation once `out` has grown).
template <Stencil S, LeafSequence T>
void neighbours(const T& tree, std::size_t leaf, std::vector<std::size_t>& out,
                Periodicity<T::curve_type::dim> per = {}) {
  using C = typename T::curve_type;
  const std::span<const typename C::index_type> starts = tree.starts();
  const std::span<const std::uint8_t> levels = tree.levels();
  neighbours_of_cell<C, S>(starts, levels, detail::cell_at<C>(starts[leaf], levels[leaf]), per,
                           out);
}

/// Neighbours of leaf `leaf` as a new vector (sorted unique leaf ids, not the leaf itself).
template <Stencil S, LeafSequence T>
[[nodiscard]] std::vector<std::size_t> neighbours(const T& tree, std::size_t leaf,
                                                  Periodicity<T::curve_type::dim> per = {}) {
  std::vector<std::size_t> out;
  neighbours<S>(tree, leaf, out, per);
  return out;
}

/// The same, naming the curve too: neighbours<Curve, Stencil>(tree, leaf, per).
template <SpaceFillingCurve C, Stencil S, LeafSequence T>
requires std::same_as<typename T::curve_type, C>
[[nodiscard]] std::vector<std::size_t> neighbours(const T& tree, std::size_t leaf,
                                                  Periodicity<C::dim> per = {}) {
  return neighbours<S>(tree, leaf, per);
}

}  // namespace irregular
