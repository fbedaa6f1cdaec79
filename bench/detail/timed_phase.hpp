// One timed collective phase with its traffic, for the benchmarks that count MPI calls through
// detail/pmpi_counters.hpp: the slowest rank's wall and CPU time over repeats, and the messages
// and bytes of the last repeat summed over the ranks.
#pragma once

#include "pmpi_counters.hpp"
#include "timing.hpp"

#include <boost/mpi/communicator.hpp>

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace bench {

/// What the PMPI layer saw during one timed call, summed over the ranks.
struct Traffic {
  std::uint64_t p2p_messages = 0, p2p_bytes = 0, collectives = 0, collective_bytes = 0;
};

/// Medians over repeats of the slowest rank's wall and CPU time, plus the traffic of the last repeat.
struct Timing {
  std::vector<double> wall, cpu;
  Traffic traffic;
  [[nodiscard]] double wall_ms() const { return median(wall) * 1e3; }
  [[nodiscard]] double cpu_ms() const { return median(cpu) * 1e3; }
};

/// The counters `d` summed over the ranks (the reduction itself is not counted). Collective.
inline Traffic sum_traffic(const boost::mpi::communicator& comm, const pmpi_counters::Counters& d) {
  namespace pc = pmpi_counters;
  const bool was = pc::enabled;
  pc::enabled = false;
  std::uint64_t v[4] = {d.sum_calls(pc::is_send), d.sum_out(pc::is_send), d.sum_calls(pc::is_collective),
                        d.sum_out(pc::is_collective)};
  std::uint64_t g[4];
  MPI_Allreduce(v, g, 4, MPI_UINT64_T, MPI_SUM, comm);
  pc::enabled = was;
  return {g[0], g[1], g[2], g[3]};
}

/// One timed collective call: barrier, f(), the slowest rank's wall and CPU time (kept when
/// `keep`, i.e. not a warm-up), the traffic. Collective over comm.
template <class F>
void time_once(const boost::mpi::communicator& comm, Timing& t, bool keep, F&& f) {
  namespace pc = pmpi_counters;
  pc::enabled = false;
  comm.barrier();
  pc::enabled = true;
  const pc::Counters before = pc::totals;
  const double t0 = now_s(), c0 = cpu_now_s();
  f();
  const double c1 = cpu_now_s(), t1 = now_s();
  const pc::Counters d = pc::totals - before;
  pc::enabled = false;
  const double w = max_over(comm, t1 - t0), c = max_over(comm, c1 - c0);
  t.traffic = sum_traffic(comm, d);
  pc::enabled = true;
  if (keep) {
    t.wall.push_back(w);
    t.cpu.push_back(c);
  }
}

}  // namespace bench
