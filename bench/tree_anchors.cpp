// Serial CellTree refinement and 2:1 balance against p4est_refine / p4est_balance,
// side by side in one process on the anchor meshes: 2D unit square from uniform level 6, every
// quadrant whose centre lies within h (its side) of the circle of radius 0.3 centred (0.4, 0.4)
// refined up to level 14; 3D unit cube from uniform level 4, sphere of radius 0.3 centred
// (0.4, 0.4, 0.4), up to level 8. Balance: face and full (corner). Medians of CPU time (thread
// CPU clock, so other jobs on the machine count less); wall medians beside them. The leaves of
// both sides are compared one by one (exit 1 if they differ). p4est rows only when installed.
// Usage: bench_tree_anchors [--quick] [--reps N]
#include <irregular/curve/morton.hpp>
#include <irregular/tree/balance.hpp>
#include <irregular/tree/cell_tree.hpp>

#include "detail/circle_mesh.hpp"

#ifdef IRREGULAR_HAVE_P4EST
#include <p4est_extended.h>
#include <p8est_extended.h>
#endif

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <span>
#include <string>
#include <vector>

namespace {

namespace irr = irregular;

bool g_mismatch = false;

double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
double wall_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Time {
  double cpu = 0, wall = 0;
};

// Medians of `reps` runs after one warm-up; prepare() runs untimed before each, done() after.
template <class Prep, class Fn, class Done>
Time median_time(int reps, Prep&& prepare, Fn&& fn, Done&& done) {
  std::vector<double> c, w;
  for (int r = 0; r <= reps; ++r) {
    prepare();
    const double c0 = cpu_s(), w0 = wall_s();
    fn();
    const double c1 = cpu_s(), w1 = wall_s();
    done();
    if (r > 0) c.push_back(c1 - c0), w.push_back(w1 - w0);
  }
  std::sort(c.begin(), c.end());
  std::sort(w.begin(), w.end());
  return {c[c.size() / 2], w[w.size() / 2]};
}

// The refinement rule on exact dyadic doubles: both sides evaluate the same expression.
template <int D>
bool splits(const std::array<double, D>& x0, double h) {
  return bench::circle_mesh::sphere_splits<D>(x0, h);
}

template <int D>
bool cell_splits(const irr::Cell<D>& c) {
  const double h = std::ldexp(1.0, -c.level);
  std::array<double, D> x0{};
  for (int d = 0; d < D; ++d)
    x0[static_cast<std::size_t>(d)] = static_cast<double>(c.anchor[static_cast<std::size_t>(d)]) * h;
  return splits<D>(x0, h);
}

template <int D>
using Tree = irr::CellTree<irr::curve::Morton<D>, char>;  // Morton: p4est's z-order (x low bit)

struct Row {
  std::string what;
  Time t;
  std::size_t leaves = 0;
};

struct Mesh {
  int dim, min_level, max_level;
};

// Ours, refinement by repeated mark-and-adapt passes until nothing splits.
template <int D>
void refine_by_adapt(Tree<D>& t, int max_level) {
  auto keep = [](const char&, const irr::Cell<D>&) { return char{0}; };
  auto merge = [](std::span<const char>) { return char{0}; };
  for (;;) {
    bool any = false;
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t.level(i) < max_level && cell_splits<D>(t.cell(i))) {
        t.mark(i, irr::Mark::refine);
        any = true;
      }
    if (!any) break;
    t.adapt(keep, merge);
  }
}

template <int D>
void refine_recursive(Tree<D>& t, int max_level) {
  t.refine([](const irr::Cell<D>& c) { return cell_splits<D>(c); }, max_level,
           [](const char&, const irr::Cell<D>&) { return char{0}; });
}

#ifdef IRREGULAR_HAVE_P4EST
// p4est / p8est through one set of names.
template <int D>
struct P4;
template <>
struct P4<2> {
  using forest = p4est_t;
  using conn = p4est_connectivity_t;
  using quad = p4est_quadrant_t;
  using tree = p4est_tree_t;
  static constexpr int maxlevel = P4EST_MAXLEVEL;
  static conn* new_conn() { return p4est_connectivity_new_unitsquare(); }
  static void destroy_conn(conn* c) { p4est_connectivity_destroy(c); }
  static forest* uniform(conn* c, int level) {
    return p4est_new_ext(sc_MPI_COMM_WORLD, c, 0, level, 1, 0, nullptr, nullptr);
  }
  static forest* copy(forest* f) { return p4est_copy(f, 0); }
  static void destroy(forest* f) { p4est_destroy(f); }
  static int refine_fn(forest*, p4est_topidx_t, quad* q) {
    const double h = static_cast<double>(P4EST_QUADRANT_LEN(q->level)) / P4EST_ROOT_LEN;
    return splits<2>({static_cast<double>(q->x) / P4EST_ROOT_LEN, static_cast<double>(q->y) / P4EST_ROOT_LEN}, h);
  }
  static void refine(forest* f, int max_level) { p4est_refine_ext(f, 1, max_level, refine_fn, nullptr, nullptr); }
  static void balance(forest* f, bool full) {
    p4est_balance(f, full ? P4EST_CONNECT_FULL : P4EST_CONNECT_FACE, nullptr);
  }
  static tree* tree0(forest* f) { return p4est_tree_array_index(f->trees, 0); }
  static quad* at(tree* t, std::size_t k) { return p4est_quadrant_array_index(&t->quadrants, k); }
  static std::array<std::int64_t, 2> xyz(const quad* q) { return {q->x, q->y}; }
};
template <>
struct P4<3> {
  using forest = p8est_t;
  using conn = p8est_connectivity_t;
  using quad = p8est_quadrant_t;
  using tree = p8est_tree_t;
  static constexpr int maxlevel = P8EST_MAXLEVEL;
  static conn* new_conn() { return p8est_connectivity_new_unitcube(); }
  static void destroy_conn(conn* c) { p8est_connectivity_destroy(c); }
  static forest* uniform(conn* c, int level) {
    return p8est_new_ext(sc_MPI_COMM_WORLD, c, 0, level, 1, 0, nullptr, nullptr);
  }
  static forest* copy(forest* f) { return p8est_copy(f, 0); }
  static void destroy(forest* f) { p8est_destroy(f); }
  static int refine_fn(forest*, p4est_topidx_t, quad* q) {
    const double h = static_cast<double>(P8EST_QUADRANT_LEN(q->level)) / P8EST_ROOT_LEN;
    return splits<3>({static_cast<double>(q->x) / P8EST_ROOT_LEN, static_cast<double>(q->y) / P8EST_ROOT_LEN,
                      static_cast<double>(q->z) / P8EST_ROOT_LEN},
                     h);
  }
  static void refine(forest* f, int max_level) { p8est_refine_ext(f, 1, max_level, refine_fn, nullptr, nullptr); }
  static void balance(forest* f, bool full) {
    p8est_balance(f, full ? P8EST_CONNECT_FULL : P8EST_CONNECT_FACE, nullptr);
  }
  static tree* tree0(forest* f) { return p8est_tree_array_index(f->trees, 0); }
  static quad* at(tree* t, std::size_t k) { return p8est_quadrant_array_index(&t->quadrants, k); }
  static std::array<std::int64_t, 3> xyz(const quad* q) { return {q->x, q->y, q->z}; }
};

// True if p4est's forest has exactly our leaves, in the same order.
template <int D>
bool same_leaves(typename P4<D>::forest* f, const Tree<D>& t) {
  auto* tr = P4<D>::tree0(f);
  if (tr->quadrants.elem_count != t.size()) return false;
  for (std::size_t k = 0; k < t.size(); ++k) {
    const auto* q = P4<D>::at(tr, k);
    const auto c = t.cell(k);
    if (q->level != c.level) return false;
    const auto x = P4<D>::xyz(q);
    for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d)
      if (x[d] >> (P4<D>::maxlevel - c.level) != static_cast<std::int64_t>(c.anchor[d])) return false;
  }
  return true;
}
#endif

template <int D>
void run(const Mesh& m, int reps, std::vector<Row>& rows) {
  const std::string tag = std::to_string(D) + "D";
  auto keep = [](const char&, const irr::Cell<D>&) { return char{0}; };
  Tree<D> t, refined;
  auto fresh = [&] { t = Tree<D>::uniform(m.min_level, char{0}); };
  rows.push_back({tag + " refine: CellTree mark + adapt passes",
                  median_time(reps, fresh, [&] { refine_by_adapt<D>(t, m.max_level); }, [] {}), 0});
  rows.back().leaves = t.size();
  refined = t;
  rows.push_back({tag + " refine: CellTree::refine (recursive)",
                  median_time(reps, fresh, [&] { refine_recursive<D>(t, m.max_level); }, [] {}), 0});
  rows.back().leaves = t.size();
  if (t.starts().size() != refined.size() || !std::equal(t.starts().begin(), t.starts().end(), refined.starts().begin())) {
    std::fprintf(stderr, "bench_tree_anchors: %s CellTree::refine differs from the adapt passes\n", tag.c_str());
    g_mismatch = true;
  }
#ifdef IRREGULAR_HAVE_P4EST
  using P = P4<D>;
  auto* conn = P::new_conn();
  typename P::forest* f = nullptr;
  std::size_t np = 0;
  rows.push_back({tag + " refine: p4est_refine (recursive)",
                  median_time(reps, [&] { f = P::uniform(conn, m.min_level); }, [&] { P::refine(f, m.max_level); },
                              [&] {
                                if (!same_leaves<D>(f, refined)) g_mismatch = true;
                                np = P::tree0(f)->quadrants.elem_count;
                                P::destroy(f);
                              }),
                  0});
  rows.back().leaves = np;
  f = P::uniform(conn, m.min_level);
  P::refine(f, m.max_level);
#endif
  for (const bool full : {false, true}) {
    const std::string k = full ? "full" : "face";
    const auto kind = full ? irr::BalanceKind::full : irr::BalanceKind::face;
    rows.push_back({tag + " balance " + k + ": CellTree::balance",
                    median_time(reps, [&] { t = refined; }, [&] { t.balance(kind, keep); }, [] {}), t.size()});
    rows.back().leaves = t.size();
#ifdef IRREGULAR_HAVE_P4EST
    typename P::forest* g = nullptr;
    std::size_t n = 0;
    rows.push_back({tag + " balance " + k + ": p4est_balance",
                    median_time(reps, [&] { g = P::copy(f); }, [&] { P::balance(g, full); },
                                [&] {
                                  if (!same_leaves<D>(g, t)) g_mismatch = true;
                                  n = P::tree0(g)->quadrants.elem_count;
                                  P::destroy(g);
                                }),
                    0});
    rows.back().leaves = n;
#endif
  }
#ifdef IRREGULAR_HAVE_P4EST
  P::destroy(f);
  P::destroy_conn(conn);
#endif
}

void print(const std::vector<Row>& rows) {
  std::printf("| operation | leaves after | CPU ms (median) | wall ms (median) | CPU ours / p4est |\n");
  std::printf("|---|---:|---:|---:|---:|\n");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    // The p4est row of the same operation: the next row whose name starts alike and says p4est.
    std::string ratio = "";
    const auto colon = r.what.find(':');
    if (r.what.find("p4est") == std::string::npos)
      for (const Row& q : rows)
        if (q.what.find("p4est") != std::string::npos && q.what.compare(0, colon, r.what, 0, colon) == 0) {
          char b[32];
          std::snprintf(b, sizeof b, "%.2fx", r.t.cpu / q.t.cpu);
          ratio = b;
        }
    std::printf("| %s | %zu | %.1f | %.1f | %s |\n", r.what.c_str(), r.leaves, 1e3 * r.t.cpu, 1e3 * r.t.wall,
                ratio.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int reps = 9;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = std::atoi(argv[++i]);
  }
  if (quick) reps = 1;
#ifdef IRREGULAR_HAVE_P4EST
  sc_MPI_Init(&argc, &argv);
  sc_init(sc_MPI_COMM_WORLD, 0, 0, nullptr, SC_LP_ERROR);
  p4est_init(nullptr, SC_LP_ERROR);
  const bool have_p4est = true;
#else
  const bool have_p4est = false;
#endif
  const Mesh m2{2, 6, quick ? 10 : 14}, m3{3, 4, quick ? 6 : 8};
  std::printf("## bench_tree_anchors%s: serial refine and 2:1 balance (p4est: %s)\n\n", quick ? " --quick" : "",
              have_p4est ? "installed" : "not installed, its rows skipped");
  std::printf("2D levels %d->%d, 3D levels %d->%d; medians of %d after one warm-up; Data = char, "
              "p4est data_size 0.\n\n",
              m2.min_level, m2.max_level, m3.min_level, m3.max_level, reps);
  std::vector<Row> rows;
  run<2>(m2, reps, rows);
  run<3>(m3, reps, rows);
  print(rows);
  if (g_mismatch) std::printf("\nMISMATCH: p4est's leaves differ from ours (or refine from adapt)\n");
#ifdef IRREGULAR_HAVE_P4EST
  sc_finalize();
  sc_MPI_Finalize();
#endif
  return g_mismatch ? 1 : 0;
}
