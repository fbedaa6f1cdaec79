// Seeded synthetic load matrices of saule-bas-catalyurek §4.1: uniform (given Delta = max/min),
// diagonal, peak and multi-peak (load = random(0, cells) / (distance to a reference + 0.1)).
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/rect/load_matrix.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace irregular::detail {
// Portable draws (std distributions differ between standard libraries).
inline std::uint64_t below(std::mt19937_64& rng, std::uint64_t n) {
  return n == 0 ? 0 : static_cast<std::uint64_t>((static_cast<uint128_t>(rng()) * n) >> 64);
}
inline double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }
}  // namespace irregular::detail

namespace irregular::rect {

/// The synthetic classes of §4.1.
enum class Instance { uniform, diagonal, peak, multi_peak };

/// Uniform class: each load drawn uniformly from the integers [base, round(base * delta)], so
/// max / min <= delta (base = 1000 keeps the ratio accurate for delta close to 1).
inline LoadMatrix<std::uint32_t> uniform_matrix(std::size_t n1, std::size_t n2, double delta,
                                                std::uint64_t seed, std::uint32_t base = 1000) {
  if (!(delta >= 1) || !std::isfinite(delta) || base == 0)
    throw invalid_argument("irregular::rect::uniform_matrix: need delta >= 1 and base > 0");
  std::mt19937_64 rng(seed);
  const auto hi = static_cast<std::uint64_t>(std::llround(base * delta));
  std::vector<std::uint32_t> v(n1 * n2);
  for (auto& x : v)
    x = static_cast<std::uint32_t>(base + irregular::detail::below(rng, hi - base + 1));
  return LoadMatrix<std::uint32_t>({n1, n2}, std::move(v));
}

/// Diagonal, peak and multi-peak classes (peaks: 1 for peak, `peaks` for multi-peak).
inline LoadMatrix<std::uint32_t> peak_matrix(std::size_t n1, std::size_t n2, Instance kind,
                                             std::uint64_t seed, int peaks = 3) {
  if (kind == Instance::uniform || peaks < 1)
    throw invalid_argument(
        "irregular::rect::peak_matrix: kind must be diagonal, peak or "
        "multi_peak, with at least one peak");
  std::mt19937_64 rng(seed);
  std::vector<std::array<double, 2>> ref;
  const int count = kind == Instance::peak ? 1 : kind == Instance::multi_peak ? peaks : 0;
  for (int k = 0; k < count; ++k)
    ref.push_back({irregular::detail::unit(rng) * static_cast<double>(n1),
                   irregular::detail::unit(rng) * static_cast<double>(n2)});
  const std::uint64_t cells = n1 * n2;
  // diagonal: the line through (0, 0) and (n1 - 1, n2 - 1)
  const double dx = static_cast<double>(n1 > 1 ? n1 - 1 : 1);
  const double dy = static_cast<double>(n2 > 1 ? n2 - 1 : 1);
  const double norm = std::sqrt(dx * dx + dy * dy);
  std::vector<std::uint32_t> v(cells);
  for (std::size_t i = 0; i < n1; ++i)
    for (std::size_t j = 0; j < n2; ++j) {
      const double x = static_cast<double>(i), y = static_cast<double>(j);
      double dist;
      if (kind == Instance::diagonal) {
        dist = std::abs(x * dy - y * dx) / norm;
      } else {
        dist = std::numeric_limits<double>::infinity();
        for (const auto& r : ref) dist = std::min(dist, std::hypot(x - r[0], y - r[1]));
      }
      const double draw = static_cast<double>(irregular::detail::below(rng, cells + 1));
      v[i * n2 + j] = static_cast<std::uint32_t>(draw / (dist + 0.1));
    }
  return LoadMatrix<std::uint32_t>({n1, n2}, std::move(v));
}

/// Any class by name: uniform uses `delta`.
inline LoadMatrix<std::uint32_t> make_instance(Instance kind, std::size_t n1, std::size_t n2,
                                               std::uint64_t seed, double delta = 1.2) {
  return kind == Instance::uniform ? uniform_matrix(n1, n2, delta, seed)
                                   : peak_matrix(n1, n2, kind, seed);
}

}  // namespace irregular::rect
