// The three test problems of the adaptive multigrid: -Δu = f on ]0,1[², u = h on the boundary.
// "ten" and "wave" are the two Dirichlet data of baiardi-2001 §5.4 with f = 0 (both harmonic, so
// h is the exact solution); "peak" is a sharp Gaussian with its source, which makes the grid
// hierarchy highly irregular, as the papers' second problem does.
#pragma once

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace amm {

enum class Problem { ten, wave, peak };

inline Problem problem_by_name(const std::string& s) {
  if (s == "1" || s == "ten") return Problem::ten;
  if (s == "2" || s == "wave") return Problem::wave;
  if (s == "peak") return Problem::peak;
  throw std::invalid_argument("unknown problem '" + s + "' (known: 1 or ten, 2 or wave, peak)");
}

inline const char* name_of(Problem p) {
  switch (p) {
    case Problem::ten: return "h = 10";
    case Problem::wave: return "h = 10 cos(2pi(x-y)) sinh(2pi(x+y+2))/sinh(8pi)";
    case Problem::peak: return "Gaussian peak at (0.7, 0.3), width 0.04";
  }
  return "";
}

/// The exact solution (and the Dirichlet data on the boundary).
inline double exact(Problem p, double x, double y) {
  constexpr double pi = std::numbers::pi;
  switch (p) {
    case Problem::ten: return 10.0;
    case Problem::wave:
      return 10.0 * std::cos(2 * pi * (x - y)) * std::sinh(2 * pi * (x + y + 2)) / std::sinh(8 * pi);
    case Problem::peak: {
      constexpr double s = 0.04;
      const double r2 = (x - 0.7) * (x - 0.7) + (y - 0.3) * (y - 0.3);
      return std::exp(-r2 / (2 * s * s));
    }
  }
  return 0;
}

/// The source f = -Δu.
inline double source(Problem p, double x, double y) {
  if (p != Problem::peak) return 0.0;
  constexpr double s = 0.04;
  const double r2 = (x - 0.7) * (x - 0.7) + (y - 0.3) * (y - 0.3);
  return std::exp(-r2 / (2 * s * s)) * (2 / (s * s) - r2 / (s * s * s * s));
}

/// The mean of the exact solution over the square of side h centred at (cx, cy) (3x3 Gauss,
/// exact for quintics): what the cell-mean values of the discretization approximate.
inline double exact_mean(Problem p, double cx, double cy, double h) {
  const double g[3] = {-0.7745966692414834, 0, 0.7745966692414834}, w[3] = {5.0 / 18, 8.0 / 18, 5.0 / 18};
  double m = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) m += w[i] * w[j] * exact(p, cx + g[i] * h / 2, cy + g[j] * h / 2);
  return m;
}

/// The mean of the exact solution along the segment from (x0, y0) to (x1, y1) (Simpson).
inline double exact_edge_mean(Problem p, double x0, double y0, double x1, double y1) {
  return (exact(p, x0, y0) + 4 * exact(p, (x0 + x1) / 2, (y0 + y1) / 2) + exact(p, x1, y1)) / 6;
}

}  // namespace amm
