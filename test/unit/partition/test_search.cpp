// Exhaustive tests of the monotone searches in core/detail/search.hpp on small ranges: every
// window, every boundary and every guess against a linear scan, plus the galloping cost bound.
#include <irregular/core/detail/search.hpp>

#include <catch2/catch.hpp>

#include <cstddef>

namespace {

// ceil(log2(x)) for x >= 1
std::size_t clog2(std::size_t x) {
  std::size_t r = 0;
  while ((std::size_t{1} << r) < x) ++r;
  return r;
}

}  // namespace

TEST_CASE("search: last/first true on every window and boundary", "[search]") {
  namespace d = irregular::detail;
  constexpr std::size_t N = 40;
  for (std::size_t lo = 0; lo <= N; ++lo)
    for (std::size_t hi = lo; hi <= N; ++hi)
      for (std::size_t t = lo; t <= hi; ++t) {  // pred true on [lo, t], false on (t, hi]
        CAPTURE(lo, hi, t);
        std::size_t calls = 0;
        auto pred = [&](std::size_t x) {
          ++calls;
          REQUIRE(x >= lo);
          REQUIRE(x <= hi);
          return x <= t;
        };
        CHECK(d::bisect_last_true(lo, hi + 1, pred) == t);
        calls = 0;
        CHECK(d::gallop_last_true(lo, hi, pred) == t);
        // exponential phase plus bisection of the last doubling: O(log(t - lo)) evaluations
        CHECK(calls <= 2 * clog2(t - lo + 2) + 1);
        for (std::size_t g = lo; g <= hi; ++g) {
          CAPTURE(g);
          calls = 0;
          CHECK(d::gallop_last_true_from(lo, hi, g, pred) == t);
          const std::size_t dist = g > t ? g - t : t - g;
          CHECK(calls <= 2 * clog2(dist + 2) + 2);
        }
        // false then true: first true is t + 1 on [lo, hi + 1]
        auto after = [&](std::size_t x) { return x > t; };
        CHECK(d::bisect_first_true(lo, hi + 1, after) == t + 1);
        CHECK(d::gallop_first_true_down(lo, hi + 1, after) == t + 1);
        if (t == lo) {  // all false before: first true at lo when it holds there
          auto from_lo = [&](std::size_t x) { return x >= lo; };
          CHECK(d::gallop_first_true_down(lo, hi, from_lo) == lo);
        }
      }
}
