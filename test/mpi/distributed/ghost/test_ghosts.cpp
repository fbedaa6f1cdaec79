// The ghost layer against brute force: request/answer and informed fault prevention collect
// exactly the remote leaves that local leaves read (gather the global tree, apply the stencil,
// keep what is remote), fault prevention a superset whose reported surplus is the difference;
// contact and level restrictions; values, exchange and accumulate; Jacobi sweeps bitwise equal to
// the sequential computation at every rank count and with every strategy; stale and failing calls.
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>
#include <irregular/distributed/partitioners/registry.hpp>
#include <irregular/domain.hpp>

#include <boost/mpi/collectives.hpp>

#include "domain_support.hpp"
#include "ghost_oracle.hpp"
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;
using namespace domain_support;
using namespace ghost_oracle;

namespace {

template <int D>
struct Body {
  std::array<double, D> position{};
  std::uint64_t id = 0;
  double value = 0;
  double out = 0;  // results of a sweep (read by nobody)
};

// Reads coarser leaves only, at the Moore offsets: exercises the level flags.
struct CoarserOnly {
  static constexpr int dim = 2;
  static constexpr auto offsets = irr::stencil::Moore<2>::offsets;
  static constexpr auto inverse_offsets = irr::stencil::Moore<2>::inverse_offsets;
  static constexpr bool same_level = false, coarser = true, finer = false;
};
// Reads same-level and finer leaves one cell upwind (a user offset list with flags).
struct UpwindFiner {
  static constexpr int dim = 2;
  static constexpr std::array<std::array<int, 2>, 2> offsets{{{1, 0}, {0, 1}}};
  static constexpr std::array<std::array<int, 2>, 2> inverse_offsets{{{-1, 0}, {0, -1}}};
  static constexpr bool same_level = true, coarser = false, finer = true;
};

const char* const strategies[] = {"RA", "FP", "IFP"};

int count_true(const mpi::communicator& w, bool ok) {
  int bad = ok ? 0 : 1, total = 0;
  mpi::all_reduce(w, bad, total, std::plus<int>());
  return total;
}

std::uint64_t sum(const mpi::communicator& w, std::uint64_t x) {
  std::uint64_t t = 0;
  mpi::all_reduce(w, x, t, std::plus<std::uint64_t>());
  return t;
}

template <int D>
std::vector<Body<D>> bodies(std::size_t n, unsigned seed, const mpi::communicator& w) {
  const auto pts = clustered<D>(n, seed);
  std::vector<Body<D>> mine_;
  for (std::size_t i = 0; i < n; ++i)
    if (mine(i, n, 1, w)) mine_.push_back({pts[i], i, static_cast<double>(i % 97) / 97.0});
  return mine_;
}

// Every ghost's elements are the owner's elements of that leaf (ids compared with a global gather).
template <class Domain>
bool ghost_elements_match(const Domain& d) {
  std::vector<std::uint64_t> keys, ids;
  for (const auto& e : d.local_elements()) {
    keys.push_back(static_cast<std::uint64_t>(d.key_of(e)));
    ids.push_back(e.id);
  }
  std::vector<std::vector<std::uint64_t>> all_keys, all_ids;
  mpi::all_gather(d.comm(), keys, all_keys);
  mpi::all_gather(d.comm(), ids, all_ids);
  std::multimap<std::uint64_t, std::uint64_t> by_key;
  for (std::size_t r = 0; r < all_keys.size(); ++r)
    for (std::size_t i = 0; i < all_keys[r].size(); ++i)
      by_key.emplace(all_keys[r][i], all_ids[r][i]);
  for (std::size_t g = 0; g < d.ghosts().size(); ++g) {
    const auto leaf = d.ghost(g);
    std::vector<std::uint64_t> want, got;
    for (auto it = by_key.lower_bound(static_cast<std::uint64_t>(leaf.interval.start));
         it != by_key.end() && it->first < static_cast<std::uint64_t>(leaf.interval.end); ++it)
      want.push_back(it->second);
    for (const auto& e : leaf.elements) got.push_back(e.id);
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    if (want != got || leaf.count != got.size()) return false;
  }
  return true;
}

// Checks every strategy against the oracle on one built domain, for one stencil (and the levels
// of the leaves that read).
template <class S, class Domain>
void check_strategies(Domain& d, irr::Contact contact = irr::Contact::stencil,
                      irr::LevelRange range = irr::LevelRange::all(),
                      irr::LevelRange readers = irr::LevelRange::all()) {
  const auto& w = d.comm();
  const auto want = needed<Domain, S>(d, contact, range, readers);
  // The instance is not trivial: with several ranks some leaves read remote ones.
  if (readers == irr::LevelRange::all()) REQUIRE((w.size() == 1) == (sum(w, want.size()) == 0));
  for (const char* name : strategies) {
    CAPTURE(name, static_cast<int>(contact), range.min, range.max, readers.min, readers.max);
    irr::GhostOptions opt{range, contact};
    opt.readers = readers;
    const auto& stats = d.template collect_ghosts<S>(opt, irr::ghost::ByName(name));
    const auto got = ghost_set(d);
    const std::string n = name;
    if (n == "IFP" || (n == "RA" && contact == irr::Contact::stencil)) {
      REQUIRE(count_true(w, got == want) == 0);
      // Under touching reads, with every level reading, the map decides: each ghost travels
      // once, with no extension record before it.
      if (n == "IFP" && contact != irr::Contact::stencil && readers == irr::LevelRange::all() &&
          irr::detail::reads_every_touching_leaf<S>()) {
        REQUIRE(sum(w, stats.extension.bytes) == 0);
        REQUIRE(sum(w, stats.leaves_sent) == sum(w, want.size()));
      }
    } else {  // a safe superset; the surplus is exactly what the strategy reports as useless
      const bool superset = std::includes(got.begin(), got.end(), want.begin(), want.end());
      REQUIRE(count_true(w, superset) == 0);
      REQUIRE(sum(w, stats.leaves_useless) == sum(w, got.size() - want.size()));
    }
    bool levels_ok = true;
    for (const auto& gh : got) levels_ok = levels_ok && range.contains(std::get<1>(gh));
    REQUIRE(count_true(w, levels_ok) == 0);
    REQUIRE(count_true(w, ghost_elements_match(d)) == 0);
    REQUIRE(d.ghosts_current());
  }
}

const irr::Box<2> unit2{{0, 0}, {1, 1}};
const irr::Box<3> unit3{{0, 0, 0}, {1, 1, 1}};

// The 2D Morton domain of the tests below: 900 clustered bodies, at most 4 per leaf, built.
using Moore2D = irr::IrregularDomain<Body<2>, irr::stencil::Moore<2>, irr::curve::Morton<2>>;
void fill(Moore2D& d, unsigned seed) {
  d.insert(bodies<2>(900, seed, d.comm()));
  d.build();
}

}  // namespace

TEST_CASE("ghost sets equal brute force: 2D Morton, Moore stencil, level flags, contact, levels",
          "[ghost]") {
  mpi::communicator w;
  Moore2D d(w, unit2, irr::refine::max_elements(4));
  fill(d, 3);
  check_strategies<irr::stencil::Moore<2>>(d);
  check_strategies<CoarserOnly>(d);
  check_strategies<UpwindFiner>(d);
  for (auto c : {irr::Contact::face, irr::Contact::corner})
    check_strategies<irr::stencil::Moore<2>>(d, c);
  // Level-restricted: one level that occurs, and a range.
  const auto g = gather_leaves(d);
  const int deepest = *std::max_element(g.levels.begin(), g.levels.end());
  check_strategies<irr::stencil::Moore<2>>(d, irr::Contact::stencil,
                                           irr::LevelRange::only(deepest - 1));
  check_strategies<irr::stencil::Moore<2>>(d, irr::Contact::stencil,
                                           irr::LevelRange{deepest - 3, deepest - 2});
}

TEST_CASE("ghost sets equal brute force: periodic Hilbert (von Neumann) and periodic 3D Morton",
          "[ghost]") {
  mpi::communicator w;
  {
    using Domain =
        irr::IrregularDomain<Body<2>, irr::stencil::VonNeumann<2, 2>, irr::curve::Hilbert<2>>;
    Domain d(w, unit2, irr::refine::max_elements(5), {.periodic = {true, true}});
    d.insert(bodies<2>(800, 7, w));
    d.build();
    check_strategies<irr::stencil::VonNeumann<2, 2>>(d);
    check_strategies<irr::stencil::VonNeumann<2, 2>>(d, irr::Contact::face);
    // Touching reads on a periodic Hilbert map: the owners decide alone (no extension).
    check_strategies<irr::stencil::Moore<2>>(d, irr::Contact::corner);
    check_strategies<irr::stencil::Moore<2>>(d, irr::Contact::face);
  }
  {
    using Domain = irr::IrregularDomain<Body<2>, irr::stencil::Moore<2>, irr::curve::Peano<2>>;
    Domain d(w, unit2, irr::refine::max_elements(4), {.periodic = {false, true}});
    d.insert(bodies<2>(700, 5, w));
    d.build();
    for (auto c : {irr::Contact::face, irr::Contact::corner})
      check_strategies<irr::stencil::Moore<2>>(d, c);
  }
  {
    using Domain = irr::IrregularDomain<Body<3>, irr::stencil::Moore<3>, irr::curve::Morton<3>>;
    Domain d(w, unit3, irr::refine::max_elements(6), {.periodic = {true, false, false}});
    d.insert(bodies<3>(700, 11, w));
    d.build();
    check_strategies<irr::stencil::Moore<3>>(d);
    for (auto c : {irr::Contact::face, irr::Contact::edge, irr::Contact::corner})
      check_strategies<irr::stencil::Moore<3>>(d, c);
    // Ghost levels restricted under touching reads.
    const auto g = gather_leaves(d);
    const int deepest = *std::max_element(g.levels.begin(), g.levels.end());
    check_strategies<irr::stencil::Moore<3>>(d, irr::Contact::corner,
                                             irr::LevelRange{deepest - 1, deepest});
  }
}

namespace {

// The (owner, reader) rank pairs where the reader reads some leaf of the owner, over all ranks.
std::uint64_t reading_pairs(const mpi::communicator& w, const std::vector<Ghost>& want) {
  std::set<int> owners;
  for (const auto& g : want) owners.insert(std::get<2>(g));
  return sum(w, owners.size());
}

}  // namespace

TEST_CASE("one message per reading partner: prevention carries the values, request/answer two",
          "[ghost][messages]") {
  mpi::communicator w;
  Moore2D d(w, unit2, irr::refine::max_elements(4));
  fill(d, 13);
  const auto pairs = reading_pairs(w, needed(d));
  REQUIRE((w.size() == 1) == (pairs == 0));
  // Twice each: the second informed collection finds its extension cached.
  for (int round = 0; round < 2; ++round)
    for (const char* name : strategies) {
      CAPTURE(name, round);
      const irr::GhostStats s =
          irr::all_reduce_sum(w, d.collect_ghosts({}, irr::ghost::ByName(name)));
      const std::string n = name;
      REQUIRE(s.values.messages == 0);  // raw elements ride with the records
      if (n == "RA") {
        REQUIRE(s.answer.messages == pairs);
        REQUIRE(s.request.messages >= pairs);
      } else if (n == "IFP") {
        REQUIRE(s.prevention.messages == pairs);
        REQUIRE(s.extension.messages <= (round == 0 ? 2 * pairs : 0));
      } else {
        REQUIRE(s.prevention.messages >= pairs);
      }
      REQUIRE(count_true(w, ghost_elements_match(d)) == 0);
    }
}

TEST_CASE("reader levels: only leaves of those levels read; ghosts equal brute force",
          "[ghost][readers]") {
  mpi::communicator w;
  Moore2D d(w, unit2, irr::refine::max_elements(4));
  fill(d, 3);
  const auto g = gather_leaves(d);
  const int lo = *std::min_element(g.levels.begin(), g.levels.end());
  const int hi = *std::max_element(g.levels.begin(), g.levels.end());
  // Fault prevention knows the readers' levels: it sends no more than without them.
  const auto fp_sent = [&](irr::LevelRange readers) {
    irr::GhostOptions opt;
    opt.readers = readers;
    return irr::all_reduce_sum(
               w, d.collect_ghosts<irr::stencil::Moore<2, 2>>(opt, irr::ghost::ByName("FP")))
        .leaves_sent;
  };
  const auto fp_all = fp_sent(irr::LevelRange::all());
  std::uint64_t remote_reads = 0;
  for (int l = lo; l <= hi; ++l) {
    const auto only = irr::LevelRange::only(l);
    remote_reads += sum(w, needed<Moore2D, irr::stencil::Moore<2, 2>>(d, irr::Contact::stencil,
                                                                      irr::LevelRange::all(), only)
                               .size());
    check_strategies<irr::stencil::Moore<2, 2>>(d, irr::Contact::stencil, irr::LevelRange::all(),
                                                only);
    check_strategies<CoarserOnly>(d, irr::Contact::stencil, irr::LevelRange::all(), only);
    check_strategies<UpwindFiner>(d, irr::Contact::stencil, irr::LevelRange::all(), only);
    REQUIRE(fp_sent(only) <= fp_all);
  }
  REQUIRE((w.size() == 1) == (remote_reads == 0));
  check_strategies<irr::stencil::Moore<2>>(d, irr::Contact::stencil, irr::LevelRange::all(),
                                           irr::LevelRange{hi - 2, hi - 1});
}

TEST_CASE(
    "informed fault prevention's cached extension serves only the stencils and readers it covers",
    "[ghost][extension]") {
  mpi::communicator w;
  Moore2D d(w, unit2, irr::refine::max_elements(4));
  fill(d, 5);
  const auto g = gather_leaves(d);
  const int deepest = *std::max_element(g.levels.begin(), g.levels.end());
  // Narrow, then wider at the same generation: the wider one must not reuse the narrow readers.
  check_strategies<irr::stencil::VonNeumann<2, 1>>(d);
  check_strategies<irr::stencil::Moore<2, 2>>(d);
  check_strategies<irr::stencil::VonNeumann<2, 1>>(d);  // covered: served from the cache
  check_strategies<irr::stencil::Moore<2, 2>>(d, irr::Contact::stencil, irr::LevelRange::all(),
                                              irr::LevelRange::only(deepest));
  check_strategies<irr::stencil::Moore<2, 2>>(d);  // all readers again after one level's
}

TEST_CASE("informed fault prevention stays exact across rebalances that renumber the ranks",
          "[ghost][extension][renumber]") {
  // The extension cache names its partners by rank: after a new chain order renumbers them, what
  // rank r was told and heard concerns another process (seed 1000004 of the sequences).
  mpi::communicator w;
  const int p = w.size();
  Moore2D d(w, unit2, irr::refine::max_elements(4));
  fill(d, 7);
  const irr::ghost::ByName kept("IFP");  // one strategy object throughout, as users keep one
  const auto g = gather_leaves(d);
  const int deepest = *std::max_element(g.levels.begin(), g.levels.end());
  auto check = [&](irr::LevelRange readers) {
    CAPTURE(readers.min, readers.max);
    irr::GhostOptions opt;
    opt.readers = readers;
    d.collect_ghosts(opt, kept);
    const auto want = needed(d, irr::Contact::stencil, irr::LevelRange::all(), readers);
    REQUIRE(count_true(d.comm(), ghost_set(d) == want) == 0);
  };
  std::vector<int> reversed(static_cast<std::size_t>(p)), rotated(reversed);
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  for (int r = 0; r < p; ++r) rotated[static_cast<std::size_t>(r)] = (r + 1) % p;
  for (int round = 0; round < 4; ++round) {
    CAPTURE(p, round);
    check(irr::LevelRange::all());
    check(irr::LevelRange{0, deepest - 1});  // a narrower hull: the deepest readers stay told
    // Capacities of a new ratio every round force a remap; the order renumbers the ranks.
    std::vector<double> caps;
    for (int r = 0; r < p; ++r) caps.push_back(r % 2 ? 1.0 : 2.0 + round);
    irr::RebalanceOptions opt{.threshold = 0.0, .capacities = caps};
    opt.order = round % 2 ? rotated : reversed;
    const auto rec = d.rebalance(opt);
    REQUIRE(rec.remapped == (p > 1));
  }
  check(irr::LevelRange{0, deepest - 1});
  check(irr::LevelRange::all());
}

TEST_CASE("ghost sets equal brute force under rectangles (a map without contiguous segments)",
          "[ghost][rect]") {
  mpi::communicator w;
  using Domain = irr::IrregularDomain<Body<2>, irr::stencil::Moore<2>, irr::curve::Morton<2>,
                                      irr::load::Constant, irr::partitioner::ByName>;
  Domain d(w, unit2, irr::refine::max_elements(4),
           {.partitioner = irr::partitioner::ByName{"HIER-RB"}});
  d.insert(bodies<2>(700, 5, w));
  d.build();
  check_strategies<irr::stencil::Moore<2>>(d);
}

namespace {

// One Jacobi-like sweep over leaf sums: each element of leaf L takes
// (sum(L) + sum over the leaves L reads, in curve order) / (1 + number of those leaves).
// Leaf sums add element values in id order, so the order of elements inside a leaf is irrelevant.
double leaf_sum(std::vector<std::pair<std::uint64_t, double>> v) {
  std::sort(v.begin(), v.end());
  double s = 0;
  for (const auto& [id, x] : v) s += x;
  return s;
}

template <class Domain>
std::map<std::uint64_t, double> sweeps_parallel(Domain& d, int sweeps) {
  using C = typename Domain::curve_type;
  irr::LeafNeighbours nb;
  for (int s = 0; s < sweeps; ++s) {
    d.exchange_ghosts();
    const auto& t = d.local_tree();
    std::vector<double> local_sum(t.size()), ghost_sum(d.ghosts().size());
    for (std::size_t i = 0; i < t.size(); ++i) {
      std::vector<std::pair<std::uint64_t, double>> v;
      for (const auto& e : d.leaf(i).elements) v.emplace_back(e.id, e.value);
      local_sum[i] = leaf_sum(v);
    }
    for (std::size_t g = 0; g < d.ghosts().size(); ++g) {
      std::vector<std::pair<std::uint64_t, double>> v;
      for (const auto& e : d.ghost(g).elements) v.emplace_back(e.id, e.value);
      ghost_sum[g] = leaf_sum(v);
    }
    std::vector<double> next(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) {
      d.neighbours(i, nb);
      // Local and ghost neighbours merged in curve order: the sequential order.
      std::vector<std::pair<typename C::index_type, double>> terms;
      for (std::size_t j : nb.local) terms.emplace_back(t.starts()[j], local_sum[j]);
      for (std::size_t g : nb.ghost) terms.emplace_back(d.ghosts().starts()[g], ghost_sum[g]);
      std::sort(terms.begin(), terms.end());
      double acc = local_sum[i];
      for (const auto& [start, x] : terms) acc += x;
      next[i] = acc / static_cast<double>(1 + terms.size());
    }
    for (std::size_t i = 0; i < t.size(); ++i)
      for (auto& e : d.leaf(i).elements) e.value = next[i];
  }
  std::map<std::uint64_t, double> out;
  for (const auto& e : d.local_elements()) out[e.id] = e.value;
  return out;
}

// The same on the gathered tree, by brute force: the sequential answer.
template <class Domain>
std::map<std::uint64_t, double> sweeps_sequential(const Domain& d, int sweeps) {
  using C = typename Domain::curve_type;
  using S = typename Domain::stencil_type;
  const auto g = gather_leaves(d);
  std::vector<std::uint64_t> keys, ids;
  std::vector<double> values;
  for (const auto& e : d.local_elements()) {
    keys.push_back(static_cast<std::uint64_t>(d.key_of(e)));
    ids.push_back(e.id);
    values.push_back(e.value);
  }
  std::vector<std::vector<std::uint64_t>> ak, ai;
  std::vector<std::vector<double>> av;
  mpi::all_gather(d.comm(), keys, ak);
  mpi::all_gather(d.comm(), ids, ai);
  mpi::all_gather(d.comm(), values, av);
  std::vector<std::size_t> order(g.starts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return g.starts[a] < g.starts[b]; });
  const std::size_t n = order.size();
  std::vector<std::uint64_t> start(n);
  std::vector<int> level(n);
  for (std::size_t k = 0; k < n; ++k)
    start[k] = static_cast<std::uint64_t>(g.starts[order[k]]), level[k] = g.levels[order[k]];
  // Elements of each leaf: (id, value).
  std::vector<std::vector<std::pair<std::uint64_t, double>>> members(n);
  for (std::size_t r = 0; r < ak.size(); ++r)
    for (std::size_t i = 0; i < ak[r].size(); ++i) {
      const auto k = static_cast<std::size_t>(
                         std::upper_bound(start.begin(), start.end(), ak[r][i]) - start.begin()) -
                     1;
      members[k].emplace_back(ai[r][i], av[r][i]);
    }
  std::vector<std::vector<std::size_t>> reads_of(n);
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b)
      if (a != b && reads<C, S>(start[a], level[a], start[b], level[b], d.options().periodic))
        reads_of[a].push_back(b);
  for (int s = 0; s < sweeps; ++s) {
    std::vector<double> sums(n), next(n);
    for (std::size_t k = 0; k < n; ++k) sums[k] = leaf_sum(members[k]);
    for (std::size_t a = 0; a < n; ++a) {
      double acc = sums[a];
      for (std::size_t b : reads_of[a]) acc += sums[b];  // b ascending: curve order
      next[a] = acc / static_cast<double>(1 + reads_of[a].size());
    }
    for (std::size_t k = 0; k < n; ++k)
      for (auto& [id, x] : members[k]) x = next[k];
  }
  std::map<std::uint64_t, double> out;
  for (const auto& m : members)
    for (const auto& [id, x] : m) out[id] = x;
  return out;
}

template <class Domain>
void require_sweeps_match(Domain& d, const std::vector<typename Domain::element_type>& initial) {
  const auto& w = d.comm();
  for (const char* name : strategies) {
    CAPTURE(name);
    // Restore the initial values (the sweeps overwrite them).
    std::map<std::uint64_t, double> init;
    for (const auto& e : initial) init[e.id] = e.value;
    std::vector<std::pair<std::uint64_t, double>> mine_v;
    for (const auto& e : initial) mine_v.emplace_back(e.id, e.value);
    std::vector<std::vector<std::pair<std::uint64_t, double>>> all;
    mpi::all_gather(w, mine_v, all);
    std::map<std::uint64_t, double> start;
    for (const auto& v : all)
      for (const auto& [id, x] : v) start[id] = x;
    for (auto& e : d.local_elements()) e.value = start.at(e.id);
    const auto expect = sweeps_sequential(d, 3);
    d.collect_ghosts({}, irr::ghost::ByName(name));
    const auto got = sweeps_parallel(d, 3);
    bool same = true;
    for (const auto& [id, x] : got) {
      const double y = expect.at(id);
      same = same && std::memcmp(&x, &y, sizeof x) == 0;  // bitwise
    }
    REQUIRE(count_true(w, same) == 0);
  }
}

}  // namespace

TEST_CASE("three Jacobi sweeps through ghosts equal the sequential sweeps bitwise",
          "[ghost][jacobi]") {
  mpi::communicator w;
  {
    using Domain = irr::IrregularDomain<Body<2>, irr::stencil::Moore<2>, irr::curve::Morton<2>>;
    Domain d(w, unit2, irr::refine::max_elements(4));
    const auto b = bodies<2>(700, 21, w);
    d.insert(b);
    d.build();
    require_sweeps_match(d, b);
  }
  {
    using Domain =
        irr::IrregularDomain<Body<2>, irr::stencil::VonNeumann<2, 2>, irr::curve::Hilbert<2>>;
    Domain d(w, unit2, irr::refine::max_elements(5), {.periodic = {true, true}});
    const auto b = bodies<2>(600, 23, w);
    d.insert(b);
    d.build();
    require_sweeps_match(d, b);
  }
}

TEST_CASE("exchange delivers new values; accumulate sums ghost contributions on the owners",
          "[ghost]") {
  mpi::communicator w;
  using Domain = irr::IrregularDomain<Body<2>, irr::stencil::Moore<2>, irr::curve::Morton<2>>;
  Domain d(w, unit2, irr::refine::max_elements(4));
  d.insert(bodies<2>(800, 31, w));
  d.build();
  d.collect_ghosts();
  for (auto& e : d.local_elements()) e.value = 3.0 * static_cast<double>(e.id) + 0.5;
  d.exchange_ghosts();
  bool fresh = true;
  for (const auto& e : d.ghost_elements())
    fresh = fresh && e.value == 3.0 * static_cast<double>(e.id) + 0.5;
  REQUIRE(count_true(w, fresh) == 0);

  // Every rank that holds a leaf as a ghost adds 1 to each of its elements.
  for (auto& e : d.local_elements()) e.value = 0;
  for (auto& e : d.ghost_elements()) e.value = 1;
  d.accumulate_ghosts([](Body<2>& mine_e, const Body<2>& c) { mine_e.value += c.value; });
  // Expected: the number of other ranks whose leaves read the leaf (brute force, gathered).
  const auto want = needed(d);
  std::vector<std::uint64_t> mine_starts;
  for (const auto& gh : want) mine_starts.push_back(std::get<0>(gh));
  std::vector<std::vector<std::uint64_t>> all;
  mpi::all_gather(w, mine_starts, all);
  std::map<std::uint64_t, int> readers;
  for (const auto& v : all)
    for (auto s : v) ++readers[s];
  bool sums = true;
  const auto& t = d.local_tree();
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto it = readers.find(static_cast<std::uint64_t>(t.starts()[i]));
    const double expect = it == readers.end() ? 0.0 : it->second;
    for (const auto& e : d.leaf(i).elements) sums = sums && e.value == expect;
  }
  REQUIRE(count_true(w, sums) == 0);
}

TEST_CASE("stale and failing ghost calls fail on every rank, with nothing changed",
          "[ghost][errors]") {
  mpi::communicator w;
  using Domain = irr::IrregularDomain<Body<2>, irr::stencil::Moore<2>, irr::curve::Morton<2>>;
  Domain d(w, unit2, irr::refine::max_elements(4));
  auto expect_failure = [&](auto&& call, const std::string& needle) {
    std::string message;
    bool other = false;
    try {
      call();
    } catch (const irr::collective_error& e) {
      message = e.what();
    } catch (...) {
      other = true;
    }
    CAPTURE(message);
    REQUIRE(count_true(w, !other && message.find(needle) != std::string::npos) == 0);
    std::string root = message;
    mpi::broadcast(w, root, 0);
    REQUIRE(count_true(w, root == message) == 0);
  };
  expect_failure([&] { d.collect_ghosts(); }, "not built");
  d.insert(bodies<2>(800, 41, w));
  d.build();
  expect_failure([&] { d.exchange_ghosts(); }, "collect the ghosts first");
  expect_failure([&] { d.collect_ghosts({.levels = {5, 2}}); }, "level range");
  d.collect_ghosts();
  d.move_elements([](Body<2>& e) { e.position[0] = std::min(0.999, e.position[0] + 0.01); });
  REQUIRE(!d.ghosts_current());
  expect_failure([&] { d.exchange_ghosts(); }, "collect again");
  // A throwing combine on one rank: every rank fails and no element value changes.
  d.collect_ghosts();
  for (auto& e : d.ghost_elements()) e.value = 1;
  double before = 0;
  for (const auto& e : d.local_elements()) before += e.value;
  const int bad = w.size() - 1;
  expect_failure(
      [&] {
        d.accumulate_ghosts([&](Body<2>& m, const Body<2>& c) {
          if (w.rank() == bad) throw std::runtime_error("combine failed");
          m.value += c.value;
        });
      },
      w.size() > 1 ? "combine failed" : "");
  double after = 0;
  for (const auto& e : d.local_elements()) after += e.value;
  REQUIRE(count_true(w, before == after || w.size() == 1) == 0);
}

TEST_CASE("statistics: one message per partner and phase, the extension travels once",
          "[ghost][stats]") {
  mpi::communicator w;
  using Domain = irr::IrregularDomain<Body<2>, irr::stencil::Moore<2>, irr::curve::Morton<2>>;
  Domain d(w, unit2, irr::refine::max_elements(4));
  d.insert(bodies<2>(900, 51, w));
  d.build();
  const auto ra = d.collect_ghosts({}, irr::ghost::RequestAnswer{});
  // Request/answer: one request message to every owner asked, one answer back from each.
  std::set<int> owners;
  for (auto o : d.ghosts().owners()) owners.insert(o);
  REQUIRE(count_true(w, ra.request.messages == owners.size()) == 0);
  const auto first = d.collect_ghosts({}, irr::ghost::InformedFaultPrevention{});
  const auto again = d.collect_ghosts({}, irr::ghost::InformedFaultPrevention{});
  REQUIRE(count_true(w, again.extension.messages == 0 && again.extension_records == 0) == 0);
  REQUIRE(count_true(w, again.prevention == first.prevention) == 0);
  // Prevention: at most one message per partner that receives ghosts.
  REQUIRE(count_true(w, first.prevention.messages == d.ghosts().send_ranks().size()) == 0);
  // After a small move only the difference of the extension travels.
  d.move_elements([](Body<2>& e) { e.position[1] = std::min(0.999, e.position[1] + 0.002); });
  const auto moved = d.collect_ghosts({}, irr::ghost::InformedFaultPrevention{});
  REQUIRE(sum(w, moved.extension_records) <=
          sum(w, first.extension_records) + sum(w, first.extension_records));
  REQUIRE(count_true(w, ghost_set(d) == needed(d)) == 0);
}

TEST_CASE("request/answer sweep: overlapped leaves give what a collection and a loop give",
          "[ghost][sweep]") {
  mpi::communicator w;
  using Domain = irr::IrregularDomain<Body<2>, irr::stencil::Moore<2>, irr::curve::Morton<2>>;
  Domain d(w, unit2, irr::refine::max_elements(4));
  d.insert(bodies<2>(900, 61, w));
  d.build();
  // out = the number of elements this leaf reads (own and neighbours), in every element.
  auto f = [&d](typename Domain::Leaf leaf, const irr::LeafNeighbours& nb) {
    double n = static_cast<double>(leaf.elements.size());
    for (auto j : nb.local) n += static_cast<double>(d.leaf(j).elements.size());
    for (auto g : nb.ghost) n += static_cast<double>(d.ghost(g).elements.size());
    for (auto& e : leaf.elements) e.out = n;
  };
  const auto stats = d.sweep(f, {.contact = irr::Contact::corner});
  std::map<std::uint64_t, double> swept;
  for (const auto& e : d.local_elements()) swept[e.id] = e.out;
  REQUIRE(count_true(w, ghost_set(d) == needed(d)) == 0);  // the layer stays behind, exact
  REQUIRE(count_true(w, w.size() == 1 || stats.request.messages > 0) == 0);
  d.collect_ghosts({.contact = irr::Contact::corner}, irr::ghost::RequestAnswer{});
  irr::LeafNeighbours nb;
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
    d.neighbours(i, nb, irr::Contact::corner);
    f(d.leaf(i), nb);
  }
  bool same = true;
  for (const auto& e : d.local_elements()) same = same && swept.at(e.id) == e.out;
  REQUIRE(count_true(w, same) == 0);
  // A throwing f on one rank: every rank throws the same error, elements restored.
  for (auto& e : d.local_elements()) e.out = -1;
  const int bad = w.size() - 1;
  std::string message;
  try {
    d.sweep([&](typename Domain::Leaf leaf, const irr::LeafNeighbours&) {
      for (auto& e : leaf.elements) e.out = 7;
      if (w.rank() == bad && leaf.id + 1 == d.local_leaf_count())
        throw std::runtime_error("leaf failed");
    });
  } catch (const irr::collective_error& e) {
    message = e.what();
  }
  REQUIRE(count_true(w, message.find("leaf failed") != std::string::npos ||
                            d.local_leaf_count() == 0) == 0);
  bool restored = true;
  for (const auto& e : d.local_elements()) restored = restored && e.out == -1;
  REQUIRE(count_true(w, restored) == 0);
}
