// Shared by the MPI tests that write files (VTK, VTKHDF): agreed verdicts and one output
// directory for all ranks.
#pragma once

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <system_error>
#include <unistd.h>

namespace test_support {

/// How many ranks say !ok, on every rank (so REQUIREs stay identical everywhere).
inline int failures(const boost::mpi::communicator& w, bool ok) {
  int bad = ok ? 0 : 1, total = 0;
  boost::mpi::all_reduce(w, bad, total, std::plus<int>());
  return total;
}

/// Rank 0's verdict, on every rank.
inline bool root_says(const boost::mpi::communicator& w, bool ok) {
  boost::mpi::broadcast(w, ok, 0);
  return ok;
}

/// A directory shared by all ranks: the one the environment variable `keep_env` names (kept,
/// created if missing), or a fresh temporary one named after `prefix`, removed at the end.
/// Collective.
struct OutputDir {
  boost::mpi::communicator w;
  std::filesystem::path path;
  bool keep = false;
  OutputDir(const char* keep_env, const std::string& prefix) {
    std::string p;
    if (const char* env = std::getenv(keep_env); env && *env) {
      p = env;
      keep = true;
      if (w.rank() == 0) std::filesystem::create_directories(p);
    } else if (w.rank() == 0) {
      const auto t = std::chrono::steady_clock::now().time_since_epoch().count();
      p = (std::filesystem::temp_directory_path() /
           (prefix + std::to_string(::getpid()) + "_" + std::to_string(t)))
              .string();
      std::filesystem::create_directories(p);
    }
    boost::mpi::broadcast(w, p, 0);
    path = p;
  }
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  ~OutputDir() {
    w.barrier();
    if (!keep && w.rank() == 0) {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  }
  [[nodiscard]] std::string str() const { return path.string(); }
};

}  // namespace test_support
