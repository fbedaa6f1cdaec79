// blocking_partition under MPI: the distributed optimal cut equals sequential NicolPlus on the
// gathered chain (bottleneck, and the balanced separators when the windows are gathered on rank 0
// or distributed), its separators are valid, and its collective calls and point-to-point rounds
// are those of the path it took: constant when gathered, one all_reduce and ceil(log2(p-1))
// doubling rounds per probe when distributed.
#include <catch2/catch.hpp>

#include <irregular/distributed/partitioners/blocking_cut.hpp>
#include <irregular/partition/nicol_plus.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;

namespace {

// Chains, generated alike on every rank from a seed.
enum class Shape { uniform, skewed, zeros, real };

std::vector<double> make_chain(Shape shape, std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> c(n);
  for (auto& w : c) {
    switch (shape) {
      case Shape::uniform: w = static_cast<double>(rng() % 101); break;
      case Shape::skewed: w = rng() % 50 == 0 ? static_cast<double>(1000000 + rng() % 1000) : static_cast<double>(rng() % 10); break;
      case Shape::zeros: w = rng() % 10 < 8 ? 0.0 : static_cast<double>(1 + rng() % 100); break;
      case Shape::real: w = std::uniform_real_distribution<double>(0, 1)(rng); break;
    }
  }
  return c;
}

// How the chain is split over the ranks: first position of every rank (p+1 values).
enum class Split { even, random, all_first, all_last, all_middle, alternate_empty };

std::vector<std::size_t> make_split(Split split, std::size_t n, int p, unsigned seed) {
  const auto up = static_cast<std::size_t>(p);
  std::vector<std::size_t> s(up + 1, 0);
  std::mt19937_64 rng(seed * 7 + 1);
  for (std::size_t r = 0; r <= up; ++r) {
    switch (split) {
      case Split::even: s[r] = n * r / up; break;
      case Split::random: s[r] = r == up ? n : (r == 0 ? 0 : rng() % (n + 1)); break;
      case Split::all_first: s[r] = r == 0 ? 0 : n; break;
      case Split::all_last: s[r] = r == up ? n : 0; break;
      case Split::all_middle: s[r] = r <= up / 2 ? 0 : n; break;
      case Split::alternate_empty: s[r] = n * ((r + 1) / 2) / ((up + 1) / 2); break;
    }
  }
  std::sort(s.begin(), s.end());
  s[up] = n;
  return s;
}

struct Run {
  irr::ChainCut cut;
  irr::BlockingCutStats stats;
};

// Which path the optimal cut is made to take: the default choice, the distributed windows
// (nothing gathered on rank 0), or the pipelined probes (no window fits).
enum class Path { automatic, distributed, pipelined };
const Path paths[] = {Path::automatic, Path::distributed, Path::pipelined};

Run run(const mpi::communicator& world, const std::vector<double>& chain, const std::vector<std::size_t>& split,
        irr::BlockingCut method = irr::BlockingCut::optimal, Path path = Path::automatic) {
  const auto r = static_cast<std::size_t>(world.rank());
  const std::span<const double> mine(chain.data() + split[r], split[r + 1] - split[r]);
  Run out;
  const std::uint64_t max_gathered = path == Path::automatic ? irr::blocking_default_max_gathered : 0;
  const std::uint64_t max_window = path == Path::pipelined ? 1 : 0;
  out.cut = irr::blocking_partition(world, mine, method, &out.stats, max_gathered, max_window);
  return out;
}

unsigned ceil_log2(int x) { return x <= 1 ? 0 : static_cast<unsigned>(std::bit_width(static_cast<unsigned>(x - 1))); }

// Separators from 0 to n, non-decreasing, loads equal to the chain's part sums, every part at
// most the bottleneck (and the bottleneck attained).
void require_valid(const irr::ChainCut& cut, const std::vector<double>& chain, int p, double tol) {
  const auto up = static_cast<std::size_t>(p);
  REQUIRE(cut.separators.size() == up + 1);
  REQUIRE(cut.loads.size() == up);
  REQUIRE(cut.separators.front() == 0);
  REQUIRE(cut.separators.back() == chain.size());
  double worst = 0;
  for (std::size_t k = 0; k < up; ++k) {
    REQUIRE(cut.separators[k] <= cut.separators[k + 1]);
    double sum = 0;
    for (std::uint64_t i = cut.separators[k]; i < cut.separators[k + 1]; ++i) sum += chain[i];
    REQUIRE(std::abs(sum - cut.loads[k]) <= tol * (1 + sum));
    REQUIRE(cut.loads[k] <= cut.bottleneck);
    worst = std::max(worst, cut.loads[k]);
  }
  REQUIRE(worst == cut.bottleneck);
}

// The cost of the path taken. Gathered: 6 collectives, no point-to-point. Distributed: 6
// collectives plus one all_reduce per probe; each probe's scan 2 ceil(log2(p-1)) rounds (a
// tree's up- and down-sweep), the balanced separators 2 ceil(log2(p-2)) more; per scan at most
// four sends and four receives on any rank, whatever p (doubling would send one per round).
// Windows gathered on rank 0 with p = 1 are the whole (empty) story.
void require_log_rounds(const irr::BlockingCutStats& s, int p, Path path) {
  if (path == Path::distributed) REQUIRE(s.distributed);
  if (s.windowed) {
    REQUIRE(s.point_to_point == 0);
    REQUIRE(s.collectives == 6);
  } else if (s.distributed) {
    REQUIRE(s.collectives == 6 + s.probes);
    REQUIRE(s.rounds == 2 * (s.probes * ceil_log2(p - 1) + ceil_log2(p - 2)));
    REQUIRE(s.point_to_point <= 8 * (s.probes + 1));
    REQUIRE(s.probes <= 70);
  } else {
    REQUIRE(path == Path::pipelined);
    REQUIRE(s.probes > 0);
  }
}

const Shape int_shapes[] = {Shape::uniform, Shape::skewed, Shape::zeros};
const Split splits[] = {Split::even, Split::random, Split::all_first, Split::all_last, Split::all_middle,
                        Split::alternate_empty};

}  // namespace

TEST_CASE("optimal blocking cut equals sequential NicolPlus on integer-valued chains", "[blocking_cut]") {
  mpi::communicator world;
  const int p = world.size();
  const std::size_t sizes[] = {0, 1, 2, 3, 5, 6, 7, 40, 1000, 20000};
  unsigned seed = 1;
  for (Shape shape : int_shapes)
    for (std::size_t n : sizes)
      for (Split split : splits) {
        ++seed;
        CAPTURE(static_cast<int>(shape), n, static_cast<int>(split), p, seed);
        const auto chain = make_chain(shape, n, seed);
        const auto s = make_split(split, n, p, seed);
        const auto seq = irr::partition::nicol_plus<double>(chain, static_cast<std::size_t>(p));
        const std::vector<std::uint64_t> seq_seps(seq.separators.begin(), seq.separators.end());
        for (Path path : paths) {
          CAPTURE(static_cast<int>(path));
          const auto got = run(world, chain, s, irr::BlockingCut::optimal, path);
          require_valid(got.cut, chain, p, 0);
          REQUIRE(got.cut.bottleneck == seq.bottleneck);
          require_log_rounds(got.stats, p, path);
          // Gathered or distributed windows give the sequential balanced separators; the
          // pipelined probes the greedy ones.
          if (got.stats.windowed || got.stats.distributed) {
            REQUIRE(got.cut.separators == seq_seps);
            REQUIRE(got.cut.loads == seq.loads);
          }
          // The windows stay well below the chain (a few positions per part around the ideal
          // cut): gathered, they total O(p^2); distributed, each rank holds two of O(p).
          if (shape == Shape::uniform && n >= 1000) {
            REQUIRE(got.stats.gathered <= 2 * static_cast<std::uint64_t>(p * p) + 8 * p);
            REQUIRE(got.stats.window <= 8 * static_cast<std::uint64_t>(p) + 8);
          }
        }
      }
}

TEST_CASE("optimal blocking cut on real-valued loads matches NicolPlus up to summation order", "[blocking_cut]") {
  mpi::communicator world;
  const int p = world.size();
  unsigned seed = 1000;
  for (std::size_t n : {std::size_t{3}, std::size_t{100}, std::size_t{5000}})
    for (Split split : splits) {
      ++seed;
      CAPTURE(n, static_cast<int>(split), p, seed);
      const auto chain = make_chain(Shape::real, n, seed);
      const auto s = make_split(split, n, p, seed);
      const auto seq = irr::partition::nicol_plus<double>(chain, static_cast<std::size_t>(p));
      for (Path path : paths) {
        CAPTURE(static_cast<int>(path));
        const auto got = run(world, chain, s, irr::BlockingCut::optimal, path);
        require_valid(got.cut, chain, p, 1e-12);
        require_log_rounds(got.stats, p, path);
        // The distributed prefix sums add rank offsets to local running sums, so the part costs
        // differ from a sequential summation by rounding only; on one rank they are the same sums.
        if (p == 1) REQUIRE(got.cut.bottleneck == seq.bottleneck);
        REQUIRE(std::abs(got.cut.bottleneck - seq.bottleneck) <= 1e-12 * (1 + seq.bottleneck));
      }
    }
}

TEST_CASE("distributed windows on skewed chains and more ranks than leaves", "[blocking_cut]") {
  mpi::communicator world;
  const int p = world.size();
  unsigned seed = 2000;
  // Heavy leaves every few positions make UB large and the windows wide; runs of zeros put many
  // positions at one prefix value.
  for (Shape shape : int_shapes)
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{9}, std::size_t{300}, std::size_t{3000}})
      for (Split split : {Split::even, Split::random, Split::all_last, Split::alternate_empty}) {
        ++seed;
        CAPTURE(static_cast<int>(shape), n, static_cast<int>(split), p, seed);
        auto chain = make_chain(shape, n, seed);
        if (n > 2) chain[n / 2] = 5e6;  // one leaf above the average part
        const auto s = make_split(split, n, p, seed);
        const auto seq = irr::partition::nicol_plus<double>(chain, static_cast<std::size_t>(p));
        const auto got = run(world, chain, s, irr::BlockingCut::optimal, Path::distributed);
        require_valid(got.cut, chain, p, 0);
        REQUIRE(got.cut.bottleneck == seq.bottleneck);
        REQUIRE(got.cut.separators == std::vector<std::uint64_t>(seq.separators.begin(), seq.separators.end()));
        require_log_rounds(got.stats, p, Path::distributed);
      }
}

TEST_CASE("greedy blocking cut: valid separators within W/p + max load, constant rounds", "[blocking_cut]") {
  mpi::communicator world;
  const int p = world.size();
  unsigned seed = 3000;
  for (Shape shape : int_shapes)
    for (std::size_t n : {std::size_t{0}, std::size_t{4}, std::size_t{1000}})
      for (Split split : splits) {
        ++seed;
        CAPTURE(static_cast<int>(shape), n, static_cast<int>(split), p, seed);
        const auto chain = make_chain(shape, n, seed);
        const auto s = make_split(split, n, p, seed);
        const auto got = run(world, chain, s, irr::BlockingCut::greedy);
        require_valid(got.cut, chain, p, 0);
        double total = 0, wmax = 0;
        for (double w : chain) { total += w; wmax = std::max(wmax, w); }
        REQUIRE(got.cut.bottleneck <= total / p + wmax);
        REQUIRE(got.stats.collectives <= 4);
      }
}

TEST_CASE("a bad load on one rank makes every rank throw", "[blocking_cut]") {
  mpi::communicator world;
  const int p = world.size();
  for (double bad : {-1.0, std::nan(""), HUGE_VAL}) {
    auto chain = make_chain(Shape::uniform, 50, 7);
    chain[37] = bad;
    const auto s = make_split(Split::even, chain.size(), p, 1);
    for (auto method : {irr::BlockingCut::optimal, irr::BlockingCut::greedy})
      for (Path path : paths) REQUIRE_THROWS_AS(run(world, chain, s, method, path), irr::invalid_argument);
  }
}
