// Initial conditions of the nbody example, generated whole on every rank from a seed (each rank
// then keeps the bodies with id % p == rank): the same N bodies at every rank count.
//
// - plummer: a Plummer sphere sampled as Aarseth, Hénon and Wielen (1974) do: the radius from
//   the cumulative mass (truncated at 99.9 % of the mass), the speed by von Neumann rejection
//   from g(q) = q^2 (1 - q^2)^{7/2}, isotropic directions; then scaled to virial units
//   (G = M = 1, E = -1/4: a = 3 pi / 16) and moved to the centre-of-mass frame. In 2D the
//   sphere is projected onto the x-y plane (positions and velocities), which is not an
//   equilibrium of the planar problem: it contracts.
// - clumpy: a cold (at rest) set of Plummer clumps of different masses (1 : 2 : ... : K) and
//   sizes, at random places, with the bodies shared by mass: a load that is uneven at the start
//   and drifts as the clumps fall together.
//
// Only the random engine's raw 64-bit output is used (std::mt19937_64 is specified exactly), and
// the maps to [0, 1) are ours, so the bodies do not depend on the standard library's
// distributions.
#pragma once

#include "physics.hpp"

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <string>
#include <vector>

namespace nbody {

/// A uniform double in [0, 1) from the top 53 bits.
inline double uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

/// A point of a Plummer sphere of unit scale radius (G = M = 1): position and velocity in 3D.
inline void plummer_body(std::mt19937_64& rng, std::array<double, 3>& x, std::array<double, 3>& v) {
  double r;
  do {
    const double m = uniform(rng);
    r = m > 0 && m <= 0.999 ? 1.0 / std::sqrt(std::pow(m, -2.0 / 3.0) - 1.0) : -1;
  } while (r < 0);
  auto isotropic = [&](double len, std::array<double, 3>& out) {
    const double z = (1 - 2 * uniform(rng)) * len;
    const double phi = 2 * std::numbers::pi * uniform(rng);
    const double rho = std::sqrt(std::max(0.0, len * len - z * z));
    out = {rho * std::cos(phi), rho * std::sin(phi), z};
  };
  isotropic(r, x);
  double q, g;
  do {  // von Neumann rejection: q with density proportional to q^2 (1 - q^2)^3.5 on [0, 1]
    q = uniform(rng);
    g = 0.1 * uniform(rng);
  } while (g >= q * q * std::pow(1 - q * q, 3.5));
  const double escape = std::sqrt(2.0) * std::pow(1 + r * r, -0.25);
  isotropic(q * escape, v);
}

/// All N bodies of the initial condition `kind` ("plummer" or "clumpy") in D dimensions, by id.
template <int D>
std::vector<Body<D>> initial_bodies(const std::string& kind, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Body<D>> bodies(n);
  const double m = 1.0 / static_cast<double>(n);
  if (kind == "plummer") {
    const double length = 3 * std::numbers::pi / 16, speed = 1 / std::sqrt(length);
    for (std::size_t i = 0; i < n; ++i) {
      std::array<double, 3> x, v;
      plummer_body(rng, x, v);
      auto& b = bodies[i];
      for (int a = 0; a < D; ++a) {
        b.position[a] = x[a] * length;
        b.velocity[a] = v[a] * speed;
      }
    }
  } else {  // clumpy
    constexpr int clumps = 6;
    std::array<std::array<double, 3>, clumps> centre;
    std::array<double, clumps> scale, weight;
    double total = 0;
    for (int k = 0; k < clumps; ++k) {
      for (auto& c : centre[k]) c = 2 * uniform(rng) - 1;  // in the cube [-1, 1]^3
      weight[k] = k + 1;
      scale[k] = 0.04 + 0.08 * uniform(rng);
      total += weight[k];
    }
    std::size_t i = 0;
    for (int k = 0; k < clumps; ++k) {
      const std::size_t share =
          k + 1 == clumps ? n - i : static_cast<std::size_t>(static_cast<double>(n) * weight[k] / total);
      for (std::size_t s = 0; s < share && i < n; ++s, ++i) {
        std::array<double, 3> x, v;
        plummer_body(rng, x, v);  // the velocity is drawn and dropped: the clumps are cold
        auto& b = bodies[i];
        for (int a = 0; a < D; ++a) {
          b.position[a] = centre[k][a] + scale[k] * x[a];
          b.velocity[a] = 0;
        }
      }
    }
  }
  // The centre-of-mass frame, sums in id order.
  std::array<double, D> cx{}, cv{};
  for (auto& b : bodies) {
    b.mass = m;
    for (int a = 0; a < D; ++a) {
      cx[a] += m * b.position[a];
      cv[a] += m * b.velocity[a];
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    auto& b = bodies[i];
    b.id = i;
    for (int a = 0; a < D; ++a) {
      b.position[a] -= cx[a];
      b.velocity[a] -= cv[a];
      b.acceleration[a] = 0;
    }
  }
  return bodies;
}

}  // namespace nbody
