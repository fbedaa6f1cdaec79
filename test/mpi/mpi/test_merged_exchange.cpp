// MergedExchange (baiardi-collecting-remote-data §4), run at 1, 2, 3, 4 and 7 ranks: seeded
// all-to-some traffic against an oracle every rank computes from the seed (records, message and
// byte counts), request/answer across two engines, forwarding from poll(), same-tag phases, misuse.
#include <catch2/catch.hpp>

#include <irregular/core/error.hpp>
#include <irregular/mpi/merged_exchange.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

namespace mpi = irregular::mpi;

namespace {

struct Rec {  // 16 bytes; (src, dst, i, round) is unique within a test
  std::uint32_t src, dst, i, round;
  friend bool operator==(const Rec&, const Rec&) = default;
  friend bool operator<(const Rec& a, const Rec& b) {
    return std::tie(a.src, a.dst, a.i, a.round) < std::tie(b.src, b.dst, b.i, b.round);
  }
};
static_assert(sizeof(Rec) == 16);

int all_sum(const boost::mpi::communicator& comm, long long x) {
  long long y = 0;
  boost::mpi::all_reduce(comm, x, y, std::plus<long long>());
  return static_cast<int>(y);
}

// count[src][dst]: a fifth of the ranks send nothing; the others send 1..120 records to about
// half of the ranks (themselves included). Every rank builds the same matrix from the seed.
std::vector<std::vector<std::uint32_t>> pattern(int p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::uint32_t>> count(static_cast<std::size_t>(p),
                                                std::vector<std::uint32_t>(static_cast<std::size_t>(p)));
  for (auto& row : count) {
    if (rng() % 5 == 0) continue;
    for (auto& c : row) c = rng() % 2 ? 1 + static_cast<std::uint32_t>(rng() % 120) : 0;
  }
  return count;
}

// What rank me must receive under `count`, sorted.
std::vector<Rec> expected_at(const std::vector<std::vector<std::uint32_t>>& count, int me, std::uint32_t round) {
  std::vector<Rec> out;
  for (std::size_t s = 0; s < count.size(); ++s)
    for (std::uint32_t i = 0; i < count[s][static_cast<std::size_t>(me)]; ++i)
      out.push_back({static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(me), i, round});
  return out;
}

std::uint64_t messages_for(std::uint64_t n, std::size_t b) {
  if (n == 0) return 0;
  return b == 0 ? 1 : (n + b - 1) / b;
}

// Sends rank me's row of `count` in a seeded random order, mixing single records and spans of
// random length, polling every few sends; returns what the phase delivered (sorted).
std::vector<Rec> run_phase(const boost::mpi::communicator& world, const std::vector<std::vector<std::uint32_t>>& count,
                           std::uint32_t round, int tag, mpi::MergeOptions opt, mpi::PhaseStats& stats,
                           int* bad_sources) {
  const int me = world.rank();
  const auto p = static_cast<std::size_t>(world.size());
  std::vector<Rec> got;
  auto on_receive = [&](int source, std::span<const Rec> records) {
    for (const Rec& r : records) {
      if (static_cast<int>(r.src) != source) ++*bad_sources;
      got.push_back(r);
    }
  };
  mpi::MergedExchange<Rec> ex(world, tag, opt);
  std::mt19937_64 rng(1000 * round + static_cast<std::uint64_t>(me));
  std::vector<std::uint32_t> next(p, 0);
  std::vector<int> order;  // destinations that still have records, one entry per remaining record
  for (std::size_t d = 0; d < p; ++d)
    order.insert(order.end(), count[static_cast<std::size_t>(me)][d], static_cast<int>(d));
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<Rec> chunk;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const int d = order[k];
    const auto du = static_cast<std::size_t>(d);
    const std::uint32_t total = count[static_cast<std::size_t>(me)][du];
    if (next[du] == total) continue;  // already sent as part of a span
    if (rng() % 3 == 0) {
      chunk.clear();
      const std::uint32_t len = std::min<std::uint32_t>(total - next[du], 1 + static_cast<std::uint32_t>(rng() % 70));
      for (std::uint32_t j = 0; j < len; ++j) chunk.push_back({static_cast<std::uint32_t>(me), static_cast<std::uint32_t>(d), next[du]++, round});
      ex.send(d, std::span<const Rec>(chunk));
    } else {
      ex.send(d, Rec{static_cast<std::uint32_t>(me), static_cast<std::uint32_t>(d), next[du]++, round});
    }
    if (k % 7 == 0) ex.poll(on_receive);
  }
  ex.finish(on_receive);
  stats = ex.stats();
  std::sort(got.begin(), got.end());
  return got;
}

const std::size_t buffer_sizes[] = {0, 1, 3, 50};
const mpi::Termination terminations[] = {mpi::Termination::messages, mpi::Termination::nbx};

}  // namespace

TEST_CASE("MergedExchange delivers seeded all-to-some traffic exactly once with analytic counts",
          "[mpi][ghost][merged_exchange]") {
  const boost::mpi::communicator world;
  const int p = world.size();
  const int me = world.rank();
  for (const mpi::Termination term : terminations) {
    for (const std::size_t b : buffer_sizes) {
      for (std::uint64_t seed : {11u, 12u, 13u}) {
        CAPTURE(static_cast<int>(term), b, seed);
        const auto count = pattern(p, seed);
        mpi::PhaseStats stats;
        int bad_sources = 0;
        const auto got = run_phase(world, count, static_cast<std::uint32_t>(seed), 40, {b, term}, stats, &bad_sources);
        REQUIRE(all_sum(world, got != expected_at(count, me, static_cast<std::uint32_t>(seed))) == 0);
        REQUIRE(all_sum(world, bad_sources) == 0);

        std::uint64_t sent = 0, received = 0, bytes_sent = 0, bytes_received = 0, partners_merged = 0;
        for (int r = 0; r < p; ++r) {
          if (r == me) continue;
          const std::uint64_t out = count[static_cast<std::size_t>(me)][static_cast<std::size_t>(r)];
          const std::uint64_t in = count[static_cast<std::size_t>(r)][static_cast<std::size_t>(me)];
          sent += messages_for(out, b);
          received += messages_for(in, b);
          bytes_sent += out * sizeof(Rec);
          bytes_received += in * sizeof(Rec);
          partners_merged += out > 0 && (b == 0 || out % b != 0);  // a non-empty last buffer carries it
        }
        const std::uint64_t terminations_expected =
            term == mpi::Termination::messages ? static_cast<std::uint64_t>(p - 1) - partners_merged : 0;
        CAPTURE(stats.messages_sent, sent, stats.messages_received, received, stats.termination_messages,
                terminations_expected);
        REQUIRE(all_sum(world, stats.messages_sent != sent) == 0);
        REQUIRE(all_sum(world, stats.messages_received != received) == 0);
        REQUIRE(all_sum(world, stats.bytes_sent != bytes_sent) == 0);
        REQUIRE(all_sum(world, stats.bytes_received != bytes_received) == 0);
        REQUIRE(all_sum(world, stats.termination_messages != terminations_expected) == 0);
        REQUIRE(all_sum(world, !(stats.seconds > 0)) == 0);
      }
    }
  }
}

TEST_CASE("MergedExchange answers requests from within on_receive on a second engine",
          "[mpi][ghost][merged_exchange]") {
  const boost::mpi::communicator world;
  const int p = world.size();
  const int me = world.rank();
  constexpr std::uint32_t answer_mark = 7777;
  for (const mpi::Termination term : terminations) {
    for (const std::size_t b : buffer_sizes) {
      CAPTURE(static_cast<int>(term), b);
      const auto count = pattern(p, 21 + b);
      std::vector<Rec> requests, answers;
      int bad = 0;
      mpi::MergedExchange<Rec> ask(world, 50, {b, term});
      mpi::MergedExchange<Rec> answer(world, 51, {b, term});
      auto on_request = [&](int source, std::span<const Rec> records) {
        for (const Rec& r : records) {
          bad += static_cast<int>(r.src) != source || static_cast<int>(r.dst) != me;
          requests.push_back(r);
          answer.send(source, Rec{r.src, r.dst, r.i, answer_mark});
        }
      };
      auto on_answer = [&](int source, std::span<const Rec> records) {
        for (const Rec& r : records) {
          bad += static_cast<int>(r.dst) != source || static_cast<int>(r.src) != me;
          answers.push_back(r);
        }
      };
      std::uint32_t k = 0;
      for (int d = 0; d < p; ++d) {
        for (std::uint32_t i = 0; i < count[static_cast<std::size_t>(me)][static_cast<std::size_t>(d)]; ++i) {
          ask.send(d, Rec{static_cast<std::uint32_t>(me), static_cast<std::uint32_t>(d), i, 0});
          if (++k % 5 == 0) ask.poll(on_request);
          if (k % 11 == 0) answer.poll(on_answer);  // answers may come back while requests still go out
        }
      }
      ask.finish(on_request);
      answer.finish(on_answer);
      std::sort(requests.begin(), requests.end());
      std::sort(answers.begin(), answers.end());
      std::vector<Rec> expected_answers;
      for (int d = 0; d < p; ++d)
        for (std::uint32_t i = 0; i < count[static_cast<std::size_t>(me)][static_cast<std::size_t>(d)]; ++i)
          expected_answers.push_back({static_cast<std::uint32_t>(me), static_cast<std::uint32_t>(d), i, answer_mark});
      REQUIRE(all_sum(world, bad) == 0);
      REQUIRE(all_sum(world, requests != expected_at(count, me, 0)) == 0);
      REQUIRE(all_sum(world, answers != expected_answers) == 0);
      REQUIRE(all_sum(world, static_cast<long long>(answer.stats().bytes_sent)) ==
              all_sum(world, static_cast<long long>(ask.stats().bytes_received)));
    }
  }
}

TEST_CASE("MergedExchange: on_receive may send on the same engine while poll() runs it",
          "[mpi][ghost][merged_exchange]") {
  // Hop-0 records are forwarded to the next rank as hop-1 records from within poll(); every rank
  // polls until all its hop-0 records arrived (b = 1: each record leaves at once), then finishes.
  const boost::mpi::communicator world;
  const int p = world.size();
  const int me = world.rank();
  const int next = (me + 1) % p;
  const int prev = (me + p - 1) % p;
  for (const mpi::Termination term : terminations) {
    CAPTURE(static_cast<int>(term));
    const auto count = pattern(p, 31);
    const auto expected_hop0 = expected_at(count, me, 0);
    auto expected_hop1 = expected_at(count, prev, 1);
    std::vector<Rec> hop0, hop1;
    mpi::MergedExchange<Rec> ex(world, 52, {1, term});
    auto on_receive = [&](int, std::span<const Rec> records) {
      for (const Rec& r : records) {
        if (r.round == 0) {
          hop0.push_back(r);
          ex.send(next, Rec{r.src, r.dst, r.i, 1});
        } else {
          hop1.push_back(r);
        }
      }
    };
    for (int d = 0; d < p; ++d)
      for (std::uint32_t i = 0; i < count[static_cast<std::size_t>(me)][static_cast<std::size_t>(d)]; ++i)
        ex.send(d, Rec{static_cast<std::uint32_t>(me), static_cast<std::uint32_t>(d), i, 0});
    while (hop0.size() < expected_hop0.size()) ex.poll(on_receive);
    ex.finish(on_receive);
    std::sort(hop0.begin(), hop0.end());
    std::sort(hop1.begin(), hop1.end());
    REQUIRE(all_sum(world, hop0 != expected_hop0) == 0);
    REQUIRE(all_sum(world, hop1 != expected_hop1) == 0);
  }
}

TEST_CASE("MergedExchange: back-to-back phases with one tag do not mix", "[mpi][ghost][merged_exchange]") {
  const boost::mpi::communicator world;
  const int me = world.rank();
  int bad = 0;
  int bad_sources = 0;
  for (std::uint32_t round = 0; round < 16; ++round) {
    // A new pattern each round, so a message of the next phase taken by this one would show.
    const auto count = pattern(world.size(), 500 + round);
    const mpi::MergeOptions opt{buffer_sizes[round % 4], terminations[(round / 4) % 2]};
    mpi::PhaseStats stats;
    bad += run_phase(world, count, round, 60, opt, stats, &bad_sources) != expected_at(count, me, round);
  }
  REQUIRE(all_sum(world, bad) == 0);
  REQUIRE(all_sum(world, bad_sources) == 0);
}

TEST_CASE("MergedExchange rejects misuse and malformed messages without hanging", "[mpi][ghost][merged_exchange]") {
  // On MPI_COMM_SELF: every rank runs the same deterministic single-rank phases.
  const boost::mpi::communicator self(MPI_COMM_SELF, boost::mpi::comm_attach);
  const Rec rec{0, 0, 1, 2};
  auto ignore = [](int, std::span<const Rec>) {};
  REQUIRE_THROWS_AS(mpi::MergedExchange<Rec>(self, -1), irregular::invalid_argument);
  for (const mpi::Termination term : terminations) {
    CAPTURE(static_cast<int>(term));
    {
      mpi::MergedExchange<Rec> ex(self, 3, {0, term});
      REQUIRE_THROWS_AS(ex.send(1, rec), irregular::invalid_argument);
      REQUIRE_THROWS_AS(ex.send(-1, rec), irregular::invalid_argument);
      ex.send(0, rec);
      std::vector<Rec> got;
      ex.poll([&](int source, std::span<const Rec> r) {
        REQUIRE(source == 0);
        got.assign(r.begin(), r.end());
        ex.send(0, rec);  // allowed during poll(): delivered by the next poll() or finish()
      });
      REQUIRE(got == std::vector<Rec>{rec});
      got.clear();
      // Nested poll() is refused; sending on this engine once finish() began is refused.
      REQUIRE_THROWS_AS(ex.poll([&](int, std::span<const Rec>) { ex.poll(ignore); }), irregular::error);
      ex.send(0, rec);
      REQUIRE_THROWS_AS(ex.finish([&](int, std::span<const Rec>) { ex.send(0, rec); }), irregular::error);
      REQUIRE_THROWS_AS(ex.poll(ignore), irregular::error);
      REQUIRE_THROWS_AS(ex.finish(ignore), irregular::error);
      REQUIRE_THROWS_AS(ex.send(0, rec), irregular::error);
    }
    {
      // Exceptions from on_receive reach the caller.
      mpi::MergedExchange<Rec> ex(self, 4, {0, term});
      ex.send(0, rec);
      REQUIRE_THROWS_AS(ex.poll([](int, std::span<const Rec>) { throw std::runtime_error("user"); }),
                        std::runtime_error);
    }
    {
      // A message whose length is not a multiple of sizeof(Rec) (and no merged termination: 5 bytes).
      mpi::MergedExchange<Rec> ex(self, 5, {0, term});
      char junk[5] = {};
      MPI_Request request = MPI_REQUEST_NULL;
      MPI_Isend(junk, 5, MPI_BYTE, 0, 5, self, &request);
      REQUIRE_THROWS_AS(ex.poll(ignore), irregular::parse_error);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    {
      // A clean single-rank phase: self-delivery is no message.
      mpi::MergedExchange<Rec> ex(self, 6, {3, term});
      std::vector<Rec> got;
      for (std::uint32_t i = 0; i < 10; ++i) ex.send(0, Rec{0, 0, i, 0});
      ex.finish([&](int, std::span<const Rec> r) { got.insert(got.end(), r.begin(), r.end()); });
      REQUIRE(got.size() == 10);
      mpi::PhaseStats none = ex.stats();
      none.seconds = 0;
      REQUIRE(none == mpi::PhaseStats{});
    }
  }
  mpi::PhaseStats a{1, 2, 3, 4, 5, 0.5};
  const mpi::PhaseStats b{10, 20, 30, 40, 50, 1.0};
  REQUIRE(a + b == mpi::PhaseStats{11, 22, 33, 44, 55, 1.5});
  a += b;
  REQUIRE(a == mpi::PhaseStats{11, 22, 33, 44, 55, 1.5});
}
