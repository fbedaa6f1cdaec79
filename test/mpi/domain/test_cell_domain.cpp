// The cell-data domain against the sequential CellTree: uniform creation, refinement by marks,
// coarsening of families (also across ranks), distributed 2:1 balance (face and full, periodic)
// equal to CellTree::balance, p4est's quadrant count for its circle mesh, data conserved through
// every remap, ghost data, adjacency, and agreed failures with the domain unchanged. An adapt
// moves only the cut families it merges (also at 5 ranks: test/mpi/domain/meson.build). Under
// grid maps, leaves held whole across parts stay placed by the map through merges and splits.
#include <irregular/cell_domain.hpp>
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/distributed/maps/rectangle_map.hpp>
#include <irregular/distributed/maps/row_map.hpp>
#include <irregular/distributed/partitioners/bounded_neighbours.hpp>
#include <irregular/distributed/partitioners/rectangular.hpp>
#include <irregular/rect/partition.hpp>

#include <boost/archive/binary_oarchive.hpp>
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/string.hpp>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;

namespace {

// Mass that splits exactly (4^(levels below) units) and a value that is a function of the cell.
struct Datum {
  std::uint64_t mass = 0;
  double value = 0;
};

using Curve = irr::curve::Morton<2>;
constexpr int deepest = 12;

double value_of(const irr::Cell<2>& c) {
  return static_cast<double>(c.anchor[0] * 7 + c.anchor[1] * 13 + c.level);
}
Datum init(const irr::Cell<2>& c) {
  return {std::uint64_t{1} << (2 * (deepest - c.level)), value_of(c)};
}
Datum split(const Datum& parent, const irr::Cell<2>& child) {
  return {parent.mass / 4, value_of(child)};
}
Datum merge(std::span<const Datum> kids) {
  Datum d{0, 0};
  for (const auto& k : kids) d.mass += k.mass;
  return d;
}

// Refine where the cell's centre lies within its side of the circle: with full balance, the
// 62,932 quadrants p4est reports for the circle r = 0.3 at (0.5, 0.5), levels 6 to 12.
bool near_circle(const irr::Cell<2>& c, double cx, double cy, double r) {
  const double h = 1.0 / static_cast<double>(1u << c.level);
  const double x = (static_cast<double>(c.anchor[0]) + 0.5) * h,
               y = (static_cast<double>(c.anchor[1]) + 0.5) * h;
  return std::abs(std::hypot(x - cx, y - cy) - r) < h;
}

using Domain = irr::CellDomain<Datum, irr::stencil::Moore<2>, Curve>;
// Per-level weights: finer leaves cost more.
struct PerLevel {
  double operator()(const irr::Cell<2>& c, std::size_t) const { return 1.0 + c.level; }
};
using Serial = irr::CellTree<Curve, Datum>;

template <class D>
void refine_circle(D& d, int top, double cx, double cy) {
  for (int round = 0; round < top; ++round) {
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
      if (d.level(i) < top && near_circle(d.cell(i), cx, cy, 0.3)) d.mark(i, irr::Mark::refine);
    d.adapt(split, merge);
  }
}
Serial serial_circle(int l0, int top, double cx, double cy) {
  auto t = Serial::uniform(l0, init);
  for (int round = 0; round < top; ++round) {
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t.level(i) < top && near_circle(t.cell(i), cx, cy, 0.3)) t.mark(i, irr::Mark::refine);
    t.adapt(split, merge);
  }
  return t;
}

// The gathered leaves (start, level) in curve order, on every rank.
template <class D>
std::vector<std::pair<std::uint64_t, int>> gathered(const D& d) {
  std::vector<std::pair<std::uint64_t, int>> mine, out;
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
    mine.emplace_back(static_cast<std::uint64_t>(d.local_tree().starts()[i]), d.level(i));
  std::vector<std::vector<std::pair<std::uint64_t, int>>> all;
  mpi::all_gather(d.comm(), mine, all);
  for (const auto& v : all) out.insert(out.end(), v.begin(), v.end());
  return out;
}
std::vector<std::pair<std::uint64_t, int>> leaves_of(const Serial& t) {
  std::vector<std::pair<std::uint64_t, int>> out;
  for (std::size_t i = 0; i < t.size(); ++i)
    out.emplace_back(static_cast<std::uint64_t>(t.start(i)), t.level(i));
  return out;
}
template <class D>
std::uint64_t total_mass(const D& d) {
  std::uint64_t m = 0, all = 0;
  for (const auto& x : d.local_data()) m += x.mass;
  mpi::all_reduce(d.comm(), m, all, std::plus<std::uint64_t>());
  return all;
}
int failures(const mpi::communicator& w, bool ok) {
  int bad = ok ? 0 : 1, total = 0;
  mpi::all_reduce(w, bad, total, std::plus<int>());
  return total;
}

}  // namespace

TEST_CASE("p4est's circle mesh: refinement and full 2:1 balance give its 62,932 quadrants",
          "[cells][balance]") {
  mpi::communicator w;
  Domain d(w, irr::Box<2>{{0, 0}, {1, 1}}, 6, init);
  refine_circle(d, deepest, 0.5, 0.5);
  d.balance(irr::BalanceKind::full, split);
  REQUIRE(d.global_leaf_count() == 62932);
  REQUIRE(total_mass(d) == (std::uint64_t{1} << (2 * deepest)));
  // Every leaf satisfies its value (data travelled with its leaf through every remap).
  bool values = true;
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
    values = values && d.data(i).value == value_of(d.cell(i));
  REQUIRE(failures(w, values) == 0);
}

TEST_CASE("refinement, coarsening and balance equal the sequential CellTree, at every rank count",
          "[cells]") {
  mpi::communicator w;
  for (auto kind : {irr::BalanceKind::face, irr::BalanceKind::full}) {
    Domain d(w, irr::Box<2>{{0, 0}, {1, 1}}, 3, init);
    refine_circle(d, 8, 0.4, 0.4);
    auto t = serial_circle(3, 8, 0.4, 0.4);
    {
      const auto g = gathered(d), l = leaves_of(t);
      std::size_t k = 0;
      while (k < g.size() && k < l.size() && g[k] == l[k]) ++k;
      CAPTURE(g.size(), l.size(), k, k < g.size() ? g[k].second : -1,
              k < l.size() ? l[k].second : -1);
      REQUIRE(g == l);
    }
    d.balance(kind, split);
    t.balance(kind, split);
    REQUIRE(gathered(d) == leaves_of(t));
    // Coarsen every complete family in the left half, here and there.
    auto coarsen_left = [](auto& tree, std::size_t n, auto cell_of) {
      for (std::size_t i = 0; i < n; ++i) {
        const auto c = cell_of(i);
        if (c.level > 3 &&
            (static_cast<double>(c.anchor[0]) + 0.5) / static_cast<double>(1u << c.level) < 0.5)
          tree.mark(i, irr::Mark::coarsen);
      }
    };
    // The sequential tree ignores coarsen marks on incomplete families; mark complete ones only.
    std::vector<std::pair<std::uint64_t, int>> family_starts;  // (parent start, child level)
    for (std::size_t i = 0; i + 3 < t.size(); ++i) {
      const int lv = t.level(i);
      if (lv == 0) continue;
      const auto span = t.end(i) - t.start(i);
      const auto parent = t.start(i) - t.start(i) % (span * 4);
      bool fam = t.start(i) == parent;
      for (std::size_t k = 0; k < 4 && fam; ++k)
        fam = t.level(i + k) == lv && t.start(i + k) == parent + k * span;
      if (fam) family_starts.emplace_back(static_cast<std::uint64_t>(t.start(i)), lv);
    }
    auto complete = [&](std::uint64_t start, int lv) {
      const std::uint64_t span = irr::detail::span_at<Curve>(lv);
      const std::uint64_t parent = start - start % (span * 4);
      return std::find(family_starts.begin(), family_starts.end(), std::make_pair(parent, lv)) !=
             family_starts.end();
    };
    coarsen_left(t, t.size(), [&](std::size_t i) { return t.cell(i); });
    for (std::size_t i = 0; i < t.size(); ++i)
      if (!complete(static_cast<std::uint64_t>(t.start(i)), t.level(i))) t.mark(i, irr::Mark::keep);
    coarsen_left(d, d.local_leaf_count(), [&](std::size_t i) { return d.cell(i); });
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
      if (!complete(static_cast<std::uint64_t>(d.local_tree().starts()[i]), d.level(i)))
        d.mark(i, irr::Mark::keep);
    const auto ts = t.adapt(split, merge);
    const auto ds = d.adapt(split, merge);
    std::uint64_t merged = ds.coarsened, all = 0;
    mpi::all_reduce(w, merged, all, std::plus<std::uint64_t>());
    REQUIRE(all == ts.coarsened);
    REQUIRE(ts.coarsened > 0);
    REQUIRE(gathered(d) == leaves_of(t));
    REQUIRE(total_mass(d) == (std::uint64_t{1} << (2 * deepest)));
  }
}

TEST_CASE("periodic balance and a rebalance under per-level loads keep the leaves and the data",
          "[cells]") {
  mpi::communicator w;
  using WDomain = irr::CellDomain<Datum, irr::stencil::Moore<2>, irr::curve::Hilbert<2>,
                                  irr::load::Weighted<PerLevel>>;
  WDomain d(w, irr::Box<2>{{0, 0}, {1, 1}}, 2, init,
            {.periodic = {true, true}, .load = irr::load::weighted(PerLevel{})});
  for (int round = 0; round < 6; ++round) {
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
      if (d.level(i) < 8 && near_circle(d.cell(i), 0.05, 0.05, 0.2)) d.mark(i, irr::Mark::refine);
    d.adapt(split, merge);
  }
  using HSerial = irr::CellTree<irr::curve::Hilbert<2>, Datum>;
  auto t = HSerial::uniform(2, init);
  for (int round = 0; round < 6; ++round) {
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t.level(i) < 8 && near_circle(t.cell(i), 0.05, 0.05, 0.2)) t.mark(i, irr::Mark::refine);
    t.adapt(split, merge);
  }
  d.balance(irr::BalanceKind::full, split);
  t.balance(irr::BalanceKind::full, split, {true, true});
  std::vector<std::pair<std::uint64_t, int>> want;
  for (std::size_t i = 0; i < t.size(); ++i)
    want.emplace_back(static_cast<std::uint64_t>(t.start(i)), t.level(i));
  REQUIRE(gathered(d) == want);
  const auto before = gathered(d);
  d.rebalance({.threshold = 0});
  REQUIRE(gathered(d) == before);
  REQUIRE(total_mass(d) == (std::uint64_t{1} << (2 * deepest)));
  // Every datum travelled with its leaf (the sums above cannot see a permutation).
  bool with_leaf = true;
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
    with_leaf = with_leaf && d.data(i).value == value_of(d.cell(i)) &&
                d.data(i).mass == std::uint64_t{1} << (2 * (deepest - d.level(i)));
  REQUIRE(failures(w, with_leaf) == 0);
  // Loads after the remap: no rank above the average by more than the heaviest leaf.
  double mine = 0, heaviest = 0;
  for (double l : d.local_loads()) mine += l, heaviest = std::max(heaviest, l);
  std::vector<double> all;
  mpi::all_gather(w, mine, all);
  double avg = 0;
  for (double l : all) avg += l / static_cast<double>(all.size());
  REQUIRE(failures(w, mine <= avg + 9.0 + 1e-9) == 0);
}

TEST_CASE("ghost data, accumulate and adjacency on the cell domain", "[cells][ghost]") {
  mpi::communicator w;
  Domain d(w, irr::Box<2>{{0, 0}, {1, 1}}, 4, init, {.periodic = {true, false}});
  refine_circle(d, 6, 0.5, 0.5);
  for (const char* name : {"RA", "FP", "IFP"}) {
    d.collect_ghosts({.contact = irr::Contact::corner}, irr::ghost::ByName(name));
    bool ok = true;
    for (std::size_t g = 0; g < d.ghosts().size(); ++g)
      ok = ok && d.ghost_data(g).value == value_of(d.ghosts().cell(g));
    REQUIRE(failures(w, ok) == 0);
  }
  // Each rank adds 1 to the mass of every ghost it holds; owners receive it.
  for (std::size_t g = 0; g < d.ghosts().size(); ++g) d.ghost_data(g).mass = 1;
  std::uint64_t ghosts = d.ghosts().size(), all_ghosts = 0;
  mpi::all_reduce(w, ghosts, all_ghosts, std::plus<std::uint64_t>());
  d.accumulate_ghosts([](Datum& m, const Datum& c) { m.mass += c.mass; });
  REQUIRE(total_mass(d) == (std::uint64_t{1} << (2 * deepest)) + all_ghosts);
  // Adjacency: face neighbours have one non-zero direction, and match a brute-force count.
  std::vector<irr::Adjacent<2>> adj;
  bool faces_ok = true;
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
    d.adjacent(i, adj, irr::Contact::face);
    for (const auto& a : adj) {
      int nonzero = 0;
      for (int x : a.direction) nonzero += x != 0;
      faces_ok = faces_ok && a.dimension == 1 && nonzero == 1;
    }
  }
  REQUIRE(failures(w, faces_ok) == 0);
}

TEST_CASE("bad marks and failing callbacks fail every rank, the domain unchanged",
          "[cells][errors]") {
  mpi::communicator w;
  Domain d(w, irr::Box<2>{{0, 0}, {1, 1}}, 3, init);
  // Refine the first level-3 cell: its siblings now form an incomplete family with it.
  d.mark(irr::Cell<2>{{0, 0}, 3}, irr::Mark::keep);  // harmless on the rank that holds it
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
    if (d.local_tree().starts()[i] == 0) d.mark(i, irr::Mark::refine);
  std::string setup;
  try {
    d.adapt(split, merge);
  } catch (const irr::collective_error& e) {
    setup = e.what();  // ranks that do not hold cell 0 marked it: every rank reports that
  }
  const int holder_marks = setup.empty() ? 0 : 1;
  REQUIRE(failures(w, holder_marks == 0 || setup.find("is not a leaf") != std::string::npos) == 0);
  if (holder_marks) {  // mark only where it is held, then refine
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
      if (d.local_tree().starts()[i] == 0) d.mark(i, irr::Mark::refine);
    d.adapt(split, merge);
  }
  const auto before = gathered(d);
  REQUIRE(before.size() == 64 + 3);
  const int bad = w.size() - 1;
  auto expect = [&](auto&& call, const std::string& needle) {
    std::string message;
    try {
      call();
    } catch (const irr::collective_error& e) {
      message = e.what();
    }
    CAPTURE(message);
    REQUIRE(failures(w, message.find(needle) != std::string::npos) == 0);
    REQUIRE(gathered(d) == before);
    REQUIRE(total_mass(d) == (std::uint64_t{1} << (2 * deepest)));
  };
  auto mark_where = [&](std::uint64_t start, int level, irr::Mark m) {
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
      if (static_cast<std::uint64_t>(d.local_tree().starts()[i]) == start && d.level(i) == level)
        d.mark(i, m);
  };
  const std::uint64_t s3 = irr::detail::span_at<Curve>(3), s4 = irr::detail::span_at<Curve>(4);
  expect(
      [&] {
        if (w.rank() == bad)
          d.mark(irr::Cell<2>{{0, 0}, 1}, irr::Mark::refine);  // a level-1 cell is no leaf
        d.adapt(split, merge);
      },
      "is not a leaf");
  {  // a sibling of the refined cell: its family is incomplete, so the mark is ignored
    mark_where(s3, 3, irr::Mark::coarsen);
    const auto st = d.adapt(split, merge);
    REQUIRE(st.coarsened == 0);
    REQUIRE(gathered(d) == before);
  }
  expect(
      [&] {
        for (std::uint64_t k = 0; k < 4; ++k)
          mark_where(k * s4, 4, irr::Mark::coarsen);  // a complete family
        d.adapt(split,
                [](std::span<const Datum>) -> Datum { throw std::runtime_error("merge failed"); });
      },
      "merge failed");
  expect(
      [&] {
        if (d.local_leaf_count() > 0) d.mark(std::size_t{0}, irr::Mark::refine);
        d.adapt(
            [&](const Datum& p, const irr::Cell<2>& c) {
              if (w.rank() == bad) throw std::runtime_error("split failed");
              return split(p, c);
            },
            merge);
      },
      w.size() == 1 || true ? "split failed" : "");
}

namespace {

// Uniform at level 3, then child `k` of every level-2 cell refined and the leaves rebalanced: every
// level-3 family is incomplete (one child refined), every level-4 family complete, and the
// 16 groups of 7 leaves put the rank cuts at varying places within them (inside a complete
// family, inside an incomplete one, between them).
Domain one_child_refined(const mpi::communicator& w, std::uint64_t k) {
  Domain d(w, irr::Box<2>{{0, 0}, {1, 1}}, 3, init);
  const std::uint64_t s2 = irr::detail::span_at<Curve>(2), s3 = irr::detail::span_at<Curve>(3);
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
    if (static_cast<std::uint64_t>(d.local_tree().starts()[i]) % s2 == k * s3)
      d.mark(i, irr::Mark::refine);
  d.adapt(split, merge);
  d.rebalance({.threshold = 0});
  return d;
}
Serial one_child_refined_serial(std::uint64_t k) {
  auto t = Serial::uniform(3, init);
  const std::uint64_t s2 = irr::detail::span_at<Curve>(2), s3 = irr::detail::span_at<Curve>(3);
  for (std::size_t i = 0; i < t.size(); ++i)
    if (static_cast<std::uint64_t>(t.start(i)) % s2 == k * s3) t.mark(i, irr::Mark::refine);
  t.adapt(split, merge);
  return t;
}
// Every leaf (start, level) with the rank that holds it, sorted, on every rank.
template <class D>
std::vector<std::tuple<std::uint64_t, int, int>> owned(const D& d) {
  std::vector<std::tuple<std::uint64_t, int, int>> out;
  const auto g = gathered(d);
  std::vector<int> counts;
  mpi::all_gather(d.comm(), static_cast<int>(d.local_leaf_count()), counts);
  std::size_t at = 0;
  for (int r = 0; r < static_cast<int>(counts.size()); ++r)
    for (int j = 0; j < counts[static_cast<std::size_t>(r)]; ++j, ++at)
      out.emplace_back(g[at].first, g[at].second, r);
  std::sort(out.begin(), out.end());
  return out;
}
// Every leaf of d marked coarsen and adapted, and of its serial twin t those for which
// serial_marks(cell): the same leaves and merges, and no leaf of a family that did not merge (a
// leaf of both trees, by the serial oracle) changes owner. Returns the number of such leaves.
template <class D, class SerialMarks = bool (*)(const irr::Cell<2>&)>
std::size_t coarsen_all(
    D& d, Serial& t, SerialMarks serial_marks = [](const irr::Cell<2>&) { return true; }) {
  const auto before = owned(d);
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i) d.mark(i, irr::Mark::coarsen);
  for (std::size_t i = 0; i < t.size(); ++i)
    if (serial_marks(t.cell(i))) t.mark(i, irr::Mark::coarsen);
  const auto ds = d.adapt(split, merge);
  const auto ts = t.adapt(split, merge);
  std::uint64_t merged = ds.coarsened, all = 0;
  mpi::all_reduce(d.comm(), merged, all, std::plus<std::uint64_t>());
  REQUIRE(all == ts.coarsened);
  auto g = gathered(d);
  std::sort(g.begin(), g.end());
  REQUIRE(g == leaves_of(t));
  REQUIRE(total_mass(d) == (std::uint64_t{1} << (2 * deepest)));
  const auto after = owned(d);
  const auto kept = leaves_of(t);
  std::size_t unmerged = 0, moved = 0;
  for (const auto& [start, level, rank] : before) {
    if (!std::binary_search(kept.begin(), kept.end(), std::make_pair(start, level))) continue;
    ++unmerged;
    const auto it = std::lower_bound(after.begin(), after.end(), std::make_tuple(start, level, -1));
    REQUIRE(it != after.end());
    REQUIRE(std::get<0>(*it) == start);
    if (std::get<2>(*it) != rank) ++moved;
  }
  CAPTURE(unmerged);
  REQUIRE(moved == 0);
  return unmerged;
}
// A checksum of one rank's whole state (leaves, data, loads, the map), gathered from every rank.
std::vector<std::uint64_t> state_checksums(const Domain& d) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::uint64_t x) { h = (h ^ x) * 1099511628211ull; };
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
    mix(static_cast<std::uint64_t>(d.local_tree().starts()[i]));
    mix(static_cast<std::uint64_t>(d.level(i)));
    mix(d.data(i).mass);
    mix(static_cast<std::uint64_t>(d.data(i).value * 64));
    mix(static_cast<std::uint64_t>(d.local_loads()[i] * 64));
  }
  for (int r = 0; r < d.ownership().parts(); ++r) {
    mix(static_cast<std::uint64_t>(d.ownership().segment(r).start));
    mix(static_cast<std::uint64_t>(d.ownership().segment(r).end));
  }
  std::vector<std::uint64_t> all;
  mpi::all_gather(d.comm(), h, all);
  return all;
}

}  // namespace

TEST_CASE("an adapt moves only the families it merges: ignored marks on cut families move nothing",
          "[cells][families]") {
  mpi::communicator w;
  for (std::uint64_t k = 0; k < 4; ++k) {
    CAPTURE(k);
    auto d = one_child_refined(w, k);
    auto t = one_child_refined_serial(k);
    REQUIRE(gathered(d) == leaves_of(t));
    REQUIRE(coarsen_all(d, t) == 16 * 3);  // no level-3 family is complete
    REQUIRE(t.size() == 16 * 4);           // the 16 level-4 families merged
  }
}

TEST_CASE("an adapt on a rectangle map: a family the rectangles cut keeps its leaves in place",
          "[cells][families]") {
  mpi::communicator w;
  // A rank's part is no curve interval, so a cut family may lie anywhere in its leaves; and a
  // leaf at or below the grid level stays with its grid cell's owner, so such a family cannot be
  // gathered: its coarsen marks are ignored, as an incomplete family's. A uniform level on a
  // grid of cells of that level, the first refined, then every leaf marked coarsen.
  using RDomain = irr::CellDomain<Datum, irr::stencil::Moore<2>, Curve, irr::load::Constant,
                                  irr::partitioner::Rectangular>;
  for (int level : {2, 3}) {
    CAPTURE(level);
    RDomain d(w, irr::Box<2>{{0, 0}, {1, 1}}, level, init, {.partitioner = {.level = level}});
    auto t = Serial::uniform(level, init);
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
      if (d.local_tree().starts()[i] == 0) d.mark(i, irr::Mark::refine);
    d.adapt(split, merge);
    t.mark(0, irr::Mark::refine);
    t.adapt(split, merge);
    const auto map = d.ownership();
    std::size_t cut = 0;  // level-(level - 1) cells that the rectangles cut
    const auto parent = [](const irr::Cell<2>& c) {
      return irr::Cell<2>{{c.anchor[0] / 2, c.anchor[1] / 2}, c.level - 1};
    };
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t.level(i) == level && t.start(i) % irr::detail::span_at<Curve>(level - 1) == 0 &&
          map.splits(parent(t.cell(i))))
        ++cut;
    CAPTURE(cut);
    const auto unmerged =
        coarsen_all(d, t, [&](const irr::Cell<2>& c) { return !map.splits(parent(c)); });
    // The first family is incomplete (its refined child merges back); each cut one stays.
    REQUIRE(unmerged == 3 + 4 * cut);
  }
}

TEST_CASE(
    "a merge that throws on one rank after cut families moved: every rank fails alike, state "
    "unchanged",
    "[cells][families][errors]") {
  mpi::communicator w;
  auto d = one_child_refined(w, 0);
  const auto leaves = gathered(d);
  const auto sums = state_checksums(d);
  // The last rank that holds leaves holds at least the last group of 7 leaves (up to 7 ranks),
  // so a level-4 family merges there.
  int bad = 0;
  mpi::all_reduce(w, d.local_leaf_count() > 0 ? w.rank() : 0, bad, mpi::maximum<int>());
  std::string message;
  try {
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i) d.mark(i, irr::Mark::coarsen);
    d.adapt(split, [&](std::span<const Datum> kids) -> Datum {
      if (w.rank() == bad) throw std::runtime_error("merge failed on one rank");
      return merge(kids);
    });
  } catch (const irr::collective_error& e) {
    message = e.what();
  }
  CAPTURE(message);
  REQUIRE(failures(w, message.find("merge failed on one rank") != std::string::npos) == 0);
  std::string first = message;
  mpi::broadcast(w, first, 0);
  REQUIRE(failures(w, message == first) == 0);
  REQUIRE(state_checksums(d) == sums);
  REQUIRE(gathered(d) == leaves);
  // The marks went with the failed call; the same adapt now succeeds.
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i) d.mark(i, irr::Mark::coarsen);
  std::uint64_t merged = d.adapt(split, merge).coarsened, all = 0;
  mpi::all_reduce(w, merged, all, std::plus<std::uint64_t>());
  REQUIRE(all == 16);
  // At 3 and 5 ranks a cut falls inside a level-4 family: it moved before the merge (so the
  // failure above had a move to undo).
  if (w.size() == 3 || w.size() == 5) REQUIRE(d.last_migration().hnodes > 0);
}

TEST_CASE("a domain from given leaves in any distribution; gaps and overlaps are rejected",
          "[cells]") {
  mpi::communicator w;
  const auto t = serial_circle(3, 7, 0.3, 0.6);
  const auto p = static_cast<std::size_t>(w.size()), r = static_cast<std::size_t>(w.rank());
  auto share = [&](auto keep) {
    std::vector<irr::Cell<2>> cells;
    std::vector<Datum> data;
    for (std::size_t i = t.size(); i-- > 0;)  // reversed, round robin
      if (i % p == p - 1 - r && keep(i)) {
        cells.push_back(t.cell(i));
        data.push_back(t.data(i));
      }
    return std::pair{cells, data};
  };
  auto [cells, data] = share([](std::size_t) { return true; });
  Domain d(w, irr::Box<2>{{0, 0}, {1, 1}}, cells, data);
  REQUIRE(gathered(d) == leaves_of(t));
  REQUIRE(total_mass(d) == (std::uint64_t{1} << (2 * deepest)));
  auto rejects = [&](auto keep, bool twice, const std::string& needle) {
    auto [c, x] = share(keep);
    if (twice && w.rank() == 0 && !c.empty()) {
      c.push_back(c.front());
      x.push_back(x.front());
    }
    std::string message;
    try {
      Domain bad(w, irr::Box<2>{{0, 0}, {1, 1}}, c, x);
    } catch (const irr::collective_error& e) {
      message = e.what();
    }
    CAPTURE(message);
    REQUIRE(failures(w, message.find(needle) != std::string::npos) == 0);
  };
  rejects([](std::size_t i) { return i != 5; }, false, "do not tile");  // a leaf missing
  rejects([](std::size_t) { return true; }, true, "do not tile");       // a leaf twice
}

TEST_CASE(
    "distributed balance: 3D, a rectangle partition (parts not curve segments), a split that "
    "throws",
    "[cells][balance]") {
  mpi::communicator w;
  // 3D: refined toward a sphere, face and full balance against the sequential tree.
  using C3 = irr::curve::Morton<3>;
  struct D3 {
    double v = 0;
  };
  auto v3 = [](const irr::Cell<3>& c) {
    return static_cast<double>(c.anchor[0] + 3 * c.anchor[1] + 5 * c.anchor[2] + 7 * c.level);
  };
  auto init3 = [&](const irr::Cell<3>& c) { return D3{v3(c)}; };
  auto split3 = [&](const D3&, const irr::Cell<3>& c) { return D3{v3(c)}; };
  auto near_sphere = [](const irr::Cell<3>& c) {
    const double h = 1.0 / static_cast<double>(1u << c.level);
    double r2 = 0;
    for (int d = 0; d < 3; ++d)
      r2 += std::pow((static_cast<double>(c.anchor[d]) + 0.5) * h - 0.4, 2);
    return std::abs(std::sqrt(r2) - 0.3) < h;
  };
  for (auto kind : {irr::BalanceKind::face, irr::BalanceKind::full}) {
    irr::CellDomain<D3, irr::stencil::Moore<3>, C3> d(w, irr::Box<3>{{0, 0, 0}, {1, 1, 1}}, 2,
                                                      init3);
    auto t = irr::CellTree<C3, D3>::uniform(2, init3);
    for (int round = 0; round < 4; ++round) {
      for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
        if (d.level(i) < 6 && near_sphere(d.cell(i))) d.mark(i, irr::Mark::refine);
      d.adapt(split3, [](std::span<const D3> k) { return k.front(); });
      for (std::size_t i = 0; i < t.size(); ++i)
        if (t.level(i) < 6 && near_sphere(t.cell(i))) t.mark(i, irr::Mark::refine);
      t.adapt(split3, [](std::span<const D3> k) { return k.front(); });
    }
    d.balance(kind, split3);
    t.balance(kind, split3);
    std::vector<std::pair<std::uint64_t, int>> want;
    for (std::size_t i = 0; i < t.size(); ++i)
      want.emplace_back(static_cast<std::uint64_t>(t.start(i)), t.level(i));
    REQUIRE(gathered(d) == want);
    bool values = true;
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
      values = values && d.data(i).v == v3(d.cell(i));
    REQUIRE(failures(w, values) == 0);
  }
  // A rectangle map: a rank's part is no curve segment; nodes are routed by owner().
  {
    using RDomain = irr::CellDomain<Datum, irr::stencil::Moore<2>, Curve, irr::load::Constant,
                                    irr::partitioner::Rectangular>;
    RDomain d(w, irr::Box<2>{{0, 0}, {1, 1}}, 3, init, {.partitioner = {.level = 2}});
    refine_circle(d, 8, 0.4, 0.4);
    auto t = serial_circle(3, 8, 0.4, 0.4);
    d.balance(irr::BalanceKind::full, split);
    t.balance(irr::BalanceKind::full, split);
    auto g = gathered(d);
    std::sort(g.begin(), g.end());
    REQUIRE(g == leaves_of(t));
    REQUIRE(total_mass(d) == (std::uint64_t{1} << (2 * deepest)));
  }
  // Four leaves: at 7 ranks most hold none; the corner leaf refined to level 5 on its holder.
  {
    Domain d(w, irr::Box<2>{{0, 0}, {1, 1}}, 1, init, {.periodic = {true, false}});
    auto t = Serial::uniform(1, init);
    for (int round = 0; round < 4; ++round) {
      for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
        if (d.local_tree().starts()[i] == 0) d.mark(i, irr::Mark::refine);
      d.adapt(split, merge);
      t.mark(0, irr::Mark::refine);
      t.adapt(split, merge);
    }
    d.balance(irr::BalanceKind::face, split);
    t.balance(irr::BalanceKind::face, split, {true, false});
    REQUIRE(gathered(d) == leaves_of(t));
    REQUIRE(total_mass(d) == (std::uint64_t{1} << (2 * deepest)));
  }
  // A split that throws on one rank only: every rank fails alike, nothing changed.
  Domain d(w, irr::Box<2>{{0, 0}, {1, 1}}, 3, init);
  refine_circle(d, 7, 0.4, 0.4);
  const auto before = gathered(d);
  const int bad = w.size() - 1;
  std::string message;
  try {
    d.balance(irr::BalanceKind::full, [&](const Datum& p, const irr::Cell<2>& c) {
      if (w.rank() == bad) throw std::runtime_error("balance split failed");
      return split(p, c);
    });
  } catch (const irr::collective_error& e) {
    message = e.what();
  }
  CAPTURE(message);
  REQUIRE(failures(w, message.find("balance split failed") != std::string::npos) == 0);
  REQUIRE(gathered(d) == before);
  REQUIRE(total_mass(d) == (std::uint64_t{1} << (2 * deepest)));
  REQUIRE(d.balance(irr::BalanceKind::full, split) > 0);  // the same call, now succeeding
  auto t = serial_circle(3, 7, 0.4, 0.4);
  t.balance(irr::BalanceKind::full, split);
  REQUIRE(gathered(d) == leaves_of(t));
}

TEST_CASE("hold_level: no cut falls inside a cell of that level, through creation and rebalance",
          "[cells][hold]") {
  mpi::communicator w;
  using Domain = irr::CellDomain<Datum, irr::stencil::Moore<2>, Curve>;
  constexpr int hold = 3;
  irr::CellDomainOptions<2, irr::load::Constant> opt;
  opt.hold_level = hold;
  Domain d(w, irr::Box<2>{{0, 0}, {1, 1}}, 4, init, opt);
  // Each rank's leaves, as a curve interval, must start and end on level-3 cell boundaries.
  const auto span3 = irr::detail::span_at<Curve>(hold);
  auto aligned = [&] {
    const auto& t = d.local_tree();
    if (t.size() == 0) return true;
    return t.starts()[0] % span3 == 0 && t.interval(t.size() - 1).end % span3 == 0;
  };
  REQUIRE(failures(w, aligned()) == 0);
  refine_circle(d, 8, 0.3, 0.3);  // a heavy corner: the plain cuts would fall inside level-3 cells
  d.balance(irr::BalanceKind::full, split);
  d.rebalance({.threshold = 0});
  REQUIRE(failures(w, aligned()) == 0);
  REQUIRE(total_mass(d) == (std::uint64_t{1} << (2 * deepest)));
  // Without it, the same rebalance does cut level-3 cells when there are several ranks (the test
  // above can fail).
  Domain e(w, irr::Box<2>{{0, 0}, {1, 1}}, 4, init);
  refine_circle(e, 8, 0.3, 0.3);
  e.rebalance({.threshold = 0});
  const auto& t = e.local_tree();
  const bool cut = t.size() > 0 && t.starts()[0] % span3 != 0;
  int cuts = 0;
  mpi::all_reduce(w, cut ? 1 : 0, cuts, std::plus<int>());
  if (w.size() > 2) REQUIRE(cuts > 0);
  // A hold level beyond the curve's max_level fails every rank.
  opt.hold_level = Curve::max_level + 1;
  REQUIRE_THROWS_AS(Domain(w, irr::Box<2>{{0, 0}, {1, 1}}, 2, init, opt), irr::collective_error);
}

namespace {

// Grid maps made by hand over the grid of level 4 (16 x 16 cells), cut at odd grid positions so
// that leaves coarser than the grid straddle parts: stripes of columns for a rectangle map,
// row-major runs for a row map (placed so that at 2 to 7 ranks some family on one rank has a
// parent that straddles a cut). Their answers are the test's oracle.
constexpr int grid = 4;
constexpr std::uint64_t side = 16;
struct GridOracle {
  bool rows = false;                                // row-major runs, else column stripes
  std::vector<std::uint64_t> cuts;                  // p + 1 positions (columns, or row-major cells)
  int of(std::uint64_t x, std::uint64_t y) const {  // the rank of grid cell (column x, row y)
    const std::uint64_t at = rows ? y * side + x : x;
    return static_cast<int>(std::upper_bound(cuts.begin(), cuts.end(), at) - cuts.begin()) - 1;
  }
  // A leaf goes whole to the rank of its first grid cell (its own grid cell when finer).
  int leaf_owner(const irr::Cell<2>& c) const {
    if (c.level >= grid)
      return of(c.anchor[0] >> (c.level - grid), c.anchor[1] >> (c.level - grid));
    return of(c.anchor[0] << (grid - c.level), c.anchor[1] << (grid - c.level));
  }
  bool splits(const irr::Cell<2>& c) const {
    if (c.level >= grid) return false;
    const std::uint64_t f = std::uint64_t{1} << (grid - c.level);
    for (std::uint64_t y = c.anchor[1] * f; y < (c.anchor[1] + 1) * f; ++y)
      for (std::uint64_t x = c.anchor[0] * f; x < (c.anchor[0] + 1) * f; ++x)
        if (of(x, y) != leaf_owner(c)) return true;
    return false;
  }
};
GridOracle column_stripes(int p) {
  GridOracle o;
  o.cuts.push_back(0);
  for (int k = 1; k < p; ++k) o.cuts.push_back(2 * static_cast<std::uint64_t>(8 * k / p) + 1);
  o.cuts.push_back(side);
  return o;
}
GridOracle row_runs(int p) {
  GridOracle o{true, {0}};
  for (int k = 1; k < p; ++k)
    o.cuts.push_back(side * side * static_cast<std::uint64_t>(k) / static_cast<std::uint64_t>(p) +
                     13);
  o.cuts.push_back(side * side);
  return o;
}
irr::RectangleMap<Curve> rectangle_map(const GridOracle& o) {
  irr::rect::Partition<2> part;
  part.box = {{0, 0}, {side, side}};
  std::vector<std::size_t> b(o.cuts.begin(), o.cuts.end());
  const auto first = part.tree.split(0, 0, b);
  for (std::size_t k = 0; k + 1 < b.size(); ++k) {
    part.parts.push_back({{b[k], 0}, {b[k + 1], side}});
    part.tree.set_leaf(first + static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k));
  }
  return irr::RectangleMap<Curve>(grid, std::move(part));
}

template <class M>
std::string bytes_of(const M& map) {
  std::ostringstream out;
  {
    boost::archive::binary_oarchive ar(out);
    ar << map;
  }
  return out.str();
}

// Every leaf with its datum (start, level, mass, value), in curve order, on every rank.
template <class D>
std::vector<std::uint64_t> leaves_and_data(const D& d) {
  std::vector<std::uint64_t> mine;
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
    mine.insert(mine.end(), {static_cast<std::uint64_t>(d.local_tree().starts()[i]),
                             static_cast<std::uint64_t>(d.level(i)), d.data(i).mass,
                             static_cast<std::uint64_t>(d.data(i).value)});
  std::vector<std::vector<std::uint64_t>> all;
  mpi::all_gather(d.comm(), mine, all);
  std::vector<std::array<std::uint64_t, 4>> rows;
  for (const auto& v : all)
    for (std::size_t k = 0; k < v.size(); k += 4)
      rows.push_back({v[k], v[k + 1], v[k + 2], v[k + 3]});
  std::sort(rows.begin(), rows.end());
  std::vector<std::uint64_t> out;
  for (const auto& r : rows) out.insert(out.end(), r.begin(), r.end());
  return out;
}
std::vector<std::uint64_t> leaves_and_data(const Serial& t) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < t.size(); ++i)
    out.insert(out.end(),
               {static_cast<std::uint64_t>(t.start(i)), static_cast<std::uint64_t>(t.level(i)),
                t.data(i).mass, static_cast<std::uint64_t>(t.data(i).value)});
  return out;
}

// After each call: leaves and data equal the serial tree's; every leaf lies where the map and
// the oracle say; the map holds whole exactly the leaves it splits, each by its leaf owner; and
// every rank holds the same map.
template <class D>
void check_placement(const D& d, const Serial& t, const GridOracle& o, const std::string& step) {
  CAPTURE(step);
  REQUIRE(leaves_and_data(d) == leaves_and_data(t));
  bool placed = true;
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
    placed = placed && d.ownership().leaf_owner(d.cell(i)) == d.comm().rank() &&
             o.leaf_owner(d.cell(i)) == d.comm().rank();
  REQUIRE(failures(d.comm(), placed) == 0);
  std::vector<std::pair<std::uint64_t, int>> want, held;
  for (std::size_t i = 0; i < t.size(); ++i)
    if (o.splits(t.cell(i))) want.emplace_back(static_cast<std::uint64_t>(t.start(i)), t.level(i));
  bool owners = true;
  for (const auto& e : d.ownership().exceptions()) {
    held.emplace_back(static_cast<std::uint64_t>(irr::curve::finest_index<Curve>(e.cell)),
                      e.cell.level);
    owners = owners && e.owner == o.leaf_owner(e.cell);
  }
  REQUIRE(held == want);
  REQUIRE(owners);
  std::string first = bytes_of(d.ownership());
  mpi::broadcast(d.comm(), first, 0);
  REQUIRE(failures(d.comm(), bytes_of(d.ownership()) == first) == 0);
}

// What a call did to the serial tree: new leaves coarser than their old leaf that the map splits
// (a merge into a parent held whole), and new finer leaves whose leaf owner differs from the old
// leaf's (a held-whole leaf refined: a child goes to another rank).
struct Events {
  int held_merges = 0, moved_children = 0;
};
void count_events(const Serial& before, const Serial& after, const GridOracle& o, Events& ev) {
  std::vector<std::uint64_t> starts;
  for (std::size_t i = 0; i < before.size(); ++i)
    starts.push_back(static_cast<std::uint64_t>(before.start(i)));
  for (std::size_t j = 0; j < after.size(); ++j) {
    const auto s = static_cast<std::uint64_t>(after.start(j));
    const auto i = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), s) -
                                            starts.begin()) -
                   1;
    if (after.level(j) < before.level(i) && o.splits(after.cell(j))) ++ev.held_merges;
    if (after.level(j) > before.level(i) &&
        o.leaf_owner(after.cell(j)) != o.leaf_owner(before.cell(i)))
      ++ev.moved_children;
  }
}

// Starts uniform at `level` (given leaves, all on rank 0), moves to the hand-made map, then
// coarsens, refines and balances, checking the placement after every call.
template <class D, class Map>
void follow_grid_map(const mpi::communicator& w, int level, const Map& map, const GridOracle& o,
                     Events& ev) {
  CAPTURE(level);
  auto t = Serial::uniform(level, init);
  std::vector<irr::Cell<2>> cells;
  std::vector<Datum> data;
  if (w.rank() == 0)
    for (std::size_t i = 0; i < t.size(); ++i) {
      cells.push_back(t.cell(i));
      data.push_back(t.data(i));
    }
  D d(w, irr::Box<2>{{0, 0}, {1, 1}}, std::span<const irr::Cell<2>>(cells), data);
  d.apply_map(irr::AnyOwnershipMap<Curve>(map));
  check_placement(d, t, o, "apply_map");
  const auto step = [&](const std::string& what, auto&& on_domain, auto&& on_serial) {
    const Serial before = t;
    on_domain();
    on_serial();
    count_events(before, t, o, ev);
    check_placement(d, t, o, what);
  };
  // A family merges only when the oracle puts all its children on one rank.
  const auto coarsen_all = [&] {
    step(
        "coarsen",
        [&] {
          for (std::size_t i = 0; i < d.local_leaf_count(); ++i) d.mark(i, irr::Mark::coarsen);
          d.adapt(split, merge);
        },
        [&] {
          for (std::size_t i = 0; i < t.size(); ++i) {
            const auto c = t.cell(i);
            if (c.level == 0) continue;
            const irr::Cell<2> first{{c.anchor[0] & ~1ull, c.anchor[1] & ~1ull}, c.level};
            bool one_rank = true;
            for (std::uint64_t k = 1; k < 4; ++k)
              one_rank =
                  one_rank && o.leaf_owner({{first.anchor[0] + (k & 1), first.anchor[1] + (k >> 1)},
                                            c.level}) == o.leaf_owner(first);
            if (one_rank) t.mark(i, irr::Mark::coarsen);
          }
          t.adapt(split, merge);
        });
  };
  const auto refine_where = [&](const std::string& what, auto&& pick) {
    step(
        what,
        [&] {
          for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
            if (pick(d.cell(i))) d.mark(i, irr::Mark::refine);
          d.adapt(split, merge);
        },
        [&] {
          for (std::size_t i = 0; i < t.size(); ++i)
            if (pick(t.cell(i))) t.mark(i, irr::Mark::refine);
          t.adapt(split, merge);
        });
  };
  const auto balance = [&](irr::BalanceKind kind) {
    step(
        "balance", [&] { d.balance(kind, split); }, [&] { t.balance(kind, split); });
  };
  for (int k = 0; k < 3; ++k) coarsen_all();
  refine_where("refine coarse leaves", [](const irr::Cell<2>& c) { return c.level <= 1; });
  refine_where("refine coarse leaves", [](const irr::Cell<2>& c) { return c.level <= 2; });
  for (int k = 0; k < 3; ++k) coarsen_all();
  // A deep corner near the middle: balance splits the coarse leaves around it.
  for (int k = 0; k < 4; ++k)
    refine_where("refine a corner", [](const irr::Cell<2>& c) {
      return c.level < 7 && near_circle(c, 0.45, 0.55, 0.02);
    });
  balance(irr::BalanceKind::full);
  coarsen_all();
  balance(irr::BalanceKind::face);
  REQUIRE(total_mass(d) == (std::uint64_t{1} << (2 * deepest)));
}

}  // namespace

TEST_CASE(
    "grid maps follow adapt and balance: leaves held whole across parts are placed by the map "
    "after they merge or split",
    "[cells][families][grid]") {
  mpi::communicator w;
  using RDomain = irr::CellDomain<Datum, irr::stencil::Moore<2>, Curve, irr::load::Constant,
                                  irr::partitioner::Rectangular>;
  using BDomain = irr::CellDomain<Datum, irr::stencil::Moore<2>, Curve, irr::load::Constant,
                                  irr::partitioner::BoundedNeighbours>;
  Events rect_events, row_events;
  const auto stripes = column_stripes(w.size());
  const auto runs = row_runs(w.size());
  const irr::RowMap<Curve> rows(grid, runs.cuts);
  for (int level : {1, 2, 3}) {
    follow_grid_map<RDomain>(w, level, rectangle_map(stripes), stripes, rect_events);
    follow_grid_map<BDomain>(w, level, rows, runs, row_events);
  }
  // The calls did merge families into parents held whole and sent children of refined held
  // leaves to other ranks (one rank: nothing is cut).
  CAPTURE(rect_events.held_merges, rect_events.moved_children, row_events.held_merges,
          row_events.moved_children);
  if (w.size() > 1) {
    REQUIRE(rect_events.held_merges > 0);
    REQUIRE(rect_events.moved_children > 0);
    REQUIRE(row_events.held_merges > 0);
    REQUIRE(row_events.moved_children > 0);
  }
}

namespace {

// A datum that travels serialized and whose serialization throws while armed.
bool fragile_armed = false;
struct Fragile {
  std::uint64_t mass = 0;
  double value = 0;
  std::string note;  // not trivially copyable: a remap serializes it
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    if constexpr (Archive::is_saving::value)
      if (fragile_armed) throw std::runtime_error("serialize failed");
    ar& mass& value& note;
  }
};
Fragile fragile(const Datum& d) { return {d.mass, d.value, "x"}; }
Fragile fragile_split(const Fragile& p, const irr::Cell<2>& c) {
  return fragile(split({p.mass, p.value}, c));
}
Fragile fragile_merge(std::span<const Fragile> kids) {
  Fragile f{0, 0, "x"};
  for (const auto& k : kids) f.mass += k.mass;
  return f;
}
// One rank's whole state (leaves, data, loads, the map), gathered from every rank.
template <class D>
std::vector<std::string> state_of(const D& d) {
  std::ostringstream out;
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
    out << d.local_tree().starts()[i] << ' ' << d.level(i) << ' ' << d.data(i).mass << ' '
        << d.data(i).value << ' ' << d.data(i).note << ' ' << d.local_loads()[i] << '\n';
  out << bytes_of(d.ownership());
  std::vector<std::string> all;
  mpi::all_gather(d.comm(), out.str(), all);
  return all;
}

}  // namespace

TEST_CASE(
    "placing the leaves after an adapt or a balance fails on a rank: every rank fails alike, the "
    "domain unchanged",
    "[cells][grid][errors]") {
  mpi::communicator w;
  using FDomain = irr::CellDomain<Fragile, irr::stencil::Moore<2>, Curve, irr::load::Constant,
                                  irr::partitioner::Rectangular>;
  const auto stripes = column_stripes(w.size());
  auto t = Serial::uniform(1, init);
  std::vector<irr::Cell<2>> cells;
  std::vector<Fragile> data;
  if (w.rank() == 0)
    for (std::size_t i = 0; i < t.size(); ++i) {
      cells.push_back(t.cell(i));
      data.push_back(fragile(t.data(i)));
    }
  FDomain d(w, irr::Box<2>{{0, 0}, {1, 1}}, std::span<const irr::Cell<2>>(cells), data);
  d.apply_map(irr::AnyOwnershipMap<Curve>(rectangle_map(stripes)));
  // `call` with serialization armed on every rank: it fails exactly when children of a leaf held
  // whole must travel (`due`), with one message on every rank and nothing changed.
  const auto armed = [&](const std::string& what, bool due, auto&& call) {
    CAPTURE(what, due);
    const auto before = state_of(d);
    std::string message;
    fragile_armed = true;
    try {
      call();
    } catch (const irr::collective_error& e) {
      message = e.what();
    }
    fragile_armed = false;
    CAPTURE(message);
    REQUIRE(failures(w, (message.find("serialize failed") != std::string::npos) == due) == 0);
    if (!due) return;
    std::string first = message;
    mpi::broadcast(w, first, 0);
    REQUIRE(failures(w, message == first) == 0);
    REQUIRE(state_of(d) == before);
  };
  const auto same_leaves = [&] {
    std::vector<std::pair<std::uint64_t, int>> g;
    std::uint64_t mass = 0, all = 0;
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
      REQUIRE(d.ownership().leaf_owner(d.cell(i)) == w.rank());
      mass += d.data(i).mass;
    }
    mpi::all_reduce(w, mass, all, std::plus<std::uint64_t>());
    REQUIRE(all == (std::uint64_t{1} << (2 * deepest)));
    g = gathered(d);
    std::sort(g.begin(), g.end());
    REQUIRE(g == leaves_of(t));
  };
  // Refining every leaf: the children of the leaves held whole go to their own ranks.
  auto next = t;
  for (std::size_t i = 0; i < next.size(); ++i) next.mark(i, irr::Mark::refine);
  next.adapt(split, merge);
  Events ev;
  count_events(t, next, stripes, ev);
  if (w.size() > 1) REQUIRE(ev.moved_children > 0);
  const auto refine_all = [&] {
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i) d.mark(i, irr::Mark::refine);
    d.adapt(fragile_split, fragile_merge);
  };
  armed("adapt", ev.moved_children > 0, refine_all);
  if (ev.moved_children > 0) refine_all();  // the same call, nothing armed
  t = next;
  same_leaves();
  // A deep corner, then a balance that splits leaves held whole.
  for (int k = 0; k < 4; ++k) {
    const auto pick = [](const irr::Cell<2>& c) {
      return c.level < 7 && near_circle(c, 0.45, 0.55, 0.02);
    };
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
      if (pick(d.cell(i))) d.mark(i, irr::Mark::refine);
    d.adapt(fragile_split, fragile_merge);
    for (std::size_t i = 0; i < t.size(); ++i)
      if (pick(t.cell(i))) t.mark(i, irr::Mark::refine);
    t.adapt(split, merge);
  }
  same_leaves();
  next = t;
  next.balance(irr::BalanceKind::full, split);
  Events bal;
  count_events(t, next, stripes, bal);
  if (w.size() > 1) REQUIRE(bal.moved_children > 0);
  armed("balance", bal.moved_children > 0,
        [&] { d.balance(irr::BalanceKind::full, fragile_split); });
  if (bal.moved_children > 0) {  // the same call, nothing armed
    std::uint64_t split_here = d.balance(irr::BalanceKind::full, fragile_split), split_all = 0;
    mpi::all_reduce(w, split_here, split_all, std::plus<std::uint64_t>());
    REQUIRE(split_all > 0);
  }
  t = next;
  same_leaves();
}
