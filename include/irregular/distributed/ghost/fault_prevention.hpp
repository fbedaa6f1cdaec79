// Fault prevention (baiardi-collecting-remote-data §3.2): each owner applies the inverse stencil
// to its own leaves and sends, unasked, every leaf that another rank may read, knowing only the
// replicated ownership map and the levels that read (baiardi-2001 §5.2: I(op, l)). Safe (no
// needed leaf is missed) and approximate: the surplus is counted as useless leaves. Exact when
// every leaf reads what it touches (detail/touching_ranks.hpp).
#pragma once

#include <irregular/distributed/ghost/collection.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

namespace irregular::ghost {

namespace detail {

/// Every offset v != 0 with each v_d between 0 and o_d / arity (rounded away from 0) for some
/// inverse offset o: where readers finer than a leaf may sit, in units of the leaf's own size. A
/// reader one level finer reaches o of its own cells, o / arity of the leaf's, deeper ones less.
template <Stencil S>
std::vector<std::array<int, static_cast<std::size_t>(S::dim)>> hull_offsets(int arity) {
  constexpr auto D = static_cast<std::size_t>(S::dim);
  std::vector<std::array<int, D>> out;
  for (auto o : S::inverse_offsets) {
    for (auto& x : o) x = x > 0 ? (x + arity - 1) / arity : -((-x + arity - 1) / arity);
    std::array<int, D> v{};
    for (std::size_t d = 0; d < D; ++d) v[d] = std::min(0, o[d]);
    while (true) {
      if (std::any_of(v.begin(), v.end(), [](int x) { return x != 0; })) out.push_back(v);
      std::size_t d = 0;
      while (d < D && ++v[d] > std::max(0, o[d])) v[d] = std::min(0, o[d]), ++d;
      if (d == D) break;
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// Calls f(cell) for c shifted by each offset (at c's level), wrapping periodic axes and
/// dropping cells outside the domain along the others.
template <SpaceFillingCurve C, class Offsets, class F>
void for_each_shift(const Cell<C::dim>& c, const Offsets& offsets, Periodicity<C::dim> per, F&& f) {
  const auto n = static_cast<std::int64_t>(irregular::detail::axis_cells<C>(c.level));
  for (const auto& o : offsets) {
    Cell<C::dim> nb;
    nb.level = c.level;
    bool inside = true;
    for (std::size_t d = 0; d < static_cast<std::size_t>(C::dim) && inside; ++d) {
      std::int64_t x = static_cast<std::int64_t>(c.anchor[d]) + o[d];
      if (x < 0 || x >= n) {
        inside = per[d];
        x = ((x % n) + n) % n;
      }
      nb.anchor[d] = static_cast<coord_t>(x);
    }
    if (inside) f(nb);
  }
}

/// The ranks holding coarser readers that touch `cell` (contact face, edge or corner): a
/// coarser reader beside ancestor a touches the leaf only if the leaf lies on a's face toward
/// it; a leaf off every face of a is off every face of a's ancestors too.
template <Stencil S, SpaceFillingCurve C, OwnershipMap M>
void touching_coarse_readers(const Cell<C::dim>& cell, const LevelRange& readers,
                             const Periodicity<C::dim>& periodic, const M& map, int me,
                             std::vector<int>& ranks) {
  const auto faces = [&](const Cell<C::dim>& a, std::array<int, C::dim>& side) {
    const coord_t s = irregular::detail::axis_cells<C>(cell.level - a.level);
    bool any = false;
    for (std::size_t d = 0; d < static_cast<std::size_t>(C::dim); ++d) {
      side[d] = (cell.anchor[d] == a.anchor[d] * s ? 1 : 0) |
                (cell.anchor[d] + 1 == (a.anchor[d] + 1) * s ? 2 : 0);
      any = any || side[d] != 0;
    }
    return any;
  };
  std::array<int, C::dim> side{};
  auto a = cell;
  while (a.level > std::max(0, readers.min)) {  // readers are no coarser than readers.min
    a = irregular::detail::parent_of<C::dim, C::arity>(a);
    if (!faces(a, side)) break;
    if (a.level > readers.max) continue;
    const auto n = static_cast<std::int64_t>(irregular::detail::axis_cells<C>(a.level));
    for (const auto& o : S::inverse_offsets) {
      bool touches = true;  // along each axis the reader overlaps a, or lies beside the leaf's face
      for (std::size_t d = 0; d < static_cast<std::size_t>(C::dim) && touches; ++d) {
        std::int64_t k = o[d];
        if (periodic[d]) k = ((k % n) + n) % n;
        const bool up = k == 1, down = k == -1 || (periodic[d] && k == n - 1);
        touches = k == 0 || (up && (side[d] & 2)) || (down && (side[d] & 1));
      }
      if (!touches) continue;
      const std::array<std::array<int, C::dim>, 1> one{o};
      detail::for_each_shift<C>(a, one, periodic, [&](const Cell<C::dim>& nb) {
        irregular::detail::for_each_remote_holder(map, nb, me, true,
                                                  [&](int r) { ranks.push_back(r); });
      });
    }
  }
}

}  // namespace detail

/// Fault prevention (baiardi-collecting-remote-data §3.2): each owner applies the inverse stencil
/// to its leaves and sends, unasked, every leaf another rank may read. Safe and approximate: the
/// surplus arrives as useless leaves.
struct FaultPrevention {
  /// The strategy's name in reports.
  [[nodiscard]] static constexpr const char* name() noexcept { return "fault prevention"; }
  static constexpr bool ships_values = true;  ///< takes CollectionInput::payload

  /// Collective over in.comm.
  template <Stencil S, SpaceFillingCurve C, OwnershipMap M>
  GhostLayer<C> collect(const CollectionInput<C, M>& in) const {
    const auto t0 = std::chrono::steady_clock::now();
    const int me = in.comm.rank(), p = in.comm.size();
    const auto& leaves = in.leaves;
    const auto& map = in.map;
    static const auto hull = detail::hull_offsets<S>(C::arity);
    const LevelRange readers = in.options.readers;
    std::vector<std::vector<std::size_t>> sends(static_cast<std::size_t>(p));
    irregular::detail::Shipment<C> ship(in.payload);
    if (irregular::detail::owner_decides<S, M>(in.options.contact, readers)) {  // exact
      irregular::detail::touching_sends(in, sends);
      return irregular::detail::finish<C, S>(in, sends, ship, &GhostStats::prevention, GhostStats{},
                                             t0, nullptr, true);
    }
    const irregular::detail::Boundary<C> boundary(map, me, leaves, irregular::detail::reach<S>());
    // A cell a coarser reader would be: a leaf, so whole on one rank.
    auto coarse_readers = [&](const Cell<C::dim>& cell, std::vector<int>& out) {
      detail::for_each_shift<C>(cell, S::inverse_offsets, in.periodic, [&](const Cell<C::dim>& nb) {
        irregular::detail::for_each_remote_holder(map, nb, me, true,
                                                  [&](int r) { out.push_back(r); });
      });
    };
    // Readers coarser than a private root are the same for every leaf in it: found once per root.
    std::vector<std::vector<int>> root_readers;
    std::vector<char> root_done;
    std::vector<int> ranks;
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      const int level = leaves.levels()[i];
      if (!in.options.levels.contains(level)) continue;
      const auto cell = leaves.cell(i);
      ranks.clear();
      if (!boundary.interior(i, cell)) {
        // Same-level readers sit only where the cell is a leaf; finer ones anywhere in it.
        auto holders = [&](bool whole_only) {
          return [&, whole_only](const Cell<C::dim>& nb) {
            irregular::detail::for_each_remote_holder(map, nb, me, whole_only,
                                                      [&](int r) { ranks.push_back(r); });
          };
        };
        if (S::same_level && readers.contains(level))
          detail::for_each_shift<C>(cell, S::inverse_offsets, in.periodic, holders(true));
        if (S::coarser && readers.max > level)
          detail::for_each_shift<C>(cell, hull, in.periodic, holders(false));
      }
      if (S::finer && readers.min < level) {
        if (in.options.contact != Contact::stencil) {
          detail::touching_coarse_readers<S, C>(cell, readers, in.periodic, map, me, ranks);
        } else {
          int floor = 0;  // levels below this are the root's ancestors
          if (boundary.known()) {
            const std::size_t k = boundary.root_of(i);
            floor = boundary.root(k).level;
            if (root_readers.size() <= k) root_readers.resize(k + 1), root_done.resize(k + 1, 0);
            if (!root_done[k]) {
              root_done[k] = 1;
              auto a = boundary.root(k);
              while (a.level > std::max(0, readers.min)) {
                a = irregular::detail::parent_of<C::dim, C::arity>(a);
                if (a.level <= readers.max) coarse_readers(a, root_readers[k]);
              }
            }
            ranks.insert(ranks.end(), root_readers[k].begin(), root_readers[k].end());
          }
          auto a = cell;
          while (a.level > std::max(floor, readers.min)) {
            a = irregular::detail::parent_of<C::dim, C::arity>(a);
            if (a.level <= readers.max && !boundary.interior(i, a)) coarse_readers(a, ranks);
          }
        }
      }
      std::sort(ranks.begin(), ranks.end());
      ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
      for (int r : ranks) sends[static_cast<std::size_t>(r)].push_back(i);
    }
    return irregular::detail::finish<C, S>(in, sends, ship, &GhostStats::prevention, GhostStats{},
                                           t0, &boundary);
  }
};

}  // namespace irregular::ghost
