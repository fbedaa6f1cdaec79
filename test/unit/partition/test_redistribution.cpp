// Tests of the redistribution problem (kaddoura-ranka §3.4): the paper's example, brute force
// over all arrangements as the oracle of the exact DP, the paper's O(p^3) MinimizeCostRedistribution
// against the incremental version, overlap matching, best_arrangement (the optimum where it is
// cheap) and the §4 efficiency measure.
#include <irregular/partition/efficiency.hpp>
#include <irregular/partition/minimize_cost_redistribution.hpp>
#include <irregular/partition/optimal_arrangement.hpp>
#include <irregular/partition/overlap_matching.hpp>
#include <irregular/partition/redistribution.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

namespace ip = irregular::partition;

namespace {

std::vector<int> identity(std::size_t p) {
  std::vector<int> v(p);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// The paper's instance: 100 elements, capacities 0.27 0.18 0.34 0.07 0.14 -> 0.10 0.13 0.29 0.24 0.24.
ip::Redistribution paper_example() {
  const std::vector<double> before{0.27, 0.18, 0.34, 0.07, 0.14}, after{0.10, 0.13, 0.29, 0.24, 0.24};
  const auto old_sizes = ip::proportional_sizes(100, before), new_sizes = ip::proportional_sizes(100, after);
  REQUIRE(old_sizes == std::vector<std::uint64_t>{27, 18, 34, 7, 14});
  REQUIRE(new_sizes == std::vector<std::uint64_t>{10, 13, 29, 24, 24});
  const auto id = identity(5);
  return ip::Redistribution(id, old_sizes, new_sizes);
}

// Independent oracle: the overlap of an arrangement by explicit element-by-element ownership.
std::uint64_t brute_overlap(const ip::Redistribution& inst, const std::vector<int>& order) {
  std::vector<int> old_owner(inst.total()), new_owner(inst.total());
  for (std::size_t r = 0; r < inst.processors(); ++r) {
    const auto [lo, hi] = inst.old_interval(static_cast<int>(r));
    for (auto i = lo; i < hi; ++i) old_owner[i] = static_cast<int>(r);
  }
  std::uint64_t at = 0;
  for (int r : order)
    for (std::uint64_t k = 0; k < inst.new_size(r); ++k) new_owner[at++] = r;
  std::uint64_t same = 0;
  for (std::size_t i = 0; i < old_owner.size(); ++i) same += old_owner[i] == new_owner[i];
  return same;
}

// Messages by brute force: distinct (old owner, new owner) pairs that differ.
std::size_t brute_messages(const ip::Redistribution& inst, const std::vector<int>& order) {
  const std::size_t p = inst.processors();
  std::vector<char> pair(p * p, 0);
  std::vector<int> old_owner(inst.total());
  for (std::size_t r = 0; r < p; ++r) {
    const auto [lo, hi] = inst.old_interval(static_cast<int>(r));
    for (auto i = lo; i < hi; ++i) old_owner[i] = static_cast<int>(r);
  }
  std::uint64_t at = 0;
  for (int r : order)
    for (std::uint64_t k = 0; k < inst.new_size(r); ++k, ++at)
      if (old_owner[at] != r) pair[static_cast<std::size_t>(old_owner[at]) * p + static_cast<std::size_t>(r)] = 1;
  return static_cast<std::size_t>(std::count(pair.begin(), pair.end(), 1));
}

std::uint64_t brute_best(const ip::Redistribution& inst) {
  auto order = identity(inst.processors());
  std::uint64_t best = 0;
  do best = std::max(best, brute_overlap(inst, order));
  while (std::next_permutation(order.begin(), order.end()));
  return best;
}

ip::Redistribution random_instance(std::mt19937_64& rng, std::size_t p, std::uint64_t total, bool shuffle_old) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> a(p), b(p);
  for (auto& x : a) x = u(rng) < 0.1 ? 0.0 : u(rng);
  for (auto& x : b) x = u(rng) < 0.1 ? 0.0 : u(rng);
  a[0] += 0.01;
  b[0] += 0.01;
  auto old_order = identity(p);
  if (shuffle_old) std::shuffle(old_order.begin(), old_order.end(), rng);
  return ip::Redistribution(old_order, ip::proportional_sizes(total, a), ip::proportional_sizes(total, b));
}

}  // namespace

TEST_CASE("the paper's example of §3.4: both arrangements, MCR and the optimum", "[redistribution]") {
  const auto inst = paper_example();
  const std::vector<int> original{0, 1, 2, 3, 4}, paper{0, 3, 1, 2, 4};
  // The paper prints 29 overlapped elements / 5 messages and 65 / 3. Exact interval arithmetic on
  // the 100 elements gives 31 / 6 and 64 / 5 (brute force below agrees); the paper's arrangement
  // is nevertheless the unique optimum, and moves 36 elements instead of 69.
  const auto a = inst.evaluate(original), b = inst.evaluate(paper);
  CHECK(a.overlap == 31);
  CHECK(a.messages == 6);
  CHECK(a.receivers == 4);
  CHECK(b.overlap == 64);
  CHECK(b.messages == 5);
  CHECK(b.receivers == 3);
  CHECK(brute_overlap(inst, original) == 31);
  CHECK(brute_overlap(inst, paper) == 64);
  CHECK(brute_messages(inst, original) == 6);
  CHECK(brute_messages(inst, paper) == 5);
  // No arrangement reaches the printed 65.
  CHECK(brute_best(inst) == 64);
  CHECK(ip::optimal_arrangement(inst) == paper);
  // MCR as printed (max and jmax afresh per processor) from the original arrangement.
  const auto mcr = ip::minimize_cost_redistribution_paper(inst, original);
  CHECK(mcr == std::vector<int>{3, 1, 0, 2, 4});
  CHECK(inst.evaluate(mcr).overlap == 53);
  CHECK(ip::minimize_cost_redistribution(inst, original) == mcr);
  const auto zm = ip::overlap_matching(inst);
  CHECK(brute_overlap(inst, zm) == inst.evaluate(zm).overlap);
}

TEST_CASE("MOVE of Figure 7", "[redistribution]") {
  std::vector<int> l{1, 3, 5, 4, 6};
  ip::move_processor(l, 5, 0);
  CHECK(l == std::vector<int>{5, 1, 3, 4, 6});
  ip::move_processor(l, 5, 4);
  CHECK(l == std::vector<int>{1, 3, 4, 6, 5});
  ip::move_processor(l, 3, 2);
  CHECK(l == std::vector<int>{1, 4, 3, 6, 5});
}

TEST_CASE("overlap, messages and the exact optimum against brute force, p <= 8", "[redistribution]") {
  const std::uint64_t seed = 20261122;
  std::mt19937_64 rng(seed);
  INFO("seed " << seed);
  for (int trial = 0; trial < 120; ++trial) {
    const std::size_t p = 1 + static_cast<std::size_t>(trial % 8);
    const auto inst = random_instance(rng, p, 40 + static_cast<std::uint64_t>(trial), trial % 3 == 0);
    INFO("trial " << trial << " p " << p);
    auto order = identity(p);
    std::shuffle(order.begin(), order.end(), rng);
    const auto c = inst.evaluate(order);
    REQUIRE(c.overlap == brute_overlap(inst, order));
    REQUIRE(c.messages == brute_messages(inst, order));
    const auto best = ip::optimal_arrangement(inst);
    REQUIRE(inst.overlap(best) == brute_best(inst));
    const auto mcr = ip::minimize_cost_redistribution_paper(inst, inst.old_order());
    REQUIRE(inst.overlap(mcr) == brute_overlap(inst, mcr));
    REQUIRE(inst.overlap(mcr) <= inst.overlap(best));
    // Each step keeps the processor's best position, staying put included: never worse than before.
    REQUIRE(inst.overlap(mcr) >= inst.overlap(inst.old_order()));
    REQUIRE(ip::minimize_cost_redistribution(inst, inst.old_order()) == mcr);
    const auto zm = ip::overlap_matching(inst);
    std::vector<int> sorted = zm;
    std::sort(sorted.begin(), sorted.end());
    REQUIRE(sorted == identity(p));
    REQUIRE(inst.overlap(zm) == brute_overlap(inst, zm));
  }
}

TEST_CASE("the incremental MCR returns the paper's arrangement on larger instances", "[redistribution]") {
  std::mt19937_64 rng(7);
  for (std::size_t p : {9, 16, 33, 64, 100}) {
    for (int trial = 0; trial < 3; ++trial) {
      const auto inst = random_instance(rng, p, 1000 * p, trial == 1);
      REQUIRE(ip::minimize_cost_redistribution(inst, inst.old_order()) ==
              ip::minimize_cost_redistribution_paper(inst, inst.old_order()));
      if (p <= 16) REQUIRE(inst.overlap(ip::optimal_arrangement(inst)) >=
                           inst.overlap(ip::minimize_cost_redistribution(inst, inst.old_order())));
    }
  }
}

TEST_CASE("overlap matching is Zoltan's renumbering when sizes stay equal", "[redistribution]") {
  // Equal new sizes, old blocks rotated by one: every part matches its old holder exactly.
  const std::vector<int> old{1, 2, 3, 0};
  const std::vector<std::uint64_t> sizes{10, 10, 10, 10};
  const ip::Redistribution inst(old, sizes, sizes);
  const auto zm = ip::overlap_matching(inst);
  CHECK(zm == old);
  CHECK(inst.overlap(zm) == 40);
  CHECK(inst.evaluate(zm).messages == 0);
}

TEST_CASE("bad redistribution input", "[redistribution]") {
  const std::vector<std::uint64_t> s{1, 2};
  CHECK_THROWS_AS(ip::Redistribution(std::vector<int>{0, 0}, s, s), irregular::invalid_argument);
  CHECK_THROWS_AS(ip::Redistribution(std::vector<int>{0, 2}, s, s), irregular::invalid_argument);
  CHECK_THROWS_AS(ip::Redistribution(std::vector<int>{0, 1}, s, std::vector<std::uint64_t>{1, 1}),
                  irregular::invalid_argument);
  const ip::Redistribution inst(std::vector<int>{0, 1}, s, s);
  CHECK_THROWS_AS(inst.evaluate(std::vector<int>{1, 1}), irregular::invalid_argument);
  CHECK_THROWS_AS(ip::minimize_cost_redistribution(inst, std::vector<int>{0}), irregular::invalid_argument);
  CHECK_THROWS_AS(ip::proportional_sizes(10, std::vector<double>{0.0, 0.0}), irregular::invalid_argument);
  CHECK_THROWS_AS(ip::proportional_sizes(10, std::vector<double>{1.0, -1.0}), irregular::invalid_argument);
  CHECK_THROWS_AS(ip::proportional_sizes(10, std::vector<double>{1.0, std::nan("")}), irregular::invalid_argument);
  CHECK(ip::proportional_sizes(10, std::vector<double>{1.0, 1.0, 1.0}) == std::vector<std::uint64_t>{4, 3, 3});
}

TEST_CASE("§4 efficiency in a nonuniform environment", "[efficiency]") {
  // Capacity-proportional loads: E = 1.
  CHECK(ip::nonuniform_efficiency(std::vector<double>{2, 4, 6}, std::vector<double>{1, 2, 3}) == Approx(1.0));
  // Equal loads on capacities 1 and 3: T = 2 (the slow one), sum c = 4, W = 4 -> E = 0.5.
  CHECK(ip::nonuniform_efficiency(std::vector<double>{2, 2}, std::vector<double>{1, 3}) == Approx(0.5));
  // The paper's Table 4 form: one processor alone is efficiency 1.
  CHECK(ip::nonuniform_efficiency(std::vector<double>{5}, std::vector<double>{0.3}) == Approx(1.0));
  // Measured: 100 units in 1 s and 100 units in 3 s -> c = 100 + 33.3, T = 3, E = 200 / 400 = 0.5.
  CHECK(ip::measured_efficiency(std::vector<double>{100, 100}, std::vector<double>{1, 3}) == Approx(0.5));
  CHECK(ip::measured_efficiency(std::vector<double>{100, 300}, std::vector<double>{1, 1}) == Approx(1.0));
  CHECK_THROWS_AS(ip::nonuniform_efficiency(std::vector<double>{1, 1}, std::vector<double>{0, 0}),
                  irregular::invalid_argument);
  CHECK_THROWS_AS(ip::nonuniform_efficiency(std::vector<double>{1, 1}, std::vector<double>{1, 0}),
                  irregular::invalid_argument);
  CHECK_THROWS_AS(ip::nonuniform_efficiency(std::vector<double>{1, -1}, std::vector<double>{1, 1}),
                  irregular::invalid_argument);
  CHECK_THROWS_AS(ip::measured_efficiency(std::vector<double>{1, std::numeric_limits<double>::infinity()},
                                          std::vector<double>{1, 1}),
                  irregular::invalid_argument);
}

TEST_CASE("best_arrangement is the optimum where it is cheap; MCR by name stays the heuristic", "[redistribution][best]") {
  // The paper's example: the heuristic keeps 53 elements where 64 is possible.
  const auto inst = paper_example();
  const std::vector<int> original{0, 1, 2, 3, 4};
  CHECK(inst.overlap(ip::best_arrangement(inst)) == 64);
  CHECK(brute_overlap(inst, ip::best_arrangement(inst)) == brute_best(inst));
  CHECK(inst.overlap(ip::minimize_cost_redistribution(inst, original)) == 53);
  // The worst case an independent check found over 600 random instances (p = 2-7): MCR keeps
  // 0.595 of the optimal overlap.
  const std::vector<std::uint64_t> old_sizes{25, 15, 27, 34, 152}, new_sizes{50, 23, 122, 38, 20};
  const std::vector<int> old_order{4, 0, 1, 3, 2};
  const ip::Redistribution worst(old_order, old_sizes, new_sizes);
  const std::uint64_t best = brute_best(worst);
  const auto mcr = ip::minimize_cost_redistribution(worst, old_order);
  CHECK(static_cast<double>(worst.overlap(mcr)) / static_cast<double>(best) == Approx(0.595).margin(0.0005));
  CHECK(brute_overlap(worst, ip::best_arrangement(worst)) == best);
  // Above the cutoff it is the heuristic from the old arrangement.
  CHECK(ip::best_arrangement(worst, 4) == mcr);
  std::mt19937_64 rng(29);
  const std::size_t cut = ip::best_arrangement_exact_max_processors;
  for (std::size_t p : {cut, cut + 1}) {
    const auto r = random_instance(rng, p, 1000, true);
    const auto expect = p <= cut ? ip::optimal_arrangement(r) : ip::minimize_cost_redistribution(r, r.old_order());
    CHECK(ip::best_arrangement(r) == expect);
  }
  CHECK_THROWS_AS(ip::best_arrangement(inst, ip::optimal_arrangement_max_processors + 1), irregular::invalid_argument);
}
