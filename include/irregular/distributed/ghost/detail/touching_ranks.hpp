// Fault prevention made exact by the replicated map (baiardi-collecting-remote-data §3.2: "if the
// information in the replicated H-Tree allows an accurate approximation"): when every leaf reads
// exactly the leaves it touches, an owner knows from the segments alone which ranks read a leaf.
// Leaves tile the domain and each is held whole, so a leaf of rank r touches cell q iff r owns a
// finest cell beside q; the search descends into q's neighbours only where a segment ends.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/ghost/layer.hpp>
#include <irregular/tree/contact.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/stencil.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace irregular::detail {

/// Whether S reads every leaf touching a reader of any level: its offsets hold every neighbour
/// of reach 1 and it reads same-level, coarser and finer leaves.
template <Stencil S>
constexpr bool reads_every_touching_leaf() {
  if (!(S::same_level && S::coarser && S::finer)) return false;
  constexpr auto D = static_cast<std::size_t>(S::dim);
  std::array<int, D> o{};
  for (std::size_t d = 0; d < D; ++d) o[d] = -1;
  while (true) {
    bool zero = true, found = false;
    for (int x : o) zero = zero && x == 0;
    for (const auto& s : S::offsets) {
      bool same = true;
      for (std::size_t d = 0; d < D; ++d) same = same && s[d] == o[d];
      found = found || same;
    }
    if (!zero && !found) return false;
    std::size_t d = 0;
    while (d < D && ++o[d] > 1) o[d] = -1, ++d;
    if (d == D) return true;
  }
}

/// Whether a collection under S in `contact` with leaves of every level reading, under a map of
/// type M, reads exactly the touching leaves of every local leaf: then TouchingRanks decides each
/// owner's sends without an extension.
template <Stencil S, class M>
[[nodiscard]] constexpr bool owner_decides(Contact contact, LevelRange readers) {
  if constexpr (!M::contiguous_segments || !reads_every_touching_leaf<S>()) {
    return false;
  } else {
    return contact != Contact::stencil && readers.min <= 0 &&
           readers.max >= M::curve_type::max_level;
  }
}

/// The ranks other than `me` holding a leaf in `contact` with a cell, from a contiguous map.
template <SpaceFillingCurve C, class M>
class TouchingRanks {
  static constexpr auto D = static_cast<std::size_t>(C::dim);
  using Offset = std::array<int, D>;

 public:
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

  /// Calls f(r) for every rank r != me with a leaf in contact with q (a rank may come twice).
  template <class F>
  void operator()(const Cell<C::dim>& q, F&& f) {
    const auto n = static_cast<std::int64_t>(detail::axis_cells<C>(q.level));
    for (const Offset& o : directions_) {
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
      if (inside) visit(nb, o, f);
    }
  }

 private:
  // The part of nb that lies beside q (toward -o): one owner decides it, else its children
  // beside q are visited.
  template <class F>
  void visit(const Cell<C::dim>& nb, const Offset& o, F& f) {
    stack_.clear();
    stack_.push_back(nb);
    while (!stack_.empty()) {
      const Cell<C::dim> c = stack_.back();
      stack_.pop_back();
      const auto iv = curve::hnode_interval<C>(c);
      const int a = map_.owner(iv.start);
      if (a == map_.owner(iv.end - 1)) {
        if (a != me_) f(a);
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
  }

  const M& map_;
  int me_;
  Periodicity<C::dim> per_;
  std::vector<Offset> directions_;
  std::vector<Cell<C::dim>> stack_;
};

}  // namespace irregular::detail
