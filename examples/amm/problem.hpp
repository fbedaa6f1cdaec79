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

}  // namespace amm
