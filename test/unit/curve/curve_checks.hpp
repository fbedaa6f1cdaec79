// Generic oracles for the curve tests: exhaustive round trip, refinement/state-machine
// consistency, contiguity of descendants, and face-neighbour continuity.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <irregular/core/cell.hpp>
#include <irregular/curve/interval.hpp>
#include <vector>

namespace curve_test {

using irregular::Cell;
using irregular::coord_t;

template <int D>
Cell<D> cell_from_linear(std::uint64_t lin, int arity, int level) {
  Cell<D> c;
  c.level = level;
  const coord_t n = irregular::ipow<coord_t>(static_cast<coord_t>(arity), level);
  for (int d = 0; d < D; ++d) {
    c.anchor[d] = lin % n;
    lin /= n;
  }
  return c;
}

/// Every cell at `level`: index is a bijection onto [0, arity^(D*level)) and cell() inverts it.
template <class C>
void check_round_trip(int level) {
  constexpr int D = C::dim;
  const std::uint64_t total = irregular::ipow<std::uint64_t>(C::arity, D * level);
  std::vector<char> seen(total, 0);
  for (std::uint64_t lin = 0; lin < total; ++lin) {
    const auto c = cell_from_linear<D>(lin, C::arity, level);
    const auto i = C::index(c);
    CAPTURE(level, lin);
    REQUIRE(static_cast<std::uint64_t>(i) < total);
    REQUIRE(seen[static_cast<std::size_t>(i)] == 0);
    seen[static_cast<std::size_t>(i)] = 1;
    REQUIRE(C::cell(i, level) == c);
  }
}

/// Consecutive indices are face neighbours: exactly one coordinate differs, by one.
template <class C>
void check_continuity(int level) {
  constexpr int D = C::dim;
  const std::uint64_t total = irregular::ipow<std::uint64_t>(C::arity, D * level);
  auto prev = C::cell(0, level);
  for (std::uint64_t i = 1; i < total; ++i) {
    const auto c = C::cell(static_cast<typename C::index_type>(i), level);
    int changed = 0;
    coord_t dist = 0;
    for (int d = 0; d < D; ++d) {
      if (c.anchor[d] != prev.anchor[d]) {
        ++changed;
        dist += c.anchor[d] > prev.anchor[d] ? c.anchor[d] - prev.anchor[d]
                                             : prev.anchor[d] - c.anchor[d];
      }
    }
    CAPTURE(level, i);
    REQUIRE(changed == 1);
    REQUIRE(dist == 1);
    prev = c;
  }
}

/// The state machine: walking from the root, the k-th child in curve order has index
/// index(parent)*arity^D + k, children come in increasing index order, and every node's
/// descendants at `depth` form one contiguous interval equal to hnode_interval's scaled range.
template <class C>
void check_traversal(int depth) {
  constexpr int D = C::dim;
  using I = typename C::index_type;
  const int nchild = irregular::ipow<int>(C::arity, D);
  struct Item {
    Cell<D> cell;
    typename C::state_type state;
  };
  std::vector<Item> level_items{{Cell<D>{}, C::root_state()}};
  for (int l = 0; l < depth; ++l) {
    std::vector<Item> next;
    for (const auto& it : level_items) {
      const I pi = C::index(it.cell);
      REQUIRE(irregular::curve::state_of<C>(it.cell) == it.state);
      I prev_index = 0;
      std::vector<char> pos_seen(static_cast<std::size_t>(nchild), 0);
      for (int k = 0; k < nchild; ++k) {
        const int pos = C::child_position(it.state, k);
        REQUIRE(pos >= 0);
        REQUIRE(pos < nchild);
        REQUIRE(pos_seen[static_cast<std::size_t>(pos)] == 0);
        pos_seen[static_cast<std::size_t>(pos)] = 1;
        const auto child = irregular::curve::child_in_curve_order<C>(it.cell, it.state, k);
        const I ci = C::index(child);
        CAPTURE(l, k, pos);
        REQUIRE(ci == pi * static_cast<I>(nchild) + static_cast<I>(k));
        if (k > 0) REQUIRE(ci > prev_index);
        prev_index = ci;
        REQUIRE(irregular::curve::ancestor_at<C>(child, l) == it.cell);
        // The child's finest interval lies inside the parent's.
        const auto pint = irregular::curve::hnode_interval<C>(it.cell);
        const auto cint = irregular::curve::hnode_interval<C>(child);
        REQUIRE(pint.contains(cint));
        REQUIRE(cint.start == irregular::curve::finest_index<C>(child));
        next.push_back({child, C::child_state(it.state, k)});
      }
    }
    level_items = std::move(next);
  }
  // Contiguity: for every ancestor level a, the leaves under each level-a cell have indices
  // forming exactly [index(anc)*n^(depth-a), (index(anc)+1)*n^(depth-a)).
  for (int a = 0; a <= depth; ++a) {
    const I w = irregular::ipow<I>(static_cast<I>(nchild), depth - a);
    for (const auto& it : level_items) {
      const auto anc = irregular::curve::ancestor_at<C>(it.cell, a);
      const I i = C::index(it.cell);
      const I ai = C::index(anc);
      REQUIRE(i >= ai * w);
      REQUIRE(i < (ai + 1) * w);
      // cell_of_finest agrees with ancestor_at.
      const I fi = irregular::curve::finest_index<C>(it.cell);
      REQUIRE(irregular::curve::cell_of_finest<C>(fi, a) == anc);
    }
  }
}

}  // namespace curve_test
