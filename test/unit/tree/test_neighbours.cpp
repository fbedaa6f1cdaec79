// Stencil, neighbour search, 2:1 balance and CellTree tests: brute-force geometric oracles in
// integer coordinates at the finest level, on unbalanced trees.
#include "test_support.hpp"

#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>
#include <irregular/tree/balance.hpp>
#include <irregular/tree/cell_tree.hpp>
#include <irregular/tree/htree.hpp>
#include <irregular/tree/neighbours.hpp>
#include <irregular/tree/stencil.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <numeric>
#include <vector>

// Catch2 names template test cases by __COUNTER__: a namespace per file avoids ODR clashes.
namespace tree_neighbours_tests {

namespace irr = irregular;
using tree_test::TinyMorton;

namespace {

struct NoLevels {
  static constexpr int dim = 2;
  static constexpr std::array<std::array<int, 2>, 1> offsets{{{1, 0}}};
  static constexpr std::array<std::array<int, 2>, 1> inverse_offsets{{{-1, 0}}};
};
struct WrongWidth {
  static constexpr int dim = 3;
  static constexpr std::array<std::array<int, 2>, 1> offsets{{{1, 0}}};
  static constexpr std::array<std::array<int, 2>, 1> inverse_offsets{{{-1, 0}}};
  static constexpr bool same_level = true, coarser = true, finer = true;
};
static_assert(!irr::Stencil<NoLevels>);
static_assert(!irr::Stencil<WrongWidth>);
static_assert(!irr::Stencil<int>);
static_assert(irr::Stencil<irr::stencil::Offsets<2, std::array{1, 0}, std::array{0, 2}>>);
static_assert(irr::Stencil<irr::stencil::Inverse<irr::stencil::Moore<2>>>);
static_assert(irr::stencil::Moore<3, 2>::offsets.size() == 124);
static_assert(irr::stencil::VonNeumann<3, 2>::offsets.size() == 24);

// Box of a leaf in finest integer coordinates: [lo, hi) per axis.
template <class C>
struct IBox {
  std::array<std::int64_t, C::dim> lo, hi;
};
template <class C>
IBox<C> box_of(const irr::Cell<C::dim>& c) {
  const auto sz = static_cast<std::int64_t>(irr::detail::axis_cells<C>(C::max_level - c.level));
  IBox<C> b;
  for (std::size_t d = 0; d < static_cast<std::size_t>(C::dim); ++d) {
    b.lo[d] = static_cast<std::int64_t>(c.anchor[d]) * sz;
    b.hi[d] = b.lo[d] + sz;
  }
  return b;
}

// Brute-force neighbours: every leaf whose box meets the shifted (wrapped) box of a stencil cell.
template <class C, class S, class Tree>
std::vector<std::size_t> brute_neighbours(const Tree& t, std::size_t leaf,
                                          irr::Periodicity<C::dim> per) {
  const auto a = box_of<C>(t.cell(leaf));
  const auto N = static_cast<std::int64_t>(irr::detail::axis_cells<C>(C::max_level));
  const std::int64_t sz = a.hi[0] - a.lo[0];
  std::vector<std::size_t> r;
  for (const auto& o : S::offsets) {
    IBox<C> s;
    bool inside = true;
    for (std::size_t d = 0; d < static_cast<std::size_t>(C::dim); ++d) {
      std::int64_t lo = a.lo[d] + o[d] * sz;
      if (lo < 0 || lo >= N) {
        if (!per[d]) inside = false;
        lo = ((lo % N) + N) % N;
      }
      s.lo[d] = lo;
      s.hi[d] = lo + sz;
    }
    if (!inside) continue;
    for (std::size_t j = 0; j < t.size(); ++j) {
      if (j == leaf) continue;
      const auto b = box_of<C>(t.cell(j));
      bool meet = true;
      for (std::size_t d = 0; d < static_cast<std::size_t>(C::dim); ++d)
        meet = meet && b.lo[d] < s.hi[d] && s.lo[d] < b.hi[d];
      if (meet) r.push_back(j);
    }
  }
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

template <class C, class S>
void check_neighbours_vs_brute(const irr::HTree<C>& t, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> buf;
  for (int pmask = 0; pmask < (1 << C::dim); pmask += (1 << C::dim) - 1) {  // none, all periodic
    irr::Periodicity<C::dim> per{};
    for (int d = 0; d < C::dim; ++d) per[static_cast<std::size_t>(d)] = (pmask >> d) & 1;
    for (int rep = 0; rep < (C::dim == 2 ? 40 : 20); ++rep) {
      const std::size_t leaf = static_cast<std::size_t>(rng() % t.size());
      CAPTURE(seed, pmask, leaf, t.size());
      const auto want = brute_neighbours<C, S>(t, leaf, per);
      irr::neighbours<S>(t, leaf, buf, per);
      REQUIRE(buf == want);
      REQUIRE((irr::neighbours<C, S>(t, leaf, per)) == want);
    }
  }
}

using M2 = irr::curve::Morton<2>;
using M3 = irr::curve::Morton<3>;
using H2 = irr::curve::Hilbert<2>;
using H3 = irr::curve::Hilbert<3>;
using P2 = irr::curve::Peano<2>;
using P3 = irr::curve::Peano<3>;
using TinyM2 = TinyMorton<2, 5>;
using TinyM3 = TinyMorton<3, 3>;

}  // namespace

TEMPLATE_TEST_CASE("neighbours agree with brute force on unbalanced trees", "[tree][neighbours]",
                   TinyM2, TinyM3, M2, M3, H2, H3, P2, P3) {
  using C = TestType;
  for (std::uint64_t seed : {31u, 32u}) {
    const auto keys = tree_test::clustered_keys<C>(C::dim == 2 ? 400 : (C::arity == 3 ? 150 : 300), seed);
    const auto t = irr::HTree<C>::build(keys, irr::refine::max_elements(4, C::max_level));
    check_neighbours_vs_brute<C, irr::stencil::VonNeumann<C::dim, 1>>(t, seed);
    check_neighbours_vs_brute<C, irr::stencil::VonNeumann<C::dim, 2>>(t, seed);
    check_neighbours_vs_brute<C, irr::stencil::Moore<C::dim, 1>>(t, seed);
    check_neighbours_vs_brute<C, irr::stencil::Moore<C::dim, 2>>(t, seed);
    if constexpr (C::dim == 2)
      check_neighbours_vs_brute<C, irr::stencil::Offsets<2, std::array{3, 0}, std::array{-1, 1}>>(
          t, seed);
    else
      check_neighbours_vs_brute<C, irr::stencil::Offsets<3, std::array{0, 0, 2}, std::array{1, -1, 0}>>(
          t, seed);
  }
  // the root alone has no neighbours, even periodic (its stencil cells are itself)
  const irr::HTree<C> root;
  irr::Periodicity<C::dim> all{};
  all.fill(true);
  CHECK(irr::neighbours<irr::stencil::Moore<C::dim>>(root, 0, all).empty());
}

TEST_CASE("stencil inverse: b reads a iff a is read by b", "[tree][stencil]") {
  using C = TinyM2;
  using S = irr::stencil::Offsets<2, std::array{2, 0}, std::array{1, -1}, std::array{0, 1}>;
  using Inv = irr::stencil::Inverse<S>;
  STATIC_REQUIRE(Inv::offsets == S::inverse_offsets);
  STATIC_REQUIRE(irr::stencil::Inverse<Inv>::offsets == S::offsets);
  for (std::size_t k = 0; k < S::offsets.size(); ++k)
    for (std::size_t d = 0; d < 2; ++d) CHECK(S::inverse_offsets[k][d] == -S::offsets[k][d]);
  const auto t = irr::HTree<C>::build(std::span<const C::index_type>{}, irr::refine::max_level(3));
  for (irr::Periodicity<2> per : {irr::Periodicity<2>{false, false}, irr::Periodicity<2>{true, false}}) {
    std::vector<std::vector<std::size_t>> fw(t.size()), bw(t.size());
    for (std::size_t a = 0; a < t.size(); ++a) {
      fw[a] = irr::neighbours<S>(t, a, per);
      bw[a] = irr::neighbours<Inv>(t, a, per);
    }
    for (std::size_t a = 0; a < t.size(); ++a)
      for (std::size_t b = 0; b < t.size(); ++b) {
        const bool ab = std::binary_search(fw[a].begin(), fw[a].end(), b);
        const bool ba = std::binary_search(bw[b].begin(), bw[b].end(), a);
        CAPTURE(a, b, per[0]);
        REQUIRE(ab == ba);
      }
  }
}

TEST_CASE("neighbours on a rank's local leaves and the uncovered stencil intervals",
          "[tree][neighbours]") {
  using C = TinyM2;
  using I = C::index_type;
  using S = irr::stencil::Moore<2, 1>;
  const auto keys = tree_test::clustered_keys<C>(300, 41);
  const auto t = irr::HTree<C>::build(keys, irr::refine::max_elements(3));
  const std::size_t f = t.size() / 3, l = 2 * t.size() / 3;  // the "local" segment
  const auto starts = t.starts().subspan(f, l - f);
  const auto levels = t.levels().subspan(f, l - f);
  std::vector<std::size_t> local;
  for (std::size_t leaf = f; leaf < l; ++leaf) {
    CAPTURE(leaf);
    irr::neighbours_of_cell<C, S>(starts, levels, t.cell(leaf), {}, local);
    std::vector<std::size_t> want;
    for (auto j : irr::neighbours<S>(t, leaf))
      if (j >= f && j < l) want.push_back(j - f);
    REQUIRE(local == want);
    // uncovered parts: disjoint from local leaves; with the covered parts they fill each cell
    I uncovered = 0, expected = 0;
    irr::stencil_cells<C, S>(t.cell(leaf), {}, [&](const irr::Cell<2>& nb) {
      const auto iv = irr::detail::interval_of<C>(nb);
      I covered = 0;
      for (std::size_t j = 0; j < starts.size(); ++j) {
        const I a = std::max(iv.start, starts[j]);
        const I b = std::min(iv.end, starts[j] + irr::detail::span_at<C>(levels[j]));
        if (a < b) covered += b - a;
      }
      expected += iv.size() - covered;
    });
    irr::uncovered_stencil_intervals<C, S>(starts, levels, t.cell(leaf), {},
                                           [&](irr::IndexInterval<I> iv) {
                                             REQUIRE(iv.start < iv.end);
                                             for (std::size_t j = 0; j < starts.size(); ++j)
                                               REQUIRE(!iv.overlaps({starts[j], starts[j] + irr::detail::span_at<C>(levels[j])}));
                                             uncovered += iv.size();
                                           });
    REQUIRE(uncovered == expected);
  }
}

namespace {

// Does leaf box b touch leaf box a (closed boxes meet, interiors disjoint), as a face or at all?
template <class C>
bool touches(const IBox<C>& a, const IBox<C>& b, irr::BalanceKind kind, irr::Periodicity<C::dim> per) {
  const auto N = static_cast<std::int64_t>(irr::detail::axis_cells<C>(C::max_level));
  int combos = 1;
  for (int d = 0; d < C::dim; ++d) combos *= 3;
  for (int m = 0; m < combos; ++m) {
    int mm = m, n_touch = 0;
    bool ok = true;
    for (std::size_t d = 0; d < static_cast<std::size_t>(C::dim); ++d) {
      const int sh = mm % 3 - 1;
      mm /= 3;
      if (sh != 0 && !per[d]) { ok = false; break; }
      const std::int64_t lo = b.lo[d] + sh * N, hi = b.hi[d] + sh * N;
      if (lo < a.hi[d] && a.lo[d] < hi) continue;               // overlap along d
      if (lo == a.hi[d] || hi == a.lo[d]) { ++n_touch; continue; }  // touch along d
      ok = false;
      break;
    }
    if (!ok || n_touch == 0) continue;
    if (kind == irr::BalanceKind::full || n_touch == 1) return true;
  }
  return false;
}

// Naive ripple: split any leaf that touches a leaf two or more levels finer, until none does.
template <class C>
std::vector<std::pair<typename C::index_type, int>> brute_balance(
    std::vector<std::pair<typename C::index_type, int>> leaves, irr::BalanceKind kind,
    irr::Periodicity<C::dim> per) {
  using I = typename C::index_type;
  bool changed = true;
  while (changed) {
    changed = false;
    for (std::size_t i = 0; i < leaves.size() && !changed; ++i)
      for (std::size_t j = 0; j < leaves.size() && !changed; ++j) {
        if (leaves[i].second < leaves[j].second + 2) continue;
        const auto bi = box_of<C>(irr::detail::cell_at<C>(leaves[i].first, leaves[i].second));
        const auto bj = box_of<C>(irr::detail::cell_at<C>(leaves[j].first, leaves[j].second));
        if (!touches<C>(bi, bj, kind, per)) continue;
        const auto [s, l] = leaves[j];
        leaves.erase(leaves.begin() + static_cast<std::ptrdiff_t>(j));
        const I cs = irr::detail::span_at<C>(l + 1);
        for (int k = 0; k < irr::detail::children_of<C>; ++k)
          leaves.push_back({s + static_cast<I>(k) * cs, l + 1});
        std::sort(leaves.begin(), leaves.end());
        changed = true;
      }
  }
  return leaves;
}

template <class C>
void check_balance(const irr::HTree<C>& t, irr::BalanceKind kind, irr::Periodicity<C::dim> per) {
  using I = typename C::index_type;
  const auto b = irr::balance(t, kind, per);
  std::vector<std::pair<I, int>> in, got;
  for (std::size_t i = 0; i < t.size(); ++i) in.push_back({t.start(i), t.level(i)});
  for (std::size_t i = 0; i < b.size(); ++i) got.push_back({b.start(i), b.level(i)});
  REQUIRE(got == brute_balance<C>(in, kind, per));
  // balanced: touching leaves differ by at most one level (brute force over all pairs)
  for (std::size_t i = 0; i < b.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j)
      if (b.level(i) >= b.level(j) + 2) {
        CAPTURE(i, j);
        REQUIRE(!touches<C>(box_of<C>(b.cell(i)), box_of<C>(b.cell(j)), kind, per));
      }
  // every input leaf is a union of output leaves
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto [f, l] = b.leaves_overlapping(t.interval(i));
    REQUIRE(b.start(f) == t.start(i));
    REQUIRE(b.end(l - 1) == t.end(i));
    for (std::size_t k = f; k < l; ++k) REQUIRE(b.level(k) >= t.level(i));
  }
}

}  // namespace

TEMPLATE_TEST_CASE("2:1 balance is balanced and the minimal refinement", "[tree][balance]",
                   TinyM2, TinyM3, H2, H3, P2, P3) {
  using C = TestType;
  using I = typename C::index_type;
  // keep the brute-force ripple small: cap the depth on the real curves
  constexpr int cap = C::arity == 3 ? (C::dim == 2 ? 4 : 2) : (C::dim == 2 ? 5 : 3);
  constexpr int lim = std::min(C::max_level, cap);
  for (std::uint64_t seed : {51u, 52u, 53u}) {
    CAPTURE(seed);
    // very unbalanced: few tight keys refined to max_level
    std::mt19937_64 rng(seed);
    std::vector<I> keys;
    for (int k = 0; k < 3; ++k) keys.push_back(static_cast<I>(rng() % irr::detail::index_end<C>()));
    std::sort(keys.begin(), keys.end());
    const auto t = irr::HTree<C>::build(keys, irr::refine::max_elements(0, lim));
    const auto t2 = irr::HTree<C>::build(tree_test::clustered_keys<C>(60, seed),
                                         irr::refine::max_elements(2, lim));
    for (auto kind : {irr::BalanceKind::face, irr::BalanceKind::full}) {
      irr::Periodicity<C::dim> none{}, all{};
      all.fill(true);
      check_balance<C>(t, kind, none);
      check_balance<C>(t, kind, all);
      check_balance<C>(t2, kind, none);
    }
  }
}

namespace {
struct Mass {
  double m = 0;
  irr::Cell<2> cell{};
};
}  // namespace

TEST_CASE("CellTree adapt keeps data consistent and conserves sums", "[tree][cell_tree]") {
  using C = TinyMorton<2, 5>;
  using T = irr::CellTree<C, Mass>;
  constexpr int nc = 4;
  auto t = T::uniform(2, [](const irr::Cell<2>& c) { return Mass{1.0, c}; });
  REQUIRE(t.size() == 16);
  auto refine = [](const Mass& p, const irr::Cell<2>& child) { return Mass{p.m / nc, child}; };
  auto coarsen = [](std::span<const Mass> ch) {
    double s = 0;
    for (const auto& x : ch) s += x.m;
    return Mass{s, irr::detail::parent_of<2, 2>(ch[0].cell)};
  };
  auto total = [&] {
    double s = 0;
    for (const auto& x : t.data()) s += x.m;
    return s;
  };
  std::mt19937_64 rng(61);
  for (int step = 0; step < 30; ++step) {
    CAPTURE(step);
    std::vector<irr::Mark> marks(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) {
      const auto r = rng() % 4;
      marks[i] = r == 0 && t.level(i) < C::max_level ? irr::Mark::refine
                 : r >= 2                           ? irr::Mark::coarsen
                                                    : irr::Mark::keep;
      t.mark(i, marks[i]);
    }
    std::map<std::pair<C::index_type, int>, irr::Mark> old;
    for (std::size_t i = 0; i < t.size(); ++i) old[{t.start(i), t.level(i)}] = marks[i];
    const double before = total();
    const auto st = t.adapt(refine, coarsen);
    REQUIRE(std::abs(total() - before) < 1e-9);
    std::vector<C::index_type> s(t.starts().begin(), t.starts().end());
    std::vector<int> l(t.levels().begin(), t.levels().end());
    REQUIRE_NOTHROW(irr::HTree<C>::from_leaves(s, l));  // still a sorted tiling
    std::size_t n_ref = 0, n_coarse = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      REQUIRE(t.data(i).cell == t.cell(i));
      REQUIRE(t.mark(i) == irr::Mark::keep);
      const auto key = std::make_pair(t.start(i), t.level(i));
      if (old.count(key)) {
        REQUIRE(old[key] != irr::Mark::refine);
        continue;
      }
      // new leaf: a child of a refined leaf or the parent of a coarsened family
      const auto par = std::make_pair(irr::detail::ancestor_start<C>(t.start(i), t.level(i) - 1),
                                      t.level(i) - 1);
      if (old.count(par)) {
        REQUIRE(old[par] == irr::Mark::refine);
        n_ref += (t.start(i) == par.first);
      } else {
        const auto cs = irr::detail::span_at<C>(t.level(i) + 1);
        for (int k = 0; k < nc; ++k) {
          const auto ck = std::make_pair(t.start(i) + static_cast<C::index_type>(k) * cs, t.level(i) + 1);
          REQUIRE(old.count(ck) == 1);
          REQUIRE(old[ck] == irr::Mark::coarsen);
        }
        ++n_coarse;
      }
    }
    REQUIRE(n_ref == st.refined);
    REQUIRE(n_coarse == st.coarsened);
    // complete families all marked coarsen must have been merged
    for (const auto& [key, m] : old) {
      if (m != irr::Mark::coarsen || key.second == 0 || key.first % irr::detail::span_at<C>(key.second - 1) != 0) continue;
      bool all = true;
      for (int k = 0; k < nc; ++k) {
        const auto ck = std::make_pair(key.first + static_cast<C::index_type>(k) * irr::detail::span_at<C>(key.second), key.second);
        all = all && old.count(ck) && old[ck] == irr::Mark::coarsen;
      }
      if (all) REQUIRE(t.find_leaf(irr::detail::cell_at<C>(key.first, key.second - 1)).has_value());
    }
  }
  // balance keeps sums and gives balance_leaves' tree
  const double before = total();
  const auto bl = irr::balance_leaves<C>(t.starts(), t.levels(), irr::BalanceKind::full);
  t.balance(irr::BalanceKind::full, refine);
  REQUIRE(std::abs(total() - before) < 1e-9);
  REQUIRE(std::vector<C::index_type>(t.starts().begin(), t.starts().end()) == bl.starts);
  for (std::size_t i = 0; i < t.size(); ++i) REQUIRE(t.data(i).cell == t.cell(i));
}

TEST_CASE("CellTree rejects refinement beyond max_level and bad input", "[tree][cell_tree]") {
  using C = TinyMorton<2, 2>;
  using T = irr::CellTree<C, int>;
  CHECK_THROWS_AS(T::uniform(3, 0), irr::invalid_argument);
  CHECK_THROWS_AS(T::uniform(-1, 0), irr::invalid_argument);
  auto t = T::uniform(2, 7);
  std::vector<irr::Mark> marks(t.size(), irr::Mark::keep);
  marks[5] = irr::Mark::refine;
  auto refine = [](const int& p, const irr::Cell<2>&) { return p; };
  auto coarsen = [](std::span<const int> ch) { return ch[0]; };
  CHECK_THROWS_AS(t.adapt(marks, refine, coarsen), irr::invalid_argument);
  CHECK(t.size() == 16);  // unchanged
  std::vector<irr::Mark> short_marks(3);
  CHECK_THROWS_AS(t.adapt(short_marks, refine, coarsen), irr::invalid_argument);
  CHECK_THROWS_AS(T::from_leaves({0}, {0}, {1, 2}), irr::invalid_argument);
  // coarsening everything twice gives the root
  std::vector<irr::Mark> all(t.size(), irr::Mark::coarsen);
  t.adapt(all, refine, coarsen);
  CHECK(t.size() == 4);
  std::vector<irr::Mark> all4(4, irr::Mark::coarsen);
  t.adapt(all4, refine, coarsen);
  CHECK(t.size() == 1);
  CHECK(t.level(0) == 0);
}

}  // namespace tree_neighbours_tests
