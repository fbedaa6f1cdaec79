// The optimal blocking cut's three paths side by side: separator windows gathered on
// rank 0, distributed windows probed by pointer doubling, and the pipelined probes (p-1 hops per
// probe). Per path: median time of the slowest rank over repeated calls, probes, collective
// calls, point-to-point rounds, and the largest window a rank holds; every path is checked to
// reach the same bottleneck.
// Usage: mpiexec -n P bench_blocking_cut [--quick] [--leaves N] [--repeats R] [--no-header]
#include "detail/timing.hpp"

#include <irregular/distributed/partitioners/blocking_cut.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

namespace irr = irregular;
namespace mpi = boost::mpi;

std::vector<double> make_loads(const char* kind, std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(n);
  for (auto& w : v) {
    if (!std::strcmp(kind, "integers"))
      w = static_cast<double>(rng() % 101);
    else if (!std::strcmp(kind, "real"))
      w = std::uniform_real_distribution<double>(0, 1)(rng);
    else
      w = rng() % 50 == 0 ? static_cast<double>(1000000 + rng() % 1000)
                          : static_cast<double>(rng() % 10);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  mpi::communicator world;
  std::size_t leaves = 100000;
  int repeats = 21;
  bool header = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      leaves = 2000;
      repeats = 3;
    } else if (!std::strcmp(argv[i], "--leaves") && i + 1 < argc)
      leaves = std::stoul(argv[++i]);
    else if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc)
      repeats = std::stoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--no-header"))
      header = false;
  }
  const int p = world.size();
  if (world.rank() == 0 && header) {
    std::printf(
        "| p | loads | path asked (taken) | ms (median, slowest rank) | probes | collectives | p2p "
        "rounds | p2p msgs (max rank) | "
        "window positions (max rank) | bytes (max rank) "
        "|\n|---|---|---|---|---|---|---|---|---|---|\n");
  }
  int failures = 0;
  for (const char* kind : {"integers", "real", "skewed"}) {
    const auto loads = make_loads(kind, leaves, 1234u + static_cast<unsigned>(world.rank()));
    double reference = -1;
    const struct {
      const char* name;
      std::uint64_t gathered, window;
    } paths[] = {{"gathered on rank 0", ~std::uint64_t{0}, 0},
                 {"distributed windows", 0, 0},
                 {"pipelined probes", 0, 1}};
    for (const auto& path : paths) {
      std::vector<double> times;
      irr::BlockingCutStats stats;
      irr::ChainCut cut;
      for (int r = 0; r < repeats + 2; ++r) {  // two warm-up calls
        world.barrier();
        const double t0 = bench::now_s();
        cut = irr::blocking_partition(world, loads, irr::BlockingCut::optimal, &stats,
                                      path.gathered, path.window);
        const double t = bench::max_over(world, bench::now_s() - t0);
        if (r >= 2) times.push_back(t);
      }
      if (reference < 0) reference = cut.bottleneck;
      // Integer loads: every path reaches the same optimum exactly; real ones up to rounding.
      if (std::abs(cut.bottleneck - reference) > 1e-12 * reference) ++failures;
      auto max_of = [&](double x) { return bench::max_over(world, x); };
      const double msgs = max_of(static_cast<double>(stats.point_to_point));
      const double window = max_of(static_cast<double>(stats.window));
      const double bytes = max_of(static_cast<double>(stats.bytes_sent + stats.bytes_received));
      if (world.rank() == 0)
        std::printf("| %d | %s | %s (%s) | %.2f | %zu | %zu | %zu | %.0f | %.0f | %.0f |\n", p,
                    kind, path.name,
                    stats.windowed      ? "gathered"
                    : stats.distributed ? "distributed"
                                        : "pipelined",
                    1e3 * bench::median(times), stats.probes, stats.collectives, stats.rounds, msgs,
                    window, bytes);
    }
  }
  if (world.rank() == 0 && failures) std::printf("FAILED: the paths disagree on the bottleneck\n");
  return failures ? 1 : 0;
}
