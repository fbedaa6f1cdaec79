// Every partitioner through one domain: the same tree as the sequential oracle, owner_of naming
// the rank that holds each element, conservation, and moves that send only what changed holder
// — for the SFC segments, the rectangles and the runtime registry, in 2D and 3D.
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/distributed/partitioners/rectangular.hpp>
#include <irregular/distributed/partitioners/registry.hpp>
#include <irregular/domain.hpp>

#include <boost/mpi/collectives.hpp>

#include "domain_support.hpp"
#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;
using namespace domain_support;

namespace {

template <int D>
struct Point {
  std::array<double, D> position;
  std::uint64_t id;
};

// Leaves equal the sequential tree (sorted by start, whatever rank holds them); every local
// element lies in its leaf and owner_of names this rank; every leaf's holder is leaf_owner;
// the elements are the input's (count and checksum).
template <class Domain>
void require_exact(Domain& d, const std::vector<std::array<double, Domain::dim>>& where,
                   std::size_t k) {
  constexpr int D = Domain::dim;
  const auto& world = d.comm();
  require_tree_and_leaf_owners(d, where, k);
  int bad = 0;
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
    auto leaf = d.leaf(i);
    if (leaf.elements.size() != leaf.count) ++bad;
    for (const auto& e : leaf.elements) {
      if (!leaf.interval.contains(d.key_of(e))) ++bad;
      if (d.owner_of(e.position) != world.rank()) ++bad;  // owner queries name the holder
    }
    if (d.owner_of(leaf.cell) != world.rank()) ++bad;
  }
  int total_bad = 0;
  mpi::all_reduce(world, bad, total_bad, std::plus<int>());
  REQUIRE(total_bad == 0);
  std::vector<Point<D>> all_in;
  for (std::size_t i = 0; i < where.size(); ++i) all_in.push_back({where[i], i});
  REQUIRE(global_checksum(world, checksum<Point<D>>(d.local_elements())) ==
          checksum<Point<D>>(all_in));
}

// Leaves held whole across part boundaries (a grid finer than the sparse leaves makes them).
template <class Domain>
std::uint64_t whole_held_leaves(const Domain& d) {
  std::uint64_t mine = 0, all = 0;
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
    mine += d.ownership().splits(d.local_tree().cell(i));
  mpi::all_reduce(d.comm(), mine, all, std::plus<std::uint64_t>());
  return all;
}

template <int D, class Curve, class P>
void run_partitioner(const mpi::communicator& world, P policy, bool expect_whole_held = false,
                     int from_ranks = 2) {
  using Domain =
      irr::IrregularDomain<Point<D>, irr::stencil::Moore<D>, Curve, irr::load::ElementCount, P>;
  const std::size_t n = D == 2 ? 1500 : 2000, k = expect_whole_held ? 40 : 8;
  CAPTURE(D, expect_whole_held);
  irr::Box<D> box;
  for (int d = 0; d < D; ++d) {
    box.lo[d] = 0;
    box.hi[d] = 1;
  }
  irr::DomainOptions<D, irr::load::ElementCount, P> opt;
  opt.partitioner = policy;
  Domain dom(world, box, irr::refine::max_elements(k), opt);
  auto pts = clustered<D>(n, 2024);
  insert_and_build(dom, pts, 1);
  REQUIRE(dom.ownership().parts() == world.size());
  require_exact(dom, pts, k);
  if (expect_whole_held && world.size() >= from_ranks) REQUIRE(whole_held_leaves(dom) > 0);

  // Nothing moves: nothing travels.
  dom.move_elements([](Point<D>&) {});
  REQUIRE(dom.last_migration().elements == 0);
  REQUIRE(dom.last_migration().bytes == 0);
  require_exact(dom, pts, k);

  // A few elements move: those that change holder travel, and little else.
  std::uint64_t changed = 0;
  auto nudge = [](std::array<double, D> x, std::uint64_t id) {
    if (id % 20 == 0) x[0] = std::min(1.0, x[0] + 0.03);
    return x;
  };
  for (const auto& e : dom.local_elements())
    if (dom.owner_of(nudge(e.position, e.id)) != world.rank()) ++changed;
  std::uint64_t changed_all = 0;
  mpi::all_reduce(world, changed, changed_all, std::plus<std::uint64_t>());
  dom.move_elements([&](Point<D>& e) { e.position = nudge(e.position, e.id); });
  for (std::size_t i = 0; i < n; ++i) pts[i] = nudge(pts[i], i);
  require_exact(dom, pts, k);
  REQUIRE(dom.last_migration().elements >= changed_all);
  REQUIRE(dom.last_migration().elements <= changed_all + n / 20);

  // A large move (everything squeezed to the left) and a rebalance: still exact.
  auto squeeze = [](std::array<double, D> x) {
    x[0] *= 0.6;
    return x;
  };
  dom.move_elements([&](Point<D>& e) { e.position = squeeze(e.position); });
  for (auto& x : pts) x = squeeze(x);
  require_exact(dom, pts, k);
  dom.rebalance({.threshold = 0.0});
  require_exact(dom, pts, k);

  // The map is replicated: rank 0's copy, serialized, answers as every rank's own.
  std::string bytes;
  if (world.rank() == 0) {
    std::ostringstream os;
    boost::archive::binary_oarchive oa(os);
    oa << dom.ownership();
    bytes = os.str();
  }
  mpi::broadcast(world, bytes, 0);
  typename Domain::map_type copy;
  {
    std::istringstream is(bytes);
    boost::archive::binary_iarchive ia(is);
    ia >> copy;
  }
  int bad = 0;
  for (const auto& e : dom.local_elements())
    if (copy.owner(dom.key_of(e)) != world.rank()) ++bad;
  for (int r = 0; r < world.size(); ++r)
    for (bool periodic : {false, true}) {
      irr::Periodicity<D> per{};
      per.fill(periodic);
      if (copy.neighbour_ranks(r, per) != dom.ownership().neighbour_ranks(r, per)) ++bad;
      for (int s : dom.ownership().neighbour_ranks(r, per)) {  // symmetric
        const auto back = dom.ownership().neighbour_ranks(s, per);
        if (std::find(back.begin(), back.end(), r) == back.end()) ++bad;
      }
    }
  int total_bad = 0;
  mpi::all_reduce(world, bad, total_bad, std::plus<int>());
  REQUIRE(total_bad == 0);
}

// Runs `call` on every rank; requires that no rank threw (a throw on some ranks only is the
// defect) and returns its map.
template <class Call>
auto on_every_rank(const mpi::communicator& world, Call&& call) {
  std::optional<decltype(call())> got;
  std::string what;
  try {
    got.emplace(call());
  } catch (const std::exception& e) {
    what = e.what();
  }
  int failed = 0;
  mpi::all_reduce(world, int(!got), failed, std::plus<int>());
  CAPTURE(what);
  REQUIRE(failed == 0);
  return std::move(*got);
}

// The segment map of `any`, required to be one and the same on every rank.
template <class Curve>
std::vector<typename Curve::index_type> replicated_splitters(
    const mpi::communicator& world, const irr::AnyOwnershipMap<Curve>& any) {
  const auto* seg = any.template get_if<irr::SegmentMap<Curve>>();
  int missing = 0;
  mpi::all_reduce(world, int(seg == nullptr), missing, std::plus<int>());
  REQUIRE(missing == 0);
  auto root = seg->splitters();
  mpi::broadcast(world, root, 0);
  int differ = 0;
  mpi::all_reduce(world, int(root != seg->splitters()), differ, std::plus<int>());
  REQUIRE(differ == 0);
  return root;
}

// Defect f: an SFC partitioner while a grid map (rectangles, rows) is in force, so the leaves do
// not lie in rank order. Its map must be the one the same leaves give from an SFC start (same
// splitters), with and without capacities, on every rank alike; a forced rebalance lands on it
// with the elements conserved and the leaves in rank order.
template <int D, class Curve>
void sfc_after_grid_map(const mpi::communicator& world, const std::string& sfc,
                        const std::string& grid) {
  using P = irr::partitioner::ByName;
  using Domain =
      irr::IrregularDomain<Point<D>, irr::stencil::Moore<D>, Curve, irr::load::ElementCount, P>;
  using Chain = irr::LeafChain<Curve>;
  CAPTURE(D, sfc, grid);
  const std::size_t n = D == 2 ? 1200 : 1500, k = 8;
  irr::Box<D> box;
  for (int d = 0; d < D; ++d) {
    box.lo[d] = 0;
    box.hi[d] = 1;
  }
  irr::DomainOptions<D, irr::load::ElementCount, P> opt;
  opt.partitioner = P{sfc};
  const auto pts = clustered<D>(n, 2025);
  Domain moved(world, box, irr::refine::max_elements(k), opt),
      start(world, box, irr::refine::max_elements(k), opt);
  insert_and_build(moved, pts, 1);
  insert_and_build(start, pts, 1);
  moved.apply_map(P{grid}.template partition<Curve>(
      world, Chain{moved.local_tree(), moved.local_loads()}, nullptr));
  REQUIRE(moved.ownership().template get_if<irr::SegmentMap<Curve>>() == nullptr);
  require_exact(moved, pts, k);

  // The partitioner itself, without and with capacities (a domain refuses capacities unless its
  // map type is a segment map, below).
  std::vector<double> caps;
  for (int r = 0; r < world.size(); ++r) caps.push_back(1.0 + r % 3);
  for (bool with_caps : {false, true}) {
    CAPTURE(with_caps);
    const std::span<const double> c =
        with_caps ? std::span<const double>(caps) : std::span<const double>();
    const auto got = on_every_rank(world, [&] {
      return P{sfc}.template partition<Curve>(
          world, Chain{moved.local_tree(), moved.local_loads(), c}, &moved.ownership());
    });
    const auto want = on_every_rank(world, [&] {
      return P{sfc}.template partition<Curve>(
          world, Chain{start.local_tree(), start.local_loads(), c}, &start.ownership());
    });
    REQUIRE(replicated_splitters(world, got) == replicated_splitters(world, want));
  }
  require_agreed_failure(moved, 0, "need a segment map",
                         [&] { moved.rebalance({.threshold = 0.0, .capacities = caps}); });

  // The forced rebalance: the SFC map of these leaves, every leaf on its segment's rank (one
  // rank is never unbalanced, so it keeps the grid map).
  const bool remapped =
      on_every_rank(world, [&] { return moved.rebalance({.threshold = 0.0}).remapped; });
  require_exact(moved, pts, k);
  REQUIRE(remapped == (world.size() > 1));
  if (!remapped) return;
  (void)start.rebalance({.threshold = 0.0});
  const auto spl = replicated_splitters(world, moved.ownership());
  REQUIRE(spl == replicated_splitters(world, start.ownership()));
  const auto& t = moved.local_tree();
  const auto me = static_cast<std::size_t>(world.rank());
  int outside = 0;
  for (std::size_t i = 0; i < t.size(); ++i)
    outside += t.starts()[i] < spl[me] || t.starts()[i] >= spl[me + 1];
  int outside_all = 0;
  mpi::all_reduce(world, outside, outside_all, std::plus<int>());
  REQUIRE(outside_all == 0);
  require_exact(moved, pts, k);  // the tree, the owners, the count and checksum of the elements
}

}  // namespace

TEST_CASE("SFC segments: exact owners, conservation, only changed holders travel",
          "[domain][maps]") {
  mpi::communicator world;
  run_partitioner<2, irr::curve::Hilbert<2>>(world, irr::partitioner::SfcBlocking{});
  run_partitioner<3, irr::curve::Morton<3>>(world, irr::partitioner::SfcBlocking{});
}

TEST_CASE("rectangles: exact owners, conservation, only changed holders travel (2D and 3D)",
          "[domain][maps][rect]") {
  mpi::communicator world;
  run_partitioner<2, irr::curve::Hilbert<2>>(
      world, irr::partitioner::Rectangular{.algorithm = "JAG-M-HEUR-PROBE"});
  run_partitioner<2, irr::curve::Morton<2>>(
      world, irr::partitioner::Rectangular{.algorithm = "HIER-RB", .level = 3});
  run_partitioner<3, irr::curve::Hilbert<3>>(
      world, irr::partitioner::Rectangular{.algorithm = "HIER-RELAXED"});
  run_partitioner<3, irr::curve::Morton<3>>(
      world, irr::partitioner::Rectangular{.algorithm = "JAG-M-HEUR", .level = 2});
  // Grids finer than the sparse leaves: coarse leaves straddle rectangles and are held whole.
  run_partitioner<2, irr::curve::Hilbert<2>>(
      world, irr::partitioner::Rectangular{.algorithm = "JAG-M-HEUR-PROBE", .level = 6}, true,
      3);  // 2 ranks: the cut misses them
  run_partitioner<3, irr::curve::Morton<3>>(
      world, irr::partitioner::Rectangular{.algorithm = "HIER-RB", .level = 4}, true);
}

TEST_CASE("partitioners chosen by name at run time", "[domain][maps][registry]") {
  mpi::communicator world;
  run_partitioner<2, irr::curve::Hilbert<2>>(world, irr::partitioner::ByName{"sfc"});
  run_partitioner<2, irr::curve::Hilbert<2>>(world, irr::partitioner::ByName{"SFC-GREEDY"});
  run_partitioner<2, irr::curve::Morton<2>>(world, irr::partitioner::ByName{"hier-rb"});
  run_partitioner<3, irr::curve::Morton<3>>(world, irr::partitioner::ByName{"JAG-M-HEUR-PROBE"});
  using Domain = irr::IrregularDomain<Point<2>, irr::stencil::Moore<2>, irr::curve::Hilbert<2>,
                                      irr::load::Constant, irr::partitioner::ByName>;
  irr::DomainOptions<2, irr::load::Constant, irr::partitioner::ByName> bad;
  bad.partitioner.name = "ZOLTAN-RCB";
  REQUIRE_THROWS_AS(Domain(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(4), bad),
                    irr::collective_error);
}

TEST_CASE("rectangular grids are bounded by cell count, not by level",
          "[domain][maps][rect][errors]") {
  mpi::communicator world;
  using P = irr::partitioner::Rectangular;
  using Domain = irr::IrregularDomain<Point<3>, irr::stencil::Moore<3>, irr::curve::Morton<3>,
                                      irr::load::Constant, P>;
  irr::DomainOptions<3, irr::load::Constant, P> opt;
  irr::Box<3> box{{0, 0, 0}, {1, 1, 1}};
  opt.partitioner.level = 11;  // 2^33 cells: more than an int can count and than memory allows
  REQUIRE_THROWS_AS(Domain(world, box, irr::refine::max_elements(4), opt), irr::collective_error);
  opt.partitioner.level = 40;  // beyond the curve
  REQUIRE_THROWS_AS(Domain(world, box, irr::refine::max_elements(4), opt), irr::collective_error);
  // The automatic level gives at least cells_per_part cells per part.
  opt.partitioner.level = -1;
  const int g = opt.partitioner.grid_level<irr::curve::Morton<3>>(world.size());
  REQUIRE(P::grid_cells<irr::curve::Morton<3>>(g) >=
          16u * static_cast<std::uint64_t>(world.size()));
  REQUIRE((g == 0 || P::grid_cells<irr::curve::Morton<3>>(g - 1) <
                         16u * static_cast<std::uint64_t>(world.size())));
  REQUIRE_NOTHROW(Domain(world, box, irr::refine::max_elements(4), opt));
}

TEST_CASE("the SFC family after a grid map: the SFC start's map on every rank",
          "[domain][maps][registry][sfc-after-grid]") {
  mpi::communicator world;
  for (const char* sfc : {"SFC", "SFC-GREEDY"}) {
    sfc_after_grid_map<2, irr::curve::Morton<2>>(world, sfc, "HIER-RB");
    sfc_after_grid_map<2, irr::curve::Hilbert<2>>(world, sfc, "BN-2");
  }
  sfc_after_grid_map<3, irr::curve::Morton<3>>(world, "SFC", "JAG-M-HEUR-PROBE");
}
