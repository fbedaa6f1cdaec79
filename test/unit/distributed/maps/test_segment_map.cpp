// SegmentMap, the SFC ownership map: owner lookups, private H-Tree roots and neighbour ranks
// checked against brute force over all cells of a small level.
#include <catch2/catch.hpp>

#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>
#include <irregular/distributed/maps/segment_map.hpp>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

namespace irr = irregular;

namespace {

// Random splitters aligned to cells of `level`, so every segment is a union of level cells.
template <class C>
std::vector<typename C::index_type> aligned_splitters(int parts, int level, std::mt19937_64& rng) {
  using I = typename C::index_type;
  const I cells = irr::ipow<I>(static_cast<I>(C::arity), C::dim * level);
  const I w = irr::SegmentMap<C>::domain_end() / cells;
  std::uniform_int_distribution<std::uint64_t> pick(0, static_cast<std::uint64_t>(cells));
  std::vector<I> s{0, irr::SegmentMap<C>::domain_end()};
  for (int k = 1; k < parts; ++k) s.push_back(static_cast<I>(pick(rng)) * w);
  std::sort(s.begin(), s.end());
  return s;
}

template <class C>
void check_map(int parts, int level, unsigned seed) {
  using I = typename C::index_type;
  constexpr int D = C::dim;
  std::mt19937_64 rng(seed);
  const auto spl = aligned_splitters<C>(parts, level, rng);
  CAPTURE(seed, parts, level);
  const irr::SegmentMap<C> map(spl);
  REQUIRE(map.parts() == parts);
  const irr::coord_t n = irr::ipow<irr::coord_t>(static_cast<irr::coord_t>(C::arity), level);
  const I digits = irr::ipow<I>(static_cast<I>(C::arity), D);

  // Private roots tile each segment in order, are aligned hnodes, and are maximal.
  for (int r = 0; r < parts; ++r) {
    const auto seg = map.segment(r);
    I pos = seg.start;
    for (const auto& root : map.private_roots(r)) {
      const auto iv = irr::curve::hnode_interval<C>(root);
      REQUIRE(iv.start == pos);
      REQUIRE(iv.end <= seg.end);
      if (root.level > 0) {  // the parent would leave the segment
        const auto parent = irr::curve::hnode_interval<C>(irr::curve::ancestor_at<C>(root, root.level - 1));
        REQUIRE_FALSE((seg.start <= parent.start && parent.end <= seg.end));
      }
      REQUIRE(map.owner(root) == r);
      pos = iv.end;
    }
    REQUIRE(pos == seg.end);
    REQUIRE(map.private_roots(r).size() <= static_cast<std::size_t>(2 * C::max_level * (digits - 1)));
  }

  // Brute force over every cell of `level`: owners by definition, and adjacency.
  std::vector<std::set<int>> adjacent(static_cast<std::size_t>(parts));
  std::vector<int> owner_of_cell;
  std::vector<irr::Cell<D>> cells;
  irr::Cell<D> c;
  c.level = level;
  const std::size_t total = static_cast<std::size_t>(irr::ipow<irr::coord_t>(n, D));
  for (std::size_t k = 0; k < total; ++k) {
    std::size_t t = k;
    for (int d = 0; d < D; ++d) { c.anchor[d] = t % n; t /= n; }
    const auto iv = irr::curve::hnode_interval<C>(c);
    int owner = -1;
    for (int r = 0; r < parts; ++r)
      if (map.segment(r).contains(iv.start)) owner = r;
    REQUIRE(map.owner(c) == owner);
    REQUIRE(map.owners(c) == std::vector<int>{owner});
    cells.push_back(c);
    owner_of_cell.push_back(owner);
  }
  auto index_of = [&](const irr::Cell<D>& x) {
    std::size_t k = 0, m = 1;
    for (int d = 0; d < D; ++d) { k += x.anchor[d] * m; m *= n; }
    return k;
  };
  for (std::size_t k = 0; k < total; ++k) {
    const int combos = D == 2 ? 9 : 27;
    for (int m = 0; m < combos; ++m) {
      irr::Cell<D> nb = cells[k];
      bool inside = true;
      for (int d = 0, t = m; d < D; ++d, t /= 3) {
        const long x = static_cast<long>(nb.anchor[d]) + t % 3 - 1;
        if (x < 0 || x >= static_cast<long>(n)) inside = false;
        nb.anchor[d] = static_cast<irr::coord_t>(x);
      }
      if (!inside) continue;
      const int a = owner_of_cell[k], b = owner_of_cell[index_of(nb)];
      if (a != b) adjacent[static_cast<std::size_t>(a)].insert(b);
    }
  }
  for (int r = 0; r < parts; ++r) {
    const auto got = map.neighbour_ranks(r);
    const std::vector<int> expected(adjacent[static_cast<std::size_t>(r)].begin(), adjacent[static_cast<std::size_t>(r)].end());
    REQUIRE(got == expected);
  }
  // A cell spanning several segments has owner -1 and lists every non-empty segment it meets.
  const irr::Cell<D> root{};
  const auto all = map.owners(root);
  int nonempty = 0;
  for (int r = 0; r < parts; ++r) nonempty += map.segment(r).start < map.segment(r).end ? 1 : 0;
  REQUIRE(static_cast<int>(all.size()) == nonempty);
  REQUIRE(map.owner(root) == (nonempty == 1 ? all[0] : -1));
}

}  // namespace

TEST_CASE("SegmentMap: owners, private roots and neighbour ranks equal brute force", "[dist][segment_map]") {
  for (unsigned seed = 1; seed <= 12; ++seed) {
    check_map<irr::curve::Morton<2>>(1 + static_cast<int>(seed % 7), 4, seed);
    check_map<irr::curve::Hilbert<2>>(1 + static_cast<int>(seed % 7), 4, seed);
    check_map<irr::curve::Peano<2>>(1 + static_cast<int>(seed % 7), 2, seed);
    check_map<irr::curve::Hilbert<3>>(1 + static_cast<int>(seed % 5), 2, seed);
  }
}

TEST_CASE("SegmentMap rejects malformed splitters", "[dist][segment_map][errors]") {
  using C = irr::curve::Morton<2>;
  const auto end = irr::SegmentMap<C>::domain_end();
  REQUIRE_THROWS_AS(irr::SegmentMap<C>(std::vector<std::uint64_t>{0}), irr::invalid_argument);
  REQUIRE_THROWS_AS(irr::SegmentMap<C>(std::vector<std::uint64_t>{1, end}), irr::invalid_argument);
  REQUIRE_THROWS_AS(irr::SegmentMap<C>(std::vector<std::uint64_t>{0, 5, 3, end}), irr::invalid_argument);
  REQUIRE_THROWS_AS(irr::SegmentMap<C>(std::vector<std::uint64_t>{0, end - 1}), irr::invalid_argument);
  REQUIRE_THROWS_AS(irr::SegmentMap<C>(0), irr::invalid_argument);
  const irr::SegmentMap<C> one(3);  // everything on rank 0
  REQUIRE(one.owner(std::uint64_t{12345}) == 0);
  REQUIRE(one.owners(irr::Cell<2>{}) == std::vector<int>{0});
  REQUIRE(one.neighbour_ranks(0).empty());
}

#include <irregular/distributed/htree/replicated_htree.hpp>

TEST_CASE("the replicated H-Tree: private roots tile the domain, ancestors are shared", "[dist][replicated]") {
  using C = irr::curve::Hilbert<2>;
  std::mt19937_64 rng(77);
  for (int parts : {1, 2, 3, 5, 8}) {
    CAPTURE(parts);
    const irr::SegmentMap<C> map(aligned_splitters<C>(parts, 6, rng));
    const irr::ReplicatedHTree<C> rep(map);
    // Leaves tile [0, end) in order and each is owned by the segment holding it.
    std::uint64_t pos = 0;
    for (const auto& h : rep.leaves()) {
      REQUIRE(h.interval.start == pos);
      REQUIRE(h.owner == map.owner(h.interval.start));
      REQUIRE(map.owner(h.cell) == h.owner);
      REQUIRE(&rep.leaf_containing(h.interval.end - 1) == &h);
      pos = h.interval.end;
    }
    REQUIRE(pos == irr::SegmentMap<C>::domain_end());
    // Internal hnodes are exactly the strict ancestors of leaves; each spans several ranks.
    std::set<std::pair<int, std::uint64_t>> expected;
    for (const auto& h : rep.leaves())
      for (int l = 0; l < h.cell.level; ++l)
        expected.insert({l, irr::curve::hnode_interval<C>(irr::curve::ancestor_at<C>(h.cell, l)).start});
    REQUIRE(rep.internal().size() == expected.size());
    for (const auto& h : rep.internal()) {
      REQUIRE(expected.count({h.cell.level, h.interval.start}) == 1);
      REQUIRE(h.owner == -1);
      REQUIRE(map.owners(h.cell).size() >= 2);
    }
    // O(p · depth): bounded by the private-root bound times (depth + 1).
    REQUIRE(rep.size() <= static_cast<std::size_t>(parts) * 2 * C::max_level * 3 * (C::max_level + 1));
  }
}
