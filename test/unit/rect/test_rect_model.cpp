// Tests of the rect model: prefix sums, validation, owner lookup, metrics, generators, file IO,
// bad input.
#include <catch2/catch.hpp>
#include <cmath>
#include <irregular/rect/generators.hpp>
#include <irregular/rect/hierarchical.hpp>
#include <irregular/rect/jagged.hpp>
#include <irregular/rect/load_matrix.hpp>
#include <irregular/rect/matrix_io.hpp>
#include <irregular/rect/metrics.hpp>
#include <irregular/rect/partition.hpp>
#include <limits>
#include <random>
#include <sstream>

#include "oracles.hpp"

using namespace irregular::rect;
using namespace rect_test;

TEST_CASE("LoadGrid box loads equal brute-force sums in 2D and 3D", "[rect][model]") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const std::size_t n1 = 1 + rng() % 6, n2 = 1 + rng() % 6, n3 = 1 + rng() % 4;
  std::vector<std::int32_t> v(n1 * n2 * n3);
  for (auto& x : v) x = static_cast<std::int32_t>(rng() % 1000);
  LoadVolume<std::int32_t> g({n1, n2, n3}, v);
  BruteHier<std::int32_t, 3> brute{g, {}};
  for (int t = 0; t < 200; ++t) {
    Rect<3> r;
    for (int d = 0; d < 3; ++d) {
      std::size_t a = rng() % (g.extent(d) + 1), b = rng() % (g.extent(d) + 1);
      r.lo[d] = std::min(a, b);
      r.hi[d] = std::max(a, b);
    }
    REQUIRE(g.load(r) == brute.load(r));
  }
  REQUIRE(g.total() == brute.load(g.box()));
  const auto proj = g.projection(1);
  for (std::size_t j = 0; j < n2; ++j) {
    Rect<3> r = g.box();
    r.lo[1] = j;
    r.hi[1] = j + 1;
    REQUIRE(proj[j] == brute.load(r));
  }
  // 2D with 64-bit loads uses 128-bit sums without overflow
  LoadMatrix<std::uint64_t> big({2, 2}, {1ull << 62, 1ull << 62, 1ull << 62, 1ull << 62});
  REQUIRE(big.total() == (irregular::uint128_t{1} << 64));
}

TEST_CASE("LoadGrid rejects negative, NaN and malformed input", "[rect][model][error]") {
  REQUIRE_THROWS_AS(LoadMatrix<int>({2, 2}, {1, 2, -3, 4}), irregular::invalid_argument);
  REQUIRE_THROWS_WITH(LoadMatrix<int>({2, 2}, {1, 2, -3, 4}), Catch::Contains("(1, 0)"));
  REQUIRE_THROWS_AS(LoadMatrix<double>({1, 2}, {1.0, std::nan("")}), irregular::error);
  REQUIRE_THROWS_AS(LoadMatrix<double>({1, 1}, {std::numeric_limits<double>::infinity()}),
                    irregular::error);
  REQUIRE_THROWS_AS(LoadMatrix<int>({0, 2}, {}), irregular::error);
  REQUIRE_THROWS_AS(LoadMatrix<int>({2, 2}, {1, 2, 3}), irregular::error);
}

TEST_CASE("validate accepts exact covers and rejects overlaps and gaps", "[rect][model]") {
  const Rect<2> box{{0, 0}, {4, 5}};
  std::vector<Rect<2>> ok{{{0, 0}, {2, 5}}, {{2, 0}, {4, 3}}, {{2, 3}, {4, 5}}, {{1, 1}, {1, 4}}};
  REQUIRE_NOTHROW(validate(ok, box));
  auto gap = ok;
  gap[1].hi[1] = 2;
  REQUIRE_THROWS_AS(validate(gap, box), irregular::invalid_argument);
  auto dup = ok;
  dup.push_back(ok[0]);
  REQUIRE_THROWS_AS(validate(dup, box), irregular::invalid_argument);
  // an overlap and a gap of equal area: area sums agree, the check must still fail
  std::vector<Rect<2>> shifted{
      {{0, 0}, {2, 5}}, {{1, 0}, {3, 3}}, {{2, 3}, {4, 5}}, {{3, 0}, {4, 3}}};
  REQUIRE_THROWS_AS(validate(shifted, box), irregular::invalid_argument);
  std::vector<Rect<2>> outside{{{0, 0}, {4, 6}}};
  REQUIRE_THROWS_AS(validate(outside, box), irregular::invalid_argument);
  // random partitions from the algorithms, mutated by one boundary step
  std::mt19937_64 rng(7);
  for (int t = 0; t < 50; ++t) {
    CAPTURE(t);
    auto g = random_matrix(rng, 3 + rng() % 6, 3 + rng() % 6, 0, 9);
    auto p = hier_relaxed(g, 2 + rng() % 9);
    REQUIRE_NOTHROW(validate(p));
    const std::size_t k = rng() % p.parts.size();
    if (p.parts[k].empty()) continue;
    auto bad = p.parts;
    const int d = static_cast<int>(rng() % 2);
    if (bad[k].hi[d] < g.extent(d))
      ++bad[k].hi[d];
    else
      --bad[k].hi[d];
    REQUIRE_THROWS_AS(validate(bad, p.box), irregular::invalid_argument);
  }
}

TEST_CASE("validate is exact in 3D", "[rect][model]") {
  const Rect<3> box{{0, 0, 0}, {2, 2, 2}};
  std::vector<Rect<3>> ok{{{0, 0, 0}, {1, 2, 2}}, {{1, 0, 0}, {2, 1, 2}}, {{1, 1, 0}, {2, 2, 2}}};
  REQUIRE_NOTHROW(validate(ok, box));
  auto bad = ok;
  bad[2].lo[2] = 1;
  REQUIRE_THROWS(validate(bad, box));
}

TEST_CASE("owner() finds the part containing each cell", "[rect][model]") {
  std::mt19937_64 rng(11);
  for (int t = 0; t < 30; ++t) {
    CAPTURE(t);
    auto g = random_matrix(rng, 1 + rng() % 7, 1 + rng() % 7, 0, 5);
    const std::size_t P = 1 + rng() % 60;  // often more parts than cells
    for (const auto& p : {hier_rb(g, P), jag_m_heur(g, P), jag_pq_heur(g, P)}) {
      REQUIRE(p.parts.size() == P);
      REQUIRE(p.tree.leaf_count() == P);
      for (std::size_t i = 0; i < g.extent(0); ++i)
        for (std::size_t j = 0; j < g.extent(1); ++j) {
          const auto o = p.owner({i, j});
          REQUIRE(o < P);
          REQUIRE(p.parts[o].contains({i, j}));
        }
    }
  }
}

TEST_CASE("metrics: part loads, Lmax and imbalance", "[rect][model]") {
  LoadMatrix<int> g({2, 3}, {1, 2, 3, 4, 5, 6});
  Partition<2> p;
  p.box = g.box();
  p.parts = {{{0, 0}, {2, 1}}, {{0, 1}, {2, 3}}};
  REQUIRE(part_loads(g, p) == std::vector<std::uint64_t>{5, 16});
  REQUIRE(max_load(g, p) == 16);
  REQUIRE(imbalance(g, p) == Approx(16.0 / 10.5 - 1));
  LoadMatrix<int> zero({2, 2}, {0, 0, 0, 0});
  REQUIRE(imbalance(zero, hier_rb(zero, 3)) == 0.0);
}

TEST_CASE("generators are seeded and follow their class", "[rect][model]") {
  auto a = uniform_matrix(40, 30, 1.5, 99), b = uniform_matrix(40, 30, 1.5, 99),
       c = uniform_matrix(40, 30, 1.5, 100);
  REQUIRE(a.values() == b.values());
  REQUIRE(a.values() != c.values());
  const auto [mn, mx] = std::minmax_element(a.values().begin(), a.values().end());
  REQUIRE(static_cast<double>(*mx) / static_cast<double>(*mn) <= 1.5 + 1e-12);
  REQUIRE(*mn >= 1000u);
  // diagonal: mean load near the diagonal dominates the mean far from it
  auto d = peak_matrix(64, 64, Instance::diagonal, 5);
  double near = 0, far = 0;
  for (std::size_t i = 0; i < 64; ++i) {
    near += d({i, i});
    far += d({i, (i + 32) % 64});
  }
  REQUIRE(near > 10 * far);
  // peak: the largest load sits near a single point, multi-peak has several local maxima
  for (auto kind : {Instance::peak, Instance::multi_peak}) {
    auto m = make_instance(kind, 50, 50, 3);
    REQUIRE(m.total() > 0);
    REQUIRE(make_instance(kind, 50, 50, 3).values() == m.values());
  }
  REQUIRE_THROWS_AS(uniform_matrix(4, 4, 0.5, 1), irregular::error);
}

TEST_CASE("matrix files round-trip and malformed ones name the line", "[rect][model][io]") {
  auto g = make_instance(Instance::peak, 7, 5, 1);
  std::stringstream s;
  save_loads(s, g);
  REQUIRE(load_loads<std::uint32_t, 2>(s).values() == g.values());
  LoadVolume<double> v({2, 1, 3}, {0.5, 1.25, 0, 3, 1e-9, 7});
  std::stringstream s3;
  save_loads(s3, v);
  REQUIRE(load_loads<double, 3>(s3).values() == v.values());

  auto parse = [](const std::string& text) {
    std::istringstream in(text);
    return load_loads<int, 2>(in);
  };
  REQUIRE(parse("# comment\nirregular-loads 2 2 2\n1 2 # row 0\n3 4\n").total() == 10);
  REQUIRE_THROWS_AS(parse("loads 2 2 2\n1 2 3 4\n"), irregular::parse_error);
  REQUIRE_THROWS_WITH(parse("irregular-loads 2 2 2\n1 2\n3 x\n"), Catch::Contains("line 3"));
  REQUIRE_THROWS_WITH(parse("irregular-loads 2 2 2\n1 2\n3\n"), Catch::Contains("found 3"));
  REQUIRE_THROWS_AS(parse("irregular-loads 3 2 2 2\n"), irregular::parse_error);
  REQUIRE_THROWS_AS(parse("irregular-loads 2 2 2\n1 2 3 4 5\n"), irregular::parse_error);
  REQUIRE_THROWS_AS(parse("irregular-loads 2 2 2\n1 2 3 -4\n"), irregular::invalid_argument);
  REQUIRE_THROWS_AS(parse("irregular-loads 2 2 2\n1 2 3 99999999999\n"), irregular::parse_error);
  std::istringstream nan_in("irregular-loads 2 1 2\n1 nan\n");
  REQUIRE_THROWS_AS((load_loads<double, 2>(nan_in)), irregular::error);
  REQUIRE_THROWS_AS((load_loads<int, 2>(std::string("/nonexistent/loads.txt"))), irregular::error);
}

TEST_CASE("owners(region) and jagged_cuts agree with the rectangles", "[rect][model]") {
  std::mt19937_64 rng(21);
  for (int t = 0; t < 40; ++t) {
    CAPTURE(t);
    auto g = random_matrix(rng, 1 + rng() % 9, 1 + rng() % 9, 0, 5);
    const std::size_t P = 1 + rng() % 30;
    for (const auto& p : {hier_relaxed(g, P), jag_m_heur_probe(g, P), jag_pq_heur(g, P)}) {
      Rect<2> region;
      for (int d = 0; d < 2; ++d) {
        const std::size_t a = rng() % (g.extent(d) + 1), b = rng() % (g.extent(d) + 1);
        region.lo[d] = std::min(a, b);
        region.hi[d] = std::max(a, b) + 1;  // may stick out of the box: clipped
      }
      auto got = p.owners(region);
      std::sort(got.begin(), got.end());
      std::vector<std::size_t> want;
      for (std::size_t k = 0; k < p.parts.size(); ++k) {
        const auto& r = p.parts[k];
        bool meet = !r.empty();
        for (int d = 0; d < 2; ++d)
          meet = meet && r.lo[d] < std::min(region.hi[d], g.extent(d)) && region.lo[d] < r.hi[d];
        if (meet) want.push_back(k);
      }
      REQUIRE(got == want);
    }
    JaggedCuts jc;
    const auto jag = jag_m_heur_probe(g, P);
    REQUIRE(jagged_cuts(jag, jc));
    std::size_t count = 0;
    for (std::size_t s = 0; s + 1 < jc.stripes.size(); ++s)
      for (std::size_t k = 0; k + 1 < jc.parts[s].size(); ++k) {
        const auto& r = jag.parts[jc.first_part[s] + k];
        REQUIRE(r.lo[jc.main_dim] == jc.stripes[s]);
        REQUIRE(r.hi[jc.main_dim] == jc.stripes[s + 1]);
        REQUIRE(r.lo[1 - jc.main_dim] == jc.parts[s][k]);
        REQUIRE(r.hi[1 - jc.main_dim] == jc.parts[s][k + 1]);
        ++count;
      }
    REQUIRE(count == P);
    if (P > 2 && g.cells() > 2) {
      JaggedCuts h;
      const auto hp = hier_rb(g, P);
      if (hp.tree.nodes()[hp.tree.nodes()[0].first].dim == hp.tree.nodes()[0].dim)
        REQUIRE_FALSE(jagged_cuts(hp, h));
    }
  }
}
