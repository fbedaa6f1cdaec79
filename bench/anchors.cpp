// Anchors: partition_points (serial and distributed) and the domain build against Zoltan (HSFC,
// RCB) and p4est, side by side in one run, on the same seeded weighted points. Zoltan and p4est
// are used only when installed (IRREGULAR_HAVE_ZOLTAN / IRREGULAR_HAVE_P4EST); otherwise the
// bench says so and measures ours alone. Run under `mpiexec -n 2`.
// Usage: mpiexec -n 2 bench_anchors [--quick]
#include <irregular/irregular.hpp>
#include <irregular/distributed/partition_points.hpp>
#include <irregular/tree/partition_points.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

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
#include <string>
#include <vector>

namespace {

namespace irr = irregular;
namespace mpi = boost::mpi;
using Curve = irr::curve::Hilbert<2>;
using Pt = std::array<double, 2>;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

double max_over(const mpi::communicator& comm, double x) {
  double m = 0;
  mpi::all_reduce(comm, x, m, mpi::maximum<double>());
  return m;
}

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
};

std::vector<Row> g_rows;

void print_rows(const mpi::communicator& world, const char* title) {
  if (world.rank() == 0) {
    std::printf("\n### %s\n\n| method | N | parts | ranks | time (ms) | imbalance | empty parts | note |\n"
                "|---|---:|---:|---:|---:|---:|---:|---|\n", title);
    for (const auto& r : g_rows)
      std::printf("| %s | %zu | %zu | %d | %.2f | %.4f | %zu | %s |\n", r.what.c_str(), r.n, r.parts,
                  r.ranks, r.seconds * 1e3, r.q.imbalance, r.q.empty, r.note.c_str());
    std::fflush(stdout);
  }
  g_rows.clear();
}

struct Config {
  int warmups = 1, reps = 3;
};

// ---- ours ---------------------------------------------------------------------------------

Row ours_serial(const std::vector<Pt>& pts, const std::vector<double>& w, std::size_t parts, Config cfg) {
  const irr::Box<2> box{{0, 0}, {1, 1}};
  std::vector<double> t;
  irr::PointPartition r;
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    const double t0 = now_s();
    r = irr::partition_points<Curve>(box, pts, w, parts);
    if (rep >= cfg.warmups) t.push_back(now_s() - t0);
  }
  return {"irregular partition_points (serial, Hilbert)", pts.size(), parts, 1, median(t),
          {r.imbalance(), r.empty_parts()}, ""};
}

Row ours_distributed(const mpi::communicator& comm, const std::vector<Pt>& mine,
                     const std::vector<double>& w, std::size_t n, std::size_t parts, Config cfg) {
  const irr::Box<2> box{{0, 0}, {1, 1}};
  std::vector<double> t;
  irr::PointPartition r;
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    comm.barrier();
    const double t0 = now_s();
    r = irr::partition_points<Curve>(comm, box, mine, w, parts);
    const double dt = max_over(comm, now_s() - t0);
    if (rep >= cfg.warmups) t.push_back(dt);
  }
  return {"irregular partition_points (distributed)", n, parts, comm.size(), median(t),
          {r.imbalance(), r.empty_parts()}, "incl. sample sort, part ids sent home"};
}

struct Particle {
  Pt position;
  double weight;
};
struct WeightOf {
  double operator()(const Particle& p) const { return p.weight; }
};

Row ours_domain(const mpi::communicator& comm, const std::vector<Pt>& mine, const std::vector<double>& w,
                std::size_t n, Config cfg) {
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
  return {"irregular IrregularDomain::build (max_elements(32))", n, static_cast<std::size_t>(comm.size()),
          comm.size(), median(t), {imb, 0}, "sort + leaves + cut + migration"};
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
void z_obj_list(void* d, int, int, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int wdim, float* wgts, int* ierr) {
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
void z_geom_multi(void* d, int, int, int num_obj, ZOLTAN_ID_PTR, ZOLTAN_ID_PTR lids, int, double* geom, int* ierr) {
  const auto* in = static_cast<ZoltanInput*>(d);
  for (int i = 0; i < num_obj; ++i) {
    const auto& p = (*in->pts)[lids[i]];
    geom[2 * i] = p[0];
    geom[2 * i + 1] = p[1];
  }
  *ierr = ZOLTAN_OK;
}

Row zoltan(const mpi::communicator& comm, const char* method, const std::vector<Pt>& mine,
           const std::vector<double>& w, std::uint64_t first_gid, std::size_t n, std::size_t parts, Config cfg) {
  ZoltanInput in{&mine, &w, first_gid};
  std::vector<double> t;
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
    const double t0 = now_s();
    const int rc = Zoltan_LB_Partition(zz, &changes, &ngid, &nlid, &nimp, &igid, &ilid, &iproc, &ipart,
                                       &nexp, &egid, &elid, &eproc, &epart);
    const double dt = max_over(comm, now_s() - t0);
    if (rc != ZOLTAN_OK) std::fprintf(stderr, "bench_anchors: Zoltan %s returned %d\n", method, rc);
    for (int i = 0; i < nexp; ++i) part[elid[i]] = epart[i];
    Zoltan_LB_Free_Part(&igid, &ilid, &iproc, &ipart);
    Zoltan_LB_Free_Part(&egid, &elid, &eproc, &epart);
    Zoltan_Destroy(&zz);
    if (rep >= cfg.warmups) t.push_back(dt);
  }
  return {std::string("Zoltan ") + method + " (LB_Partition)", n, parts, comm.size(), median(t),
          quality(comm, part, w, parts), "IMBALANCE_TOL default (1.1)"};
}
#endif

// ---- p4est --------------------------------------------------------------------------------

#ifdef IRREGULAR_HAVE_P4EST
int g_max_level = 14;
int refine_circle(p4est_t*, p4est_topidx_t, p4est_quadrant_t* q) {
  if (q->level >= g_max_level) return 0;
  const double h = static_cast<double>(P4EST_QUADRANT_LEN(q->level)) / P4EST_ROOT_LEN;
  const double x0 = static_cast<double>(q->x) / P4EST_ROOT_LEN, y0 = static_cast<double>(q->y) / P4EST_ROOT_LEN;
  const double cx = 0.4, cy = 0.4, r = 0.3;
  const double nx = std::clamp(cx, x0, x0 + h) - cx, ny = std::clamp(cy, y0, y0 + h) - cy;
  const double fx = std::max(std::abs(x0 - cx), std::abs(x0 + h - cx));
  const double fy = std::max(std::abs(y0 - cy), std::abs(y0 + h - cy));
  const double dmin = std::sqrt(nx * nx + ny * ny), dmax = std::sqrt(fx * fx + fy * fy);
  return dmin <= r && r <= dmax;
}

Row p4est_anchor(const mpi::communicator& comm, int max_level, Config cfg) {
  g_max_level = max_level;
  std::vector<double> t;
  long long leaves = 0;
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    p4est_connectivity_t* conn = p4est_connectivity_new_unitsquare();
    p4est_t* p4 = p4est_new_ext(MPI_Comm(comm), conn, 0, 6, 1, 0, nullptr, nullptr);
    p4est_refine(p4, 1, refine_circle, nullptr);
    p4est_balance(p4, P4EST_CONNECT_FULL, nullptr);
    comm.barrier();
    const double t0 = now_s();
    p4est_partition(p4, 0, nullptr);
    const double dt = max_over(comm, now_s() - t0);
    leaves = static_cast<long long>(p4->global_num_quadrants);
    p4est_destroy(p4);
    p4est_connectivity_destroy(conn);
    if (rep >= cfg.warmups) t.push_back(dt);
  }
  return {"p4est_partition (after refine + 2:1 balance)", static_cast<std::size_t>(leaves),
          static_cast<std::size_t>(comm.size()), comm.size(), median(t), {0, 0},
          "leaves, uniform level 6 refined to level " + std::to_string(max_level) + " on circle r=0.3 at (0.4,0.4)"};
}
#endif

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  mpi::communicator world;
  bool quick = false;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
  const Config cfg = quick ? Config{0, 1} : Config{1, 3};
  const std::vector<std::size_t> sizes = quick ? std::vector<std::size_t>{100000}
                                               : std::vector<std::size_t>{1000000, 4000000};
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
    std::printf("Zoltan: %s. p4est: %s.\n", have_zoltan ? "installed" : "not installed (anchor rows skipped)",
                have_p4est ? "installed" : "not installed (anchor rows skipped)");
    std::printf("Points: half uniform in the unit square, half in 3 Gaussian clusters (sigma 0.05), "
                "weight 4 where x > 0.5 else 1; medians of %d repeats after %d warm-up.\n",
                cfg.reps, cfg.warmups);
  }

  // Serial: rank 0 alone, 1024 parts.
  [[maybe_unused]] const mpi::communicator self(MPI_COMM_SELF, mpi::comm_attach);
  for (const std::size_t n : sizes) {
    std::vector<Pt> pts;
    std::vector<double> w;
    make_points(n, 42 + n, pts, w);
    if (world.rank() == 0) {
      g_rows.push_back(ours_serial(pts, w, serial_parts, cfg));
#ifdef IRREGULAR_HAVE_ZOLTAN
      g_rows.push_back(zoltan(self, "HSFC", pts, w, 0, n, serial_parts, cfg));
      g_rows.push_back(zoltan(self, "RCB", pts, w, 0, n, serial_parts, cfg));
#endif
    }
    world.barrier();
  }
  if (world.rank() == 0 && !g_rows.empty() && have_zoltan) {
    // Ratio rows: ours / Zoltan HSFC per N.
    for (std::size_t i = 0; i + 1 < g_rows.size(); i += 3)
      g_rows[i].note = "time = " + std::to_string(g_rows[i].seconds / g_rows[i + 1].seconds).substr(0, 5) +
                       "x Zoltan HSFC (target <= 0.15x)";
  }
  print_rows(world, "1,024 parts on one rank");

  // Distributed: every rank holds a round-robin share; parts = ranks.
  for (const std::size_t n : sizes) {
    std::vector<Pt> pts, mine;
    std::vector<double> w, mw;
    make_points(n, 42 + n, pts, w);
    const auto p = static_cast<std::size_t>(world.size()), me = static_cast<std::size_t>(world.rank());
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
    g_rows[g_rows.size() - 3].note += "; " + std::to_string(g_rows[g_rows.size() - 3].seconds / z.seconds).substr(0, 5) + "x Zoltan HSFC";
    g_rows[g_rows.size() - 2].note += "; " + std::to_string(g_rows[g_rows.size() - 2].seconds / z.seconds).substr(0, 5) + "x Zoltan HSFC (target <= 1.0x)";
#endif
  }
  const std::string title = std::to_string(world.size()) + " parts on " + std::to_string(world.size()) + " ranks";
  print_rows(world, title.c_str());

#ifdef IRREGULAR_HAVE_P4EST
  g_rows.push_back(p4est_anchor(world, quick ? 10 : 14, cfg));
  print_rows(world, "p4est anchor mesh");
  sc_finalize();
#endif
  return 0;
}
