// The row grid of the bounded-neighbours cutter (baiardi-bounded-neighbours §3): an n x m grid
// linearized row-major, its stencil (4 or 8 neighbours) and which axes wrap (toroidal domain).
#pragma once

#include <irregular/core/error.hpp>

#include <cstddef>
#include <limits>
#include <string>

namespace irregular::rows {

/// Which grid cells interact: the 4 nearest (von Neumann, the paper's WaTor) or all 8 (Moore).
enum class Stencil { four = 4, eight = 8 };

/// An n x m grid of cells, row-major: cell (r, c) is chain position r * columns + c.
struct Grid {
  std::size_t rows = 0;     ///< n
  std::size_t columns = 0;  ///< m

  /// Number of cells n * m.
  [[nodiscard]] constexpr std::size_t cells() const noexcept { return rows * columns; }
  /// The row of chain position `position`.
  [[nodiscard]] constexpr std::size_t row(std::size_t position) const noexcept {
    return position / columns;
  }
  /// The column of chain position `position`.
  [[nodiscard]] constexpr std::size_t column(std::size_t position) const noexcept {
    return position % columns;
  }

  /// Throws irregular::invalid_argument for an empty grid or one whose cells overflow.
  void validate() const {
    if (rows == 0 || columns == 0)
      throw invalid_argument("irregular::rows::Grid: " + std::to_string(rows) + " x " +
                             std::to_string(columns) + " grid has no cells");
    if (rows > std::numeric_limits<std::size_t>::max() / columns)
      throw invalid_argument("irregular::rows::Grid: too many cells");
  }
};

/// The adjacency of grid cells: the stencil and the axes that wrap around. A toroidal domain
/// wraps both; an ownership map may be periodic along one axis only.
struct Adjacency {
  Stencil stencil = Stencil::four;  ///< which cells interact
  bool wrap_columns = false;        ///< column m-1 touches column 0 (periodic along x)
  bool wrap_rows = false;           ///< row n-1 touches row 0 (periodic along y)

  /// Stencil `s`, both axes wrapping when `toroidal`.
  [[nodiscard]] static constexpr Adjacency of(Stencil s, bool toroidal) noexcept {
    return {s, toroidal, toroidal};
  }
};

}  // namespace irregular::rows
