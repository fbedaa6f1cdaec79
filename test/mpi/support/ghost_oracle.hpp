// The ghost layer's oracle, shared by the ghost and the sequence tests: brute force over the
// gathered tree. A leaf reads another when one of its stencil cells meets the other's space at a
// level the stencil reaches (periodic axes wrapped); the contact filters keep touching leaves.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/distributed/ghost/layer.hpp>
#include <irregular/tree/contact.hpp>
#include <irregular/tree/stencil.hpp>

#include "domain_support.hpp"
#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

namespace ghost_oracle {

namespace irr = irregular;
using namespace domain_support;

using Ghost = std::tuple<std::uint64_t, int, int>;  // start, level, owner

// ---- the oracle: brute force over the gathered tree --------------------------------------------

template <class C>
std::array<std::uint64_t, C::dim> lo_of(std::uint64_t start, int level) {
  const auto c =
      C::cell(static_cast<typename C::index_type>(start) /
                  irr::ipow<typename C::index_type>(C::arity, C::dim * (C::max_level - level)),
              level);
  const std::uint64_t side = irr::ipow<std::uint64_t>(C::arity, C::max_level - level);
  std::array<std::uint64_t, C::dim> lo{};
  for (int d = 0; d < C::dim; ++d) lo[d] = c.anchor[d] * side;
  return lo;
}

// The side of a cell at `level`, in finest cells.
template <class C>
std::int64_t side_of(int level) {
  return static_cast<std::int64_t>(irr::ipow<std::uint64_t>(C::arity, C::max_level - level));
}

// Closed boxes meet after shifting b by a period on periodic axes? Returns the largest number of
// axes with positive overlap over the shifts where the closed boxes meet, or -1.
template <class C>
int touch_dimension(std::uint64_t sa, int la, std::uint64_t sb, int lb,
                    irr::Periodicity<C::dim> per) {
  const auto a = lo_of<C>(sa, la), b = lo_of<C>(sb, lb);
  const std::int64_t wa = side_of<C>(la), wb = side_of<C>(lb), n = side_of<C>(0);
  int best = -1;
  int shifts = 1;
  for (int d = 0; d < C::dim; ++d) shifts *= 3;
  for (int s = 0; s < shifts; ++s) {
    int code = s, positive = 0;
    bool meet = true;
    for (int d = 0; d < C::dim; ++d) {
      const int k = code % 3 - 1;
      code /= 3;
      if (k != 0 && !per[d]) {
        meet = false;
        break;
      }
      const std::int64_t a0 = static_cast<std::int64_t>(a[d]),
                         b0 = static_cast<std::int64_t>(b[d]) + k * n;
      const std::int64_t lo = std::max(a0, b0), hi = std::min(a0 + wa, b0 + wb);
      if (hi < lo) {
        meet = false;
        break;
      }
      positive += hi > lo;
    }
    if (meet) best = std::max(best, positive);
  }
  return best == C::dim ? -1 : best;
}

// Does a leaf at level la read a leaf at level lb under S? Its stencil cells (anchor + offset at
// la, wrapped or dropped) meet b's space, and S reaches b's level.
template <class C, class S>
bool reads(std::uint64_t sa, int la, std::uint64_t sb, int lb, irr::Periodicity<C::dim> per) {
  if (lb == la ? !S::same_level : (lb < la ? !S::coarser : !S::finer)) return false;
  const auto a = lo_of<C>(sa, la), b = lo_of<C>(sb, lb);
  const std::int64_t wa = side_of<C>(la), wb = side_of<C>(lb), n = side_of<C>(0);
  for (const auto& o : S::offsets) {
    bool meets = true;
    for (int d = 0; d < C::dim && meets; ++d) {
      std::int64_t x = static_cast<std::int64_t>(a[d]) + o[d] * wa;
      if (x < 0 || x >= n) {
        if (!per[d]) {
          meets = false;
          break;
        }
        x = ((x % n) + n) % n;
      }
      const std::int64_t b0 = static_cast<std::int64_t>(b[d]);
      meets = x < b0 + wb && b0 < x + wa;
    }
    if (meets) return true;
  }
  return false;
}

inline bool contact_ok(int k, irr::Contact c, int dim) {
  switch (c) {
    case irr::Contact::stencil:
      return true;
    case irr::Contact::face:
      return k == dim - 1;
    case irr::Contact::edge:
      return k >= 0 && k >= dim - 2;
    default:
      return k >= 0;
  }
}

// The remote leaves this rank's leaves read: what a collection must deliver.
template <class Domain, class S = typename Domain::stencil_type>
std::vector<Ghost> needed(const Domain& d, irr::Contact contact = irr::Contact::stencil,
                          irr::LevelRange range = irr::LevelRange::all(),
                          irr::LevelRange readers = irr::LevelRange::all()) {
  using C = typename Domain::curve_type;
  const auto g = gather_leaves(d);
  const int me = d.comm().rank();
  const auto per = d.options().periodic;
  std::set<Ghost> out;
  for (std::size_t a = 0; a < g.starts.size(); ++a) {
    if (g.owner[a] != me || !readers.contains(g.levels[a])) continue;
    for (std::size_t b = 0; b < g.starts.size(); ++b) {
      if (g.owner[b] == me || !range.contains(g.levels[b])) continue;
      const auto sa = static_cast<std::uint64_t>(g.starts[a]),
                 sb = static_cast<std::uint64_t>(g.starts[b]);
      if (!reads<C, S>(sa, g.levels[a], sb, g.levels[b], per)) continue;
      if (!contact_ok(touch_dimension<C>(sa, g.levels[a], sb, g.levels[b], per), contact, C::dim))
        continue;
      out.insert({sb, g.levels[b], g.owner[b]});
    }
  }
  return {out.begin(), out.end()};
}

template <class Domain>
std::vector<Ghost> ghost_set(const Domain& d) {
  std::vector<Ghost> out;
  const auto& gl = d.ghosts();
  for (std::size_t i = 0; i < gl.size(); ++i)
    out.emplace_back(static_cast<std::uint64_t>(gl.starts()[i]), gl.levels()[i], gl.owners()[i]);
  return out;
}

}  // namespace ghost_oracle
