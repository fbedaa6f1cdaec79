// Tests of the 1D chain partitioners against independent oracles: a plain O(p n^2) DP written
// here, brute force over all separator placements (capacities), brute-force probe feasibility.
#include <irregular/partition/chain_algorithm.hpp>
#include <irregular/partition/heterogeneous.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace ip = irregular::partition;

// Throws irregular::invalid_argument whose message matches.
#define CHECK_THROWS_ARG(expr, matcher)                  \
  do {                                                   \
    CHECK_THROWS_AS(expr, irregular::invalid_argument);  \
    CHECK_THROWS_WITH(expr, matcher);                    \
  } while (false)

namespace {

template <class W, class T>
std::vector<W> sums_of(const std::vector<T>& v) {
  std::vector<W> P(v.size() + 1, W{0});
  for (std::size_t i = 0; i < v.size(); ++i) P[i + 1] = P[i] + static_cast<W>(v[i]);
  return P;
}

// Independent oracle: B(k, j) = min_{i <= j} max(B(k-1, i), load(i, j)), no pointer tricks.
template <class W>
W dp_oracle(std::size_t n, std::size_t p, const std::function<W(std::size_t, std::size_t, std::size_t)>& load) {
  std::vector<std::vector<W>> B(p, std::vector<W>(n + 1));
  for (std::size_t j = 0; j <= n; ++j) B[0][j] = load(0, 0, j);
  for (std::size_t k = 1; k < p; ++k)
    for (std::size_t j = 0; j <= n; ++j) {
      W best = std::numeric_limits<W>::max();
      for (std::size_t i = 0; i <= j; ++i) best = std::min(best, std::max(B[k - 1][i], load(k, i, j)));
      B[k][j] = best;
    }
  return B[p - 1][n];
}

// Checks separators, and recomputes loads, bottleneck and imbalance from the chain itself.
template <class W>
void check_consistent(const ip::ChainPartition<W>& r, const std::vector<W>& P, std::size_t p) {
  const std::size_t n = P.size() - 1;
  REQUIRE(r.separators.size() == p + 1);
  REQUIRE(r.loads.size() == p);
  CHECK(r.separators.front() == 0);
  CHECK(r.separators.back() == n);
  W lmax{0};
  double total = 0;
  for (std::size_t k = 0; k < p; ++k) {
    REQUIRE(r.separators[k] <= r.separators[k + 1]);
    const W l = P[r.separators[k + 1]] - P[r.separators[k]];
    CHECK(r.loads[k] == l);
    lmax = std::max(lmax, l);
    total += static_cast<double>(l);
  }
  CHECK(r.bottleneck == lmax);
  const double expect = total > 0 ? static_cast<double>(lmax) / (total / static_cast<double>(p)) - 1 : 0.0;
  CHECK(r.imbalance == Approx(expect).margin(1e-12));
}

template <class T>
std::vector<T> random_chain(std::mt19937_64& rng, std::size_t n) {
  std::vector<T> v(n);
  const int kind = static_cast<int>(rng() % 4);
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      std::uniform_real_distribution<double> u(0.0, 1.0);
      x = static_cast<T>(u(rng));
      if (kind == 1 && rng() % 3 == 0) x = 0;                       // many zeros
      if (kind == 2 && rng() % 2 == 0) x = static_cast<T>(std::floor(u(rng) * 4));  // ties
    } else {
      x = static_cast<T>(rng() % 10);
      if (kind == 1 && rng() % 3 == 0) x = 0;
      if (kind == 2) x = static_cast<T>(rng() % 2);
    }
  }
  if (kind == 3 && n > 0) v[rng() % n] = static_cast<T>(1000);  // one huge task
  return v;
}

template <class T>
void optimal_against_oracle(std::uint64_t seed, int iterations) {
  using W = ip::wide_t<T>;
  std::mt19937_64 rng(seed);
  for (int it = 0; it < iterations; ++it) {
    const std::size_t n = rng() % 21;
    const std::size_t p = 1 + rng() % (n + 3);
    const auto v = random_chain<T>(rng, n);
    CAPTURE(seed, it, n, p, v);
    const auto P = sums_of<W>(v);
    const W opt = dp_oracle<W>(n, p, [&](std::size_t, std::size_t i, std::size_t j) { return P[j] - P[i]; });
    const std::span<const T> s(v);
    const ip::PrefixSums<T> ps(s);
    for (auto algo : {ip::ChainAlgorithm::nicol_plus, ip::ChainAlgorithm::probe_bisection,
                      ip::ChainAlgorithm::optimal_dp}) {
      CAPTURE(ip::to_string(algo));
      const auto r = ip::partition_chain(algo, s, p);
      check_consistent(r, P, p);
      CHECK(r.bottleneck == opt);
    }
    const auto g = ip::nicol_generic<W>(n, p, [&](std::size_t i, std::size_t j) { return P[j] - P[i]; });
    check_consistent(g, P, p);
    CHECK(g.bottleneck == opt);

    // Heuristics: DirectCut Lmax <= Lavg + wmax; RB Lmax <= Lavg + wmax (1 - 1/p) <= 2 opt.
    W wmax{0};
    for (std::size_t i = 0; i < n; ++i) wmax = std::max(wmax, P[i + 1] - P[i]);
    const double total = static_cast<double>(P[n]), pd = static_cast<double>(p);
    const double tol = std::is_floating_point_v<W> ? 1e-9 * (total + 1) : 0.0;
    const auto dc = ip::direct_cut(ps, p);
    check_consistent(dc, P, p);
    CHECK(static_cast<double>(dc.bottleneck) <= total / pd + static_cast<double>(wmax) + tol);
    CHECK(dc.bottleneck >= opt);
    const auto rb = ip::recursive_bisection(ps, p);
    check_consistent(rb, P, p);
    if constexpr (std::is_integral_v<W>) {  // exact: p * Lmax <= total + (p - 1) wmax
      CHECK(static_cast<std::uint64_t>(rb.bottleneck) * p <=
            static_cast<std::uint64_t>(P[n]) + (p - 1) * static_cast<std::uint64_t>(wmax));
    } else {
      CHECK(rb.bottleneck <= total / pd + wmax * (1 - 1 / pd) + tol);
    }
    CHECK(static_cast<double>(rb.bottleneck) <= 2 * static_cast<double>(opt) + tol);
    CHECK(rb.bottleneck >= opt);
  }
}

}  // namespace

TEST_CASE("optimal partitioners equal the DP oracle on random small chains", "[partition]") {
  SECTION("int") { optimal_against_oracle<int>(1, 6000); }
  SECTION("unsigned") { optimal_against_oracle<std::uint32_t>(2, 1000); }
  SECTION("int64") { optimal_against_oracle<std::int64_t>(3, 500); }
  SECTION("double") { optimal_against_oracle<double>(4, 6000); }
  SECTION("float") { optimal_against_oracle<float>(5, 500); }
}

TEST_CASE("optimal partitioners agree on larger chains", "[partition]") {
  const std::uint64_t seed = 77;
  std::mt19937_64 rng(seed);
  for (int it = 0; it < 40; ++it) {
    const std::size_t n = 500 + rng() % 1500;
    const std::size_t p = 1 + rng() % (it % 2 ? 64 : n + 10);
    std::vector<double> v(n);
    std::lognormal_distribution<double> ln(0.0, 2.0);
    for (auto& x : v) x = (rng() % 5 == 0) ? 0.0 : ln(rng);
    std::vector<int> vi(n);
    for (std::size_t i = 0; i < n; ++i) vi[i] = static_cast<int>(rng() % 100);
    CAPTURE(seed, it, n, p);
    const ip::PrefixSums<double> ps{std::span<const double>(v)};
    const auto dp = ip::optimal_dp(ps, p);
    CHECK(ip::nicol_plus(ps, p).bottleneck == dp.bottleneck);
    CHECK(ip::probe_bisection(ps, p).bottleneck == dp.bottleneck);
    check_consistent(dp, sums_of<double>(v), p);
    const ip::PrefixSums<int> psi{std::span<const int>(vi)};
    const auto dpi = ip::optimal_dp(psi, p);
    CHECK(ip::nicol_plus(psi, p).bottleneck == dpi.bottleneck);
    CHECK(ip::probe_bisection(psi, p).bottleneck == dpi.bottleneck);
    const auto Pi = sums_of<std::int64_t>(vi);
    if (p <= 6)
      CHECK(dpi.bottleneck == dp_oracle<std::int64_t>(
                                  n, p, [&](std::size_t, std::size_t i, std::size_t j) { return Pi[j] - Pi[i]; }));
  }
}

// NicolPlus interpolates its probes and searches windows left by earlier probes; these chains
// are long enough for wide windows, many probes and the largest-task shortcut.
TEST_CASE("nicol_plus equals the DP on medium chains of several distributions", "[partition]") {
  const std::uint64_t seed = 4242;
  std::mt19937_64 rng(seed);
  for (int it = 0; it < 24; ++it) {
    const std::size_t n = 2000 + rng() % 4000;
    const std::size_t ps_[] = {2, 7, 64, 400, n / 3, n + 5};
    const std::size_t p = ps_[it % 6];
    const int dist = (it / 6) % 4;
    std::vector<double> v(n);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::lognormal_distribution<double> ln(0.0, 2.0);
    for (auto& x : v) x = dist == 1 ? ln(rng) : u(rng);
    if (dist == 2) v[rng() % n] = 50.0 * static_cast<double>(n) / static_cast<double>(p);  // one dominant task
    if (dist == 3)
      for (auto& x : v) x = std::floor(x * 4);  // few distinct values, many ties
    CAPTURE(seed, it, n, p, dist);
    const ip::PrefixSums<double> ps{std::span<const double>(v)};
    const auto dp = ip::optimal_dp(ps, p);
    const auto r = ip::nicol_plus(ps, p);
    CHECK(r.bottleneck == dp.bottleneck);
    check_consistent(r, sums_of<double>(v), p);
    std::vector<std::int64_t> vi(n);
    for (std::size_t i = 0; i < n; ++i) vi[i] = static_cast<std::int64_t>(v[i] * 1000);
    const ip::PrefixSums<std::int64_t> psi{std::span<const std::int64_t>(vi)};
    const auto ri = ip::nicol_plus(psi, p);
    CHECK(ri.bottleneck == ip::optimal_dp(psi, p).bottleneck);
    check_consistent(ri, sums_of<std::int64_t>(vi), p);
  }
}

TEST_CASE("nicol_generic is optimal for a non-additive monotone interval load", "[partition]") {
  const std::uint64_t seed = 11;
  std::mt19937_64 rng(seed);
  for (int it = 0; it < 1500; ++it) {
    const std::size_t n = rng() % 18;
    const std::size_t p = 1 + rng() % (n + 3);
    std::vector<int> v(n);
    for (auto& x : v) x = static_cast<int>(rng() % 7);
    CAPTURE(seed, it, n, p, v);
    // max task in the interval times its length: monotone, not a sum.
    auto load = [&](std::size_t i, std::size_t j) {
      long long m = 0;
      for (std::size_t k = i; k < j; ++k) m = std::max<long long>(m, v[k]);
      return m * static_cast<long long>(j - i);
    };
    const long long opt = dp_oracle<long long>(n, p, [&](std::size_t, std::size_t i, std::size_t j) { return load(i, j); });
    const auto r = ip::nicol_generic<long long>(n, p, load);
    REQUIRE(r.separators.size() == p + 1);
    long long lmax = 0;
    for (std::size_t k = 0; k < p; ++k) {
      REQUIRE(r.separators[k] <= r.separators[k + 1]);
      CHECK(r.loads[k] == load(r.separators[k], r.separators[k + 1]));
      lmax = std::max(lmax, r.loads[k]);
    }
    CHECK(r.separators.back() == n);
    CHECK(r.bottleneck == lmax);
    CHECK(r.bottleneck == opt);
  }
}

namespace {
// Brute force over all nondecreasing separator placements: min over them of max load_k / c_k.
double brute_capacity(const std::vector<double>& P, const std::vector<double>& cap) {
  const std::size_t n = P.size() - 1, p = cap.size();
  std::vector<std::size_t> s(p + 1, 0);
  s[p] = n;
  double best = std::numeric_limits<double>::infinity();
  std::function<void(std::size_t)> rec = [&](std::size_t k) {
    if (k == p) {
      double b = 0;
      for (std::size_t q = 0; q < p; ++q) b = std::max(b, (P[s[q + 1]] - P[s[q]]) / cap[q]);
      best = std::min(best, b);
      return;
    }
    for (std::size_t x = s[k - 1]; x <= n; ++x) {
      s[k] = x;
      rec(k + 1);
    }
  };
  if (p == 1)
    best = P[n] / cap[0];
  else
    rec(1);
  return best;
}
}  // namespace

TEST_CASE("heterogeneous capacities: optimal equals brute force", "[partition]") {
  const std::uint64_t seed = 5;
  std::mt19937_64 rng(seed);
  for (int it = 0; it < 1500; ++it) {
    const std::size_t n = rng() % 9;
    const std::size_t p = 1 + rng() % 4;
    std::vector<int> v(n);
    for (auto& x : v) x = static_cast<int>(rng() % 10) * (rng() % 4 == 0 ? 0 : 1);
    std::vector<double> cap(p);
    for (auto& c : cap) c = static_cast<double>(1 + rng() % 4) * (rng() % 2 ? 0.5 : 1.0);
    CAPTURE(seed, it, n, p, v, cap);
    std::vector<double> P(n + 1, 0.0);
    const auto Pi = sums_of<std::int64_t>(v);
    for (std::size_t i = 0; i <= n; ++i) P[i] = static_cast<double>(Pi[i]);
    const double opt = brute_capacity(P, cap);
    const std::span<const int> s(v);
    const std::span<const double> c(cap);
    for (int which = 0; which < 3; ++which) {
      CAPTURE(which);
      const auto r = which == 0 ? ip::nicol_plus(s, c) : which == 1 ? ip::optimal_dp(s, c) : ip::direct_cut(s, c);
      REQUIRE(r.separators.size() == p + 1);
      double b = 0, csum = 0;
      for (std::size_t k = 0; k < p; ++k) {
        REQUIRE(r.separators[k] <= r.separators[k + 1]);
        CHECK(r.loads[k] == P[r.separators[k + 1]] - P[r.separators[k]]);
        b = std::max(b, r.loads[k] / cap[k]);
        csum += cap[k];
      }
      CHECK(r.separators.back() == n);
      CHECK(r.bottleneck == b);
      CHECK(r.imbalance == Approx(P[n] > 0 ? b / (P[n] / csum) - 1 : 0.0).margin(1e-12));
      if (which < 2) {
        CHECK(r.bottleneck == opt);
      } else {
        double wmax = 0;
        for (std::size_t i = 0; i < n; ++i) wmax = std::max(wmax, P[i + 1] - P[i]);
        for (std::size_t k = 0; k < p; ++k)  // DirectCut: load_k <= total c_k / C + wmax
          CHECK(r.loads[k] <= P[n] * cap[k] / csum + wmax + 1e-9);
        CHECK(r.bottleneck >= opt);
      }
    }
  }
  // Equal capacities reduce to the homogeneous problem.
  std::vector<int> v{5, 1, 7, 3, 3, 9, 0, 2, 4};
  std::vector<double> ones(4, 1.0);
  CHECK(ip::nicol_plus(std::span<const int>(v), std::span<const double>(ones)).bottleneck ==
        static_cast<double>(ip::optimal_dp(std::span<const int>(v), 4).bottleneck));
}

TEST_CASE("probe agrees with brute-force feasibility", "[partition]") {
  const std::uint64_t seed = 9;
  std::mt19937_64 rng(seed);
  for (int it = 0; it < 1500; ++it) {
    const std::size_t n = rng() % 16;
    const std::size_t p = 1 + rng() % (n + 2);
    const auto v = random_chain<int>(rng, n);
    const auto P = sums_of<std::int64_t>(v);
    const std::int64_t opt = dp_oracle<std::int64_t>(n, p, [&](std::size_t, std::size_t i, std::size_t j) { return P[j] - P[i]; });
    const ip::PrefixSums<int> ps{std::span<const int>(v)};
    for (std::int64_t b : {opt - 1, opt, opt + 1, static_cast<std::int64_t>(rng() % 40), std::int64_t{-1}}) {
      CAPTURE(seed, it, n, p, v, b);
      std::vector<std::size_t> s{42};
      const bool ok = ip::probe(ps, p, b, &s);
      CHECK(ok == (b >= opt));
      if (ok) {
        REQUIRE(s.size() == p + 1);
        CHECK(s.front() == 0);
        CHECK(s.back() == n);
        for (std::size_t k = 0; k < p; ++k) {
          REQUIRE(s[k] <= s[k + 1]);
          CHECK(P[s[k + 1]] - P[s[k]] <= b);
        }
      } else {
        CHECK(s == std::vector<std::size_t>{42});  // untouched on failure
      }
    }
  }
}

TEST_CASE("edge cases: empty chains, p > n, zero loads", "[partition]") {
  const std::vector<int> empty;
  for (std::size_t p : {1u, 3u}) {
    const auto r = ip::nicol_plus(std::span<const int>(empty), p);
    CHECK(r.separators == std::vector<std::size_t>(p + 1, 0));
    CHECK(r.bottleneck == 0);
    CHECK(r.imbalance == 0);
  }
  const std::vector<int> zeros(5, 0);
  const auto z = ip::recursive_bisection(std::span<const int>(zeros), 3);
  CHECK(z.bottleneck == 0);
  CHECK(z.imbalance == 0);
  const std::vector<int> three{4, 9, 2};
  const auto r = ip::nicol_plus(std::span<const int>(three), 7);
  CHECK(r.bottleneck == 9);
  CHECK(r.separators.size() == 8);
  CHECK(r.separators.back() == 3);
  CHECK(ip::load_imbalance<int>(std::vector<int>{2, 2, 2, 6}) == Approx(1.0));
}

TEST_CASE("bad input throws irregular::invalid_argument naming the index", "[partition]") {
  using irregular::invalid_argument;
  const std::vector<int> neg{1, 2, -3, 4};
  CHECK_THROWS_ARG(ip::nicol_plus(std::span<const int>(neg), 2),
                       Catch::Matchers::Contains("index 2"));
  CHECK_THROWS_AS(ip::direct_cut(std::span<const int>(neg), 2), invalid_argument);
  const std::vector<double> nan{1.0, std::nan(""), 2.0};
  CHECK_THROWS_ARG(ip::optimal_dp(std::span<const double>(nan), 2),
                       Catch::Matchers::Contains("index 1") && Catch::Matchers::Contains("NaN"));
  const std::vector<double> negd{0.0, -0.5};
  CHECK_THROWS_ARG(ip::PrefixSums<double>(std::span<const double>(negd)),
                       Catch::Matchers::Contains("index 1"));
  const std::vector<int> ok{1, 2, 3};
  const std::span<const int> s(ok);
  CHECK_THROWS_AS(ip::nicol_plus(s, 0), invalid_argument);
  CHECK_THROWS_AS(ip::direct_cut(s, 0), invalid_argument);
  CHECK_THROWS_AS(ip::recursive_bisection(s, 0), invalid_argument);
  CHECK_THROWS_AS(ip::probe_bisection(s, 0), invalid_argument);
  CHECK_THROWS_AS(ip::optimal_dp(s, 0), invalid_argument);
  CHECK_THROWS_AS(ip::probe(ip::PrefixSums<int>(s), 0, 5), invalid_argument);
  CHECK_THROWS_AS(ip::nicol_generic<int>(3, 0, [](std::size_t i, std::size_t j) { return int(j - i); }), invalid_argument);
  CHECK_THROWS_AS(ip::probe(ip::PrefixSums<double>(std::span<const double>(negd).first(1)), 1, std::nan("")), invalid_argument);
  const std::vector<double> none;
  CHECK_THROWS_AS(ip::nicol_plus(s, std::span<const double>(none)), invalid_argument);
  for (double bad : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    const std::vector<double> cap{1.0, 2.0, bad};
    CHECK_THROWS_ARG(ip::nicol_plus(s, std::span<const double>(cap)),
                         Catch::Matchers::Contains("index 2"));
    CHECK_THROWS_AS(ip::optimal_dp(s, std::span<const double>(cap)), invalid_argument);
    CHECK_THROWS_AS(ip::direct_cut(s, std::span<const double>(cap)), invalid_argument);
  }
  CHECK_THROWS_AS(ip::parse_chain_algorithm("nicol"), invalid_argument);
  CHECK(ip::parse_chain_algorithm("nicol_plus") == ip::ChainAlgorithm::nicol_plus);
  for (auto name : ip::chain_algorithm_names) CHECK(ip::to_string(ip::parse_chain_algorithm(name)) == name);
  const ip::PrefixSums<int> ps(s);
  CHECK_THROWS_AS(ip::make_chain_partition({0, 2, 1, 3}, ps), invalid_argument);
  CHECK_THROWS_AS(ip::make_chain_partition({0, 2}, ps), invalid_argument);
  CHECK_THROWS_AS(ip::make_chain_partition({1, 3}, ps), invalid_argument);
  const std::vector<std::int64_t> huge{std::numeric_limits<std::int64_t>::max(), 1};
  CHECK_THROWS_ARG(ip::PrefixSums<std::int64_t>(std::span<const std::int64_t>(huge)),
                       Catch::Matchers::Contains("index 1"));
}
