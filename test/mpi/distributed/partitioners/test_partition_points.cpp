// Distributed partition_points equals the serial call on the concatenation of all ranks' points
// (rank order), whatever the rank count and however unevenly the points are spread; bad input on
// one rank makes every rank throw the same collective_error before anything moves.
#include <catch2/catch.hpp>

#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>
#include <irregular/distributed/partitioners/partition_points.hpp>
#include <irregular/tree/partition_points.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;

namespace {

// Where rank r's points start in the global list: uneven shares, some ranks empty.
std::vector<std::size_t> shares(std::size_t n, int p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> cut{0, n};
  for (int r = 1; r < p; ++r) cut.push_back(rng() % 3 == 0 ? cut[1] / 2 : rng() % (n + 1));
  std::sort(cut.begin(), cut.end());
  return cut;  // p + 1 values
}

template <class C>
void parallel_equals_serial(const mpi::communicator& world, std::uint64_t seed, std::size_t n,
                            int weight_kind, bool lattice) {
  constexpr int D = C::dim;
  std::mt19937_64 rng(seed);  // every rank draws the same global input
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 0.05);
  std::vector<std::array<double, D>> pts(n);
  std::vector<double> w;
  for (std::size_t i = 0; i < n; ++i) {
    for (auto& x : pts[i]) {
      x = i % 2 ? std::clamp(0.3 + g(rng), 0.0, 1.0) : u(rng);
      if (lattice) x = std::floor(x * 4) / 4;
    }
    if (weight_kind == 1) w.push_back(pts[i][0] > 0.5 ? 4.0 : 1.0);
    if (weight_kind == 2) w.push_back(std::pow(u(rng), 3) * 10);
    if (weight_kind == 3) w.push_back(0.0);
  }
  irr::Box<D> box;
  box.lo.fill(0.0);
  box.hi.fill(1.0);
  const auto cut = shares(n, world.size(), seed + 1);
  const auto r = static_cast<std::size_t>(world.rank());
  const std::span<const std::array<double, D>> mine(pts.data() + cut[r], cut[r + 1] - cut[r]);
  const std::span<const double> my_w =
      w.empty() ? std::span<const double>{} : std::span<const double>(w.data() + cut[r], mine.size());
  for (const std::size_t P : {std::size_t{1}, std::size_t{2}, std::size_t{5}, std::size_t{64},
                              std::size_t{333}, std::max<std::size_t>(1, n / 2), std::max<std::size_t>(1, n),
                              n + 3}) {
    CAPTURE(seed, n, weight_kind, lattice, P, world.size());
    const auto serial = irr::partition_points<C>(box, pts, w, P);
    const auto par = irr::partition_points<C>(world, box, mine, my_w, P);
    REQUIRE(par.part.size() == mine.size());
    std::vector<std::vector<std::uint32_t>> all;
    mpi::all_gather(world, par.part, all);
    std::vector<std::uint32_t> joined;
    for (const auto& v : all) joined.insert(joined.end(), v.begin(), v.end());
    CHECK(joined == serial.part);
    CHECK(par.sizes == serial.sizes);
    CHECK(par.loads == serial.loads);
    CHECK(par.bottleneck == serial.bottleneck);
    if (n >= P) CHECK(par.empty_parts() == 0);
  }
}

template <class Error>
void same_error_everywhere(const mpi::communicator& world, const std::string& expect, int rank_expected,
                           auto&& call) {
  std::string what;
  int failing = -1;
  try {
    (void)call();
  } catch (const irr::collective_error& e) {
    what = e.what();
    failing = e.failing_rank();
  }
  CAPTURE(what, expect);
  CHECK(failing == rank_expected);
  CHECK_THAT(what, Catch::Contains(expect));
  std::vector<std::string> all;
  mpi::all_gather(world, what, all);
  for (const auto& s : all) CHECK(s == what);
}

}  // namespace

TEST_CASE("distributed partition_points equals the serial call", "[mpi][points]") {
  mpi::communicator world;
  parallel_equals_serial<irr::curve::Hilbert<2>>(world, 11, 2000, 1, false);
  parallel_equals_serial<irr::curve::Hilbert<2>>(world, 12, 1500, 0, true);
  parallel_equals_serial<irr::curve::Hilbert<2>>(world, 13, 1700, 2, false);
  parallel_equals_serial<irr::curve::Hilbert<2>>(world, 14, 300, 3, false);
  parallel_equals_serial<irr::curve::Morton<3>>(world, 15, 1200, 2, true);
  parallel_equals_serial<irr::curve::Peano<2>>(world, 16, 900, 1, false);
  parallel_equals_serial<irr::curve::Hilbert<2>>(world, 17, 5, 2, false);
  parallel_equals_serial<irr::curve::Hilbert<2>>(world, 18, 0, 0, false);
  for (std::uint64_t seed = 100; seed < 106; ++seed)
    parallel_equals_serial<irr::curve::Hilbert<2>>(world, seed, 400 + seed, static_cast<int>(seed % 3), seed % 2 == 0);
}

TEST_CASE("bad input on one rank: the same collective_error everywhere", "[mpi][points]") {
  mpi::communicator world;
  using C = irr::curve::Hilbert<2>;
  const irr::Box<2> box{{0, 0}, {1, 1}};
  const int last = world.size() - 1;
  std::vector<std::array<double, 2>> pts(6, {0.5, 0.5});
  std::vector<double> w(6, 1.0);

  auto bad = pts;
  if (world.rank() == last) bad[3] = {0.5, std::numeric_limits<double>::quiet_NaN()};
  same_error_everywhere<irr::collective_error>(world, "point 3", last,
      [&] { return irr::partition_points<C>(world, box, bad, w, 4); });

  auto bw = w;
  if (world.rank() == last || world.rank() == 0) bw[2] = -1.0;
  same_error_everywhere<irr::collective_error>(world, "weight of point 2", 0,
      [&] { return irr::partition_points<C>(world, box, pts, bw, 4); });

  const std::size_t n_here = world.rank() == last ? 5 : 6;
  same_error_everywhere<irr::collective_error>(world, "5 weights for 6 points", last,
      [&] { return irr::partition_points<C>(world, box, pts, std::span(w).first(n_here), 4); });

  same_error_everywhere<irr::collective_error>(world, "parts must be at least 1", 0,
      [&] { return irr::partition_points<C>(world, box, pts, w, 0); });

  if (world.size() > 1) {
    const std::size_t parts = world.rank() == last ? 3 : 4;
    same_error_everywhere<irr::collective_error>(world, "parts differs between ranks", 0,
        [&] { return irr::partition_points<C>(world, box, pts, w, parts); });
  }
  // Still usable afterwards.
  const auto ok = irr::partition_points<C>(world, box, pts, w, 4);
  CHECK(ok.part.size() == pts.size());
}
