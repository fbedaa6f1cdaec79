// The partitioner advisor (issue 31): compare_partitioners' dry-run counts against what applying
// each candidate's map really does (the migration counters, a request/answer collection, one
// ghost exchange, the load report), on both domains, in 2D and 3D; the same counts whatever map
// is in force; nothing changed by a comparison; agreed errors that name the ranks whose candidates
// differ; names compared as the registry resolves them; partitioner::Auto's choice equal on every
// rank and equal to the comparison it records.
#include <irregular/distributed/advisor/auto_partitioner.hpp>
#include <irregular/partition/chain_partition.hpp>

#include "../support/domain_support.hpp"
#include <set>

using namespace domain_support;

namespace {

template <int D>
struct Point {
  std::array<double, D> position;
  std::uint64_t id;
};

template <int D>
irr::Box<D> unit_box() {
  irr::Box<D> b;
  b.hi.fill(1.0);
  return b;
}

// The whole state a comparison must not touch: elements, leaves, the map's answers.
template <class Domain>
std::array<std::uint64_t, 3> state_sum(const Domain& d) {
  std::array<std::uint64_t, 3> s{0, 0, 0};
  if constexpr (requires { d.local_elements(); }) {
    s = checksum(std::span<const typename Domain::element_type>(d.local_elements()));
  } else {
    for (const auto& x : d.local_data()) {
      std::uint64_t b[sizeof x / 8];
      std::memcpy(b, &x, sizeof x);
      for (auto w : b) s[0] = s[0] * 1000003ull + w;
    }
  }
  const auto& t = d.local_tree();
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto c = t.cell(i);
    s[1] += static_cast<std::uint64_t>(t.starts()[i]) * 31 + static_cast<std::uint64_t>(c.level) +
            static_cast<std::uint64_t>(d.ownership().leaf_owner(c)) * 1000003ull;
  }
  s[2] ^= static_cast<std::uint64_t>(d.comm().rank() + 1) * t.size();
  return global_checksum(d.comm(), s);
}

template <class Domain>
struct value_of {
  using type = typename Domain::data_type;
};
template <class Domain>
requires requires { typename Domain::element_type; }
struct value_of<Domain> {
  using type = typename Domain::element_type;
};

// What one rank sees after applying a map: its ghosts by request/answer, one exchange, its load.
template <class Domain, class Row>
void require_matches(Domain& d, const Row& row) {
  const int me = d.comm().rank();
  const auto& moved = d.last_migration();
  CHECK(moved.hnodes == row.remap_leaves);
  CHECK(moved.elements == row.remap_values);
  CHECK(moved.messages == row.remap_messages);
  if (row.remap_bytes_exact) CHECK(moved.bytes == row.remap_bytes);
  d.collect_ghosts({}, irr::ghost::RequestAnswer{});
  const auto& layer = d.ghosts();
  CHECK(layer.size() == row.part_ghost_leaves[static_cast<std::size_t>(me)]);
  const auto sent = d.exchange_ghosts();
  std::uint64_t got = 0;
  for (std::size_t g = 0; g < layer.size(); ++g) got += layer.counts()[g];
  using V = typename value_of<Domain>::type;
  CHECK(got * sizeof(V) == row.part_ghost_bytes[static_cast<std::size_t>(me)]);
  std::uint64_t total = 0, sent_all = 0;
  mpi::all_reduce(d.comm(), sent.bytes, sent_all, std::plus<std::uint64_t>());
  total = row.ghost_bytes_total;
  CHECK(sent_all == total);
  std::set<int> partners(layer.send_ranks().begin(), layer.send_ranks().end());
  partners.insert(layer.recv_ranks().begin(), layer.recv_ranks().end());
  CHECK(static_cast<int>(partners.size()) == row.part_neighbours[static_cast<std::size_t>(me)]);
  const auto report = d.load_report();
  CHECK(report.loads[static_cast<std::size_t>(me)] ==
        Approx(row.part_loads[static_cast<std::size_t>(me)]).epsilon(1e-12));
  // One meaning of imbalance (Lmax/Lavg - 1): the row's is the applied map's load report's.
  CHECK(row.imbalance == Approx(report.imbalance).margin(1e-9));
}

// Every candidate in turn: compare from the map in force, check nothing changed, apply, check
// the counts; then compare the whole list again from another map: the same counts.
template <class Domain>
void run_candidates(Domain& d, const std::vector<std::string>& names) {
  irr::advisor::AdvisorOptions opt;
  opt.model = {1e-6, 1e-9, 1e-6};
  const auto first = d.compare_partitioners(names, opt);
  REQUIRE(first.rows.size() == names.size());
  for (const auto& name : names) {
    CAPTURE(name, d.comm().size());
    const auto before = state_sum(d);
    const auto cmp = d.compare_partitioners({name}, opt);
    REQUIRE(state_sum(d) == before);
    const auto& row = cmp.rows[0];
    CHECK(row.imbalance >= 0.0);
    CHECK(row.imbalance ==
          Approx(irr::partition::load_imbalance<double>(row.part_loads)).margin(1e-12));
    CHECK(row.bottleneck >= row.lower_bound * (1 - 1e-12));
    if (row.family == "SFC") CHECK(row.optimal_bottleneck <= row.bottleneck * (1 + 1e-12));
    d.apply_map(cmp.maps[0]);
    require_matches(d, row);
    // The same map compared again from itself: nothing to move, the same ghosts.
    const auto again = d.compare_partitioners({name}, opt);
    CHECK(again.rows[0].remap_bytes == 0);
    CHECK(again.rows[0].part_ghost_leaves == row.part_ghost_leaves);
  }
  // From another map in force (the last candidate's): everything but the remap is the same.
  const auto second = d.compare_partitioners(names, opt);
  for (std::size_t k = 0; k < names.size(); ++k) {
    CAPTURE(names[k]);
    CHECK(second.rows[k].part_ghost_leaves == first.rows[k].part_ghost_leaves);
    CHECK(second.rows[k].part_ghost_bytes == first.rows[k].part_ghost_bytes);
    CHECK(second.rows[k].part_neighbours == first.rows[k].part_neighbours);
    CHECK(second.rows[k].imbalance == Approx(first.rows[k].imbalance).epsilon(1e-12));
  }
}

}  // namespace

TEST_CASE("dry-run counts equal the applied maps': elements in 2D under every family",
          "[advisor]") {
  mpi::communicator world;
  using P = irr::partitioner::ByName;
  using Domain = irr::IrregularDomain<Point<2>, irr::stencil::Moore<2>, irr::curve::Hilbert<2>,
                                      irr::load::ElementCount, P>;
  irr::DomainOptions<2, irr::load::ElementCount, P> o;
  Domain d(world, unit_box<2>(), irr::refine::max_elements(6), o);
  insert_and_build(d, clustered<2>(1200, 7), 1);
  run_candidates(d, {"SFC", "SFC-GREEDY", "HIER-RB", "JAG-M-HEUR-PROBE", "BN-2", "BN-4-8"});
}

TEST_CASE("dry-run counts equal the applied maps': elements in 3D, periodic", "[advisor]") {
  mpi::communicator world;
  using P = irr::partitioner::ByName;
  using Domain = irr::IrregularDomain<Point<3>, irr::stencil::VonNeumann<3>, irr::curve::Morton<3>,
                                      irr::load::ElementCount, P>;
  irr::DomainOptions<3, irr::load::ElementCount, P> o;
  o.periodic = {true, false, true};
  Domain d(world, unit_box<3>(), irr::refine::max_elements(8), o);
  insert_and_build(d, clustered<3>(1500, 11), 2);
  run_candidates(d, {"SFC", "HIER-RB", "JAG-M-HEUR-PROBE"});
}

TEST_CASE("dry-run counts equal the applied maps': cell data", "[advisor]") {
  mpi::communicator world;
  struct Datum {
    double a, b;
  };
  using P = irr::partitioner::ByName;
  using Domain =
      irr::CellDomain<Datum, irr::stencil::Moore<2>, irr::curve::Morton<2>, irr::load::Constant, P>;
  irr::CellDomainOptions<2, irr::load::Constant, P> o;
  Domain d(
      world, unit_box<2>(), 3,
      [](const irr::Cell<2>& c) {
        return Datum{1.0 * c.anchor[0], 1.0};
      },
      o);
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
      const auto c = d.cell(i);
      if (c.anchor[0] + c.anchor[1] < (2u << c.level) / 3) d.mark(i, irr::Mark::refine);
    }
    d.adapt([](const Datum& p, const irr::Cell<2>&) { return p; },
            [](std::span<const Datum> k) { return k[0]; });
  }
  run_candidates(d, {"SFC", "HIER-RB", "BN-2"});
}

TEST_CASE("advisor errors are agreed and change nothing", "[advisor][agreement]") {
  mpi::communicator world;
  const int last = world.size() - 1;
  using Domain = irr::IrregularDomain<Point<2>, irr::stencil::Moore<2>, irr::curve::Hilbert<2>,
                                      irr::load::ElementCount>;  // SfcBlocking: segment maps only
  Domain d(world, unit_box<2>(), irr::refine::max_elements(6));
  insert_and_build(d, clustered<2>(800, 5), 1);
  const auto before = state_sum(d);
  auto require_agreed = [&](auto&& call, const char* what) {
    int failing = -1;
    std::string message;
    try {
      call();
    } catch (const irr::collective_error& e) {
      failing = e.failing_rank();
      message = e.what();
    }
    CAPTURE(what, message);
    REQUIRE(failing >= 0);
    int lo = 0, hi = 0;
    mpi::all_reduce(world, failing, lo, mpi::minimum<int>());
    mpi::all_reduce(world, failing, hi, mpi::maximum<int>());
    REQUIRE(lo == hi);
    REQUIRE(message.find(what) != std::string::npos);
    REQUIRE(state_sum(d) == before);
  };
  // An unknown name on one rank only.
  require_agreed(
      [&] {
        (void)d.compare_partitioners(
            {"SFC", world.rank() == last ? "NO-SUCH-PARTITIONER" : "HIER-RB"});
      },
      "NO-SUCH-PARTITIONER");
  // Valid names, but not the same on every rank (every rank would choose differently).
  if (world.size() > 1)
    require_agreed(
        [&] {
          (void)d.compare_partitioners(world.rank() == last
                                           ? std::vector<std::string>{"HIER-RB", "SFC"}
                                           : std::vector<std::string>{"SFC", "HIER-RB"});
        },
        "differ");
  // A bad figure on one rank.
  require_agreed(
      [&] {
        irr::advisor::AdvisorOptions o;
        if (world.rank() == last) o.steps = 0;
        (void)d.compare_partitioners({"SFC"}, o);
      },
      "steps");
  require_agreed(
      [&] {
        irr::advisor::AdvisorOptions o;
        if (world.rank() == last) o.model.latency = -1;
        (void)d.compare_partitioners({"SFC"}, o);
      },
      "CostModel");
  // A map of another kind than the domain's partitioner makes, or for another number of parts.
  const auto cmp = d.compare_partitioners({"SFC", "HIER-RB"});
  require_agreed([&] { d.apply_map(cmp.maps[1]); }, "another kind");
  require_agreed(
      [&] {
        d.apply_map(world.rank() == last
                        ? irr::AnyOwnershipMap<irr::curve::Hilbert<2>>(
                              irr::SegmentMap<irr::curve::Hilbert<2>>(world.size() + 1))
                        : cmp.maps[0]);
      },
      "parts");
  // The segment map applies (it is the map in force: nothing moves).
  d.apply_map(cmp.maps[0]);
  CHECK(d.last_migration().bytes == cmp.rows[0].remap_bytes);
  CHECK(state_sum(d) == before);
}

namespace {
// The collective_error that call() throws, checked to be the same on every rank.
template <class F>
std::pair<std::string, int> agreed_error(const mpi::communicator& world, F&& call) {
  int failing = -1;
  std::string message;
  try {
    call();
  } catch (const irr::collective_error& e) {
    failing = e.failing_rank();
    message = e.what();
  }
  CAPTURE(message);
  REQUIRE(failing >= 0);
  std::uint64_t h = std::hash<std::string>{}(message) ^ static_cast<std::uint64_t>(failing);
  std::uint64_t lo = 0, hi = 0;
  mpi::all_reduce(world, h, lo, mpi::minimum<std::uint64_t>());
  mpi::all_reduce(world, h, hi, mpi::maximum<std::uint64_t>());
  REQUIRE(lo == hi);
  return {message, failing};
}
}  // namespace

TEST_CASE("a candidate list that differs names the ranks it differs on",
          "[advisor][agreement][mismatch]") {
  mpi::communicator world;
  const int p = world.size(), me = world.rank();
  using Domain = irr::IrregularDomain<Point<2>, irr::stencil::Moore<2>, irr::curve::Hilbert<2>,
                                      irr::load::ElementCount, irr::partitioner::ByName>;
  Domain d(world, unit_box<2>(), irr::refine::max_elements(6));
  insert_and_build(d, clustered<2>(600, 5), 1);
  const auto before = state_sum(d);
  using L = std::vector<std::string>;
  const std::vector<L> lists{{"SFC", "HIER-RB"}, {"HIER-RB", "SFC"}, {"SFC"}, {"HIER-RB"}};
  const auto r = [](int k) { return std::to_string(k); };
  // One odd rank, rank 0 or the last, with either list as the odd one (the fingerprints order
  // both ways).
  for (int flip = 0; flip < 2 && p > 1; ++flip)
    for (const int odd : {0, p - 1}) {
      CAPTURE(flip, odd);
      const auto [message, failing] = agreed_error(world, [&] {
        (void)d.compare_partitioners(lists[static_cast<std::size_t>((me == odd) != (flip == 1))]);
      });
      CAPTURE(message);
      if (p == 2) {  // one against one: no majority
        CHECK(message.find("no majority: rank 0 has one list; rank 1 another") !=
              std::string::npos);
        CHECK(failing == 1);
      } else {
        CHECK(message.find(": rank " + r(odd) + " differs from the other " + r(p - 1) + " ranks") !=
              std::string::npos);
        CHECK(failing == odd);
      }
      REQUIRE(state_sum(d) == before);
    }
  // Two odd ranks, 1 and the last.
  if (p >= 5) {
    const auto [message, failing] = agreed_error(
        world, [&] { (void)d.compare_partitioners(lists[me == 1 || me == p - 1 ? 1 : 0]); });
    CAPTURE(message);
    CHECK(message.find(": ranks 1 and " + r(p - 1) + " differ from the other " + r(p - 2) +
                       " ranks") != std::string::npos);
    CHECK(failing == 1);
  }
  // No majority: four lists, by rank % 4.
  if (p >= 4) {
    const auto [message, failing] = agreed_error(
        world, [&] { (void)d.compare_partitioners(lists[static_cast<std::size_t>(me % 4)]); });
    CAPTURE(message);
    const std::string expect =
        p == 4 ? "no majority: rank 0 has one list; rank 1 another; rank 2 another; and 1 more"
               : "no majority: ranks 0 and 4 have one list; ranks 1 and 5 another; ranks 2 and 6 "
                 "another; and 1 more";
    if (p == 4 || p == 7) CHECK(message.find(expect) != std::string::npos);
    CHECK(failing == 1);
  }
  REQUIRE(state_sum(d) == before);
}

TEST_CASE("a mismatch message names few ranks at any rank count", "[advisor][mismatch]") {
  using irr::advisor::detail::describe_mismatch;
  const std::size_t p = 100000;
  std::vector<std::uint64_t> prints(p, 7);
  CHECK(!describe_mismatch(prints));
  prints[7] = prints[p - 1] = 9;
  auto m = describe_mismatch(prints);
  REQUIRE(m);
  CHECK(m->first.find(": ranks 7 and 99999 differ from the other 99998 ranks") !=
        std::string::npos);
  CHECK(m->second == 7);
  for (std::size_t r = 0; r < p; ++r) prints[r] = r % 3 == 0 ? 1 : 2;  // 33334 odd, no list shown
  m = describe_mismatch(prints);
  REQUIRE(m);
  CHECK(m->first.find(": ranks 0, 3 and 33332 others differ from the other 66666 ranks") !=
        std::string::npos);
  CHECK(m->second == 0);
  for (std::size_t r = 0; r < p; ++r) prints[r] = r % 5;  // five lists, none a majority
  m = describe_mismatch(prints);
  REQUIRE(m);
  CHECK(m->first.find("no majority: ranks 0, 5 and 19998 others have one list; ranks 1, 6 and "
                      "19998 others another; ranks 2, 7 and 19998 others another; and 2 more") !=
        std::string::npos);
  CHECK(m->second == 1);
  CHECK(m->first.size() < 300);
}

TEST_CASE("the registry's canonical names", "[advisor][names]") {
  using C2 = irr::curve::Hilbert<2>;
  using C3 = irr::curve::Morton<3>;
  const auto canon = [](const std::string& n) {
    return irr::partitioner::ByName{n}.canonical_name<C2>();
  };
  CHECK(canon("sfc") == "SFC");
  CHECK(canon("Sfc-Greedy") == "SFC-GREEDY");
  CHECK(canon("bn-02-8-t") == "BN-2-8-T");
  CHECK(canon("BN-4") == "BN-4");
  CHECK(canon("jag-m-heur-probe-best") == "JAG-M-HEUR-PROBE");
  CHECK(canon("JAG-M-HEUR-PROBE-HOR") == "JAG-M-HEUR-PROBE-HOR");
  CHECK(canon("hier-rb-load") == "HIER-RB");
  CHECK(canon("HIER-RELAXED-DIST") == "HIER-RELAXED-DIST");
  CHECK(canon("hybrid(hier-relaxed-load/jag-m-opt-best,min=016)") ==
        "HYBRID(HIER-RELAXED/JAG-M-OPT,MIN=16)");
  CHECK(canon("HYBRID(HIER-RB/JAG-M-OPT,MIN=0)") == "HYBRID(HIER-RB/JAG-M-OPT)");
  CHECK(irr::partitioner::ByName{"jag-m-heur-best"}.canonical_name<C3>() == "JAG-M-HEUR");
  CHECK_THROWS_AS(canon("NO-SUCH"), irr::invalid_argument);
  CHECK_THROWS_AS(irr::partitioner::ByName{"BN-2"}.canonical_name<C3>(), irr::invalid_argument);
  // Every accepted spelling resolves to the policy of its canonical name: the same family, and
  // for the rectangular ones the canonical algorithm.
  for (const auto& n : irr::rect::partitioner_names<2>()) {
    CAPTURE(n);
    const irr::partitioner::ByName by{n};
    const auto policy = by.by_name<C2>();
    const auto* rect = std::get_if<irr::partitioner::Rectangular>(&policy);
    REQUIRE(rect != nullptr);
    CHECK(rect->algorithm == by.canonical_name<C2>());
    CHECK(irr::partitioner::ByName{by.canonical_name<C2>()}.canonical_name<C2>() ==
          by.canonical_name<C2>());
  }
}

TEST_CASE("candidate names compare as the registry resolves them", "[advisor][names]") {
  mpi::communicator world;
  const bool odd = world.rank() % 2 == 1;
  // The same partitioners, spelled differently on odd and even ranks.
  const std::vector<std::string> asked =
      odd ? std::vector<std::string>{"sfc", "hier-rb", "Jag-M-Heur-Probe-BEST", "bn-02-8"}
          : std::vector<std::string>{"SFC", "HIER-RB-LOAD", "JAG-M-HEUR-PROBE", "BN-2-8"};
  const std::vector<std::string> canonical{"SFC", "HIER-RB", "JAG-M-HEUR-PROBE", "BN-2-8"};
  using P = irr::partitioner::ByName;
  using Domain = irr::IrregularDomain<Point<2>, irr::stencil::Moore<2>, irr::curve::Hilbert<2>,
                                      irr::load::ElementCount, P>;
  Domain d(world, unit_box<2>(), irr::refine::max_elements(6));
  insert_and_build(d, clustered<2>(700, 13), 1);
  irr::advisor::AdvisorOptions opt;
  opt.model = {1e-6, 1e-9, 1e-6};
  const auto cmp = d.compare_partitioners(asked, opt);
  REQUIRE(cmp.rows.size() == canonical.size());
  // The rows name the resolved partitioners, so the comparison is the same on every rank.
  std::uint64_t h = 0;
  for (std::size_t k = 0; k < canonical.size(); ++k) {
    CHECK(cmp.rows[k].name == canonical[k]);
    CHECK(cmp.find(asked[k]) == &cmp.rows[k]);
    h = h * 1000003ull ^ std::hash<std::string>{}(cmp.rows[k].name) ^
        std::hash<double>{}(cmp.rows[k].predicted_seconds);
  }
  std::uint64_t lo = 0, hi = 0;
  mpi::all_reduce(world, h, lo, mpi::minimum<std::uint64_t>());
  mpi::all_reduce(world, h, hi, mpi::maximum<std::uint64_t>());
  CHECK(lo == hi);
  // partitioner::Auto compares the same way.
  using AutoP2 = irr::partitioner::Auto<irr::stencil::Moore<2>>;
  irr::DomainOptions<2, irr::load::ElementCount, AutoP2> o;
  o.partitioner.calibrate = false;
  o.partitioner.candidates = asked;
  irr::IrregularDomain<Point<2>, irr::stencil::Moore<2>, irr::curve::Hilbert<2>,
                       irr::load::ElementCount, AutoP2>
      a(world, unit_box<2>(), irr::refine::max_elements(6), o);
  insert_and_build(a, clustered<2>(700, 13), 1);
  const auto* choice = a.options().partitioner.last_choice();
  REQUIRE(choice != nullptr);
  CHECK(choice->candidates == canonical);
}

namespace {
using AutoC = irr::curve::Hilbert<2>;
using AutoP = irr::partitioner::Auto<irr::stencil::Moore<2>>;
using AutoDomain =
    irr::IrregularDomain<Point<2>, irr::stencil::Moore<2>, AutoC, irr::load::ElementCount, AutoP>;
}  // namespace

TEST_CASE("partitioner::Auto applies the cheapest predicted map, the same on every rank",
          "[advisor][auto]") {
  mpi::communicator world;
  irr::DomainOptions<2, irr::load::ElementCount, AutoP> o;
  o.partitioner.calibrate = false;
  o.partitioner.advice.model = {2e-6, 1e-9, 1e-6};
  o.partitioner.advice.steps = 1e12;  // the remap does not count: the best map of the leaves wins
  o.partitioner.hysteresis = 0;
  // Candidates whose maps depend on the leaves alone (bounded neighbours starts from the map in
  // force), so a later comparison of the same leaves predicts the same.
  const std::vector<std::string> names{"SFC", "HIER-RB", "JAG-M-HEUR-PROBE", "SFC-GREEDY"};
  o.partitioner.candidates = names;
  AutoDomain d(world, unit_box<2>(), irr::refine::max_elements(6), o);
  insert_and_build(d, clustered<2>(1000, 3), 2);
  const auto* first = d.options().partitioner.last_choice();
  REQUIRE(first != nullptr);
  REQUIRE(first->candidates == names);
  // The same choice and the same predictions, bit for bit, on every rank.
  std::uint64_t h = std::hash<std::string>{}(first->chosen);
  for (double x : first->predicted_seconds) h = h * 1000003ull ^ std::hash<double>{}(x);
  std::uint64_t lo = 0, hi = 0;
  mpi::all_reduce(world, h, lo, mpi::minimum<std::uint64_t>());
  mpi::all_reduce(world, h, hi, mpi::maximum<std::uint64_t>());
  REQUIRE(lo == hi);
  // The map in force is the chosen one, and it is the best of a comparison of the same leaves.
  irr::advisor::AdvisorOptions a = o.partitioner.advice;
  const auto cmp = d.compare_partitioners(names, a);
  CHECK(cmp.rows[static_cast<std::size_t>(cmp.best())].name == first->chosen);
  const auto& chosen = *cmp.find(first->chosen);
  CHECK(chosen.remap_bytes == 0);
  for (std::size_t k = 0; k < names.size(); ++k)
    CHECK(cmp.rows[k].predicted_seconds == Approx(first->predicted_seconds[k]).epsilon(1e-9));

  // A rebalance records its choice in the decision.
  irr::RebalanceOptions ro;
  ro.threshold = 0;
  d.move_elements([](Point<2>& e) { e.position[0] *= 0.5; });
  const auto decision = d.rebalance(ro);
  if (decision.unbalance > 0) {
    REQUIRE(decision.choice.has_value());
    CHECK(decision.choice->candidates == names);
    CHECK(std::find(names.begin(), names.end(), decision.choice->chosen) != names.end());
    CHECK(decision.choice->predicted_seconds.size() == names.size());
  }
}

TEST_CASE("partitioner::Auto's hysteresis keeps the family in force", "[advisor][auto]") {
  mpi::communicator world;
  irr::DomainOptions<2, irr::load::ElementCount, AutoP> o;
  o.partitioner.calibrate = false;
  o.partitioner.hysteresis = 0.999;  // another family must be a thousand times cheaper
  o.partitioner.candidates = {"HIER-RB", "SFC", "BN-2-8"};
  AutoDomain d(world, unit_box<2>(), irr::refine::max_elements(6), o);
  insert_and_build(d, clustered<2>(900, 9), 0);
  const auto family = [](const std::string& n) {
    return irr::advisor::detail::family_of<AutoC>(irr::partitioner::ByName{n});
  };
  const std::string first = family(d.options().partitioner.last_choice()->chosen);
  irr::RebalanceOptions ro;
  ro.threshold = 0;
  for (int round = 0; round < 3; ++round) {
    d.move_elements([round](Point<2>& e) {
      e.position[round % 2] = 0.3 + 0.5 * e.position[round % 2] * e.position[round % 2];
    });
    const auto decision = d.rebalance(ro);
    if (decision.choice) CHECK(family(decision.choice->chosen) == first);
  }
}

TEST_CASE("a calibration is the same on every rank; a bad one fails everywhere",
          "[advisor][calibration]") {
  mpi::communicator world;
  irr::advisor::CalibrationOptions co;
  co.repetitions = 3;
  co.sizes = {8, 65536};
  const auto m =
      irr::advisor::CostModel::calibrate(world, co, irr::advisor::CostModel{1e-6, 1e-9, 2e-7});
  for (double x : {m.latency, m.seconds_per_byte}) {
    double lo = 0, hi = 0;
    mpi::all_reduce(world, x, lo, mpi::minimum<double>());
    mpi::all_reduce(world, x, hi, mpi::maximum<double>());
    CHECK(lo == hi);
    CHECK(x >= 0);
  }
  CHECK(m.seconds_per_load == 2e-7);
  if (world.size() == 1) CHECK(m.latency == 1e-6);
  auto bad = co;
  if (world.rank() == world.size() - 1) bad.sizes = {8};
  int threw = 0;
  try {
    (void)irr::advisor::CostModel::calibrate(world, bad);
  } catch (const irr::collective_error&) {
    threw = 1;
  }
  int all = 0;
  mpi::all_reduce(world, threw, all, std::plus<int>());
  CHECK(all == world.size());
}
