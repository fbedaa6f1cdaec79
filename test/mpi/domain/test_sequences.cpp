// Randomized programs over both domains (issue 38): from a seed, 50-200 calls interleaved on one
// IrregularDomain and one CellDomain (insert, build, move and remove, rebalance with every
// strategy the map allows, ghosts by every strategy with changing options, exchange and
// accumulate, reduce_up and walks, mark/adapt/balance, save and load on another rank count,
// compare_partitioners and apply_map), each followed by a comparison with a serial reference:
// the sequential HTree and element multiset (support/sequence_support.hpp), a CellTree, ghost
// sets and values by brute force (support/ghost_oracle.hpp), walks against a one-rank run. A
// callback throws on one rank at a random call: every rank must throw the same collective_error
// naming that rank, with the whole state unchanged (a checksum of every rank's state).
//
// Environment: IRREGULAR_SEQ_SEED (program s uses seed base + s), IRREGULAR_SEQ_PROGRAMS,
// IRREGULAR_SEQ_VERBOSE (rank 0 prints each call), IRREGULAR_SEQ_TIMEOUT (seconds a program may
// take before the run aborts with its replay line). A failing program prints the command that
// replays it: IRREGULAR_SEQ_SEED=<seed> IRREGULAR_SEQ_PROGRAMS=1 mpiexec -n <p> mpi_sequences
// The programs and their checks: sequences_program.hpp; one file per configuration,
// sequences_<config>.cpp.
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include "sequence_support.hpp"
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <signal.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

namespace mpi = boost::mpi;
using sequence_support::env_u64;

namespace sequences {
std::string run_hilbert2_sfc(const mpi::communicator& world, std::uint64_t seed,
                             std::string& calls);
std::string run_morton2_by_name(const mpi::communicator& world, std::uint64_t seed,
                                std::string& calls);
std::string run_morton3_by_name(const mpi::communicator& world, std::uint64_t seed,
                                std::string& calls);
}  // namespace sequences

namespace {

// ---- replay line, watchdog and crash report -----------------------------------------------

char g_replay[768] = "";               // what a crash or a hang prints (no allocation in a handler)
std::atomic<long long> g_deadline{0};  // steady-clock seconds; 0: no program running

void print_replay() {
  const ssize_t n = static_cast<ssize_t>(std::strlen(g_replay));
  if (n > 0 && ::write(2, g_replay, static_cast<std::size_t>(n)) < 0) return;
}

long long now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A hang fails within the test's timeout and names the program: a thread watches the deadline.
void start_watchdog() {
  static bool started = false;
  if (started) return;
  started = true;
  std::thread([] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      const long long d = g_deadline.load();
      if (d != 0 && now_seconds() > d) {
        const char msg[] =
            "\nsequences: the program below ran past IRREGULAR_SEQ_TIMEOUT (a hang?)\n";
        if (::write(2, msg, sizeof msg - 1) < 0) {
        }
        print_replay();
        std::_Exit(124);
      }
    }
  }).detach();
}

// A fatal signal prints the replay line, then goes to the handler installed before (Catch2's,
// which reports and re-raises): installed inside the test case, after Catch2's.
constexpr int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction g_previous[std::size(fatal_signals)];

void on_signal(int sig, siginfo_t* info, void* context) {
  print_replay();
  for (std::size_t i = 0; i < std::size(fatal_signals); ++i) {
    if (fatal_signals[i] != sig) continue;
    const auto& prev = g_previous[i];
    if (prev.sa_flags & SA_SIGINFO) {
      if (prev.sa_sigaction) prev.sa_sigaction(sig, info, context);
    } else if (prev.sa_handler != SIG_IGN && prev.sa_handler != SIG_DFL && prev.sa_handler) {
      prev.sa_handler(sig);
    }
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_crash_report() {
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_set_death_callback(print_replay);  // after the sanitizer's own report
#endif
  for (std::size_t i = 0; i < std::size(fatal_signals); ++i) {
    struct sigaction sa {};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(fatal_signals[i], &sa, &g_previous[i]);
  }
}

// ---- configurations -------------------------------------------------------------------------

constexpr int n_configs = 3;

std::string run_program(const mpi::communicator& world, std::uint64_t seed, std::string& calls) {
  switch (static_cast<int>(sequence_support::mix64(seed ^ 0x5E0ull) % n_configs)) {
    case 0:
      return sequences::run_hilbert2_sfc(world, seed, calls);
    case 1:
      return sequences::run_morton2_by_name(world, seed, calls);
    default:
      return sequences::run_morton3_by_name(world, seed, calls);
  }
}

std::string exe_path() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("mpi_sequences") : p.string();
}

}  // namespace

TEST_CASE("random programs over both domains agree with the serial reference",
          "[domain][sequences]") {
  mpi::communicator world;
  std::uint64_t base = env_u64("IRREGULAR_SEQ_SEED", 20261129);
  std::uint64_t programs = env_u64("IRREGULAR_SEQ_PROGRAMS", 4);
  std::uint64_t timeout = env_u64("IRREGULAR_SEQ_TIMEOUT", 240);
  mpi::broadcast(world, base, 0);  // one seed for every rank, whatever each one's environment says
  mpi::broadcast(world, programs, 0);
  mpi::broadcast(world, timeout, 0);
  install_crash_report();
  start_watchdog();
  const std::string exe = exe_path();
  std::vector<std::string> failures;
  for (std::uint64_t s = 0; s < programs; ++s) {
    const std::uint64_t seed = base + s;
    std::snprintf(g_replay, sizeof g_replay,
                  "replay: IRREGULAR_SEQ_SEED=%llu IRREGULAR_SEQ_PROGRAMS=1 mpiexec "
                  "--oversubscribe -n %d %s\n",
                  static_cast<unsigned long long>(seed), world.size(), exe.c_str());
    g_deadline = now_seconds() + static_cast<long long>(timeout);
    std::string calls;
    const std::string problem = run_program(world, seed, calls);
    g_deadline = 0;
    if (!problem.empty()) {
      failures.push_back("seed " + std::to_string(seed) + ": " + problem);
      if (world.rank() == 0)
        std::fprintf(stderr, "FAILED seed %llu at %d ranks: %s\n  calls: %s\n  %s",
                     static_cast<unsigned long long>(seed), world.size(), problem.c_str(),
                     calls.c_str(), g_replay);
    }
  }
  g_replay[0] = '\0';
  if (world.rank() == 0)
    std::printf("sequences: %llu programs at %d ranks, %zu failed\n",
                static_cast<unsigned long long>(programs), world.size(), failures.size());
  std::string all;
  for (const auto& f : failures) all += f + "\n";
  INFO("failed programs (each printed above with its calls and replay command):\n" << all);
  REQUIRE(failures.empty());
}
