// SpliceVector (the store's arrays) against std::vector: random sequences of every operation the
// library uses, with open_around checked against its definition (low ++ kept ++ high), the
// promise that a splice within the room moves nothing, and the pool that hands released blocks,
// pages mapped, to the next array.
#include <irregular/core/block_pool.hpp>
#include <irregular/core/detail/headroom.hpp>
#include <irregular/core/detail/splice_vector.hpp>
#include <irregular/core/detail/open_around.hpp>

#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <random>
#include <span>
#include <vector>

namespace {

using irregular::detail::SpliceVector;

struct Rec {  // a trivially copyable record with padding, like an element
  std::uint64_t key;
  std::uint8_t level;
  friend bool operator==(const Rec&, const Rec&) = default;
};

template <class T>
bool same(const SpliceVector<T>& s, const std::vector<T>& v) {
  return s.size() == v.size() && std::equal(s.begin(), s.end(), v.begin());
}

// The share of the pages under [from, from + n) that are mapped (mincore).
double resident_share(const std::uint64_t* from, std::size_t n) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto lo = reinterpret_cast<std::uintptr_t>(from) & ~(page - 1);
  const auto hi = reinterpret_cast<std::uintptr_t>(from + n);
  std::vector<unsigned char> in((hi - lo + page - 1) / page);
  REQUIRE(mincore(reinterpret_cast<void*>(lo), hi - lo, in.data()) == 0);
  std::size_t mapped = 0;
  for (unsigned char c : in) mapped += c & 1u;
  return static_cast<double>(mapped) / static_cast<double>(in.size());
}

}  // namespace

TEST_CASE("SpliceVector: random operations agree with std::vector", "[splice_vector]") {
  std::mt19937_64 rng(20261123);
  for (int round = 0; round < 200; ++round) {
    SpliceVector<Rec> s;
    std::vector<Rec> v;
    std::uint64_t next = 0;
    auto fresh = [&] { return Rec{next++, static_cast<std::uint8_t>(next % 31)}; };
    for (int op = 0; op < 200; ++op) {
      const auto n = v.size();
      const auto pick = [&](std::size_t hi) { return hi == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % (hi + 1)); };
      switch (rng() % 12) {
        case 0: {
          const Rec r = fresh();
          s.push_back(r);
          v.push_back(r);
          break;
        }
        case 1:
          if (n) {
            const std::size_t x = pick(n - 1);
            s.push_back(s[x]);  // a value of its own, across a reallocation
            v.push_back(v[x]);
          }
          break;
        case 2: {
          const std::size_t m = pick(2 * n + 3);
          s.resize(m);
          v.resize(m);
          break;
        }
        case 3: {
          const std::size_t at = pick(n), k = pick(5);
          std::vector<Rec> add;
          for (std::size_t i = 0; i < k; ++i) add.push_back(fresh());
          s.insert(s.begin() + at, add.begin(), add.end());
          v.insert(v.begin() + static_cast<std::ptrdiff_t>(at), add.begin(), add.end());
          break;
        }
        case 4:
          if (n) {
            const std::size_t a = pick(n - 1), b = a + pick(n - a);
            s.erase(s.begin() + a, s.begin() + b);
            v.erase(v.begin() + static_cast<std::ptrdiff_t>(a), v.begin() + static_cast<std::ptrdiff_t>(b));
          }
          break;
        case 5: {
          // open_around: keep [a, b), k values in front and h behind, then fill them.
          const std::size_t a = pick(n), b = a + pick(n - a), k = pick(n + 4), h = pick(n + 4);
          std::vector<Rec> low, high;
          for (std::size_t i = 0; i < k; ++i) low.push_back(fresh());
          for (std::size_t i = 0; i < h; ++i) high.push_back(fresh());
          std::vector<Rec> want(low);
          want.insert(want.end(), v.begin() + static_cast<std::ptrdiff_t>(a), v.begin() + static_cast<std::ptrdiff_t>(b));
          want.insert(want.end(), high.begin(), high.end());
          irregular::detail::open_around(s, a, b, k, h);
          REQUIRE(s.size() == want.size());
          std::copy(low.begin(), low.end(), s.begin());
          std::copy(high.begin(), high.end(), s.begin() + (k + b - a));
          v = want;
          break;
        }
        case 6:
          irregular::detail::reserve_headroom(s, n);
          REQUIRE(s.front_room() >= n / 4);
          REQUIRE(s.capacity() >= n + n / 4);
          break;
        case 7: {
          SpliceVector<Rec> copy(s);
          REQUIRE(copy == s);
          SpliceVector<Rec> moved(std::move(copy));
          REQUIRE(moved == s);
          s.swap(moved);
          break;
        }
        case 8:
          s.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(pick(n)));
          v.resize(s.size());
          break;
        case 9:
          if (n) {
            s.pop_back();
            v.pop_back();
          }
          break;
        case 10:
          s.shrink_to_fit();
          REQUIRE(s.capacity() == s.size());
          break;
        case 11: {
          const std::size_t m = pick(n + 8);
          irregular::detail::resize_for_overwrite(s, m);
          for (std::size_t i = n; i < m; ++i) s[i] = Rec{};
          v.resize(m);
          break;
        }
      }
      REQUIRE(same(s, v));
      REQUIRE(s.size() <= s.capacity());
    }
  }
}

TEST_CASE("SpliceVector: a splice within the room moves nothing and fills nothing", "[splice_vector]") {
  SpliceVector<std::uint64_t> s;
  for (std::uint64_t i = 0; i < 1000; ++i) s.push_back(i);
  irregular::detail::reserve_headroom(s, s.size());
  REQUIRE(s.front_room() >= 250);
  const std::uint64_t* kept = s.data() + 100;
  // Leaves [0, 100) and [900, 1000), keeps [100, 900), 200 arrive in front and 300 behind.
  irregular::detail::open_around(s, 100, 900, 200, 300);
  REQUIRE(s.size() == 1300);
  REQUIRE(s.data() + 200 == kept);  // the kept run did not move
  for (std::size_t i = 0; i < 800; ++i) REQUIRE(s[200 + i] == 100 + i);
  // A splice that does not fit the room on its side still keeps the order.
  irregular::detail::open_around(s, 0, 1300, 5000, 0);
  REQUIRE(s.size() == 6300);
  for (std::size_t i = 0; i < 800; ++i) REQUIRE(s[5200 + i] == 100 + i);
  // With a transform, as the offsets' splice.
  irregular::detail::open_around(s, 5200, 6000, 0, 0, [](std::uint64_t x) { return x + 7; });
  REQUIRE(s.size() == 800);
  for (std::size_t i = 0; i < 800; ++i) REQUIRE(s[i] == 107 + i);
  // Spans see the values.
  const std::span<const std::uint64_t> view(s);
  REQUIRE(view.size() == 800);
  REQUIRE(view.front() == 107);
}

TEST_CASE("SpliceVector: touch_room maps the room's pages, keeps the values, and runs once", "[splice_vector]") {
  irregular::release_array_blocks();  // a kept block would have its pages mapped already
  SpliceVector<std::uint64_t> s;
  for (std::uint64_t i = 0; i < 1000; ++i) s.push_back(i);
  // 64 MiB in all: above any malloc mmap threshold, so the room starts unmapped.
  const std::size_t room = std::size_t{4} << 20;
  s.reserve_room(room, room);
  REQUIRE(s.front_room() == room);
  const std::uint64_t* front = s.data() - s.front_room();
  const std::uint64_t* back = s.data() + s.size();
  const std::size_t back_n = s.capacity() - s.size();
  // Fresh pages are unmapped, unless malloc fills what it hands out (meson sets MALLOC_PERTURB_).
  const char* perturb = std::getenv("MALLOC_PERTURB_");
  if (perturb == nullptr || std::atoi(perturb) == 0) {
    REQUIRE(resident_share(front, room) < 0.5);
    REQUIRE(resident_share(back, back_n) < 0.5);
  }
  // Values planted at both ends and the middle of each side: touch_room writes every slot.
  auto* f = s.data() - s.front_room();
  auto* b = s.data() + s.size();
  for (auto* at : {f, f + room / 2, f + room - 1, b, b + back_n / 2, b + back_n - 1}) *at = 7;
  s.touch_room();
  for (auto* at : {f, f + room / 2, f + room - 1, b, b + back_n / 2, b + back_n - 1}) REQUIRE(*at == 0);
  REQUIRE(resident_share(front, room) == 1.0);
  REQUIRE(resident_share(back, back_n) == 1.0);
  for (std::uint64_t i = 0; i < 1000; ++i) REQUIRE(s[i] == i);
  // Once per allocation: a second call writes nothing (a value planted in the room survives).
  s.data()[-1] = 42;
  s.touch_room();
  REQUIRE(s.data()[-1] == 42);
  // A new allocation is written again.
  s.shrink_to_fit();
  s.reserve_room(8, 16);
  s.data()[-1] = 42;
  s.touch_room();
  REQUIRE(s.data()[-1] == 0);
}

TEST_CASE("BlockPool: a released array's block, pages mapped, goes to the next array of about its size", "[splice_vector]") {
  using irregular::detail::BlockPool;
  irregular::release_array_blocks();
  REQUIRE(irregular::array_blocks_held() == 0);
  const std::size_t n = std::size_t{1} << 18;  // 2 MiB of values
  const std::uint64_t* first = nullptr;
  {
    SpliceVector<std::uint64_t> a;
    a.reserve(n);
    for (std::uint64_t i = 0; i < n; ++i) a.push_back(i);  // every page written
    first = a.data();
  }
  REQUIRE(irregular::array_blocks_held() == n * sizeof(std::uint64_t));
  {
    // The next array of about that size gets the same block, its pages still mapped.
    SpliceVector<std::uint64_t> b;
    b.reserve(n - 1000);
    REQUIRE(b.data() == first);
    REQUIRE(b.capacity() >= n);  // the whole block: a reused block may hold more than asked
    REQUIRE(irregular::array_blocks_held() == 0);
    REQUIRE(resident_share(b.data(), n) == 1.0);
    // An array less than half the block's size does not take it.
    SpliceVector<std::uint64_t> c;
    c.reserve(n / 4);
    REQUIRE(c.data() != first);
  }
  // Caps: at most 16 blocks and 256 MiB kept, the oldest dropped first; small blocks never.
  irregular::release_array_blocks();
  std::vector<BlockPool::Block> blocks;
  for (int i = 0; i < 20; ++i) blocks.push_back(BlockPool::take(std::size_t{1} << 20));
  for (const auto& b : blocks) BlockPool::give(b);
  REQUIRE(irregular::array_blocks_held() == std::size_t{16} << 20);
  BlockPool::give(BlockPool::take(std::size_t{200} << 20));  // 16 + 200 MiB: fits by count only after evictions
  REQUIRE(irregular::array_blocks_held() <= irregular::detail::block_pool_bytes);
  const std::size_t before = irregular::array_blocks_held();
  BlockPool::give(BlockPool::take(1024));
  REQUIRE(irregular::array_blocks_held() == before);
  irregular::release_array_blocks();
  REQUIRE(irregular::array_blocks_held() == 0);
}
