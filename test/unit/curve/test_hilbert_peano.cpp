// Hilbert and Peano curves: exhaustive round trips, face-neighbour continuity, state-machine and
// contiguity checks, table paths against Skilling / per-level paths, __int128 depth, errors.
#include <catch2/catch.hpp>
#include <cstdint>
#include <irregular/core/error.hpp>
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/curve/peano.hpp>
#include <random>

#include "curve_checks.hpp"

using irregular::Cell;
using irregular::coord_t;
using irregular::uint128_t;
using irregular::curve::Hilbert;
using irregular::curve::Peano;

namespace {

template <int D>
Cell<D> random_cell(std::mt19937_64& rng, int arity, int level) {
  Cell<D> c;
  c.level = level;
  const coord_t n = irregular::ipow<coord_t>(static_cast<coord_t>(arity), level);
  for (int d = 0; d < D; ++d) c.anchor[d] = n == 0 ? rng() : rng() % n;
  return c;
}

// The table path of Hilbert<D> (D = 2, 3) gives exactly Skilling's transform at every level,
// and Skilling at the cell's level equals Skilling at a deeper level with the coordinates shifted
// up and the index shifted down (same root orientation at every level).
template <int D, class I>
void check_table_equals_skilling(std::uint64_t seed) {
  using H = Hilbert<D, I>;
  std::mt19937_64 rng(seed);
  for (int n = 0; n < 3000; ++n) {
    const int level = static_cast<int>(rng() % static_cast<std::uint64_t>(H::max_level + 1));
    const auto c = random_cell<D>(rng, 2, level);
    CAPTURE(seed, n, level);
    const I h = H::index(c);
    REQUIRE(h == irregular::detail::skilling_index<D, I>(c.anchor, level));
    REQUIRE(H::cell(h, level) == c);
    const int shift = H::max_level - level;
    auto up = c.anchor;
    for (auto& v : up) v <<= shift;
    REQUIRE((irregular::detail::skilling_index<D, I>(up, H::max_level) >> (D * shift)) == h);
  }
}

template <class C>
void check_random_round_trip(std::uint64_t seed, int min_level) {
  std::mt19937_64 rng(seed);
  for (int n = 0; n < 2000; ++n) {
    const int level =
        min_level +
        static_cast<int>(rng() % static_cast<std::uint64_t>(C::max_level - min_level + 1));
    const auto c = random_cell<C::dim>(rng, C::arity, level);
    CAPTURE(seed, n, level);
    const auto i = C::index(c);
    REQUIRE(C::cell(i, level) == c);
    // The finest-level interval of the cell contains the finest index of every descendant:
    // check one random descendant at max_level.
    Cell<C::dim> leaf = c;
    leaf.level = C::max_level;
    const coord_t f =
        irregular::ipow<coord_t>(static_cast<coord_t>(C::arity), C::max_level - level);
    for (int d = 0; d < C::dim; ++d) leaf.anchor[d] = c.anchor[d] * f + (f == 1 ? 0 : rng() % f);
    REQUIRE(irregular::curve::hnode_interval<C>(c).contains(C::index(leaf)));
    REQUIRE(irregular::curve::cell_of_finest<C>(C::index(leaf), level) == c);
  }
}

}  // namespace

TEST_CASE("Hilbert and Peano max_level", "[curve][hilbert][peano]") {
  STATIC_REQUIRE(Hilbert<2>::max_level == 31);
  STATIC_REQUIRE(Hilbert<3>::max_level == 21);
  STATIC_REQUIRE(Hilbert<4>::max_level == 15);
  STATIC_REQUIRE(Hilbert<2, uint128_t>::max_level == 63);
  STATIC_REQUIRE(Peano<1>::max_level == 40);
  STATIC_REQUIRE(Peano<2>::max_level == 20);
  STATIC_REQUIRE(Peano<3>::max_level == 13);
  STATIC_REQUIRE(Peano<2, std::uint32_t>::max_level == 10);
  STATIC_REQUIRE(Peano<2, uint128_t>::max_level == 40);
  STATIC_REQUIRE(Peano<3, uint128_t>::max_level == 26);
}

TEST_CASE("Hilbert round trip over every cell at small levels", "[curve][hilbert]") {
  for (int l = 0; l <= 10; ++l) curve_test::check_round_trip<Hilbert<1>>(l);
  for (int l = 0; l <= 6; ++l) curve_test::check_round_trip<Hilbert<2>>(l);
  for (int l = 0; l <= 4; ++l) curve_test::check_round_trip<Hilbert<3>>(l);
  for (int l = 0; l <= 3; ++l) curve_test::check_round_trip<Hilbert<4>>(l);
  for (int l = 0; l <= 2; ++l) curve_test::check_round_trip<Hilbert<5>>(l);
  for (int l = 0; l <= 2; ++l) curve_test::check_round_trip<Hilbert<6>>(l);
  for (int l = 0; l <= 1; ++l) curve_test::check_round_trip<Hilbert<7>>(l);
  for (int l = 0; l <= 1; ++l) curve_test::check_round_trip<Hilbert<8>>(l);
  for (int l = 0; l <= 3; ++l) curve_test::check_round_trip<Hilbert<2, std::uint32_t>>(l);
}

TEST_CASE("Hilbert consecutive cells are face neighbours", "[curve][hilbert]") {
  for (int l = 1; l <= 10; ++l) curve_test::check_continuity<Hilbert<1>>(l);
  for (int l = 1; l <= 6; ++l) curve_test::check_continuity<Hilbert<2>>(l);
  for (int l = 1; l <= 4; ++l) curve_test::check_continuity<Hilbert<3>>(l);
  for (int l = 1; l <= 3; ++l) curve_test::check_continuity<Hilbert<4>>(l);
  for (int l = 1; l <= 2; ++l) curve_test::check_continuity<Hilbert<5>>(l);
  curve_test::check_continuity<Hilbert<8>>(1);
  curve_test::check_continuity<Hilbert<3, uint128_t>>(3);
}

TEST_CASE("Hilbert traversal state machine and contiguous descendants", "[curve][hilbert]") {
  curve_test::check_traversal<Hilbert<1>>(6);
  curve_test::check_traversal<Hilbert<2>>(5);
  curve_test::check_traversal<Hilbert<3>>(3);
  curve_test::check_traversal<Hilbert<4>>(2);
  curve_test::check_traversal<Hilbert<5>>(2);
  curve_test::check_traversal<Hilbert<2, uint128_t>>(3);
}

TEST_CASE("Hilbert 2D/3D tables equal Skilling's transform", "[curve][hilbert]") {
  check_table_equals_skilling<2, std::uint64_t>(101);
  check_table_equals_skilling<3, std::uint64_t>(102);
  check_table_equals_skilling<2, uint128_t>(103);
  check_table_equals_skilling<3, uint128_t>(104);
  check_table_equals_skilling<2, std::uint32_t>(105);
}

TEST_CASE("Hilbert random round trips, also beyond 64-bit indices", "[curve][hilbert]") {
  check_random_round_trip<Hilbert<2>>(201, 0);
  check_random_round_trip<Hilbert<3>>(202, 0);
  check_random_round_trip<Hilbert<4>>(203, 0);
  check_random_round_trip<Hilbert<7>>(204, 0);
  check_random_round_trip<Hilbert<2, uint128_t>>(205, 33);
  check_random_round_trip<Hilbert<3, uint128_t>>(206, 22);
  check_random_round_trip<Hilbert<5, uint128_t>>(207, 13);
  // Deeper index types give the same index: the curve does not depend on max_level.
  std::mt19937_64 rng(208);
  for (int n = 0; n < 500; ++n) {
    const int level = static_cast<int>(rng() % 22);
    const auto c = random_cell<3>(rng, 2, level);
    CAPTURE(n, level);
    REQUIRE(static_cast<uint128_t>(Hilbert<3>::index(c)) == Hilbert<3, uint128_t>::index(c));
  }
}

TEST_CASE("Peano round trip over every cell at small levels", "[curve][peano]") {
  for (int l = 0; l <= 7; ++l) curve_test::check_round_trip<Peano<1>>(l);
  for (int l = 0; l <= 4; ++l) curve_test::check_round_trip<Peano<2>>(l);
  for (int l = 0; l <= 3; ++l) curve_test::check_round_trip<Peano<3>>(l);
  for (int l = 0; l <= 2; ++l) curve_test::check_round_trip<Peano<4>>(l);
  for (int l = 0; l <= 3; ++l) curve_test::check_round_trip<Peano<2, uint128_t>>(l);
}

TEST_CASE("Peano consecutive cells are face neighbours", "[curve][peano]") {
  for (int l = 1; l <= 7; ++l) curve_test::check_continuity<Peano<1>>(l);
  for (int l = 1; l <= 5; ++l) curve_test::check_continuity<Peano<2>>(l);
  for (int l = 1; l <= 3; ++l) curve_test::check_continuity<Peano<3>>(l);
  for (int l = 1; l <= 2; ++l) curve_test::check_continuity<Peano<4>>(l);
  curve_test::check_continuity<Peano<3, uint128_t>>(2);
}

TEST_CASE("Peano traversal state machine and contiguous descendants", "[curve][peano]") {
  curve_test::check_traversal<Peano<1>>(5);
  curve_test::check_traversal<Peano<2>>(3);
  curve_test::check_traversal<Peano<3>>(2);
  curve_test::check_traversal<Peano<4>>(1);
  curve_test::check_traversal<Peano<2, uint128_t>>(2);
}

TEST_CASE("Peano tables equal the per-level path; __int128 depth", "[curve][peano]") {
  std::mt19937_64 rng(301);
  for (int n = 0; n < 3000; ++n) {
    const int level2 = static_cast<int>(rng() % 21);
    const auto c2 = random_cell<2>(rng, 3, level2);
    const int level3 = static_cast<int>(rng() % 14);
    const auto c3 = random_cell<3>(rng, 3, level3);
    CAPTURE(n, level2, level3);
    REQUIRE(Peano<2>::index(c2) ==
            irregular::detail::peano_index_generic<2, std::uint64_t>(c2.anchor, level2));
    REQUIRE(Peano<3>::index(c3) ==
            irregular::detail::peano_index_generic<3, std::uint64_t>(c3.anchor, level3));
    REQUIRE(static_cast<uint128_t>(Peano<2>::index(c2)) == Peano<2, uint128_t>::index(c2));
  }
  check_random_round_trip<Peano<2>>(302, 0);
  check_random_round_trip<Peano<3>>(303, 0);
  check_random_round_trip<Peano<5>>(304, 0);
  check_random_round_trip<Peano<2, std::uint32_t>>(305, 0);
  check_random_round_trip<Peano<2, uint128_t>>(306, 21);  // indices need more than 64 bits
  check_random_round_trip<Peano<3, uint128_t>>(307, 14);
}

TEST_CASE("Hilbert and Peano reject out-of-range cells", "[curve][hilbert][peano]") {
  using irregular::curve::checked_index;
  REQUIRE_THROWS_AS(Hilbert<2>::index(Cell<2>{{0, 8}, 3}), irregular::assertion_failure);
  REQUIRE_THROWS_AS(Hilbert<3>::index(Cell<3>{{0, 0, 0}, 22}), irregular::assertion_failure);
  REQUIRE_THROWS_AS(Hilbert<4>::index(Cell<4>{{0, 0, 4, 0}, 2}), irregular::assertion_failure);
  REQUIRE_THROWS_AS(Hilbert<2>::cell(64, 3), irregular::assertion_failure);
  REQUIRE_THROWS_AS(Peano<2>::index(Cell<2>{{9, 0}, 2}), irregular::assertion_failure);
  REQUIRE_THROWS_AS(Peano<2>::index(Cell<2>{{0, 0}, 21}), irregular::assertion_failure);
  REQUIRE_THROWS_AS(Peano<3>::cell(729, 2), irregular::assertion_failure);
  REQUIRE_THROWS_AS(Peano<2>::cell(0, -1), irregular::assertion_failure);
  REQUIRE_THROWS_AS(checked_index<Peano<2>>(Cell<2>{{0, 9}, 2}), irregular::invalid_argument);
  REQUIRE_THROWS_AS(checked_index<Peano<3>>(Cell<3>{{0, 0, 0}, 14}), irregular::invalid_argument);
  REQUIRE_THROWS_AS(checked_index<Hilbert<2>>(Cell<2>{{4, 0}, 2}), irregular::invalid_argument);
  REQUIRE_THROWS_AS(checked_index<Hilbert<5>>(Cell<5>{{}, 13}), irregular::invalid_argument);
  REQUIRE(checked_index<Peano<2>>(Cell<2>{{8, 8}, 2}) == Peano<2>::index(Cell<2>{{8, 8}, 2}));
}
