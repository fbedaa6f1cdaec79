// The fine ghost at a coarse-fine interface of the AMM's composite grid (cell-centred finite
// volumes, values are cell means, full 2:1 balance). A fine cell F whose face neighbour is a
// coarser leaf C reads the mean over the ghost cell G, the quarter of C next to F.
#pragma once

namespace amm {

/// The cell means the ghost is made of. Along the interface (tangentially): C and its two
/// neighbours of C's level, `near` on the side of C's half that holds G and `far` on the other;
/// one beyond the domain boundary is replaced by the mean of the Dirichlet data along C's edge
/// there (both cannot be). Along the normal: F (`own`) and F's sibling on the far side from C
/// (`behind`), both of F's level.
struct GhostStencil {
  double own = 0, behind = 0, c = 0, near = 0, far = 0;
  bool near_is_boundary = false, far_is_boundary = false;
};

/// The mean over G, exact when the solution is a quadratic: first the mean over C's half on G's
/// side (the strip), then along the normal from the strip, F and F's sibling. A bilinear ghost
/// errs by O(h^2), an O(1) truncation error along the whole interface, which costs an order.
inline double ghost_mean(const GhostStencil& s) {
  const double strip = s.near_is_boundary  ? 3 * s.near / 8 + 11 * s.c / 16 - s.far / 16
                       : s.far_is_boundary ? -3 * s.far / 8 + 21 * s.c / 16 + s.near / 16
                                           : s.c + (s.near - s.far) / 8;
  return (3 * s.own + 2 * strip - s.behind) / 4;
}

}  // namespace amm
