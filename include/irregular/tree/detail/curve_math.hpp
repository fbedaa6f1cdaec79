// Index arithmetic of hnodes for any SpaceFillingCurve: an hnode at level l is the aligned
// interval [index * span(l), (index + 1) * span(l)) of finest curve indices (baiardi-2001 §2-3).
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/index.hpp>

#include <array>
#include <cstddef>

namespace irregular::detail {

/// Number of children of a cell: arity^dim.
template <SpaceFillingCurve C>
inline constexpr int children_of = ipow<int>(C::arity, C::dim);

/// span_table<C>[l] = arity^(dim*(max_level - l)): the number of finest indices in a cell at l.
template <SpaceFillingCurve C>
inline constexpr auto span_table = [] {
  using I = typename C::index_type;
  std::array<I, C::max_level + 1> t{};
  I s = 1;
  for (int l = C::max_level; l >= 0; --l) {
    t[static_cast<std::size_t>(l)] = s;
    if (l > 0) s *= static_cast<I>(children_of<C>);
  }
  return t;
}();

template <SpaceFillingCurve C>
constexpr typename C::index_type span_at(int level) noexcept {
  return span_table<C>[static_cast<std::size_t>(level)];
}

/// One past the last finest index: the end of the root interval.
template <SpaceFillingCurve C>
constexpr typename C::index_type index_end() noexcept {
  return span_table<C>[0];
}

/// Cells per axis at a level: arity^level.
template <SpaceFillingCurve C>
constexpr coord_t axis_cells(int level) noexcept {
  return ipow<coord_t>(static_cast<coord_t>(C::arity), level);
}

template <SpaceFillingCurve C>
typename C::index_type start_of(const Cell<C::dim>& c) noexcept {
  return C::index(c) * span_at<C>(c.level);
}

template <SpaceFillingCurve C>
IndexInterval<typename C::index_type> interval_of(const Cell<C::dim>& c) noexcept {
  const auto s = start_of<C>(c);
  return {s, s + span_at<C>(c.level)};
}

/// The cell of an hnode given by its start and level (start must be aligned to span_at(level)).
template <SpaceFillingCurve C>
Cell<C::dim> cell_at(typename C::index_type start, int level) noexcept {
  return C::cell(start / span_at<C>(level), level);
}

/// Anchor of the child at local position `pos` (pos = sum_d digit_d * arity^d).
template <SpaceFillingCurve C>
constexpr Cell<C::dim> child_at_position(const Cell<C::dim>& parent, int pos) noexcept {
  Cell<C::dim> ch;
  ch.level = parent.level + 1;
  for (int d = 0; d < C::dim; ++d) {
    ch.anchor[static_cast<std::size_t>(d)] =
        parent.anchor[static_cast<std::size_t>(d)] * static_cast<coord_t>(C::arity) +
        static_cast<coord_t>(pos % C::arity);
    pos /= C::arity;
  }
  return ch;
}

/// Parent cell (level - 1). Precondition: c.level > 0.
template <int D, int Arity>
constexpr Cell<D> parent_of(const Cell<D>& c) noexcept {
  Cell<D> p;
  p.level = c.level - 1;
  for (int d = 0; d < D; ++d)
    p.anchor[static_cast<std::size_t>(d)] = c.anchor[static_cast<std::size_t>(d)] / Arity;
  return p;
}

/// Ancestor of an aligned start at a coarser level: the start of the enclosing hnode.
template <SpaceFillingCurve C>
constexpr typename C::index_type ancestor_start(typename C::index_type start, int level) noexcept {
  return start - start % span_at<C>(level);
}

}  // namespace irregular::detail
