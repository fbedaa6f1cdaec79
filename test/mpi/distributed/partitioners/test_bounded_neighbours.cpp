// Bounded Neighbours through a domain: every element conserved (count and checksum) across
// build, moves and rebalance, owners consistent, the NS bound held (exact count on the cuts,
// and the map's own neighbour_ranks under the 8-neighbour stencil), the distributed protocol's
// cuts equal to the sequential paper cuts, and one rank's bad input failing every rank alike.
#include "domain_support.hpp"

#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/distributed/partitioners/bounded_neighbours.hpp>
#include <irregular/distributed/partitioners/registry.hpp>
#include <irregular/domain.hpp>
#include <irregular/rows/bound.hpp>
#include <irregular/rows/cuts.hpp>
#include <irregular/rows/cuts_check.hpp>

#include <boost/mpi/collectives.hpp>

#include <algorithm>
#include <sstream>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;
using namespace domain_support;
using BN = irr::partitioner::BoundedNeighbours;

namespace {

int sum_all(const mpi::communicator& w, int x) {
  int t = 0;
  mpi::all_reduce(w, x, t, std::plus<int>());
  return t;
}

template <class Map>
const irr::RowMap<irr::curve::Hilbert<2>>& row_map(const Map& m) {
  if constexpr (std::is_same_v<Map, irr::RowMap<irr::curve::Hilbert<2>>>) return m;
  else return *m.template get_if<irr::RowMap<irr::curve::Hilbert<2>>>();
}

// Conservation, owners, leaves whole on their leaf_owner, the bound on the cuts.
template <class Domain>
void require_legal(Domain& d, const std::vector<std::array<double, 2>>& where, std::size_t k, const BN& policy) {
  const auto& world = d.comm();
  require_tree_and_leaf_owners(d, where, k);
  int bad = 0;
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
    auto leaf = d.leaf(i);
    for (const auto& e : leaf.elements)
      if (d.owner_of(e.position) != world.rank()) ++bad;
    const auto h = d.ownership().holders(leaf.interval);
    if (!std::binary_search(h.begin(), h.end(), world.rank())) ++bad;
  }
  REQUIRE(sum_all(world, bad) == 0);
  std::vector<Particle> all_in;
  for (std::size_t i = 0; i < where.size(); ++i) all_in.push_back({where[i], i});
  REQUIRE(global_checksum(world, checksum<Particle>(d.local_elements())) == checksum<Particle>(all_in));
  const auto& m = row_map(d.ownership());
  REQUIRE(m.parts() == world.size());
  const std::vector<std::size_t> cuts(m.cuts().begin(), m.cuts().end());
  const auto bound = policy.bound();
  REQUIRE(bound.rule_holds(m.grid(), cuts));
  REQUIRE(bound.holds(m.grid(), cuts));
  if (policy.stencil == irr::rows::Stencil::eight && m.exceptions().empty()) {
    irr::Periodicity<2> per{policy.toroidal, policy.toroidal};
    for (int r = 0; r < world.size(); ++r) REQUIRE(m.neighbour_ranks(r, per).size() <= static_cast<std::size_t>(policy.ns));
  }
  // neighbour_ranks against brute force: every grid cell's holder (uniform inside a grid cell,
  // whole-held cells included) and its 8 neighbours, periodic or not.
  const std::size_t n = m.grid().columns;
  if (n <= 128) {
    std::vector<int> holder(n * n);
    for (std::size_t y = 0; y < n; ++y)
      for (std::size_t x = 0; x < n; ++x) {
        irr::Cell<2> c;
        c.level = m.level();
        c.anchor = {static_cast<irr::coord_t>(x), static_cast<irr::coord_t>(y)};
        holder[y * n + x] = m.owner(irr::curve::finest_index<irr::curve::Hilbert<2>>(c));
      }
    for (bool periodic : {false, true}) {
      std::vector<std::vector<int>> nb(static_cast<std::size_t>(world.size()));
      const auto N = static_cast<long long>(n);
      for (long long y = 0; y < N; ++y)
        for (long long x = 0; x < N; ++x)
          for (long long dy = -1; dy <= 1; ++dy)
            for (long long dx = -1; dx <= 1; ++dx) {
              long long u = x + dx, v = y + dy;
              if (periodic) { u = (u + N) % N; v = (v + N) % N; }
              if (u < 0 || v < 0 || u >= N || v >= N) continue;
              const int a = holder[static_cast<std::size_t>(y * N + x)], b = holder[static_cast<std::size_t>(v * N + u)];
              if (a != b) nb[static_cast<std::size_t>(a)].push_back(b);
            }
      for (int r = 0; r < world.size(); ++r) {
        auto& v = nb[static_cast<std::size_t>(r)];
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        REQUIRE(m.neighbour_ranks(r, irr::Periodicity<2>{periodic, periodic}) == v);
      }
    }
  }
  // The replicated map: neighbour sets symmetric, and a serialized copy answers alike.
  std::ostringstream os;
  {
    boost::archive::binary_oarchive oa(os);
    oa << m;
  }
  irr::RowMap<irr::curve::Hilbert<2>> copy;
  {
    std::istringstream is(os.str());
    boost::archive::binary_iarchive ia(is);
    ia >> copy;
  }
  REQUIRE(copy == m);
  for (int r = 0; r < world.size(); ++r)
    for (bool periodic : {false, true}) {
      irr::Periodicity<2> per{periodic, periodic};
      for (int s : m.neighbour_ranks(r, per)) {
        const auto back = m.neighbour_ranks(s, per);
        REQUIRE(std::find(back.begin(), back.end(), r) != back.end());
      }
    }
}

// The grid loads every partition sees: each leaf's load on its load_position (all ranks).
template <class Domain>
std::vector<double> grid_loads(Domain& d, int level) {
  const irr::RowMap<irr::curve::Hilbert<2>> shape(level, {0, BN::grid_cells<irr::curve::Hilbert<2>>(level)});
  std::vector<double> mine(static_cast<std::size_t>(shape.cuts().back()), 0.0), all(mine.size());
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
    auto leaf = d.leaf(i);
    mine[static_cast<std::size_t>(shape.load_position(leaf.cell))] += leaf.load;
  }
  mpi::all_reduce(d.comm(), mine.data(), static_cast<int>(mine.size()), all.data(), std::plus<double>());
  return all;
}

template <class P>
void run(const mpi::communicator& world, P policy, const BN& as, bool expect_whole_held = false) {
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, irr::curve::Hilbert<2>, irr::load::ElementCount, P>;
  const std::size_t n = 1200, k = 8;
  irr::DomainOptions<2, irr::load::ElementCount, P> opt;
  opt.partitioner = policy;
  Domain dom(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(k), opt);
  auto pts = clustered<2>(n, 77);
  insert_and_build(dom, pts, 1);
  require_legal(dom, pts, k, as);
  if (expect_whole_held && world.size() > 1) REQUIRE_FALSE(row_map(dom.ownership()).exceptions().empty());

  // Everything squeezed to the left, then a rebalance: the protocol runs on the old runs.
  auto squeeze = [](std::array<double, 2> x) { x[0] *= 0.5; x[1] = 0.2 + 0.6 * x[1]; return x; };
  dom.move_elements([&](Particle& e) { e.position = squeeze(e.position); });
  for (auto& x : pts) x = squeeze(x);
  require_legal(dom, pts, k, as);
  const int g = row_map(dom.ownership()).level();
  const auto loads = grid_loads(dom, g);
  dom.rebalance({.threshold = 0.0});
  require_legal(dom, pts, k, as);
  if (as.checking == irr::partitioner::CutsChecking::greedy) {  // ListCuts + one all_gatherv == the serial cuts
    const auto& m = row_map(dom.ownership());
    const auto expect = irr::rows::greedy_check(m.grid(), as.bound(), irr::rows::paper_cuts<double>(loads, static_cast<std::size_t>(world.size())));
    REQUIRE(std::vector<std::size_t>(m.cuts().begin(), m.cuts().end()) == expect);
  } else {
    const auto& m = row_map(dom.ownership());
    const auto expect = irr::rows::optimal_legal_cuts<double>(m.grid(), as.bound(), loads, static_cast<std::size_t>(world.size()));
    REQUIRE(std::vector<std::size_t>(m.cuts().begin(), m.cuts().end()) == expect.separators);
  }
}

}  // namespace

TEST_CASE("Bounded Neighbours through a domain: conservation, owners, the NS bound", "[rows][domain]") {
  mpi::communicator world;
  run(world, BN{.ns = 2}, BN{.ns = 2});
  run(world, BN{.ns = 4, .level = 5, .stencil = irr::rows::Stencil::eight, .toroidal = true},
      BN{.ns = 4, .level = 5, .stencil = irr::rows::Stencil::eight, .toroidal = true});
  run(world, BN{.ns = 3, .checking = irr::partitioner::CutsChecking::optimal},
      BN{.ns = 3, .checking = irr::partitioner::CutsChecking::optimal});
  // A grid finer than the sparse leaves: coarse leaves straddle runs and are held whole.
  run(world, BN{.ns = 8, .level = 7, .stencil = irr::rows::Stencil::eight}, BN{.ns = 8, .level = 7, .stencil = irr::rows::Stencil::eight}, true);
}

TEST_CASE("Bounded Neighbours by name: BN-2, BN-4, BN-4-8-T", "[rows][registry]") {
  mpi::communicator world;
  run(world, irr::partitioner::ByName{"BN-2"}, BN{.ns = 2});
  run(world, irr::partitioner::ByName{"bn-4", 4}, BN{.ns = 4, .level = 4});
  run(world, irr::partitioner::ByName{"BN-4-8-T"}, BN{.ns = 4, .stencil = irr::rows::Stencil::eight, .toroidal = true});
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, irr::curve::Hilbert<2>, irr::load::Constant,
                                      irr::partitioner::ByName>;
  irr::DomainOptions<2, irr::load::Constant, irr::partitioner::ByName> bad;
  bad.partitioner.name = "BN-x";
  REQUIRE_THROWS_AS(Domain(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(4), bad), irr::collective_error);
}

TEST_CASE("Bounded Neighbours: one rank's bad input fails every rank alike", "[rows][errors]") {
  mpi::communicator world;
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, irr::curve::Hilbert<2>, irr::load::ElementCount, BN>;
  const irr::Box<2> box{{0, 0}, {1, 1}};
  const int last = world.size() - 1;
  // NS < 2 on the last rank only.
  irr::DomainOptions<2, irr::load::ElementCount, BN> opt;
  opt.partitioner.ns = world.rank() == last ? 1 : 2;
  try {
    Domain d(world, box, irr::refine::max_elements(4), opt);
    FAIL("NS = 1 accepted");
  } catch (const irr::collective_error& e) {
    REQUIRE(e.failing_rank() == last);
    REQUIRE(std::string(e.what()).find("NS must be at least 2") != std::string::npos);
  }
  // More ranks than a 2 x 2 grid hosts with NS = 2 (at most 3 parts): the message says so.
  opt.partitioner = BN{.ns = 2, .level = 1};
  if (world.size() > 3) {
    REQUIRE_THROWS_WITH(Domain(world, box, irr::refine::max_elements(4), opt),
                        Catch::Contains("largest feasible number of parts is 3"));
  } else {
    REQUIRE_NOTHROW(Domain(world, box, irr::refine::max_elements(4), opt));
  }
  // A negative load on the last rank: every rank throws the same collective_error, and a
  // domain built before is unchanged by a failed partition.
  Domain dom(world, box, irr::refine::max_elements(8), {});
  auto pts = clustered<2>(300, 5);
  insert_and_build(dom, pts, 1);
  const auto before = global_checksum(world, checksum<Particle>(dom.local_elements()));
  const auto map_before = dom.ownership();
  irr::LocalLeaves<irr::curve::Hilbert<2>> leaves;
  std::vector<double> loads;
  for (std::size_t i = 0; i < dom.local_leaf_count(); ++i) {
    const auto leaf = dom.leaf(i);
    leaves.push_back(leaf.interval.start, leaf.cell.level, leaf.count);
    loads.push_back(world.rank() == last && i == 0 ? -1.0 : leaf.load);
  }
  if (world.rank() == last && loads.empty()) {
    leaves.push_back(0, irr::curve::Hilbert<2>::max_level, 0);
    loads.push_back(-1.0);
  }
  const irr::LeafChain<irr::curve::Hilbert<2>> chain{leaves, loads};
  try {
    (void)BN{}.partition<irr::curve::Hilbert<2>>(world, chain, &dom.ownership());
    FAIL("a negative load accepted");
  } catch (const irr::collective_error& e) {
    REQUIRE(e.failing_rank() == last);
    REQUIRE(std::string(e.what()).find("non-negative") != std::string::npos);
  }
  REQUIRE(dom.ownership() == map_before);
  REQUIRE(global_checksum(world, checksum<Particle>(dom.local_elements())) == before);
  dom.rebalance({.threshold = 0.0});
  REQUIRE(global_checksum(world, checksum<Particle>(dom.local_elements())) == before);
}
