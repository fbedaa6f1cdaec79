// A randomized differential test of IrregularDomain: seeded sequences of insert, build,
// move_elements and rebalance (with injected one-rank failures: invalid elements, throwing or
// invalid updates, bad thresholds) on several domain types (SFC segments optimal/greedy,
// rectangles of several algorithms and grid levels; Morton, Hilbert and Peano; 2D and 3D).
// After every operation the distributed state is compared with a replicated sequential oracle:
// the global leaves equal HTree::build over the built elements; count and checksum are
// conserved; segment maps have the range property; every leaf and element is where the
// ownership map says; a failed operation changes nothing and fails on every rank alike.
//
// Environment: IRREGULAR_FUZZ_SEED (base seed; sequence s uses seed base + s),
// IRREGULAR_FUZZ_SEQUENCES (number of sequences), IRREGULAR_FUZZ_VERBOSE (rank 0 prints every
// sequence's seed and operations as it runs). To replay one failing sequence:
//   IRREGULAR_FUZZ_SEED=<printed seed> IRREGULAR_FUZZ_SEQUENCES=1 mpiexec -n <p> mpi_fuzz_domain
#include "domain_support.hpp"

#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>
#include <irregular/distributed/partitioners/rectangular.hpp>
#include <irregular/distributed/partitioners/sfc_blocking.hpp>
#include <irregular/domain.hpp>
#include <irregular/tree/htree.hpp>

#include <boost/archive/binary_oarchive.hpp>
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;
using namespace domain_support;

namespace {

// ---- deterministic randomness (identical on every rank) ------------------------------------

std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct Rng {
  std::uint64_t state;
  std::uint64_t next() { return mix64(state++ * 0x2545F4914F6CDD1Dull + 0x1234567ull); }
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
  int range(int a, int b) { return a + static_cast<int>(below(static_cast<std::uint64_t>(b - a + 1))); }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  bool chance(double p) { return unit() < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[below(v.size())]; }
};

// Deterministic per-element randomness for move updates: a function of (op seed, id, salt).
double hash_unit(std::uint64_t seed, std::uint64_t id, std::uint64_t salt) {
  return static_cast<double>(mix64(seed ^ mix64(id * 31 + salt)) >> 11) * 0x1.0p-53;
}

std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* s = std::getenv(name);
  if (!s || !*s) return fallback;
  return std::strtoull(s, nullptr, 0);
}

// ---- elements, oracle, failure bits ----------------------------------------------------------

template <int D>
struct Elem {
  std::array<double, D> position;
  std::uint64_t id;
};

// An element that needs Boost.Serialization (variable size): migrations take the serialized
// path and rebalance() its transaction; the label must travel with its element.
template <int D>
struct Tagged {
  std::array<double, D> position{};
  std::uint64_t id = 0;
  std::string label;
  template <class Archive>
  void serialize(Archive& ar, unsigned) { ar & position & id & label; }
};

template <class E>
E make_element(const decltype(E::position)& x, std::uint64_t id) {
  E e{};
  e.position = x;
  e.id = id;
  if constexpr (requires { e.label; }) e.label = "#" + std::to_string(id);
  return e;
}
template <class E>
bool label_ok(const E& e) {
  if constexpr (requires { e.label; }) return e.label == "#" + std::to_string(e.id);
  else return true;
}
template <class E>
bool same_label(const E& a, const E& b) {
  if constexpr (requires { a.label; }) return a.label == b.label;
  else return true;
}

template <class E>
struct Oracle {
  std::vector<E> built;    // in the tree (after a build), moved by move_elements
  std::vector<E> pending;  // inserted, joining the tree at the next build or move
  std::uint64_t next_id = 0;
};

enum Bad : unsigned {
  bad_leaf_count = 1u << 0,      // global leaf count differs from the sequential tree
  bad_leaf = 1u << 1,            // a leaf's start, level or count differs
  bad_leaf_owner = 1u << 2,      // ownership().leaf_owner(cell) is not the holding rank
  bad_range = 1u << 3,           // segment maps: leaves outside the segment / not contiguous / not covering
  bad_elements = 1u << 4,        // element outside its leaf interval, or leaf element count wrong
  bad_owner_of = 1u << 5,        // owner_of(position) is not the holding rank
  bad_cell_owner = 1u << 6,      // owner_of(leaf cell) is not the holding rank
  bad_conservation = 1u << 7,    // count or checksum of the elements differs from the oracle
  bad_global_count = 1u << 8,    // global_element_count / global_leaf_count wrong
  bad_map = 1u << 9,             // map differs between ranks, wrong parts, bad splitters
  bad_failed_changed = 1u << 10,  // a rejected call changed the domain
  bad_agreement = 1u << 11,      // expected collective_error missing / unexpected / wrong rank
  bad_rebalance = 1u << 12,      // rebalance's answer disagrees with load_report
  bad_migration = 1u << 13,      // last_migration() inconsistent
};

std::string describe(unsigned m) {
  static const char* names[] = {"leaf_count", "leaf", "leaf_owner", "range", "elements", "owner_of",
                                "cell_owner", "conservation", "global_count", "map", "failed_changed",
                                "agreement", "rebalance", "migration"};
  std::string s;
  for (unsigned b = 0; b < 14; ++b)
    if (m & (1u << b)) s += std::string(s.empty() ? "" : ",") + names[b];
  return s.empty() ? "none" : s;
}

unsigned all_or(const mpi::communicator& w, unsigned mine) {
  unsigned all = 0;
  mpi::all_reduce(w, mine, all, std::bit_or<unsigned>());
  return all;
}

template <class Map>
std::string serialized(const Map& m) {
  std::ostringstream os;
  {
    boost::archive::binary_oarchive oa(os, boost::archive::no_header);
    oa << m;
  }
  return os.str();
}

// This rank's state, to show that a rejected call changed nothing.
template <class Domain>
struct LocalState {
  std::vector<typename Domain::element_type> elements;
  std::vector<std::uint64_t> leaves;
  std::string map;
  std::uint64_t global_elements = 0;
  bool operator==(const LocalState& o) const {
    if (elements.size() != o.elements.size() || leaves != o.leaves || map != o.map ||
        global_elements != o.global_elements)
      return false;
    for (std::size_t i = 0; i < elements.size(); ++i)
      if (elements[i].id != o.elements[i].id || !same_label(elements[i], o.elements[i]) ||
          std::memcmp(elements[i].position.data(), o.elements[i].position.data(), sizeof elements[i].position) != 0)
        return false;
    return true;
  }
};
template <class Domain>
LocalState<Domain> local_state(const Domain& d) {
  LocalState<Domain> s;
  s.elements.assign(d.local_elements().begin(), d.local_elements().end());
  const auto& t = d.local_tree();
  for (std::size_t i = 0; i < t.size(); ++i) {
    s.leaves.push_back(static_cast<std::uint64_t>(t.starts()[i]));
    s.leaves.push_back(t.levels()[i]);
    s.leaves.push_back(t.counts()[i]);
  }
  s.map = serialized(d.ownership());
  s.global_elements = d.global_element_count();  // collective: counts pending elements too
  return s;
}

// ---- the invariants ------------------------------------------------------------------------

template <class Domain>
unsigned check_invariants(Domain& d, const Oracle<typename Domain::element_type>& o, std::size_t k, bool partitioned) {
  constexpr int D = Domain::dim;
  using E = typename Domain::element_type;
  const auto& w = d.comm();
  const int me = w.rank(), p = w.size();
  unsigned bad = 0;

  // The global leaves equal the sequential tree over the built elements.
  auto g = gather_leaves(d);
  std::vector<std::size_t> order(g.starts.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return g.starts[a] < g.starts[b]; });
  std::vector<std::array<double, D>> where;
  where.reserve(o.built.size());
  for (const auto& e : o.built) where.push_back(e.position);
  const auto seq = sequential_tree(d, where, k);
  if (order.size() != seq.size()) {
    bad |= bad_leaf_count;
  } else {
    for (std::size_t i = 0; i < seq.size(); ++i) {
      const auto j = order[i];
      if (g.starts[j] != seq.start(i) || g.levels[j] != seq.level(i) || g.counts[j] != seq.element_count(i))
        bad |= bad_leaf;
      else if (d.ownership().leaf_owner(seq.cell(i)) != g.owner[j])
        bad |= bad_leaf_owner;
    }
  }

  // Local leaves: elements inside their leaf, counts, owners name this rank.
  std::size_t in_leaves = 0;
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
    auto leaf = d.leaf(i);
    if (leaf.elements.size() != leaf.count) bad |= bad_elements;
    in_leaves += leaf.elements.size();
    for (const auto& e : leaf.elements) {
      if (!leaf.interval.contains(d.key_of(e)) || !label_ok(e)) bad |= bad_elements;
      if (d.owner_of(e.position) != me) bad |= bad_owner_of;
    }
    if (d.owner_of(leaf.cell) != me) bad |= bad_cell_owner;
    if (d.ownership().leaf_owner(leaf.cell) != me) bad |= bad_leaf_owner;
  }
  if (in_leaves != d.local_element_count()) bad |= bad_elements;
  for (const auto& e : d.local_elements())
    if (d.owner_of(e.position) != me) bad |= bad_owner_of;

  // The range property of segment maps.
  if constexpr (Domain::map_type::contiguous_segments) {
    const auto& m = d.ownership();
    const auto seg = m.segment(me);
    const auto& t = d.local_tree();
    for (std::size_t i = 0; i < t.size(); ++i) {
      const auto iv = t.interval(i);
      if (!(seg.start <= iv.start && iv.end <= seg.end)) bad |= bad_range;
      if (i > 0 && t.interval(i - 1).end != iv.start) bad |= bad_range;
    }
    if (t.size() > 0 && (t.starts()[0] != seg.start || t.interval(t.size() - 1).end != seg.end)) bad |= bad_range;
    if (t.size() == 0 && seg.start != seg.end) bad |= bad_range;
    if (m.segment(0).start != 0 || m.segment(p - 1).end != irr::SegmentMap<typename Domain::curve_type>::domain_end())
      bad |= bad_map;
    for (int r = 0; r + 1 < p; ++r)
      if (m.segment(r).end != m.segment(r + 1).start || m.segment(r).start > m.segment(r).end) bad |= bad_map;
  }

  // The map: p parts once a partitioner made it (before, a RectangleMap is the one-part
  // "everything on rank 0" map while a SegmentMap has p parts, p - 1 of them empty); the same
  // on every rank.
  if (partitioned ? d.ownership().parts() != p : d.ownership().parts() != p && d.ownership().parts() != 1)
    bad |= bad_map;
  {
    const std::uint64_t h = std::hash<std::string>{}(serialized(d.ownership()));
    std::uint64_t lo = 0, hi = 0;
    mpi::all_reduce(w, h, lo, mpi::minimum<std::uint64_t>());
    mpi::all_reduce(w, h, hi, mpi::maximum<std::uint64_t>());
    if (lo != hi) bad |= bad_map;
  }

  // Conservation against the oracle's multiset.
  if (global_checksum(w, checksum<E>(d.local_elements())) != checksum<E>(o.built)) bad |= bad_conservation;
  if (d.global_element_count() != o.built.size() + o.pending.size()) bad |= bad_global_count;
  if (d.global_leaf_count() != seq.size()) bad |= bad_global_count;

  return all_or(w, bad);
}

// ---- generators ----------------------------------------------------------------------------

template <int D>
double to_box(const irr::Box<D>& box, int d, double t) {
  if (t >= 1) return box.hi[d];
  if (t <= 0) return box.lo[d];
  return std::clamp(box.lo[d] + t * (box.hi[d] - box.lo[d]), box.lo[d], box.hi[d]);
}

// A valid position: uniform, clustered, on cell boundaries, on the box faces, or a duplicate.
template <int D, class E>
std::array<double, D> gen_position(Rng& rng, const irr::Box<D>& box, int mode, const std::array<double, D>& centre,
                                   const Oracle<E>& o) {
  std::array<double, D> x{};
  if (mode == 4 && !o.built.empty()) return o.built[rng.below(o.built.size())].position;  // duplicate
  if (mode == 4) mode = 1;
  for (int d = 0; d < D; ++d) {
    double t = 0;
    switch (mode) {
      case 0: t = rng.unit(); break;
      case 1: {  // cluster: a narrow bump around the centre
        const double s = (rng.unit() + rng.unit() + rng.unit() - 1.5) * 0.02;
        t = centre[d] + s;
        break;
      }
      case 2: {  // cell boundaries of the binary or ternary grids
        const int base = rng.chance(0.5) ? 2 : 3;
        const int lev = rng.range(1, 4);
        const int n = base == 2 ? (1 << lev) : (lev == 1 ? 3 : lev == 2 ? 9 : lev == 3 ? 27 : 81);
        t = static_cast<double>(rng.range(0, n)) / n;
        break;
      }
      default: {  // faces and corners
        const auto c = rng.below(3);
        t = c == 0 ? 0.0 : c == 1 ? 1.0 : rng.unit();
        break;
      }
    }
    x[d] = to_box(box, d, t);
  }
  return x;
}

// An invalid position: outside the box on one axis, NaN or infinite.
template <int D>
void make_invalid(std::array<double, D>& x, const irr::Box<D>& box, std::uint64_t kind, int axis) {
  const double ext = box.hi[axis] - box.lo[axis];
  switch (kind % 6) {
    case 0: x[axis] = box.hi[axis] + ext * 0.25; break;
    case 1: x[axis] = box.lo[axis] - ext * 1e-3; break;
    case 2: x[axis] = std::nextafter(box.hi[axis], std::numeric_limits<double>::infinity()); break;
    case 3: x[axis] = std::numeric_limits<double>::quiet_NaN(); break;
    case 4: x[axis] = std::numeric_limits<double>::infinity(); break;
    default: x[axis] = -std::numeric_limits<double>::infinity(); break;
  }
}

// The displacement of a move: a pure function of the element and the op's parameters.
template <int D>
struct Mover {
  int mode = 0;
  std::uint64_t seed = 0;
  double scale = 0;
  int axis = 0;
  std::uint64_t modulus = 1;
  std::array<double, D> target{};
  irr::Box<D> box{};

  template <class E>
  void operator()(E& e) const {
    auto& x = e.position;
    const auto id = e.id;
    switch (mode) {
      case 0:  // jitter everything
        for (int d = 0; d < D; ++d)
          x[d] = std::clamp(x[d] + (hash_unit(seed, id, d) - 0.5) * scale * (box.hi[d] - box.lo[d]), box.lo[d], box.hi[d]);
        break;
      case 1:  // a subset jumps anywhere
        if (mix64(seed ^ id) % modulus == 0)
          for (int d = 0; d < D; ++d) x[d] = to_box(box, d, hash_unit(seed, id, 10 + d));
        break;
      case 2:  // squeeze towards the low face of one axis
        x[axis] = std::clamp(box.lo[axis] + (x[axis] - box.lo[axis]) * scale, box.lo[axis], box.hi[axis]);
        break;
      case 3:  // a subset collapses onto one point (duplicates)
        if (mix64(seed ^ id) % modulus == 0) x = target;
        break;
      case 4:  // nothing moves
        break;
      case 5:  // mirror one axis
        x[axis] = std::clamp(box.lo[axis] + box.hi[axis] - x[axis], box.lo[axis], box.hi[axis]);
        break;
      default:  // shift everything, piling up on a face
        x[axis] = std::clamp(x[axis] + (scale - 0.5) * (box.hi[axis] - box.lo[axis]), box.lo[axis], box.hi[axis]);
        break;
    }
  }
};

// ---- one sequence ---------------------------------------------------------------------------

unsigned expect_failure(const mpi::communicator& w, bool threw, bool other, int failing, int expected_rank) {
  unsigned bad = 0;
  if (other || !threw || failing != expected_rank) bad |= bad_agreement;
  return all_or(w, bad);
}

template <class Domain>
void run_sequence(const mpi::communicator& world, std::uint64_t seed, const typename Domain::options_type& options,
                  const std::string& name) {
  constexpr int D = Domain::dim;
  using E = typename Domain::element_type;
  const int me = world.rank(), p = world.size();
  Rng rng{mix64(seed)};
  const bool verbose = env_u64("IRREGULAR_FUZZ_VERBOSE", 0) != 0;

  // Box, refinement, ops.
  irr::Box<D> box;
  for (int d = 0; d < D; ++d) {
    box.lo[d] = rng.chance(0.5) ? 0.0 : (rng.unit() - 0.5) * 8;
    box.hi[d] = box.lo[d] + (rng.chance(0.5) ? 1.0 : 0.25 + rng.unit() * 4);
  }
  static const std::vector<std::size_t> ks{1, 2, 3, 4, 6, 8, 12, 20, 40};
  const std::size_t k = rng.pick(ks);
  const int n_ops = rng.range(4, 8);
  std::string log = name + " k=" + std::to_string(k);
  CAPTURE(seed);
  INFO("domain: " << name << ", k = " << k << "; replay: IRREGULAR_FUZZ_SEED=" << seed
                  << " IRREGULAR_FUZZ_SEQUENCES=1 at " << p << " ranks");

  Domain dom(world, box, irr::refine::max_elements(k), options);
  Oracle<E> o;
  bool partitioned = false;  // a build or a remapping rebalance made the map
  std::array<double, D> centre{};
  for (int d = 0; d < D; ++d) centre[d] = rng.unit();

  {
    INFO("initial state, before any operation");
    REQUIRE(describe(check_invariants(dom, o, k, false)) == "none");
  }

  for (int op = 0; op < n_ops; ++op) {
    // The first operation is usually an insert, so most sequences have data.
    int kind = op == 0 && rng.chance(0.85) ? 0 : static_cast<int>(rng.below(10));
    kind = kind < 3 ? 0 : kind < 5 ? 1 : kind < 8 ? 2 : 3;  // insert, build, move, rebalance
    std::string what;
    unsigned bad = 0;

    if (kind == 0) {  // ---- insert ----
      const int m = o.built.empty() && o.pending.empty() ? rng.range(20, 300) : rng.range(0, 120);
      const int split = static_cast<int>(rng.below(5));
      const int mode_all = static_cast<int>(rng.below(6));  // 5: mixed per element
      if (rng.chance(0.3))
        for (int d = 0; d < D; ++d) centre[d] = rng.unit();
      std::vector<E> all, local;
      for (int i = 0; i < m; ++i) {
        const int mode = mode_all == 5 ? static_cast<int>(rng.below(5)) : mode_all;
        const E e = make_element<E>(gen_position<D>(rng, box, mode, centre, o), o.next_id++);
        int r = 0;
        switch (split) {
          case 0: r = 0; break;
          case 1: r = p - 1; break;
          case 2: r = i % p; break;
          case 3: r = static_cast<int>(rng.below(static_cast<std::uint64_t>(p))); break;
          default: r = i * p / std::max(m, 1); break;
        }
        all.push_back(e);
        if (r == me) local.push_back(e);
      }
      const bool invalid = rng.chance(0.15);
      const int bad_rank = static_cast<int>(rng.below(static_cast<std::uint64_t>(p)));
      const auto bad_kind = rng.next();
      const int axis = static_cast<int>(rng.below(D));
      const auto place = rng.next();
      what = "insert(m=" + std::to_string(m) + ",split=" + std::to_string(split) + ",mode=" + std::to_string(mode_all);
      if (invalid) {
        what += ",invalid@r" + std::to_string(bad_rank) + ":kind" + std::to_string(bad_kind % 6);
        if (me == bad_rank) {
          E bad_e = make_element<E>(gen_position<D>(rng, box, 0, centre, o), ~std::uint64_t{0});
          make_invalid<D>(bad_e.position, box, bad_kind, axis);
          local.insert(local.begin() + static_cast<std::ptrdiff_t>(place % (local.size() + 1)), bad_e);
        } else {
          (void)gen_position<D>(rng, box, 0, centre, o);  // keep the generator in step
        }
      }
      what += ")";
      const auto before = invalid ? local_state(dom) : LocalState<Domain>{};
      bool threw = false, other = false;
      int failing = -2;
      try {
        dom.insert(local);
      } catch (const irr::collective_error& e) {
        threw = true;
        failing = e.failing_rank();
      } catch (...) {
        other = true;
      }
      if (invalid) {
        bad |= expect_failure(world, threw, other, failing, bad_rank);
        if (!(local_state(dom) == before)) bad |= bad_failed_changed;
      } else {
        if (threw || other) bad |= bad_agreement;
        o.pending.insert(o.pending.end(), all.begin(), all.end());
      }
    } else if (kind == 1) {  // ---- build ----
      what = "build";
      bool failed = false;
      try {
        dom.build();
      } catch (...) {
        failed = true;
      }
      if (failed) bad |= bad_agreement;
      partitioned = true;
      o.built.insert(o.built.end(), o.pending.begin(), o.pending.end());
      o.pending.clear();
    } else if (kind == 2) {  // ---- move_elements ----
      Mover<D> mv;
      mv.mode = static_cast<int>(rng.below(7));
      mv.seed = rng.next();
      mv.scale = mv.mode == 0 ? std::pow(10.0, -3.0 * rng.unit()) * 0.2 : rng.unit();
      mv.axis = static_cast<int>(rng.below(D));
      mv.modulus = 1 + rng.below(8);
      mv.target = gen_position<D>(rng, box, static_cast<int>(rng.below(4)), centre, o);
      mv.box = box;
      const bool inject = rng.chance(0.2);
      // A third of the moves also remove: update returns false for ids divisible by mod + 1.
      const bool removes = rng.chance(0.33);
      const auto dies = [&](const E& e) { return removes && e.id % (mv.modulus + 1) == 0; };
      const auto who = rng.next(), at = rng.next(), fail_kind = rng.next();
      const int fail_axis = static_cast<int>(rng.below(D));
      // The failing rank must hold elements that survive, or the failing update never runs.
      std::uint64_t survivors = 0;
      for (const auto& e : dom.local_elements()) survivors += dies(e) ? 0 : 1;
      std::vector<std::uint64_t> counts;
      mpi::all_gather(world, survivors, counts);
      std::vector<int> holders;
      for (int r = 0; r < p; ++r)
        if (counts[static_cast<std::size_t>(r)] > 0) holders.push_back(r);
      const bool fail = inject && !holders.empty();
      const int bad_rank = fail ? holders[who % holders.size()] : -1;
      const std::uint64_t fail_at = fail ? at % counts[static_cast<std::size_t>(bad_rank)] : 0;
      what = "move(mode=" + std::to_string(mv.mode) + ",scale=" + std::to_string(mv.scale) +
             ",axis=" + std::to_string(mv.axis) + ",mod=" + std::to_string(mv.modulus) + (removes ? ",removes" : "");
      if (fail)
        what += ",fail@r" + std::to_string(bad_rank) + "#" + std::to_string(fail_at) + ":kind" +
                std::to_string(fail_kind % 4);
      what += ")";

      // Elements that must change holder under the current map (a lower bound on what travels).
      std::uint64_t leaving = 0;
      if (!fail)
        for (const auto& e0 : dom.local_elements()) {
          if (dies(e0)) continue;
          E e = e0;
          mv(e);
          if (dom.owner_of(e.position) != me) ++leaving;
        }
      std::uint64_t leaving_all = 0;
      mpi::all_reduce(world, leaving, leaving_all, std::plus<std::uint64_t>());

      const auto before = fail ? local_state(dom) : LocalState<Domain>{};
      std::uint64_t calls = 0;
      auto update = [&](E& e) {
        if (me == bad_rank && calls++ == fail_at) {
          switch (fail_kind % 4) {
            case 0: throw std::runtime_error("fuzz: update fails on purpose");
            case 1: throw 42;  // not even a std::exception
            case 2: make_invalid<D>(e.position, box, 0, fail_axis); return;
            default: make_invalid<D>(e.position, box, 3, fail_axis); return;
          }
        }
        mv(e);
      };
      bool threw = false, other = false;
      int failing = -2;
      try {
        if (removes)
          dom.move_elements([&](E& e) {
            if (dies(e)) return false;
            update(e);
            return true;
          });
        else
          dom.move_elements(update);
      } catch (const irr::collective_error& e) {
        threw = true;
        failing = e.failing_rank();
      } catch (...) {
        other = true;
      }
      if (fail) {
        bad |= expect_failure(world, threw, other, failing, bad_rank);
        if (!(local_state(dom) == before)) bad |= bad_failed_changed;
      } else {
        if (threw || other) bad |= bad_agreement;
        std::erase_if(o.built, dies);
        for (auto& e : o.built) mv(e);
        // The elements inserted since the last build or move join, unmoved (and may travel).
        const bool joined = !o.pending.empty();
        o.built.insert(o.built.end(), o.pending.begin(), o.pending.end());
        o.pending.clear();
        if (dom.last_migration().elements < leaving_all) bad |= bad_migration;
        if (mv.mode == 4 && !joined && (dom.last_migration().elements != 0 || dom.last_migration().bytes != 0))
          bad |= bad_migration;
      }
    } else {  // ---- rebalance ----
      static const std::vector<double> thresholds{0.0, 0.0, 0.01, 0.05, 0.1, 0.3, 1.0, 1e300};
      double t = rng.pick(thresholds);
      if (t == 0.0 && rng.chance(0.5)) t = -0.0;  // valid: -0 >= 0
      const bool inject = rng.chance(0.2);
      const int bad_rank = static_cast<int>(rng.below(static_cast<std::uint64_t>(p)));
      const auto bad_kind = rng.below(4);
      double mine = t;
      if (inject && me == bad_rank)
        mine = bad_kind == 0 ? -0.01 : bad_kind == 1 ? -1e300 : bad_kind == 2 ? std::numeric_limits<double>::quiet_NaN()
                                                                             : std::numeric_limits<double>::infinity();
      what = "rebalance(t=" + std::to_string(t) + (inject ? ",bad@r" + std::to_string(bad_rank) + ":kind" +
                                                               std::to_string(bad_kind) : std::string()) + ")";
      const auto report = dom.load_report();
      const auto before = inject ? local_state(dom) : LocalState<Domain>{};
      bool threw = false, other = false, remapped = false;
      int failing = -2;
      try {
        remapped = dom.rebalance({.threshold = mine});
      } catch (const irr::collective_error& e) {
        threw = true;
        failing = e.failing_rank();
      } catch (...) {
        other = true;
      }
      if (inject) {
        bad |= expect_failure(world, threw, other, failing, bad_rank);
        if (!(local_state(dom) == before)) bad |= bad_failed_changed;
      } else {
        if (threw || other) bad |= bad_agreement;
        if (remapped != (report.max_unbalance > t)) bad |= bad_rebalance;
        if (remapped) partitioned = true;
        int r = remapped ? 1 : 0, lo = 0, hi = 0;
        mpi::all_reduce(world, r, lo, mpi::minimum<int>());
        mpi::all_reduce(world, r, hi, mpi::maximum<int>());
        if (lo != hi) bad |= bad_rebalance;
        if (!remapped && (dom.last_migration().elements != 0 || dom.last_migration().bytes != 0)) bad |= bad_migration;
      }
    }

    log += " | " + what;
    if (verbose && me == 0) std::printf("seed %llu: %s\n", static_cast<unsigned long long>(seed), log.c_str());
    const unsigned verdict = all_or(world, bad) | check_invariants(dom, o, k, partitioned);
    INFO("operations: " << log);
    REQUIRE(describe(verdict) == "none");
  }
}

// ---- the domain types ------------------------------------------------------------------------

template <int D, class Curve, class Metric, class P, class E = Elem<D>>
void run_with(const mpi::communicator& world, std::uint64_t seed, P policy, const std::string& name) {
  using Domain = irr::IrregularDomain<E, irr::stencil::Moore<D>, Curve, Metric, P>;
  typename Domain::options_type opt;
  opt.partitioner = policy;
  run_sequence<Domain>(world, seed, opt, name);
}

constexpr int n_configs = 16;

void run_config(const mpi::communicator& world, int config, std::uint64_t seed) {
  using irr::BlockingCut;
  using irr::partitioner::Rectangular;
  using irr::partitioner::SfcBlocking;
  namespace c = irr::curve;
  using Const = irr::load::Constant;
  using Count = irr::load::ElementCount;
  switch (config) {
    case 0: return run_with<2, c::Hilbert<2>, Const>(world, seed, SfcBlocking{.cut = BlockingCut::optimal}, "Hilbert2/SFC-optimal/Constant");
    case 1: return run_with<2, c::Morton<2>, Count>(world, seed, SfcBlocking{.cut = BlockingCut::greedy}, "Morton2/SFC-greedy/ElementCount");
    case 2: return run_with<2, c::Peano<2>, Count>(world, seed, SfcBlocking{.cut = BlockingCut::optimal}, "Peano2/SFC-optimal/ElementCount");
    case 3: return run_with<3, c::Hilbert<3>, Count>(world, seed, SfcBlocking{.cut = BlockingCut::greedy}, "Hilbert3/SFC-greedy/ElementCount");
    case 4: return run_with<3, c::Morton<3>, Const>(world, seed, SfcBlocking{.cut = BlockingCut::optimal}, "Morton3/SFC-optimal/Constant");
    case 5: return run_with<3, c::Peano<3>, Const>(world, seed, SfcBlocking{.cut = BlockingCut::greedy}, "Peano3/SFC-greedy/Constant");
    case 6: return run_with<2, c::Hilbert<2>, Count>(world, seed, Rectangular{.algorithm = "JAG-M-HEUR-PROBE"}, "Hilbert2/JAG-M-HEUR-PROBE/auto/ElementCount");
    case 7: return run_with<2, c::Morton<2>, Const>(world, seed, Rectangular{.algorithm = "HIER-RB", .level = 3}, "Morton2/HIER-RB/level3/Constant");
    case 8: return run_with<2, c::Peano<2>, Count>(world, seed, Rectangular{.algorithm = "RECT-NICOL", .level = 2}, "Peano2/RECT-NICOL/level2/ElementCount");
    case 9: return run_with<2, c::Hilbert<2>, Count>(world, seed, Rectangular{.algorithm = "HIER-RELAXED", .level = 5}, "Hilbert2/HIER-RELAXED/level5/ElementCount");
    case 10: return run_with<3, c::Hilbert<3>, Count>(world, seed, Rectangular{.algorithm = "HIER-RELAXED"}, "Hilbert3/HIER-RELAXED/auto/ElementCount");
    case 11: return run_with<3, c::Morton<3>, Const>(world, seed, Rectangular{.algorithm = "JAG-M-HEUR", .level = 2}, "Morton3/JAG-M-HEUR/level2/Constant");
    case 12: return run_with<3, c::Peano<3>, Count>(world, seed, Rectangular{.algorithm = "HIER-RB-DIST", .level = 1}, "Peano3/HIER-RB-DIST/level1/ElementCount");
    case 14: return run_with<2, c::Hilbert<2>, Count, SfcBlocking, Tagged<2>>(world, seed, SfcBlocking{.cut = BlockingCut::optimal}, "Hilbert2/SFC-optimal/ElementCount/Tagged");
    case 15: return run_with<3, c::Morton<3>, Count, Rectangular, Tagged<3>>(world, seed, Rectangular{.algorithm = "JAG-M-HEUR-PROBE-BEST"}, "Morton3/JAG-M-HEUR-PROBE-BEST/auto/ElementCount/Tagged");
    default: return run_with<2, c::Morton<2>, Count>(world, seed, Rectangular{.algorithm = "JAG-PQ-HEUR-BEST", .level = 4}, "Morton2/JAG-PQ-HEUR-BEST/level4/ElementCount");
  }
}

}  // namespace

TEST_CASE("fuzz: random operation sequences agree with the sequential oracle", "[domain][fuzz]") {
  mpi::communicator world;
  std::uint64_t base = env_u64("IRREGULAR_FUZZ_SEED", 20240611);
  std::uint64_t sequences = env_u64("IRREGULAR_FUZZ_SEQUENCES", 300);
  mpi::broadcast(world, base, 0);  // one seed for every rank, whatever each one's environment says
  mpi::broadcast(world, sequences, 0);
  for (std::uint64_t s = 0; s < sequences; ++s) {
    const std::uint64_t seed = base + s;
    const int config = static_cast<int>(mix64(seed ^ 0xC0FFEEull) % n_configs);
    run_config(world, config, seed);
  }
}
