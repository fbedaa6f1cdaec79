// Distributed build of IrregularDomain (baiardi-2001 §2-3) on 1 and 2 ranks: wall time of
// build() split into its phases (sample sort, leaf construction, blocking partition, migration),
// imbalance reached, what migration moved, Moore-1 neighbour queries per second, and std::sort of
// the keys alone and a radix sort of the (key, element) pairs on rank 0 in the same run (the
// references of the sort phase). Run under `mpiexec -n 2`.
// Usage: mpiexec -n 2 bench_dist [--quick | --sort | --local-sort] [--csv]
//   --sort: only 10^7 2D points on the Morton curve, 5 timed repeats (the sort-phase study).
//   --local-sort: only the local sort by key (sort_by_key, tree/sort.hpp) of 10^6 24-byte elements on
//   rank 0: uniform 62-bit keys, 20-bit keys (many repeats), and particles drifted by one step
//   after a sort (Hilbert 2D), the shape move_elements sorts.
#include <irregular/irregular.hpp>
#include <irregular/tree/detail/radix_sort.hpp>
#include "detail/timing.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace irr = irregular;
namespace mpi = boost::mpi;
using bench::max_over;
using bench::median;
using bench::now_s;

bool g_csv = false;
volatile std::size_t g_sink = 0;

template <int D>
struct Point {
  std::array<double, D> position;
  std::uint64_t id;
};

// 50% uniform in the unit box, 50% in three Gaussian clusters (sigma 0.05), clamped to the box.
// Every rank draws the same set from the same seed.
template <int D>
std::vector<Point<D>> make_points(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 0.05);
  constexpr std::array<std::array<double, 3>, 3> centers{{{0.2, 0.35, 0.7}, {0.75, 0.6, 0.25},
                                                          {0.4, 0.8, 0.55}}};
  std::vector<Point<D>> p(n);
  for (std::size_t i = 0; i < n; ++i) {
    p[i].id = i;
    const bool clustered = i % 2 == 1;
    const auto& c = centers[(i / 2) % 3];
    for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d)
      p[i].position[d] = clustered ? std::clamp(c[d] + g(rng), 0.0, 1.0) : u(rng);
  }
  return p;
}

struct Row {
  int dim = 0;
  std::string curve, cut;
  std::size_t n = 0;
  int ranks = 0;
  std::uint64_t leaves = 0;
  double build = 0, sort = 0, leaves_t = 0, partition = 0, migration = 0;
  double std_sort = 0;     // std::sort of all N keys on rank 0
  double radix_pairs = 0;  // LSD radix sort of all N (key, element) pairs on rank 0
  double imbalance = 0;
  std::uint64_t mig_elements = 0, mig_hnodes = 0, mig_bytes = 0, mig_messages = 0;
  double nbr_qps = 0;
};

struct Config {
  int warmups, reps;
};

// One build configuration on `comm` (every rank of it calls this): the timed build() of a fresh
// domain per repeat (a rebuilt domain would find its elements sorted and in place already).
template <class C>
Row measure(const mpi::communicator& comm, const std::vector<Point<C::dim>>& pts, Config cfg,
            irr::BlockingCut cut) {
  constexpr int D = C::dim;
  using Domain = irr::IrregularDomain<Point<D>, irr::stencil::Moore<D, 1>, C, irr::load::ElementCount>;
  irr::Box<D> box;
  box.lo.fill(0.0);
  box.hi.fill(1.0);
  const int p = comm.size(), me = comm.rank();
  // Round-robin share: the sort has to move about (p-1)/p of every rank's elements.
  std::vector<Point<D>> share;
  share.reserve(pts.size() / static_cast<std::size_t>(p) + 1);
  for (std::size_t i = static_cast<std::size_t>(me); i < pts.size(); i += static_cast<std::size_t>(p))
    share.push_back(pts[i]);

  Row r;
  r.n = pts.size();
  r.ranks = p;
  std::vector<double> tb, ts, tl, tp, tm;
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    Domain dom(comm, box, irr::refine::max_elements(32), {.partitioner = {cut}});
    dom.insert(share);
    comm.barrier();
    const double t0 = now_s();
    dom.build();
    const double t1 = now_s();
    const double wall = max_over(comm, t1 - t0);
    const auto prof = dom.last_profile();
    const double s = max_over(comm, prof.sort), l = max_over(comm, prof.leaves),
                 pa = max_over(comm, prof.partition), mi = max_over(comm, prof.migration);
    if (rep >= cfg.warmups) {
      tb.push_back(wall);
      ts.push_back(s);
      tl.push_back(l);
      tp.push_back(pa);
      tm.push_back(mi);
    }
    if (rep + 1 < cfg.warmups + cfg.reps) continue;

    // Last repeat: summaries and neighbour queries on the built domain.
    r.leaves = dom.global_leaf_count();
    if (dom.global_element_count() != pts.size()) {
      std::fprintf(stderr, "bench_dist: element count mismatch on rank %d\n", me);
      comm.abort(1);
    }
    r.imbalance = dom.load_report().imbalance;
    const auto& mig = dom.last_migration();
    r.mig_elements = mig.elements;
    r.mig_hnodes = mig.hnodes;
    r.mig_bytes = mig.bytes;
    r.mig_messages = mig.messages;
    irr::Neighbourhood<typename C::index_type> nb;
    const std::size_t local = dom.local_leaf_count();
    comm.barrier();
    const double q0 = now_s();
    std::size_t acc = 0;
    for (std::size_t i = 0; i < local; ++i) {
      dom.neighbours(i, nb);
      acc += nb.local.size() + nb.remote.size();
    }
    const double q1 = now_s();
    g_sink = acc;
    r.nbr_qps = static_cast<double>(r.leaves) / max_over(comm, q1 - q0);
  }
  r.build = median(tb);
  r.sort = median(ts);
  r.leaves_t = median(tl);
  r.partition = median(tp);
  r.migration = median(tm);
  return r;
}

struct Reference {
  double std_sort = 0, radix_pairs = 0;
};

// std::sort of the keys of all N points alone, and the stable LSD radix sort of the (key,
// element) pairs (irregular::detail::radix_sort_records, its scratch buffer allocated in the
// timed region like any sort's), on one rank (keys via key_of_position).
template <class C>
Reference time_reference(const mpi::communicator& self, const std::vector<Point<C::dim>>& pts, Config cfg) {
  constexpr int D = C::dim;
  using Domain = irr::IrregularDomain<Point<D>, irr::stencil::Moore<D, 1>, C, irr::load::ElementCount>;
  irr::Box<D> box;
  box.lo.fill(0.0);
  box.hi.fill(1.0);
  const Domain dom(self, box, irr::refine::max_elements(32));
  std::vector<typename C::index_type> keys(pts.size()), work;
  for (std::size_t i = 0; i < pts.size(); ++i) keys[i] = dom.key_of_position(pts[i].position);
  std::vector<double> t;
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    work = keys;
    const double t0 = now_s();
    std::sort(work.begin(), work.end());
    const double t1 = now_s();
    if (rep >= cfg.warmups) t.push_back(t1 - t0);
  }
  g_sink = static_cast<std::size_t>(work.front() == work.back());
  Reference ref;
  ref.std_sort = median(t);
  struct Pair {
    typename C::index_type key;
    Point<D> e;
  };
  std::vector<Pair> pairs;
  t.clear();
  const auto key = [](const Pair& q) { return q.key; };
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    pairs.resize(pts.size());
    for (std::size_t i = 0; i < pts.size(); ++i) pairs[i] = {keys[i], pts[i]};
    const double t0 = now_s();
    irr::detail::radix_sort_records(pairs, key, irr::detail::key_bits(pairs, key));  // allocates its buffer
    const double t1 = now_s();
    if (rep >= cfg.warmups) t.push_back(t1 - t0);
  }
  g_sink = static_cast<std::size_t>(pairs.front().e.id);
  ref.radix_pairs = median(t);
  return ref;
}

// The configuration on 1 rank (rank 0 of world, on a sub-communicator) and on both ranks.
template <class C>
void run(const mpi::communicator& world, const mpi::communicator& solo, const char* name,
         std::size_t n, std::uint64_t seed, Config cfg, irr::BlockingCut cut, std::vector<Row>& rows) {
  const auto pts = make_points<C::dim>(n, seed);
  const char* cut_name = cut == irr::BlockingCut::optimal ? "optimal" : "greedy";
  Reference ref;
  Row one;
  if (world.rank() == 0) {
    ref = time_reference<C>(solo, pts, cfg);
    one = measure<C>(solo, pts, cfg, cut);
  }
  world.barrier();
  Row two = measure<C>(world, pts, cfg, cut);
  if (world.rank() != 0) return;
  if (one.leaves != two.leaves) {
    std::fprintf(stderr, "bench_dist: %s %dD: %llu leaves on 1 rank but %llu on 2\n", name, C::dim,
                 static_cast<unsigned long long>(one.leaves), static_cast<unsigned long long>(two.leaves));
    world.abort(1);
  }
  for (Row* r : {&one, &two}) {
    r->dim = C::dim;
    r->curve = name;
    r->cut = cut_name;
    r->std_sort = ref.std_sort;
    r->radix_pairs = ref.radix_pairs;
    rows.push_back(*r);
  }
}

void print(const std::vector<Row>& rows) {
  if (g_csv) {
    std::printf("dim,curve,n,cut,ranks,leaves,build_ms,sort_ms,leaves_ms,partition_ms,migration_ms,"
                "std_sort_ms,radix_pairs_ms,sort_over_radix_pairs,build_over_std_sort,imbalance,migrated_hnodes,migrated_elements,"
                "migrated_bytes,migration_messages,neighbour_queries_per_s\n");
    for (const auto& r : rows)
      std::printf("%d,%s,%zu,%s,%d,%llu,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.3f,%.3f,%.3g,%llu,%llu,%llu,%llu,%.0f\n",
                  r.dim, r.curve.c_str(), r.n, r.cut.c_str(), r.ranks,
                  static_cast<unsigned long long>(r.leaves), r.build * 1e3, r.sort * 1e3,
                  r.leaves_t * 1e3, r.partition * 1e3, r.migration * 1e3, r.std_sort * 1e3,
                  r.radix_pairs * 1e3, r.sort / r.radix_pairs, r.build / r.std_sort, r.imbalance, static_cast<unsigned long long>(r.mig_hnodes),
                  static_cast<unsigned long long>(r.mig_elements),
                  static_cast<unsigned long long>(r.mig_bytes),
                  static_cast<unsigned long long>(r.mig_messages), r.nbr_qps);
    return;
  }
  std::printf("| D | curve | points | cut | ranks | leaves | build ms | sort ms | leaves ms | "
              "partition ms | migration ms | std::sort ms (rank 0, all keys) | radix sort ms (rank 0, all "
              "(key, element) pairs) | sort / radix | build / std::sort | "
              "imbalance | migrated hnodes | migrated elements | migrated bytes | messages | "
              "Moore-1 neighbour queries/s |\n");
  std::printf("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& r : rows)
    std::printf("| %d | %s | %zu | %s | %d | %llu | %.1f | %.1f | %.1f | %.2f | %.1f | %.1f | %.1f | %.2f | "
                "%.2f | %.2g | %llu | %llu | %llu | %llu | %.3g |\n",
                r.dim, r.curve.c_str(), r.n, r.cut.c_str(), r.ranks,
                static_cast<unsigned long long>(r.leaves), r.build * 1e3, r.sort * 1e3,
                r.leaves_t * 1e3, r.partition * 1e3, r.migration * 1e3, r.std_sort * 1e3,
                r.radix_pairs * 1e3, r.sort / r.radix_pairs, r.build / r.std_sort, r.imbalance, static_cast<unsigned long long>(r.mig_hnodes),
                static_cast<unsigned long long>(r.mig_elements),
                static_cast<unsigned long long>(r.mig_bytes),
                static_cast<unsigned long long>(r.mig_messages), r.nbr_qps);
}

// The local sort alone (what the sort phase, migrate() and move_elements call): median ms of
// sort_by_key over `reps` copies of one input; each result is checked sorted, stable,
// and every element still with its key.
struct Particle2 {
  std::array<double, 2> x;
  std::uint64_t id;
};

void local_sort_study(std::size_t n, int reps) {
  using C = irr::curve::Hilbert<2>;
  using I = C::index_type;
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  irr::Box<2> box;
  box.lo = {0, 0};
  box.hi = {1, 1};
  const irr::coord_t side = irr::ipow<irr::coord_t>(static_cast<irr::coord_t>(C::arity), C::max_level);
  const auto key = [&](const Particle2& q) { return C::index(box.cell_of(q.x, C::max_level, side)); };
  struct Input {
    const char* what;
    irr::detail::store_vector<Particle2> el;
    irr::detail::store_vector<I> keys;
  };
  std::vector<Input> in(3);
  in[0].what = "uniform 62-bit keys";
  in[1].what = "20-bit keys (about one repeat per key)";
  in[2].what = "particles after one drift step of +-0.002 (Hilbert 2D, half in a cluster)";
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = rng();
    in[0].el.push_back({{0, 0}, i});
    in[0].keys.push_back(static_cast<I>(r >> 2));
    in[1].el.push_back({{0, 0}, i});
    in[1].keys.push_back(static_cast<I>(r >> 44));
    Particle2 q{{u(rng), u(rng)}, i};
    if (i % 2) q.x = {0.3 + 0.05 * u(rng), 0.6 + 0.05 * u(rng)};
    in[2].el.push_back(q);
    in[2].keys.push_back(key(q));
  }
  irr::sort_by_key(in[2].el, in[2].keys);  // sorted as a domain holds them, then one step
  for (std::size_t i = 0; i < n; ++i) {
    Particle2& q = in[2].el[i];
    for (double& c : q.x) c = std::clamp(c + 0.004 * (u(rng) - 0.5), 0.0, 1.0);
    q.id = i;
    in[2].keys[i] = key(q);
  }
  if (!g_csv)
    std::printf("## Local sort by key: %zu elements of 24 bytes on rank 0 (median of %d)\n\n| input | ms |\n|---|---:|\n", n, reps);
  for (const Input& input : in) {
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
      auto el = input.el;
      auto keys = input.keys;
      const double t0 = now_s();
      irr::sort_by_key(el, keys);
      t.push_back(now_s() - t0);
      for (std::size_t i = 0; i < n; ++i)
        if (keys[i] != input.keys[el[i].id] ||
            (i > 0 && (keys[i] < keys[i - 1] || (keys[i] == keys[i - 1] && el[i].id < el[i - 1].id))))
          throw std::runtime_error("bench_dist --local-sort: the result is not sorted, stable and keyed");
    }
    if (g_csv) std::printf("local_sort,\"%s\",%zu,%.3f\n", input.what, n, 1e3 * median(t));
    else std::printf("| %s | %.2f |\n", input.what, 1e3 * median(t));
  }
  if (!g_csv) std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  mpi::communicator world;
  bool quick = false, sort_only = false, local_sort = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else if (std::strcmp(argv[i], "--sort") == 0) sort_only = true;
    else if (std::strcmp(argv[i], "--local-sort") == 0) local_sort = true;
    else if (std::strcmp(argv[i], "--csv") == 0) g_csv = true;
    else {
      if (world.rank() == 0) std::fprintf(stderr, "usage: mpiexec -n 2 %s [--quick | --sort | --local-sort] [--csv]\n", argv[0]);
      return 2;
    }
  }
  if (world.size() != 2) {
    if (world.rank() == 0) std::fprintf(stderr, "bench_dist: run with exactly 2 ranks (mpiexec -n 2)\n");
    return 2;
  }
  // Rank 0 alone measures the 1-rank build; rank 1's communicator is unused.
  const mpi::communicator solo = world.split(world.rank() == 0 ? 0 : 1);

  if (local_sort || quick) {
    if (world.rank() == 0) local_sort_study(quick ? 20000 : 1000000, quick ? 3 : 9);
    if (local_sort) return 0;
  }
  using irr::BlockingCut;
  namespace cv = irr::curve;
  std::vector<Row> rows;
  if (sort_only) {
    run<cv::Morton<2>>(world, solo, "Morton", 10000000, 2024, Config{1, 5}, BlockingCut::optimal, rows);
  } else if (quick) {
    const std::size_t n = 20000;
    const Config cfg{1, 1};
    run<cv::Hilbert<2>>(world, solo, "Hilbert", n, 2024, cfg, BlockingCut::optimal, rows);
    run<cv::Morton<3>>(world, solo, "Morton", n, 2025, cfg, BlockingCut::optimal, rows);
    run<cv::Morton<3>>(world, solo, "Morton", n, 2025, cfg, BlockingCut::greedy, rows);
  } else {
    const std::size_t n = 1000000;
    const Config cfg{1, 3};
    run<cv::Morton<2>>(world, solo, "Morton", n, 2024, cfg, BlockingCut::optimal, rows);
    run<cv::Hilbert<2>>(world, solo, "Hilbert", n, 2024, cfg, BlockingCut::optimal, rows);
    run<cv::Peano<2>>(world, solo, "Peano", n, 2024, cfg, BlockingCut::optimal, rows);
    run<cv::Morton<3>>(world, solo, "Morton", n, 2025, cfg, BlockingCut::optimal, rows);
    run<cv::Hilbert<3>>(world, solo, "Hilbert", n, 2025, cfg, BlockingCut::optimal, rows);
    run<cv::Hilbert<3>>(world, solo, "Hilbert", n, 2025, cfg, BlockingCut::greedy, rows);
    run<cv::Peano<3>>(world, solo, "Peano", n, 2025, cfg, BlockingCut::optimal, rows);
    const std::size_t big = 10000000;
    const Config big_cfg{1, 1};  // warm-up and one timed run: keeps the full run near 3 minutes
    run<cv::Morton<2>>(world, solo, "Morton", big, 2024, big_cfg, BlockingCut::optimal, rows);
    run<cv::Hilbert<2>>(world, solo, "Hilbert", big, 2024, big_cfg, BlockingCut::optimal, rows);
    run<cv::Peano<2>>(world, solo, "Peano", big, 2024, big_cfg, BlockingCut::optimal, rows);
    run<cv::Morton<3>>(world, solo, "Morton", big, 2025, big_cfg, BlockingCut::optimal, rows);
    run<cv::Hilbert<3>>(world, solo, "Hilbert", big, 2025, big_cfg, BlockingCut::optimal, rows);
    run<cv::Peano<3>>(world, solo, "Peano", big, 2025, big_cfg, BlockingCut::optimal, rows);
  }
  if (world.rank() == 0) {
    if (!g_csv)
      std::printf("## Distributed IrregularDomain build: %s (refine::max_elements(32), load::ElementCount)\n\n",
                  sort_only ? "sort study" : quick ? "quick" : "full");
    print(rows);
  }
  return 0;
}
