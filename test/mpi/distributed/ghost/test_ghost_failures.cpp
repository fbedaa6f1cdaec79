// Ghost calls agree on serialization failures: when an element's (or a datum's) serialize()
// throws on exactly one rank while saving or while loading, inside collect_ghosts (every
// strategy), exchange_ghosts or accumulate_ghosts, every rank throws the same
// irregular::collective_error naming the call and the rank, nobody hangs, and the local values,
// the ghost layer and the ghost values are as they were before the call. Both domains.
#include <catch2/catch.hpp>

#include <irregular/cell_domain.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/domain.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/vector.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;

namespace {

// The rank whose serialize() throws while saving, or while loading (-1: none). Set only after
// the domain is built, which migrates values through the same serialize().
int g_save_fails_on = -1, g_load_fails_on = -1;
struct Disarm {  // every injected fault is off again when a case ends, pass or fail
  ~Disarm() { g_save_fails_on = g_load_fails_on = -1; }
};

template <class Archive>
void fail_before(const char* what) {
  if (Archive::is_saving::value && mpi::communicator().rank() == g_save_fails_on)
    throw std::runtime_error(what);
}
template <class Archive>
void fail_after(const char* what) {
  if (Archive::is_loading::value && mpi::communicator().rank() == g_load_fails_on)
    throw std::runtime_error(what);
}

// An element whose vector member sends it through Boost.Serialization.
struct Body {
  std::array<double, 2> position{};
  std::uint64_t id = 0;
  std::vector<double> value{0.0};
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    fail_before<Archive>("save failed");
    ar& position& id& value;
    fail_after<Archive>("load failed");
  }
};
// A cell datum of the same kind; += is the cell domain's default combine.
struct Datum {
  std::vector<double> value{0.0};
  Datum& operator+=(const Datum& o) {
    value[0] += o.value[0];
    return *this;
  }
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    fail_before<Archive>("save failed");
    ar& value;
    fail_after<Archive>("load failed");
  }
};
static_assert(!irr::mpi::is_raw_transportable<Body> && !irr::mpi::is_raw_transportable<Datum>);

using Curve = irr::curve::Morton<2>;
using Elements = irr::IrregularDomain<Body, irr::stencil::Moore<2>, Curve>;
using Cells = irr::CellDomain<Datum, irr::stencil::Moore<2>, Curve>;
const irr::Box<2> unit{{0, 0}, {1, 1}};

std::uint64_t mix(std::uint64_t h, double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return (h ^ (b + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2))) * 0x100000001B3ull;
}
std::uint64_t hash_of(const Body& b) {
  std::uint64_t h = mix(b.id, b.position[0]);
  h = mix(h, b.position[1]);
  for (double v : b.value) h = mix(h, v);
  return h;
}
std::uint64_t hash_of(const Datum& d) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (double v : d.value) h = mix(h, v);
  return h;
}

// What a rejected call must leave as it was on this rank: order-independent checksums of the
// local values and of the ghost values, and the ghost leaves.
struct State {
  std::array<std::uint64_t, 3> local{}, ghost{};
  std::vector<std::uint64_t> ghost_starts;
  bool current = false;
  bool operator==(const State&) const = default;
};
template <class V>
void add(std::array<std::uint64_t, 3>& s, const V& v) {
  const std::uint64_t h = hash_of(v);
  s[0] += 1;
  s[1] += h;
  s[2] ^= h * 0xD6E8FEB86659FD93ull;
}
State state(const Elements& d) {
  State s;
  for (const auto& e : d.local_elements()) add(s.local, e);
  for (const auto& e : d.ghost_elements()) add(s.ghost, e);
  for (auto x : d.ghosts().starts()) s.ghost_starts.push_back(x);
  s.current = d.ghosts_current();
  return s;
}
State state(const Cells& d) {
  State s;
  for (const auto& x : d.local_data()) add(s.local, x);
  for (std::size_t g = 0; g < d.ghosts().size(); ++g) add(s.ghost, d.ghost_data(g));
  for (auto x : d.ghosts().starts()) s.ghost_starts.push_back(x);
  s.current = d.ghosts_current();
  return s;
}

// Every value of the local and of the ghost leaves, writable, with a key that names it on every
// rank (an element's id, a leaf's start).
template <class F>
void for_local(Elements& d, F&& f) {
  for (auto& e : d.local_elements()) f(e.value[0], e.id);
}
template <class F>
void for_ghosts(Elements& d, F&& f) {
  for (auto& e : d.ghost_elements()) f(e.value[0], e.id);
}
template <class F>
void for_local(Cells& d, F&& f) {
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
    f(d.data(i).value[0], d.local_tree().starts()[i]);
}
template <class F>
void for_ghosts(Cells& d, F&& f) {
  for (std::size_t g = 0; g < d.ghosts().size(); ++g)
    f(d.ghost_data(g).value[0], d.ghosts().starts()[g]);
}
// The value a key has in round r: exact in a double, different for neighbouring keys.
double value_of(double round, std::uint64_t key) {
  return round * 4096 + static_cast<double>(key % 4093);
}

int count_false(const mpi::communicator& w, bool ok) {
  int bad = ok ? 0 : 1, total = 0;
  mpi::all_reduce(w, bad, total, std::plus<int>());
  return total;
}

// Runs call on every rank: every rank must throw collective_error with the same message, naming
// `bad` as the failing rank and containing each needle; and the state must not change.
template <class Domain, class Call>
void require_agreed_failure(Domain& d, int bad, const std::vector<std::string>& needles,
                            Call&& call) {
  const mpi::communicator& w = d.comm();
  const State before = state(d);
  std::string message;
  int failing = -2;
  bool other = false;
  try {
    call();
  } catch (const irr::collective_error& e) {
    message = e.what();
    failing = e.failing_rank();
  } catch (...) {
    other = true;
  }
  CAPTURE(message);
  bool ok = !other && failing == bad;
  for (const auto& n : needles) ok = ok && message.find(n) != std::string::npos;
  REQUIRE(count_false(w, ok) == 0);
  std::string root = message;
  mpi::broadcast(w, root, 0);
  REQUIRE(count_false(w, root == message) == 0);
  REQUIRE(count_false(w, state(d) == before) == 0);
}

const char* const strategies[] = {"RA", "FP", "IFP"};

// Every call, with saving failing on `bad` and then loading failing on it; after each
// rejection the same call succeeds once disarmed.
template <class Domain>
void every_call_agrees(Domain& d, const std::string& who) {
  const mpi::communicator& w = d.comm();
  Disarm disarm;
  const int bad = w.size() - 1;
  double round = 0;  // local values change before each call: a call that went through shows
  auto renew = [&] {
    round += 1;
    for_local(d, [&](double& v, std::uint64_t key) { v = value_of(round, key); });
  };
  // Whether every ghost holds its owner's value of the current round.
  auto fresh = [&] {
    bool ok = true;
    for_ghosts(d, [&](double& v, std::uint64_t key) { ok = ok && v == value_of(round, key); });
    return count_false(w, ok) == 0;
  };
  d.collect_ghosts();
  if (w.size() == 1) {  // nothing travels, so nothing is serialized: every call goes through
    g_save_fails_on = g_load_fails_on = 0;
    d.collect_ghosts();
    d.exchange_ghosts();
    d.accumulate_ghosts([](auto& mine, const auto& c) { mine.value[0] += c.value[0]; });
    return;
  }
  for (int load = 0; load < 2; ++load) {
    int& armed = load ? g_load_fails_on : g_save_fails_on;
    const std::string what = load ? "load failed" : "save failed";
    const std::string on_rank = "on rank " + std::to_string(bad);
    CAPTURE(what);
    for (const char* s : strategies) {
      CAPTURE(s);
      renew();
      armed = bad;
      require_agreed_failure(d, bad, {who + "::collect_ghosts", on_rank, what},
                             [&] { d.collect_ghosts({}, irr::ghost::ByName(s)); });
      armed = -1;
      d.collect_ghosts({}, irr::ghost::ByName(s));
      REQUIRE(fresh());
    }
    renew();
    armed = bad;
    require_agreed_failure(d, bad, {who + "::exchange_ghosts", on_rank, what},
                           [&] { d.exchange_ghosts(); });
    armed = -1;
    d.exchange_ghosts();
    REQUIRE(fresh());

    for_ghosts(d, [](double& v, std::uint64_t) { v = 1; });
    armed = bad;
    auto sum = [](auto& mine, const auto& c) { mine.value[0] += c.value[0]; };
    require_agreed_failure(d, bad, {who + "::accumulate_ghosts", on_rank, what},
                           [&] { d.accumulate_ghosts(sum); });
    armed = -1;
    const State before = state(d);
    d.accumulate_ghosts(sum);
    REQUIRE(count_false(w, state(d).local != before.local) < w.size());  // some owner got sums
  }
}

}  // namespace

TEST_CASE(
    "IrregularDomain: a serialize() throwing on one rank fails every ghost call everywhere, "
    "nothing changed",
    "[ghost][errors]") {
  mpi::communicator w;
  Elements d(w, unit, irr::refine::max_elements(6));
  std::mt19937_64 rng(7 + static_cast<unsigned>(w.rank()));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Body> mine(1200 / static_cast<std::size_t>(w.size()));
  for (std::size_t i = 0; i < mine.size(); ++i)
    mine[i] = Body{{u(rng), u(rng)}, static_cast<std::uint64_t>(w.rank()) * 100000 + i, {0.0}};
  d.insert(mine);
  d.build();
  every_call_agrees(d, "irregular::IrregularDomain");
}

TEST_CASE(
    "CellDomain: a serialize() throwing on one rank fails every ghost call everywhere, "
    "nothing changed",
    "[ghost][errors][cells]") {
  mpi::communicator w;
  Cells d(w, unit, 4,
          [](const irr::Cell<2>& c) { return Datum{{static_cast<double>(c.anchor[0])}}; });
  every_call_agrees(d, "irregular::CellDomain");
}
