// The bounded neighbours condition and the rule that implies it (baiardi-bounded-neighbours §3):
// no sub-domain may have more than NS neighbours. For NS = 2 the paper's rule (every sub-domain
// holds at least m cells, so at most one cut per row); for general NS our own rule, below.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/rows/grid.hpp>
#include <irregular/rows/neighbour_count.hpp>

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>

namespace irregular::rows {

/// The bound NS and the geometry it is counted in.
///
/// The rule (ours; the paper defers general NS to an unavailable report). Let D be the chain
/// reach (chain_reach): two adjacent cells are at most D positions apart along the row-major
/// chain (cyclically when the domain is toroidal). Every part holds at least
///     L = floor((D - 1) / q) + 1 cells,  q = floor(NS / 2),
/// unless p <= NS + 1 (then every partition into non-empty parts is legal: a part has at most
/// p - 1 others). Why it guarantees the bound: every neighbour of part k = [a, b) meets the
/// window [a - D, a) or [b, b + D). The parts meeting [a - D, a) are the one holding a - D and
/// those lying wholly inside (a - D, a), at most D - 1 cells; at L cells each these number at
/// most floor((D - 1) / L) <= q - 1 (since L > (D - 1) / q). So at most q parts on each side,
/// 2q <= NS in all. For NS = 2 and the 4-neighbour stencil, D = m and L = m: the paper's rule.
/// For the 8-neighbour stencil the paper's m cells are not enough (a part of exactly m cells
/// leaves its two neighbours diagonally adjacent): D = m + 1, and 2m - 1 on a torus. D is exact
/// (chain_reach), so one row, one column or a short torus admit more parts (a 5 x 1 torus: D =
/// 1, L = 1, five one-cell parts). An odd NS gains nothing over NS - 1 under this rule. The rule
/// is sufficient, not necessary: max_parts is the largest p *the rule* admits, and the largest p
/// with some partition of at most NS neighbours can exceed it (test "max_parts against brute
/// force"; doc/guide/bounded-neighbours.md).
struct NeighbourBound {
  int ns = 2;                       ///< NS: most neighbours a part may have
  Stencil stencil = Stencil::four;  ///< which grid cells interact
  bool toroidal = false;            ///< neighbours count across the wrap

  /// The adjacency the bound counts neighbours under.
  [[nodiscard]] constexpr Adjacency adjacency() const noexcept {
    return Adjacency::of(stencil, toroidal);
  }

  /// The rule's minimum part size for p parts (1 when p <= NS + 1).
  [[nodiscard]] std::size_t min_cells(const Grid& grid, std::size_t parts) const {
    check_ns();
    if (parts <= static_cast<std::size_t>(ns) + 1) return 1;
    return rule_cells(grid);
  }

  /// The largest number of parts the grid can host under the rule.
  [[nodiscard]] std::size_t max_parts(const Grid& grid) const {
    check_ns();
    grid.validate();
    const std::size_t small = std::min<std::size_t>(static_cast<std::size_t>(ns) + 1, grid.cells());
    return std::max(small, grid.cells() / rule_cells(grid));
  }

  /// Throws irregular::invalid_argument when NS < 2, parts is 0 or the grid cannot host parts
  /// parts under the rule (the message gives the largest feasible number).
  void validate(const Grid& grid, std::size_t parts) const {
    check_ns();
    grid.validate();
    if (parts == 0) throw invalid_argument("irregular::rows::NeighbourBound: zero parts");
    const std::size_t most = max_parts(grid);
    if (parts > most)
      throw invalid_argument(
          "irregular::rows::NeighbourBound: a " + std::to_string(grid.rows) + " x " +
          std::to_string(grid.columns) + " grid hosts at most " + std::to_string(most) +
          " parts with at most NS = " + std::to_string(ns) + " neighbours each (" +
          std::to_string(parts) + " requested); the largest feasible number of parts is " +
          std::to_string(most));
  }

  /// Whether the cuts satisfy the rule (every part at least min_cells).
  [[nodiscard]] bool rule_holds(const Grid& grid, std::span<const std::size_t> cuts) const {
    validate_cuts(grid, cuts);
    const std::size_t L = min_cells(grid, cuts.size() - 1);
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k)
      if (cuts[k + 1] - cuts[k] < L) return false;
    return true;
  }

  /// Whether the cuts satisfy the bound itself: every part has at most NS neighbours (exact).
  [[nodiscard]] bool holds(const Grid& grid, std::span<const std::size_t> cuts) const {
    check_ns();
    return max_neighbours(grid, cuts, adjacency()) <= static_cast<std::size_t>(ns);
  }

 private:
  void check_ns() const {
    if (ns < 2)
      throw invalid_argument("irregular::rows::NeighbourBound: NS must be at least 2, got " +
                             std::to_string(ns));
  }
  [[nodiscard]] std::size_t rule_cells(const Grid& grid) const {
    const std::size_t D = chain_reach(grid, adjacency());
    const auto q = static_cast<std::size_t>(ns / 2);
    return (D - 1) / q + 1;
  }
};

}  // namespace irregular::rows
