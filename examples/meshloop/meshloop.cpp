// meshloop: the irregular loop of kaddoura-ranka-1995 Figure 8 on an unstructured Gmsh mesh
// (Figure 9), parallelized by the four phases of Figure 1: the 1D locality transform and
// contiguous blocks (A), the inspector (B), the executor's gather every iteration (C), and, with
// --slow-rank, capacities for a nonuniform environment with the efficiency of §4 (D's input).
//
//   mpiexec -n 4 meshloop [options] airfoil.msh
//     --iterations N        loop iterations (default 500)
//     --order O             hilbert | morton | peano | rcb (default hilbert)
//     --strategy S          schedule the loop uses: simple | sort1 | sort2 (default sort2)
//     --slow-rank R         rank R busy-waits so it runs --slow-factor times slower (default 2)
//     --capacities          partition by capacities 1/factor (otherwise equal blocks)
//     --verify              rank 0 also runs the sequential loop: same checksum required, and
//                           its time gives the efficiency
//     --expect-checksum H   fail unless the final checksum is H (16 hex digits)
//
// The checksum (FNV-1a over the bits of the final y in the file's vertex order) is printed on a
// line of its own; it is the same at every rank count and for every order, because every row is
// summed in the same order as the sequential loop sums it.
#include "figure8.hpp"
#include "gmsh_mesh.hpp"

#include <irregular/distributed/schedule/block_layout.hpp>
#include <irregular/distributed/schedule/inspector.hpp>
#include <irregular/distributed/schedule/executor.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/partition/direct_cut.hpp>
#include <irregular/partition/efficiency.hpp>
#include <irregular/partition/heterogeneous.hpp>
#include <irregular/schedule/graph.hpp>
#include <irregular/schedule/locality_transform.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace sch = irregular::schedule;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int iterations = 500;
  sch::LocalityOrder order = sch::LocalityOrder::hilbert;
  irregular::ScheduleStrategy strategy = irregular::ScheduleStrategy::sort2;
  int slow_rank = -1;
  double slow_factor = 2.0;
  bool capacities = false, verify = false;
  std::string expect, mesh;
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double initial_y(std::int64_t v) { return 1.0 + static_cast<double>((v * 7919) % 113) / 7.0; }

std::uint64_t checksum(const std::vector<double>& y) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const double x : y) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    for (int k = 0; k < 8; ++k) {
      h ^= (bits >> (8 * k)) & 0xff;
      h *= 1099511628211ULL;
    }
  }
  return h;
}

// Figure 8 on one processor, over the renumbered graph (the locality the parallel loop enjoys);
// vertex v starts with the value of file vertex original[v].
std::vector<double> sequential_loop(const sch::Graph& g, const std::vector<std::int64_t>& original, int iterations) {
  std::vector<double> y(static_cast<std::size_t>(g.vertices()));
  for (std::int64_t v = 0; v < g.vertices(); ++v) y[static_cast<std::size_t>(v)] = initial_y(original[static_cast<std::size_t>(v)]);
  meshloop::figure8_sweeps(g, y, iterations);
  return y;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int run(const boost::mpi::communicator& world, const Options& opt) {
  const int me = world.rank(), p = world.size();
  const bool root = me == 0;
  // Every rank reads the file; a bad file on any rank stops every rank with the same message.
  const auto mesh = irregular::mpi::agree(world, [&] { return meshloop::read_msh_file(opt.mesh); });
  const auto n = static_cast<std::int64_t>(mesh.nodes.size());
  const sch::Graph original = sch::graph_from_edges(n, mesh.edges);

  // Phase A: the 1D locality transform (replicated, deterministic) and contiguous blocks.
  auto t0 = Clock::now();
  std::vector<std::int64_t> T;
  if (mesh.planar) {
    std::vector<std::array<double, 2>> xs;
    for (const auto& x : mesh.nodes) xs.push_back({x[0], x[1]});
    T = sch::locality_transform<2>(opt.order, std::span<const std::array<double, 2>>(xs));
  } else {
    T = sch::locality_transform<3>(opt.order, std::span<const std::array<double, 3>>(mesh.nodes));
  }
  const sch::Graph g = sch::renumbered(original, T);
  const double transform_seconds = seconds_since(t0);
  std::vector<double> cap(static_cast<std::size_t>(p), 1.0);
  if (opt.slow_rank >= 0 && opt.slow_rank < p) cap[static_cast<std::size_t>(opt.slow_rank)] = 1.0 / opt.slow_factor;
  const std::vector<int> unit(static_cast<std::size_t>(n), 1);
  const auto parts = opt.capacities
                         ? irregular::partition::nicol_plus(std::span<const int>(unit), std::span<const double>(cap)).separators
                         : irregular::partition::direct_cut(std::span<const int>(unit), static_cast<std::size_t>(p)).separators;
  irregular::BlockLayout layout(world, sch::BlockTranslation::from_separators(parts));

  // This rank's rows: its block of the renumbered graph (Figure 8's ia, restricted).
  std::vector<std::int64_t> offsets{0}, refs;
  for (std::int64_t v = layout.local_begin(); v < layout.local_begin() + layout.local_size(); ++v) {
    for (const auto u : g.neighbours(v)) refs.push_back(u);
    offsets.push_back(static_cast<std::int64_t>(refs.size()));
  }

  // Phase B: schedule build time per strategy (median of 5, slowest rank).
  std::array<double, 3> build{};
  std::array<std::uint64_t, 3> messages{};
  for (int s = 0; s < 3; ++s) {
    std::vector<double> times;
    for (int rep = 0; rep < 5; ++rep) {
      world.barrier();
      const auto sched = irregular::build_schedule(layout, offsets, refs,
                                                   {.strategy = static_cast<irregular::ScheduleStrategy>(s), .verify_symmetry = false});
      times.push_back(boost::mpi::all_reduce(world, sched.stats().seconds, boost::mpi::maximum<double>()));
      messages[static_cast<std::size_t>(s)] = boost::mpi::all_reduce(world, sched.stats().messages_sent, std::plus<std::uint64_t>());
    }
    build[static_cast<std::size_t>(s)] = median(times);
  }
  const auto schedule = irregular::build_schedule(layout, offsets, refs, {.strategy = opt.strategy});

  // Phase C: the loop. Ghosts are refreshed by one gather per iteration.
  const std::int64_t nl = schedule.local_size();
  std::vector<double> y(static_cast<std::size_t>(schedule.total_size())), t(static_cast<std::size_t>(nl));
  std::vector<std::int64_t> inverse(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v) inverse[static_cast<std::size_t>(T[static_cast<std::size_t>(v)])] = v;
  for (std::int64_t l = 0; l < nl; ++l) y[static_cast<std::size_t>(l)] = initial_y(inverse[static_cast<std::size_t>(layout.local_begin() + l)]);
  irregular::ScheduleExecutor<double> executor(schedule);
  const auto local = schedule.local_refs();
  const bool slow = me == opt.slow_rank;
  world.barrier();
  t0 = Clock::now();
  for (int it = 0; it < opt.iterations; ++it) {
    executor.gather(y);
    const auto c0 = Clock::now();
    for (std::int64_t i = 0; i < nl; ++i) {
      double acc = 0;
      for (auto k = offsets[static_cast<std::size_t>(i)]; k < offsets[static_cast<std::size_t>(i) + 1]; ++k)
        acc += y[static_cast<std::size_t>(local[static_cast<std::size_t>(k)])];
      t[static_cast<std::size_t>(i)] = acc;
    }
    for (std::int64_t i = 0; i < nl; ++i) {
      const auto deg = offsets[static_cast<std::size_t>(i) + 1] - offsets[static_cast<std::size_t>(i)];
      if (deg > 0) y[static_cast<std::size_t>(i)] = t[static_cast<std::size_t>(i)] / static_cast<double>(deg);
    }
    if (slow) {  // a processor slow_factor times slower: busy-wait (factor - 1) times the compute time
      const double extra = (opt.slow_factor - 1.0) * seconds_since(c0);
      const auto w0 = Clock::now();
      while (seconds_since(w0) < extra) {
      }
    }
  }
  world.barrier();
  const double loop_seconds = seconds_since(t0);

  // Results in the file's numbering, on rank 0.
  std::vector<double> mine(y.begin(), y.begin() + nl);
  std::vector<std::vector<double>> all;
  boost::mpi::gather(world, mine, all, 0);
  const auto cost = sch::block_cost(g, layout.translation());
  std::vector<std::array<std::int64_t, 3>> per_rank;  // ghosts, send partners, vertices
  boost::mpi::gather(world, std::array<std::int64_t, 3>{schedule.ghost_size(), static_cast<std::int64_t>(schedule.send_ranks().size()), nl},
                     per_rank, 0);
  int status = 0;
  if (root) {
    std::vector<double> renumbered_y;
    for (const auto& part : all) renumbered_y.insert(renumbered_y.end(), part.begin(), part.end());
    std::vector<double> final_y(static_cast<std::size_t>(n));
    for (std::int64_t v = 0; v < n; ++v) final_y[static_cast<std::size_t>(v)] = renumbered_y[static_cast<std::size_t>(T[static_cast<std::size_t>(v)])];
    const std::uint64_t sum = checksum(final_y);

    std::printf("# meshloop: %s, %" PRId64 " vertices, %" PRId64 " edges, %d ranks, order %s, loop schedule %s, %d iterations\n",
                opt.mesh.c_str(), n, g.entries() / 2, p, std::string(sch::to_string(opt.order)).c_str(),
                std::string(irregular::to_string(opt.strategy)).c_str(), opt.iterations);
    std::printf("\nlocality transform + renumbering: %.4f s; edge cut %" PRId64 "\n", transform_seconds, cost.edge_cut);
    std::printf("\n| schedule | build time (s, median of 5, slowest rank) | schedule messages (all ranks) |\n|---|---|---|\n");
    for (int s = 0; s < 3; ++s)
      std::printf("| %s | %.6f | %" PRIu64 " |\n", std::string(irregular::to_string(static_cast<irregular::ScheduleStrategy>(s))).c_str(),
                  build[static_cast<std::size_t>(s)], messages[static_cast<std::size_t>(s)]);
    std::printf("\n| rank | vertices | ghosts | cut entries | send partners | capacity |\n|---|---|---|---|---|---|\n");
    for (int r = 0; r < p; ++r)
      std::printf("| %d | %" PRId64 " | %" PRId64 " | %" PRId64 " | %" PRId64 " | %.3f |\n", r, per_rank[static_cast<std::size_t>(r)][2],
                  per_rank[static_cast<std::size_t>(r)][0], cost.cut[static_cast<std::size_t>(r)], per_rank[static_cast<std::size_t>(r)][1],
                  cap[static_cast<std::size_t>(r)]);
    std::printf("\nloop: %.6f s total, %.3f us per iteration\n", loop_seconds, 1e6 * loop_seconds / opt.iterations);
    std::vector<double> loads(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) loads[static_cast<std::size_t>(r)] = static_cast<double>(per_rank[static_cast<std::size_t>(r)][2]);
    std::printf("model efficiency of the blocks under the capacities (partition::nonuniform_efficiency): %.3f\n",
                irregular::partition::nonuniform_efficiency(loads, cap));
    if (opt.verify) {
      const auto s0 = Clock::now();
      const auto seq = sequential_loop(g, inverse, opt.iterations);
      const double seq_seconds = seconds_since(s0);
      std::vector<double> seq_y(static_cast<std::size_t>(n));
      for (std::int64_t v = 0; v < n; ++v) seq_y[static_cast<std::size_t>(v)] = seq[static_cast<std::size_t>(T[static_cast<std::size_t>(v)])];
      const std::uint64_t seq_sum = checksum(seq_y);
      // §4: processor i alone takes T(p_i) = T_seq / c_i, so E = 1 / (T · sum_i c_i / T_seq).
      double csum = 0;
      for (double c : cap) csum += c;
      std::printf("sequential loop: %.6f s (%.3f us per iteration), checksum %016" PRIx64 " (%s)\n", seq_seconds,
                  1e6 * seq_seconds / opt.iterations, seq_sum, seq_sum == sum ? "identical" : "DIFFERENT");
      std::printf("efficiency (kaddoura-ranka §4): %.3f\n", seq_seconds / (loop_seconds * csum));
      if (seq_sum != sum) status = 1;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016" PRIx64, sum);
    std::printf("checksum %s\n", hex);
    if (!opt.expect.empty() && opt.expect != hex) {
      std::printf("checksum mismatch: expected %s\n", opt.expect.c_str());
      status = 1;
    }
  }
  boost::mpi::broadcast(world, status, 0);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  boost::mpi::environment env(argc, argv);
  boost::mpi::communicator world;
  Options opt;
  std::string bad;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    try {
      if (a == "--iterations" && has_value) opt.iterations = std::stoi(argv[++i]);
      else if (a == "--order" && has_value) opt.order = sch::parse_locality_order(argv[++i]);
      else if (a == "--strategy" && has_value) opt.strategy = irregular::parse_schedule_strategy(argv[++i]);
      else if (a == "--slow-rank" && has_value) opt.slow_rank = std::stoi(argv[++i]);
      else if (a == "--slow-factor" && has_value) opt.slow_factor = std::stod(argv[++i]);
      else if (a == "--capacities") opt.capacities = true;
      else if (a == "--verify") opt.verify = true;
      else if (a == "--expect-checksum" && has_value) opt.expect = argv[++i];
      else if (!a.empty() && a[0] != '-' && opt.mesh.empty()) opt.mesh = a;
      else bad = "unknown or incomplete option '" + a + "'";
    } catch (const std::exception& e) {
      bad = "bad value for " + a + ": " + e.what();
    }
  }
  if (opt.mesh.empty() && bad.empty()) bad = "no mesh file given";
  if (opt.iterations < 1 || !(opt.slow_factor >= 1.0)) bad = "need --iterations >= 1 and --slow-factor >= 1";
  if (!bad.empty()) {
    if (world.rank() == 0)
      std::fprintf(stderr, "meshloop: %s\nusage: meshloop [--iterations N] [--order hilbert|morton|peano|rcb] "
                           "[--strategy simple|sort1|sort2] [--slow-rank R] [--slow-factor F] [--capacities] [--verify] "
                           "[--expect-checksum HEX] mesh.msh\n", bad.c_str());
    return 2;
  }
  try {
    return run(world, opt);
  } catch (const irregular::collective_error& e) {
    if (world.rank() == 0) std::fprintf(stderr, "meshloop: %s (rank %d)\n", e.what(), e.failing_rank());
    return 1;
  }
}
