// The OwnershipMap concept, checked the same way for every map (SegmentMap, RectangleMap) and
// curve: owner, leaf_owner, holders, neighbour_ranks (periodic or not), splits, hold_whole and
// Boost.Serialization against brute force over every cell of a small level L.
#include <catch2/catch.hpp>

#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/maps/rectangle_map.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/rect/registry.hpp>

#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace irr = irregular;

namespace {

/// What the random instances exercised, so the suite cannot silently degenerate.
struct Coverage {
  int whole_held = 0;          // whole-held cells (RectangleMap) / splitters moved (SegmentMap)
  int periodic_differs = 0;    // neighbour sets that change with periodicity
  int whole_held_differs = 0;  // neighbour sets that change with the whole-held cells
};
Coverage coverage;

template <class C>
constexpr int small_level() {
  return C::arity == 3 ? 2 : (C::dim == 2 ? 4 : 3);
}

/// Every cell of level L, by its curve index at L, and helpers to name them.
template <class C>
struct World {
  using I = typename C::index_type;
  static constexpr int D = C::dim;
  int L = small_level<C>();
  irr::coord_t n = irr::ipow<irr::coord_t>(static_cast<irr::coord_t>(C::arity), L);
  std::size_t count = static_cast<std::size_t>(irr::ipow<irr::coord_t>(n, D));
  I w = irr::ipow<I>(static_cast<I>(C::arity), D * (C::max_level - L));  // finest indices per cell
  std::vector<irr::Cell<D>> cells;  // cells[k]: the level-L cell of curve index k

  World() {
    cells.resize(count);
    for (std::size_t k = 0; k < count; ++k) cells[k] = C::cell(static_cast<I>(k), L);
  }
  /// Is `a` (level <= L) an ancestor of (or equal to) level-L cell x?
  static bool covers(const irr::Cell<D>& a, const irr::Cell<D>& x) {
    if (a.level > x.level) return false;
    const auto f = irr::ipow<irr::coord_t>(static_cast<irr::coord_t>(C::arity), x.level - a.level);
    for (int d = 0; d < D; ++d)
      if (x.anchor[d] / f != a.anchor[d]) return false;
    return true;
  }
  /// Level-L curve indices inside cell c (c.level <= L).
  std::vector<std::size_t> inside(const irr::Cell<D>& c) const {
    const auto iv = irr::curve::hnode_interval<C>(c);
    std::vector<std::size_t> r;
    for (I k = iv.start / w; k < iv.end / w; ++k) r.push_back(static_cast<std::size_t>(k));
    return r;
  }
  /// Every cell of levels 0..L.
  std::vector<irr::Cell<D>> all_cells() const {
    std::vector<irr::Cell<D>> r;
    for (int l = 0; l <= L; ++l) {
      const auto m = static_cast<std::size_t>(irr::ipow<irr::coord_t>(static_cast<irr::coord_t>(C::arity), D * l));
      for (std::size_t k = 0; k < m; ++k) r.push_back(C::cell(static_cast<I>(k), l));
    }
    return r;
  }
};

/// Random index below `bound` (works for 128-bit indices).
template <class I>
I random_below(I bound, std::mt19937_64& rng) {
  I x = static_cast<I>(rng());
  if constexpr (sizeof(I) > 8) x = (x << 64) | static_cast<I>(rng());
  return x % bound;
}

/// The leaves of a random tree whose leaves are at levels 0..L.
template <class C>
void random_leaves(const irr::Cell<C::dim>& c, int L, std::mt19937_64& rng, std::vector<irr::Cell<C::dim>>& out) {
  std::bernoulli_distribution split(c.level == 0 ? 0.85 : 0.6);
  if (c.level == L || !split(rng)) {
    out.push_back(c);
    return;
  }
  const auto st = irr::curve::state_of<C>(c);
  for (int k = 0; k < irr::ipow<int>(C::arity, C::dim); ++k)
    random_leaves<C>(irr::curve::child_in_curve_order<C>(c, st, k), L, rng, out);
}

/// Brute-force facts a map must reproduce: who holds every level-L cell, which cells split, and
/// the whole-held cells (for RectangleMap; the cells given to hold_whole for SegmentMap).
template <class C>
struct Oracle {
  std::vector<int> holder;                  // by level-L curve index
  std::vector<int> grid_holder;             // the same, ignoring the whole-held cells
  int grid_level = 0;                       // holders() is exact for cells at or below it
  std::vector<irr::Cell<C::dim>> whole;     // cells held whole
  std::function<bool(const irr::Cell<C::dim>&)> splits;
};

/// The ranks whose level-L cells touch rank's (closed boxes meet, wrapping on periodic axes).
template <class C>
std::vector<int> brute_neighbours(const World<C>& w, const std::vector<int>& holder, int rank,
                                  const irr::Periodicity<C::dim>& per) {
  constexpr int D = C::dim;
  std::set<int> out;
  std::vector<int> at(w.count);  // holder by row-major position
  auto pos = [&](const irr::Cell<D>& c) {
    std::size_t k = 0, m = 1;
    for (int d = 0; d < D; ++d) { k += static_cast<std::size_t>(c.anchor[d]) * m; m *= w.n; }
    return k;
  };
  for (std::size_t k = 0; k < w.count; ++k) at[pos(w.cells[k])] = holder[k];
  const int combos = D == 2 ? 9 : 27;
  const auto n = static_cast<long>(w.n);
  for (std::size_t k = 0; k < w.count; ++k) {
    if (holder[k] != rank) continue;
    for (int m = 0; m < combos; ++m) {
      irr::Cell<D> nb = w.cells[k];
      bool inside = true;
      for (int d = 0, t = m; d < D; ++d, t /= 3) {
        long x = static_cast<long>(nb.anchor[d]) + t % 3 - 1;
        if (per[d]) x = (x + n) % n;
        if (x < 0 || x >= n) inside = false;
        nb.anchor[d] = static_cast<irr::coord_t>(x);
      }
      if (inside && at[pos(nb)] != rank) out.insert(at[pos(nb)]);
    }
  }
  return {out.begin(), out.end()};
}

/// Every check of the OwnershipMap contract against the oracle.
template <class Map>
void check_map(const Map& m, const World<typename Map::curve_type>& w, const Oracle<typename Map::curve_type>& o,
               std::mt19937_64& rng) {
  using C = typename Map::curve_type;
  using I = typename C::index_type;
  constexpr int D = C::dim;
  const int P = m.parts();

  // owner(i): at each level-L cell's first, last and a random interior index.
  for (std::size_t k = 0; k < w.count; ++k) {
    const I start = static_cast<I>(k) * w.w;
    CAPTURE(k);
    REQUIRE(m.owner(start) == o.holder[k]);
    REQUIRE(m.owner(static_cast<I>(start + w.w - 1)) == o.holder[k]);
    REQUIRE(m.owner(static_cast<I>(start + random_below<I>(w.w, rng))) == o.holder[k]);
  }

  // leaf_owner: inside a whole-held cell every index is held by the cell's leaf_owner; a
  // level-L cell outside them is held by its leaf_owner.
  std::vector<char> in_whole(w.count, 0);
  for (const auto& c : o.whole) {
    CAPTURE(c.level, c.anchor);
    REQUIRE_FALSE(m.leaf_owner(c) < 0);
    for (std::size_t k : w.inside(c)) {
      in_whole[k] = 1;
      REQUIRE(o.holder[k] == m.leaf_owner(c));
      REQUIRE(m.owner(static_cast<I>(k) * w.w) == m.leaf_owner(c));
    }
  }
  for (std::size_t k = 0; k < w.count; ++k)
    if (!in_whole[k]) REQUIRE(m.leaf_owner(w.cells[k]) == o.holder[k]);
  // any cell's leaf_owner: the holder of its first index, ignoring the whole-held cells
  for (const auto& c : w.all_cells()) {
    CAPTURE(c.level, c.anchor);
    REQUIRE(m.leaf_owner(c) == o.grid_holder[w.inside(c).front()]);
  }

  // holders(cell) and splits(cell) for every cell of levels 0..L.
  for (const auto& c : w.all_cells()) {
    std::set<int> s;
    bool inside_whole = false;
    for (const auto& h : o.whole) inside_whole = inside_whole || World<C>::covers(h, c);
    for (std::size_t k : w.inside(c)) s.insert(o.holder[k]);
    const std::vector<int> expected(s.begin(), s.end());
    const auto got = m.holders(irr::curve::hnode_interval<C>(c));
    CAPTURE(c.level, c.anchor, expected, got);
    REQUIRE(std::is_sorted(got.begin(), got.end()));
    REQUIRE(std::adjacent_find(got.begin(), got.end()) == got.end());
    REQUIRE(std::includes(got.begin(), got.end(), expected.begin(), expected.end()));
    for (int r : got) REQUIRE((r >= 0 && r < P));
    if (Map::contiguous_segments || c.level >= o.grid_level || inside_whole) REQUIRE(got == expected);
    REQUIRE(m.splits(c) == o.splits(c));
  }

  // holders(interval) for random intervals, aligned to level-L cells or not.
  const I end = static_cast<I>(w.count) * w.w;
  for (int t = 0; t < 200; ++t) {
    I a = random_below<I>(end, rng), b = random_below<I>(end, rng);
    if (a > b) std::swap(a, b);
    if (t % 2 == 0) { a -= a % w.w; b -= b % w.w; }
    b += 1;
    std::set<int> s;
    for (I k = a / w.w; k <= (b - 1) / w.w; ++k) s.insert(o.holder[static_cast<std::size_t>(k)]);
    const std::vector<int> expected(s.begin(), s.end());
    const auto got = m.holders(irr::IndexInterval<I>{a, b});
    CAPTURE(t, expected, got);
    REQUIRE(std::is_sorted(got.begin(), got.end()));
    REQUIRE(std::includes(got.begin(), got.end(), expected.begin(), expected.end()));
    if (Map::contiguous_segments) REQUIRE(got == expected);
  }
  REQUIRE(m.holders(irr::IndexInterval<I>{5, 5}).empty());

  // neighbour_ranks, periodic on no axis, every axis and random axes.
  std::vector<irr::Periodicity<D>> pers(2);
  pers[1].fill(true);
  for (int t = 0; t < 2; ++t) {
    irr::Periodicity<D> p;
    for (auto& x : p) x = (rng() & 1) != 0;
    pers.push_back(p);
  }
  for (const auto& per : pers)
    for (int r = 0; r < P; ++r) {
      CAPTURE(r, per);
      const auto expected = brute_neighbours<C>(w, o.holder, r, per);
      REQUIRE(m.neighbour_ranks(r, per) == expected);
      if (expected != brute_neighbours<C>(w, o.holder, r, irr::Periodicity<D>{})) ++coverage.periodic_differs;
    }
  for (int r = 0; r < P; ++r) REQUIRE(m.neighbour_ranks(r) == m.neighbour_ranks(r, irr::Periodicity<D>{}));

  // Serialization round trip: equal, and the same answers.
  std::stringstream ss;
  {
    boost::archive::binary_oarchive oa(ss);
    oa << m;
  }
  Map back;
  {
    boost::archive::binary_iarchive ia(ss);
    ia >> back;
  }
  REQUIRE(back == m);
  REQUIRE(back.parts() == P);
  for (std::size_t k = 0; k < w.count; ++k) REQUIRE(back.owner(static_cast<I>(k) * w.w) == o.holder[k]);
  for (const auto& c : w.all_cells()) {
    REQUIRE(back.holders(irr::curve::hnode_interval<C>(c)) == m.holders(irr::curve::hnode_interval<C>(c)));
    REQUIRE(back.leaf_owner(c) == m.leaf_owner(c));
    REQUIRE(back.splits(c) == m.splits(c));
  }
  for (int r = 0; r < P; ++r) REQUIRE(back.neighbour_ranks(r, pers[1]) == m.neighbour_ranks(r, pers[1]));
}

// ---- SegmentMap -------------------------------------------------------------------------------

template <class C>
Oracle<C> segment_oracle(const World<C>& w, const std::vector<typename C::index_type>& spl) {
  Oracle<C> o;
  o.grid_level = w.L;
  o.holder.resize(w.count);
  for (std::size_t k = 0; k < w.count; ++k) {
    const auto i = static_cast<typename C::index_type>(k) * w.w;
    for (std::size_t r = 0; r + 1 < spl.size(); ++r)
      if (spl[r] <= i && i < spl[r + 1]) o.holder[k] = static_cast<int>(r);
  }
  o.grid_holder = o.holder;
  o.splits = [&w, h = o.holder](const irr::Cell<C::dim>& c) {
    std::set<int> s;
    for (std::size_t k : w.inside(c)) s.insert(h[k]);
    return s.size() > 1;
  };
  return o;
}

template <class C>
void run_segment(unsigned seed) {
  using I = typename C::index_type;
  using Map = irr::SegmentMap<C>;
  static_assert(irr::OwnershipMap<Map>);
  const World<C> w;
  std::mt19937_64 rng(seed);
  const int P = 1 + static_cast<int>(rng() % 7);
  CAPTURE(seed, P);
  // splitters on level-L cells, with repeats (empty segments)
  std::vector<I> spl{0, Map::domain_end()};
  for (int k = 1; k < P; ++k)
    spl.push_back(k > 1 && rng() % 4 == 0 ? spl.back() : random_below<I>(static_cast<I>(w.count + 1), rng) * w.w);
  std::sort(spl.begin(), spl.end());
  const Map m(spl);
  auto o = segment_oracle<C>(w, spl);
  check_map(m, w, o, rng);

  // hold_whole: splitters strictly inside the cells move to their starts, nothing else moves.
  std::vector<irr::Cell<C::dim>> leaves;
  random_leaves<C>(irr::Cell<C::dim>{}, w.L, rng, leaves);
  std::vector<irr::Cell<C::dim>> chosen;
  for (const auto& c : leaves)
    if (rng() % 2 == 0) chosen.push_back(c);
  auto expected = spl;
  for (const auto& c : chosen) {
    const auto iv = irr::curve::hnode_interval<C>(c);
    for (auto& s : expected)
      if (iv.start < s && s < iv.end) s = iv.start;
  }
  const Map held = m.hold_whole(chosen);
  REQUIRE(held.splitters() == expected);
  if (expected != spl) ++coverage.whole_held;
  auto oh = segment_oracle<C>(w, expected);
  oh.whole = chosen;
  for (const auto& c : chosen) REQUIRE_FALSE(held.splits(c));
  check_map(held, w, oh, rng);
}

// ---- RectangleMap -----------------------------------------------------------------------------

template <class C>
bool rect_splits(const irr::rect::Partition<C::dim>& part, int g, const irr::Cell<C::dim>& c) {
  if (c.level >= g) return false;
  const auto f = irr::ipow<irr::coord_t>(static_cast<irr::coord_t>(C::arity), g - c.level);
  int meet = 0;
  for (const auto& r : part.parts) {
    bool ok = !r.empty();
    for (int d = 0; d < C::dim; ++d)
      ok = ok && r.lo[d] < (c.anchor[d] + 1) * f && c.anchor[d] * f < r.hi[d];
    meet += ok ? 1 : 0;
  }
  return meet > 1;
}

/// Who holds each level-L cell: the owner of the whole-held cell around it (the rectangle
/// holding the whole-held cell's first grid cell), else the rectangle holding its grid cell.
template <class C>
Oracle<C> rect_oracle(const World<C>& w, const irr::rect::Partition<C::dim>& part, int g,
                      const std::vector<irr::Cell<C::dim>>& whole) {
  constexpr int D = C::dim;
  auto grid_holder = [&](const irr::Cell<D>& x) {  // x at level >= g
    const auto f = irr::ipow<irr::coord_t>(static_cast<irr::coord_t>(C::arity), x.level - g);
    std::array<std::size_t, D> at;
    for (int d = 0; d < D; ++d) at[d] = static_cast<std::size_t>(x.anchor[d] / f);
    int r = -1;
    for (std::size_t k = 0; k < part.parts.size(); ++k)
      if (part.parts[k].contains(at)) { REQUIRE(r == -1); r = static_cast<int>(k); }
    REQUIRE(r >= 0);
    return r;
  };
  Oracle<C> o;
  o.grid_level = g;
  o.whole = whole;
  o.holder.resize(w.count);
  for (std::size_t k = 0; k < w.count; ++k) o.grid_holder.push_back(grid_holder(w.cells[k]));
  for (std::size_t k = 0; k < w.count; ++k) {
    o.holder[k] = o.grid_holder[k];
    for (const auto& h : whole)
      if (World<C>::covers(h, w.cells[k])) {
        const auto first = irr::curve::hnode_interval<C>(h).start / w.w;
        o.holder[k] = grid_holder(w.cells[static_cast<std::size_t>(first)]);
      }
  }
  o.splits = [part, g](const irr::Cell<D>& c) { return rect_splits<C>(part, g, c); };
  return o;
}

template <class C>
void run_rectangle(unsigned seed) {
  using Map = irr::RectangleMap<C>;
  static_assert(irr::OwnershipMap<Map>);
  constexpr int D = C::dim;
  const World<C> w;
  std::mt19937_64 rng(seed);
  const int P = 1 + static_cast<int>(rng() % 9);
  const int g = static_cast<int>(rng() % static_cast<unsigned>(w.L + 1));
  const auto names = irr::rect::partitioner_names<D>();
  const std::string name = names[rng() % names.size()];
  CAPTURE(seed, P, g, name);
  const auto gn = static_cast<std::size_t>(irr::ipow<irr::coord_t>(static_cast<irr::coord_t>(C::arity), g));
  std::array<std::size_t, D> ext;
  ext.fill(gn);
  std::vector<double> load(static_cast<std::size_t>(irr::ipow<std::size_t>(gn, D)));
  for (auto& x : load) x = rng() % 3 == 0 ? 0.0 : static_cast<double>(rng() % 100);
  const irr::rect::LoadGrid<double, D> grid(ext, std::move(load));
  const Map m(g, irr::rect::make_partitioner<double, D>(name)(grid, grid.box(), static_cast<std::size_t>(P)));
  REQUIRE(m.parts() == P);
  REQUIRE(m.exceptions().empty());
  check_map(m, w, rect_oracle<C>(w, m.partition(), g, {}), rng);

  // owners(cell): the non-empty rectangles meeting the cell's grid block.
  for (const auto& c : w.all_cells()) {
    std::vector<int> expected;
    const int l = std::min(c.level, g);
    const auto a = c.level > g ? irr::curve::ancestor_at<C>(c, g) : c;
    const auto f = irr::ipow<irr::coord_t>(static_cast<irr::coord_t>(C::arity), g - l);
    for (std::size_t k = 0; k < m.partition().parts.size(); ++k) {
      const auto& r = m.partition().parts[k];
      bool ok = !r.empty();
      for (int d = 0; d < D; ++d) ok = ok && r.lo[d] < (a.anchor[d] + 1) * f && a.anchor[d] * f < r.hi[d];
      if (ok) expected.push_back(static_cast<int>(k));
    }
    REQUIRE(m.owners(c) == expected);
  }

  // hold_whole twice: the second list replaces the first; only the cells that split are kept.
  Map held = m;
  for (int round = 0; round < 2; ++round) {
    std::vector<irr::Cell<D>> leaves;
    random_leaves<C>(irr::Cell<D>{}, w.L, rng, leaves);
    std::vector<irr::Cell<D>> splitting;
    for (const auto& c : leaves)
      if (rect_splits<C>(m.partition(), g, c)) splitting.push_back(c);
    CAPTURE(round, splitting.size());
    held = held.hold_whole(leaves);
    REQUIRE(held.exceptions().size() == splitting.size());
    for (std::size_t k = 0; k < splitting.size(); ++k) {  // leaves come in curve order
      REQUIRE(held.exceptions()[k].cell == splitting[k]);
      REQUIRE(held.exceptions()[k].owner == held.leaf_owner(splitting[k]));
    }
    const auto o = rect_oracle<C>(w, m.partition(), g, splitting);
    check_map(held, w, o, rng);
    coverage.whole_held += static_cast<int>(splitting.size());
    const auto plain = rect_oracle<C>(w, m.partition(), g, {});
    irr::Periodicity<D> all;
    all.fill(true);
    for (int r = 0; r < P; ++r)
      for (const auto& per : {irr::Periodicity<D>{}, all})
        if (brute_neighbours<C>(w, o.holder, r, per) != brute_neighbours<C>(w, plain.holder, r, per))
          ++coverage.whole_held_differs;
  }
}

using M2 = irr::curve::Morton<2>;
using H2 = irr::curve::Hilbert<2>;
using P2 = irr::curve::Peano<2>;
using M3 = irr::curve::Morton<3>;
using H3 = irr::curve::Hilbert<3>;
using P3 = irr::curve::Peano<3>;
using M2w = irr::curve::Morton<2, irr::uint128_t>;  // 128-bit indices travel as two halves

}  // namespace

TEMPLATE_TEST_CASE("SegmentMap satisfies OwnershipMap against brute force", "[dist][ownership_map][segment_map]",
                   M2, H2, P2, M3, H3, P3, M2w) {
  const unsigned seeds = TestType::arity == 3 && TestType::dim == 3 ? 4 : 12;
  coverage = {};
  for (unsigned seed = 1; seed <= seeds; ++seed) run_segment<TestType>(seed);
  CAPTURE(coverage.whole_held, coverage.periodic_differs);
  REQUIRE(coverage.whole_held > 0);
  REQUIRE(coverage.periodic_differs > 0);
}

TEMPLATE_TEST_CASE("RectangleMap satisfies OwnershipMap against brute force", "[dist][ownership_map][rectangle_map]",
                   M2, H2, P2, M3, H3, P3, M2w) {
  const unsigned seeds = TestType::arity == 3 && TestType::dim == 3 ? 6 : 20;
  coverage = {};
  for (unsigned seed = 1; seed <= seeds; ++seed) run_rectangle<TestType>(seed);
  CAPTURE(coverage.whole_held, coverage.periodic_differs, coverage.whole_held_differs);
  REQUIRE(coverage.whole_held > 0);
  REQUIRE(coverage.periodic_differs > 0);
  REQUIRE(coverage.whole_held_differs > 0);
}

TEST_CASE("RectangleMap: defaults, bad input, malformed archives", "[dist][ownership_map][rectangle_map][errors]") {
  using Map = irr::RectangleMap<H2>;
  const Map one;
  REQUIRE(one.parts() == 1);
  REQUIRE(one.owner(std::uint64_t{12345}) == 0);
  REQUIRE(one.holders({0, 100}) == std::vector<int>{0});
  REQUIRE(one.neighbour_ranks(0, {true, true}).empty());
  REQUIRE_FALSE(one.splits(irr::Cell<2>{}));
  irr::rect::Partition<2> bad;
  bad.box.hi = {3, 4};
  bad.parts.push_back(bad.box);
  REQUIRE_THROWS_AS(Map(2, bad), irr::invalid_argument);
  REQUIRE_THROWS_AS(Map(-1, bad), irr::invalid_argument);

  // A stored whole-held cell that does not split is rejected, and the target is unchanged.
  std::stringstream ss;
  {
    boost::archive::binary_oarchive oa(ss);
    std::int32_t level = 0;
    irr::rect::Partition<2> p;
    p.box.hi = {1, 1};
    p.parts.push_back(p.box);
    std::uint64_t ne = 1;
    std::int32_t cl = 0;
    std::uint64_t ax = 0, ay = 0;
    oa << level << p << ne << cl << ax << ay;
  }
  Map target;
  const Map before = target;
  boost::archive::binary_iarchive ia(ss);
  REQUIRE_THROWS_AS(target.serialize(ia, 0u), irr::parse_error);
  REQUIRE(target == before);
}
