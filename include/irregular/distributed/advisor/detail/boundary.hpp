// The advisor's walk to the reader leaves that may read across parts under a candidate's map:
// the tree is walked from the root, and every hnode whose stencil reach lies in one part is
// skipped with all its leaves (the dry run, dry_run.hpp, looks only at the leaves it keeps).
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/ghost/collection.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/partitioners/registry.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/stencil.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <variant>
#include <vector>

namespace irregular::advisor::detail {

/// The part holding every index of cell c, or -1 when that is not sure. A cell that no part
/// boundary cuts has one owner unless it strictly contains a whole-held cell, and then it is cut
/// (the held cell split, so does any cell containing it); owner(i) honours the held cells.
template <SpaceFillingCurve C, class Map>
[[nodiscard]] int one_owner(const Map& m, const Cell<C::dim>& c) {
  if (m.splits(c)) return -1;
  const auto iv = curve::hnode_interval<C>(c);
  const int a = m.owner(iv.start);
  return a == m.owner(static_cast<typename C::index_type>(iv.end - 1)) ? a : -1;
}

/// Whether every cell within the stencil's reach of `c` (at c's level) lies whole in c's part:
/// then no leaf inside c reads across parts (a leaf read is inside such a cell, or contains one).
template <Stencil S, SpaceFillingCurve C, class Map>
[[nodiscard]] bool inside_one_part(const Map& m, const Cell<C::dim>& c,
                                   Periodicity<C::dim> periodic) {
  const int part = one_owner<C>(m, c);
  if (part < 0) return false;
  constexpr int r = irregular::detail::reach<S>(), width = 2 * r + 1;
  constexpr std::size_t D = static_cast<std::size_t>(C::dim);
  std::size_t block = 1;
  for (std::size_t d = 0; d < D; ++d) block *= static_cast<std::size_t>(width);
  const auto cells = static_cast<std::int64_t>(irregular::detail::axis_cells<C>(c.level));
  for (std::size_t k = 0; k < block; ++k) {
    Cell<C::dim> nb;
    nb.level = c.level;
    bool inside = true;
    std::size_t t = k;
    for (std::size_t d = 0; d < D; ++d, t /= static_cast<std::size_t>(width)) {
      std::int64_t x = static_cast<std::int64_t>(c.anchor[d]) +
                       static_cast<std::int64_t>(t % static_cast<std::size_t>(width)) - r;
      if (x < 0 || x >= cells) {
        if (!periodic[d]) {
          inside = false;  // no leaf out there
          break;
        }
        x = ((x % cells) + cells) % cells;
      }
      nb.anchor[d] = static_cast<coord_t>(x);
    }
    if (inside && one_owner<C>(m, nb) != part) return false;
  }
  return true;
}

/// The local reader leaves (levels in `readers`) that may read across parts under `map`, into
/// `out` in tree order.
template <Stencil S, SpaceFillingCurve C>
void boundary_leaves(const AnyOwnershipMap<C>& map, const LocalLeaves<C>& leaves,
                     Periodicity<C::dim> periodic, LevelRange readers,
                     std::vector<std::size_t>& out) {
  using I = typename C::index_type;
  out.clear();
  const auto starts = leaves.starts();
  const auto levels = leaves.levels();
  std::size_t children = 1;
  for (int d = 0; d < C::dim; ++d) children *= static_cast<std::size_t>(C::arity);
  struct Node {
    I start;
    int level;
    std::size_t lo, hi;  // its local leaves
  };
  std::visit(
      [&](const auto& m) {
        std::vector<Node> stack{{I{0}, 0, 0, leaves.size()}};
        while (!stack.empty()) {
          const Node nd = stack.back();
          stack.pop_back();
          if (inside_one_part<S, C>(m, irregular::detail::cell_at<C>(nd.start, nd.level), periodic))
            continue;
          if (nd.hi - nd.lo == 1 && starts[nd.lo] == nd.start && levels[nd.lo] == nd.level) {
            if (readers.contains(nd.level)) out.push_back(nd.lo);
            continue;
          }
          const I span = irregular::detail::span_at<C>(nd.level + 1);
          std::size_t a = nd.lo;
          for (std::size_t k = 0; k < children && a < nd.hi; ++k) {
            const I end = nd.start + static_cast<I>(k + 1) * span;
            const auto b = static_cast<std::size_t>(
                std::lower_bound(starts.begin() + static_cast<std::ptrdiff_t>(a),
                                 starts.begin() + static_cast<std::ptrdiff_t>(nd.hi), end) -
                starts.begin());
            if (b > a) stack.push_back({nd.start + static_cast<I>(k) * span, nd.level + 1, a, b});
            a = b;
          }
        }
      },
      map.variant());
}

}  // namespace irregular::advisor::detail
