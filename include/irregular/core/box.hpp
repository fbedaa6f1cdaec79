// Box: the axis-aligned physical domain that the root cell covers. Maps positions to cells.
// baiardi-2001 §2: the root of the H-Tree is the whole domain.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/error.hpp>

#include <array>
#include <cmath>
#include <string>

namespace irregular {

/// The axis-aligned physical domain [lo, hi] that the root cell covers (baiardi-2001 §2: the
/// root of the H-Tree is the whole domain); maps positions to cells and cells to corners.
template <int D>
struct Box {
  std::array<double, D> lo{};  ///< lower corner
  std::array<double, D> hi{};  ///< upper corner

  /// True if `x` lies in [lo, hi] in every dimension (the upper face belongs to the box, so
  /// positions on it map to the last cell). NaN is never inside.
  [[nodiscard]] constexpr bool contains(const std::array<double, D>& x) const noexcept {
    for (int d = 0; d < D; ++d)
      if (!(x[d] >= lo[d] && x[d] <= hi[d])) return false;
    return true;
  }

  /// Length of the box along axis `d`.
  [[nodiscard]] constexpr double extent(int d) const noexcept { return hi[d] - lo[d]; }

  /// Throws irregular::invalid_argument unless lo < hi in every dimension and all finite.
  void validate() const {
    for (int d = 0; d < D; ++d)
      if (!(std::isfinite(lo[d]) && std::isfinite(hi[d]) && lo[d] < hi[d]))
        throw invalid_argument("irregular::Box: need finite lo < hi in dimension " +
                               std::to_string(d));
  }

  /// Anchor of the cell at `level` (cells per axis = cells_per_axis) that contains `x`.
  /// Precondition: contains(x). Positions on the upper face map to the last cell.
  [[nodiscard]] Cell<D> cell_of(const std::array<double, D>& x, int level,
                                coord_t cells_per_axis) const noexcept {
    Cell<D> c;
    c.level = level;
    for (int d = 0; d < D; ++d) {
      const double t = (x[d] - lo[d]) / (hi[d] - lo[d]) * static_cast<double>(cells_per_axis);
      coord_t k = t <= 0 ? 0 : static_cast<coord_t>(t);
      if (k >= cells_per_axis) k = cells_per_axis - 1;
      c.anchor[d] = k;
    }
    return c;
  }

  /// Physical lower corner and upper corner of a cell at a level with `cells_per_axis`.
  [[nodiscard]] std::array<double, D> lower(const Cell<D>& c,
                                            coord_t cells_per_axis) const noexcept {
    std::array<double, D> r;
    for (int d = 0; d < D; ++d)
      r[d] = lo[d] + (hi[d] - lo[d]) * static_cast<double>(c.anchor[d]) /
                         static_cast<double>(cells_per_axis);
    return r;
  }
  /// Physical upper corner of a cell at a level with `cells_per_axis` (see lower()).
  [[nodiscard]] std::array<double, D> upper(const Cell<D>& c,
                                            coord_t cells_per_axis) const noexcept {
    std::array<double, D> r;
    for (int d = 0; d < D; ++d)
      r[d] = lo[d] + (hi[d] - lo[d]) * static_cast<double>(c.anchor[d] + 1) /
                         static_cast<double>(cells_per_axis);
    return r;
  }
};

}  // namespace irregular
