// The interface ghost of interface.hpp against exact cell means: for random quadratics (and in
// each boundary case) the ghost must equal the mean of the quadratic over the ghost cell; a cubic
// along either axis must not be reproduced, so the oracle is no tautology.
#include "interface.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <random>

namespace {

using Poly = std::array<double, 10>;  // 1, x, y, x^2, xy, y^2, x^3, x^2y, xy^2, y^3

double eval(const Poly& p, double x, double y) {
  return p[0] + p[1] * x + p[2] * y + p[3] * x * x + p[4] * x * y + p[5] * y * y + p[6] * x * x * x +
         p[7] * x * x * y + p[8] * x * y * y + p[9] * y * y * y;
}

// The mean over [x0, x1] x [y0, y1]: 2x2 Gauss, exact for cubics.
double mean(const Poly& p, double x0, double x1, double y0, double y1) {
  const double g = 0.5 / std::sqrt(3.0), xm = (x0 + x1) / 2, ym = (y0 + y1) / 2, dx = x1 - x0, dy = y1 - y0;
  double m = 0;
  for (double a : {-g, g})
    for (double b : {-g, g}) m += eval(p, xm + a * dx, ym + b * dy) / 4;
  return m;
}

// The mean along the segment y = y0, x in [0, 2] (Simpson, exact for cubics).
double edge(const Poly& p, double y0) { return (eval(p, 0, y0) + 4 * eval(p, 1, y0) + eval(p, 2, y0)) / 6; }

// Fine cells of side 1: the interface is x = 0, the coarse leaf C is [0,2]x[0,2], the fine cell F
// is [-1,0]x[0,1], its sibling behind [-2,-1]x[0,1], the ghost G = [0,1]x[0,1] lies in C's lower
// half, so C's neighbour below is `near` and the one above `far`.
double ghost(const Poly& p, int boundary) {  // boundary: 0 none, 1 below C, 2 above C
  amm::GhostStencil s;
  s.own = mean(p, -1, 0, 0, 1);
  s.behind = mean(p, -2, -1, 0, 1);
  s.c = mean(p, 0, 2, 0, 2);
  s.near = boundary == 1 ? edge(p, 0) : mean(p, 0, 2, -2, 0);
  s.far = boundary == 2 ? edge(p, 2) : mean(p, 0, 2, 2, 4);
  s.near_is_boundary = boundary == 1;
  s.far_is_boundary = boundary == 2;
  return amm::ghost_mean(s);
}

}  // namespace

TEST_CASE("interface ghost: exact for quadratics, in the interior and at either boundary", "[amm]") {
  const unsigned seed = 20261123;
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> coef(-1, 1);
  for (int trial = 0; trial < 100; ++trial) {
    Poly p{};
    for (int k = 0; k < 6; ++k) p[static_cast<std::size_t>(k)] = coef(rng);
    const double want = mean(p, 0, 1, 0, 1);
    for (int b = 0; b < 3; ++b) {
      INFO("trial " << trial << ", boundary case " << b);
      REQUIRE(ghost(p, b) == Approx(want).margin(1e-13));
    }
  }
}

TEST_CASE("interface ghost: a cubic along either axis is not reproduced (the check can fail)", "[amm]") {
  for (std::size_t k : {6u, 9u}) {  // x^3 and y^3
    Poly p{};
    p[k] = 1;
    for (int b = 0; b < 3; ++b) {
      INFO("cubic term " << k << ", boundary case " << b);
      CHECK(std::abs(ghost(p, b) - mean(p, 0, 1, 0, 1)) > 1e-3);
    }
  }
}
