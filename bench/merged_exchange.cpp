// Benchmark of MergedExchange (baiardi-collecting-remote-data §4): (1) one phase with b = 0 against
// plain MPI_Isend/MPI_Irecv with known sizes moving the same bytes; (2) the buffer size b (1, 15,
// 50, unbounded): time and messages; (3) termination messages against NBX on a sparse pattern.
// Run at 2, 4 and 7 ranks (oversubscribed beyond the cores); every table row is for this run's p.
#include <irregular/mpi/merged_exchange.hpp>

#include "detail/timing.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

namespace mpi = irregular::mpi;

struct Rec {  // 16 bytes, as a ghost value with its key
  std::uint64_t key;
  double value;
};
static_assert(sizeof(Rec) == 16);

const char* name(mpi::Termination t) { return t == mpi::Termination::nbx ? "nbx" : "messages"; }

// Median over repeats (after one warm-up) of the slowest rank's time. Collective over comm.
double median_time(const boost::mpi::communicator& comm, int repeats, const std::function<void()>& op) {
  std::vector<double> t;
  for (int i = 0; i <= repeats; ++i) {
    MPI_Barrier(comm);
    const double t0 = bench::now_s();
    op();
    const double dt = bench::max_over(comm, bench::now_s() - t0);
    if (i > 0) t.push_back(dt);
  }
  return bench::median(t);
}

std::uint64_t sum_over(const boost::mpi::communicator& comm, std::uint64_t x) {
  std::uint64_t y = 0;
  boost::mpi::all_reduce(comm, x, y, std::plus<std::uint64_t>());
  return y;
}

}  // namespace

int main(int argc, char** argv) {
  boost::mpi::environment env(argc, argv);
  boost::mpi::communicator world;
  bool quick = false, csv = false;
  int only = 0;  // --only=N runs section N alone
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--csv") == 0) csv = true;
    if (std::strncmp(argv[i], "--only=", 7) == 0) only = std::atoi(argv[i] + 7);
  }
  const int p = world.size();
  const int me = world.rank();
  if (p < 2) {
    if (me == 0) std::fprintf(stderr, "bench_merged_exchange needs at least 2 ranks\n");
    return 1;
  }
  const int repeats = quick ? 3 : 9;
  bool ok = true;
  std::vector<std::string> rows;
  auto row = [&](const std::string& section, const std::string& what, double seconds, const std::string& extra) {
    char line[400];
    std::snprintf(line, sizeof line, csv ? "%s,%d,%s,%.6f,%s" : "| %s | %d | %s | %.4f | %s |", section.c_str(), p,
                  what.c_str(), seconds * 1e3, extra.c_str());
    rows.emplace_back(line);
  };

  // (1) b = 0 against plain point-to-point. Each rank sends n records, spread evenly over the others.
  for (const std::size_t n : only > 1 ? std::vector<std::size_t>{} : quick ? std::vector<std::size_t>{10'000} : std::vector<std::size_t>{100'000, 1'000'000}) {
    const auto parts = static_cast<std::size_t>(p - 1);
    const std::size_t per = n / parts;
    std::vector<Rec> out(per * parts);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = {i + static_cast<std::uint64_t>(me) * n, 0.5 * static_cast<double>(i)};
    auto slice = [&](int d) {  // partner d's records: the k-th block, k = d's index among the others
      const auto k = static_cast<std::size_t>(d < me ? d : d - 1);
      return std::span<const Rec>(out).subspan(k * per, per);
    };
    std::vector<std::vector<Rec>> in(static_cast<std::size_t>(p), std::vector<Rec>(per));
    const double plain = median_time(world, repeats, [&] {
      std::vector<MPI_Request> req;
      for (int s = 0; s < p; ++s)
        if (s != me) {
          req.emplace_back();
          MPI_Irecv(in[static_cast<std::size_t>(s)].data(), static_cast<int>(per * sizeof(Rec)), MPI_BYTE, s, 7, world,
                    &req.back());
        }
      for (int d = 0; d < p; ++d)
        if (d != me) {
          req.emplace_back();
          MPI_Isend(slice(d).data(), static_cast<int>(per * sizeof(Rec)), MPI_BYTE, d, 7, world, &req.back());
        }
      MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE);
    });
    const std::string size = std::to_string(n) + " records (" + std::to_string(n * sizeof(Rec) / 1000) + " kB) per rank";
    row("1 throughput", "plain Isend/Irecv, " + size, plain, "1.00");
    for (const mpi::Termination term : {mpi::Termination::nbx, mpi::Termination::messages}) {
      for (const bool per_record : {false, true}) {
        std::size_t got = 0;
        auto count = [&](int, std::span<const Rec> r) { got += r.size(); };
        const double t = median_time(world, repeats, [&] {
          got = 0;
          mpi::MergedExchange<Rec> ex(world, 8, {0, term});
          for (int d = 0; d < p; ++d) {
            if (d == me) continue;
            if (!per_record) {
              ex.send(d, slice(d));
              continue;
            }
            for (const Rec& r : slice(d)) ex.send(d, r);
            ex.poll(count);
          }
          ex.finish(count);
        });
        ok = ok && got == per * parts;
        row("1 throughput",
            std::string("MergedExchange b=0 ") + name(term) + (per_record ? ", send() per record" : ", one span per partner"),
            t, std::to_string(plain / t).substr(0, 4));
      }
    }
  }

  // (2) The b sweep: per-record sends round-robin over the other ranks, a poll every 64 sends.
  if (only == 0 || only == 2) {
    const std::size_t n = quick ? 5'000 : 100'000;
    for (const mpi::Termination term : {mpi::Termination::nbx, mpi::Termination::messages}) {
      for (const std::size_t b : {std::size_t{1}, std::size_t{15}, std::size_t{50}, std::size_t{0}}) {
        std::size_t got = 0;
        mpi::PhaseStats stats;
        auto count = [&](int, std::span<const Rec> r) { got += r.size(); };
        // b = 1 under NBX is slow (bench/results/ghost.md, "Merge buffer b"), so fewer repeats there.
        const double t = median_time(world, b == 1 ? std::min(repeats, 3) : repeats, [&] {
          got = 0;
          mpi::MergedExchange<Rec> ex(world, 9, {b, term});
          for (std::size_t i = 0; i < n; ++i) {
            ex.send(static_cast<int>((static_cast<std::size_t>(me) + 1 + i % static_cast<std::size_t>(p - 1)) %
                                     static_cast<std::size_t>(p)),
                    Rec{i, 1.0});
            if (i % 64 == 63) ex.poll(count);
          }
          ex.finish(count);
          stats = ex.stats();
        });
        ok = ok && sum_over(world, got) == n * static_cast<std::size_t>(p);
        const std::uint64_t messages = sum_over(world, stats.messages_sent + stats.termination_messages);
        row("2 b sweep", std::to_string(n) + " records per rank, b=" + (b == 0 ? std::string("unbounded") : std::to_string(b)) +
            ", " + name(term), t, std::to_string(messages / static_cast<std::uint64_t>(p)) + " messages per rank");
      }
    }
  }

  // (3) Termination on a sparse pattern (each rank to its two ring neighbours, 100 records each)
  // and on an empty phase (the cost of termination alone).
  for (const std::size_t n : only == 0 || only == 3 ? std::vector<std::size_t>{100, 0} : std::vector<std::size_t>{}) {
    for (const mpi::Termination term : {mpi::Termination::nbx, mpi::Termination::messages}) {
      std::size_t got = 0;
      auto count = [&](int, std::span<const Rec> r) { got += r.size(); };
      mpi::PhaseStats stats;
      const double t = median_time(world, quick ? 5 : 51, [&] {
        got = 0;
        mpi::MergedExchange<Rec> ex(world, 10, {0, term});
        for (const int d : {(me + 1) % p, (me + p - 1) % p})
          for (std::size_t i = 0; i < n; ++i) ex.send(d, Rec{i, 2.0});
        ex.finish(count);
        stats = ex.stats();
      });
      ok = ok && got == 2 * n;
      const std::uint64_t messages = sum_over(world, stats.messages_sent + stats.termination_messages);
      row("3 termination", (n == 0 ? std::string("empty phase, ") : "ring, 2 x " + std::to_string(n) + " records, ") + name(term),
          t, std::to_string(messages / static_cast<std::uint64_t>(p)) + " messages per rank");
    }
  }

  if (me == 0) {
    if (!csv) {
      std::printf("MergedExchange, %d ranks%s; times: median over repeats of the slowest rank\n\n", p,
                  quick ? " (quick)" : "");
      std::printf("| section | p | case | ms | vs plain / messages |\n|---|---|---|---|---|\n");
    } else {
      std::printf("section,p,case,ms,extra\n");
    }
    for (const auto& r : rows) std::printf("%s\n", r.c_str());
    if (!ok) std::fprintf(stderr, "bench_merged_exchange: a phase lost or duplicated records\n");
  }
  return ok ? 0 : 1;
}
