// sort_pairs (tree/detail/pair_sort.hpp), the in-cache finishing sort of the local sort by key,
// against std::stable_sort: uniform, clustered (deep recursion), duplicate-heavy and outlier
// keys, 32-, 64- and 128-bit, at lengths around the insertion-sort cut-off.
#include <irregular/core/index.hpp>
#include <irregular/tree/detail/pair_sort.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace {

template <class Index>
struct Rec {
  Index key;
  std::uint32_t pos;
};

template <class Index>
void check(const std::vector<Index>& keys) {
  std::vector<Rec<Index>> v, scratch;
  for (std::size_t i = 0; i < keys.size(); ++i) v.push_back({keys[i], static_cast<std::uint32_t>(i)});
  auto expect = v;
  std::stable_sort(expect.begin(), expect.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  std::vector<std::uint32_t> count;
  irregular::detail::sort_pairs(v, scratch, count);
  REQUIRE(v.size() == expect.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    REQUIRE(v[i].key == expect[i].key);
    REQUIRE(v[i].pos == expect[i].pos);  // stable: equal keys keep their input order
  }
}

template <class Index>
std::vector<Index> make(std::size_t n, int kind, std::mt19937_64& rng) {
  std::vector<Index> k(n);
  const auto wide = [&] { return static_cast<Index>((static_cast<Index>(rng()) << (sizeof(Index) > 8 ? 64 : 0)) ^ rng()); };
  for (std::size_t i = 0; i < n; ++i) switch (kind) {
      case 0: k[i] = wide(); break;                                             // uniform over every bit
      case 1: k[i] = static_cast<Index>(rng() % 7); break;                      // few distinct keys
      case 2: k[i] = i % 97 == 0 ? wide() : static_cast<Index>(1000 + rng() % 50); break;  // cluster and outliers
      case 3: k[i] = static_cast<Index>(static_cast<Index>(i) << (sizeof(Index) * 8 - 24)); break;  // sorted, low bits zero
      default: k[i] = static_cast<Index>((n - i) / 3); break;                   // descending runs of equal keys
    }
  return k;
}

template <class Index>
void every_case() {
  std::mt19937_64 rng(11);
  for (const std::size_t n : {0, 1, 2, 15, 16, 17, 33, 300, 5000, 65536})
    for (int kind = 0; kind < 5; ++kind) {
      CAPTURE(n, kind, sizeof(Index));
      check(make<Index>(n, kind, rng));
    }
}

}  // namespace

TEST_CASE("sort_pairs equals std::stable_sort (32-, 64-, 128-bit keys)", "[pair_sort]") {
  every_case<std::uint32_t>();
  every_case<std::uint64_t>();
  every_case<irregular::uint128_t>();
}
