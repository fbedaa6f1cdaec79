// HTree, refine_leaves and CellTree tests: brute-force oracles on small instances.
#include "test_support.hpp"

#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>

#include <irregular/tree/htree.hpp>
#include <irregular/tree/refine.hpp>
#include <irregular/tree/refine_leaves.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <random>
#include <span>
#include <vector>

// Catch2 names template test cases by __COUNTER__: a namespace per file avoids ODR clashes.
namespace tree_htree_tests {

namespace irr = irregular;
using tree_test::TinyMorton;

namespace {

// Naive pointer-based recursive build: counts keys in each child by scanning every key.
template <class C>
struct Oracle {
  using I = typename C::index_type;
  std::vector<I> starts;
  std::vector<int> levels;
  std::vector<std::size_t> counts;

  template <class Split>
  void build(const std::vector<I>& keys, Split split) {
    struct Node {
      irr::Cell<C::dim> cell;
      I start;
      std::vector<I> keys;
      std::vector<std::unique_ptr<Node>> children;
    };
    auto root = std::make_unique<Node>();
    root->start = 0;
    root->keys = keys;
    auto rec = [&](auto& self, Node& n) -> void {
      const bool can = n.cell.level < C::max_level;
      if (can && split(n.cell, n.keys)) {
        const I cs = irr::detail::span_at<C>(n.cell.level + 1);
        const int nc = irr::detail::children_of<C>;
        for (int k = 0; k < nc; ++k) {
          auto ch = std::make_unique<Node>();
          ch->start = n.start + static_cast<I>(k) * cs;
          ch->cell = C::cell(ch->start / cs, n.cell.level + 1);
          n.children.push_back(std::move(ch));
        }
        for (I key : n.keys) n.children[static_cast<std::size_t>((key - n.start) / cs)]->keys.push_back(key);
        for (auto& ch : n.children) self(self, *ch);
      } else {
        starts.push_back(n.start);
        levels.push_back(n.cell.level);
        counts.push_back(n.keys.size());
      }
    };
    rec(rec, *root);
  }
};

template <class C>
void check_tree_invariants(const irr::HTree<C>& t, const std::vector<typename C::index_type>& keys) {
  using I = typename C::index_type;
  I expect = 0;
  REQUIRE(t.size() >= 1);
  for (std::size_t i = 0; i < t.size(); ++i) {
    CAPTURE(i);
    REQUIRE(t.start(i) == expect);
    REQUIRE(t.start(i) % irr::detail::span_at<C>(t.level(i)) == 0);
    REQUIRE(C::index(t.cell(i)) * irr::detail::span_at<C>(t.level(i)) == t.start(i));
    REQUIRE(t.cell(i).level == t.level(i));
    expect = t.end(i);
    for (std::size_t e = t.element_offset(i); e < t.element_offset(i + 1); ++e) {
      REQUIRE(keys[e] >= t.start(i));
      REQUIRE(keys[e] < t.end(i));
    }
  }
  REQUIRE(expect == irr::detail::index_end<C>());
  REQUIRE(t.element_count() == keys.size());
}

template <class C, class Cond, class OracleSplit>
void compare_with_oracle(const std::vector<typename C::index_type>& keys, Cond cond,
                         OracleSplit osplit) {
  const auto t = irr::HTree<C>::build(keys, cond);
  Oracle<C> o;
  o.build(keys, osplit);
  REQUIRE(t.size() == o.starts.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    CAPTURE(i);
    REQUIRE(t.start(i) == o.starts[i]);
    REQUIRE(t.level(i) == o.levels[i]);
    REQUIRE(t.element_count(i) == o.counts[i]);
  }
  check_tree_invariants(t, keys);
}

}  // namespace

using TinyM2 = TinyMorton<2, 6>;
using TinyM3 = TinyMorton<3, 4>;
using TinyM2s = TinyMorton<2, 3>;
using Mo2 = irr::curve::Morton<2>;
using Mo3 = irr::curve::Morton<3>;
using Hi2 = irr::curve::Hilbert<2>;
using Hi3 = irr::curve::Hilbert<3>;
using Pe2 = irr::curve::Peano<2>;
using Pe3 = irr::curve::Peano<3>;
using Mo2w = irr::curve::Morton<2, irr::uint128_t>;
#define TREE_CURVES TinyM2, TinyM3, TinyM2s, Mo2, Mo3, Hi2, Hi3, Pe2, Pe3

TEMPLATE_TEST_CASE("HTree::build matches a naive pointer-based build", "[tree][htree]",
                   TREE_CURVES, Mo2w) {
  using C = TestType;
  using I = typename C::index_type;
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    constexpr bool tiny = C::max_level <= 6;
    for (std::size_t n : {0u, 1u, 7u, 300u, 2000u}) {
      CAPTURE(seed, n);
      const auto keys = tree_test::clustered_keys<C>(n, seed);
      for (std::size_t k : {0u, 1u, 4u, 16u}) {
        if (!tiny && k == 0 && n > (C::arity == 3 && C::dim == 3 ? 7 : 300)) continue;  // down to max_level for every key: slow oracle
        CAPTURE(k);
        compare_with_oracle<C>(keys, irr::refine::max_elements(k),
                               [k](const irr::Cell<C::dim>&, const std::vector<I>& ks) {
                                 return ks.size() > k;
                               });
      }
      // level limit, uniform refinement (clamped beyond max_level), key-form condition
      compare_with_oracle<C>(keys, irr::refine::max_elements(2, 2),
                             [](const irr::Cell<C::dim>& c, const std::vector<I>& ks) {
                               return ks.size() > 2 && c.level < 2;
                             });
      for (int l : {0, 1, 2, tiny ? C::max_level + 3 : 3}) {
        compare_with_oracle<C>(keys, irr::refine::max_level(l),
                               [l](const irr::Cell<C::dim>& c, const std::vector<I>&) {
                                 return c.level < l;
                               });
      }
      auto spread = [](const irr::Cell<C::dim>&, std::span<const I> ks) {
        return ks.size() > 3 && ks.back() - ks.front() > 5;
      };
      compare_with_oracle<C>(keys, spread,
                             [](const irr::Cell<C::dim>&, const std::vector<I>& ks) {
                               return ks.size() > 3 && ks.back() - ks.front() > 5;
                             });
    }
  }
}

TEMPLATE_TEST_CASE("max_level clamps refinement", "[tree][htree]", TREE_CURVES) {
  using C = TestType;
  using I = typename C::index_type;
  // 10 elements on one finest index: max_elements(1) cannot separate them.
  const I key = irr::detail::index_end<C>() / 3;
  std::vector<I> keys(10, key);
  const auto t = irr::HTree<C>::build(keys, irr::refine::max_elements(1));
  const auto leaf = t.leaf_containing(key);
  CHECK(t.level(leaf) == C::max_level);
  CHECK(t.element_count(leaf) == 10);
  check_tree_invariants(t, keys);
  // unsorted or out-of-range keys are rejected
  std::vector<I> bad{3, 1};
  CHECK_THROWS_AS(irr::HTree<C>::build(bad, irr::refine::max_elements(1)), irr::invalid_argument);
  std::vector<I> far{irr::detail::index_end<C>()};
  CHECK_THROWS_AS(irr::HTree<C>::build(far, irr::refine::max_elements(1)), irr::invalid_argument);
}

TEST_CASE("SortedKeyCounter equals a brute-force count, in curve order and in any order",
          "[tree][refine_leaves]") {
  std::mt19937_64 rng(5);
  for (int rep = 0; rep < 50; ++rep) {
    // Runs of equal keys, gaps and an empty array all occur.
    std::vector<std::uint64_t> keys(rng() % 300);
    for (auto& k : keys) k = rng() % (rep % 2 ? 64 : 4096);
    std::sort(keys.begin(), keys.end());
    irr::SortedKeyCounter<std::uint64_t> count{std::span<const std::uint64_t>(keys)};
    auto brute = [&](std::uint64_t a, std::uint64_t b) {
      return static_cast<std::size_t>(std::count_if(keys.begin(), keys.end(), [&](auto k) { return a <= k && k < b; }));
    };
    std::uint64_t start = 0;
    for (int q = 0; q < 200; ++q) {
      // Mostly non-decreasing starts (as refine_leaves asks), sometimes a jump back.
      if (q % 17 == 16) start = rng() % 4200;
      else start += rng() % 40;
      const std::uint64_t end = start + rng() % (q % 3 ? 16 : 5000);
      CAPTURE(rep, q, start, end);
      REQUIRE(count(irr::IndexInterval<std::uint64_t>{start, end}) == brute(start, end));
    }
  }
}

TEMPLATE_TEST_CASE("refine_leaves over a sub-range emits exactly the full build's leaves",
                   "[tree][refine_leaves]", TREE_CURVES) {
  using C = TestType;
  using I = typename C::index_type;
  const std::uint64_t seed = 11;
  const auto keys = tree_test::clustered_keys<C>(1500, seed);
  const auto cond = irr::refine::max_elements(5);
  const auto t = irr::HTree<C>::build(keys, cond);
  std::mt19937_64 rng(seed);
  const I end = irr::detail::index_end<C>();
  std::uniform_int_distribution<I> u(0, end);
  auto count = irr::count_sorted_keys<I>(keys);
  for (int rep = 0; rep < 200; ++rep) {
    I a = u(rng), b = u(rng);
    if (rep == 0) a = 0, b = end;
    if (a > b) std::swap(a, b);
    CAPTURE(rep, a, b);
    std::vector<I> got;
    std::vector<int> got_levels;
    std::size_t visited_counts = 0;
    irr::refine_leaves<C>(
        irr::IndexInterval<I>{a, b},
        [&](irr::IndexInterval<I> iv) { ++visited_counts; return count(iv); }, cond,
        [&](const irr::Cell<C::dim>& c, I s) {
          REQUIRE(irr::detail::start_of<C>(c) == s);
          got.push_back(s);
          got_levels.push_back(c.level);
        });
    std::vector<I> want;
    std::vector<int> want_levels;
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t.start(i) >= a && t.start(i) < b) {
        want.push_back(t.start(i));
        want_levels.push_back(t.level(i));
      }
    REQUIRE(got == want);
    REQUIRE(got_levels == want_levels);
  }
  // the count callable may also take the cell, or both
  std::size_t n_cell = 0;
  irr::refine_leaves<C>(
      irr::IndexInterval<I>{0, end},
      [&](const irr::Cell<C::dim>& c) { return count(irr::detail::interval_of<C>(c)); }, cond,
      [&](const irr::Cell<C::dim>&, I) { ++n_cell; });
  CHECK(n_cell == t.size());
}

TEMPLATE_TEST_CASE("rebuild_with refines and prunes to the fresh build", "[tree][htree]",
                   TREE_CURVES) {
  using C = TestType;
  using I = typename C::index_type;
  for (std::uint64_t seed : {5u, 6u}) {
    CAPTURE(seed);
    const std::size_t n = std::min<std::size_t>(1200, irr::detail::index_end<C>() / 2);
    auto keys = tree_test::clustered_keys<C>(n, seed);
    const auto cond = irr::refine::max_elements(6);
    auto t = irr::HTree<C>::build(keys, cond);
    // move the elements: new clusters elsewhere
    const auto moved = tree_test::clustered_keys<C>(n, seed + 100);
    const auto st = t.rebuild_with(moved, cond);
    const auto fresh = irr::HTree<C>::build(moved, cond);
    CHECK(t == fresh);
    CHECK(st.refined > 0);
    CHECK(st.pruned > 0);
    check_tree_invariants(t, moved);
    // rebuild with unchanged keys changes nothing
    const auto st2 = t.rebuild_with(moved, cond);
    CHECK(st2.refined == 0);
    CHECK(st2.pruned == 0);
    (void)sizeof(I);
  }
}

TEMPLATE_TEST_CASE("leaf_containing and leaves_overlapping agree with a linear scan",
                   "[tree][htree]", TREE_CURVES) {
  using C = TestType;
  using I = typename C::index_type;
  const std::uint64_t seed = 21;
  const auto keys = tree_test::clustered_keys<C>(800, seed);
  const auto t = irr::HTree<C>::build(keys, irr::refine::max_elements(3));
  std::mt19937_64 rng(seed);
  const I end = irr::detail::index_end<C>();
  std::uniform_int_distribution<I> u(0, end - 1);
  for (int rep = 0; rep < 300; ++rep) {
    const I i = u(rng);
    CAPTURE(rep, i);
    std::size_t lin = 0;
    while (!(t.start(lin) <= i && i < t.end(lin))) ++lin;
    REQUIRE(t.leaf_containing(i) == lin);
    I a = u(rng), b = u(rng);
    if (a > b) std::swap(a, b);
    std::size_t f = t.size(), l = 0;
    for (std::size_t k = 0; k < t.size(); ++k)
      if (t.start(k) < b && a < t.end(k)) {
        f = std::min(f, k);
        l = k + 1;
      }
    const auto got = t.leaves_overlapping({a, b});
    if (a == b) {
      REQUIRE(got.first == got.second);
    } else {
      REQUIRE(got.first == f);
      REQUIRE(got.second == l);
    }
    // cells: is_hnode / find_leaf / hnode loads against the scan
    const int lev = static_cast<int>(rng() % static_cast<std::uint64_t>(C::max_level + 1));
    const I s = irr::detail::ancestor_start<C>(i, lev);
    const auto cell = irr::detail::cell_at<C>(s, lev);
    const bool hn = t.level(lin) >= lev;
    REQUIRE(t.is_hnode(cell) == hn);
    REQUIRE(t.find_leaf(cell).has_value() == (t.level(lin) == lev));
    if (hn) {
      std::size_t cnt = 0;
      for (std::size_t k = 0; k < t.size(); ++k)
        if (t.start(k) >= s && t.end(k) <= s + irr::detail::span_at<C>(lev)) cnt += t.element_count(k);
      REQUIRE(t.hnode_element_count(cell) == cnt);
      REQUIRE(t.hnode_load(cell) == static_cast<double>(cnt));
    } else {
      REQUIRE_THROWS_AS(t.hnode_load(cell), irr::invalid_argument);
    }
  }
}

TEST_CASE("HTree loads, from_leaves validation and assign_elements", "[tree][htree]") {
  using C = TinyMorton<2, 3>;
  using I = C::index_type;
  // root split once, then child 1 split once: 4 + 3 leaves
  std::vector<I> starts{0, 16, 20, 24, 28, 32, 48};
  std::vector<int> levels{1, 2, 2, 2, 2, 1, 1};
  auto t = irr::HTree<C>::from_leaves(starts, levels);
  CHECK(t.size() == 7);
  CHECK(t.element_count() == 0);
  std::vector<double> loads{1, 2, 3, 4, 5, 6, 7};
  t.set_loads(loads);
  CHECK(t.total_load() == 28);
  CHECK(t.hnode_load(irr::detail::cell_at<C>(16, 1)) == 14);
  CHECK(t.hnode_load(irr::Cell<2>{}) == 28);
  std::vector<double> neg{1, 2, 3, -4, 5, 6, 7};
  CHECK_THROWS_AS(t.set_loads(neg), irr::invalid_argument);
  CHECK(t.total_load() == 28);  // a rejected call leaves the object as it was
  std::vector<I> keys{0, 1, 17, 17, 30, 63};
  t.assign_elements(keys);
  CHECK(t.element_count(0) == 2);
  CHECK(t.element_count(1) == 2);
  CHECK(t.element_count(4) == 1);
  CHECK(t.element_count(6) == 1);
  // malformed leaf lists
  CHECK_THROWS_AS(irr::HTree<C>::from_leaves({0, 16, 32}, {1, 1, 1}), irr::invalid_argument);
  CHECK_THROWS_AS(irr::HTree<C>::from_leaves({0, 16, 32, 48}, {1, 1, 1, 4}), irr::invalid_argument);
  CHECK_THROWS_AS(irr::HTree<C>::from_leaves({0, 8, 32, 48}, {1, 1, 1, 1}), irr::invalid_argument);
  CHECK_THROWS_AS(irr::HTree<C>::from_leaves({0, 4, 20, 36}, {2, 1, 1, 1}), irr::invalid_argument);
  CHECK_THROWS_AS(irr::HTree<C>::from_leaves({0, 16, 32, 48, 64}, {1, 1, 1, 1, 1}),
                  irr::invalid_argument);
  CHECK_NOTHROW(irr::HTree<C>::from_leaves({0}, {0}));
  const irr::HTree<C> root;
  CHECK(root.size() == 1);
  CHECK(root.end(0) == irr::detail::index_end<C>());
}

TEMPLATE_TEST_CASE("HTree::sort_keys sorts like std::sort", "[tree][htree]", Mo3, Pe2, Mo2w,
                   TinyM2) {
  using C = TestType;
  using I = typename C::index_type;
  for (std::size_t n : {0u, 5u, 300u, 5000u}) {
    CAPTURE(n);
    std::mt19937_64 rng(71 + n);
    std::vector<I> keys(n);
    for (auto& k : keys) k = static_cast<I>(rng()) % irr::detail::index_end<C>();
    if (n == 5000)
      for (std::size_t i = 0; i < n; i += 3) keys[i] = keys[0];  // many duplicates
    auto want = keys;
    std::sort(want.begin(), want.end());
    irr::HTree<C>::sort_keys(keys);
    REQUIRE(keys == want);
  }
}

}  // namespace tree_htree_tests
