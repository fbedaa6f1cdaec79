// shift_segments under MPI against a sequential oracle: after a remap every rank holds exactly
// the leaves (start, level, count, payload) and the elements (id and key, in key order) that the
// new segment map gives it, and its leaf offsets index them. The layouts cover what the receive
// side treats apart: ranks that keep nothing (their arrivals land in place and become their
// arrays: whole blocks of keyed elements in their slots, the short last block moved), a message
// of exactly one block, ranks that keep a run (each message received whole and copied around
// it, several blocks of them), a start layout out of rank order (arrivals sorted locally),
// messages in pieces, and cell data keyed by their leaves (LeafKeyed).
#include <catch2/catch.hpp>

#include <irregular/core/detail/headroom.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/distributed/remap/segment_shift.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;

namespace {

using C = irr::curve::Morton<2>;
using I = C::index_type;

struct Pt {  // raw: travels as bytes
  I key;
  std::uint64_t id;
};

/// The same global tree on every rank: uniform leaves of `level`, elements with random keys
/// sorted by (key, id); counts[j] elements in leaf j.
struct World {
  int level;
  std::vector<Pt> elements;
  std::vector<std::uint64_t> counts;
  [[nodiscard]] I span() const { return irr::detail::levels_span<C>(C::max_level - level); }
  [[nodiscard]] std::size_t leaves() const { return counts.size(); }
  [[nodiscard]] std::size_t first_element(std::size_t leaf) const {
    return static_cast<std::size_t>(std::accumulate(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(leaf), std::uint64_t{0}));
  }
};

/// `per_leaf` == 0: n random elements; else exactly per_leaf elements in every leaf.
World make_world(int level, std::size_t n, std::size_t per_leaf, unsigned seed) {
  World w{level, {}, {}};
  const std::size_t leaves = std::size_t{1} << (2 * level);
  std::mt19937_64 rng(seed);
  const I sp = w.span();
  if (per_leaf == 0) {
    for (std::size_t i = 0; i < n; ++i) w.elements.push_back({static_cast<I>(rng() % (sp * leaves)), i});
  } else {
    for (std::size_t j = 0; j < leaves; ++j)
      for (std::size_t k = 0; k < per_leaf; ++k) w.elements.push_back({static_cast<I>(j * sp + rng() % sp), j * per_leaf + k});
  }
  std::sort(w.elements.begin(), w.elements.end(), [](const Pt& a, const Pt& b) { return a.key != b.key ? a.key < b.key : a.id < b.id; });
  w.counts.assign(leaves, 0);
  for (const Pt& e : w.elements) ++w.counts[static_cast<std::size_t>(e.key / sp)];
  return w;
}

/// Splitters at leaf boundaries: cut[r] is the first leaf of part r (cut[0] = 0, cut[p] = leaves).
irr::SegmentMap<C> map_of(const World& w, const std::vector<std::size_t>& cut) {
  std::vector<I> s;
  for (std::size_t c : cut) s.push_back(c == w.leaves() ? irr::SegmentMap<C>::domain_end() : static_cast<I>(c * w.span()));
  return irr::SegmentMap<C>(s);
}

std::vector<std::size_t> random_cut(std::size_t leaves, int p, std::mt19937_64& rng) {
  std::vector<std::size_t> cut(static_cast<std::size_t>(p) + 1, 0);
  for (int r = 1; r < p; ++r) cut[static_cast<std::size_t>(r)] = rng() % (leaves + 1);
  cut.back() = leaves;
  std::sort(cut.begin(), cut.end());
  return cut;
}

struct Local {
  irr::LocalLeaves<C> leaves;
  std::vector<double> payload;
  irr::detail::store_vector<Pt> elements;
  irr::detail::SpliceVector<I> keys;
  irr::detail::SpliceVector<std::size_t> offsets;
};

/// This rank's share of leaves [first, last) of the world.
Local share(const World& w, std::size_t first, std::size_t last) {
  Local l;
  l.offsets.push_back(0);
  for (std::size_t j = first; j < last; ++j) {
    l.leaves.push_back(static_cast<I>(j * w.span()), w.level, w.counts[j]);
    l.payload.push_back(0.5 * static_cast<double>(j));
    l.offsets.push_back(l.offsets.back() + w.counts[j]);
  }
  const std::size_t a = w.first_element(first), b = w.first_element(last);
  for (std::size_t i = a; i < b; ++i) {
    l.elements.push_back(w.elements[i]);
    l.keys.push_back(w.elements[i].key);
  }
  return l;
}

/// Every rank holds exactly leaves [first, last) of the world, with their elements and offsets.
void check_holds(const World& w, const Local& l, std::size_t first, std::size_t last) {
  REQUIRE(l.leaves.size() == last - first);
  REQUIRE(l.payload.size() == l.leaves.size());
  for (std::size_t j = first; j < last; ++j) {
    const std::size_t i = j - first;
    REQUIRE(l.leaves.starts()[i] == static_cast<I>(j * w.span()));
    REQUIRE(int(l.leaves.levels()[i]) == w.level);
    REQUIRE(l.leaves.counts()[i] == w.counts[j]);
    REQUIRE(l.payload[i] == 0.5 * static_cast<double>(j));
  }
  const std::size_t a = w.first_element(first), b = w.first_element(last);
  REQUIRE(l.elements.size() == b - a);
  REQUIRE(l.keys.size() == b - a);
  for (std::size_t i = a; i < b; ++i) {
    REQUIRE(l.elements[i - a].id == w.elements[i].id);
    REQUIRE(l.elements[i - a].key == w.elements[i].key);
    REQUIRE(l.keys[i - a] == w.elements[i].key);
  }
  REQUIRE(l.offsets.size() == l.leaves.size() + 1);
  REQUIRE(l.offsets[0] == 0);
  for (std::size_t i = 0; i < l.leaves.size(); ++i) REQUIRE(l.offsets[i + 1] - l.offsets[i] == l.leaves.counts()[i]);
}

/// Shifts from layout `from` (rank r holds leaves of part part_of_rank[r]) to the map `to`;
/// returns this rank's arrays after.
Local run_shift(const mpi::communicator& comm, const World& w, const std::vector<std::size_t>& from,
               const std::vector<int>& part_of_rank, const std::vector<std::size_t>& to,
               std::size_t piece_bytes = irr::detail::nbx_piece_bytes) {
  const auto me = static_cast<std::size_t>(comm.rank());
  const auto part = static_cast<std::size_t>(part_of_rank[me]);
  Local l = share(w, from[part], from[part + 1]);
  const auto sent = irr::shift_segments(comm, map_of(w, to), l.leaves, l.payload, l.elements, l.keys, &l.offsets, 99,
                                        nullptr, piece_bytes);
  REQUIRE(sent.has_value());
  // Every element that changed rank was counted once, by its sender (the collective comes before
  // the local checks, so a failing rank does not leave the others waiting in it).
  const auto counted = mpi::all_reduce(comm, sent->elements, std::plus<>());
  check_holds(w, l, to[me], to[me + 1]);
  std::uint64_t moved = 0;
  for (std::size_t r = 0; r < static_cast<std::size_t>(comm.size()); ++r) {
    const std::size_t pr = static_cast<std::size_t>(part_of_rank[r]);
    const std::size_t lo = std::max(from[pr], to[r]), hi = std::min(from[pr + 1], to[r + 1]);
    moved += w.first_element(from[pr + 1]) - w.first_element(from[pr]) - (lo < hi ? w.first_element(hi) - w.first_element(lo) : 0);
  }
  REQUIRE(counted == moved);
  return l;
}

std::vector<int> identity(int p) {
  std::vector<int> v(static_cast<std::size_t>(p));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

}  // namespace

TEST_CASE("shift_segments: everything to the last rank, its arrivals become its arrays", "[segment_shift][mpi]") {
  mpi::communicator comm;
  const int p = comm.size();
  const World w = make_world(5, 150'000, 0, 7);  // messages of more than one block at small p
  std::mt19937_64 rng(11);
  const auto from = random_cut(w.leaves(), p, rng);
  std::vector<std::size_t> to(static_cast<std::size_t>(p) + 1, 0);
  to.back() = w.leaves();
  run_shift(comm, w, from, identity(p), to);
}

TEST_CASE("shift_segments: random maps, kept runs and several partners", "[segment_shift][mpi]") {
  mpi::communicator comm;
  const int p = comm.size();
  const World w = make_world(5, 120'000, 0, 3);
  std::mt19937_64 rng(5);
  for (int round = 0; round < 6; ++round) {
    const auto from = random_cut(w.leaves(), p, rng), to = random_cut(w.leaves(), p, rng);
    run_shift(comm, w, from, identity(p), to);
  }
}

TEST_CASE("shift_segments: a message of exactly one block, and one block and one element", "[segment_shift][mpi]") {
  mpi::communicator comm;
  const int p = comm.size();
  if (p < 2) return;
  const World w = make_world(9, 0, 1, 13);  // one element per leaf: cuts count elements exactly
  const std::size_t K = irr::detail::block_elements;
  std::vector<std::size_t> from(static_cast<std::size_t>(p) + 1, w.leaves()), to(from);
  from[0] = to[0] = 0;  // rank 0 holds everything, then sends K to rank 1 and K + 1 to rank 2
  to[1] = w.leaves() - K - (p > 2 ? K + 1 : 0);
  to[2] = to[1] + K;
  const Local l = run_shift(comm, w, from, identity(p), to);
  // Ranks that kept nothing took their landing arrays: those have room on both sides, so that
  // the next remap splices around the run instead of moving it.
  if (comm.rank() == 1 || comm.rank() == 2) {
    REQUIRE(l.elements.front_room() >= l.elements.size() / 4);
    REQUIRE(l.keys.front_room() >= l.keys.size() / 4);
    REQUIRE(l.elements.capacity() >= l.elements.size() + l.elements.size() / 4);
  }
}

TEST_CASE("shift_segments: a start layout out of rank order is sorted on arrival", "[segment_shift][mpi]") {
  mpi::communicator comm;
  const int p = comm.size();
  const World w = make_world(5, 40'000, 0, 17);
  std::mt19937_64 rng(19);
  auto parts = identity(p);
  std::reverse(parts.begin(), parts.end());  // rank r holds part p-1-r
  for (int round = 0; round < 3; ++round) run_shift(comm, w, random_cut(w.leaves(), p, rng), parts, random_cut(w.leaves(), p, rng));
}

TEST_CASE("shift_segments: messages in pieces", "[segment_shift][mpi]") {
  mpi::communicator comm;
  const int p = comm.size();
  const World w = make_world(5, 100'000, 0, 23);
  std::mt19937_64 rng(29);
  for (int round = 0; round < 3; ++round)
    run_shift(comm, w, random_cut(w.leaves(), p, rng), identity(p), random_cut(w.leaves(), p, rng), 4096);
}

TEST_CASE("shift_segments: cell data keyed by their leaves, in and out of rank order", "[segment_shift][mpi]") {
  mpi::communicator comm;
  const int p = comm.size();
  const auto me = static_cast<std::size_t>(comm.rank());
  const World w = make_world(7, 0, 1, 31);  // the datum of leaf j is element j
  std::mt19937_64 rng(37);
  for (bool reversed : {false, true}) {
    auto parts = identity(p);
    if (reversed) std::reverse(parts.begin(), parts.end());
    const auto from = random_cut(w.leaves(), p, rng), to = random_cut(w.leaves(), p, rng);
    const auto part = static_cast<std::size_t>(parts[me]);
    Local l = share(w, from[part], from[part + 1]);
    irr::LeafKeyed keyed;
    const auto sent = irr::shift_segments(comm, map_of(w, to), l.leaves, l.payload, l.elements, keyed,
                                          irr::no_offsets, 98);
    REQUIRE(sent.has_value());
    REQUIRE(l.leaves.size() == to[me + 1] - to[me]);
    REQUIRE(l.elements.size() == l.leaves.size());
    for (std::size_t i = 0; i < l.leaves.size(); ++i) {
      const std::size_t j = to[me] + i;
      REQUIRE(l.leaves.starts()[i] == static_cast<I>(j * w.span()));
      REQUIRE(l.leaves.counts()[i] == 1);
      REQUIRE(l.payload[i] == 0.5 * static_cast<double>(j));
      REQUIRE(l.elements[i].id == w.elements[j].id);
    }
  }
}

TEST_CASE("shift_segments: a rank that keeps a run receives a message of several blocks", "[segment_shift][mpi]") {
  mpi::communicator comm;
  const int p = comm.size();
  if (p < 2) return;
  const World w = make_world(6, 300'000, 0, 41);  // about 4.6 blocks of keyed elements
  const auto P = static_cast<std::size_t>(p);
  // Rank 0 holds every leaf but the last, which rank p-1 holds and keeps; then all go to p-1.
  std::vector<std::size_t> from(P + 1, w.leaves() - 1), to(P + 1, 0);
  from[0] = 0;
  from[P] = to[P] = w.leaves();
  run_shift(comm, w, from, identity(p), to);
}
