// Morton curve, interval helpers and CurveKind: naive bit-interleaving oracle, exhaustive round
// trips and state-machine checks, BMI2 == portable, __int128 depth, precondition errors.
#include <catch2/catch.hpp>
#include <cstdint>
#include <irregular/core/error.hpp>
#include <irregular/curve/curve_kind.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/curve/morton.hpp>
#include <random>

#include "curve_checks.hpp"

using irregular::Cell;
using irregular::coord_t;
using irregular::uint128_t;
using irregular::curve::Morton;

namespace {

// Independent oracle: bit j of axis d goes to bit j*D + d, one bit at a time.
template <int D, class I>
I naive_interleave(const Cell<D>& c) {
  I r = 0;
  for (int j = 0; j < c.level; ++j)
    for (int d = 0; d < D; ++d) r |= static_cast<I>((c.anchor[d] >> j) & 1U) << (j * D + d);
  return r;
}

template <int D, class I>
Cell<D> random_cell(std::mt19937_64& rng, int level) {
  Cell<D> c;
  c.level = level;
  for (int d = 0; d < D; ++d) c.anchor[d] = level == 0 ? 0 : (rng() >> (64 - level));
  return c;
}

template <int D, class I>
void check_against_oracle(std::uint64_t seed) {
  using M = Morton<D, I>;
  std::mt19937_64 rng(seed);
  for (int n = 0; n < 2000; ++n) {
    const int level = static_cast<int>(rng() % static_cast<std::uint64_t>(M::max_level + 1));
    const auto c = random_cell<D, I>(rng, level);
    CAPTURE(seed, D, level, n);
    REQUIRE(M::index(c) == naive_interleave<D, I>(c));
    REQUIRE(M::cell(M::index(c), level) == c);
  }
}

template <int D>
void check_bmi2_matches_portable(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  constexpr int bits = irregular::detail::morton_chunk_bits<D>;
  for (int n = 0; n < 5000; ++n) {
    std::array<coord_t, D> x{};
    for (auto& v : x) v = bits >= 64 ? rng() : (rng() >> (64 - bits));
    const std::uint64_t portable = irregular::detail::morton_encode_portable<D>(x);
    CAPTURE(seed, D, n);
    REQUIRE(irregular::detail::morton_decode_portable<D>(portable) == x);
#if defined(__BMI2__)
    REQUIRE(irregular::detail::morton_encode_bmi2<D>(x) == portable);
    REQUIRE(irregular::detail::morton_decode_bmi2<D>(portable) == x);
#endif
  }
}

}  // namespace

TEST_CASE("Morton max_level fits the index type and coord_t", "[curve][morton]") {
  STATIC_REQUIRE(Morton<1>::max_level == 63);
  STATIC_REQUIRE(Morton<2>::max_level == 31);
  STATIC_REQUIRE(Morton<3>::max_level == 21);
  STATIC_REQUIRE(Morton<8>::max_level == 7);
  STATIC_REQUIRE(Morton<2, std::uint32_t>::max_level == 15);
  STATIC_REQUIRE(Morton<3, uint128_t>::max_level == 42);
  STATIC_REQUIRE(Morton<1, uint128_t>::max_level == 63);  // limited by coord_t
  STATIC_REQUIRE(irregular::SpaceFillingCurve<Morton<5, std::uint32_t>>);
}

TEST_CASE("Morton equals the bit-interleaving definition", "[curve][morton]") {
  const std::uint64_t seed = 12345;
  check_against_oracle<1, std::uint64_t>(seed);
  check_against_oracle<2, std::uint64_t>(seed + 1);
  check_against_oracle<3, std::uint64_t>(seed + 2);
  check_against_oracle<4, std::uint64_t>(seed + 3);
  check_against_oracle<5, std::uint64_t>(seed + 4);
  check_against_oracle<6, std::uint64_t>(seed + 5);
  check_against_oracle<7, std::uint64_t>(seed + 6);
  check_against_oracle<8, std::uint64_t>(seed + 7);
  check_against_oracle<2, std::uint32_t>(seed + 8);
  check_against_oracle<3, std::uint32_t>(seed + 9);
}

TEST_CASE("Morton __int128 indices round-trip beyond 64 bits", "[curve][morton]") {
  const std::uint64_t seed = 777;
  check_against_oracle<1, uint128_t>(seed);
  check_against_oracle<2, uint128_t>(seed + 1);
  check_against_oracle<3, uint128_t>(seed + 2);
  check_against_oracle<5, uint128_t>(seed + 3);
  check_against_oracle<8, uint128_t>(seed + 4);
  // A level whose indices need more than 64 bits.
  using M = Morton<3, uint128_t>;
  Cell<3> c{{(coord_t{1} << 40) - 1, 12345, coord_t{1} << 39}, 40};
  const uint128_t i = M::index(c);
  REQUIRE((i >> 64) != 0);
  REQUIRE(i == naive_interleave<3, uint128_t>(c));
  REQUIRE(M::cell(i, 40) == c);
}

TEST_CASE("Morton round trip over every cell at small levels", "[curve][morton]") {
  for (int l = 0; l <= 12; ++l) curve_test::check_round_trip<Morton<1>>(l);
  for (int l = 0; l <= 6; ++l) curve_test::check_round_trip<Morton<2>>(l);
  for (int l = 0; l <= 4; ++l) curve_test::check_round_trip<Morton<3>>(l);
  for (int l = 0; l <= 3; ++l) curve_test::check_round_trip<Morton<4>>(l);
  for (int l = 0; l <= 2; ++l) curve_test::check_round_trip<Morton<5>>(l);
  for (int l = 0; l <= 2; ++l) curve_test::check_round_trip<Morton<6>>(l);
  for (int l = 0; l <= 2; ++l) curve_test::check_round_trip<Morton<7>>(l);
  for (int l = 0; l <= 1; ++l) curve_test::check_round_trip<Morton<8>>(l);
}

TEST_CASE("Morton traversal state machine and contiguous descendants", "[curve][morton]") {
  curve_test::check_traversal<Morton<1>>(6);
  curve_test::check_traversal<Morton<2>>(4);
  curve_test::check_traversal<Morton<3>>(3);
  curve_test::check_traversal<Morton<4, std::uint32_t>>(2);
  curve_test::check_traversal<Morton<3, uint128_t>>(2);
}

TEST_CASE("Morton BMI2 path equals the portable path", "[curve][morton]") {
  check_bmi2_matches_portable<1>(1);
  check_bmi2_matches_portable<2>(2);
  check_bmi2_matches_portable<3>(3);
  check_bmi2_matches_portable<4>(4);
  check_bmi2_matches_portable<5>(5);
  check_bmi2_matches_portable<6>(6);
  check_bmi2_matches_portable<7>(7);
  check_bmi2_matches_portable<8>(8);
}

TEST_CASE("Morton rejects out-of-range cells", "[curve][morton]") {
  using M = Morton<2>;
  using irregular::curve::checked_index;
  REQUIRE_THROWS_AS(M::index(Cell<2>{{4, 0}, 2}), irregular::assertion_failure);
  REQUIRE_THROWS_AS(M::index(Cell<2>{{0, 0}, 32}), irregular::assertion_failure);
  REQUIRE_THROWS_AS(M::index(Cell<2>{{0, 0}, -1}), irregular::assertion_failure);
  REQUIRE_THROWS_AS(M::cell(16, 2), irregular::assertion_failure);
  REQUIRE_THROWS_AS(M::cell(0, 32), irregular::assertion_failure);
  REQUIRE_THROWS_AS(checked_index<M>(Cell<2>{{0, 4}, 2}), irregular::invalid_argument);
  REQUIRE_THROWS_AS(checked_index<M>(Cell<2>{{0, 0}, 32}), irregular::invalid_argument);
  REQUIRE_THROWS_AS(checked_index<M>(Cell<2>{{0, 0}, -3}), irregular::invalid_argument);
  REQUIRE(checked_index<M>(Cell<2>{{3, 3}, 2}) == 15);
  REQUIRE(checked_index<M>(Cell<2>{{1, 0}, 1}) == 1);
  REQUIRE(checked_index<M>(Cell<2>{{0, 1}, 1}) == 2);
}

TEST_CASE("Morton hnode intervals at the finest level", "[curve][morton]") {
  using M = Morton<2>;
  using namespace irregular::curve;
  const auto root = hnode_interval<M>(Cell<2>{});
  REQUIRE(root.start == 0);
  REQUIRE(root.end == (std::uint64_t{1} << 62));
  const auto c = hnode_interval<M>(Cell<2>{{1, 1}, 1});
  REQUIRE(c.start == 3 * (std::uint64_t{1} << 60));
  REQUIRE(c.size() == (std::uint64_t{1} << 60));
  const Cell<2> leaf{{(coord_t{1} << 31) - 1, 5}, 31};
  REQUIRE(hnode_interval<M>(leaf).size() == 1);
  REQUIRE(cell_of_finest<M>(finest_index<M>(leaf), 31) == leaf);
  REQUIRE(cell_of_finest<M>(finest_index<M>(leaf), 0) == Cell<2>{});
}

TEST_CASE("CurveKind parses and prints curve names", "[curve]") {
  using namespace irregular::curve;
  for (auto k : {CurveKind::morton, CurveKind::hilbert, CurveKind::peano})
    REQUIRE(parse_curve_kind(to_string(k)) == k);
  REQUIRE(to_string(CurveKind::hilbert) == "hilbert");
  REQUIRE_THROWS_AS(parse_curve_kind("zorder"), irregular::invalid_argument);
  REQUIRE_THROWS_AS(parse_curve_kind(""), irregular::invalid_argument);
}
