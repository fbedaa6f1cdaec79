// Tests of the one 1D engine's generalisations and of balanced separators against brute-force
// oracles: the optimum on sub-chains of any prefix accessor (integer, uint128, floating point),
// balanced separators (bottleneck = DP optimum, no empty part when n >= p, never less even
// than the greedy cut), the parametric search's floating-point tolerance, nicol_oracle.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <irregular/partition/balanced.hpp>
#include <irregular/partition/chain_algorithm.hpp>
#include <irregular/partition/nicol_plus.hpp>
#include <irregular/partition/probe.hpp>
#include <limits>
#include <random>
#include <vector>

namespace ip = irregular::partition;

namespace {

// Plain O(p n^2) DP over sums P on [lo, hi): the optimal bottleneck.
template <class W>
W dp_opt(const std::vector<W>& P, std::size_t lo, std::size_t hi, std::size_t p) {
  const std::size_t n = hi - lo;
  std::vector<W> prev(n + 1), cur(n + 1);
  for (std::size_t j = 0; j <= n; ++j) prev[j] = P[lo + j] - P[lo];
  for (std::size_t k = 1; k < p; ++k) {
    for (std::size_t j = 0; j <= n; ++j) {
      W best = std::numeric_limits<W>::max();
      for (std::size_t i = 0; i <= j; ++i) {
        const W c = P[lo + j] - P[lo + i];
        best = std::min(best, std::max(prev[i], c));
      }
      cur[j] = best;
    }
    std::swap(prev, cur);
  }
  return prev[n];
}

template <class W>
std::vector<W> loads_of(const std::vector<W>& P, const std::vector<std::size_t>& s) {
  std::vector<W> l;
  for (std::size_t k = 0; k + 1 < s.size(); ++k) l.push_back(P[s[k + 1]] - P[s[k]]);
  return l;
}

template <class W>
double ssq(const std::vector<W>& l) {
  double r = 0;
  for (const W& x : l) r += static_cast<double>(x) * static_cast<double>(x);
  return r;
}

std::size_t empties(const std::vector<std::size_t>& s) {
  std::size_t e = 0;
  for (std::size_t k = 0; k + 1 < s.size(); ++k) e += s[k] == s[k + 1];
  return e;
}

// Small chains with many zero loads, ties, a huge task, p up to n + 4.
std::vector<int> random_loads(std::mt19937_64& rng, std::size_t n) {
  std::vector<int> v(n);
  const int kind = static_cast<int>(rng() % 4);
  for (auto& x : v) {
    x = static_cast<int>(rng() % 10);
    if (kind == 1 && rng() % 2 == 0) x = 0;  // many zeros
    if (kind == 2) x = static_cast<int>(rng() % 2);
  }
  if (kind == 3 && n > 0) v[rng() % n] = 100;
  return v;
}

}  // namespace

TEST_CASE("nicol_plus returns balanced optimal separators", "[partition][balanced]") {
  std::mt19937_64 rng(11);
  std::size_t strictly_more_even = 0;
  for (int it = 0; it < 4000; ++it) {
    const std::size_t n = rng() % 16;
    const std::size_t p = 1 + rng() % (n + 4);
    const auto v = random_loads(rng, n);
    CAPTURE(it, n, p, v);
    const ip::PrefixSums<int> ps{std::span<const int>(v)};
    const std::vector<std::int64_t> P(ps.data().begin(), ps.data().end());
    const std::int64_t opt = dp_opt(P, 0, n, p);
    const auto r = ip::nicol_plus(ps, p);
    const auto g = ip::nicol_plus(ps, p, ip::SeparatorChoice::greedy);
    const auto twin = ip::partition_chain(ip::ChainAlgorithm::nicol_plus, ps, p);
    CHECK(r.bottleneck == opt);
    CHECK(g.bottleneck == opt);
    CHECK(twin.separators == r.separators);
    for (auto l : r.loads) CHECK(l <= opt);
    if (n >= p) CHECK(empties(r.separators) == 0);
    // never less even than the greedy-from-left cut: fewer empty parts, then sum of squares
    const std::size_t er = empties(r.separators), eg = empties(g.separators);
    CHECK(er <= eg);
    if (er == eg) CHECK(ssq(r.loads) <= ssq(g.loads));
    if (er < eg || ssq(r.loads) < ssq(g.loads)) ++strictly_more_even;
    // any feasible bottleneck above the optimum works too
    const std::int64_t B = opt + static_cast<std::int64_t>(rng() % 5);
    const auto s = ip::balanced_separators(ps, p, B);
    REQUIRE(s.size() == p + 1);
    CHECK(s.front() == 0);
    CHECK(s.back() == n);
    for (std::size_t k = 0; k < p; ++k) {
      REQUIRE(s[k] <= s[k + 1]);
      CHECK(P[s[k + 1]] - P[s[k]] <= B);
      if (n >= p) CHECK(s[k] < s[k + 1]);
    }
  }
  CHECK(strictly_more_even > 100);  // the balanced cut does differ from the greedy one
  const std::vector<int> v{5, 1, 1};
  CHECK_THROWS_AS(ip::balanced_separators(ip::PrefixSums<int>(std::span<const int>(v)), 1, 6),
                  irregular::invalid_argument);
}

TEST_CASE("balanced separators on a chain ending in zeros keep every part non-empty",
          "[partition][balanced]") {
  const std::vector<int> v{7, 0, 0, 0, 0, 0};
  const auto r = ip::nicol_plus(std::span<const int>(v), 4);
  CHECK(r.bottleneck == 7);
  CHECK(empties(r.separators) == 0);
  const auto g = ip::nicol_plus(std::span<const int>(v), 4, ip::SeparatorChoice::greedy);
  CHECK(empties(g.separators) == 3);  // greedy: everything in the first part
}

TEST_CASE("optimal_bottleneck on sub-chains of any prefix accessor equals the DP",
          "[partition][engine]") {
  std::mt19937_64 rng(3);
  for (int it = 0; it < 1500; ++it) {
    const std::size_t N = rng() % 14;
    const auto v = random_loads(rng, N);
    std::vector<std::int64_t> P(N + 1, 0);
    std::vector<irregular::uint128_t> Q(N + 1, 0);
    std::vector<double> D(N + 1, 0);
    for (std::size_t i = 0; i < N; ++i) {
      P[i + 1] = P[i] + v[i];
      Q[i + 1] = Q[i] + (static_cast<irregular::uint128_t>(v[i]) << 70);  // needs 128 bits
      D[i + 1] = D[i] + v[i] / 8.0;  // dyadic: the double cost model is exact
    }
    const std::size_t lo = N ? rng() % (N + 1) : 0, hi = lo + (N ? rng() % (N - lo + 1) : 0);
    const std::size_t p = 1 + rng() % 6;
    CAPTURE(it, v, lo, hi, p);
    const std::int64_t opt = dp_opt(P, lo, hi, p);
    std::vector<std::size_t> s(p + 1);
    // pointer accessor
    CHECK(ip::optimal_bottleneck(P.data(), lo, hi, p, s.data()) == opt);
    CHECK(s.front() == lo);
    CHECK(s.back() == hi);
    std::int64_t worst = 0;
    for (std::size_t k = 0; k < p; ++k) {
      REQUIRE(s[k] <= s[k + 1]);
      worst = std::max(worst, P[s[k + 1]] - P[s[k]]);
      if (hi - lo >= p) CHECK(s[k] < s[k + 1]);
    }
    CHECK(worst == opt);
    // callable accessors: uint128 and floating-point sums
    auto q = [&](std::size_t x) { return Q[x]; };
    CHECK(ip::optimal_bottleneck(q, lo, hi, p) == static_cast<irregular::uint128_t>(opt) << 70);
    auto d = [&](std::size_t x) { return D[x]; };
    CHECK(ip::optimal_bottleneck(d, lo, hi, p) == static_cast<double>(opt) / 8.0);
    // greedy cover counts
    const std::size_t c = ip::greedy_parts(P.data(), lo, hi, opt, p);
    CHECK(c <= p);
    if (opt > 0) CHECK(ip::greedy_parts(P.data(), lo, hi, opt - 1, p) > p);
  }
}

TEST_CASE("floating-point sums: optimum equals the DP on the same sums; parametric tolerance",
          "[partition][engine]") {
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int it = 0; it < 800; ++it) {
    const std::size_t n = rng() % 30;
    std::vector<double> v(n);
    for (auto& x : v) x = rng() % 4 == 0 ? 0.0 : u(rng) * 1e3;
    const ip::PrefixSums<double> ps{std::span<const double>(v)};
    const std::vector<double> P(ps.data().begin(), ps.data().end());
    const std::size_t p = 1 + rng() % 8;
    CAPTURE(it, n, p);
    const double opt = dp_opt(P, 0, n, p);
    CHECK(ip::nicol_plus(ps, p).bottleneck == opt);  // exact in the prefix-difference model
    CHECK(ip::optimal_bottleneck(P.data(), 0, n, p) == opt);
    // the generic parametric search on the same greedy test: within a relative 1e-13
    const double B = ip::min_feasible_bottleneck(
        ip::average_bound(ps.total(), p), ps.total(),
        [&](double b) { return ip::greedy_parts(P.data(), 0, n, b, p) <= p; });
    CHECK(B >= opt);
    CHECK(B <= opt * (1 + 1e-13));
    CHECK(ip::greedy_parts(P.data(), 0, n, B, p) <= p);
  }
}

TEST_CASE("nicol_oracle with a part-dependent cost and a separate decision oracle",
          "[partition][engine]") {
  std::mt19937_64 rng(21);
  for (int it = 0; it < 500; ++it) {
    const std::size_t n = rng() % 12, p = 1 + rng() % 5;
    const auto v = random_loads(rng, n);
    std::vector<std::int64_t> P(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) P[i + 1] = P[i] + v[i];
    std::vector<std::int64_t> w(p);
    for (auto& x : w) x = 1 + static_cast<std::int64_t>(rng() % 3);  // part k costs load * w[k]
    auto cost = [&](std::size_t k, std::size_t i, std::size_t j) { return (P[j] - P[i]) * w[k]; };
    std::size_t fit_calls = 0;
    auto fits = [&](std::size_t k, std::size_t i, std::size_t j, std::int64_t b) {
      ++fit_calls;
      return (P[j] - P[i]) * w[k] <= b;
    };
    // brute force over all separator placements
    std::int64_t best = std::numeric_limits<std::int64_t>::max();
    std::vector<std::size_t> s(p + 1, 0);
    s[p] = n;
    auto rec = [&](auto&& self, std::size_t k) -> void {
      if (k == p) {
        std::int64_t m = 0;
        for (std::size_t q = 0; q < p; ++q) m = std::max(m, cost(q, s[q], s[q + 1]));
        best = std::min(best, m);
        return;
      }
      for (std::size_t x = s[k - 1]; x <= n; ++x) {
        s[k] = x;
        self(self, k + 1);
      }
    };
    if (p > 1)
      rec(rec, 1);
    else
      best = cost(0, 0, n);
    CAPTURE(it, n, p, v, w);
    std::vector<std::size_t> sep(p + 1);
    const auto r = ip::nicol_oracle<std::int64_t>(n, p, cost, fits, std::int64_t{0}, cost(0, 0, n),
                                                  sep.data());
    CHECK(r == best);
    std::int64_t m = 0;
    for (std::size_t q = 0; q < p; ++q) m = std::max(m, cost(q, sep[q], sep[q + 1]));
    CHECK(m == best);
  }
}
