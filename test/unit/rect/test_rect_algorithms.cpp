// Tests of the rectangular partitioners: validity on random and degenerate matrices, optimal
// algorithms against exhaustive search, heuristics never below their class optimum, the
// approximation bounds of Theorems 1 and 3, HYBRID, 3D, the registry and bad input.
#include <catch2/catch.hpp>
#include <irregular/rect/detail/chain.hpp>
#include <irregular/rect/generators.hpp>
#include <irregular/rect/hierarchical.hpp>
#include <irregular/rect/hybrid.hpp>
#include <irregular/rect/jagged.hpp>
#include <irregular/rect/jagged3d.hpp>
#include <irregular/rect/metrics.hpp>
#include <irregular/rect/rectilinear.hpp>
#include <irregular/rect/registry.hpp>
#include <random>
#include <string>
#include <vector>

#include "oracles.hpp"

using namespace irregular::rect;
using namespace rect_test;

namespace {

template <class T, int D>
void check_all_names(const LoadGrid<T, D>& g, const std::vector<std::size_t>& Ps,
                     const std::string& what) {
  std::vector<std::string> names = partitioner_names<D>();
  names.push_back(D == 2 ? "HYBRID(HIER-RELAXED/JAG-M-OPT)" : "HYBRID(HIER-RELAXED/HIER-OPT)");
  names.push_back("HYBRID(JAG-M-HEUR/HIER-RB,min=4)");
  for (const auto& name : names)
    for (std::size_t P : Ps) {
      INFO(what << ": " << name << " P=" << P);
      const auto p = make_partitioner<T, D>(name)(g, g.box(), P);
      REQUIRE(p.parts.size() == P);
      REQUIRE(p.tree.leaf_count() == P);
      REQUIRE(p.box == g.box());
      REQUIRE_NOTHROW(validate(p));
      // the cut tree agrees with the rectangles on a sample of cells
      std::array<std::size_t, D> c{};
      for (int t = 0; t < 16; ++t) {
        for (int d = 0; d < D; ++d) c[d] = (static_cast<std::size_t>(t) * (7 + d)) % g.extent(d);
        REQUIRE(p.parts[p.owner(c)].contains(c));
      }
    }
}

}  // namespace

TEST_CASE("every 2D algorithm returns a valid partition on random and degenerate matrices",
          "[rect][algorithms]") {
  std::mt19937_64 rng(2024);
  const std::vector<std::size_t> Ps{1, 2, 3, 7, 13, 60};
  check_all_names(random_matrix(rng, 8, 7, 0, 20), Ps, "random 8x7");
  check_all_names(LoadMatrix<int>({5, 4}, std::vector<int>(20, 0)), Ps, "all zeros");
  std::vector<int> hot(36, 0);
  hot[14] = 100;
  check_all_names(LoadMatrix<int>({6, 6}, hot), Ps, "one hot cell");
  check_all_names(random_matrix(rng, 1, 9, 1, 9), Ps, "1 x n");
  check_all_names(random_matrix(rng, 9, 1, 1, 9), Ps, "n x 1");
  check_all_names(LoadMatrix<int>({1, 1}, {5}), {1, 2, 5}, "one cell");
  std::vector<double> real(30);
  for (auto& x : real) x = static_cast<double>(rng() % 1000) / 7.0;
  check_all_names(LoadMatrix<double>({5, 6}, real), Ps, "floating point");
  std::vector<std::uint64_t> wide(24);
  for (auto& x : wide) x = (rng() % 1000) << 40;  // sums need 128 bits
  check_all_names(LoadMatrix<std::uint64_t>({4, 6}, wide), Ps, "64-bit loads");
  std::vector<std::uint8_t> tiny(12);
  for (auto& x : tiny) x = static_cast<std::uint8_t>(rng() % 256);
  check_all_names(LoadMatrix<std::uint8_t>({3, 4}, tiny), Ps, "8-bit loads");
  std::vector<float> f(12);
  for (auto& x : f) x = static_cast<float>(rng() % 100) / 3.0f;
  check_all_names(LoadMatrix<float>({4, 3}, f), Ps, "float loads");
}

TEST_CASE("every 3D algorithm returns a valid partition", "[rect][algorithms][3d]") {
  std::mt19937_64 rng(77);
  std::vector<std::uint16_t> v(4 * 5 * 3);
  for (auto& x : v) x = static_cast<std::uint16_t>(rng() % 50);
  const std::vector<std::size_t> Ps{1, 2, 5, 12, 80};
  check_all_names(LoadVolume<std::uint16_t>({4, 5, 3}, v), Ps, "random 4x5x3");
  check_all_names(LoadVolume<int>({2, 3, 2}, std::vector<int>(12, 0)), Ps, "zeros 3D");
  std::vector<int> line(7, 3);
  check_all_names(LoadVolume<int>({1, 7, 1}, line), Ps, "1 x n x 1");
}

TEST_CASE("1D optimum equals exhaustive search", "[rect][algorithms][oracle]") {
  std::mt19937_64 rng(5);
  for (int t = 0; t < 300; ++t) {
    const std::size_t n = rng() % 9;
    std::vector<Sum> a(n), pre(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = rng() % 3 == 0 ? 0 : rng() % 20;
      pre[i + 1] = pre[i] + a[i];
    }
    const std::size_t p = 1 + rng() % 5;
    CAPTURE(t, n, p);
    auto view = [&](std::size_t x) { return pre[x]; };
    std::vector<std::size_t> ends;
    const Sum b = irregular::detail::chain_optimum<Sum>(view, 0, n, p, &ends);
    REQUIRE(b == opt1d(a, 0, p));
    REQUIRE(ends.size() == p);
    Sum worst = 0;
    std::size_t s = 0;
    for (auto e : ends) {
      REQUIRE(e >= s);
      worst = std::max(worst, pre[e] - pre[s]);
      s = e;
    }
    REQUIRE(s == n);
    REQUIRE(worst == b);
  }
}

TEST_CASE("optimal jagged, rectilinear and hierarchical algorithms equal exhaustive search",
          "[rect][algorithms][oracle]") {
  const std::uint64_t seed = GENERATE(range(1u, 41u));
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const std::size_t n1 = 1 + rng() % 5, n2 = 1 + rng() % 5;
  auto g = random_matrix(rng, n1, n2, 0, 12);
  if (seed % 3 == 0) g = random_matrix(rng, n1, n2, 1, 3);
  const Dense d = dense(g), dt = d.transposed();
  CAPTURE(n1, n2, g.values());

  for (std::size_t p1 = 1; p1 <= 3; ++p1)
    for (std::size_t p2 = 1; p2 <= 3; ++p2) {
      CAPTURE(p1, p2);
      const Sum hor = brute_pq(d, 0, p1, p2), ver = brute_pq(dt, 0, p1, p2);
      const auto nh = jag_pq_opt_nicol(g, g.box(), p1, p2, Orientation::hor);
      const auto dh = jag_pq_opt_dp(g, g.box(), p1, p2, Orientation::hor);
      const auto nv = jag_pq_opt_nicol(g, g.box(), p1, p2, Orientation::ver);
      const auto dv = jag_pq_opt_dp(g, g.box(), p1, p2, Orientation::ver);
      REQUIRE(max_load(g, nh) == hor);
      REQUIRE(max_load(g, dh) == hor);
      REQUIRE(max_load(g, nv) == ver);
      REQUIRE(max_load(g, dv) == ver);
      REQUIRE(max_load(g, jag_pq_opt_nicol(g, g.box(), p1, p2)) == std::min(hor, ver));
      // no heuristic beats the optimum of its class
      REQUIRE(max_load(g, jag_pq_heur(g, g.box(), p1, p2, Orientation::hor)) >= hor);
      REQUIRE(max_load(g, jag_pq_heur(g, g.box(), p1, p2, Orientation::ver)) >= ver);
      // rectilinear partitions are P x Q-way jagged in both orientations
      const Sum rect_opt = brute_rect(d, p1, p2);
      REQUIRE(rect_opt >= std::max(hor, brute_pq(dt, 0, p2, p1)));
      REQUIRE(max_load(g, rect_nicol(g, g.box(), p1, p2)) >= rect_opt);
      REQUIRE(max_load(g, rect_uniform(g, g.box(), p1, p2)) >= rect_opt);
    }

  BruteHier<std::uint32_t, 2> hier{g, {}};
  for (std::size_t P = 1; P <= 7; ++P) {
    CAPTURE(P);
    const Sum m_hor = brute_m(d, 0, P), m_ver = brute_m(dt, 0, P);
    REQUIRE(max_load(g, jag_m_opt(g, g.box(), P, Orientation::hor)) == m_hor);
    REQUIRE(max_load(g, jag_m_opt(g, g.box(), P, Orientation::ver)) == m_ver);
    REQUIRE(max_load(g, jag_m_opt_dp(g, g.box(), P, Orientation::hor)) == m_hor);
    REQUIRE(max_load(g, jag_m_opt_dp(g, g.box(), P, Orientation::ver)) == m_ver);
    const Sum m_opt = std::min(m_hor, m_ver);
    REQUIRE(max_load(g, jag_m_opt(g, P)) == m_opt);
    const Sum h_opt = hier(g.box(), P);
    REQUIRE(max_load(g, hier_opt(g, P)) == h_opt);
    // class inclusions: hierarchical contains m-way jagged contains P x Q-way jagged
    REQUIRE(h_opt <= m_opt);
    const auto [p1, p2] = grid_shape(P);
    REQUIRE(m_opt <= max_load(g, jag_pq_opt_nicol(g, g.box(), p1, p2)));
    // heuristics never beat their class optimum; PROBE is optimal for JAG-M-HEUR's stripes
    for (auto o : {Orientation::hor, Orientation::ver}) {
      const Sum opt = o == Orientation::hor ? m_hor : m_ver;
      const Sum heur = max_load(g, jag_m_heur(g, g.box(), P, o));
      const Sum probe = max_load(g, jag_m_heur_probe(g, g.box(), P, o));
      REQUIRE(heur >= opt);
      REQUIRE(probe >= opt);
      REQUIRE(probe <= heur);
    }
    for (auto rule : {CutRule::load, CutRule::dist, CutRule::hor, CutRule::ver}) {
      REQUIRE(max_load(g, hier_rb(g, P, rule)) >= h_opt);
      REQUIRE(max_load(g, hier_relaxed(g, P, rule)) >= h_opt);
    }
  }
}

TEST_CASE("JAG-M-PROBE and JAG-M-ALLOC are optimal for their parameters",
          "[rect][algorithms][oracle]") {
  std::mt19937_64 rng(31);
  for (int t = 0; t < 200; ++t) {
    const std::size_t n1 = 1 + rng() % 5, n2 = 1 + rng() % 5;
    auto g = random_matrix(rng, n1, n2, 0, 9);
    const Dense d = dense(g);
    CAPTURE(t, n1, n2, g.values());
    // random stripes
    std::vector<std::size_t> sb{0};
    for (std::size_t x = 1; x < n1; ++x)
      if (rng() % 2) sb.push_back(x);
    sb.push_back(n1);
    const std::size_t m = sb.size() - 1, P = m + rng() % 4;
    CAPTURE(sb, P);
    const auto probe = jag_m_probe(g, g.box(), P, 0, sb);
    REQUIRE_NOTHROW(validate(probe));
    REQUIRE(probe.parts.size() == P);
    REQUIRE(max_load(g, probe) == brute_probe(d, sb, 0, P));
    // random processor counts
    std::vector<std::size_t> q(1 + rng() % 3);
    for (auto& x : q) x = 1 + rng() % 3;
    CAPTURE(q);
    const auto alloc = jag_m_alloc(g, g.box(), q, Orientation::hor);
    REQUIRE_NOTHROW(validate(alloc));
    REQUIRE(max_load(g, alloc) == brute_alloc(d, q, 0, 0));
  }
}

TEST_CASE("HIER-OPT equals exhaustive search in 3D", "[rect][algorithms][oracle][3d]") {
  std::mt19937_64 rng(8);
  for (int t = 0; t < 6; ++t) {
    std::vector<int> v(3 * 2 * 3);
    for (auto& x : v) x = static_cast<int>(rng() % 10);
    LoadVolume<int> g({3, 2, 3}, v);
    BruteHier<int, 3> brute{g, {}};
    for (std::size_t P = 1; P <= 5; ++P) {
      CAPTURE(t, P, v);
      const auto p = hier_opt(g, P);
      REQUIRE_NOTHROW(validate(p));
      REQUIRE(max_load(g, p) == brute(g.box(), P));
      REQUIRE(max_load(g, hier_relaxed(g, P)) >= max_load(g, p));
      REQUIRE(max_load(g, jag_m_heur(g, P)) >= max_load(g, p));
    }
  }
}

TEST_CASE("Theorems 1 and 3: the approximation bounds of JAG-PQ-HEUR and JAG-M-HEUR hold",
          "[rect][algorithms][bounds]") {
  const std::uint64_t seed = GENERATE(11u, 12u, 13u, 14u);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const std::size_t n1 = 10 + rng() % 40, n2 = 10 + rng() % 40;
  auto g = random_matrix(rng, n1, n2, 5, 5 + static_cast<std::uint32_t>(rng() % 40));
  const auto [mn, mx] = std::minmax_element(g.values().begin(), g.values().end());
  const double delta = static_cast<double>(*mx) / static_cast<double>(*mn);
  for (std::size_t P : {2u, 4u, 9u, 12u, 25u, 64u, 100u, 400u}) {
    CAPTURE(n1, n2, delta, P);
    const auto [p1, p2] = grid_shape(P);
    const double pq = max_load(g, jag_pq_heur(g, g.box(), p1, p2, Orientation::hor)) /
                      (static_cast<double>(g.total()) / static_cast<double>(P));
    // Theorem 1: (1 + Delta p1 / n1)(1 + Delta p2 / n2)
    REQUIRE(pq <= (1 + delta * static_cast<double>(p1) / static_cast<double>(n1)) *
                          (1 + delta * static_cast<double>(p2) / static_cast<double>(n2)) +
                      1e-9);
    const std::size_t m = default_stripes(P);
    if (m >= P) continue;
    const double mh = max_load(g, jag_m_heur(g, g.box(), P, Orientation::hor)) /
                      (static_cast<double>(g.total()) / static_cast<double>(P));
    // Theorem 3: P / (P - m) + Delta P (1 + Delta m / n1) / (m n2)
    const double Pd = static_cast<double>(P), md = static_cast<double>(m);
    REQUIRE(mh <= Pd / (Pd - md) +
                      delta * Pd * (1 + delta * md / static_cast<double>(n1)) /
                          (md * static_cast<double>(n2)) +
                      1e-9);
  }
}

TEST_CASE("HYBRID: expected imbalance, fast/slow refinement and the choice of P'",
          "[rect][algorithms][hybrid]") {
  auto g = make_instance(Instance::multi_peak, 40, 40, 4);
  const Partitioner<std::uint32_t, 2> relaxed = make_partitioner<std::uint32_t, 2>("HIER-RELAXED");
  const Partitioner<std::uint32_t, 2> opt = make_partitioner<std::uint32_t, 2>("JAG-M-OPT");
  const Partitioner<std::uint32_t, 2> fast = make_partitioner<std::uint32_t, 2>("JAG-M-HEUR-PROBE");
  for (std::size_t P : {20u, 64u, 150u}) {
    CAPTURE(P);
    HybridReport slow_rep, fs_rep, fast_rep;
    HybridOptions all_slow;
    all_slow.fast_slow = false;
    const auto s = hybrid(g, g.box(), P, relaxed, opt, fast, all_slow, &slow_rep);
    REQUIRE_NOTHROW(validate(s));
    REQUIRE(s.parts.size() == P);
    // an optimal phase 2 cannot beat the load per processor of its part
    REQUIRE(imbalance(g, s) >= slow_rep.expected_imbalance - 1e-12);
    const auto cands = hybrid_candidates(P, all_slow);
    REQUIRE(std::find(cands.begin(), cands.end(), slow_rep.parts) != cands.end());
    for (auto c : cands) REQUIRE(c >= 16);
    const auto fs = hybrid(g, g.box(), P, relaxed, opt, fast, {}, &fs_rep);
    const auto f = hybrid(g, g.box(), P, relaxed, fast, fast, {}, &fast_rep);
    REQUIRE_NOTHROW(validate(fs));
    REQUIRE(fs_rep.parts == slow_rep.parts);
    REQUIRE(fs_rep.slow_runs >= 1);
    // the slow algorithm only replaces a part's solution when it improves it
    REQUIRE(max_load(g, fs) <= max_load(g, f));
    HybridOptions min_opt;
    min_opt.min_parts = 36;
    HybridReport r;
    hybrid(g, g.box(), P, relaxed, opt, fast, min_opt, &r);
    REQUIRE(r.parts >= std::min<std::size_t>(36, P));
  }
}

TEST_CASE("bad input: P = 0, unknown names, bad parameters", "[rect][algorithms][error]") {
  LoadMatrix<int> g({3, 3}, std::vector<int>(9, 1));
  for (const auto& name : partitioner_names<2>()) {
    INFO(name);
    REQUIRE_THROWS_AS((make_partitioner<int, 2>(name)(g, g.box(), 0)), irregular::invalid_argument);
  }
  LoadVolume<int> v({2, 2, 2}, std::vector<int>(8, 1));
  for (const auto& name : partitioner_names<3>())
    REQUIRE_THROWS_AS((make_partitioner<int, 3>(name)(v, v.box(), 0)), irregular::invalid_argument);
  for (const char* bad : {"RECT-MAGIC", "JAG-M-HEUR-DIAG", "HIER-RB-BEST", "HYBRID(HIER-RB)",
                          "HYBRID(HIER-RB/NOPE)", "HYBRID(HIER-RB/JAG-M-OPT,max=3)", ""})
    REQUIRE_THROWS_AS((make_partitioner<int, 2>(bad)), irregular::invalid_argument);
  REQUIRE_THROWS_WITH((make_partitioner<int, 2>("RECT-MAGIC")), Catch::Contains("RECT-MAGIC"));
  REQUIRE_THROWS_AS((make_partitioner<int, 3>("RECT-NICOL")), irregular::invalid_argument);
  REQUIRE_NOTHROW(make_partitioner<int, 2>("jag-m-heur-probe-ver"));
  REQUIRE_THROWS_AS(jag_m_probe(g, g.box(), 1, 0, {0, 1, 3}), irregular::invalid_argument);
  REQUIRE_THROWS_AS(jag_m_probe(g, g.box(), 4, 0, {0, 2}), irregular::invalid_argument);
  REQUIRE_THROWS_AS(jag_m_alloc(g, g.box(), {2, 0}), irregular::invalid_argument);
  REQUIRE_THROWS_AS(jag_m_heur(v, v.box(), 3, {0, 0, 1}), irregular::invalid_argument);
  REQUIRE_THROWS_AS(hier_rb(g, Rect<2>{{0, 0}, {4, 3}}, 2), irregular::invalid_argument);
  LoadMatrix<std::uint8_t> huge({1024, 1024}, std::vector<std::uint8_t>(1024 * 1024, 1));
  REQUIRE_THROWS_AS(hier_opt(huge, 4), irregular::invalid_argument);
}

TEST_CASE("floating-point loads: optimal algorithms agree and bound the heuristics",
          "[rect][algorithms][float]") {
  std::mt19937_64 rng(404);
  for (int t = 0; t < 30; ++t) {
    const std::size_t n1 = 1 + rng() % 12, n2 = 1 + rng() % 12;
    std::vector<double> v(n1 * n2);
    for (auto& x : v) x = rng() % 4 == 0 ? 0.0 : static_cast<double>(rng() % 100000) / 997.0;
    LoadMatrix<double> g({n1, n2}, v);
    const std::size_t P = 1 + rng() % 20;
    CAPTURE(t, n1, n2, P);
    const auto [p1, p2] = grid_shape(P);
    const double nicol = max_load(g, jag_pq_opt_nicol(g, g.box(), p1, p2));
    const double dp = max_load(g, jag_pq_opt_dp(g, g.box(), p1, p2));
    REQUIRE(nicol == Approx(dp).epsilon(1e-9));
    REQUIRE(max_load(g, jag_pq_heur(g, g.box(), p1, p2)) >= nicol * (1 - 1e-9));
    const double mopt = max_load(g, jag_m_opt(g, P));
    REQUIRE(mopt <= nicol * (1 + 1e-9));
    REQUIRE(max_load(g, jag_m_opt_dp(g, P)) == Approx(mopt).epsilon(1e-9));
    REQUIRE(max_load(g, jag_m_heur_probe(g, P)) >= mopt * (1 - 1e-9));
    const double hopt = max_load(g, hier_opt(g, P));
    REQUIRE(hopt <= mopt * (1 + 1e-9));
    REQUIRE(max_load(g, hier_relaxed(g, P)) >= hopt * (1 - 1e-9));
  }
}

TEST_CASE("JAG-M-OPT: the paper's DP and the decision-form DP agree on larger instances",
          "[rect][algorithms][oracle]") {
  std::mt19937_64 rng(123);
  for (int t = 0; t < 6; ++t) {
    auto g = t % 2 ? make_instance(Instance::multi_peak, 12 + rng() % 10, 12 + rng() % 10, rng())
                   : make_instance(Instance::uniform, 12 + rng() % 10, 12 + rng() % 10, rng(), 2.0);
    for (std::size_t P : {3u, 8u, 17u, 30u}) {
      CAPTURE(t, P, g.extent(0), g.extent(1));
      const auto a = jag_m_opt(g, P), b = jag_m_opt_dp(g, P);
      REQUIRE_NOTHROW(validate(b));
      REQUIRE(max_load(g, a) == max_load(g, b));
    }
  }
}
