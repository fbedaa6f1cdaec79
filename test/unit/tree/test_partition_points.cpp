// partition_points: brute-force oracle (stable sort by curve key, DP optimum of the chain) on
// small random inputs, the cut rule's guarantees (contiguous, no empty part, even targets), and
// rejected input.
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>
#include <irregular/partition/optimal_dp.hpp>
#include <irregular/tree/partition_points.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace tree_partition_points_tests {

namespace irr = irregular;

template <int D>
irr::Box<D> unit_box() {
  irr::Box<D> b;
  b.lo.fill(-1.0);
  b.hi.fill(2.0);
  return b;
}

// Curve order by brute force: (key, input index) pairs sorted.
template <class C>
std::vector<std::size_t> oracle_order(const irr::Box<C::dim>& box,
                                      const std::vector<std::array<double, C::dim>>& pts) {
  using I = typename C::index_type;
  const auto cells = irr::ipow<irr::coord_t>(static_cast<irr::coord_t>(C::arity), C::max_level);
  std::vector<std::pair<I, std::size_t>> v;
  for (std::size_t i = 0; i < pts.size(); ++i)
    v.emplace_back(C::index(box.cell_of(pts[i], C::max_level, cells)), i);
  std::sort(v.begin(), v.end());
  std::vector<std::size_t> order;
  for (const auto& e : v) order.push_back(e.second);
  return order;
}

// Points on a coarse lattice of the box (many exact duplicates, so ties matter) or anywhere.
template <int D>
std::vector<std::array<double, D>> random_points(std::mt19937_64& rng, std::size_t n,
                                                 bool lattice) {
  std::uniform_real_distribution<double> u(-1.0, 2.0);
  std::uniform_int_distribution<int> g(0, 3);
  std::vector<std::array<double, D>> pts(n);
  for (auto& p : pts)
    for (auto& x : p) x = lattice ? -1.0 + g(rng) : u(rng);
  return pts;
}

// Checks r against the oracle: contiguous runs of the stable curve order, the DP bottleneck,
// loads and sizes, no empty part when n >= P.
template <class C>
void check_against_oracle(const irr::Box<C::dim>& box,
                          const std::vector<std::array<double, C::dim>>& pts,
                          const std::vector<double>& w, std::size_t P,
                          const irr::PointPartition& r, bool integer_weights) {
  const std::size_t n = pts.size();
  REQUIRE(r.part.size() == n);
  REQUIRE(r.parts() == P);
  REQUIRE(r.sizes.size() == P);
  const auto order = oracle_order<C>(box, pts);
  std::vector<double> chain;
  for (std::size_t i : order) chain.push_back(w.empty() ? 1.0 : w[i]);
  // Part ids never decrease along the curve order (ties in input order included).
  std::vector<std::uint64_t> sizes(P, 0);
  std::vector<double> loads(P, 0.0);
  for (std::size_t j = 0; j < n; ++j) {
    const auto k = r.part[order[j]];
    REQUIRE(k < P);
    if (j > 0) REQUIRE(r.part[order[j - 1]] <= k);
    ++sizes[k];
    loads[k] += chain[j];
  }
  CHECK(sizes == r.sizes);
  double total = 0;
  for (double x : chain) total += x;
  for (std::size_t k = 0; k < P; ++k) CHECK(r.loads[k] == Approx(loads[k]).margin(1e-9 * (1 + total)));
  CHECK(r.bottleneck == Approx(*std::max_element(r.loads.begin(), r.loads.end())));
  const double best = irr::partition::optimal_dp(std::span<const double>(chain), P).bottleneck;
  if (integer_weights) CHECK(r.bottleneck == best);
  else CHECK(r.bottleneck == Approx(best).epsilon(1e-9).margin(1e-12));
  if (n >= P) CHECK(r.empty_parts() == 0);
  else CHECK(r.empty_parts() == P - n);
}

template <class C>
void random_against_oracle(std::uint64_t seed, int iterations) {
  constexpr int D = C::dim;
  std::mt19937_64 rng(seed);
  const auto box = unit_box<D>();
  for (int it = 0; it < iterations; ++it) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(0, 60)(rng);
    const std::size_t P = std::uniform_int_distribution<std::size_t>(1, 12)(rng);
    const bool lattice = it % 3 == 0;
    const int kind = it % 4;  // 0 unit, 1 small integers (with zeros), 2 reals, 3 skewed reals
    const auto pts = random_points<D>(rng, n, lattice);
    std::vector<double> w;
    if (kind == 1) {
      std::uniform_int_distribution<int> g(0, 9);
      for (std::size_t i = 0; i < n; ++i) w.push_back(g(rng));
    } else if (kind >= 2) {
      std::uniform_real_distribution<double> u(0.0, 1.0);
      for (std::size_t i = 0; i < n; ++i) w.push_back(kind == 2 ? u(rng) : std::pow(u(rng), 6) * 1e3);
    }
    CAPTURE(seed, it, n, P, kind, lattice);
    const auto r = irr::partition_points<C>(box, pts, w, P);
    check_against_oracle<C>(box, pts, w, P, r, kind <= 1);
    // Same input, same answer.
    CHECK(irr::partition_points<C>(box, pts, w, P).part == r.part);
  }
}

TEST_CASE("partition_points matches the sorted-chain DP optimum", "[tree][partition_points]") {
  random_against_oracle<irr::curve::Hilbert<2>>(1234, 300);
  random_against_oracle<irr::curve::Morton<2>>(99, 200);
  random_against_oracle<irr::curve::Peano<2>>(7, 200);
  random_against_oracle<irr::curve::Hilbert<3>>(31, 200);
  random_against_oracle<irr::curve::Morton<3, std::uint32_t>>(5, 100);
  random_against_oracle<irr::curve::Hilbert<3, irr::uint128_t>>(17, 100);
}

TEST_CASE("partition_points on larger inputs (radix path) matches the oracle",
          "[tree][partition_points]") {
  std::mt19937_64 rng(2024);
  using C = irr::curve::Hilbert<2>;
  const auto box = unit_box<2>();
  for (const bool lattice : {false, true}) {
    auto pts = random_points<2>(rng, 3000, lattice);
    std::vector<double> w(pts.size());
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = pts[i][0] > 0.5 ? 4.0 : 1.0;
    for (const std::size_t P : {1u, 2u, 7u, 64u}) {
      CAPTURE(lattice, P);
      check_against_oracle<C>(box, pts, w, P, irr::partition_points<C>(box, pts, w, P), true);
    }
  }
}

TEST_CASE("partition_points cuts evenly when it can", "[tree][partition_points]") {
  using C = irr::curve::Morton<2>;
  const auto box = unit_box<2>();
  std::vector<std::array<double, 2>> pts;
  for (int i = 0; i < 12; ++i) pts.push_back({0.1 * i - 0.5, 0.0});
  const auto r = irr::partition_points<C>(box, pts, 4);
  CHECK(r.sizes == std::vector<std::uint64_t>{3, 3, 3, 3});
  CHECK(r.imbalance() == 0.0);
  // All points on one spot: ties in input order, split evenly.
  std::vector<std::array<double, 2>> same(10, {0.25, 0.25});
  const auto s = irr::partition_points<C>(box, same, 5);
  CHECK(s.part == std::vector<std::uint32_t>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4});
  // More parts than points: one point per part, the rest empty.
  const auto e = irr::partition_points<C>(box, std::span(pts).first(3), 5);
  CHECK(e.empty_parts() == 2);
  CHECK(e.bottleneck == 1.0);
  // No points at all.
  const auto z = irr::partition_points<C>(box, std::span<const std::array<double, 2>>{}, 3);
  CHECK(z.part.empty());
  CHECK(z.empty_parts() == 3);
  CHECK(z.imbalance() == 0.0);
  // Zero weights: cut by count.
  const std::vector<double> zeros(12, 0.0);
  CHECK(irr::partition_points<C>(box, pts, zeros, 4).sizes == std::vector<std::uint64_t>{3, 3, 3, 3});
}

TEST_CASE("partition_points rejects bad input and names the point", "[tree][partition_points]") {
  using C = irr::curve::Hilbert<2>;
  const auto box = unit_box<2>();
  std::vector<std::array<double, 2>> pts(5, {0.5, 0.5});
  std::vector<double> w(5, 1.0);
  const auto throws_with = [&](const std::string& what, auto&& call) {
    CAPTURE(what);
    try {
      (void)call();
      FAIL("no exception");
    } catch (const irr::invalid_argument& e) {
      CHECK_THAT(e.what(), Catch::Contains(what));
    }
  };
  auto bad = pts;
  bad[3] = {2.5, 0.0};
  throws_with("point 3", [&] { return irr::partition_points<C>(box, bad, w, 2); });
  bad[3] = {0.0, std::numeric_limits<double>::quiet_NaN()};
  throws_with("point 3", [&] { return irr::partition_points<C>(box, bad, w, 2); });
  for (const double x : {-1.0, std::numeric_limits<double>::quiet_NaN(),
                         std::numeric_limits<double>::infinity()}) {
    auto bw = w;
    bw[2] = x;
    throws_with("weight of point 2", [&] { return irr::partition_points<C>(box, pts, bw, 2); });
  }
  throws_with("4 weights for 5 points",
              [&] { return irr::partition_points<C>(box, pts, std::span(w).first(4), 2); });
  throws_with("parts must be at least 1", [&] { return irr::partition_points<C>(box, pts, w, 0); });
  irr::Box<2> flat{{0, 0}, {1, 0}};
  throws_with("Box", [&] { return irr::partition_points<C>(flat, pts, w, 2); });
}

}  // namespace tree_partition_points_tests
