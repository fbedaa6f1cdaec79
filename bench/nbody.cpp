// Barnes–Hut on the H-Tree (issue 27): the force kernels of examples/nbody (physics.hpp), the
// whole force evaluation (reduce_up + walk_hnodes + kernels, as examples/nbody/nbody.cpp does it),
// the direct sum, two ranks against one, the three walk strategies and cost zones.
//   1. Interactions per second on one core (a sub-communicator of rank 0; the other ranks sleep),
//      Plummer bodies, theta 0.5, quadrupoles, eps 0.02, leaves of <= 16 bodies: the whole force
//      evaluation, and the kernels alone (InteractionLists::evaluate over the recorded lists of a
//      sample of leaves, repeated): body–cell (multipoles only), body–body (near bodies only),
//      both. Flops per interaction as written in physics.hpp, the core's peak for the compiled
//      ISA (baseline x86-64: SSE2, 2 doubles per vector) and a loop of 1/sqrt alone (the
//      divider's bound); the same multipole loop compiled, in this executable, for -march=native
//      (function target attributes) and for 512-bit AVX-512. Target: >= 10^8 body–cell
//      interactions/s/core.
//   2. Speed-up against the direct sum at N = 10^5, theta 0.5: the direct sum is timed for a
//      sample of targets (all N sources, the same near kernel, every target in one list; and the
//      example's scalar --direct loop) and scaled to N targets.
//   3. Two ranks against one at N = 10^6: a force evaluation after a warm-up evaluation and a
//      cost-zone rebalance, slowest rank. Efficiency T1 / (2 T2). Target >= 0.85.
//   4. The papers' comparison in kind: one simulation of clumpy bodies (the trajectory is the
//      same bits under every strategy), each step's upward pass walked by IFP (which evaluates
//      the forces), RA and FP (walks only): messages, bytes, hnodes and bodies sent, faults,
//      summed over ranks and over the run's walks. Target: FP and IFP below RA in messages.
//   5. The same clumpy run partitioned by cost zones (1 + interactions per body, the example's
//      metric) and by element count: max/mean over ranks of the interactions and of the kernel
//      CPU seconds per step, mean and max over the steps.
// Usage: mpiexec -n P bench_nbody [--quick] [--sections 1,2,3,4,5] [--n N[,N..]] [--sim-n N]
//                                 [--steps S] [--reps R] [--leaf K (16)]
// Sections 4 and 5 run on every rank given (P); 1 and 2 on rank 0 alone; 3 on 1 and 2 ranks.
// Exit 1 when a copy of the kernel disagrees with physics.hpp or the strategies' forces differ.
#include <irregular/irregular.hpp>

#include "../examples/nbody/initial.hpp"
#include "../examples/nbody/physics.hpp"
#include "../examples/nbody/setup.hpp"
#include "detail/timing.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace irr = irregular;
namespace mpi = boost::mpi;
using bench::cpu_now_s;
using bench::max_over;
using bench::median;
using bench::now_s;
using nbody::Felt;
using nbody::InteractionLists;
using nbody::Multipole;

constexpr int D = 3;
using B = nbody::Body<D>;
constexpr double kTheta = 0.5, kEps = 0.02;
int kLeaf = 16;  // --leaf

using Cost = nbody::Cost<D>;  // the example's cost zones
using CostDomain =
    irr::IrregularDomain<B, irr::stencil::Moore<D>, irr::curve::Hilbert<D>, irr::load::PerElement<Cost>>;
using CountDomain = irr::IrregularDomain<B, irr::stencil::Moore<D>, irr::curve::Hilbert<D>, irr::load::ElementCount>;

struct Config {
  bool quick = false;
  std::vector<int> sections{1, 2, 3, 4, 5};
  std::vector<std::size_t> kernel_n{100'000, 1'000'000};
  std::size_t direct_n = 100'000, direct_sample = 1000, scalar_sample = 200;
  std::size_t efficiency_n = 1'000'000;
  std::size_t sim_n = 20'000;
  int steps = 50;
  double dt = 0.002;
  int reps = 1;                 // timed force evaluations per size (after a warm-up)
  double kernel_seconds = 1.0;  // least time of each kernel measurement
  [[nodiscard]] bool has(int s) const { return std::find(sections.begin(), sections.end(), s) != sections.end(); }
};

bool g_failed = false;
unsigned long long ull(std::uint64_t x) { return static_cast<unsigned long long>(x); }

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}
std::string cpu_mhz() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("cpu MHz", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

/// Waits for every rank of comm without spinning (1 ms sleeps): the ranks outside a
/// sub-communicator's measurement leave its core alone.
void idle_barrier(const mpi::communicator& comm) {
  MPI_Request r;
  MPI_Ibarrier(comm, &r);
  int done = 0;
  while (true) {
    MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    if (done) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

/// f(sub) on the first k ranks of world (a split communicator); the others wait idle.
template <class F>
void on_ranks(const mpi::communicator& world, int k, F&& f) {
  const bool in = world.rank() < k;
  mpi::communicator sub = world.split(in ? 0 : 1, world.rank());
  if (in) f(sub);
  idle_barrier(world);
}

// ---- the domain and the forces (as examples/nbody/nbody.cpp) -----------------------------------

using nbody::canonical_order;
using nbody::cube_for;

template <class Dom>
std::unique_ptr<Dom> make_domain(const mpi::communicator& comm, const std::vector<B>& all) {
  std::unique_ptr<Dom> d;
  if constexpr (std::is_same_v<Dom, CostDomain>)
    d = std::make_unique<Dom>(comm, cube_for(all), irr::refine::max_elements(kLeaf),
                              typename Dom::options_type{.load = irr::load::per_element(Cost{})});
  else
    d = std::make_unique<Dom>(comm, cube_for(all), irr::refine::max_elements(kLeaf));
  std::vector<B> mine;
  const auto p = static_cast<std::size_t>(comm.size()), r = static_cast<std::size_t>(comm.rank());
  for (std::size_t i = r; i < all.size(); i += p) mine.push_back(all[i]);
  d->insert(mine);
  d->build();
  return d;
}

/// One leaf's interaction lists as recorded by a walk (for the kernel measurements).
struct LeafRecord {
  std::vector<B> readers, near;
  std::vector<Multipole<D>> multipoles;
  bool own = false;
};

/// What one force evaluation did on this rank.
struct ForceRun {
  double total = 0, reduce = 0, walk = 0, kernel = 0;  // wall seconds; walk includes the kernels
  double kernel_cpu = 0, total_cpu = 0;                 // thread CPU seconds in the kernels, in all
  std::uint64_t cell = 0, near = 0, own = 0;           // body–cell, body–body (other leaves), own leaf
  std::uint64_t leaves = 0, bodies = 0;
  irr::HnodeStats stats;
  [[nodiscard]] std::uint64_t interactions() const { return cell + near + own; }
};

using clk = std::chrono::steady_clock;
double since(clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); }

template <class Dom>
auto upward(Dom& d) {
  const auto box = d.box();
  return d.reduce_up(
      [box](const irr::Cell<D>& c, std::span<const B> b) { return nbody::leaf_multipole<D>(box, c, b); },
      [box](const irr::Cell<D>& c, std::span<const Multipole<D>> ch) {
        return nbody::combine_multipoles<D>(box, c, ch);
      });
}

/// The example's tree_forces, instrumented: the upward pass, one walk per leaf filling its lists,
/// evaluated as the walk moves on. `others` are walked too on the same values, without kernels
/// (their HnodeStats go to others_stats). Leaves i with sample(i) are recorded into *records.
template <class Dom>
ForceRun tree_forces(Dom& d, irr::hnodes::ByName& strategy, std::vector<irr::hnodes::ByName*> others = {},
                     std::vector<irr::HnodeStats>* others_stats = nullptr,
                     const std::function<bool(std::size_t)>& sample = {}, std::vector<LeafRecord>* records = nullptr) {
  ForceRun fr;
  const auto t_start = clk::now();
  const double cpu_start = cpu_now_s();
  canonical_order(d);
  auto t0 = clk::now();
  auto values = upward(d);
  fr.reduce = since(t0);
  std::vector<Felt<D>> felt(d.local_element_count());
  InteractionLists<D> lists(kEps, true);
  const B* const base = d.local_elements().data();
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::size_t current = none;
  LeafRecord* rec = nullptr;
  auto flush = [&] {
    const auto leaf = d.leaf(current);
    const std::size_t n = leaf.elements.size();
    fr.cell += lists.multipoles() * n;
    fr.near += lists.near_bodies() * n;
    ++fr.leaves;
    fr.bodies += n;
    const auto k0 = clk::now();
    const double c0 = cpu_now_s();
    lists.evaluate(leaf.elements, felt.data() + (leaf.elements.data() - base));
    fr.kernel_cpu += cpu_now_s() - c0;
    fr.kernel += since(k0);
    if (rec) rec->readers.assign(leaf.elements.begin(), leaf.elements.end());
    lists.clear();
  };
  const nbody::OpeningCriterion<D> open{kTheta};
  auto accept = [&](std::size_t reader, std::size_t hnode, bool near, std::span<const B> elements) {
    if (reader != current) {
      if (current != none) flush();
      current = reader;
      rec = nullptr;
      if (sample && records && sample(reader)) rec = &records->emplace_back();
    }
    if (near && values.local_leaf(hnode) == reader) {
      lists.add_own();
      const std::size_t n = elements.size();
      fr.own += n * (n - 1);
      if (rec) rec->own = true;
    } else if (near) {
      lists.add_bodies(elements);
      if (rec) rec->near.insert(rec->near.end(), elements.begin(), elements.end());
    } else {
      lists.add_multipole(values.value(hnode));
      if (rec && values.value(hnode).mass != 0) rec->multipoles.push_back(values.value(hnode));
    }
  };
  t0 = clk::now();
  fr.stats = d.walk_hnodes(values, open, accept, strategy);
  if (current != none) flush();
  fr.walk = since(t0);
  auto els = d.local_elements();
  for (std::size_t k = 0; k < els.size(); ++k) {
    els[k].acceleration = felt[k].acceleration;
    els[k].potential = felt[k].potential;
    els[k].interactions = felt[k].interactions;
  }
  fr.total = since(t_start);
  fr.total_cpu = cpu_now_s() - cpu_start;
  for (auto* o : others) {  // fresh values: a walk keeps the remote hnodes it received in them
    auto fresh = upward(d);
    const auto s = d.walk_hnodes(fresh, open, [](std::size_t, std::size_t, bool, std::span<const B>) {}, *o);
    if (others_stats) others_stats->push_back(s);
  }
  return fr;
}

// ---- kernel copies for other ISAs ---------------------------------------------------------------

/// The multipole lists of one leaf and its readers as structures of arrays.
struct SoA {
  std::array<std::vector<double>, D> c;
  std::array<std::vector<double>, nbody::sym<D>> q;
  std::vector<double> m, t;
  std::array<std::vector<double>, D> px, ax;
  std::vector<double> ph;
};

SoA soa_of(const LeafRecord& r) {
  SoA s;
  for (const auto& p : r.multipoles) {
    for (int a = 0; a < D; ++a) s.c[a].push_back(p.com[a]);
    for (int k = 0; k < nbody::sym<D>; ++k) s.q[k].push_back(p.q[k]);
    s.m.push_back(p.mass);
    s.t.push_back(p.trace);
  }
  for (const auto& b : r.readers)
    for (int a = 0; a < D; ++a) s.px[a].push_back(b.position[a]);
  for (int a = 0; a < D; ++a) s.ax[a].assign(r.readers.size(), 0.0);
  s.ph.assign(r.readers.size(), 0.0);
  return s;
}

// InteractionLists::multipole_kernel<true> of physics.hpp, line for line (3D), on an SoA.
#define NBODY_MULTIPOLE_KERNEL_BODY                                                   \
  const double eps2 = kEps * kEps;                                                   \
  const std::size_t n = s.ph.size();                                                 \
  std::array<const double*, D> p;                                                    \
  std::array<double*, D> acc;                                                        \
  for (int a = 0; a < D; ++a) {                                                      \
    p[a] = s.px[a].data();                                                           \
    acc[a] = s.ax[a].data();                                                         \
  }                                                                                  \
  double* const phi = s.ph.data();                                                   \
  for (std::size_t j = 0; j < s.m.size(); ++j) {                                     \
    std::array<double, D> c;                                                         \
    for (int a = 0; a < D; ++a) c[a] = s.c[a][j];                                    \
    std::array<double, nbody::sym<D>> q;                                             \
    for (int k = 0; k < nbody::sym<D>; ++k) q[k] = s.q[k][j];                        \
    const double m = s.m[j];                                                         \
    const double te = s.t[j] * eps2;                                                 \
    _Pragma("GCC ivdep") for (std::size_t i = 0; i < n; ++i) {                       \
      std::array<double, D> r;                                                       \
      double r2 = eps2;                                                              \
      for (int a = 0; a < D; ++a) {                                                  \
        r[a] = p[a][i] - c[a];                                                       \
        r2 += r[a] * r[a];                                                           \
      }                                                                              \
      const double inv = 1.0 / std::sqrt(r2);                                        \
      const double inv2 = inv * inv, inv3 = inv * inv2;                              \
      const double inv5 = inv3 * inv2, inv7 = inv5 * inv2;                           \
      std::array<double, D> qr;                                                      \
      double rqr = 0;                                                                \
      for (int a = 0; a < D; ++a) {                                                  \
        double sum = 0;                                                              \
        for (int b = 0; b < D; ++b) sum += q[nbody::qi<D>(a, b)] * r[b];             \
        qr[a] = sum;                                                                 \
        rqr += r[a] * sum;                                                           \
      }                                                                              \
      const double radial = -m * inv3 + 2.5 * (te - rqr) * inv7;                     \
      for (int a = 0; a < D; ++a) acc[a][i] += radial * r[a] + qr[a] * inv5;         \
      phi[i] += -m * inv + 0.5 * (te - rqr) * inv5;                                  \
    }                                                                                \
  }

[[gnu::noinline]] void kernel_baseline(SoA& s) { NBODY_MULTIPOLE_KERNEL_BODY }
// The ISA g++ 12 -march=native gives on this machine (znver3 with the AVX-512 extensions, 256-bit
// vectors); the tuning stays generic: g++ does not inline std::array's accessors into a function
// whose arch or tune differs from theirs.
[[gnu::noinline, gnu::target("avx2,fma,bmi2,avx512f,avx512vl,avx512bw,avx512dq,avx512cd,prefer-vector-width=256")]] void
kernel_native(SoA& s) { NBODY_MULTIPOLE_KERNEL_BODY }
[[gnu::noinline, gnu::target("avx2,fma,bmi2,avx512f,avx512vl,avx512bw,avx512dq,avx512cd,prefer-vector-width=512")]] void
kernel_avx512(SoA& s) { NBODY_MULTIPOLE_KERNEL_BODY }
#undef NBODY_MULTIPOLE_KERNEL_BODY

// 1/sqrt(x) alone over n values, the divider's bound on any kernel with one reciprocal square root.
[[gnu::noinline]] void rsqrt_loop(const double* x, double* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = 1.0 / std::sqrt(x[i]);
}

// ---- section 1 and 2: one core -------------------------------------------------------------------

constexpr int kRepeat = 8;  // each leaf's lists evaluated this many times in a row (warm caches)

struct KernelRates {
  double cell = 0, near = 0, both = 0;  // interactions/s
  std::uint64_t leaves = 0;
  double readers = 0, multipoles = 0, near_bodies = 0;  // means over the sampled leaves
};

/// Repeats f() until at least `least` seconds; returns seconds per call.
template <class F>
double per_call(double least, F&& f) {
  f();  // warm-up
  int reps = 1;
  while (true) {
    const double t0 = now_s();
    for (int k = 0; k < reps; ++k) f();
    const double t = now_s() - t0;
    if (t >= least) return t / reps;
    reps *= 2;
  }
}

KernelRates kernel_rates(const std::vector<LeafRecord>& recs, double least) {
  KernelRates k;
  std::vector<InteractionLists<D>> full, cells, nears;
  std::uint64_t ic = 0, in = 0, io = 0;
  std::size_t most = 0;
  for (const auto& r : recs) {
    full.emplace_back(kEps, true);
    cells.emplace_back(kEps, true);
    nears.emplace_back(kEps, true);
    for (const auto& p : r.multipoles) {
      full.back().add_multipole(p);
      cells.back().add_multipole(p);
    }
    full.back().add_bodies(r.near);
    nears.back().add_bodies(r.near);
    if (r.own) full.back().add_own();
    const std::size_t n = r.readers.size();
    ic += n * r.multipoles.size();
    in += n * r.near.size();
    io += r.own ? n * (n - 1) : 0;
    most = std::max(most, n);
    k.readers += static_cast<double>(n);
    k.multipoles += static_cast<double>(r.multipoles.size());
    k.near_bodies += static_cast<double>(r.near.size());
  }
  k.leaves = recs.size();
  const double nl = std::max<double>(1, static_cast<double>(recs.size()));
  k.readers /= nl;
  k.multipoles /= nl;
  k.near_bodies /= nl;
  std::vector<Felt<D>> out(most);
  auto run = [&](std::vector<InteractionLists<D>>& lists) {
    return per_call(least, [&] {
             for (std::size_t i = 0; i < recs.size(); ++i)
               for (int r = 0; r < kRepeat; ++r) lists[i].evaluate(recs[i].readers, out.data());
           }) / kRepeat;
  };
  k.cell = static_cast<double>(ic) / run(cells);
  k.near = static_cast<double>(in) / run(nears);
  k.both = static_cast<double>(ic + in + io) / run(full);
  return k;
}

struct IsaRates {
  double baseline = 0, native = 0, avx512 = 0, rsqrt_ns = 0;
  double native_err = 0, avx512_err = 0;  // max relative difference of the accelerations from baseline
};

IsaRates isa_rates(const std::vector<LeafRecord>& recs, double least) {
  IsaRates r;
  std::vector<SoA> s;
  std::uint64_t ic = 0;
  for (const auto& rec : recs) {
    s.push_back(soa_of(rec));
    ic += rec.readers.size() * rec.multipoles.size();
  }
  // The baseline copy against physics.hpp: the same bits.
  std::vector<Felt<D>> out;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    InteractionLists<D> l(kEps, true);
    for (const auto& p : recs[i].multipoles) l.add_multipole(p);
    out.resize(recs[i].readers.size());
    l.evaluate(recs[i].readers, out.data());
    SoA t = s[i];
    kernel_baseline(t);
    for (std::size_t k = 0; k < out.size(); ++k)
      for (int a = 0; a < D; ++a)
        if (std::memcmp(&t.ax[a][k], &out[k].acceleration[a], sizeof(double)) != 0) {
          std::fprintf(stderr, "bench_nbody: FAILED: the baseline kernel copy differs from physics.hpp\n");
          g_failed = true;
          return r;
        }
  }
  auto rate = [&](void (*kernel)(SoA&)) {
    return static_cast<double>(ic) / (per_call(least, [&] {
                                        for (auto& x : s)
                                          for (int k = 0; k < kRepeat; ++k) kernel(x);
                                      }) / kRepeat);
  };
  auto err = [&](void (*kernel)(SoA&)) {
    double worst = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      SoA a = soa_of(recs[i]), b = soa_of(recs[i]);
      kernel_baseline(a);
      kernel(b);
      for (std::size_t k = 0; k < a.ph.size(); ++k) {
        double num = 0, den = 0;
        for (int c = 0; c < D; ++c) {
          num += (a.ax[c][k] - b.ax[c][k]) * (a.ax[c][k] - b.ax[c][k]);
          den += a.ax[c][k] * a.ax[c][k];
        }
        if (den > 0) worst = std::max(worst, std::sqrt(num / den));
      }
    }
    return worst;
  };
  r.baseline = rate(kernel_baseline);
  r.native = rate(kernel_native);
  r.avx512 = rate(kernel_avx512);
  r.native_err = err(kernel_native);
  r.avx512_err = err(kernel_avx512);
  std::vector<double> x(4096), y(4096);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.5 + 1e-3 * static_cast<double>(i);
  r.rsqrt_ns = 1e9 * per_call(least / 4, [&] {
                 rsqrt_loop(x.data(), y.data(), x.size());
                 x[0] = y[7] > 0 ? 0.5 : 0.6;  // keeps the loop live
               }) / static_cast<double>(x.size());
  return r;
}

struct OneCore {
  std::size_t n = 0;
  std::vector<ForceRun> runs;  // timed evaluations
  KernelRates kernel;
  IsaRates isa;
  double build = 0;
};

/// Builds N Plummer bodies on comm (1 rank here), warms up, times cfg.reps evaluations; records a
/// sample of about 200 leaves for the kernel measurements.
OneCore one_core(const mpi::communicator& comm, const std::vector<B>& all, const Config& cfg, bool isa) {
  OneCore oc;
  oc.n = all.size();
  const double t0 = now_s();
  auto d = make_domain<CostDomain>(comm, all);
  oc.build = now_s() - t0;
  irr::hnodes::ByName ifp("IFP");
  tree_forces(*d, ifp);  // warm-up; the costs are now known
  d->rebalance({.threshold = 0.05});
  const std::size_t leaves = d->local_leaf_count(), every = std::max<std::size_t>(1, leaves / 200);
  std::vector<LeafRecord> recs;
  for (int r = 0; r < cfg.reps; ++r)
    oc.runs.push_back(tree_forces(*d, ifp, {}, nullptr,
                                  r == 0 ? std::function<bool(std::size_t)>([&](std::size_t l) { return l % every == every / 2; })
                                         : std::function<bool(std::size_t)>{},
                                  &recs));
  std::erase_if(recs, [](const LeafRecord& r) { return r.readers.empty(); });
  oc.kernel = kernel_rates(recs, cfg.kernel_seconds);
  if (isa) oc.isa = isa_rates(recs, cfg.kernel_seconds);
  return oc;
}

struct DirectSum {
  std::size_t n = 0, sample = 0, scalar_sample = 0;
  double soa_s = 0, scalar_s = 0;  // seconds for the samples
};

/// The direct sum over all N sources for a sample of targets: the near kernel with the sample as
/// one reader list (the most favourable case for the vector loop), and the example's scalar loop.
DirectSum direct_sum(const std::vector<B>& all, const Config& cfg) {
  DirectSum ds;
  ds.n = all.size();
  std::vector<B> targets;
  const std::size_t step = std::max<std::size_t>(1, all.size() / cfg.direct_sample);
  for (std::size_t i = 0; i < all.size() && targets.size() < cfg.direct_sample; i += step) targets.push_back(all[i]);
  ds.sample = targets.size();
  InteractionLists<D> lists(kEps, true);
  lists.add_bodies(all);
  std::vector<Felt<D>> out(targets.size());
  ds.soa_s = per_call(cfg.kernel_seconds, [&] { lists.evaluate(targets, out.data()); });
  ds.scalar_sample = std::min(cfg.scalar_sample, targets.size());
  volatile double sink = 0;
  ds.scalar_s = per_call(cfg.kernel_seconds, [&] {
    for (std::size_t t = 0; t < ds.scalar_sample; ++t) {
      const auto f = nbody::direct_felt<D>(targets[t], all, kEps);
      sink = sink + f.acceleration[0] + f.potential;
    }
  });
  return ds;
}

// ---- section 3: two ranks against one -----------------------------------------------------------

/// The slowest rank's force evaluation seconds (median of reps, after a warm-up and a rebalance).
struct Eval {
  double wall = 0, cpu_kernel_max = 0, cpu_max = 0, kernel_wall_max = 0;
  std::uint64_t interactions = 0, messages = 0, bytes = 0;
  double imbalance = 0;
};

Eval evaluate_on(const mpi::communicator& comm, const std::vector<B>& all, int reps) {
  auto d = make_domain<CostDomain>(comm, all);
  irr::hnodes::ByName ifp("IFP");
  tree_forces(*d, ifp);
  d->rebalance({.threshold = 0.0});  // cut by the measured costs
  tree_forces(*d, ifp);              // the strategy's sets for this partition
  std::vector<double> walls;
  Eval e;
  for (int r = 0; r < reps; ++r) {
    comm.barrier();
    const auto fr = tree_forces(*d, ifp);
    walls.push_back(max_over(comm, fr.total));
    e.cpu_kernel_max = max_over(comm, fr.kernel_cpu);
    e.cpu_max = max_over(comm, fr.total_cpu);
    e.kernel_wall_max = max_over(comm, fr.kernel);
    std::uint64_t v[3] = {fr.interactions(), fr.stats.messages, fr.stats.bytes}, g[3];
    MPI_Allreduce(v, g, 3, MPI_UINT64_T, MPI_SUM, comm);
    e.interactions = g[0];
    e.messages = g[1];
    e.bytes = g[2];
  }
  e.wall = median(walls);
  e.imbalance = d->load_report().imbalance;
  return e;
}

// ---- sections 4 and 5: the clumpy run -----------------------------------------------------------

struct SimResult {
  int ranks = 0, remaps = 0, walks = 0;
  std::array<irr::HnodeStats, 3> strategy{};  // IFP (evaluating), RA, FP; summed over ranks and walks
  double inter_mean_ratio = 0, inter_max_ratio = 0;  // max/mean over ranks of interactions: mean, max over steps
  double cpu_mean_ratio = 0, cpu_max_ratio = 0;      // the same for the kernels' CPU seconds
  double force_wall = 0;                             // slowest rank's force seconds summed over the steps
  std::uint64_t interactions = 0;                    // over the run
  std::uint64_t final_digest = 0;
};

irr::HnodeStats sum_stats(const mpi::communicator& comm, const irr::HnodeStats& s) {
  std::uint64_t v[7] = {s.messages, s.bytes, s.hnodes_sent, s.elements_sent, s.unopened, s.faults, s.rounds}, g[7];
  MPI_Allreduce(v, g, 7, MPI_UINT64_T, MPI_SUM, comm);
  irr::HnodeStats r;
  r.messages = g[0];
  r.bytes = g[1];
  r.hnodes_sent = g[2];
  r.elements_sent = g[3];
  r.unopened = g[4];
  r.faults = g[5];
  r.rounds = g[6] / static_cast<std::uint64_t>(comm.size());  // the same on every rank
  return r;
}

template <class Dom>
SimResult simulate(const mpi::communicator& comm, const std::vector<B>& all, const Config& cfg, bool all_strategies) {
  SimResult res;
  res.ranks = comm.size();
  auto d = make_domain<Dom>(comm, all);
  irr::hnodes::ByName ifp("IFP"), ra("RA"), fp("FP");
  std::vector<irr::hnodes::ByName*> others;
  if (all_strategies) others = {&ra, &fp};
  std::vector<double> inter_ratio, cpu_ratio;
  auto forces = [&](bool record) {
    std::vector<irr::HnodeStats> os;
    const auto fr = tree_forces(*d, ifp, others, &os);
    res.strategy[0] += fr.stats;
    for (std::size_t k = 0; k < os.size(); ++k) res.strategy[k + 1] += os[k];
    ++res.walks;
    if (!record) return;
    res.force_wall += max_over(comm, fr.total);
    const double mine[2] = {static_cast<double>(fr.interactions()), fr.kernel_cpu};
    double mx[2], sum[2];
    MPI_Allreduce(mine, mx, 2, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, comm);
    inter_ratio.push_back(mx[0] / (sum[0] / comm.size()));
    cpu_ratio.push_back(mx[1] / (sum[1] / comm.size()));
    res.interactions += static_cast<std::uint64_t>(sum[0]);
  };
  forces(false);
  const double h = 0.5 * cfg.dt;
  for (int step = 1; step <= cfg.steps; ++step) {
    const auto box = d->box();
    d->move_elements([&](B& b) {
      for (int c = 0; c < D; ++c) {
        b.velocity[c] += h * b.acceleration[c];
        b.position[c] += cfg.dt * b.velocity[c];
      }
      return box.contains(b.position);
    });
    if (d->rebalance({.threshold = 0.05})) ++res.remaps;
    forces(true);
    for (auto& b : d->local_elements())
      for (int c = 0; c < D; ++c) b.velocity[c] += h * b.acceleration[c];
  }
  for (auto& s : res.strategy) s = sum_stats(comm, s);
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  auto mx = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); };
  res.inter_mean_ratio = mean(inter_ratio);
  res.inter_max_ratio = mx(inter_ratio);
  res.cpu_mean_ratio = mean(cpu_ratio);
  res.cpu_max_ratio = mx(cpu_ratio);
  // A digest of the final positions (order-independent), to check both metrics ran the same physics.
  std::uint64_t h64 = 0, g = 0;
  for (const auto& b : d->local_elements()) {
    std::uint64_t x;
    std::memcpy(&x, &b.position[0], sizeof x);
    h64 += (x ^ b.id) * 0x9e3779b97f4a7c15ull;
  }
  MPI_Allreduce(&h64, &g, 1, MPI_UINT64_T, MPI_SUM, comm);
  res.final_digest = g;
  return res;
}

// ---- printing -----------------------------------------------------------------------------------

constexpr double kFlopsCell = 57, kFlopsNear = 21;

double peak_gflops(double mhz, int doubles_per_vector) {
  // Zen 4 (family 25, model 17): two FP multiply and two FP add pipes; without FMA, 2 mul + 2 add
  // vector operations a cycle.
  return mhz * 1e-3 * 4 * doubles_per_vector;
}

void print_one_core(const std::vector<OneCore>& cores, double mhz) {
  std::printf("\n### 1. Interactions per second on one core (Plummer, theta %.1f, quadrupoles, eps %.2f, leaves <= %d)\n\n",
              kTheta, kEps, kLeaf);
  std::printf("Whole evaluation: canonical order + reduce_up + walk_hnodes (IFP, one rank) + kernels + write-back, "
              "after a warm-up and a cost-zone rebalance; median of the timed evaluations. Kernel alone: "
              "InteractionLists::evaluate over the recorded lists of every k-th leaf (about 200 leaves), repeated "
              "for >= 1 s: multipole lists only (body–cell), near-body lists only (body–body), both with the own leaf.\n\n");
  std::printf("| N | build s | evaluation s | reduce_up s | walk s (kernels incl.) | kernels s | body–cell | body–body "
              "(other leaves + own) | interactions/body | whole: interactions/s | whole: GFLOP/s "
              "|\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& c : cores) {
    std::vector<double> tot;
    for (const auto& r : c.runs) tot.push_back(r.total);
    const auto& r = c.runs.front();
    const double t = median(tot);
    const double fc = kFlopsCell * static_cast<double>(r.cell),
                 fn = kFlopsNear * static_cast<double>(r.near + r.own);
    std::printf("| %zu | %.2f | %.3f | %.3f | %.3f | %.3f | %llu | %llu + %llu | %.0f | %.3g | %.3g |\n", c.n, c.build,
                t, r.reduce, r.walk, r.kernel, ull(r.cell), ull(r.near), ull(r.own),
                static_cast<double>(r.interactions()) / static_cast<double>(c.n),
                static_cast<double>(r.interactions()) / t, (fc + fn) * 1e-9 / t);
  }
  std::printf("\nKernel alone (sample of leaves; target >= 1e8 body–cell interactions/s/core):\n\n");
  std::printf("| N | leaves | readers/leaf | multipoles/leaf | near bodies/leaf | body–cell/s | body–body/s | both + own/s "
              "| body–cell GFLOP/s (%.0f flops) | body–body GFLOP/s (%.0f flops) | target 1e8 body–cell/s |\n"
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
              kFlopsCell, kFlopsNear);
  for (const auto& c : cores) {
    const auto& k = c.kernel;
    std::printf("| %zu | %llu | %.1f | %.0f | %.0f | %.3g | %.3g | %.3g | %.2f | %.2f | %s |\n", c.n, ull(k.leaves),
                k.readers, k.multipoles, k.near_bodies, k.cell, k.near, k.both, k.cell * kFlopsCell * 1e-9,
                k.near * kFlopsNear * 1e-9, k.cell >= 1e8 ? "met" : "missed");
  }
  const auto& first = cores.front();
  if (first.isa.baseline > 0) {
    const double peak2 = peak_gflops(mhz, 2);
    std::printf("\nFlops per interaction as written in physics.hpp (sqrt and division one flop each): body–cell "
                "(quadrupole) %.0f = 3 sub + 6 |r|^2 + sqrt + div + 4 powers + 15 Q.r + 5 r.Q.r + 5 radial + 12 "
                "acceleration + 5 potential; body–body %.0f = 3 + 6 + 2 + 3 + 6 + 1. Peak of one core at %.0f MHz "
                "(/proc/cpuinfo), 2 FP mul + 2 FP add pipes: baseline SSE2 (2 doubles) %.1f GFLOP/s; 4 doubles with FMA "
                "%.1f GFLOP/s (2 FMA pipes x 4 doubles x 2). The multipole loop copied line for line into this file, "
                "compiled three ways in one executable (function target attributes), same sample of leaves as N = "
                "%zu (the baseline copy gives the same bits as physics.hpp):\n\n",
                kFlopsCell, kFlopsNear, mhz, peak2, mhz * 1e-3 * 16, first.n);
    std::printf("| ISA | body–cell/s | GFLOP/s | share of the ISA's peak | max relative difference of a from baseline |\n"
                "|---|---:|---:|---:|---:|\n");
    const auto& i = first.isa;
    std::printf("| baseline x86-64 (SSE2, what the project builds) | %.3g | %.2f | %.0f%% of %.1f | 0 |\n", i.baseline,
                i.baseline * kFlopsCell * 1e-9, 100 * i.baseline * kFlopsCell * 1e-9 / peak2, peak2);
    std::printf("| -march=native's ISA (AVX2, FMA, AVX-512 extensions; 256-bit vectors, generic tuning) | %.3g | %.2f | %.0f%% of %.1f | %.1e |\n",
                i.native, i.native * kFlopsCell * 1e-9, 100 * i.native * kFlopsCell * 1e-9 / (mhz * 1e-3 * 16),
                mhz * 1e-3 * 16, i.native_err);
    std::printf("| AVX-512, 512-bit vectors, FMA | %.3g | %.2f | %.0f%% of %.1f | %.1e |\n", i.avx512,
                i.avx512 * kFlopsCell * 1e-9, 100 * i.avx512 * kFlopsCell * 1e-9 / (mhz * 1e-3 * 16), mhz * 1e-3 * 16,
                i.avx512_err);
    std::printf("\nThe divider's bound: a baseline loop of 1/sqrt(x) alone takes %.2f ns per value (%.3g values/s), "
                "so one reciprocal square root per interaction caps the baseline kernels at that rate.\n",
                i.rsqrt_ns, 1e9 / i.rsqrt_ns);
  }
}

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  mpi::communicator world;
  Config cfg;
  auto list = [](const char* s) {
    std::vector<std::size_t> r;
    std::stringstream in(s);
    for (std::string t; std::getline(in, t, ',');) r.push_back(std::stoull(t));
    return r;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    const bool has_value = i + 1 < argc;
    if (k == "--quick") {
      cfg.quick = true;
      cfg.kernel_n = {2000};
      cfg.direct_n = 2000;
      cfg.direct_sample = 200;
      cfg.scalar_sample = 50;
      cfg.efficiency_n = 2000;
      cfg.sim_n = 2000;
      cfg.steps = 2;
      cfg.kernel_seconds = 0.02;
    } else if (k == "--sections" && has_value) {
      cfg.sections.clear();
      for (auto s : list(argv[++i])) cfg.sections.push_back(static_cast<int>(s));
    } else if (k == "--n" && has_value) {
      cfg.kernel_n = list(argv[++i]);
    } else if (k == "--efficiency-n" && has_value) {
      cfg.efficiency_n = list(argv[++i]).at(0);
    } else if (k == "--sim-n" && has_value) {
      cfg.sim_n = list(argv[++i]).at(0);
    } else if (k == "--steps" && has_value) {
      cfg.steps = std::atoi(argv[++i]);
    } else if (k == "--leaf" && has_value) {
      kLeaf = std::max(1, std::atoi(argv[++i]));
    } else if (k == "--reps" && has_value) {
      cfg.reps = std::max(1, std::atoi(argv[++i]));
    } else {
      if (world.rank() == 0)
        std::fprintf(stderr, "usage: bench_nbody [--quick] [--sections 1,2,3,4,5] [--n N,..] [--efficiency-n N] "
                             "[--sim-n N] [--steps S] [--reps R] [--leaf K]\n");
      return 2;
    }
  }
  const bool root = world.rank() == 0;
  const double mhz = std::atof(cpu_mhz().c_str());
  if (root) {
    std::printf("## N-body benchmark (%s), %d rank%s\n\n", cfg.quick ? "--quick sizes" : "full sizes", world.size(),
                world.size() == 1 ? "" : "s");
    std::printf("CPU MHz (/proc/cpuinfo): %s; load average at the start: %s. Kernels from examples/nbody/physics.hpp, "
                "compiled for baseline x86-64 with -fno-math-errno (as the example).\n",
                cpu_mhz().c_str(), read_first_line("/proc/loadavg").c_str());
    std::fflush(stdout);
  }
  std::vector<OneCore> cores;
  // 1. One core.
  if (cfg.has(1)) {
    for (std::size_t idx = 0; idx < cfg.kernel_n.size(); ++idx) {
      const std::size_t n = cfg.kernel_n[idx];
      const auto all = nbody::initial_bodies<D>("plummer", n, 2027);
      on_ranks(world, 1, [&](const mpi::communicator& c) { cores.push_back(one_core(c, all, cfg, idx == 0)); });
    }
    if (root) print_one_core(cores, mhz);
    if (root) std::fflush(stdout);
  }
  // 2. Direct sum.
  if (cfg.has(2)) {
    const auto all = nbody::initial_bodies<D>("plummer", cfg.direct_n, 2027);
    DirectSum ds;
    double tree = 0;
    std::uint64_t tree_inter = 0;
    on_ranks(world, 1, [&](const mpi::communicator& c) {
      ds = direct_sum(all, cfg);
      const OneCore* have = nullptr;
      for (const auto& oc : cores)
        if (oc.n == cfg.direct_n) have = &oc;
      OneCore fresh;
      if (!have) {
        Config one = cfg;
        one.reps = 1;
        fresh = one_core(c, all, one, false);
        have = &fresh;
      }
      std::vector<double> tot;
      for (const auto& r : have->runs) tot.push_back(r.total);
      tree = median(tot);
      tree_inter = have->runs.front().interactions();
    });
    if (root) {
      const double n = static_cast<double>(ds.n);
      const double full_soa = ds.soa_s * n / static_cast<double>(ds.sample);
      const double full_scalar = ds.scalar_s * n / static_cast<double>(ds.scalar_sample);
      std::printf("\n### 2. Speed-up against the direct sum, N = %zu Plummer, theta %.1f, one core\n\n", ds.n, kTheta);
      std::printf("The direct sum is timed for a sample of targets against all N sources and scaled to N targets "
                  "(N^2 = %.3g interactions, the target's own term included in the vector loop).\n\n", n * n);
      std::printf("| method | sample of targets | sample s | N targets s (scaled) | interactions/s | tree speed-up |\n"
                  "|---|---:|---:|---:|---:|---:|\n");
      std::printf("| tree: whole evaluation (%.3g interactions) | all | %.3f | %.3f | %.3g | 1 |\n",
                  static_cast<double>(tree_inter), tree, tree, static_cast<double>(tree_inter) / tree);
      std::printf("| direct, near kernel (SoA, the sample as one reader list) | %zu | %.3f | %.2f | %.3g | %.1fx |\n",
                  ds.sample, ds.soa_s, full_soa, n * n / full_soa, full_soa / tree);
      std::printf("| direct, the example's scalar --direct loop | %zu | %.3f | %.2f | %.3g | %.1fx |\n",
                  ds.scalar_sample, ds.scalar_s, full_scalar, n * static_cast<double>(ds.scalar_sample) / ds.scalar_s,
                  full_scalar / tree);
      std::fflush(stdout);
    }
  }
  // 3. Two ranks against one.
  if (cfg.has(3) && world.size() >= 2) {
    const auto all = nbody::initial_bodies<D>("plummer", cfg.efficiency_n, 2027);
    std::vector<Eval> ev(2);
    bool have_one = false;  // section 1 measured the same evaluation on one rank: reuse it
    for (const auto& oc : cores)
      if (oc.n == cfg.efficiency_n && root) {
        std::vector<double> tot;
        for (const auto& r : oc.runs) tot.push_back(r.total);
        ev[0].wall = median(tot);
        ev[0].cpu_kernel_max = oc.runs.front().kernel_cpu;
        ev[0].cpu_max = oc.runs.front().total_cpu;
        ev[0].kernel_wall_max = oc.runs.front().kernel;
        ev[0].interactions = oc.runs.front().interactions();
        have_one = true;
      }
    mpi::broadcast(world, have_one, 0);
    for (int p = have_one ? 2 : 1; p <= 2; ++p)
      on_ranks(world, p, [&](const mpi::communicator& c) { ev[static_cast<std::size_t>(p - 1)] = evaluate_on(c, all, cfg.reps); });
    if (root) {
      std::printf("\n### 3. Two ranks against one, N = %zu Plummer, theta %.1f (load average now: %s)\n\n",
                  cfg.efficiency_n, kTheta, read_first_line("/proc/loadavg").c_str());
      std::printf("One evaluation (median of %d) after a warm-up, a rebalance by the measured costs and a second "
                  "warm-up; slowest rank's wall seconds; IFP.\n\n", cfg.reps);
      std::printf("Wall seconds include the time a rank was not scheduled (other work on the 2 cores); thread CPU "
                  "seconds (the slowest rank's; MPI's polling included) do not: the CPU efficiency is what the "
                  "same run would give on 2 idle cores if nothing waits.\n\n");
      std::printf("| ranks | evaluation s | kernels s | evaluation CPU s | kernels CPU s | interactions | messages | KiB | "
                  "imbalance (cost) | efficiency T1/(p Tp), wall | CPU | target |\n"
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
      for (int p = 1; p <= 2; ++p) {
        const auto& e = ev[static_cast<std::size_t>(p - 1)];
        const double eff = ev[0].wall / (p * e.wall), eff_cpu = ev[0].cpu_max / (p * e.cpu_max);
        std::printf("| %d | %.3f | %.3f | %.3f | %.3f | %llu | %llu | %.1f | %.4f | %.3f | %.3f | %s |\n", p, e.wall,
                    e.kernel_wall_max, e.cpu_max, e.cpu_kernel_max, ull(e.interactions), ull(e.messages),
                    static_cast<double>(e.bytes) / 1024, e.imbalance, eff, eff_cpu,
                    p == 1 ? "" : eff >= 0.85 ? ">= 0.85 met" : ">= 0.85 missed");
      }
      std::fflush(stdout);
    }
  }
  // 4 and 5. The clumpy run.
  if (cfg.has(4) || cfg.has(5)) {
    const auto all = nbody::initial_bodies<D>("clumpy", cfg.sim_n, 2027);
    const auto cost = simulate<CostDomain>(world, all, cfg, cfg.has(4));
    SimResult count;
    if (cfg.has(5)) count = simulate<CountDomain>(world, all, cfg, false);
    if (root && cfg.has(4)) {
      std::printf("\n### 4. Collecting remote hnodes: RA, FP, IFP, %d ranks (load average now: %s)\n\n", world.size(),
                  read_first_line("/proc/loadavg").c_str());
      std::printf("Clumpy, N = %zu, %d steps of dt %g (leapfrog, rebalance by cost zones at 5%%: %d remaps), theta "
                  "%.1f; %d walks (the initial evaluation and one per step) on the same trees, each walk on its own "
                  "reduce_up, summed over ranks and walks. IFP evaluated the forces; RA and FP walked with an empty "
                  "accept.\n\n",
                  cfg.sim_n, cfg.steps, cfg.dt, cost.remaps, kTheta, cost.walks);
      std::printf("| strategy | messages | MiB | hnodes sent | bodies sent | unopened | faults | rounds | messages / RA | "
                  "bytes / RA |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
      const char* names[3] = {"informed fault prevention (IFP)", "request/answer (RA)", "fault prevention (FP)"};
      for (int k : {1, 2, 0}) {
        const auto& s = cost.strategy[static_cast<std::size_t>(k)];
        const auto& ra = cost.strategy[1];
        std::printf("| %s | %llu | %.2f | %llu | %llu | %llu | %llu | %llu | %.3f | %.3f |\n", names[k],
                    ull(s.messages), static_cast<double>(s.bytes) / (1 << 20), ull(s.hnodes_sent),
                    ull(s.elements_sent), ull(s.unopened), ull(s.faults), ull(s.rounds),
                    static_cast<double>(s.messages) / static_cast<double>(std::max<std::uint64_t>(1, ra.messages)),
                    static_cast<double>(s.bytes) / static_cast<double>(std::max<std::uint64_t>(1, ra.bytes)));
      }
      const bool met = cost.strategy[0].messages < cost.strategy[1].messages &&
                       cost.strategy[2].messages < cost.strategy[1].messages;
      std::printf("\nTarget (FP and IFP below RA in messages): %s.\n", met ? "met" : "missed");
    }
    if (root && cfg.has(5)) {
      std::printf("\n### 5. Imbalance with and without cost zones, the same clumpy run, %d ranks\n\n", world.size());
      std::printf("max/mean over ranks of each step's force evaluation, then mean and max over the %d steps (the "
                  "initial evaluation excluded); rebalance at 5%% of the metric. Kernel CPU: thread CPU seconds inside "
                  "InteractionLists::evaluate (no waiting).%s\n\n",
                  cfg.steps, world.size() > 2 ? " Ranks share 2 cores: the CPU ratios are indicative." : "");
      std::printf("| metric | remaps | interactions max/mean: mean | max | kernel CPU max/mean: mean | max | force wall "
                  "s (slowest rank, summed) | interactions |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
      for (const SimResult* r : {&cost, static_cast<const SimResult*>(&count)})
        std::printf("| %s | %d | %.4f | %.4f | %.4f | %.4f | %.2f | %llu |\n",
                    r == &cost ? "cost zones (1 + interactions per body)" : "element count", r->remaps,
                    r->inter_mean_ratio, r->inter_max_ratio, r->cpu_mean_ratio, r->cpu_max_ratio, r->force_wall,
                    ull(r->interactions));
      if (cost.final_digest != count.final_digest) {
        std::fprintf(stderr, "bench_nbody: FAILED: the two metrics' runs ended with different bodies\n");
        g_failed = true;
      }
    }
  }
  if (root) std::printf("\nload average at the end: %s\n", read_first_line("/proc/loadavg").c_str());
  int failed = g_failed ? 1 : 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, world);
  return any;
}
