// Serial CellTree refinement and 2:1 balance against p4est_refine / p4est_balance,
// side by side in one process on the anchor meshes: 2D unit square from uniform level 6, every
// quadrant whose centre lies within h (its side) of the circle of radius 0.3 centred (0.4, 0.4)
// refined up to level 14; 3D unit cube from uniform level 4, sphere of radius 0.3 centred
// (0.4, 0.4, 0.4), up to level 8. Balance: face and full (corner). Medians of CPU time (thread
// CPU clock, so other jobs on the machine count less); wall medians beside them. Ours and p4est
// alternate inside one run (ours, p4est, ours, ...) so load changes hit both sides, and each
// frees its result before the other runs (neither is timed in a heap the other left). Refine
// also with a 16-byte payload per leaf and an init callback writing the leaf centre, on both
// sides (CellTree<Morton<D>, Datum16<D>>; p4est data_size 16 with init_fn), and each refine
// twice: heap reused (warm) and fresh pages (malloc_trim before each call, so new arrays fault
// in). The leaves of both sides are compared one by one, and every payload with p4est's and
// with its leaf's centre (exit 1 on a difference). p4est rows only when installed.
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

#ifdef __GLIBC__
#include <malloc.h>
#endif

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
    x0[static_cast<std::size_t>(d)] =
        static_cast<double>(c.anchor[static_cast<std::size_t>(d)]) * h;
  return splits<D>(x0, h);
}

template <int D>
using Tree = irr::CellTree<irr::curve::Morton<D>, char>;  // Morton: p4est's z-order (x low bit)

// The payload: 16 bytes per leaf, as p4est's data_size 16. 2D: the centre as two doubles; 3D:
// the centre as three floats (exact: dyadic with few bits) and the side.
template <int D>
struct Datum16;
template <>
struct Datum16<2> {
  double x, y;
  friend bool operator==(const Datum16&, const Datum16&) = default;
};
template <>
struct Datum16<3> {
  float x, y, z, h;
  friend bool operator==(const Datum16&, const Datum16&) = default;
};
static_assert(sizeof(Datum16<2>) == 16 && sizeof(Datum16<3>) == 16);

// The datum of the cell with lower corner x0 and side h (exact dyadic doubles on both sides).
template <int D>
Datum16<D> centre_datum(const std::array<double, D>& x0, double h) {
  if constexpr (D == 2)
    return {x0[0] + h / 2, x0[1] + h / 2};
  else
    return {static_cast<float>(x0[0] + h / 2), static_cast<float>(x0[1] + h / 2),
            static_cast<float>(x0[2] + h / 2), static_cast<float>(h)};
}

template <int D>
Datum16<D> cell_datum(const irr::Cell<D>& c) {
  const double h = 1.0 / static_cast<double>(irr::coord_t{1} << c.level);
  std::array<double, D> x0{};
  for (int d = 0; d < D; ++d)
    x0[static_cast<std::size_t>(d)] =
        static_cast<double>(c.anchor[static_cast<std::size_t>(d)]) * h;
  return centre_datum<D>(x0, h);
}

template <int D>
using PTree = irr::CellTree<irr::curve::Morton<D>, Datum16<D>>;

// Every leaf's datum is its centre.
template <int D>
bool data_are_centres(const PTree<D>& t) {
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!(t.data(i) == cell_datum<D>(t.cell(i)))) return false;
  return true;
}

struct Row {
  std::string what;
  Time t;
  std::size_t leaves = 0;
  double pair_ratio = 0;  // median over the alternated pairs of ours / p4est CPU (0: not paired)
  std::string target;     // the goal for ours / p4est, if any
};

// Gives the heap's free memory back to the system, so the next call's new arrays fault their
// pages in (as a program's first refine does) instead of reusing the previous call's.
void release_free_pages() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

// Alternates A and B `reps` times after one warm-up pair (prepare and done untimed): medians of
// each, and the median of the per-pair CPU ratios A / B. fresh_pages: release_free_pages()
// after each prepare.
struct PairTime {
  Time a, b;
  double ratio = 0;
};
template <class PrepA, class FnA, class DoneA, class PrepB, class FnB, class DoneB>
PairTime paired_time(int reps, bool fresh_pages, PrepA&& prep_a, FnA&& fn_a, DoneA&& done_a,
                     PrepB&& prep_b, FnB&& fn_b, DoneB&& done_b) {
  std::vector<double> ca, wa, cb, wb, q;
  auto one = [&](auto& prep, auto& fn, auto& done, std::vector<double>& c, std::vector<double>& w,
                 bool keep) {
    prep();
    if (fresh_pages) release_free_pages();
    const double c0 = cpu_s(), w0 = wall_s();
    fn();
    const double c1 = cpu_s(), w1 = wall_s();
    done();
    if (keep) c.push_back(c1 - c0), w.push_back(w1 - w0);
  };
  for (int r = 0; r <= reps; ++r) {
    one(prep_a, fn_a, done_a, ca, wa, r > 0);
    one(prep_b, fn_b, done_b, cb, wb, r > 0);
    if (r > 0) q.push_back(ca.back() / cb.back());
  }
  auto med = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  return {{med(ca), med(wa)}, {med(cb), med(wb)}, med(q)};
}

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
    return splits<2>(
        {static_cast<double>(q->x) / P4EST_ROOT_LEN, static_cast<double>(q->y) / P4EST_ROOT_LEN},
        h);
  }
  static void refine(forest* f, int max_level) {
    p4est_refine_ext(f, 1, max_level, refine_fn, nullptr, nullptr);
  }
  // The payload: the centre, written by init_fn (data_size 16).
  static void init_fn(forest*, p4est_topidx_t, quad* q) {
    const double h = static_cast<double>(P4EST_QUADRANT_LEN(q->level)) / P4EST_ROOT_LEN;
    const auto d = centre_datum<2>(
        {static_cast<double>(q->x) / P4EST_ROOT_LEN, static_cast<double>(q->y) / P4EST_ROOT_LEN},
        h);
    std::memcpy(q->p.user_data, &d, sizeof d);
  }
  static forest* uniform_data(conn* c, int level) {
    return p4est_new_ext(sc_MPI_COMM_WORLD, c, 0, level, 1, sizeof(Datum16<2>), init_fn, nullptr);
  }
  static void refine_data(forest* f, int max_level) {
    p4est_refine_ext(f, 1, max_level, refine_fn, init_fn, nullptr);
  }
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
    return splits<3>(
        {static_cast<double>(q->x) / P8EST_ROOT_LEN, static_cast<double>(q->y) / P8EST_ROOT_LEN,
         static_cast<double>(q->z) / P8EST_ROOT_LEN},
        h);
  }
  static void refine(forest* f, int max_level) {
    p8est_refine_ext(f, 1, max_level, refine_fn, nullptr, nullptr);
  }
  static void init_fn(forest*, p4est_topidx_t, quad* q) {
    const double h = static_cast<double>(P8EST_QUADRANT_LEN(q->level)) / P8EST_ROOT_LEN;
    const auto d = centre_datum<3>(
        {static_cast<double>(q->x) / P8EST_ROOT_LEN, static_cast<double>(q->y) / P8EST_ROOT_LEN,
         static_cast<double>(q->z) / P8EST_ROOT_LEN},
        h);
    std::memcpy(q->p.user_data, &d, sizeof d);
  }
  static forest* uniform_data(conn* c, int level) {
    return p8est_new_ext(sc_MPI_COMM_WORLD, c, 0, level, 1, sizeof(Datum16<3>), init_fn, nullptr);
  }
  static void refine_data(forest* f, int max_level) {
    p8est_refine_ext(f, 1, max_level, refine_fn, init_fn, nullptr);
  }
  static void balance(forest* f, bool full) {
    p8est_balance(f, full ? P8EST_CONNECT_FULL : P8EST_CONNECT_FACE, nullptr);
  }
  static tree* tree0(forest* f) { return p8est_tree_array_index(f->trees, 0); }
  static quad* at(tree* t, std::size_t k) { return p8est_quadrant_array_index(&t->quadrants, k); }
  static std::array<std::int64_t, 3> xyz(const quad* q) { return {q->x, q->y, q->z}; }
};

// True if p4est's forest has exactly our leaves, in the same order.
template <int D, class T>
bool same_leaves(typename P4<D>::forest* f, const T& t) {
  auto* tr = P4<D>::tree0(f);
  if (tr->quadrants.elem_count != t.size()) return false;
  for (std::size_t k = 0; k < t.size(); ++k) {
    const auto* q = P4<D>::at(tr, k);
    const auto c = t.cell(k);
    if (q->level != c.level) return false;
    const auto x = P4<D>::xyz(q);
    for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d)
      if (x[d] >> (P4<D>::maxlevel - c.level) != static_cast<std::int64_t>(c.anchor[d]))
        return false;
  }
  return true;
}

// True if p4est's payloads equal ours, leaf by leaf (the leaves are checked by same_leaves).
template <int D>
bool same_data(typename P4<D>::forest* f, const PTree<D>& t) {
  auto* tr = P4<D>::tree0(f);
  if (tr->quadrants.elem_count != t.size()) return false;
  for (std::size_t k = 0; k < t.size(); ++k)
    if (std::memcmp(P4<D>::at(tr, k)->p.user_data, &t.data(k), sizeof(Datum16<D>)) != 0)
      return false;
  return true;
}
#endif

// Ours against p4est, alternated: rows "<what>: <ours>" and "<what>: <theirs>". Without p4est
// the B side does nothing and only our row is kept.
template <class PrepA, class FnA, class DoneA, class PrepB, class FnB, class DoneB, class LeavesA,
          class LeavesB>
void paired_rows(std::vector<Row>& rows, int reps, bool fresh_pages, const std::string& what,
                 const std::string& ours, const std::string& theirs, const std::string& target,
                 PrepA&& prep_a, FnA&& fn_a, DoneA&& done_a, PrepB&& prep_b, FnB&& fn_b,
                 DoneB&& done_b, LeavesA&& leaves_a, LeavesB&& leaves_b) {
  const PairTime pt = paired_time(reps, fresh_pages, prep_a, fn_a, done_a, prep_b, fn_b, done_b);
#ifdef IRREGULAR_HAVE_P4EST
  rows.push_back({what + ": " + ours, pt.a, leaves_a(), pt.ratio, target});
  rows.push_back({what + ": " + theirs, pt.b, leaves_b(), 0, ""});
#else
  (void)theirs, (void)leaves_b;
  rows.push_back({what + ": " + ours, pt.a, leaves_a(), 0, target});
#endif
}

template <int D>
void run(const Mesh& m, int reps, std::vector<Row>& rows) {
  const std::string tag = std::to_string(D) + "D";
  auto keep = [](const char&, const irr::Cell<D>&) { return char{0}; };
  Tree<D> t, refined;
  auto fresh = [&] { t = Tree<D>::uniform(m.min_level, char{0}); };
  rows.push_back({tag + " refine: CellTree mark + adapt passes",
                  median_time(
                      reps, fresh, [&] { refine_by_adapt<D>(t, m.max_level); }, [] {}),
                  0, 0, ""});
  rows.back().leaves = t.size();
  refined = t;
  auto same_as_adapt = [&](const auto& u, const char* what) {
    if (u.starts().size() != refined.size() ||
        !std::equal(u.starts().begin(), u.starts().end(), refined.starts().begin()) ||
        !std::equal(u.levels().begin(), u.levels().end(), refined.levels().begin())) {
      std::fprintf(stderr, "bench_tree_anchors: %s %s differs from the adapt passes\n", tag.c_str(),
                   what);
      g_mismatch = true;
    }
  };
  // With the payload: init writes the child's centre (the parent's datum is not needed).
  PTree<D> pt;
  auto pfresh = [&] {
    pt = PTree<D>::uniform(m.min_level, [](const irr::Cell<D>& c) { return cell_datum<D>(c); });
  };
  auto prefine = [&] {
    pt.refine([](const irr::Cell<D>& c) { return cell_splits<D>(c); }, m.max_level,
              [](const Datum16<D>&, const irr::Cell<D>& c) { return cell_datum<D>(c); });
  };
  // Each side's done() checks, then frees its result, so that both start their timed call from
  // the same heap (nothing of the other's result held). `pref`: our first result, for p4est's.
  PTree<D> pref;
  std::size_t n_ours = 0;
  auto pcheck = [&] {
    same_as_adapt(pt, "CellTree::refine with payload");
    if (!data_are_centres<D>(pt)) {
      std::fprintf(stderr, "bench_tree_anchors: %s a datum is not its leaf's centre\n",
                   tag.c_str());
      g_mismatch = true;
    }
    if (pref.size() == 1) pref = pt;
    n_ours = pt.size();
    pt = PTree<D>();
  };
#ifdef IRREGULAR_HAVE_P4EST
  using P = P4<D>;
  auto* conn = P::new_conn();
  typename P::forest* f = nullptr;
  std::size_t np = 0;
  auto p_fresh = [&] { f = P::uniform(conn, m.min_level); };
  auto p_refine = [&] { P::refine(f, m.max_level); };
  auto p_done = [&] {
    if (!same_leaves<D>(f, refined)) g_mismatch = true;
    np = P::tree0(f)->quadrants.elem_count;
    P::destroy(f);
  };
  auto pd_fresh = [&] { f = P::uniform_data(conn, m.min_level); };
  auto pd_refine = [&] { P::refine_data(f, m.max_level); };
  auto pd_done = [&] {
    if (!same_leaves<D>(f, refined) || !same_data<D>(f, pref)) {
      std::fprintf(stderr, "bench_tree_anchors: %s p4est's leaves or payloads differ from ours\n",
                   tag.c_str());
      g_mismatch = true;
    }
    np = P::tree0(f)->quadrants.elem_count;
    P::destroy(f);
  };
#else
  std::size_t np = 0;
  auto p_fresh = [] {};
  auto p_refine = [] {};
  auto p_done = [] {};
  auto pd_fresh = [] {};
  auto pd_refine = [] {};
  auto pd_done = [] {};
#endif
  // Twice: heap reused (each side's result is freed before the other runs, so warm calls reuse
  // the memory: compute only), and fresh pages (the new arrays fault in, as in a program).
  for (const bool fp : {false, true}) {
    const std::string how = fp ? ", fresh pages" : "";
    paired_rows(
        rows, reps, fp, tag + " refine" + how, "CellTree::refine (recursive)",
        "p4est_refine (recursive)", "<= 1.0x", fresh, [&] { refine_recursive<D>(t, m.max_level); },
        [&] {
          same_as_adapt(t, "CellTree::refine");
          n_ours = t.size();
          t = Tree<D>();
        },
        p_fresh, p_refine, p_done, [&] { return n_ours; }, [&] { return np; });
    paired_rows(
        rows, reps, fp, tag + " refine, 16 B payload + init" + how,
        "CellTree<Morton, Datum16>::refine", "p4est_refine, data_size 16, init_fn", "<= 0.70x",
        pfresh, prefine, pcheck, pd_fresh, pd_refine, pd_done, [&] { return n_ours; },
        [&] { return np; });
  }
#ifdef IRREGULAR_HAVE_P4EST
  f = P::uniform(conn, m.min_level);
  P::refine(f, m.max_level);
#endif
  for (const bool full : {false, true}) {
    const std::string k = full ? "full" : "face";
    const auto kind = full ? irr::BalanceKind::full : irr::BalanceKind::face;
    Tree<D> bref;  // our first balanced tree, for p4est's leaves
    auto b_ours_done = [&] {
      if (bref.size() == 1) bref = t;
      n_ours = t.size();
      t = Tree<D>();
    };
#ifdef IRREGULAR_HAVE_P4EST
    typename P::forest* g = nullptr;
    std::size_t n = 0;
    auto b_fresh = [&] { g = P::copy(f); };
    auto b_run = [&] { P::balance(g, full); };
    auto b_done = [&] {
      if (!same_leaves<D>(g, bref)) g_mismatch = true;
      n = P::tree0(g)->quadrants.elem_count;
      P::destroy(g);
    };
#else
    std::size_t n = 0;
    auto b_fresh = [] {};
    auto b_run = [] {};
    auto b_done = [] {};
#endif
    paired_rows(
        rows, reps, false, tag + " balance " + k, "CellTree::balance", "p4est_balance", "<= 1.0x",
        [&] { t = refined; }, [&] { t.balance(kind, keep); }, b_ours_done, b_fresh, b_run, b_done,
        [&] { return n_ours; }, [&] { return n; });
  }
#ifdef IRREGULAR_HAVE_P4EST
  P::destroy(f);
  P::destroy_conn(conn);
#endif
}

void print(const std::vector<Row>& rows) {
  std::printf(
      "| operation | leaves after | CPU ms (median) | wall ms (median) | CPU ours / p4est: ratio "
      "of medians | "
      "median of pair ratios | target |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    // The p4est row of the same operation: the row whose name starts alike and says p4est.
    std::string ratio = "", pair = "";
    const auto colon = r.what.find(':');
    if (r.what.find("p4est") == std::string::npos)
      for (const Row& q : rows)
        if (q.what.find("p4est") != std::string::npos && q.what.find(':') == colon &&
            q.what.compare(0, colon, r.what, 0, colon) == 0) {
          char b[32];
          std::snprintf(b, sizeof b, "%.2fx", r.t.cpu / q.t.cpu);
          ratio = b;
        }
    if (r.pair_ratio > 0) {
      char b[32];
      std::snprintf(b, sizeof b, "%.2fx", r.pair_ratio);
      pair = b;
    }
    std::printf("| %s | %zu | %.2f | %.2f | %s | %s | %s |\n", r.what.c_str(), r.leaves,
                1e3 * r.t.cpu, 1e3 * r.t.wall, ratio.c_str(), pair.c_str(), r.target.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int reps = 9;  // at least 5 alternated pairs
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
  std::printf("## bench_tree_anchors%s: serial refine and 2:1 balance (p4est: %s)\n\n",
              quick ? " --quick" : "",
              have_p4est ? "installed" : "not installed, its rows skipped");
  std::printf(
      "2D levels %d->%d, 3D levels %d->%d; medians of %d after one warm-up, ours and p4est "
      "alternated; Data = char and p4est data_size 0, or Datum16 (16 B, the leaf centre) and "
      "data_size 16 with init_fn.\n\n",
      m2.min_level, m2.max_level, m3.min_level, m3.max_level, reps);
  std::vector<Row> rows;
  run<2>(m2, reps, rows);
  run<3>(m3, reps, rows);
  print(rows);
  if (g_mismatch)
    std::printf("\nMISMATCH: p4est's leaves or payloads differ from ours (or refine from adapt)\n");
#ifdef IRREGULAR_HAVE_P4EST
  sc_finalize();
  sc_MPI_Finalize();
#endif
  return g_mismatch ? 1 : 0;
}
