// The maximal aligned cells (hnodes) that tile a curve-index interval, in curve order: a rank's
// private H-Tree roots (baiardi-2001 §3), and the cells an ownership map looks up for a range.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/index.hpp>
#include <irregular/curve/interval.hpp>

namespace irregular::detail {

/// Calls emit(cell) for each maximal aligned cell inside [iv.start, iv.end), in curve order
/// (at most 2 * max_level * (arity^dim - 1) cells).
template <SpaceFillingCurve C, class Emit>
void aligned_cover(IndexInterval<typename C::index_type> iv, Emit&& emit) {
  using I = typename C::index_type;
  const I digits = ipow<I>(static_cast<I>(C::arity), C::dim);
  I cur = iv.start;
  while (cur < iv.end) {
    int level = C::max_level;  // grow the block while it stays aligned and inside
    I block = 1;
    while (level > 0 && cur % (block * digits) == 0 && cur + block * digits <= iv.end) {
      block *= digits;
      --level;
    }
    emit(curve::cell_of_finest<C>(cur, level));
    cur += block;
  }
}

}  // namespace irregular::detail
