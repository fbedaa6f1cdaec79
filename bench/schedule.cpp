// bench_schedule: the inspector/executor of kaddoura-ranka-1995 on the meshloop example's mesh
//. Run at 1, 2 and 4 ranks; prints markdown tables:
//  1. schedule build time of simple, sort1 and sort2 next to the paper's Table 3;
//  2. the Figure 8 loop's time per iteration and efficiency next to Table 4;
//  3. edge cut and ghosts of the Hilbert, Morton, Peano and RCB orderings (and METIS k-way when
//     it was found at configure time), with the time each takes;
//  4. gather throughput as a fraction of plain MPI moving the same bytes to the same partners.
//   mpiexec -n 4 bench_schedule [--quick] mesh.msh
#include "../examples/meshloop/figure8.hpp"
#include "../examples/meshloop/gmsh_mesh.hpp"

#include <irregular/distributed/schedule/block_layout.hpp>
#include <irregular/distributed/schedule/inspector.hpp>
#include <irregular/distributed/schedule/executor.hpp>
#include <irregular/partition/direct_cut.hpp>
#include <irregular/schedule/graph.hpp>
#include <irregular/schedule/locality_transform.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#ifdef IRREGULAR_HAVE_METIS
#include <metis.h>
#endif

#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace sch = irregular::schedule;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Edge cut and ghosts (total and max per part) of any assignment of vertices to parts.
struct Cut {
  std::int64_t edge_cut = 0, ghosts_total = 0, ghosts_max = 0;
};
Cut cut_of(const sch::Graph& g, const std::vector<int>& part, int parts) {
  Cut c;
  std::vector<std::vector<std::int64_t>> remote(static_cast<std::size_t>(parts));
  for (std::int64_t v = 0; v < g.vertices(); ++v)
    for (const auto u : g.neighbours(v))
      if (part[static_cast<std::size_t>(u)] != part[static_cast<std::size_t>(v)]) {
        if (v < u) ++c.edge_cut;
        remote[static_cast<std::size_t>(part[static_cast<std::size_t>(v)])].push_back(u);
      }
  for (auto& r : remote) {
    std::sort(r.begin(), r.end());
    const auto k = static_cast<std::int64_t>(std::unique(r.begin(), r.end()) - r.begin());
    c.ghosts_total += k;
    c.ghosts_max = std::max(c.ghosts_max, k);
  }
  return c;
}

// Blocks of a 1D order T as a part vector.
std::vector<int> blocks_of(const std::vector<std::int64_t>& T, int parts) {
  const std::vector<int> unit(T.size(), 1);
  const auto sep = irregular::partition::direct_cut(std::span<const int>(unit), static_cast<std::size_t>(parts)).separators;
  const auto t = sch::BlockTranslation::from_separators(sep);
  std::vector<int> part(T.size());
  for (std::size_t v = 0; v < T.size(); ++v) part[v] = t.owner(T[v]);
  return part;
}

}  // namespace

int main(int argc, char** argv) {
  boost::mpi::environment env(argc, argv);
  boost::mpi::communicator world;
  const int me = world.rank(), p = world.size();
  bool quick = false;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") quick = true;
    else if (a != "--csv") path = a;
  }
  if (path.empty()) {
    if (me == 0) std::fprintf(stderr, "usage: bench_schedule [--quick] mesh.msh\n");
    return 2;
  }
  const int reps = quick ? 3 : 21, iterations = quick ? 20 : 500;
  const auto mesh = irregular::mpi::agree(world, [&] { return meshloop::read_msh_file(path); });
  const auto n = static_cast<std::int64_t>(mesh.nodes.size());
  const auto original = sch::graph_from_edges(n, mesh.edges);
  std::vector<std::array<double, 2>> xs;
  for (const auto& x : mesh.nodes) xs.push_back({x[0], x[1]});
  const std::span<const std::array<double, 2>> coords(xs);
  const auto T = sch::locality_transform<2>(sch::LocalityOrder::hilbert, coords);
  const auto g = sch::renumbered(original, T);
  const std::vector<int> unit(static_cast<std::size_t>(n), 1);
  irregular::BlockLayout layout(
      world, sch::BlockTranslation::from_separators(
                 irregular::partition::direct_cut(std::span<const int>(unit), static_cast<std::size_t>(p)).separators));
  std::vector<std::int64_t> offsets{0}, refs;
  for (std::int64_t v = layout.local_begin(); v < layout.local_begin() + layout.local_size(); ++v) {
    for (const auto u : g.neighbours(v)) refs.push_back(u);
    offsets.push_back(static_cast<std::int64_t>(refs.size()));
  }
  if (me == 0)
    std::printf("# bench_schedule: %s, %" PRId64 " vertices, %" PRId64 " edges, %d ranks, Hilbert order, equal blocks%s\n\n",
                path.c_str(), n, g.entries() / 2, p, quick ? " (quick)" : "");

  // 1. Schedule build time (median over reps of the slowest rank), next to Table 3.
  const double table3[3][4] = {{0.247, 0.171, 0.136, 0.131}, {0.236, 0.169, 0.130, 0.125}, {0.2, 0.188, 0.176, 0.290}};
  const char* paper_cols = "2, 3, 4, 5 workstations";
  std::array<double, 3> build{};
  for (int s = 0; s < 3; ++s) {
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
      world.barrier();
      const auto sched = irregular::build_schedule(layout, offsets, refs,
                                                   {.strategy = static_cast<irregular::ScheduleStrategy>(s), .verify_symmetry = false});
      t.push_back(boost::mpi::all_reduce(world, sched.stats().seconds, boost::mpi::maximum<double>()));
    }
    build[static_cast<std::size_t>(s)] = median(t);
  }
  if (me == 0) {
    std::printf("## Schedule build time (s), %d ranks, next to Table 3 (%s; SUN4 + Ethernet, 1995)\n\n", p, paper_cols);
    std::printf("| strategy | ours, %d ranks | paper: 2 | 3 | 4 | 5 |\n|---|---|---|---|---|---|\n", p);
    const char* names[3] = {"sort1", "sort2", "simple"};
    const int ours[3] = {1, 2, 0};
    for (int k = 0; k < 3; ++k)
      std::printf("| %s | %.6f | %.3f | %.3f | %.3f | %.3f |\n", names[k], build[static_cast<std::size_t>(ours[k])], table3[k][0],
                  table3[k][1], table3[k][2], table3[k][3]);
  }

  // 2. The loop, next to Table 4 (efficiency = T_seq / (p T_p), T_seq on rank 0 alone).
  const auto sched = irregular::build_schedule(layout, offsets, refs, {.strategy = irregular::ScheduleStrategy::sort2});
  const std::int64_t nl = sched.local_size();
  std::vector<double> y(static_cast<std::size_t>(sched.total_size()), 1.0), t(static_cast<std::size_t>(nl));
  for (std::int64_t l = 0; l < nl; ++l) y[static_cast<std::size_t>(l)] = 1.0 + static_cast<double>((layout.local_begin() + l) % 13);
  irregular::ScheduleExecutor<double> ex(sched);
  const auto local = sched.local_refs();
  const auto loop = [&](int its) {
    for (int it = 0; it < its; ++it) {
      ex.gather(y);
      for (std::int64_t i = 0; i < nl; ++i) {
        double acc = 0;
        for (auto k = offsets[static_cast<std::size_t>(i)]; k < offsets[static_cast<std::size_t>(i) + 1]; ++k)
          acc += y[static_cast<std::size_t>(local[static_cast<std::size_t>(k)])];
        t[static_cast<std::size_t>(i)] = acc;
      }
      for (std::int64_t i = 0; i < nl; ++i)
        y[static_cast<std::size_t>(i)] = t[static_cast<std::size_t>(i)] / static_cast<double>(offsets[static_cast<std::size_t>(i) + 1] - offsets[static_cast<std::size_t>(i)]);
    }
  };
  loop(5);  // warm-up
  std::vector<double> loop_t;
  for (int r = 0; r < (quick ? 1 : 3); ++r) {
    world.barrier();
    const auto t0 = Clock::now();
    loop(iterations);
    world.barrier();
    loop_t.push_back(since(t0));
  }
  const double tp = median(loop_t);
  double tseq = 0;
  if (me == 0) {  // the same loop over the whole renumbered graph, one process
    std::vector<double> ys(static_cast<std::size_t>(n), 1.0);
    std::vector<double> seq_t;
    for (int r = 0; r < (quick ? 1 : 3); ++r) {
      const auto t0 = Clock::now();
      meshloop::figure8_sweeps(g, ys, iterations);
      seq_t.push_back(since(t0));
    }
    tseq = median(seq_t);
    const double table4[5][2] = {{97.61, 1}, {55.68, 0.88}, {42.27, 0.77}, {34.06, 0.72}, {31.50, 0.62}};
    std::printf("\n## Figure 8 loop, %d iterations, %d ranks, next to Table 4\n\n", iterations, p);
    std::printf("| | time per iteration | %d iterations | efficiency |\n|---|---|---|---|\n", iterations);
    std::printf("| ours, sequential | %.2f us | %.4f s | 1 |\n", 1e6 * tseq / iterations, tseq);
    std::printf("| ours, %d ranks (sort2 schedule, gather each iteration) | %.2f us | %.4f s | %.2f |\n", p, 1e6 * tp / iterations, tp,
                tseq / (p * tp));
    if (p <= 5)
      std::printf("| paper, %d workstation%s | %.1f ms | %.2f s | %.2f |\n", p, p > 1 ? "s" : "", 1e3 * table4[p - 1][0] / 500,
                  table4[p - 1][0], table4[p - 1][1]);
  }

  // 3. Orderings: edge cut and ghosts at several part counts, and the time to compute each (rank 0).
  if (me == 0) {
    std::printf("\n## Orderings: edge cut / total ghosts / max ghosts per part (equal blocks), and time\n\n");
    const std::vector<int> part_counts = quick ? std::vector<int>{2, 4} : std::vector<int>{2, 4, 8, 16, 64};
    std::printf("| ordering | time (s) |");
    for (int k : part_counts) std::printf(" %d parts |", k);
    std::printf("\n|---|---|");
    for (std::size_t k = 0; k < part_counts.size(); ++k) std::printf("---|");
    std::printf("\n");
    for (auto o : {sch::LocalityOrder::hilbert, sch::LocalityOrder::morton, sch::LocalityOrder::peano, sch::LocalityOrder::rcb}) {
      const auto t0 = Clock::now();
      const auto order = sch::locality_transform<2>(o, coords);
      const double secs = since(t0);
      std::printf("| %s | %.4f |", std::string(sch::to_string(o)).c_str(), secs);
      for (int k : part_counts) {
        const auto c = cut_of(original, blocks_of(order, k), k);
        std::printf(" %" PRId64 " / %" PRId64 " / %" PRId64 " |", c.edge_cut, c.ghosts_total, c.ghosts_max);
      }
      std::printf("\n");
    }
    {
      std::vector<std::int64_t> file_order(static_cast<std::size_t>(n));
      for (std::int64_t v = 0; v < n; ++v) file_order[static_cast<std::size_t>(v)] = v;
      std::printf("| file order (Gmsh) | 0 |");
      for (int k : part_counts) {
        const auto c = cut_of(original, blocks_of(file_order, k), k);
        std::printf(" %" PRId64 " / %" PRId64 " / %" PRId64 " |", c.edge_cut, c.ghosts_total, c.ghosts_max);
      }
      std::printf("\n");
    }
#ifdef IRREGULAR_HAVE_METIS
    {
      std::vector<idx_t> xadj(original.offsets.begin(), original.offsets.end()), adj(original.adjacency.begin(), original.adjacency.end());
      std::vector<std::pair<std::vector<int>, double>> results;
      double total = 0;
      for (int k : part_counts) {
        idx_t nv = static_cast<idx_t>(n), ncon = 1, nparts = k, objval = 0;
        std::vector<idx_t> part(static_cast<std::size_t>(n));
        idx_t options[METIS_NOPTIONS];
        METIS_SetDefaultOptions(options);
        options[METIS_OPTION_SEED] = 1;
        const auto t0 = Clock::now();
        METIS_PartGraphKway(&nv, &ncon, xadj.data(), adj.data(), nullptr, nullptr, nullptr, &nparts, nullptr, nullptr, options, &objval,
                            part.data());
        const double secs = since(t0);
        total += secs;
        results.emplace_back(std::vector<int>(part.begin(), part.end()), secs);
      }
      std::printf("| METIS k-way (time: sum over the part counts) | %.4f |", total);
      for (std::size_t i = 0; i < part_counts.size(); ++i) {
        const auto c = cut_of(original, results[i].first, part_counts[i]);
        std::printf(" %" PRId64 " / %" PRId64 " / %" PRId64 " |", c.edge_cut, c.ghosts_total, c.ghosts_max);
      }
      std::printf("\n");
    }
#else
    std::printf("\nMETIS: not found at configure time (install Debian libmetis-dev and reconfigure for the k-way row).\n");
#endif
  }

  // 4. Gather throughput against plain MPI moving the same bytes to the same partners (pre-packed
  //    buffers, Irecv/Isend/Waitall): values of 8 bytes (the loop's doubles) and of 256 bytes.
  const auto throughput = [&](auto value) {
    using V = decltype(value);
    std::vector<V> vals(static_cast<std::size_t>(sched.total_size()), value);
    const int calls = quick ? 20 : 400;
    irregular::ScheduleExecutor<V> checked(sched), unchecked(sched, {.agree = false});
    std::vector<std::vector<V>> sbuf, rbuf;
    for (std::size_t j = 0; j < sched.send_ranks().size(); ++j) sbuf.emplace_back(sched.send_list(j).size(), value);
    for (std::size_t j = 0; j < sched.recv_ranks().size(); ++j) rbuf.emplace_back(sched.recv_slots(j).size());
    std::vector<MPI_Request> req;
    MPI_Comm comm = MPI_Comm(sched.comm());
    const auto plain = [&] {
      req.clear();
      for (std::size_t j = 0; j < rbuf.size(); ++j) {
        req.push_back(MPI_REQUEST_NULL);
        MPI_Irecv(rbuf[j].data(), static_cast<int>(rbuf[j].size() * sizeof(V)), MPI_BYTE, sched.recv_ranks()[j], 99, comm, &req.back());
      }
      for (std::size_t j = 0; j < sbuf.size(); ++j) {
        req.push_back(MPI_REQUEST_NULL);
        MPI_Isend(sbuf[j].data(), static_cast<int>(sbuf[j].size() * sizeof(V)), MPI_BYTE, sched.send_ranks()[j], 99, comm, &req.back());
      }
      MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE);
    };
    const auto time = [&](auto&& f) {
      std::vector<double> ts;
      for (int r = 0; r < (quick ? 2 : 7); ++r) {
        world.barrier();
        const auto t0 = Clock::now();
        for (int c = 0; c < calls; ++c) f();
        ts.push_back(boost::mpi::all_reduce(world, since(t0), boost::mpi::maximum<double>()) / calls);
      }
      return median(ts);
    };
    const double t_plain = time(plain);
    const double t_checked = time([&] { checked.gather(vals); });
    const double t_unchecked = time([&] { unchecked.gather(vals); });
    const auto bytes = boost::mpi::all_reduce(world, static_cast<std::uint64_t>(sched.ghost_size()) * sizeof(V), std::plus<std::uint64_t>());
    if (me == 0)
      std::printf("| %zu B | %" PRIu64 " | %.2f | %.2f (%.0f%%) | %.2f (%.0f%%) |\n", sizeof(V), bytes, 1e6 * t_plain, 1e6 * t_checked,
                  100 * t_plain / t_checked, 1e6 * t_unchecked, 100 * t_plain / t_unchecked);
  };
  if (me == 0)
    std::printf("\n## Gather vs plain MPI, %d ranks (us per call, slowest rank; %% = plain time / gather time, target >= 80%%)\n\n"
                "| value | bytes moved (all ranks) | plain MPI | gather, agreed errors | gather, agree = false |\n|---|---|---|---|---|\n",
                p);
  throughput(double{});
  throughput(std::array<double, 32>{});
  return 0;
}
