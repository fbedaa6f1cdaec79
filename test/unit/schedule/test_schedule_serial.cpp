// Serial parts of the inspector/executor (kaddoura-ranka-1995 §3.1–3.2): block translation
// against a brute-force table, the locality transforms, graph renumbering and block costs.
#include "../../../examples/meshloop/figure8.hpp"

#include <irregular/schedule/block_translation.hpp>
#include <irregular/schedule/graph.hpp>
#include <irregular/schedule/locality_transform.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <vector>

namespace sch = irregular::schedule;

namespace {
// A jittered triangulated grid: vertices with coordinates and a symmetric edge list.
struct Grid {
  std::vector<std::array<double, 2>> xs;
  std::vector<std::array<std::int64_t, 2>> edges;
};
Grid grid(int w, int h, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(-0.3, 0.3);
  Grid g;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) g.xs.push_back({x + jitter(rng), y + jitter(rng)});
  // Shuffle the vertex numbers so the file order has no locality.
  std::vector<std::int64_t> id(static_cast<std::size_t>(w * h));
  std::iota(id.begin(), id.end(), 0);
  std::shuffle(id.begin(), id.end(), rng);
  std::vector<std::array<double, 2>> shuffled(g.xs.size());
  for (std::size_t v = 0; v < id.size(); ++v) shuffled[static_cast<std::size_t>(id[v])] = g.xs[v];
  g.xs = shuffled;
  const auto at = [&](int x, int y) { return id[static_cast<std::size_t>(y * w + x)]; };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (x + 1 < w) g.edges.push_back({at(x, y), at(x + 1, y)});
      if (y + 1 < h) g.edges.push_back({at(x, y), at(x, y + 1)});
      if (x + 1 < w && y + 1 < h) g.edges.push_back({at(x, y), at(x + 1, y + 1)});
    }
  return g;
}

bool is_permutation_of_n(const std::vector<std::int64_t>& T) {
  std::vector<std::int64_t> s = T;
  std::sort(s.begin(), s.end());
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i] != static_cast<std::int64_t>(i)) return false;
  return true;
}

std::vector<double> figure8(const sch::Graph& g, std::vector<double> y, int iterations) {
  meshloop::figure8_sweeps(g, y, iterations);
  return y;
}
}  // namespace

TEST_CASE("block translation equals a brute-force translation table", "[schedule]") {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 200; ++trial) {
    const int p = 1 + static_cast<int>(rng() % 9);
    const std::int64_t n = static_cast<std::int64_t>(rng() % 60);
    std::vector<std::int64_t> b(static_cast<std::size_t>(p) + 1);
    for (auto& x : b) x = n == 0 ? 0 : static_cast<std::int64_t>(rng() % static_cast<unsigned>(n + 1));
    std::sort(b.begin(), b.end());
    b.front() = 0;
    b.back() = n;  // empty blocks included
    const sch::BlockTranslation t(b);
    std::vector<sch::Home> table;  // the translation table the 1D transform makes unnecessary
    for (int r = 0; r < p; ++r)
      for (std::int64_t l = 0; l < b[static_cast<std::size_t>(r) + 1] - b[static_cast<std::size_t>(r)]; ++l)
        table.push_back({r, l});
    REQUIRE(static_cast<std::int64_t>(table.size()) == n);
    for (std::int64_t g = 0; g < n; ++g) {
      INFO("trial " << trial << " g " << g);
      REQUIRE(t.translate(g) == table[static_cast<std::size_t>(g)]);
      REQUIRE(t.global(t.owner(g), t.translate(g).local) == g);
    }
    REQUIRE_FALSE(t.contains(n));
    REQUIRE_FALSE(t.contains(-1));
  }
  const sch::BlockTranslation one(5);
  CHECK(one.parts() == 1);
  CHECK(one.translate(4) == sch::Home{0, 4});
}

TEST_CASE("block translation rejects bad boundaries", "[schedule]") {
  CHECK_THROWS_AS(sch::BlockTranslation(std::vector<std::int64_t>{1, 4}), irregular::invalid_argument);
  CHECK_THROWS_AS(sch::BlockTranslation(std::vector<std::int64_t>{0, 4, 3}), irregular::invalid_argument);
  CHECK_THROWS_AS(sch::BlockTranslation(std::vector<std::int64_t>{0}), irregular::invalid_argument);
  CHECK_THROWS_AS(sch::BlockTranslation(std::int64_t{-1}), irregular::invalid_argument);
  const std::vector<std::size_t> sep{0, 3, 3, 8};
  CHECK(sch::BlockTranslation::from_separators(sep).boundaries() == std::vector<std::int64_t>{0, 3, 3, 8});
}

TEST_CASE("every ordering is a permutation, and RCB halves split at the median", "[schedule]") {
  const Grid g = grid(17, 13, 5);
  const std::span<const std::array<double, 2>> xs(g.xs);
  for (auto o : {sch::LocalityOrder::hilbert, sch::LocalityOrder::morton, sch::LocalityOrder::peano,
                 sch::LocalityOrder::rcb}) {
    INFO(sch::to_string(o));
    const auto T = sch::locality_transform<2>(o, xs);
    REQUIRE(T.size() == g.xs.size());
    REQUIRE(is_permutation_of_n(T));
    REQUIRE(sch::parse_locality_order(sch::to_string(o)) == o);
  }
  // RCB's first cut: the grid is wider than tall, so the lower half (first n/2 numbers) lies left
  // of (or at) every vertex of the upper half.
  const auto T = sch::rcb_order<2>(xs);
  const std::size_t n = g.xs.size(), half = n / 2;
  double max_low = -1e300, min_high = 1e300;
  for (std::size_t v = 0; v < n; ++v) {
    if (static_cast<std::size_t>(T[v]) < half) max_low = std::max(max_low, g.xs[v][0]);
    else min_high = std::min(min_high, g.xs[v][0]);
  }
  CHECK(max_low <= min_high);
  CHECK_THROWS_AS(sch::parse_locality_order("spectral"), irregular::invalid_argument);
  std::vector<std::array<double, 2>> bad = g.xs;
  bad[7][1] = std::nan("");
  CHECK_THROWS_AS(sch::rcb_order<2>(std::span<const std::array<double, 2>>(bad)), irregular::invalid_argument);
  CHECK_THROWS_AS(sch::curve_order<irregular::curve::Hilbert<2>>(std::span<const std::array<double, 2>>(bad)),
                  irregular::invalid_argument);
}

TEST_CASE("curve order is the order of the finest cells along the curve", "[schedule]") {
  // On the points of a 2^k grid, level k puts each point in its own cell: T must sort by index.
  using H = irregular::curve::Hilbert<2>;
  std::vector<std::array<double, 2>> xs;
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) xs.push_back({x + 0.5, y + 0.5});
  xs.push_back({8.0, 8.0});  // bounding box [0.5, 8]^2 ... make the box exactly [0, 8]
  xs.push_back({0.0, 0.0});
  const auto T = sch::curve_order<H>(std::span<const std::array<double, 2>>(xs), 3);
  for (std::size_t v = 0; v + 1 < 64; ++v) {
    const auto cell = [&](std::size_t u) {
      irregular::Cell<2> c;
      c.level = 3;
      c.anchor = {static_cast<irregular::coord_t>(xs[u][0]), static_cast<irregular::coord_t>(xs[u][1])};
      return H::index(c);
    };
    for (std::size_t u = 0; u < 64; ++u)
      if (cell(v) < cell(u)) REQUIRE(T[v] < T[u]);
  }
}

TEST_CASE("renumbering keeps Figure 8's sums bitwise, and block costs match brute force", "[schedule]") {
  const Grid gr = grid(23, 19, 11);
  const auto g = sch::graph_from_edges(static_cast<std::int64_t>(gr.xs.size()), gr.edges);
  REQUIRE(g.entries() == 2 * static_cast<std::int64_t>(gr.edges.size()));
  std::vector<double> y(static_cast<std::size_t>(g.vertices()));
  for (std::size_t v = 0; v < y.size(); ++v) y[v] = 1.0 + static_cast<double>((v * 7919) % 113) / 17.0;
  const auto ref = figure8(g, y, 20);
  for (auto o : {sch::LocalityOrder::hilbert, sch::LocalityOrder::rcb}) {
    const auto T = sch::locality_transform<2>(o, std::span<const std::array<double, 2>>(gr.xs));
    const auto h = sch::renumbered(g, T);
    std::vector<double> yt(y.size());
    for (std::size_t v = 0; v < y.size(); ++v) yt[static_cast<std::size_t>(T[v])] = y[v];
    const auto out = figure8(h, yt, 20);
    for (std::size_t v = 0; v < y.size(); ++v) REQUIRE(out[static_cast<std::size_t>(T[v])] == ref[v]);
    // Brute-force cut and ghosts of 5 blocks.
    const sch::BlockTranslation t(std::vector<std::int64_t>{0, 80, 81, 200, 300, h.vertices()});
    const auto cost = sch::block_cost(h, t);
    std::int64_t cut = 0;
    std::vector<std::set<std::int64_t>> ghosts(5);
    for (std::int64_t v = 0; v < h.vertices(); ++v)
      for (const auto u : h.neighbours(v))
        if (t.owner(u) != t.owner(v)) {
          if (v < u) ++cut;
          ghosts[static_cast<std::size_t>(t.owner(v))].insert(u);
        }
    REQUIRE(cost.edge_cut == cut);
    for (int r = 0; r < 5; ++r) REQUIRE(cost.ghosts[static_cast<std::size_t>(r)] == static_cast<std::int64_t>(ghosts[static_cast<std::size_t>(r)].size()));
  }
  // Locality: a curve order cuts far fewer edges than the shuffled file order.
  const sch::BlockTranslation four(std::vector<std::int64_t>{0, 109, 218, 327, g.vertices()});
  const auto T = sch::locality_transform<2>(sch::LocalityOrder::hilbert, std::span<const std::array<double, 2>>(gr.xs));
  CHECK(sch::block_cost(sch::renumbered(g, T), four).edge_cut * 4 < sch::block_cost(g, four).edge_cut);
  CHECK_THROWS_AS(sch::renumbered(g, std::vector<std::int64_t>(y.size(), 0)), irregular::invalid_argument);
  const std::array<std::array<std::int64_t, 2>, 1> bad{{{0, 5}}};
  CHECK_THROWS_AS(sch::graph_from_edges(5, bad), irregular::invalid_argument);
}
