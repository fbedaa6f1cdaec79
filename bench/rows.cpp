// Bounded Neighbours: (1) cut computation time on a 2000 x 1000 grid for up to
// 10,000 processes; (2) imbalance of the paper's greedy cuts checking against our optimal legal
// partition for NS = 2, 3, 4; (3) on a domain at the run's rank count: messages per ghost
// exchange, neighbours per rank and imbalance for BN-2, BN-4, SFC blocking and JAG-M-HEUR-PROBE.
// Usage: mpiexec -n P bench_rows [--quick] [--serial-only | --domain-only]
#include <irregular/irregular.hpp>

#include "detail/timing.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

namespace irr = irregular;
namespace rows = irregular::rows;
namespace mpi = boost::mpi;
using bench::median;
using bench::now_s;

// A WaTor-like ocean: animals (load 1 per cell) dense in a few drifting schools, sparse elsewhere.
std::vector<double> ocean(const rows::Grid& g, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::array<double, 3>> schools;  // row, column, radius
  for (int s = 0; s < 6; ++s)
    schools.push_back({u(rng) * static_cast<double>(g.rows), u(rng) * static_cast<double>(g.columns),
                       (0.03 + 0.1 * u(rng)) * static_cast<double>(std::min(g.rows, g.columns))});
  std::vector<double> w(g.cells());
  for (std::size_t r = 0; r < g.rows; ++r)
    for (std::size_t c = 0; c < g.columns; ++c) {
      double p = 0.05;
      for (const auto& s : schools) {
        const double dr = static_cast<double>(r) - s[0], dc = static_cast<double>(c) - s[1];
        p += 0.8 * std::exp(-(dr * dr + dc * dc) / (2 * s[2] * s[2]));
      }
      w[r * g.columns + c] = u(rng) < std::min(p, 0.95) ? 1.0 : 0.0;
    }
  return w;
}

double imbalance(const std::vector<double>& w, const std::vector<std::size_t>& cuts) {
  std::vector<double> loads;
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    double s = 0;
    for (std::size_t x = cuts[k]; x < cuts[k + 1]; ++x) s += w[x];
    loads.push_back(s);
  }
  return irr::partition::load_imbalance<double>(loads);
}

template <class F>
double time_median(int reps, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < reps + 1; ++r) {  // one warm-up
    const double t0 = now_s();
    f();
    if (r > 0) t.push_back(now_s() - t0);
  }
  return median(t);
}

void cut_times(bool quick) {
  const rows::Grid g = quick ? rows::Grid{200, 100} : rows::Grid{2000, 1000};
  const auto w = ocean(g, 1);
  std::printf("\n### Cut computation time, %zu x %zu grid (ms, median of %d)\n\n", g.rows, g.columns, quick ? 1 : 5);
  std::printf("| np | balanced (NicolPlus) | paper cuts | greedy check NS=2 | optimal legal NS=2 | optimal legal NS=4 | optimal legal NS=16 | max np NS=2 / 4 / 16 |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---|\n");
  const int reps = quick ? 1 : 5;
  for (std::size_t np : {10u, 100u, 1000u, 10000u}) {
    if (quick && np > 100) break;
    auto cell = [&](int ns, bool optimal) -> std::string {
      const rows::NeighbourBound b{.ns = ns};
      if (np > b.max_parts(g)) return "infeasible";
      char buf[64];
      const double t = time_median(reps, [&] {
        if (optimal) (void)rows::optimal_legal_cuts<double>(g, b, w, np);
        else (void)rows::greedy_check(g, b, rows::paper_cuts<double>(w, np));
      });
      std::snprintf(buf, sizeof buf, "%.2f", 1e3 * t);
      return buf;
    };
    const double tb = time_median(reps, [&] { (void)rows::balanced_cuts<double>(w, np); });
    const double tp = time_median(reps, [&] { (void)rows::paper_cuts<double>(w, np); });
    std::printf("| %zu | %.2f | %.2f | %s | %s | %s | %s | %zu / %zu / %zu |\n", np, 1e3 * tb, 1e3 * tp, cell(2, false).c_str(),
                cell(2, true).c_str(), cell(4, true).c_str(), cell(16, true).c_str(), rows::NeighbourBound{.ns = 2}.max_parts(g),
                rows::NeighbourBound{.ns = 4}.max_parts(g), rows::NeighbourBound{.ns = 16}.max_parts(g));
  }
}

void greedy_vs_optimal(bool quick) {
  std::printf("\n### Imbalance (Lmax/Lavg - 1): paper's greedy checking vs our optimal legal partition (4-neighbour stencil)\n\n");
  std::printf("| grid | np | unconstrained optimum | NS | greedy (paper cuts + shifting) | optimal legal | greedy max neighbours | optimal max neighbours |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  const std::vector<rows::Grid> grids = quick ? std::vector<rows::Grid>{{60, 30}} : std::vector<rows::Grid>{{600, 300}, {2000, 1000}};
  for (const auto& g : grids) {
    const auto w = ocean(g, 2);
    for (std::size_t np : {8u, 64u, 256u, 512u, 1000u}) {
      if (np > g.rows) continue;
      const double base = imbalance(w, rows::balanced_cuts<double>(w, np));
      for (int ns : {2, 3, 4}) {
        const rows::NeighbourBound b{.ns = ns};
        const auto greedy = rows::greedy_check(g, b, rows::paper_cuts<double>(w, np));
        const auto opt = rows::optimal_legal_cuts<double>(g, b, w, np).separators;
        std::printf("| %zux%zu | %zu | %.4f | %d | %.4f | %.4f | %zu | %zu |\n", g.rows, g.columns, np, base, ns, imbalance(w, greedy),
                    imbalance(w, opt), rows::max_neighbours(g, greedy, b.adjacency()), rows::max_neighbours(g, opt, b.adjacency()));
      }
    }
  }
}

struct Fish {
  std::array<double, 2> position;
  std::uint64_t id;
};

template <class P>
void domain_row(const mpi::communicator& world, const char* name, P policy, bool quick) {
  using Domain = irr::IrregularDomain<Fish, irr::stencil::VonNeumann<2>, irr::curve::Hilbert<2>, irr::load::ElementCount, P>;
  irr::DomainOptions<2, irr::load::ElementCount, P> opt;
  opt.partitioner = policy;
  Domain d(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(16), opt);
  const std::size_t n = quick ? 4000 : 100000;
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> gs(0.0, 0.06);
  const double c[3][2] = {{0.25, 0.3}, {0.7, 0.75}, {0.6, 0.2}};
  std::vector<Fish> mine;
  for (std::size_t i = 0; i < n; ++i) {
    Fish f{{i % 2 ? std::clamp(c[i % 3][0] + gs(rng), 0.0, 1.0) : u(rng), i % 2 ? std::clamp(c[i % 3][1] + gs(rng), 0.0, 1.0) : u(rng)}, i};
    if (static_cast<int>(i % static_cast<std::size_t>(world.size())) == world.rank()) mine.push_back(f);
  }
  d.insert(mine);
  d.build();
  const int steps = quick ? 2 : 10;
  std::uint64_t messages = 0, bytes = 0;
  double unb = 0, part_s = 0;
  int remaps = 0;
  for (int s = 0; s < steps; ++s) {
    d.collect_ghosts();
    const auto ph = d.exchange_ghosts();
    std::uint64_t m[2] = {ph.messages, ph.bytes}, t[2];
    MPI_Allreduce(m, t, 2, MPI_UINT64_T, MPI_SUM, world);
    messages += t[0];
    bytes += t[1];
    // The schools drift to the right (wrapping): the load moves across the runs.
    d.move_elements([](Fish& f) { f.position[0] = std::fmod(f.position[0] + 0.03, 1.0); });
    const double t0 = now_s();
    remaps += d.rebalance({.threshold = 0.05});
    part_s += bench::max_over(world, now_s() - t0);
    unb = std::max(unb, d.load_report().max_unbalance);
  }
  std::size_t most = 0, sum = 0;
  for (int r = 0; r < world.size(); ++r) {
    const auto nb = d.ownership().neighbour_ranks(r, irr::Periodicity<2>{false, false});
    most = std::max(most, nb.size());
    sum += nb.size();
  }
  if (world.rank() == 0)
    std::printf("| %d | %s | %.1f | %.0f | %zu | %.2f | %.4f | %d | %.2f |\n", world.size(), name,
                static_cast<double>(messages) / steps, static_cast<double>(bytes) / steps, most,
                static_cast<double>(sum) / world.size(), unb, remaps, 1e3 * part_s / steps);
}

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  mpi::communicator world;
  bool quick = false, serial = true, domain = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") quick = true;
    else if (a == "--serial-only") domain = false;
    else if (a == "--domain-only") serial = false;
  }
  if (serial && world.rank() == 0) {
    cut_times(quick);
    greedy_vs_optimal(quick);
  }
  if (domain) {
    if (world.rank() == 0) {
      std::printf("\n### Domain, clustered particles drifting, %d ranks: per step (ghost value exchange, VonNeumann stencil)\n\n", world.size());
      std::printf("| ranks | partitioner | messages/step (all ranks) | bytes/step | max neighbours (8-adjacency of parts) | mean neighbours | max unbalance after rebalance | remaps | rebalance ms/step |\n");
      std::printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
    }
    using irr::partitioner::ByName;
    for (const char* name : {"BN-2", "BN-4", "SFC", "JAG-M-HEUR-PROBE"}) domain_row(world, name, ByName{name}, quick);
  }
  return 0;
}
