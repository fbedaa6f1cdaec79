// The bounded-neighbours sequential core against brute force: neighbour counts against cell
// adjacency, legal partitions for NS = 2, 3, 4, 8 under both stencils (toroidal or not), the
// optimal legal and unconstrained cuts against enumeration, the chain reach and max_parts against
// every partition of small grids, and §4.2's Figure 2.
#include <irregular/rows/bound.hpp>
#include <irregular/rows/cuts.hpp>
#include <irregular/rows/cuts_check.hpp>
#include <irregular/rows/neighbour_count.hpp>
#include <irregular/rows/tradeoff.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <vector>

namespace rows = irregular::rows;
using rows::Adjacency;
using rows::Grid;
using rows::Stencil;

namespace {

// f(x, y) for every cell x and every other cell y in its stencil (chain positions), by visiting
// the grid: the oracle of all neighbour computations.
template <class F>
void for_each_adjacent(const Grid& g, const Adjacency& adj, F&& f) {
  const long long R = static_cast<long long>(g.rows), M = static_cast<long long>(g.columns);
  for (long long r = 0; r < R; ++r)
    for (long long c = 0; c < M; ++c)
      for (int dr = -1; dr <= 1; ++dr)
        for (int dc = -1; dc <= 1; ++dc) {
          if (dr == 0 && dc == 0) continue;
          if (adj.stencil == Stencil::four && dr != 0 && dc != 0) continue;
          long long rr = r + dr, cc = c + dc;
          if (adj.wrap_rows) rr = (rr + R) % R;
          if (adj.wrap_columns) cc = (cc + M) % M;
          if (rr < 0 || rr >= R || cc < 0 || cc >= M) continue;
          const auto x = static_cast<std::size_t>(r * M + c), y = static_cast<std::size_t>(rr * M + cc);
          if (x != y) f(x, y);
        }
}

// Neighbour sets by visiting every cell and its stencil.
std::vector<std::vector<int>> brute_neighbours(const Grid& g, const std::vector<std::size_t>& cuts, const Adjacency& adj) {
  const std::size_t p = cuts.size() - 1, N = g.cells();
  std::vector<int> owner(N);
  for (std::size_t k = 0; k < p; ++k)
    for (std::size_t x = cuts[k]; x < cuts[k + 1]; ++x) owner[x] = static_cast<int>(k);
  std::vector<std::set<int>> s(p);
  for_each_adjacent(g, adj, [&](std::size_t x, std::size_t y) {
    if (owner[x] != owner[y]) s[static_cast<std::size_t>(owner[x])].insert(owner[y]);
  });
  std::vector<std::vector<int>> out(p);
  for (std::size_t k = 0; k < p; ++k) out[k].assign(s[k].begin(), s[k].end());
  return out;
}

std::size_t brute_max(const Grid& g, const std::vector<std::size_t>& cuts, const Adjacency& adj) {
  std::size_t m = 0;
  for (const auto& v : brute_neighbours(g, cuts, adj)) m = std::max(m, v.size());
  return m;
}

std::vector<std::size_t> random_cuts(std::size_t N, std::size_t p, std::mt19937& rng) {
  std::vector<std::size_t> c(p + 1, 0);
  std::uniform_int_distribution<std::size_t> d(0, N);
  for (std::size_t k = 1; k < p; ++k) c[k] = d(rng);
  c[p] = N;
  std::sort(c.begin(), c.end());
  return c;
}

// Every separator vector 0 = s0 < s1 < ... < sp = N (non-empty parts); f(cuts).
template <class F>
void for_each_partition(std::size_t N, std::size_t p, F&& f) {
  std::vector<std::size_t> c(p + 1, 0);
  c[p] = N;
  auto rec = [&](auto&& self, std::size_t k) -> void {
    if (k == p) {
      if (c[p - 1] < N) f(c);
      return;
    }
    for (std::size_t x = c[k - 1] + 1; x + (p - k) <= N; ++x) {
      c[k] = x;
      self(self, k + 1);
    }
  };
  if (p == 1) f(c); else rec(rec, 1);
}

std::int64_t bottleneck(const std::vector<std::int64_t>& w, const std::vector<std::size_t>& c) {
  std::int64_t b = 0;
  for (std::size_t k = 0; k + 1 < c.size(); ++k) {
    std::int64_t s = 0;
    for (std::size_t x = c[k]; x < c[k + 1]; ++x) s += w[x];
    b = std::max(b, s);
  }
  return b;
}

const std::vector<Adjacency> all_adjacencies = {
    {Stencil::four, false, false}, {Stencil::four, true, true},  {Stencil::eight, false, false},
    {Stencil::eight, true, true},  {Stencil::four, true, false}, {Stencil::eight, false, true}};

}  // namespace

TEST_CASE("neighbour counting from the cuts equals cell adjacency", "[rows][neighbours]") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 400; ++trial) {
    const Grid g{1 + rng() % 7, 1 + rng() % 7};
    const std::size_t p = 1 + rng() % std::min<std::size_t>(9, g.cells());
    const auto cuts = random_cuts(g.cells(), p, rng);
    for (const auto& adj : all_adjacencies) {
      CAPTURE(trial, g.rows, g.columns, cuts, static_cast<int>(adj.stencil), adj.wrap_columns, adj.wrap_rows);
      REQUIRE(rows::neighbour_parts(g, cuts, adj) == brute_neighbours(g, cuts, adj));
    }
  }
  // Larger grids, fine cuts: the chain windows must still find every contact.
  for (int trial = 0; trial < 20; ++trial) {
    const Grid g{20 + rng() % 10, 15 + rng() % 10};
    const auto cuts = random_cuts(g.cells(), 60, rng);
    for (const auto& adj : all_adjacencies) REQUIRE(rows::neighbour_parts(g, cuts, adj) == brute_neighbours(g, cuts, adj));
  }
}

TEST_CASE("the paper's NS = 2 rule: at least m cells, hence two neighbours (4-stencil)", "[rows][rule]") {
  const Grid g{10, 6};
  const rows::NeighbourBound b{.ns = 2};
  REQUIRE(b.min_cells(g, 4) == 6);
  REQUIRE(b.max_parts(g) == 10);  // one row each at most
  // The 8-stencil needs m + 1: a part of exactly m cells lets its neighbours touch diagonally.
  const std::vector<std::size_t> cuts{0, 9, 15, 60};
  REQUIRE(brute_max(g, cuts, Adjacency::of(Stencil::four, false)) == 2);
  REQUIRE(brute_max(g, cuts, Adjacency::of(Stencil::eight, false)) == 2);
  const std::vector<std::size_t> diag{0, 8, 14, 30, 60};  // part 1 = 6 cells from column 2
  REQUIRE(brute_max(g, diag, Adjacency::of(Stencil::eight, false)) == 3);
  REQUIRE(rows::NeighbourBound{.ns = 2, .stencil = Stencil::eight}.min_cells(g, 4) == 7);
}

TEST_CASE("legal partitions hold the bound, by brute-force adjacency", "[rows][legal]") {
  std::mt19937 rng(2024);
  for (int ns : {2, 3, 4, 8})
    for (Stencil st : {Stencil::four, Stencil::eight})
      for (bool tor : {false, true}) {
        const rows::NeighbourBound bound{.ns = ns, .stencil = st, .toroidal = tor};
        for (int trial = 0; trial < 25; ++trial) {
          const Grid g{2 + rng() % 12, 2 + rng() % 12};
          const std::size_t most = bound.max_parts(g);
          const std::size_t p = 1 + rng() % most;
          std::vector<std::int64_t> w(g.cells());
          for (auto& x : w) x = (rng() % 4 == 0) ? static_cast<std::int64_t>(rng() % 50) : 0;
          CAPTURE(ns, static_cast<int>(st), tor, g.rows, g.columns, p);
          const auto opt = rows::optimal_legal_cuts<std::int64_t>(g, bound, w, p).separators;
          REQUIRE(bound.rule_holds(g, opt));
          REQUIRE(brute_max(g, opt, bound.adjacency()) <= static_cast<std::size_t>(ns));
          REQUIRE(bound.holds(g, opt));
          const auto greedy = rows::greedy_check(g, bound, rows::paper_cuts<std::int64_t>(w, p));
          REQUIRE(bound.rule_holds(g, greedy));
          REQUIRE(brute_max(g, greedy, bound.adjacency()) <= static_cast<std::size_t>(ns));
          REQUIRE(bottleneck(w, opt) <= bottleneck(w, greedy));
          // Random cuts repaired by greedy shifting are legal too.
          const auto fixed = rows::greedy_check(g, bound, random_cuts(g.cells(), p, rng));
          REQUIRE(brute_max(g, fixed, bound.adjacency()) <= static_cast<std::size_t>(ns));
        }
      }
}

TEST_CASE("the optimal legal partition equals brute force; unconstrained cuts are optimal", "[rows][optimal]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 150; ++trial) {
    const Grid g{2 + rng() % 3, 2 + rng() % 3};  // up to 16 cells
    const rows::NeighbourBound bound{.ns = 2 + static_cast<int>(rng() % 4) * 2, .stencil = rng() % 2 ? Stencil::four : Stencil::eight,
                                     .toroidal = rng() % 2 == 0};
    const std::size_t p = 1 + rng() % std::min<std::size_t>(6, bound.max_parts(g));
    std::vector<std::int64_t> w(g.cells());
    for (auto& x : w) x = static_cast<std::int64_t>(rng() % 20);
    const std::size_t L = bound.min_cells(g, p);
    std::int64_t best_rule = std::numeric_limits<std::int64_t>::max(), best_any = best_rule;
    for_each_partition(g.cells(), p, [&](const std::vector<std::size_t>& c) {
      const auto b = bottleneck(w, c);
      best_any = std::min(best_any, b);
      bool ok = true;
      for (std::size_t k = 0; k < p; ++k) ok = ok && c[k + 1] - c[k] >= L;
      if (ok) best_rule = std::min(best_rule, b);
    });
    CAPTURE(trial, g.rows, g.columns, p, bound.ns, w);
    const auto opt = rows::optimal_legal_cuts<std::int64_t>(g, bound, w, p);
    REQUIRE(opt.bottleneck == best_rule);
    REQUIRE(bottleneck(w, opt.separators) == best_rule);
    REQUIRE(bottleneck(w, rows::balanced_cuts<std::int64_t>(w, p)) == best_any);
  }
}

TEST_CASE("a worked example in the style of §4.2's Figure 2", "[rows][figure2]") {
  // Old partition: P0..P3 hold 55, 10, 30 and 5 elements: the optimal load is 25 per process.
  const std::vector<double> old_loads{55, 10, 30, 5};
  const auto holders = rows::cut_holders<double>(old_loads, 4);
  REQUIRE(holders == std::vector<int>{0, 0, 2});  // P0 holds two new cuts, P2 one
  REQUIRE(rows::receive_cuts<double>(old_loads, 4) == std::vector<std::size_t>{2, 0, 1, 0});
  // One element per cell along a 10 x 10 grid, in the old sub-domains' order.
  std::vector<double> cells(100, 1.0);
  const std::vector<std::size_t> old_cuts{0, 55, 65, 95, 100};
  std::vector<std::size_t> all{0};
  double before = 0;
  for (std::size_t r = 0; r < 4; ++r) {
    const auto mine = rows::list_cuts<double, double>(std::span<const double>(cells).subspan(old_cuts[r], old_cuts[r + 1] - old_cuts[r]),
                                                      old_cuts[r], before, 100.0, 4);
    REQUIRE(mine.size() == rows::receive_cuts<double>(old_loads, 4)[r]);
    all.insert(all.end(), mine.begin(), mine.end());
    before += old_loads[r];
  }
  all.push_back(100);
  REQUIRE(all == std::vector<std::size_t>{0, 25, 50, 75, 100});
  REQUIRE(all == rows::paper_cuts<double>(cells, 4));
  // New P2 = [50, 75): receives from P0 (50..55), all of P1 (55..65), keeps 65..75, sends 75..95 to P3.
  const Grid g{10, 10};
  REQUIRE(rows::NeighbourBound{.ns = 2}.holds(g, all));
}

TEST_CASE("ListCuts of the old sub-domains together are the paper's cuts", "[rows][listcuts]") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t N = 1 + rng() % 60, p = 1 + rng() % 9, q = 1 + rng() % 6;
    std::vector<std::int64_t> w(N);
    for (auto& x : w) x = rng() % 3 == 0 ? 0 : static_cast<std::int64_t>(rng() % 9);
    const auto old_cuts = random_cuts(N, q, rng);
    std::vector<std::int64_t> old_loads(q);
    for (std::size_t r = 0; r < q; ++r)
      for (std::size_t x = old_cuts[r]; x < old_cuts[r + 1]; ++x) old_loads[r] += w[x];
    std::int64_t total = 0;
    for (auto x : w) total += x;
    const auto expect = rows::paper_cuts<std::int64_t>(w, p);
    if (total == 0) continue;
    std::vector<std::size_t> all{0};
    std::int64_t before = 0;
    const auto recv = rows::receive_cuts<std::int64_t>(old_loads, p);
    for (std::size_t r = 0; r < q; ++r) {
      const auto mine = rows::list_cuts<std::int64_t, std::int64_t>(
          std::span<const std::int64_t>(w).subspan(old_cuts[r], old_cuts[r + 1] - old_cuts[r]), old_cuts[r], before, total, p);
      REQUIRE(mine.size() == recv[r]);
      all.insert(all.end(), mine.begin(), mine.end());
      before += old_loads[r];
    }
    all.push_back(N);
    CAPTURE(trial, w, old_cuts, p);
    REQUIRE(all == expect);
  }
}

TEST_CASE("trade-off evaluation with P and V", "[rows][tradeoff]") {
  const std::vector<double> loads{30, 10, 20};  // total 60, optimal 20, MaxD 30
  REQUIRE(rows::TradeOff{}.evaluate(loads, 100).balance);
  REQUIRE_FALSE(rows::TradeOff{.max_unbalance = 10}.evaluate(loads, 100).balance);
  REQUIRE(rows::TradeOff{.max_unbalance = 9.5}.evaluate(loads, 100).balance);
  REQUIRE_FALSE(rows::TradeOff{.min_occupancy = 61}.evaluate(loads, 100).balance);  // 60 < 61% of 100
  REQUIRE(rows::TradeOff{.min_occupancy = 60}.evaluate(loads, 100).balance);
  const auto d = rows::TradeOff{}.evaluate(loads, 100);
  REQUIRE(d.optimal == 20);
  REQUIRE(d.max_load == 30);
  REQUIRE_THROWS_AS(rows::TradeOff{.min_occupancy = 101}.evaluate(loads, 100), irregular::invalid_argument);
  REQUIRE_THROWS_AS(rows::TradeOff{.max_unbalance = -1}.evaluate(loads, 100), irregular::invalid_argument);
  const std::vector<double> bad{1, -2};
  REQUIRE_THROWS_AS(rows::TradeOff{}.evaluate(bad, 100), irregular::invalid_argument);
}

TEST_CASE("bad input: NS < 2, too many parts, negative loads", "[rows][errors]") {
  const Grid g{8, 5};
  std::vector<double> w(40, 1.0);
  REQUIRE_THROWS_AS(rows::optimal_legal_cuts<double>(g, {.ns = 1}, w, 3), irregular::invalid_argument);
  REQUIRE_THROWS_AS((void)rows::NeighbourBound{.ns = 0}.max_parts(g), irregular::invalid_argument);
  // NS = 2 on 8 rows: at most 8 parts; the message names the largest feasible number.
  REQUIRE_THROWS_WITH(rows::optimal_legal_cuts<double>(g, {.ns = 2}, w, 9),
                      Catch::Contains("largest feasible number of parts is 8"));
  REQUIRE_NOTHROW(rows::optimal_legal_cuts<double>(g, {.ns = 2}, w, 8));
  REQUIRE_THROWS_AS(rows::greedy_check(g, {.ns = 2}, rows::paper_cuts<double>(w, 9)), irregular::invalid_argument);
  w[17] = -1;
  REQUIRE_THROWS_WITH(rows::optimal_legal_cuts<double>(g, {.ns = 2}, w, 3), Catch::Contains("17"));
  REQUIRE_THROWS_AS(rows::balanced_cuts<double>(w, 3), irregular::invalid_argument);
  REQUIRE_THROWS_AS(rows::paper_cuts<double>(w, 3), irregular::invalid_argument);
  REQUIRE_THROWS_AS(rows::neighbour_parts(g, std::vector<std::size_t>{0, 50}, {}), irregular::invalid_argument);
}

TEST_CASE("the optimal legal partition equals a DP oracle on spiky loads", "[rows][optimal]") {
  // Heavy isolated cells make many starts bad (their next L cells exceed the bottleneck): the
  // constrained probe must walk back over them.
  std::mt19937 rng(99);
  for (int trial = 0; trial < 200; ++trial) {
    const Grid g{3 + rng() % 10, 3 + rng() % 12};
    const rows::NeighbourBound bound{.ns = 2 + static_cast<int>(rng() % 3) * 2, .stencil = rng() % 2 ? Stencil::four : Stencil::eight};
    const std::size_t N = g.cells(), p = 1 + rng() % bound.max_parts(g);
    std::vector<std::int64_t> w(N);
    for (auto& x : w) x = rng() % 7 == 0 ? static_cast<std::int64_t>(50 + rng() % 100) : static_cast<std::int64_t>(rng() % 3);
    const std::size_t L = bound.min_cells(g, p);
    std::vector<std::int64_t> pre(N + 1, 0);
    for (std::size_t i = 0; i < N; ++i) pre[i + 1] = pre[i] + w[i];
    const std::int64_t inf = std::numeric_limits<std::int64_t>::max();
    std::vector<std::int64_t> dp(N + 1, inf), next(N + 1);
    dp[0] = 0;
    for (std::size_t k = 1; k <= p; ++k) {
      std::fill(next.begin(), next.end(), inf);
      for (std::size_t e = L; e <= N; ++e)
        for (std::size_t s = 0; s + L <= e; ++s)
          if (dp[s] != inf) next[e] = std::min(next[e], std::max(dp[s], pre[e] - pre[s]));
      dp.swap(next);
    }
    CAPTURE(trial, g.rows, g.columns, p, bound.ns, L);
    const auto opt = rows::optimal_legal_cuts<std::int64_t>(g, bound, w, p);
    REQUIRE(opt.bottleneck == dp[N]);
    REQUIRE(bound.rule_holds(g, opt.separators));
  }
}

TEST_CASE("the chain reach is the largest chain distance between adjacent cells", "[rows][reach]") {
  for (std::size_t n = 1; n <= 7; ++n)
    for (std::size_t m = 1; m <= 7; ++m)
      for (const auto& adj : all_adjacencies) {
        const Grid g{n, m};
        std::size_t D = 1;  // chain_reach's value when no two cells touch
        for_each_adjacent(g, adj, [&](std::size_t x, std::size_t y) {
          const std::size_t d = x > y ? x - y : y - x;
          D = std::max(D, adj.wrap_rows ? std::min(d, g.cells() - d) : d);
        });
        CAPTURE(n, m, static_cast<int>(adj.stencil), adj.wrap_columns, adj.wrap_rows);
        REQUIRE(rows::chain_reach(g, adj) == D);
      }
}

TEST_CASE("max_parts against brute force over every partition of small grids", "[rows][legal][max_parts]") {
  // Every row-major partition into non-empty runs (a subset of the N - 1 inner cut positions) of
  // every grid up to 16 cells, its exact neighbour counts from brute-force cell adjacency. Checks,
  // for NS = 2, 3, 4, 6, both stencils, toroidal or not: (1) every partition the rule admits has
  // at most NS neighbours per part; (2) max_parts is the largest p the rule admits; (3) it is at
  // most the largest p of an exactly legal partition. The rule is sufficient, not necessary, so
  // (3) is strict in places: counted below, and quoted in doc/guide/bounded-neighbours.md.
  const std::vector<int> bounds{2, 3, 4, 6};
  int configurations = 0, tight = 0;
  for (std::size_t n = 1; n <= 6; ++n)
    for (std::size_t m = 1; m <= 6; ++m) {
      const Grid g{n, m};
      const std::size_t N = g.cells();
      if (N > 16) continue;
      for (Stencil st : {Stencil::four, Stencil::eight})
        for (bool tor : {false, true}) {
          const Adjacency adj = Adjacency::of(st, tor);
          std::vector<std::pair<std::size_t, std::size_t>> pairs;
          for_each_adjacent(g, adj, [&](std::size_t x, std::size_t y) {
            if (x < y) pairs.emplace_back(x, y);
          });
          std::vector<std::size_t> exact_best(bounds.size(), 0), rule_best(bounds.size(), 0);
          std::vector<std::vector<std::size_t>> L(bounds.size(), std::vector<std::size_t>(N + 1));
          for (std::size_t b = 0; b < bounds.size(); ++b)
            for (std::size_t p = 1; p <= N; ++p)
              L[b][p] = rows::NeighbourBound{.ns = bounds[b], .stencil = st, .toroidal = tor}.min_cells(g, p);
          std::vector<int> owner(N);
          std::vector<std::uint32_t> touch(N);
          std::vector<std::size_t> size(N);
          for (std::uint32_t mask = 0; mask < (std::uint32_t{1} << (N - 1)); ++mask) {
            std::size_t p = 0;
            size[0] = 0;
            for (std::size_t x = 0; x < N; ++x) {
              if (x > 0 && (mask >> (x - 1) & 1u)) size[++p] = 0;  // a cut before cell x
              owner[x] = static_cast<int>(p);
              ++size[p];
            }
            ++p;
            std::fill(touch.begin(), touch.begin() + static_cast<std::ptrdiff_t>(p), 0u);
            for (auto [x, y] : pairs)
              if (owner[x] != owner[y]) {
                touch[static_cast<std::size_t>(owner[x])] |= std::uint32_t{1} << owner[y];
                touch[static_cast<std::size_t>(owner[y])] |= std::uint32_t{1} << owner[x];
              }
            int most = 0;
            for (std::size_t k = 0; k < p; ++k) most = std::max(most, std::popcount(touch[k]));
            const std::size_t smallest = *std::min_element(size.begin(), size.begin() + static_cast<std::ptrdiff_t>(p));
            for (std::size_t b = 0; b < bounds.size(); ++b) {
              if (most <= bounds[b]) exact_best[b] = std::max(exact_best[b], p);
              if (smallest < L[b][p]) continue;
              rule_best[b] = std::max(rule_best[b], p);
              CAPTURE(n, m, static_cast<int>(st), tor, bounds[b], mask, p);
              REQUIRE(most <= bounds[b]);  // (1)
            }
          }
          for (std::size_t b = 0; b < bounds.size(); ++b) {
            const rows::NeighbourBound bound{.ns = bounds[b], .stencil = st, .toroidal = tor};
            CAPTURE(n, m, static_cast<int>(st), tor, bounds[b], exact_best[b]);
            REQUIRE(bound.max_parts(g) == rule_best[b]);    // (2)
            REQUIRE(bound.max_parts(g) <= exact_best[b]);  // (3)
            ++configurations;
            tight += bound.max_parts(g) == exact_best[b];
          }
        }
    }
  // 416 configurations (26 grids x 16); the rule's max_parts is the exact maximum in 277. The
  // rest are mostly NS >= 3 (an odd NS and the 4-stencil's NS = 4 gain nothing under the rule)
  // and the ends of the chain (NS = 2: a one-cell first run is legal).
  CHECK(configurations == 416);
  CHECK(tight == 277);
}

TEST_CASE("the 5 x 1 torus with 8 neighbours hosts five one-cell parts at NS = 3", "[rows][max_parts]") {
  // One column: the diagonals land on the vertical neighbours, so D = 1 and L = 1; every part
  // has two neighbours on the ring of five.
  const Grid g{5, 1};
  const rows::NeighbourBound bound{.ns = 3, .stencil = Stencil::eight, .toroidal = true};
  REQUIRE(rows::chain_reach(g, bound.adjacency()) == 1);
  REQUIRE(bound.min_cells(g, 5) == 1);
  REQUIRE(bound.max_parts(g) == 5);
  const std::vector<std::int64_t> w{3, 1, 4, 1, 5};
  const auto cut = rows::optimal_legal_cuts<std::int64_t>(g, bound, w, 5);
  REQUIRE(cut.separators == std::vector<std::size_t>{0, 1, 2, 3, 4, 5});
  REQUIRE(rows::neighbour_counts(g, cut.separators, bound.adjacency()) == std::vector<std::size_t>(5, 2));
  REQUIRE(brute_max(g, cut.separators, bound.adjacency()) == 2);
  // A one-row torus is a ring too; without the wrap a one-row grid is a path.
  REQUIRE(rows::NeighbourBound{.ns = 2, .toroidal = true}.max_parts(Grid{1, 7}) == 7);
  REQUIRE(rows::NeighbourBound{.ns = 2}.max_parts(Grid{1, 7}) == 7);
}
