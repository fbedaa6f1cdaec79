// L3 transport tests, run at 1, 2, 3, 4 and 7 ranks: pack/unpack round trips, sparse_exchange on
// seeded random patterns against an oracle every rank computes alone, agree(), OwnedCommunicator.
#include <catch2/catch.hpp>

#include <irregular/curve/morton.hpp>
#include <irregular/distributed/remap/migration.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/communicator.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/mpi/transport.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace mpi = irregular::mpi;

namespace {

struct RawItem {  // trivially copyable, no serialize(): raw path
  std::uint64_t key;
  std::int32_t src;
  std::int32_t dst;
  double value;
  friend bool operator==(const RawItem&, const RawItem&) = default;
};

struct SerItem {  // variable length: serialized path
  std::string name;
  std::vector<double> xs;
  std::int32_t src = -1;
  template <class Archive>
  void serialize(Archive& ar, unsigned) { ar & name & xs & src; }
  friend bool operator==(const SerItem&, const SerItem&) = default;
};

struct OptedIn {  // trivially copyable with serialize(), opted into the raw path by the trait
  int a;
  template <class Archive>
  void serialize(Archive& ar, unsigned) { ar & a; }
};

struct WithSerialize {  // trivially copyable but has serialize(): serialized by default
  int a;
  template <class Archive>
  void serialize(Archive& ar, unsigned) { ar & a; }
};
}  // namespace

template <>
struct irregular::mpi::raw_transport<OptedIn> : std::true_type {};

namespace {
static_assert(mpi::is_raw_transportable<RawItem>);
static_assert(!mpi::is_raw_transportable<WithSerialize>);
static_assert(mpi::is_raw_transportable<int>);
static_assert(!mpi::is_raw_transportable<SerItem>);
static_assert(!mpi::is_raw_transportable<std::string>);

// Values rank src sends rank dst in round `round`: a deterministic function every rank can
// evaluate, so each rank knows exactly what it must receive.
RawItem make_item(RawItem*, int src, int dst, int i, int round) {
  return {static_cast<std::uint64_t>(src) * 1000003u + static_cast<std::uint64_t>(dst) * 1009u +
              static_cast<std::uint64_t>(i) + (static_cast<std::uint64_t>(round) << 40),
          src, dst, 0.25 * i + round};
}
SerItem make_item(SerItem*, int src, int dst, int i, int round) {
  SerItem s;
  s.name = "from " + std::to_string(src) + " to " + std::to_string(dst) + " #" + std::to_string(i) +
           " round " + std::to_string(round);
  for (int k = 0; k < (i + round) % 5; ++k) s.xs.push_back(src + 0.5 * k - dst);
  s.src = src;
  return s;
}
template <class T>
T item(int src, int dst, int i, int round) {
  return make_item(static_cast<T*>(nullptr), src, dst, i, round);
}

// Seeded sparse pattern: count[src][dst], about 40% of pairs non-empty (self pairs included).
std::vector<std::vector<int>> random_pattern(int p, std::uint64_t seed, int max_len) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<int>> count(static_cast<std::size_t>(p), std::vector<int>(static_cast<std::size_t>(p)));
  for (auto& row : count)
    for (auto& c : row) c = (rng() % 10 < 4) ? 1 + static_cast<int>(rng() % static_cast<std::uint64_t>(max_len)) : 0;
  return count;
}

template <class T>
std::vector<std::vector<T>> outgoing_of(const std::vector<std::vector<int>>& count, int me, int round) {
  const auto p = count.size();
  std::vector<std::vector<T>> out(p);
  for (std::size_t d = 0; d < p; ++d)
    for (int i = 0; i < count[static_cast<std::size_t>(me)][d]; ++i)
      out[d].push_back(item<T>(me, static_cast<int>(d), i, round));
  return out;
}

// Checks a Received against the oracle; returns the number of mismatches (0 when all is well).
template <class T>
int mismatches(const mpi::Received<T>& got, const std::vector<std::vector<int>>& count, int me, int round) {
  int bad = 0;
  std::vector<int> expected_sources;
  std::vector<T> expected_values;
  for (std::size_t s = 0; s < count.size(); ++s) {
    const int n = count[s][static_cast<std::size_t>(me)];
    if (n == 0) continue;
    expected_sources.push_back(static_cast<int>(s));
    for (int i = 0; i < n; ++i) expected_values.push_back(item<T>(static_cast<int>(s), me, i, round));
  }
  if (got.sources != expected_sources) ++bad;
  if (got.offsets.size() != got.sources.size() + 1 || got.offsets.front() != 0 ||
      got.offsets.back() != got.values.size())
    ++bad;
  if (got.values != expected_values) ++bad;
  for (std::size_t k = 0; k + 1 < got.offsets.size() && bad == 0; ++k)
    for (const T& v : got.from_index(k))
      if (v.src != got.sources[k]) ++bad;
  return bad;
}

int all_sum(const boost::mpi::communicator& comm, int x) {
  int y = 0;
  boost::mpi::all_reduce(comm, x, y, std::plus<int>());
  return y;
}

}  // namespace

TEMPLATE_TEST_CASE("pack/unpack round trip is exact and records concatenate", "[mpi][transport]",
                   RawItem, SerItem) {
  std::vector<TestType> a;
  std::vector<TestType> b;
  for (int i = 0; i < 37; ++i) a.push_back(item<TestType>(1, 2, i, 3));
  for (int i = 0; i < 5; ++i) b.push_back(item<TestType>(4, 5, i, 6));
  std::vector<char> buf;
  mpi::pack(std::span<const TestType>(a), buf);
  const std::size_t first_size = buf.size();
  mpi::pack(std::span<const TestType>(), buf);  // an empty record is still a record
  mpi::pack(b, buf);

  std::vector<TestType> out;
  std::span<const char> in(buf);
  const std::size_t used1 = mpi::unpack(in, out);
  REQUIRE(used1 == first_size);
  REQUIRE(out == a);
  in = in.subspan(used1);
  const std::size_t used2 = mpi::unpack(in, out);
  REQUIRE(used2 == mpi::pack_header_bytes);
  REQUIRE(out == a);
  in = in.subspan(used2);
  const std::size_t used3 = mpi::unpack(in, out);
  REQUIRE(used3 == in.size());
  std::vector<TestType> ab = a;
  ab.insert(ab.end(), b.begin(), b.end());
  REQUIRE(out == ab);

  if constexpr (mpi::is_raw_transportable<TestType>)
    REQUIRE(first_size == mpi::pack_header_bytes + a.size() * sizeof(TestType));

  // Truncated records are rejected and leave `out` unchanged.
  for (std::size_t cut : {std::size_t{0}, std::size_t{7}, mpi::pack_header_bytes, first_size - 1}) {
    CAPTURE(cut);
    std::vector<TestType> partial = b;
    REQUIRE_THROWS_AS(mpi::unpack(std::span<const char>(buf.data(), cut), partial), irregular::parse_error);
    REQUIRE(partial == b);
  }
}

TEST_CASE("trait opt-in takes effect", "[mpi][transport]") {
  STATIC_REQUIRE(mpi::is_raw_transportable<OptedIn>);
  std::vector<OptedIn> v{{1}, {2}, {3}};
  std::vector<char> buf;
  mpi::pack(v, buf);
  REQUIRE(buf.size() == mpi::pack_header_bytes + 3 * sizeof(OptedIn));
}

TEMPLATE_TEST_CASE("sparse_exchange delivers a random sparse pattern grouped by source", "[mpi][transport]",
                   RawItem, SerItem) {
  const boost::mpi::communicator world;
  const int p = world.size();
  const int me = world.rank();
  for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    CAPTURE(seed);
    const auto count = random_pattern(p, seed, 20);
    const auto outgoing = outgoing_of<TestType>(count, me, 0);
    mpi::ExchangeStats stats;
    const auto got = mpi::sparse_exchange(world, outgoing, 17, &stats);
    REQUIRE(all_sum(world, mismatches(got, count, me, 0)) == 0);

    // No message to partners with nothing; self-delivery is no message.
    int expect_sent = 0;
    int expect_received = 0;
    for (int r = 0; r < p; ++r) {
      if (r == me) continue;
      expect_sent += count[static_cast<std::size_t>(me)][static_cast<std::size_t>(r)] > 0;
      expect_received += count[static_cast<std::size_t>(r)][static_cast<std::size_t>(me)] > 0;
    }
    REQUIRE(all_sum(world, static_cast<int>(stats.messages_sent) != expect_sent) == 0);
    REQUIRE(all_sum(world, static_cast<int>(stats.messages_received) != expect_received) == 0);
    const mpi::ExchangeStats total = mpi::all_reduce_sum(world, stats);
    REQUIRE(total.messages_sent == total.messages_received);
    REQUIRE(total.bytes_sent == total.bytes_received);
    if constexpr (mpi::is_raw_transportable<TestType>) {
      std::uint64_t expect_bytes = 0;
      for (int r = 0; r < p; ++r)
        if (r != me) expect_bytes += count[static_cast<std::size_t>(me)][static_cast<std::size_t>(r)] * sizeof(TestType);
      REQUIRE(all_sum(world, stats.bytes_sent != expect_bytes) == 0);
    }

    // The CSR form gives the same result.
    std::vector<TestType> flat;
    std::vector<std::size_t> offsets{0};
    for (const auto& v : outgoing) {
      flat.insert(flat.end(), v.begin(), v.end());
      offsets.push_back(flat.size());
    }
    const auto got_csr = mpi::sparse_exchange(world, flat, offsets, 17);
    REQUIRE(all_sum(world, mismatches(got_csr, count, me, 0)) == 0);
  }
}

TEMPLATE_TEST_CASE("20 back-to-back exchanges with one tag do not mix", "[mpi][transport]", RawItem, SerItem) {
  const boost::mpi::communicator world;
  const int me = world.rank();
  int bad = 0;
  for (int round = 0; round < 20; ++round) {
    // A new pattern each round, so a message from the next round landing early would show.
    const auto count = random_pattern(world.size(), 100 + static_cast<std::uint64_t>(round), 6);
    const auto got = mpi::sparse_exchange(world, outgoing_of<TestType>(count, me, round), 5);
    bad += mismatches(got, count, me, round);
  }
  REQUIRE(all_sum(world, bad) == 0);
}

TEMPLATE_TEST_CASE("messages split into pieces reassemble exactly", "[mpi][transport]", RawItem, SerItem) {
  const boost::mpi::communicator world;
  const int me = world.rank();
  const auto count = random_pattern(world.size(), 77, 9);
  const auto outgoing = outgoing_of<TestType>(count, me, 1);
  // 24 divides sizeof(RawItem) multiples (pieces end with a zero-byte piece); 7 does not.
  // Serialized messages gather [frame header][archive] regions: pieces cut across them, and
  // small frame limits give many frames per message.
  for (std::size_t piece : {std::size_t{7}, std::size_t{24}, std::size_t{1}, std::size_t{1} << 30}) {
    for (std::size_t frame : {std::size_t{1}, std::size_t{100}, std::size_t{1} << 30}) {
      CAPTURE(piece, frame);
      mpi::ExchangeStats stats;
      const auto got = mpi::detail::exchange<TestType>(
          world, 9, [&](int d) { return std::span<const TestType>(outgoing[static_cast<std::size_t>(d)]); },
          &stats, piece, frame);
      REQUIRE(all_sum(world, mismatches(got, count, me, 1)) == 0);
      const auto total = mpi::all_reduce_sum(world, stats);
      REQUIRE(total.bytes_sent == total.bytes_received);
    }
  }
}

TEST_CASE("self-delivery and empty exchanges send no message", "[mpi][transport]") {
  const boost::mpi::communicator world;
  const int p = world.size();
  const int me = world.rank();
  std::vector<std::vector<RawItem>> outgoing(static_cast<std::size_t>(p));
  mpi::ExchangeStats stats;
  auto got = mpi::sparse_exchange(world, outgoing, 3, &stats);
  REQUIRE(got.sources.empty());
  REQUIRE(got.offsets == std::vector<std::size_t>{0});
  REQUIRE(got.values.empty());
  outgoing[static_cast<std::size_t>(me)] = {item<RawItem>(me, me, 0, 0), item<RawItem>(me, me, 1, 0)};
  got = mpi::sparse_exchange(world, outgoing, 3, &stats);
  REQUIRE(got.sources == std::vector<int>{me});
  REQUIRE(got.values == outgoing[static_cast<std::size_t>(me)]);
  REQUIRE(got.from_rank(me).size() == 2);
  REQUIRE(got.from_rank(me + 1).empty());
  REQUIRE(mpi::all_reduce_sum(world, stats) == mpi::ExchangeStats{});
}

// An element whose serialize() throws on demand, while saving (value -1) or while rank 0
// loads it (value -2).
struct Flaky {
  int value = 0;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    if (Archive::is_saving::value && value == -1) throw std::runtime_error("cannot save");
    ar & value;
    if (Archive::is_loading::value && value == -2 && boost::mpi::communicator().rank() == 0)
      throw std::runtime_error("cannot load");
  }
};

TEST_CASE("sparse_exchange rejects malformed calls on any one rank before communicating", "[mpi][transport]") {
  const boost::mpi::communicator world;
  const int p = world.size();
  const int bad = p - 1;  // exactly one rank is wrong; every rank must throw the same error
  auto same_everywhere = [&](auto&& call, const char* needle) {
    std::string message;
    int failing = -1;
    try {
      call();
    } catch (const irregular::collective_error& e) {
      message = e.what();
      failing = e.failing_rank();
    }
    CAPTURE(message);
    REQUIRE(failing == bad);
    REQUIRE(message.find(needle) != std::string::npos);
  };
  std::vector<std::vector<int>> wrong(static_cast<std::size_t>(p) + (world.rank() == bad ? 1 : 0));
  same_everywhere([&] { (void)mpi::sparse_exchange(world, wrong, 1); }, "outgoing vectors");
  std::vector<std::vector<int>> right(static_cast<std::size_t>(p));
  same_everywhere([&] { (void)mpi::sparse_exchange(world, right, world.rank() == bad ? -1 : 1); }, "tag");
  std::vector<int> flat{1, 2, 3};
  std::vector<std::size_t> offsets(static_cast<std::size_t>(p) + 1, 0);
  offsets.back() = world.rank() == bad ? 0 : 3;
  same_everywhere([&] { (void)mpi::sparse_exchange(world, flat, offsets, 1); }, "offsets must start at 0");
  offsets.back() = 3;
  offsets.front() = world.rank() == bad ? 2 : 0;
  same_everywhere([&] { (void)mpi::sparse_exchange(world, flat, offsets, 1); }, "offsets");
  if (p > 1) {
    std::vector<std::vector<Flaky>> out(static_cast<std::size_t>(p));
    out[0].push_back({world.rank() == bad ? -1 : 1});
    same_everywhere([&] { (void)mpi::sparse_exchange(world, out, 2); }, "cannot save");
    // Rank 0 fails to load what the last rank sends it.
    std::vector<std::vector<Flaky>> to_zero(static_cast<std::size_t>(p));
    if (world.rank() == bad) to_zero[0].push_back({-2});
    std::string message;
    int failing = -1;
    try {
      (void)mpi::sparse_exchange(world, to_zero, 3);
    } catch (const irregular::collective_error& e) {
      message = e.what();
      failing = e.failing_rank();
    }
    REQUIRE(failing == 0);
    REQUIRE(message.find("cannot load") != std::string::npos);
  }
  // The communicator is still usable: a valid exchange afterwards works.
  offsets.front() = 0;
  const auto got = mpi::sparse_exchange(world, flat, offsets, 1);
  const bool last = world.rank() == p - 1;
  REQUIRE(all_sum(world, got.values.size() != (last ? 3u * static_cast<unsigned>(p) : 0u)) == 0);
}

TEST_CASE("agree: a throw on one rank makes every rank throw the same collective_error", "[mpi][transport]") {
  const boost::mpi::communicator world;
  const int p = world.size();
  const int me = world.rank();
  const int last = p - 1;

  REQUIRE(mpi::agree(world, [&] { return me * 2; }) == me * 2);
  REQUIRE_NOTHROW(mpi::agree(world, [] {}));
  REQUIRE_NOTHROW(mpi::agree_on(world, std::nullopt));

  auto expect_failure = [&](auto&& f, const std::string& message, int failing) {
    int ok = 0;
    try {
      mpi::agree(world, f);
    } catch (const irregular::collective_error& e) {
      ok = (e.what() == message && e.failing_rank() == failing) ? 1 : 0;
    }
    REQUIRE(all_sum(world, ok) == p);
  };
  // irregular::error on the last rank only.
  expect_failure([&] { if (me == last) throw irregular::invalid_argument("bad load on rank " + std::to_string(me)); return 1; },
                 "bad load on rank " + std::to_string(last), last);
  // Several ranks fail with different messages: the lowest failing rank's message wins.
  const int lowest = p > 1 ? 1 : 0;
  expect_failure([&] { if (me >= lowest) throw std::runtime_error("std error " + std::to_string(me)); },
                 "std error " + std::to_string(lowest), lowest);
  // A nested agreement keeps the rank it named.
  expect_failure([&] {
    mpi::agree(world, [&] { if (me == last) throw irregular::error("inner"); });
  }, "inner", last);
  // The low-level form.
  int ok = 0;
  try {
    mpi::agree_on(world, me == last ? std::optional<std::string>("flag") : std::nullopt);
  } catch (const irregular::collective_error& e) {
    ok = std::string(e.what()) == "flag" && e.failing_rank() == last;
  }
  REQUIRE(all_sum(world, ok) == p);
}

TEST_CASE("OwnedCommunicator holds a congruent duplicate", "[mpi][transport]") {
  const boost::mpi::communicator world;
  mpi::OwnedCommunicator owned(world);
  REQUIRE(MPI_Comm(owned.get()) != MPI_Comm(world));
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(owned.get(), world, &result);
  REQUIRE(result == MPI_CONGRUENT);
  REQUIRE(owned.size() == world.size());
  REQUIRE(owned.rank() == world.rank());
  mpi::OwnedCommunicator moved(std::move(owned));
  REQUIRE(moved.get().size() == world.size());
  // Traffic on the duplicate works and stays on it.
  std::vector<std::vector<int>> out(static_cast<std::size_t>(world.size()));
  out[static_cast<std::size_t>((world.rank() + 1) % world.size())] = {world.rank()};
  const auto got = mpi::sparse_exchange(moved.get(), out, 0);
  const int from = (world.rank() + world.size() - 1) % world.size();
  REQUIRE(got.values == std::vector<int>{from});
}

TEST_CASE("MigrationCounters add up and reduce to global sums", "[mpi][transport]") {
  const boost::mpi::communicator world;
  const auto r = static_cast<std::uint64_t>(world.rank());
  mpi::MigrationCounters c{1, r, 10 * r, 2};
  c += mpi::MigrationCounters{1, 0, 0, 0};
  const auto g = mpi::all_reduce_sum(world, c);
  const auto p = static_cast<std::uint64_t>(world.size());
  REQUIRE(g.hnodes == 2 * p);
  REQUIRE(g.elements == p * (p - 1) / 2);
  REQUIRE(g.bytes == 10 * p * (p - 1) / 2);
  REQUIRE(g.messages == 2 * p);
}

// ---------------------------------------------------------------------------------------------
// migrate(): leaves and elements to random destinations, against an oracle every rank computes.

namespace {

using Curve = irregular::curve::Morton<2>;
using Index = Curve::index_type;

struct RawElem {  // 24 bytes, trivially copyable: raw path
  std::uint64_t key;
  std::int32_t origin;
  std::int32_t serial;
  double weight;
  friend bool operator==(const RawElem&, const RawElem&) = default;
};
static_assert(mpi::is_raw_transportable<RawElem>);

struct SerElem {  // four doubles and a vector of varying length: serialized path
  std::uint64_t key = 0;
  double a = 0, b = 0, c = 0, d = 0;
  std::vector<int> v;
  template <class Archive>
  void serialize(Archive& ar, unsigned) { ar & key & a & b & c & d & v; }
  friend bool operator==(const SerElem&, const SerElem&) = default;
};
static_assert(!mpi::is_raw_transportable<SerElem>);

RawElem make_elem(RawElem*, std::uint64_t key, int origin, int serial) {
  return {key, origin, serial, 0.5 * static_cast<double>(key % 1000)};
}
SerElem make_elem(SerElem*, std::uint64_t key, int origin, int serial) {
  SerElem e;
  e.key = key;
  e.a = origin;
  e.b = serial;
  e.c = 0.25 * static_cast<double>(key % 97);
  e.d = -1.0;
  for (int k = 0; k < static_cast<int>(key % 7); ++k) e.v.push_back(static_cast<int>(key) + k);  // 0..6 entries
  return e;
}

struct LeafIn {
  Index start;
  int level;
  std::uint64_t count;
  double load;
  int dest;
};

template <class E>
struct RankInput {
  std::vector<LeafIn> leaves;  // sorted by start
  std::vector<E> elements;     // sorted by key
  std::vector<int> elem_dest;
};

enum class Pattern { random, all_to_one, none_moves, contiguous, empty_ranks };

// What rank r holds before the migration and where each item goes: a function of (r, p, pattern,
// seed) alone, so every rank can evaluate every other rank's input.
template <class E>
RankInput<E> input_of(int r, int p, Pattern pattern, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 7919 + static_cast<std::uint64_t>(r));
  RankInput<E> in;
  int ne = static_cast<int>(rng() % 120);
  int nl = static_cast<int>(rng() % 12);
  if (pattern == Pattern::empty_ranks && r % 2 == 1) ne = nl = 0;
  if (rng() % 5 == 0) ne = 0;  // some ranks have nothing
  const int target = static_cast<int>(seed % static_cast<std::uint64_t>(p));
  auto dest_of = [&](std::uint64_t key) {
    switch (pattern) {
      case Pattern::all_to_one: return target;
      case Pattern::none_moves: return r;
      case Pattern::contiguous:  // keys cut into p ranges: one run per destination
        return static_cast<int>(key * static_cast<std::uint64_t>(p) / (std::uint64_t{1} << 40));
      default: return static_cast<int>(rng() % static_cast<std::uint64_t>(p));
    }
  };
  // Keys unique across ranks; interleaved (key % p == r) so that segments overlap and need a sort,
  // except in the contiguous pattern, where ranks hold ordered key ranges.
  std::vector<std::uint64_t> keys;
  for (int i = 0; i < ne; ++i) {
    if (pattern == Pattern::contiguous) {
      const std::uint64_t span = (std::uint64_t{1} << 40) / static_cast<std::uint64_t>(p);
      keys.push_back(static_cast<std::uint64_t>(r) * span + (rng() % (span / 2)) * 2);
    } else {
      keys.push_back((rng() % 100000) * static_cast<std::uint64_t>(p) + static_cast<std::uint64_t>(r));
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    in.elements.push_back(make_elem(static_cast<E*>(nullptr), keys[i], r, static_cast<int>(i)));
    in.elem_dest.push_back(dest_of(keys[i]));
  }
  std::vector<Index> starts;
  for (int i = 0; i < nl; ++i) starts.push_back(((rng() % 5000) * static_cast<Index>(p) + static_cast<Index>(r)) * 16);
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  for (Index s : starts)
    in.leaves.push_back({s, static_cast<int>(s % 9), s / 16, 0.125 * static_cast<double>(s % 333),
                         dest_of(pattern == Pattern::contiguous ? s * 1000 : s)});
  return in;
}

template <class E>
std::uint64_t key_of_elem(const E& e) {
  return e.key;
}

template <class E>
void check_migration(Pattern pattern, std::uint64_t seed) {
  const boost::mpi::communicator world;
  const int p = world.size();
  const int me = world.rank();
  const RankInput<E> mine = input_of<E>(me, p, pattern, seed);

  irregular::LocalLeaves<Curve> leaves;
  std::vector<double> loads;
  std::vector<int> leaf_dest;
  for (const auto& l : mine.leaves) {
    leaves.push_back(l.start, l.level, l.count);
    loads.push_back(l.load);
    leaf_dest.push_back(l.dest);
  }
  std::vector<E> elements = mine.elements;
  std::vector<Index> keys;
  for (const auto& e : elements) keys.push_back(key_of_elem(e));

  const mpi::MigrationCounters sent = irregular::migrate<Curve>(
      world, leaf_dest, mine.elem_dest, leaves, loads, elements, keys, [](const E& e) { return key_of_elem(e); }, 21);

  // Oracle: everything every rank sends here, sorted; counters of what this rank sends away.
  std::vector<E> expect_elements;
  std::vector<LeafIn> expect_leaves;
  for (int r = 0; r < p; ++r) {
    const RankInput<E> in = input_of<E>(r, p, pattern, seed);
    for (std::size_t j = 0; j < in.elements.size(); ++j)
      if (in.elem_dest[j] == me || p == 1) expect_elements.push_back(in.elements[j]);
    for (const auto& l : in.leaves)
      if (l.dest == me || p == 1) expect_leaves.push_back(l);
  }
  std::sort(expect_elements.begin(), expect_elements.end(), [](const E& a, const E& b) { return a.key < b.key; });
  std::sort(expect_leaves.begin(), expect_leaves.end(), [](const LeafIn& a, const LeafIn& b) { return a.start < b.start; });
  mpi::MigrationCounters expect_sent;
  std::vector<char> partner(static_cast<std::size_t>(p), 0);
  for (const auto& l : mine.leaves)
    if (l.dest != me) {
      ++expect_sent.hnodes;
      partner[static_cast<std::size_t>(l.dest)] = 1;
    }
  for (int d : mine.elem_dest)
    if (d != me) {
      ++expect_sent.elements;
      partner[static_cast<std::size_t>(d)] = 1;
    }
  for (char c : partner) expect_sent.messages += c;
  if (p == 1) expect_sent = {};

  int bad = 0;
  bad += elements != expect_elements;
  bad += keys.size() != elements.size();
  for (std::size_t j = 0; j < keys.size() && j < elements.size(); ++j) bad += keys[j] != key_of_elem(elements[j]);
  bad += !std::is_sorted(keys.begin(), keys.end());
  bad += leaves.size() != expect_leaves.size() || loads.size() != leaves.size();
  for (std::size_t i = 0; i < leaves.size() && i < expect_leaves.size(); ++i) {
    bad += leaves.starts()[i] != expect_leaves[i].start;
    bad += leaves.levels()[i] != expect_leaves[i].level;
    bad += leaves.counts()[i] != expect_leaves[i].count;
    bad += loads[i] != expect_leaves[i].load;
  }
  bad += sent.hnodes != expect_sent.hnodes || sent.elements != expect_sent.elements ||
         sent.messages != expect_sent.messages;
  if constexpr (mpi::is_raw_transportable<E>) {  // [elements][records][16-byte trailer] per message
    const std::uint64_t bytes = expect_sent.elements * sizeof(E) +
                                expect_sent.hnodes * sizeof(irregular::detail::LeafRecord<Index>) +
                                expect_sent.messages * 16;
    bad += sent.bytes != bytes;
  } else {
    bad += (sent.bytes == 0) != (sent.messages == 0);
  }
  REQUIRE(all_sum(world, bad) == 0);

  // Conservation, globally: counts and a checksum of the element keys.
  std::uint64_t n = elements.size(), sum = 0;
  for (const auto& e : elements) sum += e.key * 2654435761u;
  std::uint64_t n0 = mine.elements.size(), sum0 = 0;
  for (const auto& e : mine.elements) sum0 += e.key * 2654435761u;
  std::uint64_t g[4] = {}, l[4] = {n, sum, n0, sum0};
  MPI_Allreduce(l, g, 4, MPI_UINT64_T, MPI_SUM, world);
  REQUIRE(g[0] == g[2]);
  REQUIRE(g[1] == g[3]);
  const auto total = mpi::all_reduce_sum(world, sent);
  REQUIRE(total.elements <= g[2]);
}

}  // namespace

TEMPLATE_TEST_CASE("migrate conserves leaves and elements and sorts them", "[mpi][transport][migrate]",
                   RawElem, SerElem) {
  // random destinations, everything to one rank, nothing moves, contiguous key ranges (sent in
  // place, one run per destination), odd ranks empty.
  for (Pattern pattern : {Pattern::random, Pattern::all_to_one, Pattern::none_moves, Pattern::contiguous,
                          Pattern::empty_ranks}) {
    for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u, 6u}) {
      CAPTURE(static_cast<int>(pattern), seed);
      check_migration<TestType>(pattern, seed);
    }
  }
}

TEMPLATE_TEST_CASE("back-to-back migrations with one tag do not mix", "[mpi][transport][migrate]", RawElem,
                   SerElem) {
  for (std::uint64_t seed = 10; seed < 20; ++seed) check_migration<TestType>(Pattern::random, seed);
}

TEST_CASE("a message that does not parse leaves the receiving rank's arrays as they were", "[mpi][transport][migrate]") {
  // Rank 1 sends five stray bytes on the migration's tag to rank 0. Rank 0 sends all its elements
  // away in scattered order (from a staged copy), so it lends its own array to the arrivals; the
  // stray message fails to parse there, and rank 0 must get back exactly what it had.
  // Second layout: rank 0 sends all its elements to rank 1 in place, from an array with spare
  // capacity, so the leaf records and the trailer ride in that capacity behind them; the array
  // must get its size back.
  const boost::mpi::communicator world;
  const int p = world.size(), me = world.rank();
  if (p < 2) return;
  for (const bool in_place : {false, true}) {
  CAPTURE(in_place);
  constexpr int tag = 23;
  std::vector<RawElem> elements;
  std::vector<Index> keys;
  std::vector<int> dest;
  if (in_place) elements.reserve(400);
  for (int i = 0; i < 40; ++i) {
    const auto key = static_cast<std::uint64_t>(i * p + me) * 8;
    elements.push_back(make_elem(static_cast<RawElem*>(nullptr), key, me, i));
    keys.push_back(static_cast<Index>(key));
    // rank 0: every element away, interleaved (or all to rank 1, in place)
    dest.push_back(me == 0 ? (in_place ? 1 : 1 + i % (p - 1)) : me);
  }
  if (me == 0 && p > 2 && !in_place) std::swap(dest[0], dest[1]);
  const auto before = elements;
  const auto keys_before = keys;
  irregular::LocalLeaves<Curve> leaves;
  std::vector<double> loads;
  const char stray[5] = {1, 2, 3, 4, 5};
  MPI_Request stray_request = MPI_REQUEST_NULL;
  if (me == 1) MPI_Issend(stray, 5, MPI_BYTE, 0, tag, world, &stray_request);
  if (me == 0) {  // the stray is matchable before the exchange starts, so its probe loop takes it
    MPI_Status status;
    MPI_Probe(1, tag, world, &status);
  }
  bool threw = false;
  try {
    irregular::migrate<Curve>(world, std::span<const int>(), dest, leaves, loads, elements, keys,
                              [](const RawElem& e) { return static_cast<Index>(e.key); }, tag);
  } catch (const irregular::parse_error&) {
    threw = true;
  }
  if (me == 1) MPI_Wait(&stray_request, MPI_STATUS_IGNORE);
  world.barrier();
  if (me == 0) {
    CHECK(threw);
    CHECK(elements == before);
    CHECK(keys == keys_before);
  } else {
    CHECK_FALSE(threw);
  }
  }
}
