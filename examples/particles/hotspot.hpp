// The rebalancing story for the demo: a Gaussian hotspot of particles drifts across
// the unit square while the last rank slows down threefold from step 3 on. Every step times the
// work on each leaf (load::Measured), and rebalance() measures the ranks' capacities from those
// times (kaddoura-ranka §5), cuts the chain in proportion to them and moves the data by
// neighbour shifts (baiardi-2001 §3). Prints per step the unbalance and the §4 efficiency
// before and after, the data moved, and draws the segments at the first and last step.
#pragma once

#include <irregular/irregular.hpp>
#include "owner_svg.hpp"
#include <irregular/partition/efficiency.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace hotspot {

namespace irr = irregular;

struct Particle {
  std::array<double, 2> position;
  std::uint64_t id;
};
using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, irr::curve::Hilbert<2>, irr::load::Measured>;

inline double unit(std::uint64_t id, std::uint64_t salt) {
  std::uint64_t h = (id + 1) * 0x9E3779B97F4A7C15ull ^ salt * 0xD6E8FEB86659FD93ull;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  return static_cast<double>(h >> 11) / 9007199254740992.0;
}

// A third of the particles uniform, the rest a Gaussian hotspot drifting along the diagonal.
inline std::array<double, 2> where(std::uint64_t id, int step, int steps) {
  if (id % 3 == 0) return {unit(id, 1), unit(id, 2)};
  const double f = static_cast<double>(step) / (steps - 1);
  const double r = std::sqrt(-2 * std::log(std::max(unit(id, 3), 1e-300))) * 0.1, a = 6.283185307179586 * unit(id, 4);
  return {std::clamp(0.35 + 0.3 * f + r * std::cos(a), 0.0, 0.999999), std::clamp(0.4 + 0.2 * f + r * std::sin(a), 0.0, 0.999999)};
}

}  // namespace hotspot

/// Runs the story on `comm` (about 1.5 s on 4 ranks) and writes hotspot_first.svg and
/// hotspot_last.svg into `outdir` (which must exist). Output from rank 0. Collective over comm.
/// Returns whether every particle is still present, once, at the end (on every rank).
inline bool run_hotspot_story(const boost::mpi::communicator& comm, const std::string& outdir) {
  namespace mpi = boost::mpi;
  namespace irr = irregular;
  using hotspot::Domain;
  using hotspot::Particle;
  const int steps = 10, slow_from = 3, slow = comm.size() - 1;
  const std::size_t n = 12000;
  const auto per_element = std::chrono::duration<double>(16e-6);
  Domain d(comm, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(24));
  std::vector<Particle> mine;
  for (std::size_t i = static_cast<std::size_t>(comm.rank()); i < n; i += static_cast<std::size_t>(comm.size()))
    mine.push_back({hotspot::where(i, 0, steps), i});
  d.insert(mine);
  d.build();
  if (comm.rank() == 0) {
    std::printf("\n5. Rebalancing for a nonuniform machine, a moving hotspot: %zu particles, %d ranks, rank %d slows down 3x from step %d\n", n,
                comm.size(), slow, slow_from);
    std::printf("capacities measured per phase (elements per second), cuts proportional to them, neighbour shifts\n\n");
    std::printf("| step | phase time | efficiency (measured) | unbalance | capacity of rank %d | remapped | rounds | elements moved | bytes moved | unbalance after | efficiency after (predicted) |\n", slow);
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  }
  for (int step = 0; step < steps; ++step) {
    if (step > 0) d.move_elements([step](Particle& p) { p.position = hotspot::where(p.id, step, steps); });
    // One phase: each leaf "computes" for its elements' time (3x on the slowed rank); sleeping to
    // cumulative deadlines keeps the wall times true when ranks share cores.
    d.reset_measurements();
    const double factor = step >= slow_from && comm.rank() == slow ? 3.0 : 1.0;
    const auto start = std::chrono::steady_clock::now();
    auto deadline = start;
    for (auto leaf : d.local_leaves()) {
      const auto timer = d.time_leaf(leaf.id);
      deadline += std::chrono::duration_cast<std::chrono::steady_clock::duration>(factor * static_cast<double>(leaf.count) *
                                                                                  per_element);
      std::this_thread::sleep_until(deadline);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<double> work, secs;
    mpi::all_gather(comm, static_cast<double>(d.local_element_count()), work);
    mpi::all_gather(comm, seconds, secs);
    const double efficiency = irr::partition::measured_efficiency(work, secs);
    if (step == 0) draw_owners(d, outdir + "/hotspot_first.svg", "hotspot, step 0: segments by owner rank");
    const auto rec = d.rebalance({.threshold = 0.1, .strategy = irr::RemapStrategy::neighbour_shift, .measure_capacities = true});
    if (comm.rank() == 0)
      std::printf("| %d | %.1f ms | %.2f | %.2f | %.2f | %s | %d | %llu | %llu | %.2f | %.2f |\n", step,
                  *std::max_element(secs.begin(), secs.end()) * 1e3, efficiency, rec.unbalance,
                  rec.capacities[static_cast<std::size_t>(slow)], rec.remapped ? "yes" : "no", rec.rounds,
                  static_cast<unsigned long long>(rec.elements_moved), static_cast<unsigned long long>(rec.bytes_moved),
                  rec.unbalance_after, rec.efficiency_after);
  }
  draw_owners(d, outdir + "/hotspot_last.svg", "hotspot, last step: segments by owner rank (the slowed rank holds less)");
  return d.global_element_count() == n;
}
