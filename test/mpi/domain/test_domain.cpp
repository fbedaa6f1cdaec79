// IrregularDomain under MPI: the distributed build equals the sequential HTree, the blocking
// partition reaches the sequential NicolPlus optimum, and nothing is lost or duplicated across
// build, move_elements and rebalance — at every rank count, whatever the input distribution.
#include <catch2/catch.hpp>

#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>
#include "domain_support.hpp"

#include <irregular/domain.hpp>
#include <irregular/distributed/partitioners/rectangular.hpp>
#include <irregular/partition/nicol_plus.hpp>
#include <irregular/rect/metrics.hpp>
#include <irregular/tree/htree.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/array.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;
using namespace domain_support;

namespace {

template <class Curve>
void build_matches_sequential(const mpi::communicator& world) {
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve, irr::load::ElementCount>;
  const std::size_t n = 1500, k = 12;
  const auto pts = clustered<2>(n, 42);
  for (int split = 0; split < 3; ++split) {
    CAPTURE(split, world.size());
    Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(k));
    std::vector<Particle> mine_pts;
    for (std::size_t i = 0; i < n; ++i)
      if (mine(i, n, split, world)) mine_pts.push_back({pts[i], i});
    d.insert(mine_pts);
    d.build();
    const auto seq = sequential_tree(d, pts, k);
    const auto g = gather_leaves(d);
    require_same_tree(g, seq);
    require_consistent(d);
    // Conservation: count and checksum of the input.
    std::vector<Particle> all_in;
    for (std::size_t i = 0; i < n; ++i) all_in.push_back({pts[i], i});
    REQUIRE(global_checksum(world, checksum<Particle>(d.local_elements())) ==
            checksum<Particle>(all_in));
    // The blocking partition is optimal: its bottleneck equals sequential NicolPlus.
    std::vector<std::uint64_t> chain(g.counts.begin(), g.counts.end());
    const auto opt = irr::partition::nicol_plus<std::uint64_t>(chain, static_cast<std::size_t>(world.size()));
    const auto report = d.load_report();
    double worst = 0;
    for (double l : report.loads) worst = std::max(worst, l);
    REQUIRE(worst == static_cast<double>(opt.bottleneck));
    // Ownership needs no communication and agrees with where leaves live.
    for (std::size_t i = 0; i < g.starts.size(); ++i)
      REQUIRE(d.ownership().owner(g.starts[i]) == g.owner[i]);
  }
}

}  // namespace

TEST_CASE("distributed build equals the sequential H-Tree for every input split (Morton)", "[domain]") {
  build_matches_sequential<irr::curve::Morton<2>>(mpi::communicator());
}
TEST_CASE("distributed build equals the sequential H-Tree for every input split (Hilbert)", "[domain]") {
  build_matches_sequential<irr::curve::Hilbert<2>>(mpi::communicator());
}
TEST_CASE("distributed build equals the sequential H-Tree for every input split (Peano)", "[domain]") {
  build_matches_sequential<irr::curve::Peano<2>>(mpi::communicator());
}

TEST_CASE("3D build, greedy cut, and the greedy bound", "[domain]") {
  mpi::communicator world;
  using Domain = irr::IrregularDomain<Particle3, irr::stencil::VonNeumann<3>, irr::curve::Hilbert<3>,
                                      irr::load::ElementCount>;
  const std::size_t n = 1200, k = 10;
  const auto pts = clustered<3>(n, 7);
  irr::DomainOptions<3, irr::load::ElementCount> opt;
  opt.partitioner.cut = irr::BlockingCut::greedy;
  Domain d(world, irr::Box<3>{{0, 0, 0}, {1, 1, 1}}, irr::refine::max_elements(k), opt);
  insert_and_build(d, pts, 1);
  require_same_tree(gather_leaves(d), sequential_tree(d, pts, k));
  require_consistent(d);
  const auto rep = d.load_report();
  double lmax = 0;
  for (double l : rep.loads) lmax = std::max(lmax, l);
  // Greedy threshold cut: Lmax <= W/p + largest leaf load (a leaf holds at most k elements
  // unless it sits at max_level, which clustered doubles do not reach here).
  REQUIRE(lmax <= rep.average + static_cast<double>(k) + 1e-9);
}

TEST_CASE("move_elements refines and prunes to the sequential tree and conserves elements", "[domain]") {
  mpi::communicator world;
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, irr::curve::Hilbert<2>,
                                      irr::load::ElementCount>;
  const std::size_t n = 1500, k = 12;
  auto pts = clustered<2>(n, 99);
  Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(k));
  insert_and_build(d, pts, 1);
  // Step 1: everything drifts right and wraps; step 2: all collapse towards one corner (whole
  // segments empty out); step 3: spread again.
  auto step = [&](auto f) {
    for (auto& x : pts) x = f(x);
    d.move_elements([&](Particle& p) { p.position = f(p.position); });
    require_same_tree(gather_leaves(d), sequential_tree(d, pts, k));
    require_consistent(d);
    std::vector<Particle> all_in;
    for (std::size_t i = 0; i < n; ++i) all_in.push_back({pts[i], i});
    REQUIRE(global_checksum(world, checksum<Particle>(d.local_elements())) == checksum<Particle>(all_in));
  };
  step([](std::array<double, 2> x) { x[0] = std::fmod(x[0] + 0.3, 1.0); return x; });
  step([](std::array<double, 2> x) { return std::array<double, 2>{0.05 * x[0], 0.05 * x[1]}; });
  const bool remapped = d.rebalance({.threshold = 0.0});
  CAPTURE(remapped);
  require_consistent(d);
  step([](std::array<double, 2> x) { return std::array<double, 2>{x[1] * 19.0, x[0] * 19.0}; });
  REQUIRE(d.global_element_count() == n);
}

TEST_CASE("move_elements removes what update rejects and takes in what was inserted since", "[domain]") {
  mpi::communicator world;
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, irr::curve::Hilbert<2>,
                                      irr::load::ElementCount>;
  const std::size_t n = 1500, k = 12;
  const int p = world.size(), r = world.rank();
  const auto pts = clustered<2>(n, 7);
  Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(k));
  insert_and_build(d, pts, 1);
  // The oracle: every particle alive, by id, where it is.
  std::vector<Particle> alive;
  for (std::size_t i = 0; i < n; ++i) alive.push_back({pts[i], i});
  std::uint64_t next_id = n;
  auto step = [&](std::size_t born, auto dies, auto moves) {
    // Newcomers, inserted round robin by whichever rank: they join unmoved.
    const auto fresh = clustered<2>(born, static_cast<unsigned>(next_id));
    std::vector<Particle> mine_new, all_new;
    for (std::size_t j = 0; j < born; ++j) {
      const Particle q{fresh[j], next_id + j};
      all_new.push_back(q);
      if (static_cast<int>(j % static_cast<std::size_t>(p)) == r) mine_new.push_back(q);
    }
    next_id += born;
    d.insert(mine_new);
    d.move_elements([&](Particle& q) {
      if (dies(q)) return false;
      q.position = moves(q.position);
      return true;
    });
    std::vector<Particle> next;
    for (auto q : alive)
      if (!dies(q)) next.push_back({moves(q.position), q.id});
    next.insert(next.end(), all_new.begin(), all_new.end());
    alive = std::move(next);
    std::vector<std::array<double, 2>> where;
    for (const auto& q : alive) where.push_back(q.position);
    CAPTURE(alive.size());
    REQUIRE(d.global_element_count() == alive.size());
    REQUIRE(global_checksum(world, checksum<Particle>(d.local_elements())) == checksum<Particle>(alive));
    if (!alive.empty()) require_same_tree(gather_leaves(d), sequential_tree(d, where, k));
    require_consistent(d);
  };
  // Every third dies and the rest drift; then the right half dies (whole segments empty out);
  // then everything dies while newcomers arrive; then the newcomers move (no removal).
  step(250, [](const Particle& q) { return q.id % 3 == 0; },
       [](std::array<double, 2> x) { return std::array<double, 2>{0.7 * x[0], x[1]}; });
  step(0, [](const Particle& q) { return q.position[0] > 0.35; }, [](std::array<double, 2> x) { return x; });
  step(400, [](const Particle&) { return true; }, [](std::array<double, 2> x) { return x; });
  for (auto& q : alive) q.position[1] *= 0.5;
  d.move_elements([](Particle& q) { q.position[1] *= 0.5; });
  REQUIRE(global_checksum(world, checksum<Particle>(d.local_elements())) == checksum<Particle>(alive));
  std::vector<std::array<double, 2>> where;
  for (const auto& q : alive) where.push_back(q.position);
  require_same_tree(gather_leaves(d), sequential_tree(d, where, k));
}

TEST_CASE("rebalance respects the threshold and reaches the optimum when it remaps", "[domain]") {
  mpi::communicator world;
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, irr::curve::Morton<2>,
                                      irr::load::ElementCount>;
  const std::size_t n = 1000, k = 8;
  auto pts = clustered<2>(n, 5);
  Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(k));
  insert_and_build(d, pts, 2);
  // Balanced right after build: a generous threshold never remaps.
  REQUIRE_FALSE(d.rebalance({.threshold = 10.0}));
  // Squeeze the left half: loads become unbalanced, then a remap restores the optimum.
  d.move_elements([](Particle& p) { if (p.position[0] < 0.5) p.position[0] *= 0.2; });
  const auto before = d.load_report();
  const bool remapped = d.rebalance({.threshold = 0.0});
  REQUIRE(remapped == (before.max_unbalance > 0.0));
  const auto g = gather_leaves(d);
  std::vector<std::uint64_t> chain(g.counts.begin(), g.counts.end());
  const auto opt = irr::partition::nicol_plus<std::uint64_t>(chain, static_cast<std::size_t>(world.size()));
  const auto after = d.load_report();
  double worst = 0;
  for (double l : after.loads) worst = std::max(worst, l);
  if (remapped) REQUIRE(worst == static_cast<double>(opt.bottleneck));
  require_consistent(d);
  REQUIRE(d.global_element_count() == n);
}

TEST_CASE("bad input is rejected on every rank and leaves the domain unchanged", "[domain][errors]") {
  mpi::communicator world;
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, irr::curve::Morton<2>>;
  Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(4));
  std::vector<Particle> good{{{0.5, 0.5}, 1}, {{0.25, 0.75}, 2}};
  d.insert(good);
  d.build();
  const auto before = gather_leaves(d);
  // Only the last rank passes a bad element; every rank must throw, naming that rank.
  const int bad_rank = world.size() - 1;
  std::vector<Particle> batch{{{0.1, 0.1}, 3}};
  if (world.rank() == bad_rank) batch.push_back({{1.5, 0.2}, 4});
  try {
    d.insert(batch);
    FAIL("insert accepted an element outside the box");
  } catch (const irr::collective_error& e) {
    REQUIRE(e.failing_rank() == bad_rank);
    const std::string what = e.what();
    REQUIRE(what.find("element 1") != std::string::npos);
    REQUIRE(what.find("rank " + std::to_string(bad_rank)) != std::string::npos);
  }
  REQUIRE(d.global_element_count() == 2 * static_cast<std::uint64_t>(world.size()));
  // NaN positions are rejected the same way.
  std::vector<Particle> nan_batch;
  if (world.rank() == 0) nan_batch.push_back({{std::nan(""), 0.5}, 5});
  REQUIRE_THROWS_AS(d.insert(nan_batch), irr::collective_error);
  // A move that would leave the box changes nothing.
  // (whichever rank holds element 2 rejects the move; the others must throw too)
  REQUIRE_THROWS_AS(d.move_elements([&](Particle& p) { if (p.id == 2) p.position[1] = -3; }),
                    irr::collective_error);
  const auto after = gather_leaves(d);
  REQUIRE(after.starts == before.starts);
  REQUIRE(after.counts == before.counts);
  REQUIRE(d.global_element_count() == 2 * static_cast<std::uint64_t>(world.size()));
  REQUIRE_THROWS_AS(d.rebalance({.threshold = -1}), irr::collective_error);
}

TEST_CASE("empty domains and more ranks than leaves give valid empty segments", "[domain]") {
  mpi::communicator world;
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, irr::curve::Morton<2>>;
  {
    Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(4));
    d.build();  // zero elements
    REQUIRE(d.global_leaf_count() == 1);
    REQUIRE(d.global_element_count() == 0);
    require_consistent(d);
  }
  {
    Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(32));
    std::vector<Particle> few;
    if (world.rank() == world.size() - 1) few = {{{0.1, 0.2}, 1}, {{0.9, 0.8}, 2}, {{0.5, 0.5}, 3}};
    d.insert(few);
    d.build();
    REQUIRE(d.global_leaf_count() == 1);  // 3 elements <= 32: the root stays a leaf
    require_consistent(d);
    int owner = d.owner_of(std::array<double, 2>{0.3, 0.3});
    REQUIRE(owner >= 0);
    REQUIRE(owner < world.size());
    REQUIRE(d.global_element_count() == 3);
  }
}

TEST_CASE("elements that need Boost.Serialization travel through build and move", "[domain][transport]") {
  mpi::communicator world;
  using Domain = irr::IrregularDomain<Tagged, irr::stencil::Moore<2>, irr::curve::Morton<2>>;
  Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(5));
  const auto pts = clustered<2>(400, 3);
  std::vector<Tagged> local;
  for (std::size_t i = 0; i < pts.size(); ++i)
    if (mine(i, pts.size(), 1, world)) local.push_back({pts[i], i, "particle-" + std::to_string(i)});
  d.insert(local);
  d.build();
  d.move_elements([](Tagged& t) { t.position[1] = 1.0 - t.position[1]; });
  int bad = 0;
  for (const auto& t : d.local_elements())
    if (t.label != "particle-" + std::to_string(t.id)) ++bad;
  int total_bad = 0;
  mpi::all_reduce(world, bad, total_bad, std::plus<int>());
  REQUIRE(total_bad == 0);
  REQUIRE(d.global_element_count() == pts.size());
}

TEST_CASE("neighbours name every sequential neighbour, locally or through its owner", "[domain][neighbours]") {
  mpi::communicator world;
  using Curve = irr::curve::Hilbert<2>;
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve>;
  const std::size_t n = 800, k = 6;
  const auto pts = clustered<2>(n, 11);
  for (bool periodic : {false, true}) {
    irr::DomainOptions<2, irr::load::Constant> opt;
    opt.periodic = {periodic, periodic};
    Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(k), opt);
    std::vector<Particle> local;
    for (std::size_t i = 0; i < n; ++i)
      if (mine(i, n, 1, world)) local.push_back({pts[i], i});
    d.insert(local);
    d.build();
    const auto seq = sequential_tree(d, pts, k);
    const auto seg = d.ownership().segment(world.rank());
    const std::size_t first = seq.leaf_containing(seg.start);
    int bad = 0;
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
      const auto nb = d.neighbours(i);
      const auto expected = irr::neighbours<irr::stencil::Moore<2>>(seq, first + i, opt.periodic);
      std::size_t local_found = 0;
      for (std::size_t j : expected) {
        const auto s = seq.start(j);
        if (seg.contains(s)) {
          local_found += std::count(nb.local.begin(), nb.local.end(), j - first);
        } else {
          const int owner = d.ownership().owner(s);
          bool covered = false;
          for (const auto& r : nb.remote)
            covered = covered || (r.owner == owner && r.interval.overlaps({s, seq.end(j)}));
          if (!covered) ++bad;
        }
      }
      std::size_t expected_local = 0;
      for (std::size_t j : expected) expected_local += seg.contains(seq.start(j)) ? 1 : 0;
      if (local_found != expected_local || nb.local.size() != expected_local) ++bad;
      for (const auto& r : nb.remote)
        if (r.owner == world.rank() || d.ownership().owner(r.interval.start) != r.owner) ++bad;
    }
    int total_bad = 0;
    mpi::all_reduce(world, bad, total_bad, std::plus<int>());
    CAPTURE(periodic);
    REQUIRE(total_bad == 0);
  }
}

TEST_CASE("measured loads feed the next partition", "[domain][load]") {
  mpi::communicator world;
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, irr::curve::Morton<2>, irr::load::Measured>;
  const std::size_t n = 600;
  const auto pts = clustered<2>(n, 21);
  Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(8));
  insert_and_build(d, pts, 1);
  // Work only on leaves in the lower half of the box: they become the heavy ones.
  volatile double sink = 0;
  for (auto leaf : d.local_leaves()) {
    if (leaf.cell.anchor[1] * 2 >= (irr::coord_t{1} << leaf.cell.level)) continue;
    auto timer = d.time_leaf(leaf.id);
    for (int r = 0; r < 20000; ++r) sink = sink + std::sqrt(static_cast<double>(r));
  }
  const auto rep = d.load_report();
  double local_sum = 0;
  for (double l : d.local_loads()) local_sum += l;
  REQUIRE(rep.loads[static_cast<std::size_t>(world.rank())] == Approx(local_sum));
  d.rebalance({.threshold = 0.0});
  require_consistent(d);
  REQUIRE(d.global_element_count() == n);
}

TEST_CASE("a domain migrates onto a rectangular partition: conservation and ownership", "[domain][rect]") {
  mpi::communicator world;
  using Curve = irr::curve::Hilbert<2>;
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve, irr::load::ElementCount,
                                      irr::partitioner::Rectangular>;
  const std::size_t n = 1500, k = 10;
  auto pts = clustered<2>(n, 314);
  for (const char* algo : {"JAG-M-HEUR-PROBE", "HIER-RB", "RECT-NICOL"}) {
    CAPTURE(algo);
    irr::DomainOptions<2, irr::load::ElementCount, irr::partitioner::Rectangular> opt;
    opt.partitioner = {.algorithm = algo, .level = 4};
    Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(k), opt);
    std::vector<Particle> local;
    for (std::size_t i = 0; i < n; ++i)
      if (mine(i, n, 2, world)) local.push_back({pts[i], i});
    d.insert(local);
    d.build();
    const auto* map = &d.ownership();
    REQUIRE(map->parts() == world.size());
    irr::rect::validate(map->partition());  // the rectangles tile the grid exactly once
    auto check = [&](const std::vector<std::array<double, 2>>& where) {
      // The global leaves (sorted by start) equal the sequential tree; leaf_owner is exact.
      require_tree_and_leaf_owners(d, where, k);
      int bad = 0;
      for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
        auto leaf = d.leaf(i);
        if (leaf.elements.size() != leaf.count) ++bad;
        for (const auto& e : leaf.elements)
          if (!leaf.interval.contains(d.key_of(e))) ++bad;
      }
      int total_bad = 0;
      mpi::all_reduce(world, bad, total_bad, std::plus<int>());
      REQUIRE(total_bad == 0);
      std::vector<Particle> all_in;
      for (std::size_t i = 0; i < n; ++i) all_in.push_back({where[i], i});
      REQUIRE(global_checksum(world, checksum<Particle>(d.local_elements())) == checksum<Particle>(all_in));
    };
    check(pts);
    // Neighbour ranks come from rectangle adjacency and are symmetric.
    for (int r = 0; r < world.size(); ++r)
      for (int s : map->neighbour_ranks(r)) {
        const auto back = map->neighbour_ranks(s);
        REQUIRE(std::find(back.begin(), back.end(), r) != back.end());
      }
    // Remote neighbours are named with the rank that owns them.
    {
      const auto seq = sequential_tree(d, pts, k);
      int bad = 0;
      for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
        const auto nb = d.neighbours(i);
        const std::size_t j = seq.leaf_containing(d.local_tree().starts()[i]);
        for (std::size_t q : irr::neighbours<irr::stencil::Moore<2>>(seq, j)) {
          const int owner = map->leaf_owner(seq.cell(q));
          if (owner == world.rank()) {
            const auto l = d.local_tree().find(seq.start(q));
            if (l == d.local_leaf_count() || std::find(nb.local.begin(), nb.local.end(), l) == nb.local.end()) ++bad;
          } else {
            bool covered = false;
            for (const auto& r : nb.remote)
              covered = covered || (r.owner == owner && r.interval.overlaps({seq.start(q), seq.end(q)}));
            if (!covered) ++bad;
          }
        }
      }
      int total_bad = 0;
      mpi::all_reduce(world, bad, total_bad, std::plus<int>());
      REQUIRE(total_bad == 0);
    }
    // Moving keeps the rectangles; rebalancing cuts them anew. Nothing is lost either way.
    auto f = [](std::array<double, 2> x) { return std::array<double, 2>{x[0] * 0.6, x[1]}; };
    auto moved = pts;
    for (auto& x : moved) x = f(x);
    d.move_elements([&](Particle& p) { p.position = f(p.position); });
    check(moved);
    d.rebalance({.threshold = 0.0});
    map = &d.ownership();
    check(moved);
  }
  // Unknown algorithm names and bad grid levels are rejected at construction.
  irr::DomainOptions<2, irr::load::ElementCount, irr::partitioner::Rectangular> bad;
  bad.partitioner.algorithm = "JAG-NOPE";
  REQUIRE_THROWS_AS(Domain(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(k), bad), irr::collective_error);
  bad.partitioner.algorithm = "HIER-RB";
  bad.partitioner.level = -2;
  REQUIRE_THROWS_AS(Domain(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(k), bad), irr::collective_error);
}

TEST_CASE("refinement stops at max_level: identical positions share one deepest leaf", "[domain][errors]") {
  mpi::communicator world;
  using Curve = irr::curve::Morton<2>;
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve, irr::load::ElementCount>;
  Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(4));
  std::vector<Particle> same;
  for (int i = 0; i < 25; ++i) same.push_back({{0.3, 0.7}, static_cast<std::uint64_t>(world.rank() * 100 + i)});
  d.insert(same);
  d.build();
  // 25·p elements at one point: the condition still asks to split at max_level, which is
  // clamped; that leaf holds them all, and the tree equals the sequential one.
  std::vector<std::array<double, 2>> all(25 * static_cast<std::size_t>(world.size()), {0.3, 0.7});
  require_same_tree(gather_leaves(d), sequential_tree(d, all, 4));
  std::uint64_t deepest = 0, mine = 0;
  for (auto leaf : d.local_leaves())
    if (leaf.cell.level == Curve::max_level) mine += leaf.count;
  mpi::all_reduce(world, mine, deepest, std::plus<std::uint64_t>());
  REQUIRE(deepest == 25u * static_cast<std::uint64_t>(world.size()));
}

TEST_CASE("the ownership map is replicated: serializable, identical everywhere, O(p)", "[domain][ownership]") {
  mpi::communicator world;
  using Curve = irr::curve::Hilbert<2>;
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve, irr::load::ElementCount>;
  Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(8));
  const auto pts = clustered<2>(600, 8);
  std::vector<Particle> local;
  for (std::size_t i = 0; i < pts.size(); ++i)
    if (mine(i, pts.size(), 1, world)) local.push_back({pts[i], i});
  d.insert(local);
  d.build();
  // Rank 0's map travels through Boost.Serialization and equals every rank's own.
  irr::SegmentMap<Curve> from_root = world.rank() == 0 ? d.ownership() : irr::SegmentMap<Curve>(1);
  mpi::broadcast(world, from_root, 0);
  REQUIRE(from_root == d.ownership());
  REQUIRE(from_root.splitters().size() == static_cast<std::size_t>(world.size()) + 1);
  // The replicated tree's leaves are every rank's private roots; this rank's local leaves lie
  // inside its own.
  const auto rep = d.replicated_tree();
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
    REQUIRE(rep.leaf_containing(d.local_tree().starts()[i]).owner == world.rank());
  // Neighbour ranks are symmetric.
  for (int r = 0; r < world.size(); ++r)
    for (int s : d.ownership().neighbour_ranks(r)) {
      const auto back = d.ownership().neighbour_ranks(s);
      REQUIRE(std::find(back.begin(), back.end(), r) != back.end());
    }
}

TEST_CASE("per-element weights: leaf loads are weight sums, the cut is optimal, all-1 weights equal counts",
          "[domain][load]") {
  mpi::communicator world;
  using Curve = irr::curve::Hilbert<2>;
  auto w = [](const Particle& p) { return p.id % 3 == 0 ? 5.0 : 1.0; };
  using Weighted = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve, irr::load::PerElement<decltype(w)>>;
  const std::size_t n = 1200, k = 10;
  const auto pts = clustered<2>(n, 99);
  Weighted d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(k), {.load = irr::load::per_element(w)});
  insert_and_build(d, pts, 2);
  int bad = 0;
  double mine_total = 0;
  std::vector<double> chain_mine;
  for (auto leaf : d.local_leaves()) {
    double sum = 0;
    for (const auto& p : leaf.elements) sum += p.id % 3 == 0 ? 5.0 : 1.0;
    if (leaf.load != sum) ++bad;
    mine_total += sum;
    chain_mine.push_back(sum);
  }
  int total_bad = 0;
  mpi::all_reduce(world, bad, total_bad, std::plus<int>());
  REQUIRE(total_bad == 0);
  double total = 0;
  mpi::all_reduce(world, mine_total, total, std::plus<double>());
  REQUIRE(total == static_cast<double>(n / 3 * 5 + (n - n / 3)));
  // The bottleneck is the sequential optimum of the gathered chain of weight sums.
  std::vector<std::vector<double>> parts;
  mpi::all_gather(world, chain_mine, parts);
  std::vector<std::uint64_t> chain;
  for (const auto& v : parts)
    for (double x : v) chain.push_back(static_cast<std::uint64_t>(x));
  const auto opt = irr::partition::nicol_plus<std::uint64_t>(chain, static_cast<std::size_t>(world.size()));
  double worst = 0;
  for (double l : d.load_report().loads) worst = std::max(worst, l);
  REQUIRE(worst == static_cast<double>(opt.bottleneck));
  // Weights of 1 give exactly the element-count partition.
  auto one = [](const Particle&) { return 1.0; };
  using Ones = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve, irr::load::PerElement<decltype(one)>>;
  using Counts = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve, irr::load::ElementCount>;
  Ones a(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(k), {.load = irr::load::per_element(one)});
  Counts b(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(k));
  insert_and_build(a, pts, 1);
  insert_and_build(b, pts, 1);
  REQUIRE(a.ownership() == b.ownership());
}

namespace {

// What a remap onto `map` ships, summed over the ranks: the leaves (by start) and elements (by
// key) each rank held before whose owner changes, and the (source, destination) pairs.
struct Shipment {
  std::uint64_t leaves = 0, elements = 0, messages = 0;
};
template <class Map, class I>
Shipment expected_shipment(const mpi::communicator& w, const Map& map, const std::vector<I>& starts,
                           const std::vector<I>& keys) {
  std::vector<char> to(static_cast<std::size_t>(w.size()), 0);
  std::array<std::uint64_t, 3> mine{0, 0, 0}, all{};
  for (auto x : starts)
    if (const int o = map.owner(x); o != w.rank()) { ++mine[0]; to[static_cast<std::size_t>(o)] = 1; }
  for (auto x : keys)
    if (const int o = map.owner(x); o != w.rank()) { ++mine[1]; to[static_cast<std::size_t>(o)] = 1; }
  for (char c : to) mine[2] += static_cast<std::uint64_t>(c);
  mpi::all_reduce(w, mine.data(), 3, all.data(), std::plus<std::uint64_t>());
  return {all[0], all[1], all[2]};
}

// Local keys sorted and equal to the elements' keys.
template <class Domain>
void require_sorted_keys(const Domain& d) {
  int bad = 0;
  const auto keys = d.local_keys();
  const auto es = d.local_elements();
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i] != d.key_of(es[i]) || (i > 0 && keys[i] < keys[i - 1])) ++bad;
  int total = 0;
  mpi::all_reduce(d.comm(), bad, total, std::plus<int>());
  REQUIRE(total == 0);
}

}  // namespace

TEST_CASE("rebalance by segment shifts loses, duplicates and misorders nothing and counts what it ships",
          "[domain][rebalance]") {
  mpi::communicator world;
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, irr::curve::Morton<2>, irr::load::ElementCount>;
  using I = Domain::index_type;
  const irr::Box<2> box{{0, 0}, {1, 1}};
  const std::size_t n = 3000, k = 6;
  // resident_headroom only changes where the arrays' pages are mapped: every result is the same.
  for (bool resident : {false, true}) {
    auto pts = clustered<2>(n, 77);
    irr::DomainOptions<2, irr::load::ElementCount> opt;
    opt.resident_headroom = resident;
    Domain d(world, box, irr::refine::max_elements(k), opt);
    insert_and_build(d, pts, 1);
    using P = std::array<double, 2>;
    // Skews: squeeze the left half (ranks ship to lower ranks), pull all into a corner (most
    // segments empty out), spread again (ships to higher ranks), mirror (everything changes rank).
    const std::vector<P (*)(P)> skews = {
        [](P x) { return P{x[0] < 0.5 ? x[0] * 0.2 : x[0], x[1]}; },
        [](P x) { return P{0.1 * x[0], 0.1 * x[1]}; },
        [](P x) { return P{std::min(1.0, x[0] * 9.5), std::min(1.0, x[1] * 9.5)}; },
        [](P x) { return P{1.0 - x[0], x[1]}; },
    };
    for (std::size_t step = 0; step < skews.size(); ++step) {
      CAPTURE(resident, step, world.size());
      for (auto& x : pts) x = skews[step](x);
      d.move_elements([&](Particle& p) { p.position = skews[step](p.position); });
      const std::vector<I> starts(d.local_tree().starts().begin(), d.local_tree().starts().end());
      const std::vector<I> keys(d.local_keys().begin(), d.local_keys().end());
      const auto before = d.load_report();
      const bool remapped = d.rebalance({.threshold = 0.0});
      REQUIRE(remapped == (before.max_unbalance > 0.0));
      require_consistent(d);
      require_sorted_keys(d);
      // A fresh build of the same positions: the same leaves on the same ranks, and each rank the
      // same elements (count and checksum).
      Domain fresh(world, box, irr::refine::max_elements(k));
      insert_and_build(fresh, pts, 2);
      const auto g = gather_leaves(d), f = gather_leaves(fresh);
      REQUIRE(g.starts == f.starts);
      REQUIRE(g.levels == f.levels);
      REQUIRE(g.counts == f.counts);
      if (remapped) REQUIRE(g.owner == f.owner);
      const auto mine_d = checksum<Particle>(d.local_elements()), mine_f = checksum<Particle>(fresh.local_elements());
      int differ = (!remapped || mine_d == mine_f) ? 0 : 1, any = 0;
      mpi::all_reduce(world, differ, any, std::plus<int>());
      REQUIRE(any == 0);
      std::vector<Particle> all_in;
      for (std::size_t i = 0; i < n; ++i) all_in.push_back({pts[i], i});
      REQUIRE(global_checksum(world, mine_d) == checksum<Particle>(all_in));
      // last_migration() counts exactly what changed rank; the shift carries each element raw with
      // its key and each leaf as start, count and level, with a 24-byte trailer per message.
      const auto exp = expected_shipment(world, d.ownership(), starts, keys);
      const auto& mig = d.last_migration();
      REQUIRE(mig.hnodes == (remapped ? exp.leaves : 0));
      REQUIRE(mig.elements == (remapped ? exp.elements : 0));
      REQUIRE(mig.messages == (remapped ? exp.messages : 0));
      REQUIRE(mig.bytes == mig.elements * (sizeof(Particle) + sizeof(I)) + mig.hnodes * (sizeof(I) + 9) + mig.messages * 24);
      if (remapped && world.size() > 1) REQUIRE(mig.hnodes > 0);
    }
  }
}

TEST_CASE("rebalance by segment shifts carries measured seconds with the leaves", "[domain][rebalance][load]") {
  mpi::communicator world;
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, irr::curve::Hilbert<2>, irr::load::Measured>;
  using I = Domain::index_type;
  const std::size_t n = 1500, k = 5;
  const auto pts = clustered<2>(n, 31);
  Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(k));
  insert_and_build(d, pts, 1);
  volatile double sink = 0;
  for (auto leaf : d.local_leaves()) {  // the left half becomes heavy
    if (leaf.cell.anchor[0] * 2 >= (irr::coord_t{1} << leaf.cell.level)) continue;
    auto timer = d.time_leaf(leaf.id);
    for (int r = 0; r < 3000; ++r) sink = sink + std::sqrt(static_cast<double>(r));
  }
  const std::vector<I> starts(d.local_tree().starts().begin(), d.local_tree().starts().end());
  const std::vector<I> keys(d.local_keys().begin(), d.local_keys().end());
  const auto seq_before = gather_leaves(d);
  const bool remapped = d.rebalance({.threshold = 0.0});
  require_consistent(d);
  require_sorted_keys(d);
  const auto g = gather_leaves(d);
  REQUIRE(g.starts == seq_before.starts);  // the same tree, in curve order across the ranks
  REQUIRE(g.levels == seq_before.levels);
  REQUIRE(g.counts == seq_before.counts);
  std::vector<Particle> all_in;
  for (std::size_t i = 0; i < n; ++i) all_in.push_back({pts[i], i});
  REQUIRE(global_checksum(world, checksum<Particle>(d.local_elements())) == checksum<Particle>(all_in));
  const auto exp = expected_shipment(world, d.ownership(), starts, keys);
  const auto& mig = d.last_migration();
  REQUIRE(mig.hnodes == (remapped ? exp.leaves : 0));
  REQUIRE(mig.elements == (remapped ? exp.elements : 0));
  REQUIRE(mig.messages == (remapped ? exp.messages : 0));
  // Seconds travel too: 8 more bytes per leaf.
  REQUIRE(mig.bytes == mig.elements * (sizeof(Particle) + sizeof(I)) + mig.hnodes * (sizeof(I) + 17) + mig.messages * 24);
}
