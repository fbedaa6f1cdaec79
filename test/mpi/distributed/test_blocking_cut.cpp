// blocking_partition under MPI: the distributed optimal cut equals sequential NicolPlus on the
// gathered chain (bottleneck, and separators when the windows are gathered), its separators are
// valid, and the number of collective rounds does not grow with the number of ranks.
#include <catch2/catch.hpp>

#include <irregular/distributed/blocking_partitioner.hpp>
#include <irregular/partition/nicol_plus.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
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

Run run(const mpi::communicator& world, const std::vector<double>& chain, const std::vector<std::size_t>& split,
        irr::BlockingCut method = irr::BlockingCut::optimal, std::uint64_t max_gathered = 0) {
  const auto r = static_cast<std::size_t>(world.rank());
  const std::span<const double> mine(chain.data() + split[r], split[r + 1] - split[r]);
  Run out;
  out.cut = irr::blocking_partition(world, mine, method, &out.stats, max_gathered);
  return out;
}

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

// Rounds bound for the whole call: c·log2(p) + d collectives, no point-to-point hops.
void require_log_rounds(const irr::BlockingCutStats& s, int p) {
  REQUIRE(s.point_to_point == 0);
  REQUIRE(static_cast<double>(s.collectives) <= 2 * std::log2(static_cast<double>(p)) + 6);
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
        const auto got = run(world, chain, s);
        require_valid(got.cut, chain, p, 0);
        REQUIRE(got.cut.bottleneck == seq.bottleneck);
        // The windows of these chains are small: they are gathered, and the separators are the
        // sequential balanced ones.
        REQUIRE(got.stats.windowed);
        std::vector<std::uint64_t> seq_seps(seq.separators.begin(), seq.separators.end());
        REQUIRE(got.cut.separators == seq_seps);
        REQUIRE(got.cut.loads == seq.loads);
        require_log_rounds(got.stats, p);
        // The gathered windows stay well below the chain (a few positions per part around the
        // ideal cut), and with the few huge loads of skewed chains they stay below it.
        if (shape == Shape::uniform && n >= 1000) REQUIRE(got.stats.gathered <= 2 * static_cast<std::uint64_t>(p * p) + 8 * p);
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
      const auto got = run(world, chain, s);
      require_valid(got.cut, chain, p, 1e-12);
      require_log_rounds(got.stats, p);
      // The distributed prefix sums add rank offsets to local running sums, so the part costs
      // differ from a sequential summation by rounding only; on one rank they are the same sums.
      if (p == 1) REQUIRE(got.cut.bottleneck == seq.bottleneck);
      REQUIRE(std::abs(got.cut.bottleneck - seq.bottleneck) <= 1e-12 * (1 + seq.bottleneck));
    }
}

TEST_CASE("windows too large for rank 0: the pipelined fallback is still optimal", "[blocking_cut]") {
  mpi::communicator world;
  const int p = world.size();
  unsigned seed = 2000;
  for (Shape shape : int_shapes)
    for (std::size_t n : {std::size_t{2}, std::size_t{300}})
      for (Split split : {Split::even, Split::random, Split::all_last}) {
        ++seed;
        CAPTURE(static_cast<int>(shape), n, static_cast<int>(split), p, seed);
        const auto chain = make_chain(shape, n, seed);
        const auto s = make_split(split, n, p, seed);
        const auto seq = irr::partition::nicol_plus<double>(chain, static_cast<std::size_t>(p));
        const auto got = run(world, chain, s, irr::BlockingCut::optimal, 1);
        require_valid(got.cut, chain, p, 0);
        REQUIRE(got.cut.bottleneck == seq.bottleneck);
        // Gathering one position at most: only p <= 2 (or tiny chains) keep the windows.
        if (!got.stats.windowed) REQUIRE(got.stats.probes > 0);
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
      REQUIRE_THROWS_AS(run(world, chain, s, method), irr::invalid_argument);
  }
}
