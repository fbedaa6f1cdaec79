// What move_elements sends per step, for each ownership map: the bytes all ranks sent, against
// the bytes of the elements that changed holder (the least any scheme must send). Particles
// drift by small random steps, as in a particle code; the tree adapts every step. Also the
// median wall time of a step.
// Usage: mpiexec -n P bench_moves [--quick]
#include <irregular/irregular.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

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
namespace mpi = boost::mpi;

template <int D>
struct Particle {
  std::array<double, D> position;
  std::uint64_t id;
};

struct Row {
  std::string map;
  int dim = 0;
  std::uint64_t n = 0, changed = 0, elements = 0, bytes = 0, messages = 0;
  double ratio = 0;
  double ms = 0;  // median wall time of one move_elements step (rank 0, between barriers)
};

// One seeded particle set (half uniform, half in three Gaussian clusters); rank r keeps every
// p-th particle.
template <int D>
std::vector<Particle<D>> make(std::size_t n, const mpi::communicator& w) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 0.05);
  const double c[3][3] = {{0.25, 0.3, 0.6}, {0.7, 0.75, 0.2}, {0.6, 0.2, 0.5}};
  std::vector<Particle<D>> out;
  for (std::size_t i = 0; i < n; ++i) {
    Particle<D> p{{}, i};
    for (int d = 0; d < D; ++d)
      p.position[d] = std::clamp(i % 2 ? c[i % 3][d] + g(rng) : u(rng), 0.0, 1.0);
    if (static_cast<int>(i % static_cast<std::size_t>(w.size())) == w.rank()) out.push_back(p);
  }
  return out;
}

// A deterministic small step per particle and step number (no state: any rank computes it).
template <int D>
std::array<double, D> step(std::array<double, D> x, std::uint64_t id, int s) {
  std::uint64_t h = (id + 1) * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(s) * 0xD6E8FEB86659FD93ull;
  for (int d = 0; d < D; ++d) {
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    const double r = static_cast<double>(h >> 11) / 9007199254740992.0 - 0.5;
    x[d] = std::clamp(x[d] + 0.004 * r, 0.0, 1.0);
  }
  return x;
}

template <int D, class P>
Row run(const mpi::communicator& w, const char* name, P policy, std::size_t n, int steps) {
  using Domain = irr::IrregularDomain<Particle<D>, irr::stencil::Moore<D>,
                                      std::conditional_t<D == 2, irr::curve::Hilbert<2>, irr::curve::Hilbert<3>>,
                                      irr::load::ElementCount, P>;
  irr::Box<D> box;
  for (int d = 0; d < D; ++d) { box.lo[d] = 0; box.hi[d] = 1; }
  irr::DomainOptions<D, irr::load::ElementCount, P> opt;
  opt.partitioner = policy;
  Domain dom(w, box, irr::refine::max_elements(16), opt);
  dom.insert(make<D>(n, w));
  dom.build();
  Row row{name, D, n};
  std::vector<double> times;
  for (int s = 0; s < steps; ++s) {
    std::uint64_t changed = 0;
    for (const auto& e : dom.local_elements())
      if (dom.owner_of(step<D>(e.position, e.id, s)) != w.rank()) ++changed;
    std::uint64_t all = 0;
    mpi::all_reduce(w, changed, all, std::plus<std::uint64_t>());
    w.barrier();
    const auto t0 = std::chrono::steady_clock::now();
    dom.move_elements([s](Particle<D>& e) { e.position = step<D>(e.position, e.id, s); });
    w.barrier();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    row.changed += all;
    row.elements += dom.last_migration().elements;
    row.bytes += dom.last_migration().bytes;
    row.messages += dom.last_migration().messages;
  }
  const double least = static_cast<double>(row.changed * sizeof(Particle<D>));
  std::sort(times.begin(), times.end());
  row.ms = times[times.size() / 2];
  row.ratio = least > 0 ? static_cast<double>(row.bytes) / least : 0;
  row.changed /= static_cast<std::uint64_t>(steps);
  row.elements /= static_cast<std::uint64_t>(steps);
  row.bytes /= static_cast<std::uint64_t>(steps);
  row.messages /= static_cast<std::uint64_t>(steps);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  mpi::communicator w;
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const std::size_t n = quick ? 20000 : 1000000;
  const int steps = quick ? 3 : 10;
  std::vector<Row> rows;
  rows.push_back(run<2>(w, "SfcBlocking", irr::partitioner::SfcBlocking{}, n, steps));
  rows.push_back(run<2>(w, "Rectangular JAG-M-HEUR-PROBE", irr::partitioner::Rectangular{}, n, steps));
  rows.push_back(run<2>(w, "Rectangular HIER-RB, fine grid", irr::partitioner::Rectangular{.algorithm = "HIER-RB", .level = 8}, n, steps));
  rows.push_back(run<3>(w, "SfcBlocking", irr::partitioner::SfcBlocking{}, n, steps));
  rows.push_back(run<3>(w, "Rectangular JAG-M-HEUR-PROBE", irr::partitioner::Rectangular{}, n, steps));
  if (w.rank() == 0) {
    std::printf("move_elements on %d ranks, %zu particles, %d steps of +-0.002 per axis (per-step means)\n\n",
                w.size(), n, steps);
    std::printf("| D | map | changed holder | elements sent | bytes sent | messages | bytes / (changed x element size) | ms per step (median) |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (const auto& r : rows)
      std::printf("| %d | %s | %llu | %llu | %llu | %llu | %.3f | %.1f |\n", r.dim, r.map.c_str(),
                  static_cast<unsigned long long>(r.changed), static_cast<unsigned long long>(r.elements),
                  static_cast<unsigned long long>(r.bytes), static_cast<unsigned long long>(r.messages), r.ratio, r.ms);
  }
  return 0;
}
