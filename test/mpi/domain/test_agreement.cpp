// Collective calls agree: when exactly one rank fails — a user callback throws, an argument or a
// load is bad, a refinement runs away — every rank throws the same irregular::collective_error
// (message and failing rank), nobody hangs, and the domain is unchanged (elements, leaves, map).
// Also: measured loads in one unit across ranks, last_migration after a no-op rebalance, and a
// 128-bit index curve through build, move and rebalance.
#include "domain_support.hpp"

#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/mpi/detail/index_wire.hpp>
#include <irregular/domain.hpp>

#include <boost/mpi/collectives.hpp>

#include <chrono>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;
using namespace domain_support;

namespace {

using Curve = irr::curve::Hilbert<2>;
const irr::Box<2> unit{{0, 0}, {1, 1}};

template <class Domain>
void fill(Domain& d, std::size_t n = 600) {
  insert_and_build(d, clustered<2>(n, 5), 1);
}

int last_rank(const mpi::communicator& w) { return w.size() - 1; }

// An element that needs Boost.Serialization and fails to save (or to load) on one rank on demand.
int g_fail_save_rank = -1, g_fail_load_rank = -1;
struct Fragile {
  std::array<double, 2> position{};
  std::uint64_t id = 0;
  std::vector<int> payload;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    const int me = mpi::communicator().rank();
    if (Archive::is_saving::value && me == g_fail_save_rank) throw std::runtime_error("save failed");
    ar & position & id & payload;
    if (Archive::is_loading::value && me == g_fail_load_rank) throw std::runtime_error("load failed");
  }
};

/// The element-count domain most cases here use.
using CountDomain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve, irr::load::ElementCount>;

}  // namespace

TEST_CASE("a throwing update on one rank fails move_elements everywhere, nothing moved", "[agree]") {
  mpi::communicator world;
  using Domain = CountDomain;
  Domain d(world, unit, irr::refine::max_elements(8));
  fill(d);
  const int bad = last_rank(world);
  require_agreed_failure(d, bad, "update failed", [&] {
    d.move_elements([&](Particle& p) {
      p.position[0] *= 0.5;
      if (world.rank() == bad && p.id % 7 == 0) throw std::runtime_error("update failed");
    });
  });
  // A bad position from one rank's update: the same, with the element and rank named.
  require_agreed_failure(d, bad, "outside the domain box", [&] {
    d.move_elements([&](Particle& p) {
      if (world.rank() == bad) p.position[1] = 2.0;
    });
  });
}

TEST_CASE("a throwing update that removes fails everywhere: nothing removed, the inserted stay pending", "[agree]") {
  mpi::communicator world;
  using Domain = CountDomain;
  Domain d(world, unit, irr::refine::max_elements(8));
  fill(d);
  const int bad = last_rank(world);
  const std::vector<Particle> extra{{{0.5, 0.5}, 100000 + static_cast<std::uint64_t>(world.rank())}};
  d.insert(extra);
  const auto with_pending = d.global_element_count();
  require_agreed_failure(d, bad, "remover failed", [&] {
    d.move_elements([&](Particle& p) {
      if (world.rank() == bad && p.id % 5 == 0) throw std::runtime_error("remover failed");
      return p.id % 2 == 0;
    });
  });
  REQUIRE(d.global_element_count() == with_pending);
  // The next move takes the pending elements in, and removes only what it rejects.
  std::uint64_t odd = 0, odd_all = 0;
  for (const auto& p : d.local_elements()) odd += p.id % 2;
  mpi::all_reduce(world, odd, odd_all, std::plus<std::uint64_t>());
  d.move_elements([](Particle& p) { return p.id < 100000 ? p.id % 2 == 0 : true; });
  REQUIRE(d.global_element_count() == with_pending - odd_all);
}

TEST_CASE("a throwing refinement condition on one rank fails build and move_elements everywhere", "[agree]") {
  mpi::communicator world;
  using Domain = CountDomain;
  const int bad = last_rank(world);
  bool armed = false;
  auto condition = [&](const irr::Cell<2>& c, std::size_t count) {
    if (armed && world.rank() == bad && c.level >= 2) throw std::runtime_error("condition failed");
    return count > 8;
  };
  Domain d(world, unit, condition);
  fill(d);
  armed = true;
  // Build again with more elements: the condition throws after the sort moved them.
  std::vector<Particle> more;
  for (int i = 0; i < 50; ++i) more.push_back({{0.01 * i, 0.5}, 10000u + static_cast<std::uint64_t>(world.rank() * 100 + i)});
  d.insert(more);
  const auto before_build = signature(d);
  require_agreed_failure(d, bad, "condition failed", [&] { d.build(); });
  REQUIRE(d.global_element_count() == 600u + 50u * static_cast<std::uint64_t>(world.size()));  // still pending
  require_agreed_failure(d, bad, "condition failed", [&] {
    d.move_elements([](Particle& p) { p.position[0] = 1.0 - p.position[0]; });
  });
  armed = false;
  d.build();  // and the domain still works
  REQUIRE(d.global_element_count() == 600u + 50u * static_cast<std::uint64_t>(world.size()));
  (void)before_build;
}

TEST_CASE("load metrics: a throwing weight and a bad load on one rank fail everywhere", "[agree][load]") {
  mpi::communicator world;
  const int bad = last_rank(world);
  int mode = 0;  // 0 fine, 1 throw, 2 negative, 3 NaN
  auto weight = [&](const Particle& p) {
    if (world.rank() == bad && p.id % 5 == 0) {
      if (mode == 1) throw std::runtime_error("weight failed");
      if (mode == 2) return -1.0;
      if (mode == 3) return std::nan("");
    }
    return 1.0 + static_cast<double>(p.id % 3);
  };
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve, irr::load::PerElement<decltype(weight)>>;
  Domain d(world, unit, irr::refine::max_elements(8), {.load = irr::load::per_element(weight)});
  fill(d);
  for (int m : {1, 2, 3}) {
    mode = m;
    CAPTURE(m);
    const std::string needle = m == 1 ? "weight failed" : "loads must be finite and >= 0";
    require_agreed_failure(d, bad, needle, [&] { d.build(); });
    require_agreed_failure(d, bad, needle, [&] { d.move_elements([](Particle& p) { p.position[1] *= 0.9; }); });
  }
  mode = 0;
  // A (cell, count) weight function that throws on one rank: the same.
  bool armed = false;
  auto cell_weight = [&](const irr::Cell<2>&, std::size_t count) {
    if (armed && world.rank() == bad) throw std::runtime_error("cell weight failed");
    return static_cast<double>(count);
  };
  using Domain2 = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve, irr::load::Weighted<decltype(cell_weight)>>;
  Domain2 d2(world, unit, irr::refine::max_elements(8), {.load = irr::load::weighted(cell_weight)});
  fill(d2);
  armed = true;
  require_agreed_failure(d2, bad, "cell weight failed", [&] { d2.build(); });
}

TEST_CASE("element serialization failing on one rank fails move and rebalance everywhere", "[agree][transport]") {
  mpi::communicator world;
  if (world.size() == 1) return;  // nothing travels
  using Domain = irr::IrregularDomain<Fragile, irr::stencil::Moore<2>, Curve, irr::load::ElementCount>;
  const int bad = last_rank(world);
  Domain d(world, unit, irr::refine::max_elements(8));
  std::vector<Fragile> mine;
  const auto pts = clustered<2>(600, 11);
  for (std::size_t i = 0; i < pts.size(); ++i)
    if (static_cast<int>(i % static_cast<std::size_t>(world.size())) == world.rank())
      mine.push_back({pts[i], i, std::vector<int>(i % 4, static_cast<int>(i))});
  d.insert(mine);
  d.build();
  // The sort of a build fails on one rank: every rank throws, the new elements stay pending.
  std::vector<Fragile> more;
  for (int i = 0; i < 40; ++i) more.push_back({{0.02 * i + 0.01, 0.7}, 5000u + static_cast<std::uint64_t>(40 * world.rank() + i), {i}});
  d.insert(more);
  g_fail_save_rank = g_fail_load_rank = bad;
  require_agreed_failure(d, bad, " failed", [&] { d.build(); });
  g_fail_save_rank = g_fail_load_rank = -1;
  REQUIRE(d.global_element_count() == 600u + 40u * static_cast<std::uint64_t>(world.size()));
  d.build();  // they join now (a move_elements would take them in too)
  auto flip = [](Fragile& e) { e.position[0] = 1.0 - e.position[0]; };
  for (int which : {0, 1}) {
    CAPTURE(which);
    (which == 0 ? g_fail_save_rank : g_fail_load_rank) = bad;
    require_agreed_failure(d, bad, which == 0 ? "save failed" : "load failed", [&] { d.move_elements(flip); });
    // Squeeze everything to the left without the fault, then rebalance with it.
    g_fail_save_rank = g_fail_load_rank = -1;
    d.move_elements([](Fragile& e) { e.position[0] *= 0.3; });
    // The remap may only send from, or only deliver to, the failing rank: it fails either way.
    g_fail_save_rank = g_fail_load_rank = bad;
    require_agreed_failure(d, bad, " failed", [&] { d.rebalance({.threshold = 0.0}); });
    g_fail_save_rank = g_fail_load_rank = -1;
    d.move_elements([](Fragile& e) { e.position[0] /= 0.3; });
  }
}

TEST_CASE("bad arguments on one rank fail every rank: threshold, element, runaway refinement", "[agree][errors]") {
  mpi::communicator world;
  using Domain = CountDomain;
  const int bad = last_rank(world);
  Domain d(world, unit, irr::refine::max_elements(8));
  fill(d);
  require_agreed_failure(d, bad, "threshold", [&] { d.rebalance({.threshold = world.rank() == bad ? -1.0 : 0.0}); });
  if (world.size() > 1)  // valid but different thresholds would split the decision
    require_agreed_failure(d, bad, "differs", [&] { d.rebalance({.threshold = world.rank() == bad ? 0.01 : 0.02}); });
  require_agreed_failure(d, bad, "outside the domain box", [&] {
    std::vector<Particle> one{{{world.rank() == bad ? 1.5 : 0.5, 0.5}, 99999}};
    d.insert(one);
  });
  // A condition that always splits on one rank's part: the leaf budget stops it.
  bool runaway = false;
  auto condition = [&](const irr::Cell<2>&, std::size_t count) { return (runaway && world.rank() == bad) || count > 8; };
  Domain r(world, unit, condition, {.max_leaves_per_rank = 20000});
  fill(r);
  runaway = true;
  require_agreed_failure(r, bad, "leaf budget", [&] { r.move_elements([](Particle&) {}); });
}

TEST_CASE("measured loads share one unit: a rank twice as slow ends with half the elements", "[load][measured]") {
  mpi::communicator world;
  if (world.size() != 2) return;  // wall-clock timing needs a core per rank (not oversubscribed)
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve, irr::load::Measured>;
  Domain d(world, unit, irr::refine::max_elements(64));
  std::vector<Particle> pts;
  const std::size_t n = 4000;
  for (std::size_t i = 0; i < n; ++i)
    if (static_cast<int>(i % 2) == world.rank())
      pts.push_back({{(static_cast<double>(i % 97) + 0.5) / 97.0, (static_cast<double>(i / 97) + 0.5) / (n / 97.0 + 1)}, i});
  d.insert(pts);
  d.build();
  // Rank 0 is twice as slow. Leaves of milliseconds keep a preemption's overshoot small.
  const double per_element = 5e-5 * (world.rank() == 0 ? 2.0 : 1.0);
  // Each leaf spins until its cumulative deadline: a preemption inside one leaf is paid back by
  // the next, so a rank's total stays true when the machine is busy.
  using clock = std::chrono::steady_clock;
  auto deadline = clock::now();
  auto spin = [&](double seconds) {
    deadline += std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
    while (clock::now() < deadline) {
    }
  };
  // Rank 1 times nothing before the first report: its loads must still come in seconds.
  for (auto leaf : d.local_leaves()) {
    if (world.rank() == 1) break;
    auto timer = d.time_leaf(leaf.id);
    spin(per_element * static_cast<double>(leaf.count));
  }
  const auto first = d.load_report();
  REQUIRE(first.loads[0] > 0);
  // Same unit: rank 1's untimed leaves are seconds at the global rate, about rank 0's total
  // (equal element counts); in element counts they would be ~10^5 times larger.
  REQUIRE(first.loads[1] / first.loads[0] == Approx(1.0).epsilon(0.3));
  d.reset_measurements();  // a new window: that timing is not counted again
  for (int round = 0; round < 3; ++round) {
    deadline = clock::now();
    for (auto leaf : d.local_leaves()) {
      auto timer = d.time_leaf(leaf.id);
      spin(per_element * static_cast<double>(leaf.count));
    }
    d.rebalance({.threshold = 0.0});
  }
  std::vector<std::uint64_t> held;
  mpi::all_gather(world, static_cast<std::uint64_t>(d.local_element_count()), held);
  REQUIRE(static_cast<double>(held[0]) / static_cast<double>(held[1]) == Approx(0.5).epsilon(0.15));
  // The remap started a new window: nothing measured, loads are estimates again.
  const auto after = d.load_report();
  double total = 0;
  for (double l : after.loads) total += l;
  REQUIRE(total == static_cast<double>(n));  // element counts: no stale seconds
}

TEST_CASE("last_migration reports nothing after a rebalance that does not remap", "[domain]") {
  mpi::communicator world;
  using Domain = CountDomain;
  Domain d(world, unit, irr::refine::max_elements(8));
  insert_and_build(d, clustered<2>(600, 5), 0);  // everything starts on rank 0: the build moves
  if (world.size() > 1) REQUIRE(d.last_migration().elements > 0);
  REQUIRE_FALSE(d.rebalance({.threshold = 1e9}));
  REQUIRE(d.last_migration().elements == 0);
  REQUIRE(d.last_migration().bytes == 0);
  REQUIRE(d.last_migration().messages == 0);
}

TEST_CASE("a 128-bit index curve: deep trees equal the sequential tree through build, move, rebalance", "[domain][uint128]") {
  mpi::communicator world;
  using Deep = irr::curve::Hilbert<3, irr::uint128_t>;
  using Domain = irr::IrregularDomain<Particle3, irr::stencil::Moore<3>, Deep, irr::load::ElementCount>;
  static_assert(Deep::max_level > 32);
  const irr::Box<3> box{{0, 0, 0}, {1, 1, 1}};
  // Pairs of points 1e-11 apart: leaves below level 32, whose starts need more than 64 bits.
  std::vector<std::array<double, 3>> pts;
  for (int i = 0; i < 200; ++i) {
    const double x = (i % 17 + 0.5) / 17.0, y = (i % 13 + 0.5) / 13.0, z = (i % 11 + 0.5) / 11.0;
    pts.push_back({x, y, z});
    pts.push_back({x + 1e-11, y, z});
  }
  Domain d(world, box, irr::refine::max_elements(1));
  insert_and_build(d, pts, 2);
  auto check = [&](const std::vector<std::array<double, 3>>& where) {
    std::vector<Deep::index_type> keys;
    for (const auto& x : where) keys.push_back(d.key_of_position(x));
    std::sort(keys.begin(), keys.end());
    const auto seq = irr::HTree<Deep>::build(keys, irr::refine::max_elements(1));
    std::vector<std::pair<irr::detail::IndexWire, std::pair<int, std::uint64_t>>> mine, all;
    const auto& t = d.local_tree();
    for (std::size_t i = 0; i < t.size(); ++i)
      mine.push_back({irr::detail::IndexWire::from(t.starts()[i]), {t.levels()[i], t.counts()[i]}});
    std::vector<decltype(mine)> parts;
    mpi::all_gather(world, mine, parts);
    for (const auto& v : parts) all.insert(all.end(), v.begin(), v.end());
    REQUIRE(all.size() == seq.size());
    int deep = 0;
    for (std::size_t i = 0; i < seq.size(); ++i) {
      REQUIRE(all[i].first.as<Deep::index_type>() == seq.start(i));
      REQUIRE(all[i].second.first == seq.level(i));
      REQUIRE(all[i].second.second == seq.element_count(i));
      deep += seq.level(i) > 32;
    }
    REQUIRE(deep > 0);
    for (const auto& e : d.local_elements()) REQUIRE(d.owner_of(e.position) == world.rank());
  };
  check(pts);
  auto f = [](std::array<double, 3> x) { x[2] = 1.0 - x[2]; return x; };
  d.move_elements([&](Particle3& p) { p.position = f(p.position); });
  for (auto& x : pts) x = f(x);
  check(pts);
  d.rebalance({.threshold = 0.0});
  check(pts);
}
