// The partitioner advisor's prediction quality (issue 31): three workloads run for real under every
// candidate of partitioner::Auto's default list and under Auto itself, with the step time the
// advisor predicts beside the step time measured.
//   particles  IrregularDomain<Particle, Moore<2>, Hilbert<2>, ElementCount>: Gaussian clusters
//              turning around the centre (as examples/particles); a step is move_elements, a
//              rebalance (threshold 0.1) every `every` steps, collect_ghosts, and a short-range pair
//              density over each leaf's particles and its neighbours' (local and ghost).
//   wator      a stand-in modeled on examples/wator: a toroidal CellDomain<Sea, Moore<2>> whose cells
//              hold the occupancy of drifting schools (load 1 + occupancy, load::Weighted); a step
//              is exchange_ghosts and a cell update whose work is (1 + occupancy) x 8 neighbour
//              reads (wator::random, examples/wator/wator_rules.hpp), a rebalance every `every`.
//   amm        a CellDomain<double, VonNeumann<2>> refined toward a circle (as examples/amm and
//              test_cell_domain's refine_circle), face-balanced; a step is 3 Jacobi sweeps (the
//              example's sweeps per level), each exchange_ghosts + update.
// Per candidate: its own domain under ByName(candidate), `warm` steps, compare_partitioners of it
// on the live leaves, apply_map of its map, then `measure` steps, interleaved with the other runs'
// (step s of every run in turn) so the machine's other load falls on all alike; the median (and
// the minimum) of the slowest rank's step time. The prediction: the row's compute + exchange (the
// remap just applied is not in the measured steps). The model: CostModel::calibrate's latency and
// bandwidth, seconds_per_load from the SFC run's warm-up (compute seconds / load, max over ranks,
// median over steps). Auto: the same warm-up under partitioner::Auto (that model, no
// recalibration), a rebalance at threshold 0 before its measured steps. The full run at 2 ranks
// also times a comparison of the five candidates on 2^20 leaves against an AMM-like step on them.
// Usage: mpiexec -n P bench_advisor [--quick]
#include <irregular/irregular.hpp>
#include <irregular/distributed/advisor/auto_partitioner.hpp>

#include "../examples/wator/wator_rules.hpp"
#include "detail/timing.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace irr = irregular;
namespace mpi = boost::mpi;
using bench::median;
using bench::now_s;
using C = irr::curve::Hilbert<2>;
using irr::partitioner::ByName;

struct Config {
  bool quick = false;
  int warm = 4, measure = 32, every = 4;
};

struct Phases {  // local seconds of the phases of one step
  double compute = 0, ghosts = 0;
};

double unit(std::uint64_t id, std::uint64_t salt) {
  return static_cast<double>(wator::mix(id * 0x9E3779B97F4A7C15ull ^ wator::mix(salt)) >> 11) / 9007199254740992.0;
}

// A domain's options: metric, partitioner, both axes periodic or none.
template <class Metric, class P>
irr::DomainOptions<2, Metric, P> options(P p, bool torus = false) {
  irr::DomainOptions<2, Metric, P> o;
  o.periodic = {torus, torus};
  o.partitioner = std::move(p);
  return o;
}

// What a run's rebalances did: Auto's choices, and in the measured steps the remaps and the
// seconds spent computing cuts (the partitioner; Auto's comparison).
struct Run {
  std::vector<std::string> choices;
  bool counting = false;
  int remaps = 0;
  double cut = 0;
  bool record(const irr::RebalanceDecision& dec) {
    if (dec.choice) choices.push_back(dec.choice->chosen);
    remaps += counting && dec.remapped;
    cut += counting ? dec.cut_seconds : 0.0;
    return dec.remapped;
  }
};

// Neighbour lists of a cell domain's leaves (local ids below n, ghost g as n + g), remade after
// every collection.
struct Lists {
  std::vector<std::uint32_t> ids;
  std::vector<std::size_t> first;
  template <class D>
  void make(const D& d) {
    irr::LeafNeighbours nb;
    const std::size_t n = d.local_leaf_count();
    ids.clear();
    first.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
      first[i] = ids.size();
      d.neighbours(i, nb);
      for (auto j : nb.local)
        if (j != i) ids.push_back(static_cast<std::uint32_t>(j));
      for (auto g : nb.ghost) ids.push_back(static_cast<std::uint32_t>(n + g));
    }
    first[n] = ids.size();
  }
};

// ---- particles ---------------------------------------------------------------------------------

struct Particle {
  std::array<double, 2> position;
  std::uint64_t id;
  double rho;
};

// A quarter uniform and still; the rest in three Gaussian clusters (sigma 0.05) turning around
// the centre at 0.04 rad per step.
std::array<double, 2> where(std::uint64_t id, int step) {
  if (id % 4 == 0) return {unit(id, 1), unit(id, 2)};
  const auto c = id % 3;
  const double a = 2.0944 * static_cast<double>(c) + 0.04 * step, r = 0.22 + 0.04 * static_cast<double>(c);
  const double g = std::sqrt(-2 * std::log(std::max(unit(id, 3), 1e-300))) * 0.05, t = 6.283185307179586 * unit(id, 4);
  return {std::clamp(0.5 + r * std::cos(a) + g * std::cos(t), 0.0, 0.999999),
          std::clamp(0.5 + r * std::sin(a) + g * std::sin(t), 0.0, 0.999999)};
}

template <class P>
struct ParticlesRun : Run {
  using S = irr::stencil::Moore<2>;
  using Domain = irr::IrregularDomain<Particle, S, C, irr::load::ElementCount, P>;
  static constexpr const char* name = "particles";
  static constexpr int repeat = 1;  // measured steps: cfg.measure times this
  static irr::Periodicity<2> periodic() { return {false, false}; }
  static std::size_t count(const Config& c) { return c.quick ? 4000 : 120000; }
  static std::string size(const Config& c) { return std::to_string(count(c)) + " particles, leaves <= 16, "; }
  const Config& cfg;
  Domain d;
  std::vector<std::array<double, 2>> near;

  ParticlesRun(const mpi::communicator& comm, const Config& c, P p)
      : cfg(c), d(comm, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(16),
          options<irr::load::ElementCount>(std::move(p))) {
    const std::size_t n = count(c);
    std::vector<Particle> mine;
    for (std::size_t i = static_cast<std::size_t>(comm.rank()); i < n; i += static_cast<std::size_t>(comm.size()))
      mine.push_back({where(i, 0), i, 0.0});
    d.insert(mine);
    d.build();
  }
  void after_remap() {}
  void step(int s, Phases& ph) {
    d.move_elements([s](Particle& p) { p.position = where(p.id, s); });
    if (s % cfg.every == cfg.every - 1) record(d.rebalance({.threshold = 0.1}));
    double t0 = now_s();
    d.collect_ghosts();
    const double t1 = now_s();
    ph.ghosts += t1 - t0;
    irr::LeafNeighbours nb;
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
      auto leaf = d.leaf(i);
      const double h = std::ldexp(1.0, -leaf.cell.level), h2 = h * h;
      d.neighbours(i, nb);
      near.clear();
      for (const auto& q : leaf.elements) near.push_back(q.position);
      for (auto j : nb.local)
        if (j != i)
          for (const auto& q : d.leaf(j).elements) near.push_back(q.position);
      for (auto g : nb.ghost)
        for (const auto& q : d.ghost(g).elements) near.push_back(q.position);
      for (auto& p : leaf.elements) {
        double rho = 0;
        for (const auto& x : near) {
          const double dx = p.position[0] - x[0], dy = p.position[1] - x[1], r2 = dx * dx + dy * dy;
          if (r2 < h2) {
            const double w = 1 - std::sqrt(r2) / h;
            rho += w * w;
          }
        }
        p.rho = rho;
      }
    }
    ph.compute += now_s() - t1;
  }
};

// ---- WaTor-like ----------------------------------------------------------------------------------

struct Sea {
  float occupancy = 0;
  float value = 0;
};
constexpr int sea_schools = 5;
double sea_clock = 0;  // the ocean's time, read by the load metric

// Animals per cell: five schools drifting on the torus (peak 24 per cell, none elsewhere).
int occupancy(const irr::Cell<2>& c, double t) {
  const double n = std::ldexp(1.0, c.level);
  const double x = (static_cast<double>(c.anchor[0]) + 0.5) / n, y = (static_cast<double>(c.anchor[1]) + 0.5) / n;
  double o = 0;
  for (int k = 0; k < sea_schools; ++k) {
    const double cx = unit(static_cast<std::uint64_t>(k), 11) + 0.011 * t * (k % 2 ? 1 : -1);
    const double cy = unit(static_cast<std::uint64_t>(k), 12) + 0.007 * t;
    const double rad = 0.08 + 0.08 * unit(static_cast<std::uint64_t>(k), 13);
    double dx = std::abs(x - cx + 8.0 - std::floor(x - cx + 8.0)), dy = std::abs(y - cy + 8.0 - std::floor(y - cy + 8.0));
    dx = std::min(dx, 1 - dx), dy = std::min(dy, 1 - dy);
    o += std::max(0.0, 1 - (dx * dx + dy * dy) / (rad * rad));
  }
  return static_cast<int>(24 * std::min(o, 1.0));
}
struct SeaWeight {
  double operator()(const irr::Cell<2>& c, std::size_t) const { return 1.0 + occupancy(c, sea_clock); }
};

template <class P>
struct WatorRun : Run {
  using S = irr::stencil::Moore<2>;
  using Metric = irr::load::Weighted<SeaWeight>;
  using Domain = irr::CellDomain<Sea, S, C, Metric, P>;
  static constexpr const char* name = "wator";
  static constexpr int repeat = 2;
  static irr::Periodicity<2> periodic() { return {true, true}; }
  static int level(const Config& c) { return c.quick ? 5 : 8; }
  static std::string size(const Config& c) { return "toroidal, uniform level " + std::to_string(level(c)) + ", "; }
  const Config& cfg;
  Domain d;
  Lists lists;
  std::vector<float> next;

  WatorRun(const mpi::communicator& comm, const Config& c, P p)
      : cfg(c), d((sea_clock = 0, comm), irr::Box<2>{{0, 0}, {1, 1}}, level(c),  // the clock at 0 for the metric
                  [](const irr::Cell<2>& cell) {
                    return Sea{static_cast<float>(occupancy(cell, 0)), static_cast<float>(unit(C::index(cell), 5))};
                  },
                  options<Metric>(std::move(p), true)) {
    after_remap();
  }
  void after_remap() {
    d.collect_ghosts();
    lists.make(d);
  }
  void step(int s, Phases& ph) {
    sea_clock = s;
    d.reset_measurements();  // the loads of the schools' new places
    if (s % cfg.every == cfg.every - 1) {
      if (record(d.rebalance({.threshold = 0.1}))) {
        const double t = now_s();
        after_remap();
        ph.ghosts += now_s() - t;
      }
    }
    double t0 = now_s();
    d.exchange_ghosts();
    const double t1 = now_s();
    ph.ghosts += t1 - t0;
    const std::size_t n = d.local_leaf_count();
    next.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto cell = d.cell(i);
      const int occ = occupancy(cell, s);
      std::uint64_t acc = 0;
      for (int a = 0; a <= occ; ++a)
        for (std::size_t k = lists.first[i]; k < lists.first[i + 1]; ++k) {
          const std::uint32_t j = lists.ids[k];
          const float v = j < n ? d.data(j).value : d.ghost_data(j - n).value;
          std::uint32_t bits;
          std::memcpy(&bits, &v, sizeof bits);
          acc += wator::random(static_cast<std::uint64_t>(s), bits, static_cast<std::uint64_t>(a), wator::Stream::fish_move);
        }
      d.data(i).occupancy = static_cast<float>(occ);
      next[i] = static_cast<float>(acc >> 40) * 0x1p-24f;
    }
    for (std::size_t i = 0; i < n; ++i) d.data(i).value = next[i];
    ph.compute += now_s() - t1;
  }
};

// ---- AMM-like --------------------------------------------------------------------------------

bool near_circle(const irr::Cell<2>& c) {
  const double h = std::ldexp(1.0, -c.level);
  const double x = (static_cast<double>(c.anchor[0]) + 0.5) * h, y = (static_cast<double>(c.anchor[1]) + 0.5) * h;
  return std::abs(std::hypot(x - 0.4, y - 0.4) - 0.3) < h;
}

template <class P>
struct AmmRun : Run {
  using S = irr::stencil::VonNeumann<2>;
  using Domain = irr::CellDomain<double, S, C, irr::load::Constant, P>;
  static constexpr const char* name = "amm";
  static constexpr int repeat = 4;
  static constexpr int sweeps = 3;
  static irr::Periodicity<2> periodic() { return {false, false}; }
  static int deepest(const Config& c) { return c.quick ? 8 : 13; }
  static std::string size(const Config& c) {
    return "levels " + std::to_string(c.quick ? 4 : 6) + " to " + std::to_string(deepest(c)) + ", face-balanced, ";
  }
  const Config& cfg;
  Domain d;
  Lists lists;
  std::vector<double> next;

  // Uniform at level `top` when `uniform`, else level 6 refined toward the circle up to `top`.
  AmmRun(const mpi::communicator& comm, const Config& c, P p, int top = -1, bool uniform = false)
      : cfg(c), d(comm, irr::Box<2>{{0, 0}, {1, 1}}, uniform ? top : (c.quick ? 4 : 6),
                  [](const irr::Cell<2>& cell) { return std::sin(7.0 * static_cast<double>(C::index(cell) % 1000)); },
                  options<irr::load::Constant>(std::move(p))) {
    if (!uniform) {
      if (top < 0) top = deepest(c);
      const auto split = [](const double& u, const irr::Cell<2>&) { return u; };
      const auto merge = [](std::span<const double> k) { return k[0]; };
      for (int round = 0; round < top; ++round) {
        for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
          if (d.level(i) < top && near_circle(d.cell(i))) d.mark(i, irr::Mark::refine);
        d.adapt(split, merge);
      }
      d.balance(irr::BalanceKind::face, split);
      record(d.rebalance({.threshold = 0}));
    }
    after_remap();
  }
  void after_remap() {
    d.collect_ghosts();
    lists.make(d);
  }
  void step(int, Phases& ph) {
    const std::size_t n = d.local_leaf_count();
    next.resize(n);
    for (int k = 0; k < sweeps; ++k) {
      double t0 = now_s();
      d.exchange_ghosts();
      const double t1 = now_s();
      ph.ghosts += t1 - t0;
      for (std::size_t i = 0; i < n; ++i) {
        double sum = 0;
        for (std::size_t q = lists.first[i]; q < lists.first[i + 1]; ++q) {
          const std::uint32_t j = lists.ids[q];
          sum += j < n ? d.data(j) : d.ghost_data(j - n);
        }
        const auto m = static_cast<double>(lists.first[i + 1] - lists.first[i]);
        next[i] = m > 0 ? 0.2 * d.data(i) + 0.8 * sum / m + 1e-3 : d.data(i);
      }
      for (std::size_t i = 0; i < n; ++i) d.data(i) = next[i];
      ph.compute += now_s() - t1;
    }
  }
};

// ---- the driver ------------------------------------------------------------------------------

// One step, timed on every rank; the slowest rank's (by wall time) wall, CPU, compute and ghost
// seconds, and the largest compute seconds per unit of load over the ranks. Collective.
template <class W>
std::array<double, 5> timed_step(W& w, int s) {
  const auto& comm = w.d.comm();
  comm.barrier();
  Phases ph;
  const double t0 = now_s(), c0 = bench::cpu_now_s();
  w.step(s, ph);
  const double c1 = bench::cpu_now_s(), t1 = now_s();
  double load = 0;
  for (double l : w.d.local_loads()) load += l;
  const std::array<double, 5> mine{t1 - t0, c1 - c0, ph.compute, ph.ghosts, load > 0 ? ph.compute / load : 0.0};
  std::vector<std::array<double, 5>> all;
  mpi::all_gather(comm, mine, all);
  auto out = *std::max_element(all.begin(), all.end(), [](const auto& x, const auto& y) { return x[0] < y[0]; });
  for (const auto& x : all) out[4] = std::max(out[4], x[4]);
  return out;
}

struct Row {
  std::string name;
  double imbalance = 0, ghost_kib_max = 0, predicted = 0, predicted_remap = 0, compute = 0, exchange = 0;
  int remaps = 0;
  double cut = 0;
  int neighbours_max = 0;
  std::array<std::vector<double>, 4> samples{};  // wall, CPU, compute, ghosts of the measured steps
  [[nodiscard]] double med(int k) const { return median(samples[static_cast<std::size_t>(k)]); }
  [[nodiscard]] double min() const { return *std::min_element(samples[0].begin(), samples[0].end()); }
  [[nodiscard]] double mean() const {
    return std::accumulate(samples[0].begin(), samples[0].end(), 0.0) / static_cast<double>(samples[0].size());
  }
};

// How the predicted order fares against one measure: inversions (a predicted faster than b, yet
// measured slower) and the worst of them, meas[a] / meas[b] - 1; the predicted best against the best.
struct Verdict {
  bool same_order = true;
  double worst = 0, follow = 0;
  Verdict(const std::vector<double>& pred, const std::vector<double>& meas) {
    if (pred.empty()) return;
    for (std::size_t x = 0; x < pred.size(); ++x)
      for (std::size_t y = 0; y < pred.size(); ++y)
        if (pred[x] < pred[y] && meas[x] > meas[y]) {
          same_order = false;
          worst = std::max(worst, meas[x] / meas[y] - 1);
        }
    const auto pick = static_cast<std::size_t>(std::min_element(pred.begin(), pred.end()) - pred.begin());
    follow = meas[pick] / *std::min_element(meas.begin(), meas.end());
  }
  [[nodiscard]] std::string text() const {
    char b[64];
    std::snprintf(b, sizeof b, "%s, %.1f%%, %s", same_order ? "yes" : "no", 100 * worst, worst <= 0.10 ? "yes" : "no");
    return b;
  }
};

struct Outcome {
  std::string workload;
  bool tie = false;
  Verdict by_median{{}, {}}, by_min{{}, {}};
  double auto_ratio = 0, auto_ratio_min = 0, auto_ratio_mean = 0, seconds = 0, per_load = 0;
  std::string auto_choice;
};

// 1 + the number of values strictly smaller.
int rank_of(const std::vector<double>& v, std::size_t k) {
  return 1 + static_cast<int>(std::count_if(v.begin(), v.end(), [&](double x) { return x < v[k]; }));
}

// Every candidate and Auto on workload W: each its own domain, warmed up alike; the measured steps
// interleaved (step s of every run, in rotating order) so that the machine's other load falls on
// all of them alike.
template <template <class> class W>
Outcome workload(const mpi::communicator& world, const Config& cfg, irr::advisor::CostModel model) {
  using S = typename W<ByName>::S;
  using Auto = irr::partitioner::Auto<S>;
  const double start = now_s();
  const auto names = Auto::template default_candidates<C>(W<ByName>::periodic());
  irr::advisor::AdvisorOptions opt;
  opt.model = model;
  std::vector<std::unique_ptr<W<ByName>>> runs;
  std::vector<Row> rows(names.size() + 1);
  for (std::size_t k = 0; k < names.size(); ++k) {
    runs.push_back(std::make_unique<W<ByName>>(world, cfg, ByName{names[k]}));
    std::vector<double> per_load;
    for (int s = 0; s < cfg.warm; ++s) {
      const auto x = timed_step(*runs[k], s);
      if (s > 0 || cfg.warm == 1) per_load.push_back(x[4]);
    }
    if (k == 0) opt.model.seconds_per_load = median(per_load);  // the SFC run; the same on every rank
  }
  Auto policy;
  policy.candidates = names;
  policy.advice = opt;
  policy.calibrate = false;
  W<Auto> a(world, cfg, policy);
  for (int s = 0; s < cfg.warm; ++s) (void)timed_step(a, s);
  // Each candidate's map made afresh on the live leaves and applied; Auto picks among them.
  for (std::size_t k = 0; k < names.size(); ++k) {
    const auto cmp = runs[k]->d.compare_partitioners({names[k]}, opt);
    runs[k]->d.apply_map(cmp.maps[0]);
    runs[k]->after_remap();
    const auto& r = cmp.rows[0];
    rows[k] = {names[k], r.imbalance, static_cast<double>(r.ghost_bytes_max) / 1024.0, r.compute_seconds + r.exchange_seconds,
               r.predicted_seconds, r.compute_seconds, r.exchange_seconds, 0, 0, r.neighbours_max, {}};
    runs[k]->counting = true;
  }
  a.record(a.d.rebalance({.threshold = 0}));
  a.after_remap();
  a.counting = true;
  const std::size_t n = rows.size();
  const int measure = cfg.measure * W<ByName>::repeat;
  const auto leaves = a.d.global_leaf_count();
  for (int s = cfg.warm; s < cfg.warm + measure; ++s)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t k = (j + static_cast<std::size_t>(s)) % n;
      const auto x = k + 1 < n ? timed_step(*runs[k], s) : timed_step(a, s);
      for (std::size_t q = 0; q < 4; ++q) rows[k].samples[q].push_back(x[q]);
    }
  const auto* last = a.d.options().partitioner.last_choice();
  for (std::size_t k = 0; k < n; ++k) {
    const Run& r = k + 1 < n ? static_cast<const Run&>(*runs[k]) : a;
    rows[k].remaps = r.remaps;
    rows[k].cut = bench::max_over(world, r.cut);
  }

  Outcome out;
  out.workload = W<ByName>::name;
  std::vector<double> pred, meas, least;
  for (std::size_t k = 0; k + 1 < n; ++k) {
    pred.push_back(rows[k].predicted);
    meas.push_back(rows[k].med(0));
    least.push_back(rows[k].min());
  }
  for (std::size_t x = 0; x < pred.size(); ++x)
    for (std::size_t y = 0; y < x; ++y) out.tie = out.tie || pred[x] == pred[y];
  out.by_median = Verdict(pred, meas);
  out.by_min = Verdict(pred, least);
  out.auto_ratio = rows[n - 1].med(0) / *std::min_element(meas.begin(), meas.end());
  out.auto_ratio_min = rows[n - 1].min() / *std::min_element(least.begin(), least.end());
  double best_mean = rows[0].mean(), remap_part = 0;
  for (std::size_t k = 0; k + 1 < n; ++k) {
    best_mean = std::min(best_mean, rows[k].mean());
    remap_part = std::max(remap_part, rows[k].predicted_remap - rows[k].predicted);
  }
  out.auto_ratio_mean = rows[n - 1].mean() / best_mean;
  out.auto_choice = last ? last->chosen : "?";
  out.seconds = bench::max_over(world, now_s() - start);
  out.per_load = opt.model.load_seconds(false);
  if (world.rank() != 0) return out;
  std::printf("\n### %s, %d ranks: %s%llu leaves, %d measured steps (seconds_per_load %.3g s; %.0f s for the workload)\n\n",
              W<ByName>::name, world.size(), W<ByName>::size(cfg).c_str(), static_cast<unsigned long long>(leaves), measure,
              out.per_load, out.seconds);
  std::printf("| candidate | imbalance | neighbours max | ghost KiB max | predicted ms/step (compute + exchange) | measured ms/step, median (min) | mean | measured compute / ghosts | error | rank pred / meas | remaps, cut ms |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (std::size_t k = 0; k + 1 < n; ++k) {
    const auto& r = rows[k];
    std::printf("| %s | %.3f | %d | %.1f | %.2f (%.2f + %.2f) | %.2f (%.2f) | %.2f | %.2f / %.2f | %+.0f%% | %d / %d | %d, %.0f |\n",
                r.name.c_str(), r.imbalance, r.neighbours_max, r.ghost_kib_max, 1e3 * r.predicted, 1e3 * r.compute, 1e3 * r.exchange,
                1e3 * r.med(0), 1e3 * r.min(), 1e3 * r.mean(), 1e3 * r.med(2), 1e3 * r.med(3),
                100 * (r.predicted / r.med(0) - 1), rank_of(pred, k), rank_of(meas, k), r.remaps, 1e3 * r.cut);
  }
  std::string seq;
  for (const auto& c : a.choices) seq += (seq.empty() ? "" : ", ") + c;
  const auto& ar = rows[n - 1];
  std::printf("| **Auto** → %s | | | | | %.2f (%.2f) | %.2f | %.2f / %.2f | | | %d, %.0f |\n", out.auto_choice.c_str(), 1e3 * ar.med(0),
              1e3 * ar.min(), 1e3 * ar.mean(), 1e3 * ar.med(2), 1e3 * ar.med(3), ar.remaps, 1e3 * ar.cut);
  char inv[96] = "";
  if (!out.by_median.same_order)
    std::snprintf(inv, sizeof inv, ", worst inversion %.1f%% (within 10%%: %s)", 100 * out.by_median.worst,
                  out.by_median.worst <= 0.10 ? "yes" : "no");
  std::printf("\nMedians: order %s%s%s; the predicted best measures %.3f× the best; Auto (choices at rebalances: %s) measures %.3f× the best "
              "(target ≤ 1.10: %s; by the mean %.3f×). The remap amortized over 100 steps (the advisor's predicted_seconds) adds at most %.3f ms.\n",
              out.by_median.same_order ? "as measured" : "differs from the measured", inv, out.tie ? " (ties among the predictions)" : "",
              out.by_median.follow, seq.empty() ? "none" : seq.c_str(), out.auto_ratio, out.auto_ratio <= 1.10 ? "yes" : "no",
              out.auto_ratio_mean, 1e3 * remap_part);
  std::fflush(stdout);
  return out;
}

// One comparison of the five candidates on 2^20 leaves against one AMM-like step on them (and a
// comparison of SFC alone: what every comparison pays before its candidates).
void cost_row(const mpi::communicator& world, const Config& cfg, irr::advisor::CostModel model) {
  AmmRun<ByName> w(world, cfg, ByName{"SFC"}, 10, true);
  std::vector<double> step, five, one;
  for (int s = 0; s < 4; ++s) {
    const auto x = timed_step(w, s);
    if (s > 0) step.push_back(x[0]);
  }
  const auto leaves = w.d.global_leaf_count();
  irr::advisor::AdvisorOptions opt;
  opt.model = model;
  const auto names = irr::partitioner::Auto<AmmRun<ByName>::S>::default_candidates<C>();
  irr::advisor::PartitionerComparison<C> cmp;
  const auto timed = [&](const std::vector<std::string>& list, std::vector<double>& out) {
    world.barrier();
    const double t0 = now_s();
    cmp = w.d.compare_partitioners(list, opt);
    out.push_back(bench::max_over(world, now_s() - t0));
  };
  for (int r = 0; r < 3; ++r) timed({"SFC"}, one);
  std::vector<double> setup;
  for (int r = 0; r < 3; ++r) {
    world.barrier();
    const double t0 = now_s();
    w.lists.make(w.d);
    setup.push_back(bench::max_over(world, now_s() - t0));
  }
  for (int r = 0; r < 3; ++r) timed(names, five);
  if (world.rank() != 0) return;
  std::printf("\n### Cost of a comparison, %llu leaves (uniform level 10), %d ranks\n\n", static_cast<unsigned long long>(leaves),
              world.size());
  std::printf("| compare_partitioners, 5 candidates | SFC alone | one AMM-like step (3 sweeps) | 5 candidates / step | target < 1 | neighbour lists of all leaves |\n"
              "|---:|---:|---:|---:|---|---:|\n");
  std::printf("| %.1f ms | %.1f ms | %.1f ms | %.1f | %s | %.1f ms |\n\nMedians of 3, slowest rank. The comparison:\n\n", 1e3 * median(five),
              1e3 * median(one), 1e3 * median(step), median(five) / median(step), median(five) < median(step) ? "yes" : "no",
              1e3 * median(setup));
  std::printf("%s", cmp.markdown().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  mpi::communicator world;
  Config cfg;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--quick") == 0) cfg = {true, 2, 2, 2};
  const auto model = irr::advisor::CostModel::calibrate(world, {}, {});
  const unsigned cores = std::thread::hardware_concurrency();
  if (world.rank() == 0) {
    std::printf("## Partitioner advisor: predicted against measured step times, %d ranks on %u cores%s\n\n", world.size(), cores,
                world.size() > static_cast<int>(cores) ? " (oversubscribed)" : "");
    std::printf("Calibrated: latency %.2f us, %.3f ns/byte. %d warm-up steps, %d measured (wator x2, amm x4), rebalance every %d.\n",
                1e6 * model.latency, 1e9 * model.seconds_per_byte, cfg.warm, cfg.measure, cfg.every);
    std::printf("Predicted ms/step: compute + exchange of the slowest part. Measured: the slowest rank's step; its compute and ghost\n"
                "phases (ghosts: collect_ghosts for particles, exchange_ghosts and list rebuilds otherwise); the rest of a step is\n"
                "move_elements, rebalance and load updates. 'cut ms': seconds computing cuts in the measured steps' rebalances\n"
                "(Auto: its comparisons), slowest rank.\n");
    std::printf("wator is a stand-in modeled on examples/wator; amm is AMM-like: examples/amm needs hold_level, so of these\n"
                "candidates only SFC could serve it (segment maps); all are measured here.\n");
    std::fflush(stdout);
  }
  std::vector<Outcome> all;
  all.push_back(workload<ParticlesRun>(world, cfg, model));
  all.push_back(workload<WatorRun>(world, cfg, model));
  all.push_back(workload<AmmRun>(world, cfg, model));
  if (world.rank() == 0) {
    std::printf("\n### Summary, %d ranks\n\nOrder: predicted order = measured, worst inversion, inversions within 10%%; by the median step and by the fastest step.\n\n"
                "| workload | order (medians) | order (minima) | predicted best / best (median, min) | Auto's choice | Auto / best (median, min, mean) |\n|---|---|---|---:|---|---:|\n",
                world.size());
    for (const auto& o : all)
      std::printf("| %s%s | %s | %s | %.3f, %.3f | %s | %.3f, %.3f, %.3f |\n", o.workload.c_str(), o.tie ? " (ties)" : "", o.by_median.text().c_str(),
                  o.by_min.text().c_str(), o.by_median.follow, o.by_min.follow, o.auto_choice.c_str(), o.auto_ratio, o.auto_ratio_min,
                  o.auto_ratio_mean);
    std::fflush(stdout);
  }
  if (!cfg.quick && world.size() == 2) {
    auto m = model;
    m.seconds_per_load = all.back().per_load;  // the AMM-like workload's
    cost_row(world, cfg, m);
  }
  return 0;
}
