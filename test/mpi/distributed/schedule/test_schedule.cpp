// Inspector/executor under MPI (kaddoura-ranka-1995 §3.2–3.3, §5): translation, the three schedule
// generators against each other and brute force, message counts, gather/scatter against sequential
// values, the Figure 8 loop bitwise, and bad input agreed on every rank.
#include "../../../../bench/detail/pmpi_counters.hpp"  // counts the point-to-point messages
#include "../../../../examples/meshloop/figure8.hpp"
#include "../../../../examples/meshloop/gmsh_mesh.hpp"

#include <irregular/distributed/schedule/block_layout.hpp>
#include <irregular/distributed/schedule/inspector.hpp>
#include <irregular/distributed/schedule/executor.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/partition/direct_cut.hpp>
#include <irregular/partition/heterogeneous.hpp>
#include <irregular/schedule/graph.hpp>
#include <irregular/schedule/locality_transform.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace sch = irregular::schedule;
using irregular::BlockLayout;
using irregular::CommSchedule;
using irregular::ScheduleExecutor;
using irregular::ScheduleStrategy;

namespace {

constexpr std::array<ScheduleStrategy, 3> strategies = {ScheduleStrategy::simple, ScheduleStrategy::sort1,
                                                        ScheduleStrategy::sort2};

// A jittered triangulated w x h grid written as a Gmsh 2.2 file (vertex numbers shuffled), so the
// parallel path reads a mesh like the example does.
std::string grid_msh(int w, int h, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(-0.3, 0.3);
  std::vector<int> tag(static_cast<std::size_t>(w * h));
  std::iota(tag.begin(), tag.end(), 1);
  std::shuffle(tag.begin(), tag.end(), rng);
  std::ostringstream o;
  o.precision(17);
  o << "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n" << w * h << "\n";
  std::vector<std::string> lines(static_cast<std::size_t>(w * h));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      std::ostringstream l;
      l.precision(17);
      const int t = tag[static_cast<std::size_t>(y * w + x)];
      l << t << " " << x + jitter(rng) << " " << y + jitter(rng) << " 0\n";
      lines[static_cast<std::size_t>(t - 1)] = l.str();
    }
  for (const auto& l : lines) o << l;
  o << "$EndNodes\n$Elements\n" << 2 * (w - 1) * (h - 1) << "\n";
  int e = 0;
  const auto at = [&](int x, int y) { return tag[static_cast<std::size_t>(y * w + x)]; };
  for (int y = 0; y + 1 < h; ++y)
    for (int x = 0; x + 1 < w; ++x) {
      o << ++e << " 2 2 0 1 " << at(x, y) << " " << at(x + 1, y) << " " << at(x + 1, y + 1) << "\n";
      o << ++e << " 2 2 0 1 " << at(x, y) << " " << at(x + 1, y + 1) << " " << at(x, y + 1) << "\n";
    }
  o << "$EndElements\n";
  return o.str();
}

struct Problem {
  sch::Graph original, g;  // g: renumbered by the locality transform
  std::vector<std::int64_t> T;
  sch::BlockTranslation blocks;
};

Problem make_problem(const boost::mpi::communicator& world, int w, int h, unsigned seed, bool capacities = false) {
  std::istringstream in(grid_msh(w, h, seed));
  const auto mesh = meshloop::read_msh(in, "grid.msh");
  Problem pr;
  pr.original = sch::graph_from_edges(static_cast<std::int64_t>(mesh.nodes.size()), mesh.edges);
  std::vector<std::array<double, 2>> xs;
  for (const auto& x : mesh.nodes) xs.push_back({x[0], x[1]});
  pr.T = sch::locality_transform<2>(sch::LocalityOrder::hilbert, std::span<const std::array<double, 2>>(xs));
  pr.g = sch::renumbered(pr.original, pr.T);
  const std::vector<int> unit(static_cast<std::size_t>(pr.g.vertices()), 1);
  const auto p = static_cast<std::size_t>(world.size());
  if (capacities) {
    std::vector<double> cap(p);
    for (std::size_t r = 0; r < p; ++r) cap[r] = 1.0 + static_cast<double>(r % 3);  // uneven processors
    pr.blocks = sch::BlockTranslation::from_separators(
        irregular::partition::nicol_plus(std::span<const int>(unit), std::span<const double>(cap)).separators);
  } else {
    pr.blocks = sch::BlockTranslation::from_separators(
        irregular::partition::direct_cut(std::span<const int>(unit), p).separators);
  }
  return pr;
}

// This rank's rows of g under the layout: offsets and global references.
struct Rows {
  std::vector<std::int64_t> offsets{0}, refs;
};
Rows local_rows(const sch::Graph& g, const BlockLayout& layout) {
  Rows r;
  for (std::int64_t v = layout.local_begin(); v < layout.local_begin() + layout.local_size(); ++v) {
    for (const auto u : g.neighbours(v)) r.refs.push_back(u);
    r.offsets.push_back(static_cast<std::int64_t>(r.refs.size()));
  }
  return r;
}

bool all(const boost::mpi::communicator& c, bool ok) {
  return boost::mpi::all_reduce(c, ok ? 1 : 0, boost::mpi::minimum<int>()) == 1;
}
std::uint64_t sum(const boost::mpi::communicator& c, std::uint64_t v) {
  return boost::mpi::all_reduce(c, v, std::plus<std::uint64_t>());
}

double value_of(std::int64_t g) { return 0.5 + static_cast<double>((g * 37) % 101); }

}  // namespace

TEST_CASE("translation by block boundaries equals a brute-force table on every rank", "[schedule]") {
  boost::mpi::communicator world;
  for (bool caps : {false, true}) {
    const auto pr = make_problem(world, 13, 11, 3, caps);
    const BlockLayout layout(world, pr.blocks);
    // The brute-force table: every rank lists its own (global, local) pairs, all gathered.
    std::vector<std::int64_t> mine;
    for (std::int64_t l = 0; l < layout.local_size(); ++l) mine.push_back(layout.local_begin() + l);
    std::vector<std::vector<std::int64_t>> table;
    boost::mpi::all_gather(world, mine, table);
    bool ok = true;
    for (int r = 0; r < world.size(); ++r)
      for (std::size_t l = 0; l < table[static_cast<std::size_t>(r)].size(); ++l) {
        const auto h = layout.translation().translate(table[static_cast<std::size_t>(r)][l]);
        ok = ok && h.rank == r && h.local == static_cast<std::int64_t>(l);
      }
    std::int64_t covered = 0;
    for (const auto& t : table) covered += static_cast<std::int64_t>(t.size());
    REQUIRE(all(world, ok && covered == pr.g.vertices()));
  }
}

TEST_CASE("the three generators agree with brute force; sort1/sort2 send no schedule messages", "[schedule]") {
  boost::mpi::communicator world;
  const auto pr = make_problem(world, 19, 14, 7);
  const BlockLayout layout(world, pr.blocks);
  const auto rows = local_rows(pr.g, layout);
  // Brute-force ghost set: distinct remote references.
  std::set<std::int64_t> expected;
  for (const auto g : rows.refs)
    if (layout.translation().owner(g) != world.rank()) expected.insert(g);

  std::vector<std::vector<std::int64_t>> ghost_sets;
  std::vector<std::uint64_t> sends;
  for (const auto strategy : strategies) {
    INFO(irregular::to_string(strategy));
    const auto before = pmpi_counters::totals;
    const CommSchedule s =
        irregular::build_schedule(layout, rows.offsets, rows.refs, {.strategy = strategy, .verify_symmetry = false});
    const auto d = pmpi_counters::totals - before;
    sends.push_back(d.sum_calls(pmpi_counters::is_send));
    std::vector<std::int64_t> gs(s.ghost_globals().begin(), s.ghost_globals().end());
    std::sort(gs.begin(), gs.end());
    ghost_sets.push_back(gs);
    bool ok = std::set<std::int64_t>(gs.begin(), gs.end()) == expected && gs.size() == expected.size();
    // The rewritten indirection array names the same global index through local or ghost slots.
    for (std::size_t k = 0; k < rows.refs.size(); ++k) {
      const auto l = s.local_refs()[k];
      const auto g = l < s.local_size() ? layout.local_begin() + l : s.ghost_globals()[static_cast<std::size_t>(l - s.local_size())];
      ok = ok && g == rows.refs[k];
    }
    // Gather equals the owners' values.
    std::vector<double> y(static_cast<std::size_t>(s.total_size()), -1.0);
    for (std::int64_t l = 0; l < s.local_size(); ++l) y[static_cast<std::size_t>(l)] = value_of(layout.local_begin() + l);
    ScheduleExecutor<double> ex(s);
    const auto before_gather = pmpi_counters::totals;
    ex.gather(y);
    const auto dg = pmpi_counters::totals - before_gather;
    ok = ok && dg.sum_calls(pmpi_counters::is_send) == s.send_ranks().size();  // one message per partner
    for (std::int64_t k = 0; k < s.ghost_size(); ++k)
      ok = ok && y[static_cast<std::size_t>(s.local_size() + k)] == value_of(s.ghost_globals()[static_cast<std::size_t>(k)]);
    // Message counts from the schedule stats agree with the PMPI count.
    ok = ok && s.stats().messages_sent == d.sum_calls(pmpi_counters::is_send);
    REQUIRE(all(world, ok));
  }
  REQUIRE(all(world, ghost_sets[0] == ghost_sets[1] && ghost_sets[1] == ghost_sets[2]));
  // sort1 and sort2 exchange nothing; simple sends requests and answers whenever there are ghosts.
  REQUIRE(sum(world, sends[1]) == 0);
  REQUIRE(sum(world, sends[2]) == 0);
  const auto ghosts_anywhere = sum(world, expected.size());
  REQUIRE((sum(world, sends[0]) > 0) == (ghosts_anywhere > 0));
  if (world.size() > 1) REQUIRE(ghosts_anywhere > 0);
}

TEST_CASE("scatter with sum equals the sequential sums; begin/end overlap", "[schedule]") {
  boost::mpi::communicator world;
  const auto pr = make_problem(world, 17, 12, 9, true);
  const BlockLayout layout(world, pr.blocks);
  const auto rows = local_rows(pr.g, layout);
  const auto& t = layout.translation();
  // Sequential oracle from the replicated graph: vertex v receives own(v) plus, from every rank r
  // whose rows reference v remotely, the contribution (r + 1) * 1000 + v (exact in double).
  const auto own = [](std::int64_t v) { return static_cast<double>(v % 17); };
  for (const auto strategy : strategies) {
    INFO(irregular::to_string(strategy));
    const auto s = irregular::build_schedule(layout, rows.offsets, rows.refs, {.strategy = strategy});
    std::vector<double> y(static_cast<std::size_t>(s.total_size()));
    for (std::int64_t l = 0; l < s.local_size(); ++l) y[static_cast<std::size_t>(l)] = own(layout.local_begin() + l);
    for (std::int64_t k = 0; k < s.ghost_size(); ++k)
      y[static_cast<std::size_t>(s.local_size() + k)] =
          (world.rank() + 1) * 1000.0 + static_cast<double>(s.ghost_globals()[static_cast<std::size_t>(k)]);
    const std::vector<double> ghosts_before(y.begin() + s.local_size(), y.end());
    ScheduleExecutor<double> ex(s);
    ex.scatter_begin(y);
    double overlap = 0;  // work between begin and end touches only local data
    for (std::int64_t l = 0; l < s.local_size(); ++l) overlap += 1.0;
    ex.scatter_end();
    bool ok = overlap == static_cast<double>(s.local_size());
    for (std::int64_t l = 0; l < s.local_size(); ++l) {
      const std::int64_t v = layout.local_begin() + l;
      double want = own(v);
      for (int r = 0; r < world.size(); ++r) {
        if (r == world.rank()) continue;
        bool referenced = false;
        for (std::int64_t u = t.begin(r); u < t.end(r) && !referenced; ++u)
          for (const auto x : pr.g.neighbours(u)) referenced = referenced || x == v;
        if (referenced) want += (r + 1) * 1000.0 + static_cast<double>(v);
      }
      ok = ok && y[static_cast<std::size_t>(l)] == want;
    }
    ok = ok && std::equal(ghosts_before.begin(), ghosts_before.end(), y.begin() + s.local_size());
    REQUIRE(all(world, ok));
  }
}

TEST_CASE("the Figure 8 loop equals the sequential loop bitwise after 50 iterations", "[schedule]") {
  boost::mpi::communicator world;
  const auto pr = make_problem(world, 21, 16, 21);
  const auto init = [](std::int64_t v) { return 1.0 + static_cast<double>((v * 7919) % 113) / 7.0; };
  // Sequential, on the original numbering.
  const std::int64_t n = pr.original.vertices();
  std::vector<double> ys(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v) ys[static_cast<std::size_t>(v)] = init(v);
  meshloop::figure8_sweeps(pr.original, ys, 50);
  std::vector<std::int64_t> inverse(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v) inverse[static_cast<std::size_t>(pr.T[static_cast<std::size_t>(v)])] = v;
  const BlockLayout layout(world, pr.blocks);
  const auto rows = local_rows(pr.g, layout);
  for (const auto strategy : strategies) {
    const auto s = irregular::build_schedule(layout, rows.offsets, rows.refs, {.strategy = strategy});
    const std::int64_t nl = s.local_size();
    std::vector<double> y(static_cast<std::size_t>(s.total_size())), tl(static_cast<std::size_t>(nl));
    for (std::int64_t l = 0; l < nl; ++l) y[static_cast<std::size_t>(l)] = init(inverse[static_cast<std::size_t>(layout.local_begin() + l)]);
    ScheduleExecutor<double> ex(s);
    const auto refs = s.local_refs();
    for (int it = 0; it < 50; ++it) {
      ex.gather(y);
      for (std::int64_t i = 0; i < nl; ++i) {
        double acc = 0;
        for (auto k = rows.offsets[static_cast<std::size_t>(i)]; k < rows.offsets[static_cast<std::size_t>(i) + 1]; ++k)
          acc += y[static_cast<std::size_t>(refs[static_cast<std::size_t>(k)])];
        tl[static_cast<std::size_t>(i)] = acc;
      }
      for (std::int64_t i = 0; i < nl; ++i)
        y[static_cast<std::size_t>(i)] = tl[static_cast<std::size_t>(i)] / static_cast<double>(rows.offsets[static_cast<std::size_t>(i) + 1] - rows.offsets[static_cast<std::size_t>(i)]);
    }
    bool ok = true;
    for (std::int64_t l = 0; l < nl; ++l) {
      const double want = ys[static_cast<std::size_t>(inverse[static_cast<std::size_t>(layout.local_begin() + l)])];
      ok = ok && std::memcmp(&want, &y[static_cast<std::size_t>(l)], sizeof(double)) == 0;
    }
    INFO(irregular::to_string(strategy));
    REQUIRE(all(world, ok));
  }
}

TEST_CASE("an asymmetric pattern under sort1/sort2 is caught in debug builds", "[schedule]") {
  boost::mpi::communicator world;
  if (world.size() < 2) return;  // one rank has no remote references at all
  const auto pr = make_problem(world, 11, 9, 5);
  const BlockLayout layout(world, pr.blocks);
  auto rows = local_rows(pr.g, layout);
  // The last rank's first row also references vertex 0 (rank 0's), which does not reference back.
  if (world.rank() == world.size() - 1 && !rows.refs.empty()) {
    rows.refs.insert(rows.refs.begin() + rows.offsets[1], 0);
    for (std::size_t i = 1; i < rows.offsets.size(); ++i) ++rows.offsets[i];
  }
  for (const auto strategy : {ScheduleStrategy::sort1, ScheduleStrategy::sort2}) {
    INFO(irregular::to_string(strategy));
    int failing = -1;
    std::string what;
    try {
      (void)irregular::build_schedule(layout, rows.offsets, rows.refs, {.strategy = strategy});
    } catch (const irregular::collective_error& e) {
      failing = e.failing_rank();
      what = e.what();
    }
    REQUIRE(all(world, failing >= 0 && what.find("not symmetric") != std::string::npos));
    REQUIRE(boost::mpi::all_reduce(world, failing, boost::mpi::maximum<int>()) == failing);
  }
  // simple handles any pattern, and the extra value arrives.
  const auto s = irregular::build_schedule(layout, rows.offsets, rows.refs, {.strategy = ScheduleStrategy::simple});
  std::vector<double> y(static_cast<std::size_t>(s.total_size()), 0.0);
  for (std::int64_t l = 0; l < s.local_size(); ++l) y[static_cast<std::size_t>(l)] = value_of(layout.local_begin() + l);
  ScheduleExecutor<double>(s).gather(y);
  bool ok = true;
  for (std::int64_t k = 0; k < s.ghost_size(); ++k)
    ok = ok && y[static_cast<std::size_t>(s.local_size() + k)] == value_of(s.ghost_globals()[static_cast<std::size_t>(k)]);
  REQUIRE(all(world, ok));
}

TEST_CASE("bad input on one rank is agreed on every rank", "[schedule]") {
  boost::mpi::communicator world;
  const int bad_rank = world.size() - 1;
  const auto pr = make_problem(world, 12, 10, 17);
  const BlockLayout layout(world, pr.blocks);
  const auto rows = local_rows(pr.g, layout);
  const auto caught = [&](auto&& f, const char* needle) {
    int failing = -1;
    std::string what;
    try {
      f();
    } catch (const irregular::collective_error& e) {
      failing = e.failing_rank();
      what = e.what();
    }
    return all(world, failing == bad_rank && what.find(needle) != std::string::npos);
  };

  SECTION("an index outside [0, n)") {
    for (const auto strategy : strategies) {
      auto refs = rows.refs;
      if (world.rank() == bad_rank) refs.push_back(pr.g.vertices());
      auto offsets = rows.offsets;
      if (world.rank() == bad_rank) ++offsets.back();
      REQUIRE(caught([&] { (void)irregular::build_schedule(layout, offsets, refs, {.strategy = strategy}); }, "outside [0, "));
    }
  }
  SECTION("value arrays of the wrong length, nothing changed") {
    const auto s = irregular::build_schedule(layout, rows.offsets, rows.refs);
    std::vector<double> y(static_cast<std::size_t>(s.total_size()), 3.0);
    for (std::int64_t l = 0; l < s.local_size(); ++l) y[static_cast<std::size_t>(l)] = value_of(layout.local_begin() + l);
    if (world.rank() == bad_rank) y.push_back(0.0);
    const auto copy = y;
    ScheduleExecutor<double> ex(s);
    REQUIRE(caught([&] { ex.gather(y); }, "values"));
    REQUIRE(caught([&] { ex.scatter(y); }, "values"));
    REQUIRE(all(world, std::equal(copy.begin(), copy.begin() + s.local_size(), y.begin())));
    // The executor is usable again with right lengths.
    if (world.rank() == bad_rank) y.pop_back();
    ex.gather(y);
    bool ok = true;
    for (std::int64_t k = 0; k < s.ghost_size(); ++k)
      ok = ok && y[static_cast<std::size_t>(s.local_size() + k)] == value_of(s.ghost_globals()[static_cast<std::size_t>(k)]);
    REQUIRE(all(world, ok));
  }
  SECTION("a malformed or truncated mesh file names the line") {
    const std::string good = grid_msh(5, 4, 1);
    const std::string truncated = good.substr(0, good.rfind('\n', good.find("$EndNodes") - 30) + 1);
    std::string malformed = good;
    malformed.replace(malformed.find("\n2 2 2 0 1 ") + 1, 1, "x");  // an element tag that is no number
    const std::string path = "schedule_mesh_np" + std::to_string(world.size()) + "_r" + std::to_string(world.rank()) + ".msh";
    for (const auto& [text, needle] : {std::pair<std::string, std::string>{truncated, "end of file"},
                                       std::pair<std::string, std::string>{malformed, "expected an element tag"}}) {
      {
        std::ofstream out(path);
        out << (world.rank() == bad_rank ? text : good);
      }
      const auto line_of = [&](const std::string& t, const std::string& what) {
        if (what == "end of file") return std::count(t.begin(), t.end(), '\n') + 1;
        return std::count(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.find("\nx 2 2 0 1 ") + 1), '\n') + 1;
      };
      const std::string expect_line = ":" + std::to_string(line_of(text, needle)) + ": ";
      int failing = -1;
      std::string what;
      try {
        (void)irregular::mpi::agree(world, [&] { return meshloop::read_msh_file(path); });
      } catch (const irregular::collective_error& e) {
        failing = e.failing_rank();
        what = e.what();
      }
      INFO(what);
      REQUIRE(all(world, failing == bad_rank && what.find(needle) != std::string::npos &&
                             what.find(expect_line) != std::string::npos));
    }
    std::remove(path.c_str());
  }
  SECTION("a schedule used after a remap is stale on every rank") {
    auto moving = BlockLayout(world, pr.blocks);
    const auto s = irregular::build_schedule(moving, rows.offsets, rows.refs);
    std::vector<double> y(static_cast<std::size_t>(s.total_size()), 1.0);
    ScheduleExecutor<double> ex(s);
    ex.gather(y);  // fine before the remap
    // Remap: everything shifts by one vertex towards rank 0 (same p, same n).
    auto b = pr.blocks.boundaries();
    for (std::size_t r = 1; r + 1 < b.size(); ++r) b[r] = std::max(b[r - 1], b[r] - 1);
    const sch::BlockTranslation old = moving.translation();
    moving.remap(sch::BlockTranslation(b));
    REQUIRE(all(world, s.stale()));
    int failing = -1;
    std::string what;
    try {
      ex.gather(y);
    } catch (const irregular::collective_error& e) {
      failing = e.failing_rank();
      what = e.what();
    }
    REQUIRE(all(world, failing == 0 && what.find("stale") != std::string::npos));
    // Data follow the remap; a rebuilt schedule works.
    std::vector<double> mine(static_cast<std::size_t>(old.count(world.rank())));
    for (std::size_t l = 0; l < mine.size(); ++l) mine[l] = value_of(old.begin(world.rank()) + static_cast<std::int64_t>(l));
    const auto moved = moving.redistribute(old, std::span<const double>(mine));
    bool ok = static_cast<std::int64_t>(moved.size()) == moving.local_size();
    for (std::size_t l = 0; ok && l < moved.size(); ++l) ok = moved[l] == value_of(moving.local_begin() + static_cast<std::int64_t>(l));
    const auto rows2 = local_rows(pr.g, moving);
    const auto s2 = irregular::build_schedule(moving, rows2.offsets, rows2.refs);
    std::vector<double> y2(static_cast<std::size_t>(s2.total_size()));
    std::copy(moved.begin(), moved.end(), y2.begin());
    ScheduleExecutor<double>(s2).gather(y2);
    for (std::int64_t k = 0; k < s2.ghost_size(); ++k)
      ok = ok && y2[static_cast<std::size_t>(s2.local_size() + k)] == value_of(s2.ghost_globals()[static_cast<std::size_t>(k)]);
    REQUIRE(all(world, ok && !s2.stale()));
  }
  SECTION("layouts agree on their boundaries") {
    auto b = pr.blocks.boundaries();
    if (world.rank() == bad_rank && world.size() > 1) b[1] = b[1] + 1 <= b[2] ? b[1] + 1 : b[1] - 1;
    if (world.size() > 1)
      REQUIRE(caught([&] { BlockLayout l(world, sch::BlockTranslation(b)); }, "differ"));
    std::vector<std::int64_t> too_many(static_cast<std::size_t>(world.size()) + 2, 0);
    too_many.back() = pr.g.vertices();
    REQUIRE(caught([&] { BlockLayout l(world, world.rank() == bad_rank ? sch::BlockTranslation(too_many) : pr.blocks); }, "blocks for"));
  }
}
