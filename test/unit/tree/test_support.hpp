// Test support for the tree unit tests: a tiny test-local Morton curve with a small max_level
// (to exercise the max_level clamp), seeded key generators and brute-force oracles.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/tree/detail/curve_math.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace tree_test {

/// Bit-interleaving Morton curve, D dims, max_level L (tiny on purpose).
template <int D, int L>
struct TinyMorton {
  static constexpr int dim = D;
  static constexpr int arity = 2;
  static constexpr int max_level = L;
  using index_type = std::uint64_t;
  using state_type = int;
  static index_type index(const irregular::Cell<D>& c) {
    index_type r = 0;
    for (int b = 0; b < c.level; ++b)
      for (int d = 0; d < D; ++d)
        r |= static_cast<index_type>((c.anchor[static_cast<std::size_t>(d)] >> b) & 1u)
             << (b * D + d);
    return r;
  }
  static irregular::Cell<D> cell(index_type i, int level) {
    irregular::Cell<D> c;
    c.level = level;
    for (int b = 0; b < level; ++b)
      for (int d = 0; d < D; ++d)
        c.anchor[static_cast<std::size_t>(d)] |= ((i >> (b * D + d)) & 1u) << b;
    return c;
  }
  static state_type root_state() { return 0; }
  static int child_position(state_type, int k) { return k; }
  static state_type child_state(state_type s, int) { return s; }
};
static_assert(irregular::SpaceFillingCurve<TinyMorton<2, 5>>);

/// Clustered random keys at the finest level: half uniform, half in a few tight clusters.
template <class C>
std::vector<typename C::index_type> clustered_keys(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto side = irregular::detail::axis_cells<C>(C::max_level);
  std::vector<typename C::index_type> keys;
  keys.reserve(n);
  std::array<std::array<double, C::dim>, 3> centers;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (auto& c : centers)
    for (auto& x : c) x = u(rng);
  std::normal_distribution<double> g(0.0, 0.03);
  for (std::size_t i = 0; i < n; ++i) {
    irregular::Cell<C::dim> cell;
    cell.level = C::max_level;
    const bool clustered = (i % 2) == 1;
    const auto& ctr = centers[i % 3];
    for (std::size_t d = 0; d < static_cast<std::size_t>(C::dim); ++d) {
      double x = clustered ? ctr[d] + g(rng) : u(rng);
      x = std::clamp(x, 0.0, 0.999999);
      cell.anchor[d] = static_cast<irregular::coord_t>(x * static_cast<double>(side));
      if (cell.anchor[d] >= side) cell.anchor[d] = side - 1;
    }
    keys.push_back(C::index(cell));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace tree_test
