// Exact neighbour counting from the cuts (baiardi-bounded-neighbours §3): which sub-domains of a
// row-major partition touch under a 4- or 8-neighbour stencil, toroidal or not. A part is at
// most three rectangles (a partial first row, full rows, a partial last row), so two parts
// touch when two of their rectangles do; only parts within one chain reach are candidates.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/rows/grid.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace irregular::rows {

/// Throws irregular::invalid_argument unless cuts are p+1 >= 2 nondecreasing separators from 0
/// to grid.cells().
inline void validate_cuts(const Grid& grid, std::span<const std::size_t> cuts) {
  grid.validate();
  if (cuts.size() < 2)
    throw invalid_argument("irregular::rows: cuts need at least 2 separators (one part)");
  if (cuts.front() != 0 || cuts.back() != grid.cells())
    throw invalid_argument("irregular::rows: cuts must run from 0 to " +
                           std::to_string(grid.cells()) + ", got " + std::to_string(cuts.front()) +
                           " .. " + std::to_string(cuts.back()));
  for (std::size_t k = 1; k < cuts.size(); ++k)
    if (cuts[k] < cuts[k - 1])
      throw invalid_argument("irregular::rows: cuts decrease at index " + std::to_string(k));
}

/// The largest chain distance D between two adjacent cells (cyclic when rows wrap, since then
/// the chain closes: cell (n-1, c) is m positions before (0, c)); 1 when no two cells touch.
/// Exact: every stencil offset is measured as it lands, inside the grid or across a wrap. On
/// ordinary grids D = m (4 neighbours), m + 1 (8 neighbours) or 2m - 1 (8 neighbours, columns
/// wrapping: the diagonal (r, 0)-(r+1, m-1) across the wrap); one row, one column or a short
/// torus bring it down (a 5 x 1 torus: 1), and the NS rule admits more parts there (bound.hpp).
[[nodiscard]] constexpr std::size_t chain_reach(const Grid& grid, const Adjacency& adj) noexcept {
  const auto n = static_cast<long long>(grid.rows), m = static_cast<long long>(grid.columns);
  const long long N = n * m;
  long long D = 1;
  for (int dr = -1; dr <= 1; ++dr)
    for (int dc = -1; dc <= 1; ++dc) {
      if ((dr == 0 && dc == 0) || (adj.stencil == Stencil::four && dr != 0 && dc != 0)) continue;
      if (dr != 0 && n < 2 && !adj.wrap_rows) continue;  // no row above or below
      // The column shifts offset dc makes: dc inside the grid (when some column has a
      // neighbour there), and 1 - m or m - 1 across the wrap.
      long long shifts[2] = {0, 0};
      int count = 0;
      if (dc == 0 || m >= 2) shifts[count++] = dc;
      if (dc != 0 && adj.wrap_columns) shifts[count++] = dc > 0 ? 1 - m : m - 1;
      for (int i = 0; i < count; ++i) {
        const long long delta = dr * m + shifts[i];
        long long d = delta < 0 ? -delta : delta;
        if (adj.wrap_rows) {
          d = ((delta % N) + N) % N;
          d = std::min(d, N - d);
        }
        D = std::max(D, d);  // d = 0: a cell meets itself across a wrap, not a neighbour
      }
    }
  return static_cast<std::size_t>(D);
}

namespace detail {
struct Rect {  // cells [c0, c1) x [r0, r1)
  std::size_t c0, c1, r0, r1;
};

inline int part_rects(const Grid& g, std::size_t a, std::size_t b, std::array<Rect, 3>& out) {
  const std::size_t m = g.columns, ra = a / m, rb = (b - 1) / m, ca = a % m, cb = (b - 1) % m + 1;
  if (ra == rb) {
    out[0] = {ca, cb, ra, ra + 1};
    return 1;
  }
  int k = 0;
  std::size_t full0 = ra + 1, full1 = rb;  // rows entirely in the part
  if (ca == 0)
    full0 = ra;
  else
    out[k++] = {ca, m, ra, ra + 1};
  if (cb == m)
    full1 = rb + 1;
  else
    out[k++] = {0, cb, rb, rb + 1};
  if (full0 < full1) out[k++] = {0, m, full0, full1};
  return k;
}

// Distance between the cell intervals [a0, a1) and [b0, b1) along an axis of length n.
inline std::size_t axis_gap(std::size_t a0, std::size_t a1, std::size_t b0, std::size_t b1,
                            std::size_t n, bool wrap) {
  auto gap = [](long long x0, long long x1, long long y0, long long y1) {
    const long long d = std::max({0LL, y0 - (x1 - 1), x0 - (y1 - 1)});
    return static_cast<std::size_t>(d);
  };
  const auto A0 = static_cast<long long>(a0), A1 = static_cast<long long>(a1);
  const auto B0 = static_cast<long long>(b0), B1 = static_cast<long long>(b1),
             N = static_cast<long long>(n);
  std::size_t d = gap(A0, A1, B0, B1);
  if (wrap) d = std::min({d, gap(A0, A1, B0 - N, B1 - N), gap(A0, A1, B0 + N, B1 + N)});
  return d;
}

inline bool rects_touch(const Rect& a, const Rect& b, const Grid& g, const Adjacency& adj) {
  const std::size_t dx = axis_gap(a.c0, a.c1, b.c0, b.c1, g.columns, adj.wrap_columns);
  const std::size_t dy = axis_gap(a.r0, a.r1, b.r0, b.r1, g.rows, adj.wrap_rows);
  if (adj.stencil == Stencil::eight) return dx <= 1 && dy <= 1;
  return (dx == 0 && dy <= 1) || (dy == 0 && dx <= 1);
}
}  // namespace detail

/// Whether the cells [a0, a1) and [b0, b1) of the chain (two disjoint non-empty runs) hold two
/// adjacent cells.
[[nodiscard]] inline bool runs_touch(const Grid& grid, const Adjacency& adj, std::size_t a0,
                                     std::size_t a1, std::size_t b0, std::size_t b1) {
  std::array<detail::Rect, 3> ra{}, rb{};
  const int na = detail::part_rects(grid, a0, a1, ra), nb = detail::part_rects(grid, b0, b1, rb);
  for (int i = 0; i < na; ++i)
    for (int j = 0; j < nb; ++j)
      if (detail::rects_touch(ra[i], rb[j], grid, adj)) return true;
  return false;
}

namespace detail {
// The neighbours of part k (sorted); cuts already validated.
inline std::vector<int> neighbours_of(const Grid& grid, std::span<const std::size_t> cuts,
                                      const Adjacency& adj, std::size_t k) {
  const std::size_t p = cuts.size() - 1, N = grid.cells();
  const std::size_t a = cuts[k], b = cuts[k + 1];
  std::vector<int> out;
  if (a == b) return out;
  const std::size_t W = chain_reach(grid, adj) + 1;
  std::vector<std::size_t> cand;
  // Parts meeting the chain positions [lo, hi) (clipped to [0, N)).
  auto visit = [&](std::size_t lo, std::size_t hi) {
    lo = std::min(lo, N);
    hi = std::min(hi, N);
    if (lo >= hi) return;
    auto first = std::upper_bound(cuts.begin(), cuts.end(), lo) - cuts.begin() - 1;
    for (auto j = static_cast<std::size_t>(first); j < p && cuts[j] < hi; ++j)
      if (j != k && cuts[j] < cuts[j + 1]) cand.push_back(j);
  };
  if (b - a + 2 * W >= N) {
    visit(0, N);
  } else if (!adj.wrap_rows) {
    visit(a >= W ? a - W : 0, b + W);
  } else {  // the chain is cyclic: the window may wrap around either end
    if (a >= W)
      visit(a - W, b + W);
    else {
      visit(0, b + W);
      visit(N - (W - a), N);
    }
    if (b + W > N) visit(0, b + W - N);
  }
  std::sort(cand.begin(), cand.end());
  cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
  for (std::size_t j : cand)
    if (runs_touch(grid, adj, a, b, cuts[j], cuts[j + 1])) out.push_back(static_cast<int>(j));
  return out;
}
}  // namespace detail

/// The parts whose cells touch the cells of part k = [cuts[k], cuts[k+1]), sorted, without k
/// (an empty part touches nothing). Exact. Only the parts within one chain reach of part k are
/// tested (O(their number) rectangle tests). Throws irregular::invalid_argument for malformed
/// cuts or k out of range.
[[nodiscard]] inline std::vector<int> neighbours_of(const Grid& grid,
                                                    std::span<const std::size_t> cuts,
                                                    const Adjacency& adj, std::size_t k) {
  validate_cuts(grid, cuts);
  if (k + 1 >= cuts.size())
    throw invalid_argument("irregular::rows::neighbours_of: part " + std::to_string(k) + " of " +
                           std::to_string(cuts.size() - 1));
  return detail::neighbours_of(grid, cuts, adj, k);
}

/// neighbours_of for every part.
[[nodiscard]] inline std::vector<std::vector<int>> neighbour_parts(
    const Grid& grid, std::span<const std::size_t> cuts, const Adjacency& adj) {
  validate_cuts(grid, cuts);
  std::vector<std::vector<int>> out(cuts.size() - 1);
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k)
    out[k] = detail::neighbours_of(grid, cuts, adj, k);
  return out;
}

/// The number of neighbours of every part (see neighbour_parts).
[[nodiscard]] inline std::vector<std::size_t> neighbour_counts(const Grid& grid,
                                                               std::span<const std::size_t> cuts,
                                                               const Adjacency& adj) {
  const auto parts = neighbour_parts(grid, cuts, adj);
  std::vector<std::size_t> n(parts.size());
  for (std::size_t k = 0; k < parts.size(); ++k) n[k] = parts[k].size();
  return n;
}

/// The largest number of neighbours of a part (0 for one part).
[[nodiscard]] inline std::size_t max_neighbours(const Grid& grid, std::span<const std::size_t> cuts,
                                                const Adjacency& adj) {
  std::size_t best = 0;
  for (std::size_t c : neighbour_counts(grid, cuts, adj)) best = std::max(best, c);
  return best;
}

}  // namespace irregular::rows
