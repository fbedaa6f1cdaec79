// 2:1 balance and CellTree::refine on adaptive trees: the balance against the previous
// implementation (stencil requests pushed per leaf and sorted per level; it was checked against
// the brute-force ripple in test_neighbours.cpp and is kept here as an oracle), a direct check of
// the balance property, the recursive refine against repeated mark-and-adapt passes, and the
// p4est 2.2 count of the cross-check mesh (no p4est needed).
#include "test_support.hpp"

#include <irregular/core/error.hpp>
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>
#include <irregular/tree/balance.hpp>
#include <irregular/tree/cell_tree.hpp>
#include <irregular/tree/neighbours.hpp>
#include <irregular/tree/stencil.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

// Catch2 names template test cases by __COUNTER__: a namespace per file avoids ODR clashes.
namespace tree_balance_tests {

namespace irr = irregular;
namespace det = irregular::detail;

namespace {

// ---- the previous balance, verbatim but for names: the oracle ------------------------------
template <class C>
void old_split_to_required(typename C::index_type start, int level, int target,
                           const typename C::index_type* rlo, const typename C::index_type* rhi,
                           irr::LeafArrays<typename C::index_type>& out) {
  using I = typename C::index_type;
  if (rlo == rhi || level >= target) {
    out.starts.push_back(start);
    out.levels.push_back(static_cast<std::uint8_t>(level));
    return;
  }
  const I cs = det::span_at<C>(level + 1);
  I s = start;
  for (int k = 0; k < det::children_of<C>; ++k, s += cs) {
    const I* mid = std::lower_bound(rlo, rhi, s + cs);
    old_split_to_required<C>(s, level + 1, target, rlo, mid, out);
    rlo = mid;
  }
}

template <class C, class Adj>
irr::LeafArrays<typename C::index_type> old_balance_impl(irr::LeafArrays<typename C::index_type> cur,
                                                         irr::Periodicity<C::dim> per) {
  using I = typename C::index_type;
  int deepest = 0;
  for (auto l : cur.levels) deepest = std::max(deepest, static_cast<int>(l));
  std::vector<I> req;
  irr::LeafArrays<I> next;
  for (int l = deepest; l >= 2; --l) {
    req.clear();
    for (std::size_t i = 0; i < cur.starts.size(); ++i) {
      if (cur.levels[i] != l) continue;
      const irr::Cell<C::dim> parent = det::parent_of<C::dim, C::arity>(det::cell_at<C>(cur.starts[i], l));
      irr::stencil_cells<C, Adj>(parent, per, [&](const irr::Cell<C::dim>& nb) { req.push_back(det::start_of<C>(nb)); });
    }
    if (req.empty()) continue;
    std::sort(req.begin(), req.end());
    req.erase(std::unique(req.begin(), req.end()), req.end());
    next.starts.clear();
    next.levels.clear();
    const I* r = req.data();
    const I* rend = req.data() + req.size();
    for (std::size_t i = 0; i < cur.starts.size(); ++i) {
      const int lv = cur.levels[i];
      const I s = cur.starts[i], e = s + det::span_at<C>(lv);
      while (r != rend && *r < s) ++r;
      const I* q = r;
      while (q != rend && *q < e) ++q;
      old_split_to_required<C>(s, lv, l - 1, r, q, next);
      r = q;
    }
    std::swap(cur, next);
  }
  return cur;
}

template <class C>
irr::LeafArrays<typename C::index_type> old_balance(std::span<const typename C::index_type> starts,
                                                    std::span<const std::uint8_t> levels,
                                                    irr::BalanceKind kind, irr::Periodicity<C::dim> per) {
  irr::LeafArrays<typename C::index_type> in{{starts.begin(), starts.end()}, {levels.begin(), levels.end()}};
  if (kind == irr::BalanceKind::face)
    return old_balance_impl<C, irr::stencil::VonNeumann<C::dim, 1>>(std::move(in), per);
  return old_balance_impl<C, irr::stencil::Moore<C::dim, 1>>(std::move(in), per);
}

// ---- meshes ------------------------------------------------------------------------------
// Split a cell whose centre lies within h (its side) of the sphere |x - centre| = r.
template <int D>
bool near_sphere(const irr::Cell<D>& c, int arity, std::array<double, D> centre, double r) {
  const double h = std::pow(static_cast<double>(arity), -c.level);
  double r2 = 0;
  for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d) {
    const double m = static_cast<double>(c.anchor[d]) * h + h / 2 - centre[d];
    r2 += m * m;
  }
  return std::abs(std::sqrt(r2) - r) < h;
}

// Data: the leaf's own cell, so that wrong child cells or curve states show up.
template <class C>
using CellData = irr::CellTree<C, irr::Cell<C::dim>>;

template <class C>
CellData<C> sphere_tree(int min_level, int max_level, std::array<double, C::dim> centre, double r) {
  auto t = CellData<C>::uniform(min_level, [](const irr::Cell<C::dim>& c) { return c; });
  t.refine([&](const irr::Cell<C::dim>& c) { return near_sphere<C::dim>(c, C::arity, centre, r); }, max_level,
           [](const irr::Cell<C::dim>&, const irr::Cell<C::dim>& child) { return child; });
  return t;
}

// Every leaf at level l >= 2 has every neighbour (kind) of its parent as an hnode: touching
// leaves differ by at most one level. Checked cell by cell through the stencils.
template <class C, class Adj>
void require_balanced(const irr::LeafArrays<typename C::index_type>& b, irr::Periodicity<C::dim> per) {
  for (std::size_t i = 0; i < b.starts.size(); ++i) {
    const int l = b.levels[i];
    if (l < 2) continue;
    const auto parent = det::parent_of<C::dim, C::arity>(det::cell_at<C>(b.starts[i], l));
    irr::stencil_cells<C, Adj>(parent, per, [&](const irr::Cell<C::dim>& nb) {
      const std::size_t k = det::leaf_at<typename C::index_type>(b.starts, det::start_of<C>(nb));
      if (b.levels[k] < l - 1) {
        CAPTURE(i, l, k, static_cast<int>(b.levels[k]));
        FAIL("a leaf touches a leaf two levels finer");
      }
    });
  }
}

using M2 = irr::curve::Morton<2>;
using M3 = irr::curve::Morton<3>;
using H2 = irr::curve::Hilbert<2>;
using H3 = irr::curve::Hilbert<3>;
using P2 = irr::curve::Peano<2>;
using P3 = irr::curve::Peano<3>;

}  // namespace

TEMPLATE_TEST_CASE("face and full balance of adaptive trees equal the previous implementation",
                   "[tree][balance]", M3, H3, P3, M2, H2, P2) {
  using C = TestType;
  constexpr int D = C::dim;
  // Arity 2: levels 2 -> 6 (3D) or 3 -> 9 (2D); Peano: 1 -> 3 (3D) or 1 -> 5 (2D).
  const int lo = C::arity == 3 ? 1 : (D == 3 ? 2 : 3);
  const int hi = C::arity == 3 ? (D == 3 ? 3 : 5) : (D == 3 ? 6 : 9);
  // Two shapes: inside the domain, and across three of its faces (so that wrapping matters).
  std::array<double, D> inside{}, across{};
  inside.fill(0.4);
  across.fill(0.5);
  across[0] = 0.2;
  across[D - 1] = 0.85;
  for (const auto& centre : {inside, across}) {
    const auto t = sphere_tree<C>(lo, hi, centre, 0.3);
    for (std::size_t i = 0; i < t.size(); ++i) REQUIRE(t.data(i) == t.cell(i));
    irr::Periodicity<D> none{}, all{}, first{};
    all.fill(true);
    first[0] = true;
    int grew = 0;  // cases where the balance had work to do
    for (const auto kind : {irr::BalanceKind::face, irr::BalanceKind::full})
      for (const auto& per : {none, all, first}) {
        CAPTURE(centre[0], kind == irr::BalanceKind::full, per[0], per[D - 1]);
        const auto got = irr::balance_leaves<C>(t.starts(), t.levels(), kind, per);
        const auto want = old_balance<C>(t.starts(), t.levels(), kind, per);
        grew += want.starts.size() > t.size();
        REQUIRE(got.starts.size() == want.starts.size());
        REQUIRE(got.starts == want.starts);
        REQUIRE(got.levels == want.levels);
        if (kind == irr::BalanceKind::face)
          require_balanced<C, irr::stencil::VonNeumann<D, 1>>(got, per);
        else
          require_balanced<C, irr::stencil::Moore<D, 1>>(got, per);
      }
    REQUIRE(grew >= 3);
    // CellTree::balance: the same leaves, data made by the refine callback down from the old leaf.
    for (const auto kind : {irr::BalanceKind::face, irr::BalanceKind::full}) {
      auto b = t;
      const std::size_t split = b.balance(kind, [](const irr::Cell<D>&, const irr::Cell<D>& ch) { return ch; });
      const auto want = old_balance<C>(t.starts(), t.levels(), kind, {});
      REQUIRE((split > 0) == (want.starts.size() > t.size()));
      REQUIRE(std::vector<typename C::index_type>(b.starts().begin(), b.starts().end()) == want.starts);
      for (std::size_t i = 0; i < b.size(); ++i) REQUIRE(b.data(i) == b.cell(i));
    }
  }
}

TEMPLATE_TEST_CASE("CellTree::refine gives the tree of repeated mark-and-adapt passes",
                   "[tree][cell_tree]", M2, H2, P2, M3, H3, P3) {
  using C = TestType;
  constexpr int D = C::dim;
  using T = CellData<C>;
  const int lo = 1, hi = C::arity == 3 ? (D == 3 ? 3 : 4) : (D == 3 ? 5 : 8);
  std::array<double, D> centre{};
  centre.fill(0.4);
  auto split = [&](const irr::Cell<D>& c) { return near_sphere<D>(c, C::arity, centre, 0.3); };
  auto child = [](const irr::Cell<D>&, const irr::Cell<D>& ch) { return ch; };
  auto merge = [](std::span<const irr::Cell<D>> ch) { return irr::detail::parent_of<D, C::arity>(ch[0]); };
  auto id = [](const irr::Cell<D>& c) { return c; };

  T a = T::uniform(lo, id);
  for (;;) {
    bool any = false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a.level(i) < hi && split(a.cell(i))) a.mark(i, irr::Mark::refine), any = true;
    if (!any) break;
    a.adapt(child, merge);
  }
  T b = T::uniform(lo, id);
  const std::size_t before = b.size();
  b.mark(0, irr::Mark::coarsen);
  const std::size_t n_split = b.refine(split, hi, child);
  REQUIRE(a.size() > before);
  REQUIRE(std::vector<typename C::index_type>(b.starts().begin(), b.starts().end()) ==
          std::vector<typename C::index_type>(a.starts().begin(), a.starts().end()));
  REQUIRE(std::vector<std::uint8_t>(b.levels().begin(), b.levels().end()) ==
          std::vector<std::uint8_t>(a.levels().begin(), a.levels().end()));
  for (std::size_t i = 0; i < b.size(); ++i) REQUIRE(b.data(i) == b.cell(i));  // child cells and curve states
  REQUIRE(n_split * static_cast<std::size_t>(irr::detail::children_of<C> - 1) == b.size() - before);
  for (const auto m : b.marks()) REQUIRE(m == irr::Mark::keep);
  // Refining again to the same level changes nothing.
  REQUIRE(b.refine(split, hi, child) == 0);
  REQUIRE(b.size() == a.size());
}

TEST_CASE("CellTree::refine: data-aware split, max_level, bad input and throwing callbacks",
          "[tree][cell_tree]") {
  using C = irr::curve::Hilbert<2>;
  using T = irr::CellTree<C, int>;
  // split(cell, data): data counts generations; three more below every leaf.
  auto t = T::uniform(2, 0);
  auto gen = [](const int& p, const irr::Cell<2>&) { return p + 1; };
  REQUIRE(t.refine([](const irr::Cell<2>&, const int& d) { return d < 3; }, 20, gen) == 16 * (1 + 4 + 16));
  REQUIRE(t.size() == 16 * 64);
  for (std::size_t i = 0; i < t.size(); ++i) REQUIRE((t.level(i) == 5 && t.data(i) == 3));
  // max_level clamps an always-true split.
  auto u = T::uniform(1, 7);
  u.refine([](const irr::Cell<2>&) { return true; }, 3, gen);
  REQUIRE(u.size() == 64);
  for (std::size_t i = 0; i < u.size(); ++i) REQUIRE(u.level(i) == 3);
  // Bad max_level: thrown, tree unchanged.
  CHECK_THROWS_AS(u.refine([](const irr::Cell<2>&) { return true; }, C::max_level + 1, gen), irr::invalid_argument);
  CHECK_THROWS_AS(u.refine([](const irr::Cell<2>&) { return true; }, -1, gen), irr::invalid_argument);
  REQUIRE(u.size() == 64);
  // A callback that throws part way: tree unchanged.
  auto v = T::uniform(2, 5);
  for (std::size_t i = 0; i < v.size(); ++i) v.data(i) = static_cast<int>(i);
  int calls = 0;
  auto boom = [&](const int& p, const irr::Cell<2>&) {
    if (++calls == 40) throw std::runtime_error("boom");
    return p;
  };
  CHECK_THROWS_AS(v.refine([](const irr::Cell<2>& c) { return c.level < 4; }, 10, boom), std::runtime_error);
  REQUIRE(v.size() == 16);
  for (std::size_t i = 0; i < v.size(); ++i) REQUIRE((v.level(i) == 2 && v.data(i) == static_cast<int>(i)));
}

TEST_CASE("CellTree::refine with data that cannot simply be copied equals mark-and-adapt passes",
          "[tree][cell_tree]") {
  using C = irr::curve::Hilbert<2>;
  using T = irr::CellTree<C, std::string>;
  // The data name the path from the root; split reads them (split(cell, data)).
  auto name = [](const std::string& p, const irr::Cell<2>& c) {
    return p + std::to_string(c.anchor[0] % 2 + 2 * (c.anchor[1] % 2));
  };
  auto split = [](const irr::Cell<2>& c, const std::string& d) {
    return c.level < 7 && (d.size() < 3 || d[d.size() - 1] == d[d.size() - 2]);
  };
  auto merge = [](std::span<const std::string> ch) { return ch[0].substr(0, ch[0].size() - 1); };
  T a = T::uniform(1, std::string("r"));
  for (;;) {
    bool any = false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a.level(i) < 7 && split(a.cell(i), a.data(i))) a.mark(i, irr::Mark::refine), any = true;
    if (!any) break;
    a.adapt(name, merge);
  }
  T b = T::uniform(1, std::string("r"));
  b.refine(split, 7, name);
  REQUIRE(b.size() == a.size());
  REQUIRE(b.size() > 4);
  for (std::size_t i = 0; i < b.size(); ++i) {
    REQUIRE(b.cell(i) == a.cell(i));
    REQUIRE(b.data(i) == a.data(i));
  }
  // A throwing init part way leaves the tree and its data as they were.
  T c = T::uniform(2, std::string("x"));
  int calls = 0;
  auto boom = [&](const std::string& p, const irr::Cell<2>& ch) {
    if (++calls == 30) throw std::runtime_error("boom");
    return name(p, ch);
  };
  CHECK_THROWS_AS(c.refine(split, 7, boom), std::runtime_error);
  REQUIRE(c.size() == 16);
  for (std::size_t i = 0; i < c.size(); ++i) REQUIRE((c.level(i) == 2 && c.data(i) == "x"));
}

// The cross-check: p4est 2.2, unit square from uniform level 6, quadrants whose centre
// lies within h of the circle of radius 0.3 centred (0.5, 0.5) refined up to level 12, full
// (corner) balance: 62,932 quadrants. Same doubles on both sides (dyadic anchors).
TEST_CASE("the p4est cross-check mesh has p4est's 62,932 leaves", "[tree][balance][p4est]") {
  using C = irr::curve::Morton<2>;
  using T = irr::CellTree<C, char>;
  auto split = [](const irr::Cell<2>& c) {
    const double h = std::ldexp(1.0, -c.level);
    const double mx = static_cast<double>(c.anchor[0]) * h + h / 2 - 0.5;
    const double my = static_cast<double>(c.anchor[1]) * h + h / 2 - 0.5;
    return std::abs(std::sqrt(mx * mx + my * my) - 0.3) < h;
  };
  auto zero = [](const char&, const irr::Cell<2>&) { return char{0}; };
  auto t = T::uniform(6, char{0});
  t.refine(split, 12, zero);
  auto face = t;
  t.balance(irr::BalanceKind::full, zero);
  CHECK(t.size() == 62932);
  face.balance(irr::BalanceKind::face, zero);
  CHECK(face.size() < t.size());  // corners add leaves
  // The same through mark-and-adapt passes.
  auto a = T::uniform(6, char{0});
  for (bool any = true; any;) {
    any = false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a.level(i) < 12 && split(a.cell(i))) a.mark(i, irr::Mark::refine), any = true;
    if (any) a.adapt(zero, [](std::span<const char>) { return char{0}; });
  }
  a.balance(irr::BalanceKind::full, zero);
  CHECK(a.size() == 62932);
}

}  // namespace tree_balance_tests
