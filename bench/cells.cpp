// The distributed cell-data domain ("Benchmarks", third bullet) against p4est on the same
// mesh, side by side in one run when p4est is installed.
//   2D: unit square, uniform level 6, refined toward the circle of radius 0.3 centred (0.4, 0.4)
//       up to level 14 (the rule of bench/detail/circle_mesh.hpp, which p4est's callback uses too);
//       16 bytes of data per leaf (the centre) on both sides (p4est data_size 16).
//   3D: unit cube, uniform level 4, refined toward the sphere of radius 0.3 centred (0.4, 0.4, 0.4)
//       up to level 8 (the rule of bench/tree_anchors.cpp); 24 bytes per leaf (p8est data_size 24).
// FULL 2:1 balance, then partition. Phases timed (slowest rank, median after warm-up, CPU =
// CLOCK_THREAD_CPUTIME_ID and wall):
//   ours:  CellDomain(comm, box, L0, init) | rounds of mark + adapt | balance(full) | rebalance()
//   p4est: p4est_new_ext / p8est_new_ext   | *_refine(recursive)    | *_balance(FULL) | *_partition
// Our refine runs one collective adapt per level (8 rounds in 2D, 4 in 3D); p4est refines
// recursively in one call: the times are reported as they are. Messages and bytes of both libraries
// are counted by the PMPI layer compiled in (bench/detail/pmpi_counters.hpp). Exit 1 when the leaf
// counts differ from the serial CellTree mesh (244,054 in 2D at level 14) or from p4est's.
// Usage: mpiexec -n 2 bench_cells [--quick] [--dim 2|3] [--level L] [--reps N]
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
#include <p8est_extended.h>
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
  int dims = 0;      // 0: both
  int level = 0;     // 0: the default of the dimension (14 in 2D, 8 in 3D)
  int warmups = 1, reps = 5;
  bool quick = false;
};

// One mesh: uniform level, deepest level, and its per-dimension defaults.
template <int D>
struct Mesh {
  static constexpr int min_level = D == 2 ? cm::min_level : 4;
  static constexpr int default_level = D == 2 ? 14 : 8;
  static constexpr int quick_level = D == 2 ? 9 : 6;
};

// The leaf centre (as p4est's init callback writes into its user data): 16 bytes in 2D, 24 in 3D.
template <int D>
struct Datum {
  std::array<double, D> centre{};
};
static_assert(sizeof(Datum<2>) == 16 && sizeof(Datum<3>) == 24);

// The side of a cell at `level` in the unit cube: exact, and cheaper than std::ldexp (which
// showed up at 10% of our refine phase in perf); p4est's callbacks divide likewise.
double side(int level) { return 1.0 / static_cast<double>(std::uint64_t{1} << level); }

// The refinement rule on exact dyadic doubles, corner x0 and side h: the circle mesh's in 2D, the
// sphere's of bench/tree_anchors.cpp in 3D. Both libraries evaluate the same expression.
template <int D>
bool splits(const std::array<double, D>& x0, double h) {
  return cm::sphere_splits<D>(x0, h);
}

template <int D>
Datum<D> centre_of(const irr::Cell<D>& c) {
  const double h = side(c.level);
  Datum<D> x;
  for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d) x.centre[d] = (static_cast<double>(c.anchor[d]) + 0.5) * h;
  return x;
}

template <int D>
using Curve = irr::curve::Morton<D>;  // p4est's z-order
template <int D>
using Domain = irr::CellDomain<Datum<D>, irr::stencil::Moore<D>, Curve<D>>;

// The serial CellTree mesh: refined by the rule to max_level, FULL balanced; its leaf count is
// the reference (244,054 in 2D at level 14).
template <int D>
std::uint64_t reference_count(int max_level) {
  if constexpr (D == 2) {
    return cm::make_mesh(max_level).size();
  } else {
    auto t = irr::CellTree<Curve<D>, char>::uniform(Mesh<D>::min_level, char{0});
    t.refine(
        [](const irr::Cell<D>& c) {
          std::array<double, D> x0{};
          for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d) x0[d] = static_cast<double>(c.anchor[d]) * side(c.level);
          return splits<D>(x0, side(c.level));
        },
        max_level, [](const char&, const irr::Cell<D>&) { return char{0}; });
    t.balance(irr::BalanceKind::full, [](const char&, const irr::Cell<D>&) { return char{0}; });
    return t.size();
  }
}

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

struct Side {
  std::array<Timing, Phases> t;
  std::uint64_t leaves = 0;
  std::string before_partition, after_partition;
  int rounds = 0;
};

// ---- ours --------------------------------------------------------------------------------------

template <int D>
void run_ours(const mpi::communicator& comm, int level, Side& s, bool keep) {
  auto init = [](const irr::Cell<D>& c) { return centre_of<D>(c); };
  auto split = [](const Datum<D>&, const irr::Cell<D>& c) { return centre_of<D>(c); };
  auto merge = [](std::span<const Datum<D>> kids) { return kids.front(); };
  std::optional<Domain<D>> d;
  irr::Box<D> box;
  for (int k = 0; k < D; ++k) box.lo[static_cast<std::size_t>(k)] = 0.0, box.hi[static_cast<std::size_t>(k)] = 1.0;
  time_once(comm, s.t[New], keep, [&] { d.emplace(comm, box, Mesh<D>::min_level, init); });
  int rounds = 0;
  time_once(comm, s.t[Refine], keep, [&] {
    // A leaf that does not split now never will (the rule depends on the cell alone): one round per level.
    for (int lv = Mesh<D>::min_level; lv < level; ++lv, ++rounds) {
      for (std::size_t i = 0; i < d->local_leaf_count(); ++i) {
        const auto c = d->cell(i);
        if (c.level >= level) continue;
        const double h = side(c.level);
        std::array<double, D> x0{};
        for (std::size_t k = 0; k < static_cast<std::size_t>(D); ++k) x0[k] = static_cast<double>(c.anchor[k]) * h;
        if (splits<D>(x0, h)) d->mark(i, irr::Mark::refine);
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
    const auto want = centre_of<D>(d->cell(i));
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

// p4est / p8est through one set of names.
template <int D>
struct P4;
template <>
struct P4<2> {
  using forest = p4est_t;
  using quad = p4est_quadrant_t;
  static constexpr const char* names[Phases] = {"p4est_new_ext(level 6, data 16)", "p4est_refine(recursive)",
                                                "p4est_balance(CONNECT_FULL)", "p4est_partition"};
  static double len(const quad* q) { return static_cast<double>(P4EST_QUADRANT_LEN(q->level)) / P4EST_ROOT_LEN; }
  static std::array<double, 2> corner(const quad* q) {
    return {static_cast<double>(q->x) / P4EST_ROOT_LEN, static_cast<double>(q->y) / P4EST_ROOT_LEN};
  }
  static p4est_connectivity_t* new_conn() { return p4est_connectivity_new_unitsquare(); }
  static void destroy_conn(p4est_connectivity_t* c) { p4est_connectivity_destroy(c); }
  template <class Init>
  static forest* uniform(MPI_Comm comm, p4est_connectivity_t* c, int level, std::size_t bytes, Init init) {
    return p4est_new_ext(comm, c, 0, level, 1, bytes, init, nullptr);
  }
  template <class Refine, class Init>
  static void refine(forest* f, Refine r, Init init) { p4est_refine(f, 1, r, init); }
  template <class Init>
  static void balance(forest* f, Init init) { p4est_balance(f, P4EST_CONNECT_FULL, init); }
  static void partition(forest* f) { p4est_partition(f, 0, nullptr); }
  static void destroy(forest* f) { p4est_destroy(f); }
};
template <>
struct P4<3> {
  using forest = p8est_t;
  using quad = p8est_quadrant_t;
  static constexpr const char* names[Phases] = {"p8est_new_ext(level 4, data 24)", "p8est_refine(recursive)",
                                                "p8est_balance(CONNECT_FULL)", "p8est_partition"};
  static double len(const quad* q) { return static_cast<double>(P8EST_QUADRANT_LEN(q->level)) / P8EST_ROOT_LEN; }
  static std::array<double, 3> corner(const quad* q) {
    return {static_cast<double>(q->x) / P8EST_ROOT_LEN, static_cast<double>(q->y) / P8EST_ROOT_LEN,
            static_cast<double>(q->z) / P8EST_ROOT_LEN};
  }
  static p8est_connectivity_t* new_conn() { return p8est_connectivity_new_unitcube(); }
  static void destroy_conn(p8est_connectivity_t* c) { p8est_connectivity_destroy(c); }
  template <class Init>
  static forest* uniform(MPI_Comm comm, p8est_connectivity_t* c, int level, std::size_t bytes, Init init) {
    return p8est_new_ext(comm, c, 0, level, 1, bytes, init, nullptr);
  }
  template <class Refine, class Init>
  static void refine(forest* f, Refine r, Init init) { p8est_refine(f, 1, r, init); }
  template <class Init>
  static void balance(forest* f, Init init) { p8est_balance(f, P8EST_CONNECT_FULL, init); }
  static void partition(forest* f) { p8est_partition(f, 0, nullptr); }
  static void destroy(forest* f) { p8est_destroy(f); }
};

template <int D>
int refine_rule(typename P4<D>::forest*, p4est_topidx_t, typename P4<D>::quad* q) {
  if (q->level >= g_max_level) return 0;
  return splits<D>(P4<D>::corner(q), P4<D>::len(q));
}
template <int D>
void init_centre(typename P4<D>::forest*, p4est_topidx_t, typename P4<D>::quad* q) {
  const double h = P4<D>::len(q);
  const auto x = P4<D>::corner(q);
  auto* e = static_cast<Datum<D>*>(q->p.user_data);
  for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d) e->centre[d] = x[d] + h / 2;
}

template <int D>
void run_p4est(const mpi::communicator& comm, int level, Side& s, bool keep) {
  using P = P4<D>;
  g_max_level = level;
  auto* conn = P::new_conn();
  typename P::forest* p4 = nullptr;
  time_once(comm, s.t[New], keep, [&] {
    p4 = P::uniform(MPI_Comm(comm), conn, Mesh<D>::min_level, sizeof(Datum<D>), init_centre<D>);
  });
  time_once(comm, s.t[Refine], keep, [&] { P::refine(p4, refine_rule<D>, init_centre<D>); });
  time_once(comm, s.t[Balance], keep, [&] { P::balance(p4, init_centre<D>); });
  s.before_partition = per_rank(comm, static_cast<std::uint64_t>(p4->local_num_quadrants));
  time_once(comm, s.t[Partition], keep, [&] { P::partition(p4); });
  s.after_partition = per_rank(comm, static_cast<std::uint64_t>(p4->local_num_quadrants));
  s.leaves = static_cast<std::uint64_t>(p4->global_num_quadrants);
  P::destroy(p4);
  P::destroy_conn(conn);
}
#endif

template <int D>
const char* const ours_names[Phases] = {D == 2 ? "CellDomain(uniform level 6)" : "CellDomain(uniform level 4)",
                                        "refine: rounds of mark + adapt", "balance(BalanceKind::full)",
                                        "rebalance()"};

// One dimension: the repeats, the table; returns whether the leaf counts agree.
template <int D>
bool run_dimension(const mpi::communicator& world, const Config& cfg, bool have_p4est) {
  const int level = cfg.level ? cfg.level : (cfg.quick ? Mesh<D>::quick_level : Mesh<D>::default_level);
  const bool root = world.rank() == 0;
  const std::uint64_t reference = reference_count<D>(level);
  Side ours, p4;
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    const bool keep = rep >= cfg.warmups;
    run_ours<D>(world, level, ours, keep);
#ifdef IRREGULAR_HAVE_P4EST
    run_p4est<D>(world, level, p4, keep);
#endif
  }
  const bool anchor = D == 2 && level == 14;
  const bool failed = ours.leaves != reference || (anchor && reference != 244054) || (have_p4est && p4.leaves != ours.leaves);
  if (root) {
    std::printf("\n### Cell-data domain against %s: %s, levels %d..%d, FULL 2:1 balance, %zu bytes per leaf, %d ranks\n\n",
                D == 2 ? "p4est" : "p8est", D == 2 ? "circle mesh (2D)" : "sphere mesh (3D)", Mesh<D>::min_level, level,
                sizeof(Datum<D>), world.size());
    std::printf("Times: medians of %d after %d warm-up, slowest rank; CPU = CLOCK_THREAD_CPUTIME_ID; messages and "
                "bytes: PMPI counts summed over ranks (last repeat; p2p = sends, collectives = calls and bytes "
                "contributed).\n\n",
                cfg.reps, cfg.warmups);
    std::printf("Leaves: ours %llu, p4est %s, reference %llu%s. Per rank before partition: ours %s, p4est %s; "
                "after: ours %s, p4est %s. Our refine: %d rounds of adapt.\n\n",
                ull(ours.leaves), have_p4est ? std::to_string(p4.leaves).c_str() : "-", ull(reference),
                anchor ? " (the anchor's 244,054)" : " (serial CellTree mesh)", ours.before_partition.c_str(),
                have_p4est ? p4.before_partition.c_str() : "-", ours.after_partition.c_str(),
                have_p4est ? p4.after_partition.c_str() : "-", ours.rounds);
    std::printf("| phase | ours wall (ms) | ours CPU (ms) | p4est wall (ms) | p4est CPU (ms) | ours / p4est wall | "
                "ours / p4est CPU | ours p2p msgs / bytes | ours collectives / bytes | p4est p2p msgs / bytes | "
                "p4est collectives / bytes |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int ph = 0; ph < Phases; ++ph) {
      const auto& a = ours.t[ph];
      const auto& b = p4.t[ph];
#ifdef IRREGULAR_HAVE_P4EST
      const char* p4_name = P4<D>::names[ph];
#else
      const char* p4_name = "p4est";
#endif
      std::printf("| %s vs %s | %.2f | %.2f | %s | %s | %s | %s | %llu / %llu | %llu / %llu | %s | %s |\n",
                  ours_names<D>[ph], p4_name, a.wall_ms(), a.cpu_ms(), have_p4est ? fmt(b.wall_ms()).c_str() : "-",
                  have_p4est ? fmt(b.cpu_ms()).c_str() : "-", have_p4est ? ratio(a.wall_ms(), b.wall_ms()).c_str() : "-",
                  have_p4est ? ratio(a.cpu_ms(), b.cpu_ms()).c_str() : "-", ull(a.traffic.p2p_messages),
                  ull(a.traffic.p2p_bytes), ull(a.traffic.collectives), ull(a.traffic.collective_bytes),
                  have_p4est ? (std::to_string(b.traffic.p2p_messages) + " / " + std::to_string(b.traffic.p2p_bytes)).c_str() : "-",
                  have_p4est ? (std::to_string(b.traffic.collectives) + " / " + std::to_string(b.traffic.collective_bytes)).c_str() : "-");
    }
    if (have_p4est) {
      auto verdict = [&](Phase ph) {
        return ratio(ours.t[ph].wall_ms(), p4.t[ph].wall_ms()) + " wall, " + ratio(ours.t[ph].cpu_ms(), p4.t[ph].cpu_ms()) +
               " CPU (" + (ours.t[ph].wall_ms() <= p4.t[ph].wall_ms() ? "met" : "NOT met") + ")";
      };
      std::printf("\nTargets (<= 1.0x p4est, wall): refine %s, balance %s, partition %s.\n", verdict(Refine).c_str(),
                  verdict(Balance).c_str(), verdict(Partition).c_str());
    } else {
      std::printf("\np4est not installed: no ratios (install libp4est-dev and reconfigure).\n");
    }
    if (failed)
      std::fprintf(stderr, "bench_cells: %dD LEAF COUNT MISMATCH: ours %llu, p4est %llu, reference %llu\n", D,
                   ull(ours.leaves), ull(p4.leaves), ull(reference));
    std::fflush(stdout);
  }
  return !failed;
}

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  mpi::communicator world;
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) cfg.quick = true;
    else if (std::strcmp(argv[i], "--dim") == 0 && i + 1 < argc) cfg.dims = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--level") == 0 && i + 1 < argc) cfg.level = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) cfg.reps = std::atoi(argv[++i]);
    else {
      if (world.rank() == 0) std::fprintf(stderr, "usage: bench_cells [--quick] [--dim 2|3] [--level L] [--reps N]\n");
      return 2;
    }
  }
  if (cfg.quick) cfg.reps = 1;
  const bool bad_level = cfg.level != 0 && (cfg.level > 20 || (cfg.dims == 2 && cfg.level < Mesh<2>::min_level) ||
                                            (cfg.dims == 3 && cfg.level < Mesh<3>::min_level) || cfg.dims == 0);
  if ((cfg.dims != 0 && cfg.dims != 2 && cfg.dims != 3) || bad_level || cfg.reps < 1) {
    if (world.rank() == 0)
      std::fprintf(stderr, "bench_cells: --dim 2 or 3; --level (with --dim) at least the uniform level (6 in 2D, 4 "
                           "in 3D) and at most 20; --reps >= 1\n");
    return 2;
  }
  bool have_p4est = false;
#ifdef IRREGULAR_HAVE_P4EST
  have_p4est = true;
  sc_init(MPI_Comm(world), 0, 0, nullptr, SC_LP_ERROR);
  p4est_init(nullptr, SC_LP_ERROR);
#endif
  if (world.rank() == 0)
    std::printf("p4est: %s\n", have_p4est ? "installed (side by side, same process, alternating repeats)"
                                          : "not installed (its rows are skipped; our side runs)");
  bool ok = true;
  if (cfg.dims != 3) ok = run_dimension<2>(world, cfg, have_p4est) && ok;
  if (cfg.dims != 2) ok = run_dimension<3>(world, cfg, have_p4est) && ok;
#ifdef IRREGULAR_HAVE_P4EST
  sc_finalize();
#endif
  int f = ok ? 0 : 1, any = 0;
  MPI_Allreduce(&f, &any, 1, MPI_INT, MPI_MAX, world);
  return any;
}
