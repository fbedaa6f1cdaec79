// Shared by the randomized domain tests (test_fuzz_domain.cpp, test_sequences.cpp): deterministic
// randomness identical on every rank, generators of positions and moves, and the element
// domain's replicated sequential oracle with its invariants (failure bits named by describe()).
#pragma once

#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/tree/htree.hpp>

#include <boost/archive/binary_oarchive.hpp>
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include "domain_support.hpp"
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace sequence_support {

namespace irr = irregular;
namespace mpi = boost::mpi;
using namespace domain_support;

// ---- deterministic randomness (identical on every rank) ------------------------------------

inline std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct Rng {
  std::uint64_t state;
  std::uint64_t next() { return mix64(state++ * 0x2545F4914F6CDD1Dull + 0x1234567ull); }
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
  int range(int a, int b) {
    return a + static_cast<int>(below(static_cast<std::uint64_t>(b - a + 1)));
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  bool chance(double p) { return unit() < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }
};

// Deterministic per-element randomness for move updates: a function of (op seed, id, salt).
inline double hash_unit(std::uint64_t seed, std::uint64_t id, std::uint64_t salt) {
  return static_cast<double>(mix64(seed ^ mix64(id * 31 + salt)) >> 11) * 0x1.0p-53;
}

inline std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* s = std::getenv(name);
  if (!s || !*s) return fallback;
  return std::strtoull(s, nullptr, 0);
}

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
  if constexpr (requires { e.label; })
    return e.label == "#" + std::to_string(e.id);
  else
    return true;
}
template <class E>
bool same_label(const E& a, const E& b) {
  if constexpr (requires { a.label; })
    return a.label == b.label;
  else
    return true;
}

template <class E>
struct Oracle {
  std::vector<E> built;    // in the tree (after a build), moved by move_elements
  std::vector<E> pending;  // inserted, joining the tree at the next build or move
  std::uint64_t next_id = 0;
};

enum Bad : unsigned {
  bad_leaf_count = 1u << 0,  // global leaf count differs from the sequential tree
  bad_leaf = 1u << 1,        // a leaf's start, level or count differs
  bad_leaf_owner = 1u << 2,  // ownership().leaf_owner(cell) is not the holding rank
  bad_range = 1u << 3,  // segment maps: leaves outside the segment / not contiguous / not covering
  bad_elements = 1u << 4,         // element outside its leaf interval, or leaf element count wrong
  bad_owner_of = 1u << 5,         // owner_of(position) is not the holding rank
  bad_cell_owner = 1u << 6,       // owner_of(leaf cell) is not the holding rank
  bad_conservation = 1u << 7,     // count or checksum of the elements differs from the oracle
  bad_global_count = 1u << 8,     // global_element_count / global_leaf_count wrong
  bad_map = 1u << 9,              // map differs between ranks, wrong parts, bad splitters
  bad_failed_changed = 1u << 10,  // a rejected call changed the domain
  bad_agreement = 1u << 11,       // expected collective_error missing / unexpected / wrong rank
  bad_rebalance = 1u << 12,       // rebalance's answer disagrees with load_report
  bad_migration = 1u << 13,       // last_migration() inconsistent
};

inline std::string describe(unsigned m) {
  static const char* names[] = {"leaf_count",   "leaf",     "leaf_owner",     "range",
                                "elements",     "owner_of", "cell_owner",     "conservation",
                                "global_count", "map",      "failed_changed", "agreement",
                                "rebalance",    "migration"};
  std::string s;
  for (unsigned b = 0; b < 14; ++b)
    if (m & (1u << b)) s += std::string(s.empty() ? "" : ",") + names[b];
  return s.empty() ? "none" : s;
}

inline unsigned all_or(const mpi::communicator& w, unsigned mine) {
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

// ---- the invariants ------------------------------------------------------------------------

template <class Domain>
unsigned check_invariants(Domain& d, const Oracle<typename Domain::element_type>& o, std::size_t k,
                          bool partitioned) {
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
      if (g.starts[j] != seq.start(i) || g.levels[j] != seq.level(i) ||
          g.counts[j] != seq.element_count(i))
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
    if (t.size() > 0 && (t.starts()[0] != seg.start || t.interval(t.size() - 1).end != seg.end))
      bad |= bad_range;
    if (t.size() == 0 && seg.start != seg.end) bad |= bad_range;
    if (m.segment(0).start != 0 ||
        m.segment(p - 1).end != irr::SegmentMap<typename Domain::curve_type>::domain_end())
      bad |= bad_map;
    for (int r = 0; r + 1 < p; ++r)
      if (m.segment(r).end != m.segment(r + 1).start || m.segment(r).start > m.segment(r).end)
        bad |= bad_map;
  }

  // The map: p parts once a partitioner made it (before, a RectangleMap is the one-part
  // "everything on rank 0" map while a SegmentMap has p parts, p - 1 of them empty); the same
  // on every rank.
  if (partitioned ? d.ownership().parts() != p
                  : d.ownership().parts() != p && d.ownership().parts() != 1)
    bad |= bad_map;
  {
    const std::uint64_t h = std::hash<std::string>{}(serialized(d.ownership()));
    std::uint64_t lo = 0, hi = 0;
    mpi::all_reduce(w, h, lo, mpi::minimum<std::uint64_t>());
    mpi::all_reduce(w, h, hi, mpi::maximum<std::uint64_t>());
    if (lo != hi) bad |= bad_map;
  }

  // Conservation against the oracle's multiset.
  if (global_checksum(w, checksum<E>(d.local_elements())) != checksum<E>(o.built))
    bad |= bad_conservation;
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
std::array<double, D> gen_position(Rng& rng, const irr::Box<D>& box, int mode,
                                   const std::array<double, D>& centre, const Oracle<E>& o) {
  std::array<double, D> x{};
  if (mode == 4 && !o.built.empty())
    return o.built[rng.below(o.built.size())].position;  // duplicate
  if (mode == 4) mode = 1;
  for (int d = 0; d < D; ++d) {
    double t = 0;
    switch (mode) {
      case 0:
        t = rng.unit();
        break;
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
    case 0:
      x[axis] = box.hi[axis] + ext * 0.25;
      break;
    case 1:
      x[axis] = box.lo[axis] - ext * 1e-3;
      break;
    case 2:
      x[axis] = std::nextafter(box.hi[axis], std::numeric_limits<double>::infinity());
      break;
    case 3:
      x[axis] = std::numeric_limits<double>::quiet_NaN();
      break;
    case 4:
      x[axis] = std::numeric_limits<double>::infinity();
      break;
    default:
      x[axis] = -std::numeric_limits<double>::infinity();
      break;
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
          x[d] = std::clamp(x[d] + (hash_unit(seed, id, d) - 0.5) * scale * (box.hi[d] - box.lo[d]),
                            box.lo[d], box.hi[d]);
        break;
      case 1:  // a subset jumps anywhere
        if (mix64(seed ^ id) % modulus == 0)
          for (int d = 0; d < D; ++d) x[d] = to_box(box, d, hash_unit(seed, id, 10 + d));
        break;
      case 2:  // squeeze towards the low face of one axis
        x[axis] =
            std::clamp(box.lo[axis] + (x[axis] - box.lo[axis]) * scale, box.lo[axis], box.hi[axis]);
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
        x[axis] = std::clamp(x[axis] + (scale - 0.5) * (box.hi[axis] - box.lo[axis]), box.lo[axis],
                             box.hi[axis]);
        break;
    }
  }
};

// A random move: its mode, parameters and (mode 3) the point a subset collapses onto.
template <int D, class E>
Mover<D> random_mover(Rng& rng, const irr::Box<D>& box, const std::array<double, D>& centre,
                      const Oracle<E>& o) {
  Mover<D> mv;
  mv.mode = static_cast<int>(rng.below(7));
  mv.seed = rng.next();
  mv.scale = mv.mode == 0 ? std::pow(10.0, -3.0 * rng.unit()) * 0.2 : rng.unit();
  mv.axis = static_cast<int>(rng.below(D));
  mv.modulus = 1 + rng.below(8);
  mv.target = gen_position<D>(rng, box, static_cast<int>(rng.below(4)), centre, o);
  mv.box = box;
  return mv;
}

}  // namespace sequence_support
