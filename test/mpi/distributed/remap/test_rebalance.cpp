// Rebalancing for nonuniform machines under MPI (baiardi-2001 §3, kaddoura-ranka §3-5): the
// neighbour shift and the direct remap reach the same bound and conserve the elements, the shift
// sends only to adjacent ranks, capacity-proportional cuts reach the sequential heterogeneous
// optimum (within a leaf on the DirectCut fallback), chain arrangements renumber the ranks consistently, the profitability
// check declines and accepts constructed cases, measured capacities detect a slowed rank, and
// bad input on exactly one rank fails every rank alike with the mapping unchanged.
#include <catch2/catch.hpp>

#include "domain_support.hpp"

#include <irregular/curve/hilbert.hpp>
#include <irregular/distributed/partitioners/capacity_cut.hpp>
#include <irregular/domain.hpp>
#include <irregular/partition/efficiency.hpp>
#include <irregular/partition/heterogeneous.hpp>

#include <boost/archive/binary_oarchive.hpp>
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;
using namespace domain_support;

namespace {

using Curve = irr::curve::Hilbert<2>;
using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve, irr::load::ElementCount>;
using Timed = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve, irr::load::Measured>;

constexpr std::size_t kN = 1200, kLeaf = 6;

// Every rank holds the same points; rank-dependent input splits are covered by the domain tests.
template <class D>
void fill(D& d, unsigned seed) {
  const auto pts = clustered<2>(kN, seed);
  std::vector<Particle> mine_pts;
  for (std::size_t i = 0; i < kN; ++i)
    if (mine(i, kN, 1, d.comm())) mine_pts.push_back({pts[i], i});
  d.insert(mine_pts);
  d.build();
}

// Drags every element towards the corner: the map stays, the loads pile up on the first ranks.
template <class D>
void unbalance(D& d) {
  d.move_elements([](Particle& p) {
    p.position[0] *= 0.4;
    p.position[1] *= 0.7;
  });
}

std::array<std::uint64_t, 3> sum_of(const mpi::communicator& w, std::span<const Particle> es) {
  return global_checksum(w, checksum<Particle>(es));
}

// Every rank's element count (the ElementCount load), replicated.
std::vector<double> rank_loads(const Domain& d) {
  std::vector<double> all;
  mpi::all_gather(d.comm(), static_cast<double>(d.local_element_count()), all);
  return all;
}

double largest_leaf(const Domain& d) {
  double m = 0, all = 0;
  for (auto c : d.local_tree().counts()) m = std::max(m, static_cast<double>(c));
  mpi::all_reduce(d.comm(), m, all, mpi::maximum<double>());
  return all;
}

// The gathered chain of leaf counts in curve order (ranks hold it in rank order).
std::vector<double> gathered_chain(const Domain& d) {
  std::vector<double> mine(d.local_tree().counts().begin(), d.local_tree().counts().end());
  std::vector<std::vector<double>> all;
  mpi::all_gather(d.comm(), mine, all);
  std::vector<double> chain;
  for (const auto& v : all) chain.insert(chain.end(), v.begin(), v.end());
  return chain;
}

bool all_true(const mpi::communicator& w, bool mine) {
  int ok = mine ? 1 : 0, all = 0;
  mpi::all_reduce(w, ok, all, mpi::minimum<int>());
  return all == 1;
}

std::string map_bytes(const Domain& d) {
  std::ostringstream os;
  {
    boost::archive::binary_oarchive oa(os);
    oa << d.ownership();
  }
  return os.str();
}

}  // namespace

TEST_CASE("neighbour shift and direct reach the same bound, conserve, and the shift stays adjacent", "[rebalance]") {
  const mpi::communicator world;
  const int p = world.size();
  for (double threshold : {0.0, 0.05}) {
    CAPTURE(p, threshold);
    Domain a(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(kLeaf));
    Domain b(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(kLeaf));
    fill(a, 5);
    fill(b, 5);
    unbalance(a);
    unbalance(b);
    const auto before = sum_of(world, a.local_elements());
    REQUIRE(sum_of(world, b.local_elements()) == before);
    const double leaf = largest_leaf(a), avg = static_cast<double>(kN) / p;
    const auto shift = a.rebalance({.threshold = threshold, .strategy = irr::RemapStrategy::neighbour_shift});
    const auto direct = b.rebalance({.threshold = threshold});
    // Conservation by checksum after each strategy, and every element where the map says.
    REQUIRE(sum_of(world, a.local_elements()) == before);
    REQUIRE(sum_of(world, b.local_elements()) == before);
    require_consistent(a);
    require_consistent(b);
    // The same bound: within the threshold, or within one leaf of the average.
    const double bound = std::max(threshold, leaf / avg) + 1e-12;
    const auto la = rank_loads(a), lb = rank_loads(b);
    const double ua = irr::capacity_unbalance(la, std::vector<double>(la.size(), 1.0));
    const double ub = irr::capacity_unbalance(lb, std::vector<double>(lb.size(), 1.0));
    CAPTURE(ua, ub, bound, shift.rounds);
    REQUIRE(ua <= bound);
    REQUIRE(ub <= bound);
    REQUIRE(shift.unbalance_after == Approx(ua).margin(1e-12));
    REQUIRE(direct.unbalance_after == Approx(ub).margin(1e-12));
    // Only adjacent partners, counted per partner; the counts add up to what migrated.
    bool adjacent = true;
    std::uint64_t sent = 0;
    for (std::size_t q = 0; q < shift.elements_to.size(); ++q) {
      if (shift.elements_to[q] > 0 && std::abs(static_cast<int>(q) - world.rank()) != 1) adjacent = false;
      sent += shift.elements_to[q];
    }
    REQUIRE(all_true(world, adjacent));
    std::uint64_t total_sent = 0;
    mpi::all_reduce(world, sent, total_sent, std::plus<std::uint64_t>());
    REQUIRE(total_sent == a.last_migration().elements);
    REQUIRE(shift.elements_moved == a.last_migration().elements);
    // At most two partners (the SP neighbours) per rank per round.
    REQUIRE(a.last_migration().messages <= 2u * static_cast<unsigned>(p) * static_cast<unsigned>(shift.rounds));
    if (p > 1) {
      REQUIRE(shift.remapped);
      REQUIRE(shift.rounds >= 1);
      REQUIRE(direct.remapped);
      // Direct moves exactly what its cuts predicted: the least any range-preserving remap needs.
      REQUIRE(direct.elements_moved == direct.elements_to_move);
    }
  }
}

TEST_CASE("capacity-proportional segments reach the heterogeneous optimum (direct), within a leaf (shift)", "[rebalance]") {
  const mpi::communicator world;
  const int p = world.size();
  std::vector<double> caps;
  for (int r = 0; r < p; ++r) caps.push_back(1.0 + (r * 7 % 5));  // 1, 3, 5, 2, 4, 1, 3
  for (auto strategy : {irr::RemapStrategy::direct, irr::RemapStrategy::neighbour_shift}) {
    CAPTURE(p, static_cast<int>(strategy));
    Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(kLeaf));
    fill(d, 9);
    const auto before = sum_of(world, d.local_elements());
    const auto chain = gathered_chain(d);
    const auto rec = d.rebalance({.threshold = 0.0, .strategy = strategy, .capacities = caps});
    REQUIRE(sum_of(world, d.local_elements()) == before);
    require_consistent(d);
    // The capacity-weighted optimum of the same chain (sequential NicolPlus with capacities).
    const auto opt = irr::partition::nicol_plus<double>(chain, caps);
    const auto loads = rank_loads(d);
    double bottleneck = 0, leaf = *std::max_element(chain.begin(), chain.end()), cmin = 1e300;
    const double csum = std::accumulate(caps.begin(), caps.end(), 0.0);
    for (int r = 0; r < p; ++r) {
      bottleneck = std::max(bottleneck, loads[static_cast<std::size_t>(r)] / caps[static_cast<std::size_t>(r)]);
      cmin = std::min(cmin, caps[static_cast<std::size_t>(r)]);
    }
    CAPTURE(bottleneck, opt.bottleneck, leaf, cmin);
    REQUIRE(bottleneck >= opt.bottleneck - 1e-9);
    // The direct remap cuts at the optimum exactly; the shift stops once within the threshold's
    // reach of its rounds, so within a leaf of it.
    if (strategy == irr::RemapStrategy::direct) REQUIRE(bottleneck == Approx(opt.bottleneck).epsilon(1e-12));
    REQUIRE(bottleneck <= opt.bottleneck + leaf / cmin + 1e-9);
    // The decision record names the capacities (mean 1) and the unbalance it reached.
    REQUIRE(rec.capacities.size() == static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r)
      REQUIRE(rec.capacities[static_cast<std::size_t>(r)] == Approx(caps[static_cast<std::size_t>(r)] * p / csum));
    REQUIRE(rec.unbalance_after == Approx(irr::capacity_unbalance(loads, caps)).margin(1e-9));
  }
}

TEST_CASE("capacity_cut: the distributed windows give the sequential optimum, zero capacities stay empty", "[rebalance]") {
  const mpi::communicator world;
  const int p = world.size();
  Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(kLeaf));
  fill(d, 4);
  const auto& leaves = d.local_tree();
  // Uneven leaf work (the counts squared times 1..32 by a hash of the leaf) so that where each
  // separator falls matters: DirectCut misses the optimum here. Then the same with most leaves
  // idle (zero work), and with one leaf heavier than a part's share (wide windows).
  for (int shape = 0; shape < 3; ++shape) {
    std::vector<double> work;
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      const auto h = static_cast<std::uint64_t>(leaves.starts()[i]) * 0x9E3779B97F4A7C15ull >> 59;
      const double w = static_cast<double>(leaves.counts()[i] * leaves.counts()[i]) * static_cast<double>(1 + h);
      work.push_back(shape == 1 && h % 8 != 0 ? 0.0 : shape == 2 && h == 7 && leaves.counts()[i] > 0 ? 1e6 : w);
    }
    std::vector<double> mine(work), chain;
    std::vector<std::vector<double>> all;
    mpi::all_gather(world, mine, all);
    for (const auto& v : all) chain.insert(chain.end(), v.begin(), v.end());
    const double W = std::accumulate(chain.begin(), chain.end(), 0.0);
    const double leaf = *std::max_element(chain.begin(), chain.end());
    for (int zeros = 0; zeros <= (p > 2 ? 1 : 0); ++zeros) {
      std::vector<double> caps, live;
      for (int r = 0; r < p; ++r) caps.push_back(zeros && r == p / 2 ? 0.0 : 1.0 + (r * 3 % 4));
      for (double c : caps)
        if (c > 0) live.push_back(c);
      const auto opt = irr::partition::nicol_plus<double>(chain, live);
      for (std::size_t max_window : {std::size_t{1} << 20, std::size_t{0}}) {  // windows, then DirectCut
        CAPTURE(p, shape, zeros, max_window);
        const auto cut = irr::capacity_cut(world, d.ownership(), leaves, work, caps, max_window);
        REQUIRE(cut.splitters.size() == static_cast<std::size_t>(p) + 1);
        REQUIRE(std::is_sorted(cut.splitters.begin(), cut.splitters.end()));
        REQUIRE(std::accumulate(cut.loads.begin(), cut.loads.end(), 0.0) == Approx(W));
        // The loads it reports are the loads of the leaves its splitters enclose (brute force).
        std::vector<double> held(static_cast<std::size_t>(p), 0.0), held_all;
        for (std::size_t i = 0; i < leaves.size(); ++i) {
          const auto k = std::upper_bound(cut.splitters.begin(), cut.splitters.end(), leaves.starts()[i]) - cut.splitters.begin() - 1;
          held[static_cast<std::size_t>(k)] += work[i];
        }
        held_all.resize(held.size());
        mpi::all_reduce(world, held.data(), p, held_all.data(), std::plus<double>());
        for (int k = 0; k < p; ++k) {
          REQUIRE(cut.loads[static_cast<std::size_t>(k)] == Approx(held_all[static_cast<std::size_t>(k)]));
          if (caps[static_cast<std::size_t>(k)] == 0) REQUIRE(held_all[static_cast<std::size_t>(k)] == 0);
        }
        const double cmin = *std::min_element(live.begin(), live.end());
        // Integer work: the same prefix sums and part costs as the sequential search, exactly.
        if (max_window > 0) REQUIRE(cut.bottleneck() == opt.bottleneck);
        else REQUIRE(cut.bottleneck() <= opt.bottleneck + leaf / cmin + 1e-9);
      }
    }
  }
}

TEST_CASE("chain arrangements renumber the ranks and migrate through the order chosen", "[rebalance]") {
  const mpi::communicator world;
  const int p = world.size();
  // An explicit SP (reversed), then MinimizeCostRedistribution, the optimum and overlap matching.
  std::vector<int> reversed(static_cast<std::size_t>(p));
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  std::vector<double> caps;
  for (int r = 0; r < p; ++r) caps.push_back(r % 2 ? 0.5 : 2.0);
  for (int variant = 0; variant < 4; ++variant) {
    CAPTURE(p, variant);
    Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(kLeaf));
    fill(d, 13);
    const auto before = sum_of(world, d.local_elements());
    irr::RebalanceOptions opt{.threshold = 0.0, .capacities = caps};
    if (variant == 0) opt.order = reversed;
    if (variant == 1) opt.arrangement = irr::ChainArrangement::minimize_cost;
    if (variant == 2) opt.arrangement = p <= 16 ? irr::ChainArrangement::optimal : irr::ChainArrangement::keep;
    if (variant == 3) opt.arrangement = irr::ChainArrangement::overlap_matching;
    const int old_rank = d.comm().rank();
    const auto rec = d.rebalance(opt);
    REQUIRE(rec.remapped == (p > 1));
    if (variant == 0) REQUIRE(rec.order == reversed);
    // Rank k of the domain's communicator now holds chain part k: the rank rec.order[k] was.
    const auto pos = std::find(rec.order.begin(), rec.order.end(), old_rank) - rec.order.begin();
    REQUIRE(all_true(world, d.comm().rank() == pos));
    REQUIRE(sum_of(d.comm(), d.local_elements()) == before);
    require_consistent(d);
    REQUIRE(rec.elements_moved == rec.elements_to_move);
    // Capacities follow the ranks: the load of new rank k is proportional to caps[order[k]].
    const auto loads = rank_loads(d);
    std::vector<double> c;
    for (int r : rec.order) c.push_back(caps[static_cast<std::size_t>(r)]);
    REQUIRE(irr::capacity_unbalance(loads, c) == Approx(rec.unbalance_after).margin(1e-9));
    // Ghosts still work on the renumbered communicator (a collective over it).
    d.collect_ghosts();
    REQUIRE(all_true(world, true));
  }
}

TEST_CASE("profitability declines a remap that costs more than it saves and accepts the opposite", "[rebalance]") {
  const mpi::communicator world;
  const int p = world.size();
  Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(kLeaf));
  fill(d, 17);
  unbalance(d);
  const auto map_before = map_bytes(d);
  const auto sum_before = sum_of(world, d.local_elements());
  // Each unit of load costs 1 ms, each byte 1 us: the saving per iteration is about
  // (max load - average) ms, the cost (bytes to move) us.
  irr::RebalanceOptions opt{.threshold = 0.0, .horizon = 1e-3, .seconds_per_byte = 1e-6, .seconds_per_load = 1e-3};
  const auto no = d.rebalance(opt);
  if (p > 1) {
    CAPTURE(no.cost_seconds, no.saving_seconds, no.bytes_to_move);
    REQUIRE_FALSE(no.remapped);
    REQUIRE(no.reason == irr::RebalanceReason::not_profitable);
    REQUIRE(no.cost_seconds == Approx(1e-6 * static_cast<double>(no.bytes_to_move)));
    REQUIRE(no.cost_seconds > no.saving_seconds);
    REQUIRE(no.saving_seconds == Approx((no.current_seconds - no.predicted_seconds) * 1e-3));
    REQUIRE(no.current_seconds > no.predicted_seconds);
    REQUIRE(all_true(world, map_bytes(d) == map_before));
    REQUIRE(d.last_migration().elements == 0);
    opt.horizon = 1e6;
    const auto yes = d.rebalance(opt);
    REQUIRE(yes.remapped);
    REQUIRE(yes.reason == irr::RebalanceReason::remapped);
    REQUIRE(yes.cost_seconds < yes.saving_seconds);
    REQUIRE(yes.bytes_to_move == no.bytes_to_move);
    REQUIRE(yes.elements_moved == yes.elements_to_move);
    REQUIRE(sum_of(world, d.local_elements()) == sum_before);
    // The next check measures seconds per byte from this migration.
    opt.seconds_per_byte.reset();
    const auto again = d.rebalance(opt);
    REQUIRE(again.seconds_per_byte >= 0);
  } else {
    REQUIRE_FALSE(no.remapped);  // one rank is always balanced
    REQUIRE(no.reason == irr::RebalanceReason::within_threshold);
  }
}

TEST_CASE("a slowed rank is detected from measured capacities and the load moves away", "[rebalance]") {
  const mpi::communicator world;
  const int p = world.size();
  Timed d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(kLeaf));
  fill(d, 21);
  const int slow = p - 1;
  const int steps = 5, slow_from = 1;
  // Phases of 15-35 ms per rank: long against wake-up latencies on shared cores.
  const auto per_element = std::chrono::microseconds(p >= 4 ? 200 : 50);
  std::vector<double> efficiency;
  std::vector<std::size_t> slow_share;
  for (int step = 0; step < steps; ++step) {
    // One phase: every leaf "computes" for count x per_element (3x on the slowed rank from
    // slow_from on). Sleeping rather than spinning keeps the wall times true when ranks share cores.
    const double factor = step >= slow_from && world.rank() == slow ? 3.0 : 1.0;
    d.reset_measurements();  // capacities are measured over the last phase only
    // Each leaf sleeps until its cumulative deadline, so wake-up latencies do not add up.
    const auto start = std::chrono::steady_clock::now();
    auto deadline = start;
    for (auto leaf : d.local_leaves()) {
      const auto t = d.time_leaf(leaf.id);
      deadline += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          factor * static_cast<double>(leaf.count) * std::chrono::duration<double>(per_element));
      std::this_thread::sleep_until(deadline);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<double> work, secs;
    mpi::all_gather(world, static_cast<double>(d.local_element_count()), work);
    mpi::all_gather(world, seconds, secs);
    efficiency.push_back(irr::partition::measured_efficiency(work, secs));
    std::size_t share = d.local_element_count(), s = 0;
    mpi::broadcast(world, share, slow);
    (void)s;
    slow_share.push_back(share);
    const auto rec = d.rebalance({.threshold = 0.15, .measure_capacities = true});
    if (p > 1 && step == slow_from) {
      CAPTURE(rec.capacities[static_cast<std::size_t>(slow)], rec.unbalance);
      REQUIRE(rec.remapped);
      // The slowed rank's measured capacity is about a third of the others'.
      double others = 0;
      for (int r = 0; r < p; ++r)
        if (r != slow) others += rec.capacities[static_cast<std::size_t>(r)] / (p - 1);
      REQUIRE(rec.capacities[static_cast<std::size_t>(slow)] < 0.6 * others);
    }
  }
  CAPTURE(efficiency, slow_share);
  if (p > 1) {
    REQUIRE(efficiency[static_cast<std::size_t>(slow_from)] < 0.8);  // the slowdown shows
    REQUIRE(slow_share.back() < slow_share[static_cast<std::size_t>(slow_from)] * 0.7);  // load moved away
    // and efficiency recovered: the median over the phases after the remap (one phase may be
    // disturbed by a late wake-up on a loaded machine).
    std::vector<double> after(efficiency.begin() + slow_from + 1, efficiency.end());
    std::sort(after.begin(), after.end());
    REQUIRE(after[after.size() / 2] > 0.8);
  }
}

TEST_CASE("bad rebalance input on exactly one rank fails every rank alike, mapping unchanged", "[rebalance]") {
  const mpi::communicator world;
  const int p = world.size(), bad = p > 1 ? 1 : 0;
  Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(kLeaf));
  fill(d, 25);
  unbalance(d);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  // `any_rank`: options that differ between valid ranks name whichever rank differs first.
  auto expect = [&](const std::string& needle, irr::RebalanceOptions opt, bool any_rank = false) {
    const auto map_before = map_bytes(d);
    const auto sum_before = sum_of(world, d.local_elements());
    std::string message;
    int failing = -2;
    try {
      (void)d.rebalance(opt);
    } catch (const irr::collective_error& e) {
      message = e.what();
      failing = e.failing_rank();
    }
    CAPTURE(needle, message);
    REQUIRE(all_true(world, (any_rank ? failing >= 0 : failing == bad) && message.find(needle) != std::string::npos));
    std::string root = message;
    mpi::broadcast(world, root, 0);
    REQUIRE(all_true(world, root == message));
    REQUIRE(all_true(world, map_bytes(d) == map_before));
    REQUIRE(sum_of(world, d.local_elements()) == sum_before);
  };
  const bool me = world.rank() == bad;
  std::vector<double> ones(static_cast<std::size_t>(p), 1.0);
  auto with = [&](double v) {
    auto c = ones;
    if (me) c[0] = v;
    return c;
  };
  expect("capacity of rank 0", {.threshold = 0.0, .capacities = with(-1.0)});
  expect("capacity of rank 0", {.threshold = 0.0, .capacities = with(nan)});
  expect("capacity of rank 0", {.threshold = 0.0, .capacities = with(inf)});
  expect("all capacities are zero", {.threshold = 0.0, .capacities = me ? std::vector<double>(ones.size(), 0.0) : ones});
  expect("threshold", {.threshold = me ? -0.5 : 0.0});
  expect("horizon", {.threshold = 0.0, .horizon = me ? 0.0 : 1.0});
  expect("horizon", {.threshold = 0.0, .horizon = me ? -2.0 : 1.0});
  std::vector<int> order(static_cast<std::size_t>(p));
  std::iota(order.begin(), order.end(), 0);
  auto broken = order;
  broken[0] = p > 1 ? 1 : 5;  // a duplicate (or out of range on one rank)
  expect("not a permutation", {.threshold = 0.0, .order = me ? broken : order});
  expect("load::Measured", {.threshold = 0.0, .measure_capacities = me});
  if (p > 1) expect("differ", {.threshold = 0.0, .capacities = me ? std::vector<double>(ones.size(), 2.0) : ones}, true);
  // Bad loads: a leaf's work NaN on one rank reaches the capacity cut, which agrees on it.
  const auto& leaves = d.local_tree();
  std::vector<double> work(leaves.size(), 1.0);
  if (me && !work.empty()) work[0] = nan;
  const bool has = !work.empty();
  bool any_has = false;
  mpi::all_reduce(world, has && me, any_has, std::logical_or<bool>());
  if (any_has) {
    int failing = -2;
    try {
      (void)irr::capacity_cut(d.comm(), d.ownership(), leaves, work, ones);
    } catch (const irr::collective_error& e) {
      failing = e.failing_rank();
    }
    REQUIRE(all_true(world, failing == bad));
  }
  // A metric that turns negative on one rank: the re-estimate fails everywhere, nothing moves.
  using W = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve,
                                 irr::load::Weighted<std::function<double(const irr::Cell<2>&, std::size_t)>>>;
  bool poison = false;
  W w(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(kLeaf),
      {.load = irr::load::weighted(std::function<double(const irr::Cell<2>&, std::size_t)>(
           [&](const irr::Cell<2>&, std::size_t c) { return poison && me ? -1.0 : static_cast<double>(c); }))});
  fill(w, 25);
  poison = true;
  int failing = -2;
  try {
    w.move_elements([](Particle& q) { q.position[0] *= 0.5; });
  } catch (const irr::collective_error& e) {
    failing = e.failing_rank();
  }
  REQUIRE(all_true(world, failing == bad));
}
