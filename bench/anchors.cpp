// Anchors: partition_points (serial and distributed) and the domain build against Zoltan (HSFC,
// RCB) and p4est, side by side in one run, on the same seeded weighted points. The serial call is
// also timed beside the same job composed by hand from the library's public pieces (curve keys,
// sort_by_key, PrefixSums + nicol_plus), repeats alternated with Zoltan HSFC's. Zoltan and p4est
// are used only when installed (IRREGULAR_HAVE_ZOLTAN / IRREGULAR_HAVE_P4EST); otherwise the
// bench says so and measures ours alone. The p4est anchor mesh (244,054 leaves at level 14) is
// built without p4est too, and our rebalance() on it is timed beside p4est_partition. Run under
// `mpiexec -n 2`. Usage: mpiexec -n 2 bench_anchors [--quick] [--mesh-only]  (--mesh-only: the
// p4est anchor mesh alone)
#include <irregular/distributed/partitioners/partition_points.hpp>
#include <irregular/irregular.hpp>
#include <irregular/partition/nicol_plus.hpp>
#include <irregular/tree/partition_points.hpp>
#include <irregular/tree/sort.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include "detail/circle_mesh.hpp"
#include "detail/timing.hpp"

#ifdef IRREGULAR_HAVE_ZOLTAN
#include <zoltan.h>
#endif
#ifdef IRREGULAR_HAVE_P4EST
#include <p4est_extended.h>
#endif

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

namespace {

namespace irr = irregular;
namespace mpi = boost::mpi;
using bench::cpu_now_s;
using bench::max_over;
using bench::median;
using bench::now_s;
using Curve = irr::curve::Hilbert<2>;
using Pt = std::array<double, 2>;

// Half uniform in the unit square, half in 3 Gaussian clusters (sigma 0.05, clamped); weight 4
// where x > 0.5, else 1. The same on every rank for a seed.
void make_points(std::size_t n, std::uint64_t seed, std::vector<Pt>& pts, std::vector<double>& w) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 0.05);
  constexpr std::array<Pt, 3> centres{{{0.2, 0.75}, {0.35, 0.6}, {0.7, 0.25}}};
  pts.resize(n);
  w.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 2 == 0) {
      pts[i] = {u(rng), u(rng)};
    } else {
      const auto& c = centres[(i / 2) % 3];
      pts[i] = {std::clamp(c[0] + g(rng), 0.0, 1.0), std::clamp(c[1] + g(rng), 0.0, 1.0)};
    }
    w[i] = pts[i][0] > 0.5 ? 4.0 : 1.0;
  }
}

struct Quality {
  double imbalance = 0;
  std::size_t empty = 0;
};

// max/avg - 1 and empty parts of an assignment (global, from each rank's local part ids).
[[maybe_unused]] Quality quality(const mpi::communicator& comm, const std::vector<int>& part,
                                 const std::vector<double>& w, std::size_t parts) {
  std::vector<double> load(parts, 0.0), all(parts, 0.0);
  std::vector<double> count(parts, 0.0), call(parts, 0.0);
  for (std::size_t i = 0; i < part.size(); ++i) {
    load[static_cast<std::size_t>(part[i])] += w[i];
    count[static_cast<std::size_t>(part[i])] += 1;
  }
  mpi::all_reduce(comm, load.data(), static_cast<int>(parts), all.data(), std::plus<double>());
  mpi::all_reduce(comm, count.data(), static_cast<int>(parts), call.data(), std::plus<double>());
  double total = 0, mx = 0;
  Quality q;
  for (std::size_t k = 0; k < parts; ++k) {
    total += all[k];
    mx = std::max(mx, all[k]);
    if (call[k] == 0) ++q.empty;
  }
  q.imbalance = total > 0 ? mx / (total / static_cast<double>(parts)) - 1 : 0;
  return q;
}

struct Row {
  std::string what;
  std::size_t n = 0, parts = 0;
  int ranks = 0;
  double seconds = 0;
  Quality q;
  std::string note;
  double cpu = 0;  // median CPU seconds of the calling thread (max over ranks); 0: not measured
};

std::vector<Row> g_rows;

// Milliseconds with 2 decimals, "-" for a figure not measured (0).
std::string ms_or_dash(double seconds) {
  if (!(seconds > 0)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", seconds * 1e3);
  return b;
}

void print_rows(const mpi::communicator& world, const char* title) {
  if (world.rank() == 0) {
    std::printf(
        "\n### %s\n\n| method | N | parts | ranks | wall (ms) | CPU (ms) | imbalance | empty parts "
        "| note |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
        title);
    for (const auto& r : g_rows)
      std::printf("| %s | %zu | %zu | %d | %.2f | %s | %.4f | %zu | %s |\n", r.what.c_str(), r.n,
                  r.parts, r.ranks, r.seconds * 1e3, ms_or_dash(r.cpu).c_str(), r.q.imbalance,
                  r.q.empty, r.note.c_str());
    std::fflush(stdout);
  }
  g_rows.clear();
}

// A barrier that waits asleep: while rank 0 times the serial rows alone, the other ranks would
// otherwise spin in MPI on the cores it runs on.
void idle_barrier(const mpi::communicator& comm) {
  MPI_Request req;
  MPI_Ibarrier(MPI_Comm(comm), &req);
  int done = 0;
  for (MPI_Test(&req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&req, &done, MPI_STATUS_IGNORE))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

struct Config {
  int warmups = 1, reps = 3;
};

// ---- ours ---------------------------------------------------------------------------------

// The same job by hand from the library's public pieces: finest Hilbert keys (Box::cell_of +
// Curve::index), a stable sort of the point indices by key (irregular::sort_by_key: ties keep
// input order, like the call), the weights in curve order, PrefixSums + nicol_plus (the optimal
// bottleneck with balanced separators), part ids. The separators may differ from the call's
// canonical ones; the bottleneck may not.
struct HandResult {
  std::vector<std::uint32_t> part;
  double bottleneck = 0;
};

HandResult hand_composition(const std::vector<Pt>& pts, const std::vector<double>& w,
                            std::size_t parts) {
  const irr::Box<2> box{{0, 0}, {1, 1}};
  const std::size_t n = pts.size();
  const irr::coord_t cells = irr::coord_t{1} << Curve::max_level;
  std::vector<Curve::index_type> keys(n);
  std::vector<std::uint32_t> idx(n);
  for (std::size_t i = 0; i < n; ++i) {
    keys[i] = Curve::index(box.cell_of(pts[i], Curve::max_level, cells));
    idx[i] = static_cast<std::uint32_t>(i);
  }
  irr::sort_by_key(idx, keys);
  std::vector<double> chain(n);
  for (std::size_t i = 0; i < n; ++i) chain[i] = w[idx[i]];
  const irr::partition::PrefixSums<double> ps{std::span<const double>(chain)};
  const auto cut = irr::partition::nicol_plus(ps, parts);
  HandResult r;
  r.part.resize(n);
  for (std::size_t k = 0; k < parts; ++k)
    for (std::size_t i = cut.separators[k]; i < cut.separators[k + 1]; ++i)
      r.part[idx[i]] = static_cast<std::uint32_t>(k);
  r.bottleneck = static_cast<double>(cut.bottleneck);
  return r;
}

#ifdef IRREGULAR_HAVE_ZOLTAN
Row zoltan(const mpi::communicator& comm, const char* method, const std::vector<Pt>& mine,
           const std::vector<double>& w, std::uint64_t first_gid, std::size_t n, std::size_t parts,
           Config cfg);
#endif

// Serial: the call, the hand composition and Zoltan HSFC, one repeat of each in turn (a load
// spike on the shared machine then hits all three alike), medians of wall and CPU time. Adds
// their rows to g_rows and returns a line comparing them.
std::string serial_trio(const mpi::communicator& self, const std::vector<Pt>& pts,
                        const std::vector<double>& w, std::size_t parts, Config cfg,
                        bool have_zoltan) {
  const irr::Box<2> box{{0, 0}, {1, 1}};
  const std::size_t n = pts.size();
  std::vector<double> t_call, t_hand, c_call, c_hand;
  irr::PointPartition r;
  HandResult h;
  Row z_row;
  std::vector<double> t_z, c_z;
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    const bool keep = rep >= cfg.warmups;
    double t0 = now_s(), c0 = cpu_now_s();
    r = irr::partition_points<Curve>(box, pts, w, parts);
    double c1 = cpu_now_s(), t1 = now_s();
    if (keep) t_call.push_back(t1 - t0), c_call.push_back(c1 - c0);
    t0 = now_s(), c0 = cpu_now_s();
    h = hand_composition(pts, w, parts);
    c1 = cpu_now_s(), t1 = now_s();
    if (keep) t_hand.push_back(t1 - t0), c_hand.push_back(c1 - c0);
#ifdef IRREGULAR_HAVE_ZOLTAN
    if (have_zoltan) {
      z_row = zoltan(self, "HSFC", pts, w, 0, n, parts, Config{0, 1});
      if (keep) t_z.push_back(z_row.seconds), c_z.push_back(z_row.cpu);
    }
#else
    (void)self;
    (void)have_zoltan;
#endif
  }
  std::size_t differ = 0;
  for (std::size_t i = 0; i < n; ++i) differ += r.part[i] != h.part[i];
  const bool same_bottleneck = r.bottleneck == h.bottleneck;
  const double call = median(t_call), hand = median(t_hand);
  Row call_row{"irregular partition_points (serial, Hilbert)",
               n,
               parts,
               1,
               call,
               {r.imbalance(), r.empty_parts()},
               "",
               median(c_call)};
  Quality hq;
  {
    std::vector<double> load(parts, 0.0);
    std::vector<std::size_t> count(parts, 0);
    for (std::size_t i = 0; i < n; ++i) load[h.part[i]] += w[i], ++count[h.part[i]];
    double total = 0, mx = 0;
    for (std::size_t k = 0; k < parts; ++k)
      total += load[k], mx = std::max(mx, load[k]), hq.empty += count[k] == 0;
    hq.imbalance = total > 0 ? mx / (total / static_cast<double>(parts)) - 1 : 0;
  }
  Row hand_row{"hand composition of the library's public pieces (keys, sort_by_key, nicol_plus)",
               n,
               parts,
               1,
               hand,
               hq,
               "same bottleneck as the call: " + std::string(same_bottleneck ? "yes" : "NO") +
                   "; " + std::to_string(differ) +
                   " points in another part (balanced vs canonical separators)",
               median(c_hand)};
  char line[512];
  std::snprintf(line, sizeof line,
                "N = %zu: call / hand = %.3fx wall, %.3fx CPU (target <= 1.1x: %s)", n, call / hand,
                median(c_call) / median(c_hand), call <= 1.1 * hand ? "met" : "NOT met");
  std::string out = line;
  call_row.note = "call / hand " + std::to_string(call / hand).substr(0, 5) + "x";
  if (!t_z.empty()) {
    const double z = median(t_z);
    z_row.seconds = z;
    z_row.cpu = median(c_z);
    std::snprintf(line, sizeof line,
                  "; call / Zoltan HSFC = %.3fx wall, %.3fx CPU (target <= 0.10x: %s)", call / z,
                  call_row.cpu / z_row.cpu, call <= 0.10 * z ? "met" : "NOT met");
    out += line;
    call_row.note += "; call / Zoltan HSFC " + std::to_string(call / z).substr(0, 5) + "x";
  }
  if (!same_bottleneck) out += "; the hand composition's bottleneck DIFFERS";
  g_rows.push_back(call_row);
  g_rows.push_back(hand_row);
  if (!t_z.empty()) g_rows.push_back(z_row);
  return out;
}

Row ours_distributed(const mpi::communicator& comm, const std::vector<Pt>& mine,
                     const std::vector<double>& w, std::size_t n, std::size_t parts, Config cfg) {
  const irr::Box<2> box{{0, 0}, {1, 1}};
  std::vector<double> t, tc;
  irr::PointPartition r;
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    comm.barrier();
    const double t0 = now_s(), c0 = cpu_now_s();
    r = irr::partition_points<Curve>(comm, box, mine, w, parts);
    const double dc = max_over(comm, cpu_now_s() - c0);
    const double dt = max_over(comm, now_s() - t0);
    if (rep >= cfg.warmups) t.push_back(dt), tc.push_back(dc);
  }
  return {"irregular partition_points (distributed)",
          n,
          parts,
          comm.size(),
          median(t),
          {r.imbalance(), r.empty_parts()},
          "incl. sample sort, part ids sent home",
          median(tc)};
}

struct Particle {
  Pt position;
  double weight;
};
struct WeightOf {
  double operator()(const Particle& p) const { return p.weight; }
};

Row ours_domain(const mpi::communicator& comm, const std::vector<Pt>& mine,
                const std::vector<double>& w, std::size_t n, Config cfg) {
  using Metric = irr::load::PerElement<WeightOf>;
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2, 1>, Curve, Metric>;
  const irr::Box<2> box{{0, 0}, {1, 1}};
  std::vector<Particle> share(mine.size());
  for (std::size_t i = 0; i < mine.size(); ++i) share[i] = {mine[i], w[i]};
  std::vector<double> t;
  double imb = 0;
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    Domain dom(comm, box, irr::refine::max_elements(32), {.load = Metric{WeightOf{}}});
    dom.insert(share);
    comm.barrier();
    const double t0 = now_s();
    dom.build();
    const double dt = max_over(comm, now_s() - t0);
    if (rep >= cfg.warmups) t.push_back(dt);
    imb = dom.load_report().imbalance;
  }
  return {"irregular IrregularDomain::build (max_elements(32))",
          n,
          static_cast<std::size_t>(comm.size()),
          comm.size(),
          median(t),
          {imb, 0},
          "sort + leaves + cut + migration"};
}

// ---- Zoltan -------------------------------------------------------------------------------

#ifdef IRREGULAR_HAVE_ZOLTAN
struct ZoltanInput {
  const std::vector<Pt>* pts;
  const std::vector<double>* w;
  std::uint64_t first_gid;
};

int z_num_obj(void* d, int* ierr) {
  *ierr = ZOLTAN_OK;
  return static_cast<int>(static_cast<ZoltanInput*>(d)->pts->size());
}
void z_obj_list(void* d, int, int, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int wdim, float* wgts,
                int* ierr) {
  const auto* in = static_cast<ZoltanInput*>(d);
  for (std::size_t i = 0; i < in->pts->size(); ++i) {
    gids[i] = static_cast<ZOLTAN_ID_TYPE>(in->first_gid + i);
    lids[i] = static_cast<ZOLTAN_ID_TYPE>(i);
    if (wdim > 0) wgts[i] = static_cast<float>((*in->w)[i]);
  }
  *ierr = ZOLTAN_OK;
}
int z_num_geom(void*, int* ierr) {
  *ierr = ZOLTAN_OK;
  return 2;
}
void z_geom_multi(void* d, int, int, int num_obj, ZOLTAN_ID_PTR, ZOLTAN_ID_PTR lids, int,
                  double* geom, int* ierr) {
  const auto* in = static_cast<ZoltanInput*>(d);
  for (int i = 0; i < num_obj; ++i) {
    const auto& p = (*in->pts)[lids[i]];
    geom[2 * i] = p[0];
    geom[2 * i + 1] = p[1];
  }
  *ierr = ZOLTAN_OK;
}

Row zoltan(const mpi::communicator& comm, const char* method, const std::vector<Pt>& mine,
           const std::vector<double>& w, std::uint64_t first_gid, std::size_t n, std::size_t parts,
           Config cfg) {
  ZoltanInput in{&mine, &w, first_gid};
  std::vector<double> t, tc;
  std::vector<int> part(mine.size(), 0);
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    Zoltan_Struct* zz = Zoltan_Create(MPI_Comm(comm));
    Zoltan_Set_Param(zz, "DEBUG_LEVEL", "0");
    Zoltan_Set_Param(zz, "LB_METHOD", method);
    Zoltan_Set_Param(zz, "NUM_GID_ENTRIES", "1");
    Zoltan_Set_Param(zz, "NUM_LID_ENTRIES", "1");
    Zoltan_Set_Param(zz, "OBJ_WEIGHT_DIM", "1");
    Zoltan_Set_Param(zz, "RETURN_LISTS", "PARTS");
    Zoltan_Set_Param(zz, "NUM_GLOBAL_PARTS", std::to_string(parts).c_str());
    Zoltan_Set_Num_Obj_Fn(zz, z_num_obj, &in);
    Zoltan_Set_Obj_List_Fn(zz, z_obj_list, &in);
    Zoltan_Set_Num_Geom_Fn(zz, z_num_geom, &in);
    Zoltan_Set_Geom_Multi_Fn(zz, z_geom_multi, &in);
    int changes, ngid, nlid, nimp, nexp;
    ZOLTAN_ID_PTR igid, ilid, egid, elid;
    int *iproc, *ipart, *eproc, *epart;
    comm.barrier();
    const double t0 = now_s(), c0 = cpu_now_s();
    const int rc = Zoltan_LB_Partition(zz, &changes, &ngid, &nlid, &nimp, &igid, &ilid, &iproc,
                                       &ipart, &nexp, &egid, &elid, &eproc, &epart);
    const double c1 = cpu_now_s(), t1 = now_s();
    const double dc = max_over(comm, c1 - c0);
    const double dt = max_over(comm, t1 - t0);
    if (rc != ZOLTAN_OK) std::fprintf(stderr, "bench_anchors: Zoltan %s returned %d\n", method, rc);
    for (int i = 0; i < nexp; ++i) part[elid[i]] = epart[i];
    Zoltan_LB_Free_Part(&igid, &ilid, &iproc, &ipart);
    Zoltan_LB_Free_Part(&egid, &elid, &eproc, &epart);
    Zoltan_Destroy(&zz);
    if (rep >= cfg.warmups) t.push_back(dt), tc.push_back(dc);
  }
  return {std::string("Zoltan ") + method + " (LB_Partition)",
          n,
          parts,
          comm.size(),
          median(t),
          quality(comm, part, w, parts),
          "IMBALANCE_TOL default (1.1)",
          median(tc)};
}
#endif

// ---- the p4est anchor mesh -----------------------------------------------------------------
// Unit square, uniform level 6, refined toward the circle of radius 0.3 centred (0.4, 0.4) up to
// max_level, FULL 2:1 balanced: 244,054 leaves at level 14 (detail/circle_mesh.hpp, shared with
// bench_ghost). Both sides evaluate the rule on the same doubles.
namespace cm = bench::circle_mesh;
using cm::cell_key;
using cm::internal_cells;
using cm::make_mesh;
using cm::Mesh;
using cm::MeshCurve;
constexpr int mesh_min_level = cm::min_level;
[[maybe_unused]] bool circle_splits(double x0, double y0, double h) {
  return cm::splits(x0, y0, h);
}

struct AnchorRow {
  std::string what;
  std::size_t leaves = 0;
  std::string before;                                         // leaves per rank before the call
  double seconds = 0, cpu = 0, partition = 0, migration = 0;  // medians; max over ranks
  std::uint64_t shipped = 0, bytes = 0, messages = 0;
  std::string note;
};
std::vector<AnchorRow> g_anchor;
bool g_mesh_mismatch = false;  // the domain's tree or p4est's forest is not the mesh: exit 1

std::string per_rank(const std::vector<double>& v) {
  std::string s;
  for (double x : v) s += (s.empty() ? "" : " / ") + std::to_string(static_cast<long long>(x));
  return s;
}

struct MeshElement {
  Pt position;  // the centre of its leaf
};

// Ours: the same leaves in an IrregularDomain (Morton, load::Constant: every leaf costs 1 like
// p4est's uniform partition), one element per leaf at its centre. The state before the timed
// call matches p4est's: built at uniform level 6 (partitioned 2048 / 2048), then the condition
// becomes the mesh and move_elements (no position changes) refines the tree in place, unbalanced.
// Timed: rebalance({.threshold = 0}) on the already-built tree. `resident`: the domain keeps its
// arrays' headroom mapped (DomainOptions::resident_headroom), so the arrivals fault no pages in.
AnchorRow ours_rebalance(const mpi::communicator& comm, const Mesh& mesh, Config cfg,
                         bool resident = false) {
  using Domain = irr::IrregularDomain<MeshElement, irr::stencil::Moore<2, 1>, MeshCurve>;
  const auto internal = internal_cells(mesh);
  struct State {
    bool full = false;
    const std::unordered_set<std::uint64_t>* internal = nullptr;
  } state{false, &internal};
  auto condition = [&state](const irr::Cell<2>& c, std::size_t) {
    return state.full ? state.internal->contains(cell_key(c)) : c.level < mesh_min_level;
  };
  std::vector<MeshElement> mine;
  const auto p = static_cast<std::size_t>(comm.size()), me = static_cast<std::size_t>(comm.rank());
  for (std::size_t i = me; i < mesh.size(); i += p) {
    const auto c = mesh.cell(i);
    const double h = std::ldexp(1.0, -c.level);
    mine.push_back({{(static_cast<double>(c.anchor[0]) + 0.5) * h,
                     (static_cast<double>(c.anchor[1]) + 0.5) * h}});
  }
  std::vector<double> t, tc, tp, tm;
  AnchorRow row;
  row.what =
      resident ? "irregular IrregularDomain::rebalance, resident_headroom (SfcBlocking, Morton<2>)"
               : "irregular IrregularDomain::rebalance (SfcBlocking, Morton<2>)";
  typename Domain::options_type options;
  options.resident_headroom = resident;
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    state.full = false;
    Domain dom(comm, irr::Box<2>{{0, 0}, {1, 1}}, condition, options);
    dom.insert(mine);
    dom.build();
    state.full = true;
    dom.move_elements([](MeshElement&) {});
    const auto before = dom.load_report();
    const auto leaves = dom.global_leaf_count();
    comm.barrier();
    const double t0 = now_s(), c0 = cpu_now_s();
    const bool remapped = dom.rebalance({.threshold = 0.0});
    if (!remapped) g_mesh_mismatch = true;
    const double c1 = cpu_now_s(), t1 = now_s();
    const double dt = max_over(comm, t1 - t0), dc = max_over(comm, c1 - c0);
    const auto& prof = dom.last_profile();
    const double pp = max_over(comm, prof.partition), pm = max_over(comm, prof.migration);
    if (rep >= cfg.warmups) {
      t.push_back(dt);
      tc.push_back(dc);
      tp.push_back(pp);
      tm.push_back(pm);
    }
    const auto& mig = dom.last_migration();
    row.leaves = leaves;
    row.before = per_rank(before.loads);
    row.shipped = mig.elements;
    row.bytes = mig.bytes;
    row.messages = mig.messages;
    row.note = std::string(remapped ? "remapped" : "NOT remapped") + "; max_unbalance before " +
               std::to_string(before.max_unbalance).substr(0, 6) + "; leaves moved " +
               std::to_string(mig.hnodes) + "; after " + per_rank(dom.load_report().loads);
    if (leaves != mesh.size()) g_mesh_mismatch = true;
    if (leaves != mesh.size() && comm.rank() == 0)
      std::fprintf(stderr, "bench_anchors: the domain has %llu leaves, the mesh %zu\n",
                   static_cast<unsigned long long>(leaves), mesh.size());
  }
  row.seconds = median(t);
  row.cpu = median(tc);
  row.partition = median(tp);
  row.migration = median(tm);
  if (row.shipped > 0)
    row.note += "; " + std::to_string(row.bytes / row.shipped) +
                " bytes per shipped element (element " + std::to_string(sizeof(MeshElement)) +
                " + its key and leaf)";
  return row;
}

#ifdef IRREGULAR_HAVE_P4EST
int g_max_level = 14;
int refine_circle(p4est_t*, p4est_topidx_t, p4est_quadrant_t* q) {
  if (q->level >= g_max_level) return 0;
  const double h = static_cast<double>(P4EST_QUADRANT_LEN(q->level)) / P4EST_ROOT_LEN;
  return circle_splits(static_cast<double>(q->x) / P4EST_ROOT_LEN,
                       static_cast<double>(q->y) / P4EST_ROOT_LEN, h);
}

// Local quadrants of p4est that are not leaves of our mesh (0 when both build the same mesh).
long long leaves_not_in_mesh(const mpi::communicator& comm, p4est_t* p4, const Mesh& mesh) {
  long long bad = 0, all = 0;
  for (p4est_topidx_t tr = p4->first_local_tree; tr <= p4->last_local_tree; ++tr) {
    const auto* tree = p4est_tree_array_index(p4->trees, tr);
    for (std::size_t k = 0; k < tree->quadrants.elem_count; ++k) {
      const auto* q = p4est_quadrant_array_index(const_cast<sc_array_t*>(&tree->quadrants), k);
      const int sh = P4EST_MAXLEVEL - q->level;
      const irr::Cell<2> c{
          {static_cast<irr::coord_t>(q->x) >> sh, static_cast<irr::coord_t>(q->y) >> sh}, q->level};
      if (!mesh.find_leaf(c)) ++bad;
    }
  }
  mpi::all_reduce(comm, bad, all, std::plus<long long>());
  return all;
}

// p4est: uniform level 6 partitioned, refine + balance (unbalanced now), then the timed
// p4est_partition_ext (uniform weights), which ships the quadrants (data_size 0).
AnchorRow p4est_anchor(const mpi::communicator& comm, const Mesh& mesh, int max_level, Config cfg) {
  g_max_level = max_level;
  std::vector<double> t, tc;
  AnchorRow row;
  row.what = "p4est_partition_ext (uniform weights)";
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    p4est_connectivity_t* conn = p4est_connectivity_new_unitsquare();
    p4est_t* p4 = p4est_new_ext(MPI_Comm(comm), conn, 0, mesh_min_level, 1, 0, nullptr, nullptr);
    p4est_refine(p4, 1, refine_circle, nullptr);
    p4est_balance(p4, P4EST_CONNECT_FULL, nullptr);
    std::vector<double> before;
    mpi::all_gather(comm, static_cast<double>(p4->local_num_quadrants), before);
    if (rep == 0) {
      const long long bad = leaves_not_in_mesh(comm, p4, mesh);
      if (bad != 0 || p4->global_num_quadrants != static_cast<p4est_gloidx_t>(mesh.size()))
        g_mesh_mismatch = true;
      if (bad != 0 && comm.rank() == 0)
        std::fprintf(stderr, "bench_anchors: %lld p4est quadrants are not leaves of our mesh\n",
                     bad);
      row.note = bad == 0 ? "every quadrant is a leaf of our mesh"
                          : std::to_string(bad) + " quadrants NOT in our mesh";
    }
    comm.barrier();
    const double t0 = now_s(), c0 = cpu_now_s();
    const p4est_gloidx_t shipped = p4est_partition_ext(p4, 0, nullptr);
    const double c1 = cpu_now_s(), t1 = now_s();
    const double dt = max_over(comm, t1 - t0), dc = max_over(comm, c1 - c0);
    std::vector<double> after;
    mpi::all_gather(comm, static_cast<double>(p4->local_num_quadrants), after);
    row.leaves = static_cast<std::size_t>(p4->global_num_quadrants);
    row.before = per_rank(before);
    row.shipped = static_cast<std::uint64_t>(shipped);
    row.bytes = row.shipped * (sizeof(p4est_quadrant_t) + p4->data_size);
    row.messages = row.shipped > 0 ? 1 : 0;  // 2 ranks: one sender, one message
    if (rep == 0) row.note += "; after " + per_rank(after);
    p4est_destroy(p4);
    p4est_connectivity_destroy(conn);
    if (rep >= cfg.warmups) {
      t.push_back(dt);
      tc.push_back(dc);
    }
  }
  row.seconds = median(t);
  row.cpu = median(tc);
  row.note +=
      "; bytes = shipped x sizeof(p4est_quadrant_t) = " + std::to_string(sizeof(p4est_quadrant_t));
  return row;
}
#endif

void print_anchor(const mpi::communicator& world, int max_level, const Mesh& mesh, Config cfg) {
  if (world.rank() != 0) return;
  std::printf(
      "\n### p4est anchor mesh: level %d, %zu leaves%s, %d ranks (medians of %d after %d "
      "warm-up)\n\n"
      "| method | leaves | leaves per rank before | wall (ms) | CPU (ms) | partition (ms) | "
      "migration (ms) | shipped | bytes | messages | note |\n"
      "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
      max_level, mesh.size(),
      max_level != 14         ? ""
      : mesh.size() == 244054 ? " (= the reference 244,054)"
                              : " (NOT the reference 244,054)",
      world.size(), cfg.reps, cfg.warmups);
  for (const auto& r : g_anchor)
    std::printf("| %s | %zu | %s | %.2f | %.2f | %.2f | %.2f | %llu | %llu | %llu | %s |\n",
                r.what.c_str(), r.leaves, r.before.c_str(), r.seconds * 1e3, r.cpu * 1e3,
                r.partition * 1e3, r.migration * 1e3, static_cast<unsigned long long>(r.shipped),
                static_cast<unsigned long long>(r.bytes),
                static_cast<unsigned long long>(r.messages), r.note.c_str());
  if (g_anchor.size() == 2 && g_anchor[1].seconds > 0)
    std::printf("\nours / p4est: wall %.3fx (target <= 1.0x: %s), CPU %.3fx\n",
                g_anchor[0].seconds / g_anchor[1].seconds,
                g_anchor[0].seconds <= g_anchor[1].seconds ? "met" : "NOT met",
                g_anchor[1].cpu > 0 ? g_anchor[0].cpu / g_anchor[1].cpu : 0.0);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  mpi::communicator world;
  bool quick = false, mesh_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--mesh-only") == 0) mesh_only = true;
  }
  const Config cfg = quick ? Config{0, 1} : Config{1, 5};
  const std::vector<std::size_t> sizes =
      quick ? std::vector<std::size_t>{100000} : std::vector<std::size_t>{1000000, 4000000};
  const std::size_t serial_parts = 1024;

#ifdef IRREGULAR_HAVE_ZOLTAN
  float zver = 0;
  Zoltan_Initialize(argc, argv, &zver);
  const bool have_zoltan = true;
#else
  const bool have_zoltan = false;
#endif
#ifdef IRREGULAR_HAVE_P4EST
  sc_init(MPI_Comm(world), 0, 0, nullptr, SC_LP_ERROR);
  p4est_init(nullptr, SC_LP_ERROR);
  const bool have_p4est = true;
#else
  const bool have_p4est = false;
#endif
  if (world.rank() == 0) {
    std::printf("## bench_anchors%s: %d ranks\n\n", quick ? " --quick" : "", world.size());
    std::printf("Zoltan: %s. p4est: %s.\n",
                have_zoltan ? "installed" : "not installed (anchor rows skipped)",
                have_p4est
                    ? "installed"
                    : "not installed (its row skipped; our side of the anchor mesh still runs)");
    std::printf(
        "Points: half uniform in the unit square, half in 3 Gaussian clusters (sigma 0.05), "
        "weight 4 where x > 0.5 else 1; medians of %d repeats after %d warm-up.\n",
        cfg.reps, cfg.warmups);
  }

  // Serial: rank 0 alone, 1024 parts.
  [[maybe_unused]] const mpi::communicator self(MPI_COMM_SELF, mpi::comm_attach);
  std::vector<std::string> serial_lines;
  for (const std::size_t n : mesh_only ? std::vector<std::size_t>{} : sizes) {
    std::vector<Pt> pts;
    std::vector<double> w;
    make_points(n, 42 + n, pts, w);
    if (world.rank() == 0) {
      serial_lines.push_back(serial_trio(self, pts, w, serial_parts, cfg, have_zoltan));
#ifdef IRREGULAR_HAVE_ZOLTAN
      g_rows.push_back(zoltan(self, "RCB", pts, w, 0, n, serial_parts, cfg));
#endif
    }
    idle_barrier(world);
  }
  if (!mesh_only) print_rows(world, "1,024 parts on one rank");
  if (world.rank() == 0 && !serial_lines.empty()) {
    std::printf("\n");
    for (const auto& l : serial_lines) std::printf("%s\n", l.c_str());
    std::fflush(stdout);
  }

  // Distributed: every rank holds a round-robin share; parts = ranks.
  for (const std::size_t n : mesh_only ? std::vector<std::size_t>{} : sizes) {
    std::vector<Pt> pts, mine;
    std::vector<double> w, mw;
    make_points(n, 42 + n, pts, w);
    const auto p = static_cast<std::size_t>(world.size()),
               me = static_cast<std::size_t>(world.rank());
    for (std::size_t i = me; i < n; i += p) {
      mine.push_back(pts[i]);
      mw.push_back(w[i]);
    }
    pts = {};
    std::uint64_t first = 0, cnt = mine.size();
    mpi::scan(world, cnt, first, std::plus<std::uint64_t>());
    first -= cnt;
    g_rows.push_back(ours_distributed(world, mine, mw, n, p, cfg));
    g_rows.push_back(ours_domain(world, mine, mw, n, cfg));
#ifdef IRREGULAR_HAVE_ZOLTAN
    g_rows.push_back(zoltan(world, "HSFC", mine, mw, first, n, p, cfg));
    const auto& z = g_rows.back();
    g_rows[g_rows.size() - 3].note +=
        "; " + std::to_string(g_rows[g_rows.size() - 3].seconds / z.seconds).substr(0, 5) +
        "x Zoltan HSFC";
    g_rows[g_rows.size() - 2].note +=
        "; " + std::to_string(g_rows[g_rows.size() - 2].seconds / z.seconds).substr(0, 5) +
        "x Zoltan HSFC (target <= 1.0x)";
#endif
  }
  const std::string title =
      std::to_string(world.size()) + " parts on " + std::to_string(world.size()) + " ranks";
  if (!mesh_only) print_rows(world, title.c_str());

  // The p4est anchor: ours always, p4est beside it when installed.
  {
    const int level = quick ? 10 : 14;
    const Config acfg = quick ? Config{0, 1} : Config{1, 5};
    const Mesh mesh = make_mesh(level);
    g_anchor.push_back(ours_rebalance(world, mesh, acfg));
    g_anchor.push_back(ours_rebalance(world, mesh, acfg, true));
#ifdef IRREGULAR_HAVE_P4EST
    g_anchor.push_back(p4est_anchor(world, mesh, level, acfg));
#endif
    print_anchor(world, level, mesh, acfg);
  }
#ifdef IRREGULAR_HAVE_P4EST
  sc_finalize();
#endif
  return g_mesh_mismatch ? 1 : 0;
}
