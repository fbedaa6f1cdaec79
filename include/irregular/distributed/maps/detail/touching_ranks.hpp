// The ranks whose leaves touch a cell, from a map of curve segments alone: leaves tile the
// domain and each is held whole, so a leaf of rank r touches cell q iff r owns a finest cell
// beside q. The search descends into q's neighbours only where a segment ends. Serves the
// segment map's neighbour ranks and the ghost collections under touching reads.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/tree/contact.hpp>
#include <irregular/tree/detail/curve_math.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace irregular::detail {

/// The ranks other than `me` holding a leaf in `contact` with a cell, from a map of curve
/// segments (`owner(index)`).
template <SpaceFillingCurve C, class M>
class TouchingRanks {
  static constexpr auto D = static_cast<std::size_t>(C::dim);
  using Offset = std::array<int, D>;

 public:
  /// A set of directions: bit k for the offset whose digits (o_d + 1) in base 3 spell k.
  using Directions = std::uint32_t;
  /// Every direction.
  static constexpr Directions every = ~Directions{0};

  TouchingRanks(const M& map, int me, Contact contact, Periodicity<C::dim> per)
      : map_(map), me_(me), per_(per) {
    // Face contact needs a shared (D-1)-face: only directions with one non-zero component;
    // edge contact (3D) at most two; corner contact every direction.
    const int most = contact == Contact::face ? 1 : contact == Contact::edge ? 2 : C::dim;
    Offset o{};
    for (auto& x : o) x = -1;
    while (true) {
      int nonzero = 0;
      for (int x : o) nonzero += x != 0;
      if (nonzero > 0 && nonzero <= most) directions_.push_back(o);
      std::size_t d = 0;
      while (d < D && ++o[d] > 1) o[d] = -1, ++d;
      if (d == D) break;
    }
  }

  /// Calls f(r) for every rank r != me with a leaf in contact with q (a rank may come twice),
  /// looking only in the directions of `only`; returns those where it found one.
  template <class F>
  Directions operator()(const Cell<C::dim>& q, F&& f, Directions only = every) {
    const auto n = static_cast<std::int64_t>(detail::axis_cells<C>(q.level));
    Directions found = 0;
    for (const Offset& o : directions_) {
      if (!((only >> bit(o)) & 1)) continue;
      Cell<C::dim> nb;
      nb.level = q.level;
      bool inside = true;
      for (std::size_t d = 0; d < D && inside; ++d) {
        std::int64_t x = static_cast<std::int64_t>(q.anchor[d]) + o[d];
        if (x < 0 || x >= n) {
          inside = per_[d];
          x = ((x % n) + n) % n;
        }
        nb.anchor[d] = static_cast<coord_t>(x);
      }
      if (inside && visit(nb, o, f)) found |= Directions{1} << bit(o);
    }
    return found;
  }

  /// The directions worth looking in from `child`, when `hot` are those where its parent met
  /// another rank: the part beside the child in direction o lies inside the parent or inside the
  /// part beside the parent in direction o', o with the axes it does not leave the parent along
  /// set to 0.
  [[nodiscard]] Directions inherit(Directions hot, const Cell<C::dim>& child) const {
    Directions out = 0;
    for (const Offset& o : directions_) {
      Offset up{};
      bool leaves = false;
      for (std::size_t d = 0; d < D; ++d) {
        const int pos = static_cast<int>(child.anchor[d] % static_cast<coord_t>(C::arity));
        const bool across = pos + o[d] < 0 || pos + o[d] >= C::arity;
        up[d] = across ? o[d] : 0;
        leaves = leaves || across;
      }
      if (leaves && ((hot >> bit(up)) & 1)) out |= Directions{1} << bit(o);
    }
    return out;
  }

 private:
  // The part of nb that lies beside q (toward -o): one owner decides it, else its children
  // beside q are visited.
  static int bit(const Offset& o) {
    int k = 0;
    for (std::size_t d = D; d-- > 0;) k = 3 * k + o[d] + 1;
    return k;
  }

  template <class F>
  bool visit(const Cell<C::dim>& nb, const Offset& o, F& f) {
    bool found = false;
    stack_.clear();
    stack_.push_back(nb);
    while (!stack_.empty()) {
      const Cell<C::dim> c = stack_.back();
      stack_.pop_back();
      const auto iv = curve::hnode_interval<C>(c);
      const int a = map_.owner(iv.start);
      if (a == map_.owner(iv.end - 1)) {
        if (a != me_) {
          f(a);
          found = true;
        }
        continue;
      }
      // Children beside q: along an axis with o_d = +1 the lowest layer, -1 the highest, 0 all.
      std::array<int, D> k{}, lo{}, hi{};
      for (std::size_t d = 0; d < D; ++d) {
        lo[d] = o[d] == -1 ? C::arity - 1 : 0;
        hi[d] = o[d] == 1 ? 0 : C::arity - 1;
        k[d] = lo[d];
      }
      while (true) {
        Cell<C::dim> child;
        child.level = c.level + 1;
        for (std::size_t d = 0; d < D; ++d)
          child.anchor[d] =
              c.anchor[d] * static_cast<coord_t>(C::arity) + static_cast<coord_t>(k[d]);
        stack_.push_back(child);
        std::size_t d = 0;
        while (d < D && ++k[d] > hi[d]) k[d] = lo[d], ++d;
        if (d == D) break;
      }
    }
    return found;
  }

  const M& map_;
  int me_;
  Periodicity<C::dim> per_;
  std::vector<Offset> directions_;
  std::vector<Cell<C::dim>> stack_;
};

}  // namespace irregular::detail
