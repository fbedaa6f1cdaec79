// Shared by the domain tests: seeded inputs, input splits, checksums, the gathered tree and the
// sequential oracle.
#pragma once

#include <irregular/cell_domain.hpp>
#include <irregular/domain.hpp>
#include <irregular/tree/htree.hpp>

#include <boost/archive/binary_oarchive.hpp>
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace domain_support {

namespace irr = irregular;
namespace mpi = boost::mpi;

struct Particle {
  std::array<double, 2> position;
  std::uint64_t id;
};

struct Particle3 {
  std::array<double, 3> position;
  std::uint64_t id;
};

// A type that needs Boost.Serialization (variable-size member).
struct Tagged {
  std::array<double, 2> position{};
  std::uint64_t id = 0;
  std::string label;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& position& id& label;
  }
};

// Clustered points: half uniform, half in three Gaussian clusters; identical on every rank.
template <int D>
std::vector<std::array<double, D>> clustered(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 0.05);
  const double centres[3][3] = {{0.25, 0.3, 0.6}, {0.7, 0.75, 0.2}, {0.6, 0.2, 0.5}};
  std::vector<std::array<double, D>> pts(n);
  for (std::size_t i = 0; i < n; ++i) {
    const bool cluster = i % 2 == 1;
    const int c = static_cast<int>(i % 3);
    for (int d = 0; d < D; ++d) {
      double x = cluster ? centres[c][d] + g(rng) : u(rng);
      pts[i][static_cast<std::size_t>(d)] = std::clamp(x, 0.0, 1.0);
    }
  }
  return pts;
}

// Which elements of the global input a rank inserts: three different splits.
// A box-box acceptance criterion: open when the hnode is large for its distance to the reader
// (monotone in the reader box: a larger box is nearer).
template <int D>
struct Mac {
  double theta;
  bool operator()(const irr::Box<D>& h, const irr::Box<D>& r) const {
    double size = 0, dist2 = 0;
    for (int d = 0; d < D; ++d) {
      size = std::max(size, h.extent(d));
      const double gap = std::max({0.0, r.lo[d] - h.hi[d], h.lo[d] - r.hi[d]});
      dist2 += gap * gap;
    }
    return size > theta * std::sqrt(dist2);
  }
};

inline bool mine(std::size_t i, std::size_t n, int split, const mpi::communicator& w) {
  const auto p = static_cast<std::size_t>(w.size()), r = static_cast<std::size_t>(w.rank());
  switch (split) {
    case 0:
      return r == 0;  // everything on rank 0
    case 1:
      return i % p == r;  // round robin
    default:
      return i * p / n == p - 1 - r;  // reversed blocks
  }
}

// Each rank inserts its share (split as in mine()) of the global points, tagged by index; build.
template <class Domain, class Point>
void insert_and_build(Domain& d, const std::vector<Point>& pts, int split) {
  std::vector<typename Domain::element_type> local;
  for (std::size_t i = 0; i < pts.size(); ++i)
    if (mine(i, pts.size(), split, d.comm())) local.push_back({pts[i], i});
  d.insert(local);
  d.build();
}

// Order-independent checksum of a set of ids and positions.
template <class E>
std::array<std::uint64_t, 3> checksum(std::span<const E> es) {
  std::array<std::uint64_t, 3> s{0, 0, 0};
  for (const auto& e : es) {
    std::uint64_t h = e.id * 0x9E3779B97F4A7C15ull;
    for (double x : e.position) {
      std::uint64_t b;
      std::memcpy(&b, &x, sizeof b);
      h ^= b + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    }
    s[0] += 1;
    s[1] += h;
    s[2] ^= h * 0xD6E8FEB86659FD93ull;
  }
  return s;
}
inline std::array<std::uint64_t, 3> global_checksum(const mpi::communicator& w,
                                                    std::array<std::uint64_t, 3> s) {
  std::array<std::uint64_t, 3> g{};
  mpi::all_reduce(w, s[0], g[0], std::plus<std::uint64_t>());
  mpi::all_reduce(w, s[1], g[1], std::plus<std::uint64_t>());
  mpi::all_reduce(w, s[2], g[2], std::bit_xor<std::uint64_t>());
  return g;
}

// All leaves of the distributed tree in rank order, on every rank (test-only gather).
template <class Domain>
struct GlobalLeaves {
  std::vector<typename Domain::index_type> starts;
  std::vector<int> levels;
  std::vector<std::uint64_t> counts;
  std::vector<int> owner;
};
template <class Domain>
GlobalLeaves<Domain> gather_leaves(const Domain& d) {
  const auto& t = d.local_tree();
  std::vector<std::uint64_t> mine_starts;  // 64-bit indices suffice for the curves tested here
  std::vector<int> mine_levels(t.levels().begin(), t.levels().end());
  for (auto s : t.starts()) mine_starts.push_back(static_cast<std::uint64_t>(s));
  std::vector<std::uint64_t> mine_counts(t.counts().begin(), t.counts().end());
  std::vector<std::vector<std::uint64_t>> s, c;
  std::vector<std::vector<int>> l;
  mpi::all_gather(d.comm(), mine_starts, s);
  mpi::all_gather(d.comm(), mine_levels, l);
  mpi::all_gather(d.comm(), mine_counts, c);
  GlobalLeaves<Domain> g;
  for (std::size_t r = 0; r < s.size(); ++r)
    for (std::size_t i = 0; i < s[r].size(); ++i) {
      g.starts.push_back(static_cast<typename Domain::index_type>(s[r][i]));
      g.levels.push_back(l[r][i]);
      g.counts.push_back(c[r][i]);
      g.owner.push_back(static_cast<int>(r));
    }
  return g;
}

// The tree a single process builds from all keys: the oracle.
template <class Domain, class P>
irr::HTree<typename Domain::curve_type> sequential_tree(const Domain& d, const std::vector<P>& pts,
                                                        std::size_t k) {
  std::vector<typename Domain::index_type> keys;
  for (const auto& x : pts) keys.push_back(d.key_of_position(x));
  std::sort(keys.begin(), keys.end());
  return irr::HTree<typename Domain::curve_type>::build(keys, irr::refine::max_elements(k));
}

template <class Domain, class Tree>
void require_same_tree(const GlobalLeaves<Domain>& g, const Tree& seq) {
  REQUIRE(g.starts.size() == seq.size());
  for (std::size_t i = 0; i < seq.size(); ++i) {
    REQUIRE(g.starts[i] == seq.start(i));
    REQUIRE(g.levels[i] == seq.level(i));
    REQUIRE(g.counts[i] == seq.element_count(i));
  }
}

// Each rank: leaves inside its segment, elements inside their leaf and sorted, splitters at leaf
// starts.
template <class Domain>
void require_consistent(Domain& d) {
  const auto seg = d.ownership().segment(d.comm().rank());
  const auto& t = d.local_tree();
  int bad = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto iv = t.interval(i);
    if (!(seg.start <= iv.start && iv.end <= seg.end)) ++bad;
    if (i > 0 && t.interval(i - 1).end != iv.start) ++bad;  // local leaves are contiguous
    auto leaf = d.leaf(i);
    if (leaf.elements.size() != t.counts()[i]) ++bad;
    for (const auto& e : leaf.elements) {
      const auto k = d.key_of(e);
      if (!iv.contains(k) || d.owner_of(e.position) != d.comm().rank()) ++bad;
    }
  }
  if (t.size() > 0 && (t.starts()[0] != seg.start || t.interval(t.size() - 1).end != seg.end))
    ++bad;
  if (t.size() == 0 && seg.start != seg.end) ++bad;
  int total_bad = 0;
  mpi::all_reduce(d.comm(), bad, total_bad, std::plus<int>());
  REQUIRE(total_bad == 0);
}

// The gathered leaves, sorted by start whichever rank holds them, equal the sequential tree of
// `where`, and the ownership map's leaf_owner names the rank that holds each leaf.
template <class Domain, class P>
void require_tree_and_leaf_owners(const Domain& d, const std::vector<P>& where, std::size_t k) {
  auto g = gather_leaves(d);
  std::vector<std::size_t> order(g.starts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return g.starts[a] < g.starts[b]; });
  const auto seq = sequential_tree(d, where, k);
  REQUIRE(order.size() == seq.size());
  for (std::size_t i = 0; i < seq.size(); ++i) {
    REQUIRE(g.starts[order[i]] == seq.start(i));
    REQUIRE(g.levels[order[i]] == seq.level(i));
    REQUIRE(g.counts[order[i]] == seq.element_count(i));
    // Ownership needs no communication: every rank computes where each leaf lives.
    REQUIRE(d.ownership().leaf_owner(seq.cell(i)) == g.owner[order[i]]);
  }
}

// Order-independent checksum of a rank's values: elements by id and position, cell data by
// their bytes (trivially copyable) or by value_hash(datum) found by ADL.
template <class Domain>
std::array<std::uint64_t, 3> local_checksum(const Domain& d) {
  if constexpr (requires { d.local_elements(); }) {
    return checksum<typename Domain::element_type>(d.local_elements());
  } else {
    std::array<std::uint64_t, 3> s{0, 0, 0};
    std::uint64_t k = 0;
    for (const auto& x : d.local_data()) {
      std::uint64_t h = 0xCBF29CE484222325ull ^ (k++ * 0x9E3779B97F4A7C15ull);
      if constexpr (std::is_trivially_copyable_v<std::decay_t<decltype(x)>>) {
        const auto* b = reinterpret_cast<const unsigned char*>(&x);
        for (std::size_t i = 0; i < sizeof x; ++i) h = (h ^ b[i]) * 0x100000001B3ull;
      } else {
        h ^= value_hash(x) * 0x100000001B3ull;
      }
      s[0] += 1;
      s[1] += h;
      s[2] ^= h * 0xD6E8FEB86659FD93ull;
    }
    return s;
  }
}

// Everything a failed call must leave as it was, as one comparable value on every rank: each
// rank's values, every leaf (start, level, count) in rank order, and the ownership map.
struct Signature {
  std::vector<std::uint64_t> values;  // each rank's local checksum, in rank order
  std::vector<std::uint64_t> leaves;  // start, level, count of every leaf, in rank order
  std::string map;                    // the serialized ownership map
  int rank = 0;                       // the rank's number in the domain's communicator
  bool operator==(const Signature&) const = default;
};
template <class Domain>
Signature signature(const Domain& d) {
  Signature s;
  const auto mine_sum = local_checksum(d);
  std::vector<std::array<std::uint64_t, 3>> sums;
  mpi::all_gather(d.comm(), mine_sum, sums);
  for (const auto& a : sums) s.values.insert(s.values.end(), a.begin(), a.end());
  std::vector<std::uint64_t> mine;
  const auto& t = d.local_tree();
  for (std::size_t i = 0; i < t.size(); ++i) {
    mine.push_back(static_cast<std::uint64_t>(t.starts()[i]));
    mine.push_back(t.levels()[i]);
    mine.push_back(t.counts()[i]);
  }
  std::vector<std::vector<std::uint64_t>> all;
  mpi::all_gather(d.comm(), mine, all);
  for (const auto& v : all) s.leaves.insert(s.leaves.end(), v.begin(), v.end());
  std::ostringstream os;
  {
    boost::archive::binary_oarchive oa(os);
    oa << d.ownership();
  }
  s.map = os.str();
  s.rank = d.comm().rank();
  return s;
}

// Runs `call` on every rank; requires that every rank threw collective_error with the same
// message and failing rank `bad` (and a message containing `needle`), and that the domain's
// signature did not change.
template <class Domain, class Call>
void require_agreed_failure(Domain& d, int bad, const std::string& needle, Call&& call) {
  const auto before = signature(d);
  std::string message;
  int failing = -2;
  bool other = false;
  try {
    call();
  } catch (const irr::collective_error& e) {
    message = e.what();
    failing = e.failing_rank();
  } catch (...) {
    other = true;
  }
  int other_any = 0;
  mpi::all_reduce(d.comm(), static_cast<int>(other), other_any, std::plus<int>());
  REQUIRE(other_any == 0);
  CAPTURE(message);
  REQUIRE(failing == bad);
  REQUIRE(message.find(needle) != std::string::npos);
  std::string root = message;
  mpi::broadcast(d.comm(), root, 0);
  REQUIRE(root == message);
  REQUIRE(signature(d) == before);
}

}  // namespace domain_support
