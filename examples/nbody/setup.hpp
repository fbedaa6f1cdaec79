// The nbody example's domain setup, shared with bench/nbody.cpp: the cost-zone metric, the cube
// around the bodies, and a canonical order of bodies with equal curve keys.
#pragma once

#include "physics.hpp"

#include <irregular/core/box.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace nbody {

/// A body's cost (cost zones): 1 plus the interactions it felt in the last force evaluation.
template <int D>
struct Cost {
  double operator()(const Body<D>& b) const noexcept { return 1.0 + static_cast<double>(b.interactions); }
};

/// The cube around the origin, of a power-of-two half side at least twice the farthest
/// coordinate of the initial bodies (a body that leaves it is removed and counted).
template <int D>
irregular::Box<D> cube_for(const std::vector<Body<D>>& bodies) {
  double reach = 0;
  for (const auto& b : bodies)
    for (int a = 0; a < D; ++a) reach = std::max(reach, std::abs(b.position[a]));
  double half = 1;
  while (half < 2 * reach) half *= 2;
  irregular::Box<D> box;
  for (int a = 0; a < D; ++a) {
    box.lo[a] = -half;
    box.hi[a] = half;
  }
  return box;
}

/// Bodies with the same curve key (the same finest cell) keep the order in which they arrived,
/// which depends on the rank count; sorting each such run by id makes every leaf's order
/// canonical (the keys do not change: only equal keys are permuted).
template <class Dom>
void canonical_order(Dom& d) {
  const auto keys = d.local_keys();
  auto els = d.local_elements();
  for (std::size_t i = 0; i < keys.size();) {
    std::size_t j = i + 1;
    while (j < keys.size() && keys[j] == keys[i]) ++j;
    if (j - i > 1)
      std::sort(els.begin() + static_cast<std::ptrdiff_t>(i), els.begin() + static_cast<std::ptrdiff_t>(j),
                [](const auto& x, const auto& y) { return x.id < y.id; });
    i = j;
  }
}

}  // namespace nbody
