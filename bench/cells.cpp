// The distributed cell-data domain (issue 10, "Benchmarks", third bullet) against p4est on the same
// mesh, side by side in one run when p4est is installed: unit square, uniform level 6, refined toward
// the circle of radius 0.3 centred (0.4, 0.4) up to level 14 (the rule of bench/detail/circle_mesh.hpp,
// which p4est's callback uses too), FULL 2:1 balance, then partition; 16 bytes of data per leaf on
// both sides (p4est data_size 16). Phases timed (slowest rank, median after warm-up, CPU =
// CLOCK_THREAD_CPUTIME_ID and wall):
//   ours:  CellDomain(comm, box, 6, init) | rounds of mark + adapt | balance(full) | rebalance()
//   p4est: p4est_new_ext(min level 6)      | p4est_refine(recursive) | p4est_balance(FULL) | p4est_partition
// Our refine runs one collective adapt per level (8 rounds from 6 to 14); p4est refines recursively
// in one call: the times are reported as they are. Messages and bytes of both libraries are counted by
// the PMPI layer compiled in (bench/detail/pmpi_counters.hpp). Exit 1 when the leaf counts differ from
// the reference (244,054 at level 14; the serial CellTree mesh at other levels) or from p4est's.
// Usage: mpiexec -n 2 bench_cells [--quick] [--level L] [--reps N]
#include <irregular/cell_domain.hpp>
#include <irregular/curve/morton.hpp>

#include "detail/circle_mesh.hpp"
#include "detail/pmpi_counters.hpp"
#include "detail/timed_phase.hpp"
#include "detail/timing.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#ifdef IRREGULAR_HAVE_P4EST
#include <p4est_extended.h>
#endif

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace {

namespace irr = irregular;
namespace mpi = boost::mpi;
namespace cm = bench::circle_mesh;
namespace pc = pmpi_counters;
using bench::max_over;
using bench::time_once;
using bench::Timing;
using bench::Traffic;
using bench::median;
using bench::now_s;

struct Config {
  int level = 14;
  int warmups = 1, reps = 5;
  bool quick = false;
};

// 16 bytes per leaf: the leaf centre (as p4est's init callback writes into its 16-byte user data).
struct Datum {
  std::array<double, 2> centre{};
};
static_assert(sizeof(Datum) == 16);

// The side of a cell at `level` in the unit square: exact, and cheaper than std::ldexp (which
// showed up at 10% of our refine phase in perf); p4est's callbacks divide likewise.
double side(int level) { return 1.0 / static_cast<double>(std::uint64_t{1} << level); }

Datum centre_of(const irr::Cell<2>& c) {
  const double h = side(c.level);
  return {{(static_cast<double>(c.anchor[0]) + 0.5) * h, (static_cast<double>(c.anchor[1]) + 0.5) * h}};
}

using Curve = irr::curve::Morton<2>;  // p4est's z-order
using Domain = irr::CellDomain<Datum, irr::stencil::Moore<2>, Curve>;

// ---- measuring ---------------------------------------------------------------------------------

std::string per_rank(const mpi::communicator& comm, std::uint64_t mine) {
  std::vector<std::uint64_t> all;
  pc::enabled = false;
  mpi::all_gather(comm, mine, all);
  pc::enabled = true;
  std::string s;
  for (std::size_t r = 0; r < all.size(); ++r) s += (r ? " / " : "") + std::to_string(all[r]);
  return s;
}

std::string fmt(double x, int prec = 2) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, x);
  return b;
}
std::string ratio(double a, double b) { return b > 0 ? fmt(a / b, 2) + "x" : "-"; }
unsigned long long ull(std::uint64_t x) { return static_cast<unsigned long long>(x); }

enum Phase { New, Refine, Balance, Partition, Phases };
const char* const ours_names[Phases] = {"CellDomain(uniform level 6)", "refine: rounds of mark + adapt",
                                        "balance(BalanceKind::full)", "rebalance()"};
const char* const p4_names[Phases] = {"p4est_new_ext(level 6, data 16)", "p4est_refine(recursive)",
                                      "p4est_balance(CONNECT_FULL)", "p4est_partition"};

struct Side {
  std::array<Timing, Phases> t;
  std::uint64_t leaves = 0;
  std::string before_partition, after_partition;
  int rounds = 0;
};

// ---- ours --------------------------------------------------------------------------------------

void run_ours(const mpi::communicator& comm, const Config& cfg, Side& s, bool keep) {
  auto init = [](const irr::Cell<2>& c) { return centre_of(c); };
  auto split = [](const Datum&, const irr::Cell<2>& c) { return centre_of(c); };
  auto merge = [](std::span<const Datum> kids) { return kids.front(); };
  std::optional<Domain> d;
  time_once(comm, s.t[New], keep, [&] { d.emplace(comm, irr::Box<2>{{0.0, 0.0}, {1.0, 1.0}}, cm::min_level, init); });
  int rounds = 0;
  time_once(comm, s.t[Refine], keep, [&] {
    // A leaf that does not split now never will (the rule depends on the cell alone): one round per level.
    for (int lv = cm::min_level; lv < cfg.level; ++lv, ++rounds) {
      for (std::size_t i = 0; i < d->local_leaf_count(); ++i) {
        const auto c = d->cell(i);
        if (c.level >= cfg.level) continue;
        const double h = side(c.level);
        if (cm::splits(static_cast<double>(c.anchor[0]) * h, static_cast<double>(c.anchor[1]) * h, h))
          d->mark(i, irr::Mark::refine);
      }
      d->adapt(split, merge);
    }
  });
  s.rounds = rounds;
  time_once(comm, s.t[Balance], keep, [&] { d->balance(irr::BalanceKind::full, split); });
  s.before_partition = per_rank(comm, d->local_leaf_count());
  time_once(comm, s.t[Partition], keep, [&] { d->rebalance(); });
  s.after_partition = per_rank(comm, d->local_leaf_count());
  pc::enabled = false;
  s.leaves = d->global_leaf_count();
  // The data travelled with their leaves: every datum is its leaf's centre.
  std::uint64_t bad = 0, all = 0;
  for (std::size_t i = 0; i < d->local_leaf_count(); ++i) {
    const auto want = centre_of(d->cell(i));
    if (d->data(i).centre != want.centre) ++bad;
  }
  mpi::all_reduce(comm, bad, all, std::plus<std::uint64_t>());
  pc::enabled = true;
  if (all != 0) {
    if (comm.rank() == 0) std::fprintf(stderr, "bench_cells: %llu leaves carry a wrong datum\n", ull(all));
    s.leaves = 0;  // forces the failure
  }
}

// ---- p4est -------------------------------------------------------------------------------------

#ifdef IRREGULAR_HAVE_P4EST
int g_max_level = 14;
int refine_circle(p4est_t*, p4est_topidx_t, p4est_quadrant_t* q) {
  if (q->level >= g_max_level) return 0;
  const double h = static_cast<double>(P4EST_QUADRANT_LEN(q->level)) / P4EST_ROOT_LEN;
  return cm::splits(static_cast<double>(q->x) / P4EST_ROOT_LEN, static_cast<double>(q->y) / P4EST_ROOT_LEN, h);
}
void init_centre(p4est_t*, p4est_topidx_t, p4est_quadrant_t* q) {
  const double h = static_cast<double>(P4EST_QUADRANT_LEN(q->level)) / P4EST_ROOT_LEN;
  auto* e = static_cast<Datum*>(q->p.user_data);
  e->centre = {static_cast<double>(q->x) / P4EST_ROOT_LEN + h / 2, static_cast<double>(q->y) / P4EST_ROOT_LEN + h / 2};
}

void run_p4est(const mpi::communicator& comm, const Config& cfg, Side& s, bool keep) {
  g_max_level = cfg.level;
  p4est_connectivity_t* conn = p4est_connectivity_new_unitsquare();
  p4est_t* p4 = nullptr;
  time_once(comm, s.t[New], keep, [&] {
    p4 = p4est_new_ext(MPI_Comm(comm), conn, 0, cm::min_level, 1, sizeof(Datum), init_centre, nullptr);
  });
  time_once(comm, s.t[Refine], keep, [&] { p4est_refine(p4, 1, refine_circle, init_centre); });
  time_once(comm, s.t[Balance], keep, [&] { p4est_balance(p4, P4EST_CONNECT_FULL, init_centre); });
  s.before_partition = per_rank(comm, static_cast<std::uint64_t>(p4->local_num_quadrants));
  time_once(comm, s.t[Partition], keep, [&] { p4est_partition(p4, 0, nullptr); });
  s.after_partition = per_rank(comm, static_cast<std::uint64_t>(p4->local_num_quadrants));
  s.leaves = static_cast<std::uint64_t>(p4->global_num_quadrants);
  p4est_destroy(p4);
  p4est_connectivity_destroy(conn);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  mpi::communicator world;
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) cfg.quick = true;
    else if (std::strcmp(argv[i], "--level") == 0 && i + 1 < argc) cfg.level = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) cfg.reps = std::atoi(argv[++i]);
    else {
      if (world.rank() == 0) std::fprintf(stderr, "usage: bench_cells [--quick] [--level L] [--reps N]\n");
      return 2;
    }
  }
  if (cfg.quick) {
    cfg.level = 9;
    cfg.reps = 1;
  }
  if (cfg.level < cm::min_level || cfg.level > 20 || cfg.reps < 1) {
    if (world.rank() == 0) std::fprintf(stderr, "bench_cells: --level must lie in [%d, 20], --reps >= 1\n", cm::min_level);
    return 2;
  }
  const bool root = world.rank() == 0;
  bool have_p4est = false;
#ifdef IRREGULAR_HAVE_P4EST
  have_p4est = true;
  sc_init(MPI_Comm(world), 0, 0, nullptr, SC_LP_ERROR);
  p4est_init(nullptr, SC_LP_ERROR);
#endif
  // The reference leaf count: the serial CellTree mesh (244,054 at level 14).
  const std::uint64_t reference = cm::make_mesh(cfg.level).size();
  if (root)
    std::printf("p4est: %s\n", have_p4est ? "installed (side by side, same process, alternating repeats)"
                                          : "not installed (its rows are skipped; our side runs)");

  Side ours, p4;
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    const bool keep = rep >= cfg.warmups;
    run_ours(world, cfg, ours, keep);
#ifdef IRREGULAR_HAVE_P4EST
    run_p4est(world, cfg, p4, keep);
#endif
  }

  bool failed = ours.leaves != reference || (cfg.level == 14 && reference != 244054) ||
                (have_p4est && p4.leaves != ours.leaves);
  if (root) {
    std::printf("\n### Cell-data domain against p4est: circle mesh, levels %d..%d, FULL 2:1 balance, 16 bytes per "
                "leaf, %d ranks\n\n",
                cm::min_level, cfg.level, world.size());
    std::printf("Times: medians of %d after %d warm-up, slowest rank; CPU = CLOCK_THREAD_CPUTIME_ID; messages and "
                "bytes: PMPI counts summed over ranks (last repeat; p2p = sends, collectives = calls and bytes "
                "contributed).\n\n",
                cfg.reps, cfg.warmups);
    std::printf("Leaves: ours %llu, p4est %s, reference %llu%s. Per rank before partition: ours %s, p4est %s; "
                "after: ours %s, p4est %s. Our refine: %d rounds of adapt.\n\n",
                ull(ours.leaves), have_p4est ? std::to_string(p4.leaves).c_str() : "-", ull(reference),
                cfg.level == 14 ? " (the anchor's 244,054)" : " (serial CellTree mesh)", ours.before_partition.c_str(),
                have_p4est ? p4.before_partition.c_str() : "-", ours.after_partition.c_str(),
                have_p4est ? p4.after_partition.c_str() : "-", ours.rounds);
    std::printf("| phase | ours wall (ms) | ours CPU (ms) | p4est wall (ms) | p4est CPU (ms) | ours / p4est wall | "
                "ours / p4est CPU | ours p2p msgs / bytes | ours collectives / bytes | p4est p2p msgs / bytes | "
                "p4est collectives / bytes |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int ph = 0; ph < Phases; ++ph) {
      const auto& a = ours.t[ph];
      const auto& b = p4.t[ph];
      std::printf("| %s vs %s | %.2f | %.2f | %s | %s | %s | %s | %llu / %llu | %llu / %llu | %s | %s |\n", ours_names[ph],
                  p4_names[ph], a.wall_ms(), a.cpu_ms(), have_p4est ? fmt(b.wall_ms()).c_str() : "-",
                  have_p4est ? fmt(b.cpu_ms()).c_str() : "-", have_p4est ? ratio(a.wall_ms(), b.wall_ms()).c_str() : "-",
                  have_p4est ? ratio(a.cpu_ms(), b.cpu_ms()).c_str() : "-", ull(a.traffic.p2p_messages),
                  ull(a.traffic.p2p_bytes), ull(a.traffic.collectives), ull(a.traffic.collective_bytes),
                  have_p4est ? (std::to_string(b.traffic.p2p_messages) + " / " + std::to_string(b.traffic.p2p_bytes)).c_str() : "-",
                  have_p4est ? (std::to_string(b.traffic.collectives) + " / " + std::to_string(b.traffic.collective_bytes)).c_str() : "-");
    }
    if (have_p4est) {
      std::printf("\nTargets (<= 1.0x p4est, wall): refine %s (%s), balance %s (%s), partition %s (%s).\n",
                  ratio(ours.t[Refine].wall_ms(), p4.t[Refine].wall_ms()).c_str(),
                  ours.t[Refine].wall_ms() <= p4.t[Refine].wall_ms() ? "met" : "NOT met",
                  ratio(ours.t[Balance].wall_ms(), p4.t[Balance].wall_ms()).c_str(),
                  ours.t[Balance].wall_ms() <= p4.t[Balance].wall_ms() ? "met" : "NOT met",
                  ratio(ours.t[Partition].wall_ms(), p4.t[Partition].wall_ms()).c_str(),
                  ours.t[Partition].wall_ms() <= p4.t[Partition].wall_ms() ? "met" : "NOT met");
    } else {
      std::printf("\np4est not installed: no ratios (install libp4est-dev and reconfigure).\n");
    }
    if (failed)
      std::fprintf(stderr, "bench_cells: LEAF COUNT MISMATCH: ours %llu, p4est %llu, reference %llu\n",
                   ull(ours.leaves), ull(p4.leaves), ull(reference));
    std::fflush(stdout);
  }
#ifdef IRREGULAR_HAVE_P4EST
  sc_finalize();
#endif
  int f = failed ? 1 : 0, any = 0;
  MPI_Allreduce(&f, &any, 1, MPI_INT, MPI_MAX, world);
  return any;
}
