// Serial H-Tree build (baiardi-2001 §2-3): keys of clustered points, sorting them (std::sort vs
// the library's radix sort), leaf construction with refine::max_elements(32), and neighbour
// queries (Moore, radius 1). Target: build (sort + leaves) of 10^7 3D points <= 1.5x std::sort.
// Usage: bench_htree [--quick] [--csv]
#include <irregular/core/box.hpp>
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>
#include <irregular/tree/htree.hpp>
#include <irregular/tree/neighbours.hpp>
#include <irregular/tree/refine.hpp>
#include <irregular/tree/stencil.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

namespace irr = irregular;
bool g_csv = false;
volatile std::size_t g_sink = 0;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median of `reps` timed runs after one warm-up; `prepare` runs untimed before each.
template <class Prep, class Fn>
double median_time(int reps, Prep&& prepare, Fn&& fn) {
  std::vector<double> t;
  for (int r = 0; r <= reps; ++r) {
    prepare();
    const double t0 = now_s();
    fn();
    const double t1 = now_s();
    if (r > 0) t.push_back(t1 - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// 50% uniform in the unit box, 50% in three Gaussian clusters (sigma 0.05), clamped to the box.
template <int D>
std::vector<std::array<double, D>> make_points(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 0.05);
  const std::array<std::array<double, 3>, 3> centers{{{0.25, 0.3, 0.6}, {0.7, 0.65, 0.3},
                                                      {0.45, 0.85, 0.8}}};
  std::vector<std::array<double, D>> p(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d)
      p[i][d] = (i % 2 == 0) ? u(rng) : std::clamp(centers[i % 3][d] + g(rng), 0.0, 1.0);
  return p;
}

struct Row {
  int dim;
  std::string curve;
  std::size_t n, leaves;
  double keys, stdsort, radix, leaves_t, nbr_qps;
};

template <class C>
Row run(const char* name, const std::vector<std::array<double, C::dim>>& pts, int reps) {
  using I = typename C::index_type;
  constexpr int D = C::dim;
  irr::Box<D> box;
  box.lo.fill(0.0);
  box.hi.fill(1.0);
  const auto side = irr::detail::axis_cells<C>(C::max_level);
  const std::size_t n = pts.size();
  std::vector<I> keys(n), work;
  Row r{D, name, n, 0, 0, 0, 0, 0, 0};
  r.keys = median_time(reps, [] {}, [&] {
    for (std::size_t i = 0; i < n; ++i) keys[i] = C::index(box.cell_of(pts[i], C::max_level, side));
  });
  r.stdsort = median_time(reps, [&] { work = keys; }, [&] { std::sort(work.begin(), work.end()); });
  r.radix = median_time(reps, [&] { work = keys; }, [&] { irr::HTree<C>::sort_keys(work); });
  const std::vector<I> sorted = work;
  irr::HTree<C> tree;
  r.leaves_t = median_time(reps, [&] { tree = irr::HTree<C>(); }, [&] {
    tree = irr::HTree<C>::build(sorted, irr::refine::max_elements(32));
  });
  r.leaves = tree.size();
  // neighbour queries (Moore R=1) on up to 2*10^5 leaves spread over the tree
  const std::size_t q = std::min<std::size_t>(tree.size(), 200000);
  const std::size_t stride = std::max<std::size_t>(1, tree.size() / q);
  std::vector<std::size_t> buf;
  const double tq = median_time(std::max(1, reps / 2), [] {}, [&] {
    std::size_t acc = 0;
    for (std::size_t i = 0, k = 0; k < q; ++k, i += stride) {
      irr::neighbours<irr::stencil::Moore<D, 1>>(tree, i, buf);
      acc += buf.size();
    }
    g_sink = acc;
  });
  r.nbr_qps = static_cast<double>(q) / tq;
  return r;
}

void print(const std::vector<Row>& rows) {
  if (g_csv) {
    std::printf("dim,curve,n,leaves,keys_ms,std_sort_ms,radix_ms,leaves_ms,build_ms,build_over_std_sort,"
                "stdsort_build_over_std_sort,neighbour_queries_per_s\n");
    for (const auto& r : rows)
      std::printf("%d,%s,%zu,%zu,%.2f,%.2f,%.2f,%.2f,%.2f,%.3f,%.3f,%.0f\n", r.dim, r.curve.c_str(),
                  r.n, r.leaves, r.keys * 1e3, r.stdsort * 1e3, r.radix * 1e3, r.leaves_t * 1e3,
                  (r.radix + r.leaves_t) * 1e3, (r.radix + r.leaves_t) / r.stdsort,
                  (r.stdsort + r.leaves_t) / r.stdsort, r.nbr_qps);
    return;
  }
  std::printf("| D | curve | points | leaves | keys ms | std::sort ms | radix sort ms | leaves ms | "
              "build ms (radix + leaves) | build / std::sort | (std::sort + leaves) / std::sort | "
              "Moore-1 neighbour queries/s |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& r : rows)
    std::printf("| %d | %s | %zu | %zu | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.3g |\n",
                r.dim, r.curve.c_str(), r.n, r.leaves, r.keys * 1e3, r.stdsort * 1e3,
                r.radix * 1e3, r.leaves_t * 1e3, (r.radix + r.leaves_t) * 1e3,
                (r.radix + r.leaves_t) / r.stdsort, (r.stdsort + r.leaves_t) / r.stdsort, r.nbr_qps);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else if (std::strcmp(argv[i], "--csv") == 0) g_csv = true;
    else {
      std::fprintf(stderr, "usage: %s [--quick] [--csv]\n", argv[0]);
      return 2;
    }
  }
  const std::vector<std::size_t> sizes = quick ? std::vector<std::size_t>{10000}
                                               : std::vector<std::size_t>{1000000, 10000000};
  const int reps = quick ? 3 : 3;
  std::vector<Row> rows;
  for (const std::size_t n : sizes) {
    {
      const auto p = make_points<2>(n, 2024);
      rows.push_back(run<irr::curve::Morton<2>>("Morton", p, reps));
      rows.push_back(run<irr::curve::Hilbert<2>>("Hilbert", p, reps));
      rows.push_back(run<irr::curve::Peano<2>>("Peano", p, reps));
    }
    {
      const auto p = make_points<3>(n, 2025);
      rows.push_back(run<irr::curve::Morton<3>>("Morton", p, reps));
      rows.push_back(run<irr::curve::Hilbert<3>>("Hilbert", p, reps));
      rows.push_back(run<irr::curve::Peano<3>>("Peano", p, reps));
    }
  }
  if (!g_csv)
    std::printf("## Serial H-Tree build: %s (refine::max_elements(32))\n\n",
                quick ? "quick" : "full");
  print(rows);
  return 0;
}
