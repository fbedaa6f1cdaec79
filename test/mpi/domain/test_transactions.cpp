// One transaction for both domains: a collective that fails on exactly one rank, after a phase
// that changed state (data moved, families gathered), leaves every rank as it was. And the cell
// domain's rebalance honours every RebalanceOptions field, as the element domain's does.
// Registered at 1, 2, 3, 4, 5 and 7 ranks.
#include "domain_support.hpp"

#include <irregular/cell_domain.hpp>
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/domain.hpp>

#include <boost/mpi/collectives.hpp>

#include <chrono>
#include <cmath>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;
using namespace domain_support;

namespace {

using Curve = irr::curve::Hilbert<2>;
const irr::Box<2> unit{{0, 0}, {1, 1}};

// ---- the cell domain's test grid ------------------------------------------------------------

struct Datum {
  std::uint64_t mass = 0;  // 4^(levels below 8) units: conserved exactly by split and merge
  double value = 0;
};
Datum init(const irr::Cell<2>& c) { return {std::uint64_t{1} << (2 * (8 - c.level)), double(c.anchor[0] + 3 * c.anchor[1])}; }
Datum split(const Datum& p, const irr::Cell<2>& c) { return {p.mass / 4, double(c.anchor[0] + 3 * c.anchor[1])}; }
Datum merge(std::span<const Datum> kids) {
  Datum d;
  for (const auto& k : kids) d.mass += k.mass;
  return d;
}

// A metric that is user code: leaves weigh by level, and it can be told to fail on one rank.
int g_metric_fails_on = -1;  // a rank, or -1
bool g_metric_nan = false;
struct FragileWeight {
  double operator()(const irr::Cell<2>& c, std::size_t count) const {
    if (mpi::communicator().rank() == g_metric_fails_on) {
      if (g_metric_nan) return std::nan("");
      throw std::runtime_error("metric failed");
    }
    return (1.0 + c.level) * static_cast<double>(count ? count : 1);
  }
};
using Metric = irr::load::Weighted<FragileWeight>;
using Cells = irr::CellDomain<Datum, irr::stencil::Moore<2>, Curve, Metric>;

// 67 leaves: the level-3 grid with cell 0 refined once (its family then straddles levels).
Cells grid(const mpi::communicator& w, Cells::options_type options = {}) {
  Cells d(w, unit, 3, init, options);
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
    if (d.local_tree().starts()[i] == 0) d.mark(i, irr::Mark::refine);
  d.adapt(split, merge);
  return d;
}
// The leaves to the left get heavier: a partition that is far from balanced.
template <class D>
void make_unbalanced(D& d) {
  for (int round = 0; round < 2; ++round) {
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
      if (d.centre(i)[0] < 0.3 && d.level(i) < 6) d.mark(i, irr::Mark::refine);
    d.adapt(split, merge);
  }
}
template <class D>
std::uint64_t total_mass(const D& d) {
  std::uint64_t m = 0, all = 0;
  for (const auto& x : d.local_data()) m += x.mass;
  mpi::all_reduce(d.comm(), m, all, std::plus<std::uint64_t>());
  return all;
}
// The leaves (start, level) and data (mass) of every rank, gathered in curve order.
template <class D>
std::vector<std::array<std::uint64_t, 3>> gathered(const D& d) {
  std::vector<std::array<std::uint64_t, 3>> mine, out;
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
    mine.push_back({static_cast<std::uint64_t>(d.local_tree().starts()[i]), std::uint64_t(d.level(i)), d.data(i).mass});
  std::vector<std::vector<std::array<std::uint64_t, 3>>> all;
  mpi::all_gather(d.comm(), mine, all);
  for (const auto& v : all) out.insert(out.end(), v.begin(), v.end());
  std::sort(out.begin(), out.end());
  return out;
}

// A datum that needs serialization and fails to save and to load on one rank on demand.
int g_save_fails_on = -1;
struct FragileDatum {
  std::vector<std::uint64_t> mass{0};
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    if (Archive::is_saving::value && mpi::communicator().rank() == g_save_fails_on)
      throw std::runtime_error("save failed");
    ar & mass;
    if (Archive::is_loading::value && mpi::communicator().rank() == g_save_fails_on)
      throw std::runtime_error("load failed");
  }
};
std::uint64_t value_hash(const FragileDatum& d) {
  std::uint64_t h = 0;
  for (auto m : d.mass) h = h * 31 + m;
  return h;
}

struct Disarm {  // every injected fault is off again when a case ends, pass or fail
  ~Disarm() {
    g_metric_fails_on = g_save_fails_on = -1;
    g_metric_nan = false;
  }
};

}  // namespace

// ---- the three defects: a failure after state changed -----------------------------------------

TEST_CASE("IrregularDomain::rebalance: a metric failing on one rank after the remap leaves every rank as it was",
          "[transaction][elements]") {
  mpi::communicator w;
  Disarm disarm;
  if (w.size() == 1) return;  // one rank never remaps
  using ElementMetric = irr::load::Weighted<FragileWeight>;
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve, ElementMetric>;
  const int bad = w.size() - 1;
  for (auto strategy : {irr::RemapStrategy::direct, irr::RemapStrategy::neighbour_shift}) {
    for (bool nan : {false, true}) {
      CAPTURE(static_cast<int>(strategy), nan);
      Domain d(w, unit, irr::refine::max_elements(8));
      insert_and_build(d, clustered<2>(800, 7), 1);
      d.move_elements([](Particle& p) { p.position[0] *= 0.4; });  // everything drifts left
      g_metric_fails_on = bad;
      g_metric_nan = nan;
      // The metric is evaluated only on the arrivals, after the data moved.
      require_agreed_failure(d, bad, nan ? "loads must be finite" : "metric failed",
                             [&] { d.rebalance({.threshold = 0.0, .strategy = strategy}); });
      g_metric_fails_on = -1;
      const auto done = d.rebalance({.threshold = 0.0, .strategy = strategy});
      REQUIRE(done.remapped);
      require_consistent(d);
    }
  }
}

TEST_CASE("CellDomain::adapt: every leaf marked coarsen equals the sequential tree; a merge failing on one rank "
          "after families were gathered leaves every rank as it was",
          "[transaction][cells]") {
  mpi::communicator w;
  Disarm disarm;
  const int bad = w.size() - 1;
  // The oracle: the same marks on the sequential tree (incomplete families are ignored).
  auto serial = irr::CellTree<Curve, Datum>::uniform(3, init);
  serial.mark(0, irr::Mark::refine);
  serial.adapt(split, merge);
  for (std::size_t i = 0; i < serial.size(); ++i) serial.mark(i, irr::Mark::coarsen);
  serial.adapt(split, merge);
  REQUIRE(serial.size() == 19);  // 4 level-4 leaves and 15 level-3 families merge; 3 leaves stay

  {  // Success: families cut by a part boundary are gathered, then merged.
    auto d = grid(w);
    int cut_here = 0, cut_families = 0;
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
      const auto c = d.cell(i);
      if (c.level > 0 && d.ownership().splits(irr::Cell<2>{{c.anchor[0] / 2, c.anchor[1] / 2}, c.level - 1}))
        cut_here = 1;
    }
    mpi::all_reduce(w, cut_here, cut_families, std::plus<int>());
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i) d.mark(i, irr::Mark::coarsen);
    d.adapt(split, merge);
    std::vector<std::array<std::uint64_t, 3>> expected;
    for (std::size_t i = 0; i < serial.size(); ++i)
      expected.push_back({static_cast<std::uint64_t>(serial.start(i)), std::uint64_t(serial.level(i)), serial.data(i).mass});
    std::sort(expected.begin(), expected.end());
    REQUIRE(gathered(d) == expected);
    // Where the partition cut a family, it moved whole before merging.
    if (cut_families > 0) REQUIRE(d.last_migration().elements > 0);
    if (w.size() == 3 || w.size() == 5) REQUIRE(cut_families > 0);  // so the failure below follows a move
  }
  {  // Failure after the gathering: nothing changed, the partition included.
    auto d = grid(w);
    const auto before = gathered(d);
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i) d.mark(i, irr::Mark::coarsen);
    require_agreed_failure(d, bad, "merge failed", [&] {
      d.adapt(split, [&](std::span<const Datum> kids) {
        if (w.rank() == bad) throw std::runtime_error("merge failed");
        return merge(kids);
      });
    });
    REQUIRE(gathered(d) == before);
    // And a metric failing on one rank when the new leaves are weighed.
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i) d.mark(i, irr::Mark::coarsen);
    g_metric_fails_on = bad;
    require_agreed_failure(d, bad, "metric failed", [&] { d.adapt(split, merge); });
  }
}

// ---- the cell domain's rebalance: every option, the same decision record --------------------

TEST_CASE("CellDomain::rebalance honours the strategy and reports the decision", "[rebalance][cells]") {
  mpi::communicator w;
  for (auto strategy : {irr::RemapStrategy::direct, irr::RemapStrategy::neighbour_shift}) {
    CAPTURE(static_cast<int>(strategy));
    auto d = grid(w);
    make_unbalanced(d);
    const auto leaves = gathered(d);
    const auto before = d.load_report();
    const irr::RebalanceDecision r = d.rebalance({.threshold = 0.05, .strategy = strategy});
    REQUIRE(r.strategy == strategy);
    REQUIRE(r.unbalance == Approx(before.max_unbalance));
    REQUIRE(gathered(d) == leaves);  // the same leaves and data, wherever they are now
    REQUIRE(total_mass(d) == (std::uint64_t{1} << 16));
    if (w.size() == 1) {
      REQUIRE(!r.remapped);
      REQUIRE(r.reason == irr::RebalanceReason::within_threshold);
      continue;
    }
    REQUIRE(r.remapped);
    REQUIRE(r.reason == irr::RebalanceReason::remapped);
    REQUIRE(r.rounds >= 1);
    const auto after = d.load_report();
    REQUIRE(after.max_unbalance < before.max_unbalance);
    if (strategy == irr::RemapStrategy::neighbour_shift) REQUIRE(r.unbalance_after == Approx(after.max_unbalance).margin(1e-9));
  }
}

TEST_CASE("CellDomain::rebalance honours capacities: each rank's load follows its capacity", "[rebalance][cells]") {
  mpi::communicator w;
  auto d = grid(w);
  make_unbalanced(d);
  std::vector<double> caps;
  for (int r = 0; r < w.size(); ++r) caps.push_back(1.0 + r);
  const double sum = std::accumulate(caps.begin(), caps.end(), 0.0);
  const auto r = d.rebalance({.threshold = 0.0, .capacities = caps});
  const auto rep = d.load_report();
  double heaviest = 0, total = 0;
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i) heaviest = std::max(heaviest, d.local_loads()[i]);
  mpi::all_reduce(w, heaviest, heaviest, mpi::maximum<double>());
  for (double l : rep.loads) total += l;
  REQUIRE(r.capacities.size() == caps.size());
  for (int k = 0; k < w.size(); ++k) {
    CAPTURE(k, rep.loads[k]);
    REQUIRE(r.capacities[k] == Approx(caps[k] * w.size() / sum));  // reported with mean 1
    // A contiguous cut is at most one leaf off its share: equal shares would break this bound.
    REQUIRE(rep.loads[k] <= total * caps[k] / sum + heaviest + 1e-9);
  }
  REQUIRE(total_mass(d) == (std::uint64_t{1} << 16));
}

TEST_CASE("CellDomain::rebalance honours the horizon: an unprofitable remap moves nothing", "[rebalance][cells]") {
  mpi::communicator w;
  if (w.size() == 1) return;
  auto d = grid(w);
  make_unbalanced(d);
  const auto before = signature(d);
  const auto no = d.rebalance({.threshold = 0.0, .horizon = 1e-9, .seconds_per_byte = 1.0});
  REQUIRE(!no.remapped);
  REQUIRE(no.reason == irr::RebalanceReason::not_profitable);
  REQUIRE(no.bytes_to_move > 0);
  REQUIRE(signature(d) == before);
  const auto yes = d.rebalance({.threshold = 0.0, .horizon = 1e12, .seconds_per_byte = 1e-12});
  REQUIRE(yes.remapped);
  REQUIRE(yes.cost_seconds == Approx(1e-12 * static_cast<double>(yes.bytes_to_move)));
}

TEST_CASE("CellDomain::rebalance honours max_rounds and seconds_per_load", "[rebalance][cells]") {
  mpi::communicator w;
  if (w.size() == 1) return;
  {  // the neighbour shift stops after max_rounds
    auto d = grid(w);
    make_unbalanced(d);
    const auto r = d.rebalance({.threshold = 0.0, .strategy = irr::RemapStrategy::neighbour_shift, .max_rounds = 1});
    REQUIRE(r.remapped);
    REQUIRE(r.rounds == 1);
  }
  // The saving is (current - predicted) loads x seconds_per_load x horizon: against the same cost,
  // cheap loads make the remap unprofitable and dear ones make it pay.
  for (double spl : {1e-15, 1e6}) {
    CAPTURE(spl);
    auto d = grid(w);
    make_unbalanced(d);
    const auto r = d.rebalance({.threshold = 0.0, .horizon = 1.0, .seconds_per_byte = 1e-6, .seconds_per_load = spl});
    REQUIRE(r.saving_seconds == Approx((r.current_seconds - r.predicted_seconds) * 1.0));
    REQUIRE(r.remapped == (spl > 1));
  }
}

TEST_CASE("CellDomain::rebalance honours the chain order and the arrangement: ranks are renumbered",
          "[rebalance][cells]") {
  mpi::communicator w;
  auto d = grid(w);
  make_unbalanced(d);
  const auto leaves = gathered(d);
  std::vector<int> order(static_cast<std::size_t>(w.size()));
  std::iota(order.rbegin(), order.rend(), 0);  // reversed
  const int old_rank = d.comm().rank();
  const auto r = d.rebalance({.threshold = 0.0, .order = order});
  REQUIRE(r.order == order);
  REQUIRE(d.comm().rank() == w.size() - 1 - old_rank);  // rank k holds chain part k
  REQUIRE(gathered(d) == leaves);
  for (auto a : {irr::ChainArrangement::minimize_cost, irr::ChainArrangement::optimal,
                 irr::ChainArrangement::overlap_matching}) {
    make_unbalanced(d);
    const auto now = gathered(d);
    const auto m = d.rebalance({.threshold = 0.0, .arrangement = a});
    auto sorted = m.order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> ranks(static_cast<std::size_t>(w.size()));
    std::iota(ranks.begin(), ranks.end(), 0);
    REQUIRE(sorted == ranks);
    REQUIRE(gathered(d) == now);
  }
}

TEST_CASE("CellDomain::rebalance honours measured capacities (load::Measured) and refuses them otherwise",
          "[rebalance][cells]") {
  mpi::communicator w;
  Disarm disarm;
  using Measured = irr::CellDomain<Datum, irr::stencil::Moore<2>, Curve, irr::load::Measured>;
  Measured d(w, unit, 4, init);
  if (w.size() == 2) {  // wall-clock timing needs a core per rank (not oversubscribed)
    // Rank 0 spends twice the seconds per leaf: its measured capacity is the lower one. Each
    // leaf spins to a cumulative deadline, so a preemption is paid back by the next leaf.
    using clock = std::chrono::steady_clock;
    auto deadline = clock::now();
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
      auto timer = d.time_leaf(i);
      deadline += std::chrono::microseconds(w.rank() == 0 ? 400 : 200);
      while (clock::now() < deadline) {
      }
    }
    const auto r = d.rebalance({.threshold = 0.0, .measure_capacities = true});
    REQUIRE(r.capacities.size() == 2);
    REQUIRE(r.capacities[1] / r.capacities[0] == Approx(2.0).epsilon(0.35));
    REQUIRE(r.remapped);
  } else {  // nothing timed: every rank gets the mean capacity
    const auto r = d.rebalance({.threshold = 0.0, .measure_capacities = true});
    for (double c : r.capacities) REQUIRE(c == Approx(1.0));
  }
  auto e = grid(w);
  require_agreed_failure(e, 0, "measured capacities need the load::Measured metric",
                         [&] { e.rebalance({.threshold = 0.0, .measure_capacities = true}); });
}

TEST_CASE("CellDomain::rebalance: a metric or a serialization failing on one rank fails every rank, "
          "nothing changed",
          "[rebalance][cells][transaction]") {
  mpi::communicator w;
  Disarm disarm;
  if (w.size() == 1) return;
  const int bad = w.size() - 1;
  for (auto strategy : {irr::RemapStrategy::direct, irr::RemapStrategy::neighbour_shift}) {
    CAPTURE(static_cast<int>(strategy));
    auto d = grid(w);
    make_unbalanced(d);
    g_metric_fails_on = bad;
    require_agreed_failure(d, bad, "metric failed", [&] { d.rebalance({.threshold = 0.0, .strategy = strategy}); });
    g_metric_fails_on = -1;
    REQUIRE(d.rebalance({.threshold = 0.0, .strategy = strategy}).remapped);
  }
  // A datum that needs serialization: the remap takes the general path, a save fails on one rank.
  using Fragile = irr::CellDomain<FragileDatum, irr::stencil::Moore<2>, Curve, Metric>;
  Fragile f(w, unit, 3, [](const irr::Cell<2>& c) { return FragileDatum{{std::uint64_t(c.anchor[0] * 9 + c.anchor[1])}}; });
  for (std::size_t i = 0; i < f.local_leaf_count(); ++i)
    if (f.centre(i)[0] < 0.3) f.mark(i, irr::Mark::refine);
  f.adapt([](const FragileDatum& p, const irr::Cell<2>&) { return p; },
          [](std::span<const FragileDatum> k) { return k[0]; });
  g_save_fails_on = bad;
  // The remap may only send from, or only deliver to, the failing rank: it fails either way.
  require_agreed_failure(f, bad, " failed", [&] { f.rebalance({.threshold = 0.0}); });
}

TEST_CASE("hold_level holds for the element domain too, and the neighbour shift refuses it", "[rebalance][hold]") {
  mpi::communicator w;
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, Curve, irr::load::ElementCount>;
  Domain d(w, unit, irr::refine::max_elements(8), {.hold_level = 2});
  insert_and_build(d, clustered<2>(800, 3), 1);
  d.move_elements([](Particle& p) { p.position[0] *= 0.4; });
  d.rebalance({.threshold = 0.0});
  const auto span2 = irr::detail::span_at<Curve>(2);
  for (int r = 1; r < w.size(); ++r) {
    const auto b = d.ownership().segment(r).start;
    CAPTURE(r);
    REQUIRE((b == irr::detail::index_end<Curve>() || b % span2 == 0));
  }
  require_agreed_failure(d, 0, "cannot keep the cells of hold_level whole", [&] {
    d.rebalance({.threshold = 0.0, .strategy = irr::RemapStrategy::neighbour_shift});
  });
}
