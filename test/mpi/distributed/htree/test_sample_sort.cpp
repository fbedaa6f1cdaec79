// sample_sort under MPI: every rank's run is sorted and inside its bounds, the concatenation is
// the sequential stable sort of all input (ties by source rank, then position), the per-rank
// counts meet the stated balance bound (ceil(N/p) + M, M the most copies of one key), the
// global order does not depend on the rank count, and the splitter selection costs every rank
// the same O(p) traffic (no root gathering O(p^2) samples).
#include <catch2/catch.hpp>

#include <irregular/core/index.hpp>
#include <irregular/distributed/htree/sample_sort.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/vector.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;

namespace {

constexpr int tag = 4711;

template <class Index>
struct Item {
  Index key;
  std::uint64_t id;
};

/// No default constructor: the local sort takes its (key, position) pair path.
struct Fixed {
  Fixed(std::uint64_t k, std::uint64_t i) : key(k), id(i) {}
  std::uint64_t key;
  std::uint64_t id;
};

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

enum class Keys { uniform, duplicated, all_equal, narrow, sorted_desc };
enum class Spread { blocks, on_first, on_last, even_only, random_blocks, round_robin };

const char* name(Keys k) {
  switch (k) {
    case Keys::uniform: return "uniform";
    case Keys::duplicated: return "duplicated";
    case Keys::all_equal: return "all_equal";
    case Keys::narrow: return "narrow";
    case Keys::sorted_desc: return "sorted_desc";
  }
  return "?";
}
const char* name(Spread s) {
  switch (s) {
    case Spread::blocks: return "blocks";
    case Spread::on_first: return "on_first";
    case Spread::on_last: return "on_last";
    case Spread::even_only: return "even_only";
    case Spread::random_blocks: return "random_blocks";
    case Spread::round_robin: return "round_robin";
  }
  return "?";
}

/// Key of global item i, below domain_end = 2^bits.
template <class Index>
Index make_key(Keys kind, std::uint64_t i, std::uint64_t n, std::uint64_t seed, int bits) {
  const Index end_mask = bits >= irr::index_bits<Index> ? ~Index{0} : (Index{1} << bits) - 1;
  const std::uint64_t h = mix(i * 0x9e3779b97f4a7c15ULL + seed);
  switch (kind) {
    case Keys::uniform: {
      Index k = static_cast<Index>(h);
      if constexpr (sizeof(Index) > 8) k |= static_cast<Index>(mix(h)) << 64;
      return k & end_mask;
    }
    case Keys::duplicated: return (static_cast<Index>(h % 7) << (bits - 4)) & end_mask;  // 7 keys
    case Keys::all_equal: return static_cast<Index>(12345) & end_mask;
    case Keys::narrow: return (end_mask >> 1) + static_cast<Index>(h % 1000);  // 1000 keys mid-range
    case Keys::sorted_desc: return static_cast<Index>(n - i) << (bits > 40 ? 20 : 0);
  }
  return 0;
}

/// Which rank holds global item i; items of one rank keep increasing ids (local position).
std::vector<int> holders(Spread s, std::uint64_t n, int p, std::uint64_t seed) {
  std::vector<int> h(n);
  std::vector<std::uint64_t> cut(static_cast<std::size_t>(p) + 1, 0);
  if (s == Spread::random_blocks) {
    std::mt19937_64 rng(seed);
    std::vector<std::uint64_t> c(static_cast<std::size_t>(p) - 1);
    for (auto& x : c) x = n == 0 ? 0 : rng() % (n + 1);
    std::sort(c.begin(), c.end());
    for (int r = 1; r < p; ++r) cut[static_cast<std::size_t>(r)] = c[static_cast<std::size_t>(r) - 1];
  }
  cut[static_cast<std::size_t>(p)] = n;
  for (std::uint64_t i = 0; i < n; ++i) {
    int r = 0;
    switch (s) {
      case Spread::blocks: r = static_cast<int>(i * static_cast<std::uint64_t>(p) / n); break;
      case Spread::on_first: r = 0; break;
      case Spread::on_last: r = p - 1; break;
      case Spread::even_only: {
        const int evens = (p + 1) / 2;
        r = 2 * static_cast<int>(i * static_cast<std::uint64_t>(evens) / n);
        break;
      }
      case Spread::random_blocks:
        r = static_cast<int>(std::upper_bound(cut.begin(), cut.end(), i) - cut.begin()) - 1;
        break;
      case Spread::round_robin: r = static_cast<int>(i % static_cast<std::uint64_t>(p)); break;
    }
    h[i] = r;
  }
  return h;
}

struct Outcome {
  std::vector<std::uint64_t> ids;  // this rank's ids in output order
  std::uint64_t first = 0;         // global position of this rank's first item
  irr::SplitterStats split;
};

/// Sorts, checks every invariant against the sequential stable sort, returns this rank's part.
template <class Index, class E>
Outcome run_case(const mpi::communicator& comm, Keys kind, Spread spread, std::uint64_t n, std::uint64_t seed,
                 int bits) {
  const int p = comm.size(), me = comm.rank();
  CAPTURE(name(kind), name(spread), n, p, bits, sizeof(Index));
  const Index domain_end = bits >= irr::index_bits<Index> ? ~Index{0} : Index{1} << bits;
  const auto hold = holders(spread, n, p, seed);
  // Expected global order: (key, holder rank, position on the holder) = (key, rank, id).
  std::vector<std::tuple<Index, int, std::uint64_t>> all(n);
  for (std::uint64_t i = 0; i < n; ++i) all[i] = {make_key<Index>(kind, i, n, seed, bits), hold[i], i};
  std::sort(all.begin(), all.end());
  std::uint64_t most = 0;  // most copies of one key
  for (std::size_t i = 0, j = 0; i < all.size(); i = j) {
    while (j < all.size() && std::get<0>(all[j]) == std::get<0>(all[i])) ++j;
    most = std::max<std::uint64_t>(most, j - i);
  }

  std::vector<E> elements;
  std::vector<Index> keys;
  for (std::uint64_t i = 0; i < n; ++i)
    if (hold[i] == me) {
      const Index k = make_key<Index>(kind, i, n, seed, bits);
      elements.push_back(E{k, i});
      keys.push_back(k);
    }
  Outcome out;
  irr::mpi::ExchangeStats exchange;
  const auto bounds = irr::sample_sort(comm, elements, keys, domain_end, [](const E& e) { return Index(e.key); },
                                       tag, &exchange, &out.split);

  // Bounds: p+1 values 0 .. domain_end, non-decreasing, the same on every rank.
  REQUIRE(bounds.size() == static_cast<std::size_t>(p) + 1);
  REQUIRE((bounds.front() == Index{0}));
  REQUIRE((bounds.back() == domain_end));
  REQUIRE(std::is_sorted(bounds.begin(), bounds.end()));
  std::vector<std::uint64_t> lo_words;
  for (const Index b : bounds) lo_words.push_back(static_cast<std::uint64_t>(b) ^ static_cast<std::uint64_t>(irr::detail::IndexWire::from(b).hi));
  std::vector<std::uint64_t> lo_min(lo_words.size());
  mpi::all_reduce(comm, lo_words.data(), static_cast<int>(lo_words.size()), lo_min.data(), mpi::minimum<std::uint64_t>());
  REQUIRE(lo_min == lo_words);
  // This rank's run: sorted, keys match the elements, inside its bounds.
  REQUIRE(keys.size() == elements.size());
  REQUIRE(std::is_sorted(keys.begin(), keys.end()));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    REQUIRE((keys[i] == Index(elements[i].key)));
    REQUIRE((bounds[static_cast<std::size_t>(me)] <= keys[i]));
    REQUIRE((keys[i] < bounds[static_cast<std::size_t>(me) + 1]));
  }
  // Counts and the exact global order: this rank's slice of the sequential sort.
  const auto mine = static_cast<std::uint64_t>(elements.size());
  std::uint64_t total = 0, before = 0;
  mpi::all_reduce(comm, mine, total, std::plus<std::uint64_t>());
  mpi::scan(comm, mine, before, std::plus<std::uint64_t>());
  before -= mine;
  REQUIRE(total == n);
  for (std::size_t i = 0; i < elements.size(); ++i) {
    REQUIRE(elements[i].id == std::get<2>(all[before + i]));
    REQUIRE((keys[i] == std::get<0>(all[before + i])));
  }
  // Balance bound: within floor(N/p) - M .. ceil(N/p) + M (exact when keys are distinct).
  const std::uint64_t up = static_cast<std::uint64_t>(p);
  const std::uint64_t lo_n = n / up, hi_n = (n + up - 1) / up;
  CAPTURE(mine, most, lo_n, hi_n);
  REQUIRE(mine <= hi_n + most);
  REQUIRE(mine + most >= lo_n);
  if (most <= 1) {
    REQUIRE(mine >= lo_n);
    REQUIRE(mine <= hi_n);
  }
  // Splitter traffic: 1 + ceil(bits/4) rounds at most, at most 15·(p-1) counts per round,
  // the same on every rank.
  const std::uint64_t round_bound = irr::detail::splitter_round_bound(bits) + 1;
  if (p > 1) {
    REQUIRE(out.split.rounds <= round_bound);
    REQUIRE(out.split.values <= 1 + 15 * (up - 1) * (round_bound - 1));
    REQUIRE(out.split.bytes == 8 * out.split.values);
    std::uint64_t min_b = 0, max_b = 0;
    mpi::all_reduce(comm, out.split.bytes, min_b, mpi::minimum<std::uint64_t>());
    mpi::all_reduce(comm, out.split.bytes, max_b, mpi::maximum<std::uint64_t>());
    REQUIRE(min_b == max_b);
  }
  for (const auto& e : elements) out.ids.push_back(e.id);
  out.first = before;
  return out;
}

/// Gathers the global order of ids (rank order) on every rank.
std::vector<std::uint64_t> global_ids(const mpi::communicator& comm, const Outcome& o) {
  std::vector<std::vector<std::uint64_t>> parts;
  mpi::all_gather(comm, o.ids, parts);
  std::vector<std::uint64_t> ids;
  for (const auto& part : parts) ids.insert(ids.end(), part.begin(), part.end());
  return ids;
}

}  // namespace

TEST_CASE("sample_sort: every key kind and input spread (64-bit keys)", "[sample_sort]") {
  const mpi::communicator world;
  for (const Keys kind : {Keys::uniform, Keys::duplicated, Keys::all_equal, Keys::narrow, Keys::sorted_desc})
    for (const Spread spread : {Spread::blocks, Spread::on_first, Spread::on_last, Spread::even_only,
                                Spread::random_blocks, Spread::round_robin})
      for (const std::uint64_t n : {0ULL, 1ULL, 5ULL, 97ULL, 3000ULL})
        (void)run_case<std::uint64_t, Item<std::uint64_t>>(world, kind, spread, n, 17 + n, 62);
}

TEST_CASE("sample_sort: large inputs take the MSD local sort and the run merge", "[sample_sort]") {
  const mpi::communicator world;
  for (const Keys kind : {Keys::uniform, Keys::duplicated, Keys::narrow})
    for (const Spread spread : {Spread::blocks, Spread::on_first, Spread::round_robin})
      (void)run_case<std::uint64_t, Item<std::uint64_t>>(world, kind, spread, 150000, 99, 62);
}

TEST_CASE("sample_sort: 32-bit and 128-bit keys", "[sample_sort]") {
  const mpi::communicator world;
  for (const Keys kind : {Keys::uniform, Keys::duplicated, Keys::all_equal})
    for (const Spread spread : {Spread::blocks, Spread::even_only, Spread::round_robin}) {
      (void)run_case<std::uint32_t, Item<std::uint32_t>>(world, kind, spread, 2000, 5, 30);
      (void)run_case<irr::uint128_t, Item<irr::uint128_t>>(world, kind, spread, 2000, 6, 126);
      (void)run_case<irr::uint128_t, Item<irr::uint128_t>>(world, kind, spread, 70000, 7, 126);
    }
}

TEST_CASE("sample_sort: the global order does not depend on the rank count", "[sample_sort]") {
  // The expected order (key, then id: blocks keep ids increasing with the rank) is the same at
  // every rank count; run_case checks each rank's slice of it, here the whole is compared with
  // the order on one rank (a sub-communicator of rank 0 alone) in the same run.
  const mpi::communicator world;
  const mpi::communicator solo = world.split(world.rank() == 0 ? 0 : 1);
  for (const Keys kind : {Keys::uniform, Keys::duplicated, Keys::all_equal}) {
    const auto here = global_ids(world, run_case<std::uint64_t, Item<std::uint64_t>>(world, kind, Spread::random_blocks,
                                                                                        5000, 3, 62));
    std::vector<std::uint64_t> one;
    if (world.rank() == 0)
      one = run_case<std::uint64_t, Item<std::uint64_t>>(solo, kind, Spread::blocks, 5000, 3, 62).ids;
    mpi::broadcast(world, one, 0);
    REQUIRE(here == one);
  }
}

TEST_CASE("sample_sort: splitter selection traffic is O(p) per rank and the same on every rank",
          "[sample_sort]") {
  // The splitters of `parts` virtual parts (more than ranks): bytes per rank grow linearly in
  // parts with the stated constant 8·15·ceil(bits/4) per splitter, and every rank sends the
  // same (a gather of O(p) samples per rank on a root would cost the root O(p^2)).
  const mpi::communicator world;
  const int p = world.size(), me = world.rank();
  const std::uint64_t n_local = 4000;
  std::vector<std::uint64_t> keys(n_local);
  for (std::uint64_t i = 0; i < n_local; ++i)
    keys[i] = mix(i + 1000003ULL * static_cast<std::uint64_t>(me)) >> 2;  // < 2^62
  std::sort(keys.begin(), keys.end());
  const std::uint64_t end = std::uint64_t{1} << 62, N = n_local * static_cast<std::uint64_t>(p);
  std::vector<std::uint64_t> bytes;
  for (const std::size_t parts : {std::size_t{10}, std::size_t{100}, std::size_t{1000}}) {
    CAPTURE(parts, p);
    irr::SplitterStats st;
    const auto split = irr::detail::select_splitters(world, std::span<const std::uint64_t>(keys), end, parts, &st);
    REQUIRE(split.size() == parts - 1);
    REQUIRE(std::is_sorted(split.begin(), split.end()));
    REQUIRE(st.rounds <= 1 + irr::detail::splitter_round_bound(62));
    REQUIRE(st.bytes <= 8 * (1 + 15 * (parts - 1) * irr::detail::splitter_round_bound(62)));
    std::uint64_t min_b = 0, max_b = 0;
    mpi::all_reduce(world, st.bytes, min_b, mpi::minimum<std::uint64_t>());
    mpi::all_reduce(world, st.bytes, max_b, mpi::maximum<std::uint64_t>());
    REQUIRE(min_b == max_b);
    bytes.push_back(st.bytes);
    // Balance of the virtual parts (keys are distinct with overwhelming probability): each
    // splitter cuts exactly at floor(r·N/parts).
    for (std::size_t r = 1; r < parts; ++r) {
      const auto below = static_cast<std::uint64_t>(std::lower_bound(keys.begin(), keys.end(), split[r - 1]) - keys.begin());
      std::uint64_t c = 0;
      mpi::all_reduce(world, below, c, std::plus<std::uint64_t>());
      REQUIRE(c == static_cast<std::uint64_t>(static_cast<irr::uint128_t>(r) * N / parts));
    }
  }
  // Linear growth: ten times the parts costs about ten times the bytes, not a hundred.
  REQUIRE(bytes[2] <= 20 * bytes[1]);
  REQUIRE(bytes[1] <= 20 * bytes[0]);
}

TEST_CASE("local sort: stable for every path (MSD, pairs, no default constructor)", "[sample_sort]") {
  for (const std::uint64_t n : {0ULL, 1ULL, 300ULL, 70000ULL, 300000ULL})
    for (const std::uint64_t spread : {std::uint64_t{1}, std::uint64_t{1000}, std::uint64_t{1} << 62}) {
      CAPTURE(n, spread);
      std::vector<Item<std::uint64_t>> a;
      std::vector<Fixed> b;
      std::vector<std::uint64_t> ka;
      for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t k = (mix(i) % spread) << 1;
        a.push_back({k, i});
        b.emplace_back(k, i);
        ka.push_back(k);
      }
      auto kb = ka;
      std::vector<std::pair<std::uint64_t, std::uint64_t>> expect;
      for (std::uint64_t i = 0; i < n; ++i) expect.push_back({ka[i], i});
      std::sort(expect.begin(), expect.end());
      irr::sort_by_key(a, ka);
      irr::sort_by_key(b, kb);
      for (std::size_t i = 0; i < n; ++i) {
        REQUIRE(ka[i] == expect[i].first);
        REQUIRE(a[i].key == expect[i].first);
        REQUIRE(a[i].id == expect[i].second);
        REQUIRE(kb[i] == expect[i].first);
        REQUIRE(b[i].id == expect[i].second);
      }
    }
}
