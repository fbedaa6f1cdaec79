// Rebalancing for nonuniform machines: a Gaussian hotspot drifts across the domain in
// 20 steps; after each step rebalance() remaps by neighbour shift or directly, at thresholds T =
// 0, 0.05, 0.2. Per rebalance: decision, cut and migration time (slowest rank), the imbalance
// against the optimal bottleneck of the same chain (sequential NicolPlus), elements and bytes
// moved against the least any range-preserving remap to the same cuts needs. Then the
// decision's cost alone, MinimizeCostRedistribution's time for p = 3..1000 beside the paper's
// Table 1, its quality against the exact optimum and overlap matching, and the remapping cost
// with and without MCR beside the paper's Table 2.
// Usage: mpiexec -n P bench_rebalance [--quick | --arrangements] (--arrangements: only the
// arrangement tables, on rank 0: MCR's quality, the paper's example, optimal_arrangement's time).
#include <irregular/irregular.hpp>
#include <irregular/distributed/remap/remap_plan.hpp>
#include <irregular/partition/minimize_cost_redistribution.hpp>
#include <irregular/partition/nicol_plus.hpp>
#include <irregular/partition/optimal_arrangement.hpp>
#include <irregular/partition/overlap_matching.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

namespace irr = irregular;
namespace mpi = boost::mpi;

struct Particle {
  std::array<double, 2> position;
  std::uint64_t id;
};
using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, irr::curve::Hilbert<2>, irr::load::ElementCount>;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A stateless hash per (id, salt) -> [0, 1).
double unit(std::uint64_t id, std::uint64_t salt) {
  std::uint64_t h = (id + 1) * 0x9E3779B97F4A7C15ull ^ salt * 0xD6E8FEB86659FD93ull;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  return static_cast<double>(h >> 11) / 9007199254740992.0;
}

// Half the elements uniform, half a Gaussian cluster (sigma 0.06) whose centre drifts from
// (0.15, 0.2) to (0.85, 0.8) over `steps` steps.
std::array<double, 2> where(std::uint64_t id, int step, int steps) {
  if (id % 2 == 0) return {unit(id, 1), unit(id, 2)};
  const double f = steps > 1 ? static_cast<double>(step) / (steps - 1) : 0;
  const double r = std::sqrt(-2 * std::log(std::max(unit(id, 3), 1e-300))) * 0.06, a = 2 * M_PI * unit(id, 4);
  return {std::clamp(0.15 + 0.7 * f + r * std::cos(a), 0.0, 0.999999),
          std::clamp(0.2 + 0.6 * f + r * std::sin(a), 0.0, 0.999999)};
}

double max_over(const mpi::communicator& w, double v) {
  double m = 0;
  mpi::all_reduce(w, v, m, mpi::maximum<double>());
  return m;
}

// The optimal bottleneck imbalance of the domain's leaf chain (gathered on rank 0).
double optimal_imbalance(const Domain& d) {
  std::vector<std::uint64_t> mine(d.local_tree().counts().begin(), d.local_tree().counts().end());
  std::vector<std::vector<std::uint64_t>> all;
  mpi::gather(d.comm(), mine, all, 0);
  double out = 0;
  if (d.comm().rank() == 0) {
    std::vector<std::uint64_t> chain;
    for (const auto& v : all) chain.insert(chain.end(), v.begin(), v.end());
    const auto opt = irr::partition::nicol_plus<std::uint64_t>(chain, static_cast<std::size_t>(d.comm().size()));
    out = opt.imbalance;
  }
  mpi::broadcast(d.comm(), out, 0);
  return out;
}

struct Scenario {
  std::string strategy;
  double threshold = 0;
  int remaps = 0, rounds = 0;
  double decision = 0, cut = 0, migration = 0;  // sums over the steps (slowest rank each)
  double worst_excess = 0;                       // max over steps of imbalance - optimal imbalance
  double last_imbalance = 0, last_optimal = 0;
  std::uint64_t elements = 0, bytes = 0, least = 0;
};

Scenario hotspot(const mpi::communicator& w, std::size_t n, int steps, irr::RemapStrategy strategy, double T) {
  Scenario sc{std::string(strategy == irr::RemapStrategy::direct ? "direct" : "neighbour shift") +
                  (steps == 2 ? " (jump)" : ""),
              T};
  Domain d(w, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(32));
  std::vector<Particle> mine;
  for (std::size_t i = static_cast<std::size_t>(w.rank()); i < n; i += static_cast<std::size_t>(w.size()))
    mine.push_back({where(i, 0, steps), i});
  d.insert(mine);
  d.build();
  for (int s = 1; s < steps; ++s) {
    d.move_elements([s, steps](Particle& p) { p.position = where(p.id, s, steps); });
    const auto rec = d.rebalance({.threshold = T, .strategy = strategy});
    sc.decision += max_over(w, rec.decision_seconds);
    sc.cut += max_over(w, rec.cut_seconds);
    sc.migration += max_over(w, rec.migration_seconds);
    if (rec.remapped) {
      ++sc.remaps;
      sc.rounds += rec.rounds;
      sc.elements += rec.elements_moved;
      sc.bytes += rec.bytes_moved;
      sc.least += rec.elements_to_move;
    }
    const double imb = d.load_report().imbalance, opt = optimal_imbalance(d);
    sc.worst_excess = std::max(sc.worst_excess, imb - std::max(opt, T));
    sc.last_imbalance = imb;
    sc.last_optimal = opt;
  }
  return sc;
}

// The decision alone: rebalance() with a threshold no unbalance reaches (median of repeats).
double decision_cost(const mpi::communicator& w, std::size_t n, int reps) {
  Domain d(w, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(32));
  std::vector<Particle> mine;
  for (std::size_t i = static_cast<std::size_t>(w.rank()); i < n; i += static_cast<std::size_t>(w.size()))
    mine.push_back({where(i, 0, 2), i});
  d.insert(mine);
  d.build();
  std::vector<double> t;
  for (int r = 0; r < reps + 10; ++r) {
    w.barrier();
    const auto t0 = std::chrono::steady_clock::now();
    (void)d.rebalance({.threshold = 1e9});
    const double s = max_over(w, seconds_since(t0));
    if (r >= 10) t.push_back(s);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

irr::partition::Redistribution random_instance(std::mt19937_64& rng, std::size_t p, std::uint64_t total) {
  std::uniform_real_distribution<double> u(0.05, 1.0);
  std::vector<double> a(p), b(p);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  std::vector<int> id(p);
  std::iota(id.begin(), id.end(), 0);
  return irr::partition::Redistribution(id, irr::partition::proportional_sizes(total, a),
                                        irr::partition::proportional_sizes(total, b));
}

template <class F>
double median_time(F&& f, int reps) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(seconds_since(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The quality family of the arrangement tables: p processors, 10^6 elements, old and new sizes
// proportional to capacities U(0.05, 1) drawn independently, the old arrangement a random
// permutation (a chain already rearranged once), std::mt19937_64 seeded 29.
irr::partition::Redistribution quality_instance(std::mt19937_64& rng, std::size_t p) {
  std::uniform_real_distribution<double> u(0.05, 1.0);
  std::vector<double> a(p), b(p);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  std::vector<int> order(p);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  return irr::partition::Redistribution(order, irr::partition::proportional_sizes(1000000, a),
                                        irr::partition::proportional_sizes(1000000, b));
}

// MCR's overlap against the optimum's: min / median / mean of the ratio per p and over p = 2..7
// and 2..16; the paper's example; optimal_arrangement's time per p, which sets
// best_arrangement's cutoff (partition/optimal_arrangement.hpp).
void arrangement_tables(bool quick) {
  namespace ip = irr::partition;
  const int count = quick ? 20 : 200;
  std::printf("\n### Arrangements: MCR overlap / optimal overlap (%d instances per p; sizes of 10^6 elements proportional\n"
              "to capacities U(0.05, 1) before and after, old arrangement a random permutation; mt19937_64 seed 29)\n\n",
              count);
  std::printf("| p | min | median | mean | MCR = optimum | kept (mean) | overlap matching (mean) |\n|---|---|---|---|---|---|---|\n");
  std::mt19937_64 rng(29);
  std::vector<double> small, all;
  auto stats = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const double median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    return std::array<double, 3>{v.front(), median, std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size())};
  };
  for (std::size_t p = 2; p <= 16; ++p) {
    std::vector<double> r;
    double keep = 0, zm = 0;
    int exact = 0;
    for (int i = 0; i < count; ++i) {
      const auto inst = quality_instance(rng, p);
      const double best = static_cast<double>(inst.overlap(ip::optimal_arrangement(inst)));
      const double m = static_cast<double>(inst.overlap(ip::minimize_cost_redistribution(inst, inst.old_order())));
      r.push_back(m / best);
      exact += m == best;
      keep += static_cast<double>(inst.overlap(inst.old_order())) / best;
      zm += static_cast<double>(inst.overlap(ip::overlap_matching(inst))) / best;
    }
    (p <= 7 ? small : all).insert((p <= 7 ? small : all).end(), r.begin(), r.end());
    const auto s = stats(r);
    std::printf("| %zu | %.3f | %.3f | %.3f | %d%% | %.3f | %.3f |\n", p, s[0], s[1], s[2], 100 * exact / count, keep / count,
                zm / count);
  }
  all.insert(all.end(), small.begin(), small.end());
  const auto s7 = stats(small), s16 = stats(all);
  std::printf("| 2-7 | %.3f | %.3f | %.3f | | | |\n| 2-16 | %.3f | %.3f | %.3f | | | |\n", s7[0], s7[1], s7[2], s16[0],
              s16[1], s16[2]);
  // The paper's example (kaddoura-ranka §3.4): 100 elements, capacities 0.27 0.18 0.34 0.07 0.14
  // -> 0.10 0.13 0.29 0.24 0.24, the identity arrangement.
  const std::vector<double> before{0.27, 0.18, 0.34, 0.07, 0.14}, after{0.10, 0.13, 0.29, 0.24, 0.24};
  const std::vector<int> id{0, 1, 2, 3, 4};
  const ip::Redistribution ex(id, ip::proportional_sizes(100, before), ip::proportional_sizes(100, after));
  std::printf("\nThe paper's example (100 elements): kept %llu, MCR %llu, optimal_arrangement %llu, best_arrangement %llu\n",
              static_cast<unsigned long long>(ex.overlap(id)),
              static_cast<unsigned long long>(ex.overlap(ip::minimize_cost_redistribution(ex, id))),
              static_cast<unsigned long long>(ex.overlap(ip::optimal_arrangement(ex))),
              static_cast<unsigned long long>(ex.overlap(ip::best_arrangement(ex))));
  std::printf("\n### optimal_arrangement time per p (median; best_arrangement solves exactly for p <= %zu)\n\n",
              ip::best_arrangement_exact_max_processors);
  std::printf("| p | optimal_arrangement | MCR (incremental) |\n|---|---|---|\n");
  for (std::size_t p = 2; p <= (quick ? 14u : 20u); ++p) {
    const auto inst = quality_instance(rng, p);
    const int reps = p <= 12 ? 101 : (p <= 16 ? 11 : 3);
    const double td = median_time([&] { (void)ip::optimal_arrangement(inst); }, reps);
    const double tm = median_time([&] { (void)ip::minimize_cost_redistribution(inst, inst.old_order()); }, 101);
    std::printf("| %zu | %.4g ms | %.4g ms |\n", p, td * 1e3, tm * 1e3);
  }
}

void mcr_tables(bool quick) {
  std::printf("\n### MinimizeCostRedistribution: time (rank 0, median)\n\n");
  std::printf("| p | paper's Table 1 (1995, SUN4) | Figure 6 as printed, O(p^3) | incremental, O(p^2) | same arrangement | exact DP (p <= 16) | overlap matching |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  const std::vector<std::pair<std::size_t, const char*>> ps = {{3, "0.33 ms"}, {5, "0.49 ms"}, {10, "2.5 ms"}, {15, "7.4 ms"},
                                                               {16, "-"},      {20, "17 ms"},  {50, "-"},      {100, "-"},
                                                               {200, "-"},     {500, "-"},     {1000, "-"}};
  std::mt19937_64 rng(12);
  for (auto [p, paper] : ps) {
    if (quick && p > 100) break;
    const auto inst = random_instance(rng, p, 1000000);
    const auto& list = inst.old_order();
    const int reps = p <= 20 ? 51 : (p <= 200 ? 5 : 1);
    std::vector<int> a, b;
    const bool run_paper = p <= (quick ? 100u : 1000u);
    const double tp = run_paper ? median_time([&] { a = irr::partition::minimize_cost_redistribution_paper(inst, list); }, reps) : -1;
    const double tf = median_time([&] { b = irr::partition::minimize_cost_redistribution(inst, list); }, reps);
    const double td = p <= 16 ? median_time([&] { (void)irr::partition::optimal_arrangement(inst); }, p <= 10 ? 51 : 3) : -1;
    const double tm = median_time([&] { (void)irr::partition::overlap_matching(inst); }, reps);
    auto ms = [](double s) {
      char buf[32];
      if (s < 0) return std::string("-");
      std::snprintf(buf, sizeof buf, "%.4g ms", s * 1e3);
      return std::string(buf);
    };
    std::printf("| %zu | %s | %s | %s | %s | %s | %s |\n", p, paper, ms(tp).c_str(), ms(tf).c_str(),
                run_paper ? (a == b ? "yes" : "NO") : "-", ms(td).c_str(), ms(tm).c_str());
  }
  arrangement_tables(quick);
}

// Table 2: remapping cost when capacities change at random, with and without MCR.
void table2(const mpi::communicator& w, bool quick) {
  if (w.rank() == 0) {
    std::printf("\n### Remapping cost with and without MCR (%d ranks; capacities U(0.1, 1) redrawn each sample)\n\n", w.size());
    std::printf("| elements | samples | without MCR: time | with MCR: time | without: elements moved | with: elements moved |\n");
    std::printf("|---|---|---|---|---|---|\n");
  }
  for (std::size_t n : {std::size_t{16384}, std::size_t{131072}, std::size_t{1048576}}) {
    if (quick && n > 16384) break;
    const int samples = quick ? 3 : 10;
    double t[2] = {0, 0};
    std::uint64_t moved[2] = {0, 0};
    for (int with = 0; with < 2; ++with) {
      Domain d(w, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(8));
      std::vector<Particle> mine;
      for (std::size_t i = static_cast<std::size_t>(w.rank()); i < n; i += static_cast<std::size_t>(w.size()))
        mine.push_back({{unit(i, 7), unit(i, 8)}, i});
      d.insert(mine);
      d.build();
      std::mt19937_64 rng(99);
      std::uniform_real_distribution<double> u(0.1, 1.0);
      for (int s = 0; s < samples; ++s) {
        std::vector<double> caps(static_cast<std::size_t>(w.size()));
        for (auto& c : caps) c = u(rng);
        // The capacities are those of the ranks as the domain numbers them now.
        const auto rec = d.rebalance({.threshold = 0.0, .capacities = caps,
                                      .arrangement = with ? irr::ChainArrangement::minimize_cost : irr::ChainArrangement::keep});
        t[with] += max_over(d.comm(), rec.decision_seconds + rec.cut_seconds + rec.migration_seconds);
        moved[with] += rec.elements_moved;
      }
      t[with] /= samples;
      moved[with] /= static_cast<std::uint64_t>(samples);
    }
    if (w.rank() == 0)
      std::printf("| %zu | %d | %.4f s | %.4f s | %llu | %llu |\n", n, samples, t[0], t[1],
                  static_cast<unsigned long long>(moved[0]), static_cast<unsigned long long>(moved[1]));
  }
  if (w.rank() == 0)
    std::printf("\nPaper's Table 2 (1995, Ethernet, 3 / 4 / 5 workstations, with / without MCR): 1,048,576 floats: "
                "1.84 / 1.96, 1.47 / 1.94, 1.43 / 2.07 s; 131,072: 0.245 / 0.259, 0.182 / 0.244, 0.184 / 0.258 s; "
                "16,384: 0.026 / 0.031, 0.023 / 0.031, 0.023 / 0.032 s.\n");
}

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  mpi::communicator w;
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (argc > 1 && std::strcmp(argv[1], "--arrangements") == 0) {  // the arrangement tables alone
    if (w.rank() == 0) arrangement_tables(false);
    return 0;
  }
  const std::size_t n = quick ? 20000 : 1000000;
  const int steps = quick ? 4 : 20;
  std::vector<Scenario> rows;
  for (double T : {0.0, 0.05, 0.2})
    for (auto s : {irr::RemapStrategy::direct, irr::RemapStrategy::neighbour_shift}) rows.push_back(hotspot(w, n, steps, s, T));
  // The hotspot jumps across the domain in one step: data must travel past several ranks.
  for (auto s : {irr::RemapStrategy::direct, irr::RemapStrategy::neighbour_shift}) rows.push_back(hotspot(w, n, 2, s, 0.0));
  const double decision = decision_cost(w, n, quick ? 20 : 200);
  if (w.rank() == 0) {
    std::printf("### Moving hotspot: %zu elements, %d ranks, %d steps (sums over the %d rebalances; times of the slowest rank;\n"
                "(jump): the hotspot crosses the domain in one step, one rebalance)\n\n",
                n, w.size(), steps, steps - 1);
    std::printf("| strategy | T | remaps | rounds | decision | cuts | migration | elements moved | least for the cuts | moved / least | bytes moved | worst imbalance - max(optimal, T) | last imbalance (optimal) |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const auto& r : rows)
      std::printf("| %s | %.2f | %d | %d | %.2f ms | %.2f ms | %.2f ms | %llu | %llu | %.3f | %llu | %+.4f | %.4f (%.4f) |\n",
                  r.strategy.c_str(), r.threshold, r.remaps, r.rounds, r.decision * 1e3, r.cut * 1e3, r.migration * 1e3,
                  static_cast<unsigned long long>(r.elements), static_cast<unsigned long long>(r.least),
                  r.least ? static_cast<double>(r.elements) / static_cast<double>(r.least) : 0.0,
                  static_cast<unsigned long long>(r.bytes), r.worst_excess, r.last_imbalance, r.last_optimal);
    std::printf("\nDecision alone (rebalance() that does not remap; median of %d, slowest rank): %.1f us\n", quick ? 20 : 200,
                decision * 1e6);
    mcr_tables(quick);
  }
  table2(w, quick);
  return 0;
}
