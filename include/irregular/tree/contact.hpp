// Contact between leaves: whether two disjoint cells touch across a face, an edge or a corner,
// periodic axes included. The exact neighbour relation that stencil cells only approximate
// (a stencil cell at a coarse level also holds finer leaves that never touch the reader).
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/stencil.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

namespace irregular {

/// Which neighbours a query or a ghost collection keeps:
///  - `stencil`: every leaf that meets a stencil cell of the reader (at the levels the stencil
///    reaches);
///  - `face`: of those, the leaves sharing a (dim-1)-dimensional face with the reader;
///  - `edge`: sharing at least a (dim-2)-dimensional edge (in 2D the same as `corner`);
///  - `corner`: touching the reader at all (face, edge or corner).
enum class Contact : std::uint8_t { stencil, face, edge, corner };

namespace detail {

/// Along one axis of n finest cells (a ring when periodic): 2 when [a0, a1) and [b0, b1)
/// overlap with positive length, 1 when they only touch at an end, 0 when they are apart.
inline int axis_contact(std::uint64_t a0, std::uint64_t a1, std::uint64_t b0, std::uint64_t b1,
                        std::uint64_t n, bool periodic) noexcept {
  if (a0 < b1 && b0 < a1) return 2;
  if (a1 == b0 || b1 == a0) return 1;
  if (periodic && ((a1 == n && b0 == 0) || (b1 == n && a0 == 0))) return 1;
  return 0;
}

}  // namespace detail

/// Dimension of the shared boundary of two disjoint cells (dim-1 for a face, 0 for a corner),
/// or -1 when they do not touch. Cells of any levels; periodic axes wrap. Needs max_level
/// coordinates below 2^64 (every built-in curve).
template <SpaceFillingCurve C>
int contact_dimension(const Cell<C::dim>& a, const Cell<C::dim>& b,
                      Periodicity<C::dim> per = {}) noexcept {
  const std::uint64_t n = detail::axis_cells<C>(C::max_level);
  const std::uint64_t sa = detail::axis_cells<C>(C::max_level - a.level);
  const std::uint64_t sb = detail::axis_cells<C>(C::max_level - b.level);
  int shared = 0;
  for (std::size_t d = 0; d < static_cast<std::size_t>(C::dim); ++d) {
    const std::uint64_t a0 = a.anchor[d] * sa, b0 = b.anchor[d] * sb;
    const int c = detail::axis_contact(a0, a0 + sa, b0, b0 + sb, n, per[d]);
    if (c == 0) return -1;
    shared += c == 2;
  }
  return shared == C::dim ? -1 : shared;  // overlapping cells do not "touch"
}

/// Where b lies from a along each axis: -1 below, +1 above, 0 where they overlap (periodic
/// axes wrap). For cells in contact: a face neighbour has one non-zero entry.
template <SpaceFillingCurve C>
std::array<int, C::dim> contact_direction(const Cell<C::dim>& a, const Cell<C::dim>& b) noexcept {
  const std::uint64_t n = detail::axis_cells<C>(C::max_level);
  const std::uint64_t sa = detail::axis_cells<C>(C::max_level - a.level);
  const std::uint64_t sb = detail::axis_cells<C>(C::max_level - b.level);
  std::array<int, C::dim> d{};
  for (std::size_t k = 0; k < static_cast<std::size_t>(C::dim); ++k) {
    const std::uint64_t a0 = a.anchor[k] * sa, a1 = a0 + sa, b0 = b.anchor[k] * sb, b1 = b0 + sb;
    if (a0 < b1 && b0 < a1)
      d[k] = 0;
    else if (b1 == a0 || (b1 == n && a0 == 0))
      d[k] = -1;
    else
      d[k] = +1;
  }
  return d;
}

/// Whether disjoint cells a and b are in `contact` (Contact::stencil accepts everything).
template <SpaceFillingCurve C>
bool in_contact(const Cell<C::dim>& a, const Cell<C::dim>& b, Contact contact,
                Periodicity<C::dim> per = {}) noexcept {
  if (contact == Contact::stencil) return true;
  const int k = contact_dimension<C>(a, b, per);
  switch (contact) {
    case Contact::face:
      return k == C::dim - 1;
    case Contact::edge:
      return k >= C::dim - 2 && k >= 0;
    default:
      return k >= 0;
  }
}

}  // namespace irregular
