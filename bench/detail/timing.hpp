// Timing helpers shared by the MPI benchmarks: wall and thread CPU clocks, median of repeats,
// maximum over ranks.
#pragma once

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <vector>

namespace bench {

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// This thread's CPU seconds: on a shared machine wall time includes time the rank was not
/// scheduled, CPU time does not (it does include MPI's polling while a rank waits).
inline double cpu_now_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

/// The slowest rank's value (a phase ends when its last rank does). Collective over comm.
inline double max_over(const boost::mpi::communicator& comm, double x) {
  double m = 0;
  boost::mpi::all_reduce(comm, x, m, boost::mpi::maximum<double>());
  return m;
}

}  // namespace bench
