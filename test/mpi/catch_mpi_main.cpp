// Shared main of the MPI test programs: Boost.MPI environment, one Catch2 session per rank,
// result reduced so every rank exits alike, and only rank 0 reports.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  boost::mpi::environment env(argc, argv);
  boost::mpi::communicator world;
  Catch::Session session;
  int rc = session.applyCommandLine(argc, argv);
  if (rc == 0) {
    // Other ranks run silently (a failure on them still fails the run through the reduction),
    // unless IRREGULAR_TEST_ALL_RANKS is set, for debugging one rank's failure.
    if (world.rank() != 0 && !std::getenv("IRREGULAR_TEST_ALL_RANKS"))
      session.configData().outputFilename = "/dev/null";
    rc = session.run();
  }
  int failed = rc != 0 ? 1 : 0;
  int any_failed = 0;
  boost::mpi::all_reduce(world, failed, any_failed, boost::mpi::maximum<int>());
  if (world.rank() == 0 && any_failed && !failed)
    std::fprintf(stderr, "a test failed on a rank other than 0; rerun with IRREGULAR_TEST_ALL_RANKS=1 to see every rank's output\n");
  return any_failed;
}
