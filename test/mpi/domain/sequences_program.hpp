// The random programs of test_sequences.cpp (issue 38): the failure plan, the values, the checks
// and the Program over one IrregularDomain and one CellDomain with their serial references. Each
// configuration (curve, partitioner) is compiled in its own file, sequences_<config>.cpp.
#pragma once

#include <irregular/cell_domain.hpp>
#include <irregular/distributed/partitioners/registry.hpp>
#include <irregular/domain.hpp>
#include <irregular/tree/cell_tree.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include "domain_support.hpp"
#include "ghost_oracle.hpp"
#include "sequence_support.hpp"
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace sequences {

namespace irr = irregular;
namespace mpi = boost::mpi;
using namespace domain_support;
using namespace sequence_support;
using namespace ghost_oracle;

// ---- a callback that throws on one rank ---------------------------------------------------

// Armed on one rank for one call: every user callback ticks it; the n-th tick there throws.
struct FailPlan {
  bool armed = false;
  bool fired = false;
  std::uint64_t countdown = 0;
  void arm(bool here, std::uint64_t n) {
    armed = here;
    fired = false;
    countdown = n;
  }
  void tick() {
    if (!armed) return;
    if (countdown-- > 0) return;
    armed = false;
    fired = true;
    throw std::runtime_error("sequences: injected failure");
  }
};
inline FailPlan g_plan;
inline const std::string injected = "sequences: injected failure";

// ---- values ----------------------------------------------------------------------------------

template <int D>
struct Elem {
  std::array<double, D> position{};
  std::uint64_t id = 0;
  double value = 0;  // written by the program, exchanged and accumulated through ghosts
};

// One datum per leaf; integers in doubles, so sums are exact in any order.
struct Datum {
  double v = 0;
  std::uint64_t id = 0;
  Datum& operator+=(const Datum& o) {
    v += o.v;
    return *this;
  }
};

template <class T>
std::uint64_t bytes_hash(const T& x, std::uint64_t h = 0xCBF29CE484222325ull) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto* b = reinterpret_cast<const unsigned char*>(&x);
  for (std::size_t i = 0; i < sizeof x; ++i) h = (h ^ b[i]) * 0x100000001B3ull;
  return h;
}
template <class T>
bool same_bytes(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Every rank's trivially copyable values, gathered as bytes (the types need no serialize).
template <class T>
std::vector<std::vector<T>> gather_raw(const mpi::communicator& w, const std::vector<T>& mine) {
  std::vector<char> bytes(mine.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), mine.data(), bytes.size());
  std::vector<std::vector<char>> all;
  mpi::all_gather(w, bytes, all);
  std::vector<std::vector<T>> out(all.size());
  for (std::size_t r = 0; r < all.size(); ++r) {
    out[r].resize(all[r].size() / sizeof(T));
    if (!all[r].empty()) std::memcpy(out[r].data(), all[r].data(), all[r].size());
  }
  return out;
}

// Order-independent checksum of values with every byte (the value field included).
template <class T>
std::array<std::uint64_t, 3> full_checksum(std::span<const T> xs) {
  std::array<std::uint64_t, 3> s{0, 0, 0};
  for (const auto& x : xs) {
    const std::uint64_t h = mix64(bytes_hash(x));
    s[0] += 1;
    s[1] += h;
    s[2] ^= h * 0xD6E8FEB86659FD93ull;
  }
  return s;
}

template <int D>
std::uint64_t cell_word(const irr::Cell<D>& c) {
  std::uint64_t h = static_cast<std::uint64_t>(c.level) * 0x9E3779B97F4A7C15ull;
  for (int d = 0; d < D; ++d) h = mix64(h ^ static_cast<std::uint64_t>(c.anchor[d]));
  return h;
}

// The cell callbacks (split, merge, init) and the cell load metric tick the plan when asked.
template <int D>
struct Split {
  bool ticks = true;
  Datum operator()(const Datum& parent, const irr::Cell<D>& child) const {
    if (ticks) g_plan.tick();
    return {parent.v + static_cast<double>(cell_word(child) % 7),
            mix64(parent.id ^ cell_word(child))};
  }
};
struct Merge {
  bool ticks = true;
  Datum operator()(std::span<const Datum> kids) const {
    if (ticks) g_plan.tick();
    Datum d{0, 0x51};
    for (const auto& k : kids) {
      d.v += k.v;
      d.id = d.id * 1000003ull ^ k.id;
    }
    return d;
  }
};
template <int D>
Datum init_datum(const irr::Cell<D>& c) {
  return {static_cast<double>(cell_word(c) % 100), cell_word(c)};
}
struct CellWeight {
  template <int D>
  double operator()(const irr::Cell<D>& c, std::size_t) const {
    g_plan.tick();
    return 1.0 + static_cast<double>(c.level % 3);
  }
};

// The hnode value: counts and order-independent sums of a leaf, an order-sensitive fold above.
struct HV {
  std::uint64_t count = 0, sum = 0, fold = 0;
};
template <int D>
HV combine_hv(const irr::Cell<D>& c, std::span<const HV> kids) {
  HV v{0, 0, cell_word(c)};
  for (const auto& k : kids) {
    v.count += k.count;
    v.sum += k.sum;
    v.fold = (v.fold * 1000003ull) ^ k.fold;
  }
  return v;
}

// domain_support::Mac whose every call is a tick of the fail plan (it may throw, as armed).
template <int D>
struct CountedMac {
  double theta;
  bool operator()(const irr::Box<D>& h, const irr::Box<D>& r) const {
    g_plan.tick();
    return domain_support::Mac<D>{theta}(h, r);
  }
};

// ---- agreement on problems ------------------------------------------------------------------

// The first non-empty problem over the ranks (lowest rank first), on every rank.
inline std::string agree_problem(const mpi::communicator& w, const std::string& mine) {
  std::vector<std::string> all;
  mpi::all_gather(w, mine, all);
  for (std::size_t r = 0; r < all.size(); ++r)
    if (!all[r].empty()) return "rank " + std::to_string(r) + ": " + all[r];
  return {};
}

struct Outcome {
  bool threw = false;  // collective_error
  bool other = false;  // anything else
  int failing = -2;
  std::string message;
};
template <class F>
Outcome attempt(F&& f) {
  Outcome o;
  try {
    f();
  } catch (const irr::collective_error& e) {
    o.threw = true;
    o.failing = e.failing_rank();
    o.message = e.what();
  } catch (const std::exception& e) {
    o.other = true;
    o.message = std::string("not a collective_error: ") + e.what();
  } catch (...) {
    o.other = true;
    o.message = "not a std::exception";
  }
  g_plan.armed = false;
  return o;
}

// Whether the call's outcome is the one expected: success, or an agreed collective_error from
// `rank` (-1: any one rank, the same everywhere) whose message holds `needle`.
inline std::string judge(const mpi::communicator& w, const Outcome& o, bool expect_failure,
                         int rank, const std::string& needle) {
  std::string bad;
  if (!expect_failure) {
    if (o.threw || o.other) bad = "unexpected failure: " + o.message;
  } else if (o.other) {
    bad = o.message;
  } else if (!o.threw) {
    bad = "no error where one was due (" + needle + ")";
  } else if (rank >= 0 && o.failing != rank) {
    bad = "failing_rank " + std::to_string(o.failing) + ", expected " + std::to_string(rank) +
          ": " + o.message;
  } else if (!needle.empty() && o.message.find(needle) == std::string::npos) {
    bad = "message without '" + needle + "': " + o.message;
  }
  if (bad.empty() && expect_failure) {  // the same message and rank everywhere
    std::string root = o.message;
    int root_rank = o.failing;
    mpi::broadcast(w, root, 0);
    mpi::broadcast(w, root_rank, 0);
    if (root != o.message || root_rank != o.failing)
      bad = "another error than rank 0's: '" + o.message + "' vs '" + root + "'";
  }
  return agree_problem(w, bad);
}

// The whole state of a domain, one word per rank, gathered: values (every byte), leaves, loads,
// the map, the rank, the ghost layer's freshness, and the element count with pending ones. The
// shape alone (leaves, map, rank) tells whether values of reduce_up went stale.
template <class Dom>
std::vector<std::uint64_t> state_words(const Dom& d, bool shape_only = false) {
  std::uint64_t h = 0x1234;
  if (shape_only) {
  } else if constexpr (requires { d.local_elements(); }) {
    for (const auto& e : d.local_elements()) h = bytes_hash(e, h);
    h = bytes_hash(d.global_element_count(), h);
  } else {
    for (const auto& x : d.local_data()) h = bytes_hash(x, h);
  }
  const auto& t = d.local_tree();
  for (std::size_t i = 0; i < t.size(); ++i) {
    h = bytes_hash(static_cast<std::uint64_t>(t.start(i)), h);
    h = bytes_hash(t.level(i), h);
    h = bytes_hash(t.counts()[i], h);
  }
  if (!shape_only)
    for (double l : d.local_loads()) h = bytes_hash(l, h);
  h = mix64(h ^ std::hash<std::string>{}(serialized(d.ownership())));
  h = bytes_hash(d.comm().rank(), h);
  if (!shape_only) h = bytes_hash(d.ghosts_current(), h);
  std::vector<std::uint64_t> all;
  mpi::all_gather(d.comm(), h, all);
  return all;
}

// ---- the program ----------------------------------------------------------------------------

inline const char* const ghost_names[] = {"RA", "FP", "IFP"};

template <class C, class P>
struct Program {
  static constexpr int D = C::dim;
  using E = Elem<D>;
  using S = irr::stencil::Moore<D>;
  using ED = irr::IrregularDomain<E, S, C, irr::load::ElementCount, P>;
  using CD = irr::CellDomain<Datum, S, C, irr::load::Weighted<CellWeight>, P>;
  using Tree = irr::CellTree<C, Datum>;
  using Values = irr::HnodeValues<C, HV>;
  enum class Fresh { current, stale, unknown };  // what the model knows of a ghost layer

  const mpi::communicator& world;
  std::uint64_t seed;
  Rng rng;
  P policy;
  std::string policy_name;
  int hold_level = -1;
  irr::Periodicity<D> per{};
  bool verbose = false;
  std::string log;  // the calls so far
  std::string problem;

  // The element domain and its model.
  irr::Box<D> box{};
  std::size_t k = 4;
  std::unique_ptr<ED> ed;
  Oracle<E> eo;
  bool partitioned = false;  // a build or a remapping rebalance made the map (check_invariants)
  bool e_built = false;      // the domain counts as built: a build, a move or a remap happened
  Fresh e_fresh = Fresh::stale;
  std::array<double, D> centre{};
  irr::hnodes::InformedFaultPrevention e_ifp;
  std::optional<Values> e_values;  // from reduce_up, kept for later walks (maybe stale)

  // The cell domain and its model.
  irr::Box<D> cbox{};
  std::unique_ptr<CD> cd;
  Tree ct;
  Fresh c_fresh = Fresh::stale;
  irr::hnodes::InformedFaultPrevention c_ifp;
  std::optional<Values> c_values;
  static constexpr bool segments = std::same_as<typename ED::map_type, irr::SegmentMap<C>>;

  Program(const mpi::communicator& w, std::uint64_t s, P pol, std::string pname)
      : world(w), seed(s), rng{mix64(s)}, policy(std::move(pol)), policy_name(std::move(pname)) {
    verbose = env_u64("IRREGULAR_SEQ_VERBOSE", 0) != 0;
  }

  typename ED::options_type e_options() const {
    typename ED::options_type o;
    o.partitioner = policy;
    o.periodic = per;
    o.hold_level = hold_level;
    return o;
  }
  typename CD::options_type c_options() const {
    typename CD::options_type o;
    o.partitioner = policy;
    o.periodic = per;
    o.hold_level = hold_level;
    return o;
  }
  typename ED::condition_type condition() const {
    const auto base = irr::refine::max_elements(k);
    return [base](const irr::Cell<D>& c, std::size_t n) {
      g_plan.tick();
      return base(c, n);
    };
  }

  void note(const std::string& what) {
    log += (log.empty() ? "" : " | ") + what;
    if (verbose && world.rank() == 0)
      std::printf("seed %llu: %s\n", static_cast<unsigned long long>(seed), what.c_str());
  }
  void fail(const std::string& where, const std::string& what) {
    if (problem.empty() && !what.empty()) problem = where + ": " + what;
  }

  // Arms the plan on one rank of `comm` with probability `p`; returns that rank or -1.
  int maybe_arm(const mpi::communicator& comm, double p, std::uint64_t most) {
    const bool arm = rng.chance(p);
    const int r = static_cast<int>(rng.below(static_cast<std::uint64_t>(comm.size())));
    const std::uint64_t n = rng.below(most + 1);
    if (!arm) return -1;
    g_plan.arm(comm.rank() == r, n);
    return r;
  }
  // After the call: did the armed rank's callback throw?
  bool plan_fired(const mpi::communicator& comm) {
    int f = g_plan.fired ? 1 : 0, any = 0;
    mpi::all_reduce(comm, f, any, mpi::maximum<int>());
    g_plan.fired = false;
    g_plan.armed = false;
    return any != 0;
  }

  // ---- checks of the element domain ----

  std::string check_elements(ED& d, bool loaded = false) {
    std::string bad = describe(check_invariants(d, eo, k, partitioned || loaded));
    if (bad == "none") bad.clear();
    const auto mine = full_checksum<E>(d.local_elements());
    if (global_checksum(d.comm(), mine) != full_checksum<E>(eo.built))
      bad += " values differ from the model";
    if (!loaded) {
      const bool cur = d.ghosts_current();
      if ((e_fresh == Fresh::current && !cur) || (e_fresh == Fresh::stale && cur))
        bad +=
            std::string(" ghosts_current() is ") + (cur ? "true" : "false") + " against the model";
    }
    return agree_problem(d.comm(), bad.empty() ? "" : "element domain:" + bad);
  }

  // Every ghost's elements equal its owner's elements, byte for byte (by id).
  std::string check_ghost_values(ED& d) {
    std::vector<E> mine(d.local_elements().begin(), d.local_elements().end());
    const auto all = gather_raw(d.comm(), mine);
    std::map<std::uint64_t, E> by_id;
    for (const auto& v : all)
      for (const auto& e : v) by_id[e.id] = e;
    std::string bad;
    for (std::size_t g = 0; g < d.ghosts().size() && bad.empty(); ++g) {
      const auto gl = d.ghost(g);
      if (gl.elements.size() != gl.count)
        bad = "ghost " + std::to_string(g) + " holds a wrong count";
      for (const auto& e : gl.elements) {
        auto it = by_id.find(e.id);
        if (it == by_id.end() || !same_bytes(it->second, e)) {
          bad = "ghost element " + std::to_string(e.id) + " differs from its owner's";
          break;
        }
        if (!gl.interval.contains(d.key_of(e))) bad = "ghost element outside its ghost leaf";
      }
    }
    return agree_problem(d.comm(), bad);
  }

  // ---- checks of the cell domain ----

  struct Gathered {
    std::vector<std::uint64_t> starts;
    std::vector<int> levels;
    std::vector<Datum> data;
    std::vector<int> owner;
  };
  Gathered gather_cells(const CD& d) {
    const auto& t = d.local_tree();
    std::vector<std::uint64_t> s;
    std::vector<int> l;
    for (std::size_t i = 0; i < t.size(); ++i) {
      s.push_back(static_cast<std::uint64_t>(t.start(i)));
      l.push_back(t.level(i));
    }
    std::vector<Datum> x(d.local_data().begin(), d.local_data().end());
    std::vector<std::vector<std::uint64_t>> as;
    std::vector<std::vector<int>> al;
    mpi::all_gather(d.comm(), s, as);
    mpi::all_gather(d.comm(), l, al);
    const auto ax = gather_raw(d.comm(), x);
    Gathered g;
    for (std::size_t r = 0; r < as.size(); ++r)
      for (std::size_t i = 0; i < as[r].size(); ++i) {
        g.starts.push_back(as[r][i]);
        g.levels.push_back(al[r][i]);
        g.data.push_back(i < ax[r].size() ? ax[r][i] : Datum{});
        g.owner.push_back(static_cast<int>(r));
      }
    return g;
  }

  std::string check_cells(CD& d, bool loaded = false) {
    std::string bad;
    const auto g = gather_cells(d);
    std::vector<std::size_t> order(g.starts.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(),
              [&](auto a, auto b) { return g.starts[a] < g.starts[b]; });
    if (d.local_data().size() != d.local_leaf_count()) bad += " data and leaves differ in number";
    if (order.size() != ct.size()) {
      bad += " " + std::to_string(order.size()) + " leaves, the model " + std::to_string(ct.size());
    } else {
      for (std::size_t i = 0; i < ct.size(); ++i) {
        const auto j = order[i];
        if (g.starts[j] != static_cast<std::uint64_t>(ct.start(i)) || g.levels[j] != ct.level(i)) {
          bad += " leaf " + std::to_string(i) + " differs from the model's";
          break;
        }
        if (!same_bytes(g.data[j], ct.data(i))) {
          bad += " the datum of leaf " + std::to_string(i) + " differs from the model's";
          break;
        }
      }
    }
    // Each leaf lies where the map says; local leaves in curve order.
    const auto& t = d.local_tree();
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (d.ownership().leaf_owner(t.cell(i)) != d.comm().rank()) {
        bad += " a leaf is not where the map says";
        break;
      }
      if (i > 0 && t.start(i - 1) >= t.start(i)) bad += " local leaves out of order";
    }
    if (d.ownership().parts() != d.comm().size()) bad += " the map has another number of parts";
    const std::uint64_t h = std::hash<std::string>{}(serialized(d.ownership()));
    std::uint64_t lo = 0, hi = 0;
    mpi::all_reduce(d.comm(), h, lo, mpi::minimum<std::uint64_t>());
    mpi::all_reduce(d.comm(), h, hi, mpi::maximum<std::uint64_t>());
    if (lo != hi) bad += " the map differs between ranks";
    if (d.global_leaf_count() != ct.size()) bad += " global_leaf_count";
    if (!loaded) {
      const bool cur = d.ghosts_current();
      if ((c_fresh == Fresh::current && !cur) || (c_fresh == Fresh::stale && cur))
        bad +=
            std::string(" ghosts_current() is ") + (cur ? "true" : "false") + " against the model";
    }
    return agree_problem(d.comm(), bad.empty() ? "" : "cell domain:" + bad);
  }

  std::string check_cell_ghost_values(CD& d) {
    const auto g = gather_cells(d);
    std::map<std::uint64_t, Datum> by_start;
    for (std::size_t i = 0; i < g.starts.size(); ++i) by_start[g.starts[i]] = g.data[i];
    std::string bad;
    for (std::size_t i = 0; i < d.ghosts().size(); ++i) {
      auto it = by_start.find(static_cast<std::uint64_t>(d.ghosts().starts()[i]));
      if (it == by_start.end() || !same_bytes(it->second, d.ghost_data(i))) {
        bad = "the datum of ghost " + std::to_string(i) + " differs from its owner's";
        break;
      }
    }
    return agree_problem(d.comm(), bad);
  }

  // ---- ghosts: collection against brute force (both domains) ----

  irr::GhostOptions draw_ghost_options(bool& empty_levels) {
    irr::GhostOptions o;
    const int lmax = 8;
    if (rng.chance(0.3)) {
      const int a = rng.range(0, lmax), b = rng.range(0, lmax);
      o.levels = {std::min(a, b), std::max(a, b)};
    }
    if (rng.chance(0.25)) {
      const int a = rng.range(0, lmax), b = rng.range(0, lmax);
      o.readers = {std::min(a, b), std::max(a, b)};
    }
    o.contact = static_cast<irr::Contact>(rng.below(4));
    static const std::size_t bs[] = {0, 0, 1, 3, 16};
    o.merge.buffer_entries = bs[rng.below(5)];
    o.merge.termination =
        rng.chance(0.3) ? irr::mpi::Termination::messages : irr::mpi::Termination::nbx;
    empty_levels = rng.chance(0.04);
    if (empty_levels) o.levels = {3, 2};
    return o;
  }

  template <class Dom>
  std::string check_ghost_set(Dom& d, const irr::GhostOptions& o, const std::string& strategy,
                              const irr::GhostStats& stats) {
    const auto want = needed<Dom, S>(d, o.contact, o.levels, o.readers);
    const auto got = ghost_set(d);
    std::string bad;
    if (strategy == "IFP" || (strategy == "RA" && o.contact == irr::Contact::stencil)) {
      if (got != want)
        bad = "the ghost set differs from brute force (" + std::to_string(got.size()) + " vs " +
              std::to_string(want.size()) + ")";
    } else if (!std::includes(got.begin(), got.end(), want.begin(), want.end())) {
      bad = "the ghost set misses leaves brute force needs";
    } else if (stats.leaves_useless != got.size() - want.size()) {
      bad = "leaves_useless " + std::to_string(stats.leaves_useless) + ", surplus " +
            std::to_string(got.size() - want.size());
    }
    for (const auto& gh : got)
      if (!o.levels.contains(std::get<1>(gh))) bad = "a ghost outside the level range";
    if (!d.ghosts_current()) bad += " ghosts_current() false after a collection";
    return agree_problem(d.comm(), bad);
  }

  template <class Dom>
  void collect(Dom& d, Fresh& fresh, const char* who) {
    bool empty_levels = false;
    auto o = draw_ghost_options(empty_levels);
    const int form = static_cast<int>(rng.below(5));  // 0-2 typed, 3 ByName, 4 default (IFP)
    const std::string strategy = form < 3    ? ghost_names[form]
                                 : form == 3 ? ghost_names[rng.below(3)]
                                             : "IFP";
    note(std::string(who) + ".collect_ghosts(" + strategy + (form == 3 ? " by name" : "") +
         ", levels " + std::to_string(o.levels.min) + ".." + std::to_string(o.levels.max) +
         ", readers " + std::to_string(o.readers.min) + ".." + std::to_string(o.readers.max) +
         ", contact " + std::to_string(static_cast<int>(o.contact)) + ", b " +
         std::to_string(o.merge.buffer_entries) + ")");
    const auto before = state_words(d);
    irr::GhostStats stats;
    const auto out = attempt([&] {
      if (form == 0) stats = d.collect_ghosts(o, irr::ghost::RequestAnswer{});
      if (form == 1) stats = d.collect_ghosts(o, irr::ghost::FaultPrevention{});
      if (form == 2) stats = d.collect_ghosts(o, irr::ghost::InformedFaultPrevention{});
      if (form == 3) stats = d.collect_ghosts(o, irr::ghost::ByName(strategy));
      if (form == 4) stats = d.collect_ghosts(o);
    });
    fail(who, judge(d.comm(), out, empty_levels, -1, ""));
    if (empty_levels) {
      if (state_words(d) != before) fail(who, "a refused collection changed the domain");
      return;
    }
    fresh = Fresh::current;
    if (problem.empty()) fail(who, check_ghost_set(d, o, strategy, stats));
  }

  // ---- element domain calls ----

  void e_insert() {
    const int p = ed->comm().size(), me = ed->comm().rank();
    const int m = eo.built.empty() && eo.pending.empty() ? rng.range(20, 200) : rng.range(0, 60);
    const int mode_all = static_cast<int>(rng.below(6));
    if (rng.chance(0.3))
      for (int d = 0; d < D; ++d) centre[d] = rng.unit();
    std::vector<E> all, local;
    for (int i = 0; i < m; ++i) {
      const int mode = mode_all == 5 ? static_cast<int>(rng.below(5)) : mode_all;
      E e{};
      e.position = gen_position<D>(rng, box, mode, centre, eo);
      e.id = eo.next_id++;
      all.push_back(e);
      if (static_cast<int>(rng.below(static_cast<std::uint64_t>(p))) == me) local.push_back(e);
    }
    const bool invalid = rng.chance(0.08);
    const int bad_rank = static_cast<int>(rng.below(static_cast<std::uint64_t>(p)));
    const auto kind = rng.next();
    const int axis = static_cast<int>(rng.below(D));
    note("E.insert(" + std::to_string(m) +
         (invalid ? ", invalid on rank " + std::to_string(bad_rank) : "") + ")");
    if (invalid && me == bad_rank) {
      E b{};
      b.position = box.lo;
      b.id = ~std::uint64_t{0};
      make_invalid<D>(b.position, box, kind, axis);
      local.insert(local.begin() + static_cast<std::ptrdiff_t>(kind % (local.size() + 1)), b);
    }
    const auto before = invalid ? state_words(*ed) : std::vector<std::uint64_t>{};
    const auto out = attempt([&] { ed->insert(local); });
    // The message names the element and the rank (outside the box, NaN or infinite).
    fail("E.insert",
         judge(ed->comm(), out, invalid, bad_rank, "on rank " + std::to_string(bad_rank)));
    if (invalid) {
      if (problem.empty() && state_words(*ed) != before)
        fail("E.insert", "a rejected insert changed the domain");
      return;
    }
    eo.pending.insert(eo.pending.end(), all.begin(), all.end());
  }

  void e_build() {
    const int bad = maybe_arm(ed->comm(), 0.25, 200);
    note("E.build()" +
         std::string(bad >= 0 ? " [condition throws on rank " + std::to_string(bad) + "]" : ""));
    const auto before = bad >= 0 ? state_words(*ed) : std::vector<std::uint64_t>{};
    const auto out = attempt([&] { ed->build(); });
    const bool fired = plan_fired(ed->comm());
    fail("E.build", judge(ed->comm(), out, fired, bad, injected));
    if (fired) {
      if (problem.empty() && state_words(*ed) != before)
        fail("E.build", "a failed build changed the domain");
      return;
    }
    partitioned = e_built = true;
    eo.built.insert(eo.built.end(), eo.pending.begin(), eo.pending.end());
    eo.pending.clear();
    e_fresh = Fresh::stale;
  }

  void e_move() {
    const auto mv = random_mover<D>(rng, box, centre, eo);
    const bool removes = rng.chance(0.3);
    const auto dies = [&](const E& e) { return removes && e.id % (mv.modulus + 3) == 0; };
    const int bad = maybe_arm(ed->comm(), 0.25, 60);
    note("E.move(mode " + std::to_string(mv.mode) + (removes ? ", removes" : "") + ")" +
         (bad >= 0 ? " [update/condition throws on rank " + std::to_string(bad) + "]" : ""));
    const auto before = bad >= 0 ? state_words(*ed) : std::vector<std::uint64_t>{};
    const auto out = attempt([&] {
      if (removes)
        ed->move_elements([&](E& e) {
          g_plan.tick();
          if (dies(e)) return false;
          mv(e);
          return true;
        });
      else
        ed->move_elements([&](E& e) {
          g_plan.tick();
          mv(e);
        });
    });
    const bool fired = plan_fired(ed->comm());
    fail("E.move", judge(ed->comm(), out, fired, bad, injected));
    if (fired) {
      if (problem.empty() && state_words(*ed) != before)
        fail("E.move", "a failed move changed the domain");
      return;
    }
    std::erase_if(eo.built, dies);
    for (auto& e : eo.built) mv(e);
    eo.built.insert(eo.built.end(), eo.pending.begin(), eo.pending.end());
    eo.pending.clear();
    e_fresh = Fresh::stale;
    e_built = true;
  }

  // Rebalance options and whether the documented rules accept them (rebalancing.md).
  irr::RebalanceOptions draw_rebalance(int p, bool segments, bool& valid, std::string& what) {
    irr::RebalanceOptions o;
    static const double ts[] = {0.0, 0.0, 0.01, 0.05, 0.2, 1.0};
    o.threshold = ts[rng.below(6)];
    valid = true;
    what = "t " + std::to_string(o.threshold);
    if (rng.chance(0.3)) {
      o.strategy = irr::RemapStrategy::neighbour_shift;
      what += ", neighbour shift";
      if (!segments || hold_level >= 0) valid = false;
    }
    if (rng.chance(0.25)) {
      o.capacities.resize(static_cast<std::size_t>(p));
      for (auto& c : o.capacities) c = rng.chance(0.15) ? 0.0 : 0.25 + rng.unit();
      if (std::all_of(o.capacities.begin(), o.capacities.end(), [](double c) { return c == 0; }))
        valid = false;
      what += ", capacities";
      if (!segments) valid = false;
    }
    if (rng.chance(0.2)) {
      o.horizon = rng.chance(0.5) ? 1.0 : 1000.0;
      o.seconds_per_byte = rng.chance(0.5) ? 1e-9 : 1e-3;
      o.seconds_per_load = 1e-6;
      what += ", horizon";
    }
    if (rng.chance(0.2)) {
      o.order.resize(static_cast<std::size_t>(p));
      std::iota(o.order.begin(), o.order.end(), 0);
      for (int i = p - 1; i > 0; --i)
        std::swap(o.order[static_cast<std::size_t>(i)],
                  o.order[rng.below(static_cast<std::uint64_t>(i + 1))]);
      what += ", order";
      if (!segments || o.strategy == irr::RemapStrategy::neighbour_shift) valid = false;
    } else if (rng.chance(0.25)) {
      static const irr::ChainArrangement as[] = {
          irr::ChainArrangement::best, irr::ChainArrangement::minimize_cost,
          irr::ChainArrangement::optimal, irr::ChainArrangement::overlap_matching};
      o.arrangement = as[rng.below(4)];
      what += ", arrangement " + std::to_string(static_cast<int>(o.arrangement));
      if (!segments || o.strategy == irr::RemapStrategy::neighbour_shift) valid = false;
    }
    return o;
  }

  template <class Dom>
  void rebalance(Dom& d, Fresh& fresh, bool& remapped_once, const char* who) {
    const int p = d.comm().size();
    bool valid = true;
    std::string what;
    auto o =
        draw_rebalance(p, std::same_as<typename Dom::map_type, irr::SegmentMap<C>>, valid, what);
    // One rank's threshold or capacity is bad.
    const bool one_bad = rng.chance(0.1);
    const int bad_rank = static_cast<int>(rng.below(static_cast<std::uint64_t>(p)));
    const auto bad_kind = rng.below(3);
    if (one_bad && d.comm().rank() == bad_rank) {
      if (bad_kind == 0) o.threshold = -0.5;
      if (bad_kind == 1) o.threshold = std::numeric_limits<double>::quiet_NaN();
      if (bad_kind == 2) o.horizon = -1.0;
    }
    note(std::string(who) + ".rebalance(" + what +
         (one_bad ? ", bad on rank " + std::to_string(bad_rank) : "") + ")");
    const auto before = state_words(d);
    const int old_rank = d.comm().rank();
    irr::RebalanceDecision dec;
    const auto out = attempt([&] { dec = d.rebalance(o); });
    const bool expect_fail = one_bad || !valid;
    // One bad rank: that rank (its own check fires first); invalid options: every rank, so 0.
    const int rank = one_bad ? bad_rank : (!valid ? 0 : -1);
    const std::string j = judge(d.comm(), out, expect_fail, one_bad || !valid ? rank : -1, "");
    // Invalid options and one bad rank together: the lowest failing rank, which may be 0.
    if (!(one_bad && !valid)) fail(std::string(who) + ".rebalance", j);
    if (expect_fail || out.threw || out.other) {
      if (problem.empty() && state_words(d) != before)
        fail(std::string(who) + ".rebalance", "a refused rebalance changed the domain");
      return;
    }
    std::string bad;
    if (dec.remapped && !(dec.unbalance > o.threshold)) bad = "remapped within the threshold";
    if (!dec.remapped && !o.horizon && dec.unbalance > o.threshold)
      bad = "did not remap beyond the threshold";
    if (!dec.remapped && (d.last_migration().elements != 0 || d.last_migration().bytes != 0))
      bad = "a rebalance that did not remap moved data";
    if (dec.remapped && dec.order.size() == static_cast<std::size_t>(p) &&
        dec.order[static_cast<std::size_t>(d.comm().rank())] != old_rank)
      bad = "rank " + std::to_string(d.comm().rank()) + " holds chain part of old rank " +
            std::to_string(dec.order[static_cast<std::size_t>(d.comm().rank())]) + ", was " +
            std::to_string(old_rank);
    int r = dec.remapped ? 1 : 0, lo = 0, hi = 0;
    mpi::all_reduce(d.comm(), r, lo, mpi::minimum<int>());
    mpi::all_reduce(d.comm(), r, hi, mpi::maximum<int>());
    if (lo != hi) bad = "ranks decided differently";
    fail(std::string(who) + ".rebalance", agree_problem(d.comm(), bad));
    if (dec.remapped) {
      fresh = Fresh::stale;
      remapped_once = true;
    }
  }

  // Writes new values into the local elements (the model too); collected ghosts go stale in value.
  void e_write_values(std::uint64_t salt) {
    for (std::size_t i = 0; i < ed->local_leaf_count(); ++i)
      for (auto& e : ed->leaf(i).elements) e.value = static_cast<double>(mix64(salt ^ e.id) % 1000);
    for (auto& e : eo.built) e.value = static_cast<double>(mix64(salt ^ e.id) % 1000);
  }

  // exchange_ghosts on either domain (`who`: "E" or "C"), new values written first: refused
  // with nothing changed when the layer is not current, else checked against brute force.
  template <class Dom, class Write, class Check>
  void exchange_step(const std::string& who, Dom& dom, Write write_values, Check check) {
    const std::uint64_t salt = rng.next();
    note(who + ".exchange_ghosts()");
    write_values(salt);
    const bool current = dom.ghosts_current();
    const auto before = state_words(dom);
    const auto out = attempt([&] { (void)dom.exchange_ghosts(); });
    const std::string at = who + ".exchange";
    fail(at, judge(dom.comm(), out, !current, -1, ""));
    if (!current) {
      if (problem.empty() && state_words(dom) != before)
        fail(at, "a refused exchange changed the domain");
      return;
    }
    if (problem.empty()) fail(at, check(dom));
  }

  void e_exchange() {
    exchange_step(
        "E", *ed, [&](std::uint64_t salt) { e_write_values(salt); },
        [&](auto& d) { return check_ghost_values(d); });
  }

  void e_accumulate() {
    const std::uint64_t salt = rng.next();
    const int bad = maybe_arm(ed->comm(), 0.2, 20);
    note("E.accumulate_ghosts()" +
         std::string(bad >= 0 ? " [op throws on rank " + std::to_string(bad) + "]" : ""));
    const bool armed_here = g_plan.armed;
    g_plan.armed = false;
    const bool current = ed->ghosts_current();
    auto contribution = [&](std::uint64_t id) {
      return static_cast<double>(1 + mix64(salt ^ id) % 5);
    };
    for (auto& e : ed->ghost_elements()) e.value = contribution(e.id);
    std::vector<E> ghosts_before(ed->ghost_elements().begin(), ed->ghost_elements().end());
    // How many ranks hold each element as a ghost: each adds its contribution once.
    std::vector<std::uint64_t> ids;
    for (const auto& e : ed->ghost_elements()) ids.push_back(e.id);
    std::vector<std::vector<std::uint64_t>> all_ids;
    mpi::all_gather(ed->comm(), ids, all_ids);
    const auto before = state_words(*ed);
    std::uint64_t mismatched = 0;
    g_plan.armed = armed_here;
    const auto out = attempt([&] {
      (void)ed->accumulate_ghosts([&](E& mine, const E& c) {
        g_plan.tick();
        if (mine.id != c.id) ++mismatched;
        mine.value += c.value;
      });
    });
    const bool fired = plan_fired(ed->comm());
    fail("E.accumulate",
         judge(ed->comm(), out, fired || !current, fired ? bad : -1, fired ? injected : ""));
    if (fired || !current) {
      if (problem.empty() && state_words(*ed) != before)
        fail("E.accumulate", "a failed accumulate changed the domain");
      return;
    }
    std::map<std::uint64_t, int> copies;
    for (const auto& v : all_ids)
      for (auto id : v) ++copies[id];
    for (auto& e : eo.built) {
      auto it = copies.find(e.id);
      if (it != copies.end()) e.value += it->second * contribution(e.id);
    }
    std::string badmsg;
    if (mismatched) badmsg = "op met a contribution of another element";
    const auto gs = ed->ghost_elements();
    if (gs.size() != ghosts_before.size() ||
        !std::equal(gs.begin(), gs.end(), ghosts_before.begin(),
                    [](const E& a, const E& b) { return same_bytes(a, b); }))
      badmsg += " accumulate changed the ghost elements";
    fail("E.accumulate", agree_problem(ed->comm(), badmsg));
  }

  // ---- reduce_up and walks (both domains) ----

  // One word per reader leaf: accepted hnodes in order, their values, near elements' ids.
  struct Trace {
    std::uint64_t start = 0, hash = 0;
  };
  template <class Dom>
  std::vector<Trace> walk_traces(const Dom& d, Values& values, double theta, int form,
                                 irr::hnodes::InformedFaultPrevention& kept,
                                 const std::string& by_name) {
    using V = std::conditional_t < requires { d.local_elements(); }
    , E, Datum > ;
    std::vector<Trace> t(d.local_leaf_count());
    for (std::size_t i = 0; i < t.size(); ++i)
      t[i] = {static_cast<std::uint64_t>(d.local_tree().start(i)), 0x9E37ull};
    auto accept = [&](std::size_t leaf, std::size_t n, bool near, std::span<const V> xs) {
      g_plan.tick();
      auto& h = t.at(leaf).hash;
      h = (h ^ static_cast<std::uint64_t>(values.start(n))) * 0x100000001B3ull;
      h = (h ^ static_cast<std::uint64_t>(values.level(n) * 2 + near)) * 0x100000001B3ull;
      if (near) {
        std::uint64_t s = 0;  // equal keys may come in another order at another rank count
        for (const auto& x : xs) s += mix64(x.id);
        h = (h ^ s ^ xs.size()) * 0x100000001B3ull;
      } else {
        h = (h ^ bytes_hash(values.value(n))) * 0x100000001B3ull;
      }
    };
    const CountedMac<D> open{theta};
    if (form == 0) (void)d.walk_hnodes(values, open, accept, irr::hnodes::RequestAnswer{});
    if (form == 1) (void)d.walk_hnodes(values, open, accept, irr::hnodes::FaultPrevention{});
    if (form == 2)
      (void)d.walk_hnodes(values, open, accept, irr::hnodes::InformedFaultPrevention{});
    if (form == 3) (void)d.walk_hnodes(values, open, accept, kept);
    if (form == 4) (void)d.walk_hnodes(values, open, accept, irr::hnodes::ByName(by_name));
    return t;
  }

  static std::vector<std::uint64_t> flat(const std::vector<Trace>& ts) {
    std::vector<std::uint64_t> f;
    for (const auto& t : ts) f.insert(f.end(), {t.start, t.hash});
    return f;
  }

  template <class Dom>
  auto reduce(const Dom& d) {
    if constexpr (requires { d.local_elements(); }) {
      return d.reduce_up(
          [](const irr::Cell<D>& c, std::span<const E> es) {
            g_plan.tick();
            HV v{es.size(), 0, cell_word(c)};
            for (const auto& e : es) v.sum += mix64(e.id);
            return v;
          },
          [](const irr::Cell<D>& c, std::span<const HV> kids) {
            g_plan.tick();
            return combine_hv<D>(c, kids);
          });
    } else {
      return d.reduce_up(
          [](const irr::Cell<D>& c, const Datum& x) {
            g_plan.tick();
            return HV{1, mix64(x.id), cell_word(c)};
          },
          [](const irr::Cell<D>& c, std::span<const HV> kids) {
            g_plan.tick();
            return combine_hv<D>(c, kids);
          });
    }
  }

  // The one-rank reference: a domain on MPI_COMM_SELF at rank 0 holding the model's state.
  std::unique_ptr<ED> alone_elements() {
    mpi::communicator self(MPI_COMM_SELF, mpi::comm_attach);
    auto s = std::make_unique<ED>(self, box, irr::refine::max_elements(k), e_options());
    s->insert(eo.built);
    s->build();
    return s;
  }
  std::unique_ptr<CD> alone_cells() {
    mpi::communicator self(MPI_COMM_SELF, mpi::comm_attach);
    std::vector<irr::Cell<D>> cells;
    std::vector<Datum> data;
    for (std::size_t i = 0; i < ct.size(); ++i) {
      cells.push_back(ct.cell(i));
      data.push_back(ct.data(i));
    }
    return std::make_unique<CD>(self, cbox, std::span<const irr::Cell<D>>(cells), data,
                                c_options());
  }

  template <class Dom, class Alone>
  void hnodes(Dom& d, std::optional<Values>& kept_values,
              irr::hnodes::InformedFaultPrevention& kept, bool& changed_since, Alone&& alone,
              const char* who) {
    const std::string w = std::string(who);
    // Stale values from before a change of the tree or the map are refused everywhere.
    if (kept_values && changed_since && rng.chance(0.3)) {
      note(w + ".walk_hnodes(stale values)");
      const auto before = state_words(d);
      const auto out = attempt([&] { (void)walk_traces(d, *kept_values, 0.5, 0, kept, "RA"); });
      fail(w + ".walk_hnodes", judge(d.comm(), out, true, -1, ""));
      if (problem.empty() && state_words(d) != before)
        fail(w + ".walk_hnodes", "a refused walk changed the domain");
      return;
    }
    const int bad = maybe_arm(d.comm(), 0.15, 50);
    note(w + ".reduce_up()" +
         (bad >= 0 ? " [leaf_value/combine throws on rank " + std::to_string(bad) + "]" : ""));
    const auto before = state_words(d);
    std::optional<Values> values;
    auto out = attempt([&] { values.emplace(reduce(d)); });
    bool fired = plan_fired(d.comm());
    fail(w + ".reduce_up", judge(d.comm(), out, fired, bad, injected));
    if (fired || !problem.empty()) {
      if (problem.empty() && state_words(d) != before)
        fail(w + ".reduce_up", "a failed reduce_up changed the domain");
      return;
    }
    // The reference: every hnode of the one-rank run, and its walks at the thetas drawn.
    int walks = static_cast<int>(rng.below(4));
    std::vector<double> thetas;
    std::vector<int> forms;
    std::vector<std::string> names;
    std::vector<int> fails;
    static const double theta_choices[] = {0.0, 0.4, 0.8, 1.5};
    for (int i = 0; i < walks; ++i) {
      thetas.push_back(theta_choices[rng.below(4)]);
      forms.push_back(static_cast<int>(rng.below(5)));
      names.push_back(ghost_names[rng.below(3)]);
      fails.push_back(rng.chance(0.15)
                          ? static_cast<int>(rng.below(static_cast<std::uint64_t>(d.comm().size())))
                          : -1);
    }
    const auto countdown = rng.below(100);
    std::vector<std::uint64_t> ref_hnodes;                   // start, level, value hash
    std::map<double, std::vector<std::uint64_t>> ref_walks;  // theta -> traces
    if (world.rank() == 0) {
      auto a = alone();
      auto v = reduce(*a);
      for (std::size_t n = 0; n < v.size(); ++n)
        ref_hnodes.insert(ref_hnodes.end(),
                          {static_cast<std::uint64_t>(v.start(n)),
                           static_cast<std::uint64_t>(v.level(n)), bytes_hash(v.value(n))});
      irr::hnodes::InformedFaultPrevention none;
      for (double th : thetas)
        if (!ref_walks.count(th)) ref_walks[th] = flat(walk_traces(*a, v, th, 0, none, "RA"));
    }
    mpi::broadcast(world, ref_hnodes, 0);
    for (double th : thetas) mpi::broadcast(world, ref_walks[th], 0);
    std::string badv;
    {
      std::map<std::pair<std::uint64_t, int>, std::uint64_t> ref;
      for (std::size_t i = 0; i + 2 < ref_hnodes.size(); i += 3)
        ref[{ref_hnodes[i], static_cast<int>(ref_hnodes[i + 1])}] = ref_hnodes[i + 2];
      for (std::size_t n = 0; n < values->size(); ++n) {
        if (values->kind(n) == irr::HnodeKind::closed) continue;
        auto it = ref.find({static_cast<std::uint64_t>(values->start(n)), values->level(n)});
        if (it == ref.end() || it->second != bytes_hash(values->value(n))) {
          badv = "hnode value differs from the one-rank run";
          break;
        }
      }
    }
    fail(w + ".reduce_up", agree_problem(d.comm(), badv));
    if (!problem.empty()) return;
    for (int i = 0; i < walks && problem.empty(); ++i) {
      static const char* fnames[] = {"RA", "FP", "fresh IFP", "kept IFP", "by name "};
      note(w + ".walk_hnodes(" + fnames[forms[i]] + (forms[i] == 4 ? names[i] : "") + ", theta " +
           std::to_string(thetas[i]) + ", walk " + std::to_string(i + 1) + " over these values" +
           (fails[i] >= 0 ? ", open/accept throws on rank " + std::to_string(fails[i]) : "") + ")");
      if (fails[i] >= 0) g_plan.arm(d.comm().rank() == fails[i], countdown);
      const auto before_walk = state_words(d);
      std::vector<Trace> got;
      out = attempt([&] { got = walk_traces(d, *values, thetas[i], forms[i], kept, names[i]); });
      fired = plan_fired(d.comm());
      fail(w + ".walk_hnodes", judge(d.comm(), out, fired, fails[i], injected));
      if (fired || !problem.empty()) {
        if (problem.empty() && state_words(d) != before_walk)
          fail(w + ".walk_hnodes", "a failed walk changed the domain");
        continue;
      }
      std::vector<std::vector<std::uint64_t>> all;
      mpi::all_gather(d.comm(), flat(got), all);
      std::vector<std::pair<std::uint64_t, std::uint64_t>> merged;
      for (const auto& v : all)
        for (std::size_t j = 0; j + 1 < v.size(); j += 2) merged.push_back({v[j], v[j + 1]});
      std::sort(merged.begin(), merged.end());
      std::vector<std::uint64_t> mf;
      for (const auto& [s, h] : merged) mf.insert(mf.end(), {s, h});
      if (mf != ref_walks[thetas[i]])
        fail(w + ".walk_hnodes",
             "walk " + std::to_string(i + 1) + " over these values differs from the one-rank run");
    }
    kept_values = std::move(values);
    changed_since = false;
  }

  // ---- checkpoints ----

  std::string ck_path(const char* which) {
    std::uint64_t pid = static_cast<std::uint64_t>(::getpid());
    mpi::broadcast(world, pid, 0);
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp && *tmp ? tmp : "/tmp") + "/irregular-seq-" + std::to_string(pid) + "-" +
           which + ".ck";
  }

  // The ranks that load: a group of another size when there is one.
  int draw_group_size() {
    const int p = world.size();
    if (p == 1) return 1;
    int q = rng.range(1, p - 1);
    return q;
  }

  void e_save_load() {
    const int q = draw_group_size();
    // Pending elements (inserted, not built) make the save fail on every rank.
    const bool pending_any = !eo.pending.empty();
    note("E.save + load on " + std::to_string(q) + " ranks");
    const auto path = ck_path("e");
    const auto before = state_words(*ed);
    const auto out =
        attempt([&] { ed->save(path, {.type_tag = "seq e", .user = std::to_string(seed)}); });
    fail("E.save", judge(ed->comm(), out, pending_any, -1, pending_any ? "not built" : ""));
    if (problem.empty() && state_words(*ed) != before) fail("E.save", "save changed the domain");
    if (pending_any || !problem.empty()) return;
    auto group = world.split(world.rank() < q ? 0 : 1);
    std::string bad;
    if (world.rank() < q) {
      std::string user;
      const auto lo = attempt([&] {
        auto back =
            ED::load(group, path, condition(), e_options(), {.type_tag = "seq e", .user = &user});
        const auto saved_fresh = e_fresh;
        bad = check_elements(back, true);
        e_fresh = saved_fresh;
        if (user != std::to_string(seed)) bad += " user section";
        if (back.ownership().parts() != q) bad += " parts";
      });
      if (lo.threw || lo.other) bad = "load failed: " + lo.message;
    }
    fail("E.load", agree_problem(world, bad));
    world.barrier();
    if (world.rank() == 0) std::filesystem::remove(path);
  }

  // ---- advisor ----

  std::vector<std::string> candidate_names() const {
    if constexpr (D == 2)
      return {"SFC",          "SFC-GREEDY", "HIER-RB", "JAG-M-HEUR-PROBE",
              "HIER-RELAXED", "RECT-NICOL", "BN-2",    "BN-4-8"};
    else
      return {"SFC", "SFC-GREEDY", "HIER-RB", "JAG-M-HEUR-PROBE", "HIER-RELAXED"};
  }
  std::string random_case(std::string s) {
    if (rng.chance(0.3))
      for (auto& c : s)
        if (rng.chance(0.5)) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

  template <class Dom>
  void advise(Dom& d, Fresh& fresh, bool built, const char* who) {
    const std::string w = who;
    const auto pool = candidate_names();
    std::vector<std::string> names;
    const int n = rng.range(1, 3);
    for (int i = 0; i < n; ++i) names.push_back(random_case(pool[rng.below(pool.size())]));
    const bool one_bad = rng.chance(0.12);
    const int bad_rank = static_cast<int>(rng.below(static_cast<std::uint64_t>(d.comm().size())));
    const std::size_t bad_at = rng.below(names.size());
    std::string joined;
    for (const auto& s : names) joined += (joined.empty() ? "" : ",") + s;
    note(w + ".compare_partitioners(" + joined +
         (one_bad ? "; unknown name on rank " + std::to_string(bad_rank) : "") + ")");
    auto mine = names;
    if (one_bad && d.comm().rank() == bad_rank) mine[bad_at] = "NO-SUCH-PARTITIONER";
    const auto before = state_words(d);
    std::optional<irr::advisor::PartitionerComparison<C>> cmp;
    const auto out = attempt([&] { cmp.emplace(d.compare_partitioners(mine)); });
    // Before a build the domain refuses first (every rank); otherwise the unknown name's rank.
    const bool named = one_bad && built;
    fail(w + ".compare_partitioners", judge(d.comm(), out, one_bad || !built, named ? bad_rank : -1,
                                            named ? "NO-SUCH-PARTITIONER" : ""));
    if (problem.empty() && state_words(d) != before)
      fail(w + ".compare_partitioners", "the comparison changed the domain");
    if (one_bad || !built || !problem.empty()) return;
    std::string bad;
    if (cmp->rows.size() != names.size() || cmp->maps.size() != names.size())
      bad = "rows for another number of names";
    std::uint64_t h = 0;
    for (std::size_t i = 0; bad.empty() && i < cmp->rows.size(); ++i) {
      if (cmp->maps[i].parts() != d.comm().size()) bad = "a map of another number of parts";
      h = mix64(h ^ std::hash<std::string>{}(serialized(cmp->maps[i])) ^ cmp->rows[i].remap_values);
    }
    std::uint64_t lo = 0, hi = 0;
    mpi::all_reduce(d.comm(), h, lo, mpi::minimum<std::uint64_t>());
    mpi::all_reduce(d.comm(), h, hi, mpi::maximum<std::uint64_t>());
    if (lo != hi) bad += " the comparison differs between ranks";
    fail(w + ".compare_partitioners", agree_problem(d.comm(), bad));
    if (!problem.empty() || !rng.chance(0.6)) return;
    // Apply one of the maps: a domain takes maps of its own kind (ByName takes any).
    const std::size_t j = rng.below(cmp->maps.size());
    bool accepts = true;
    if constexpr (!std::same_as<typename Dom::map_type, irr::AnyOwnershipMap<C>>)
      accepts = cmp->maps[j].template get_if<typename Dom::map_type>() != nullptr;
    note(w + ".apply_map(" + names[j] + ")");
    const auto before_apply = state_words(d);
    const auto out2 = attempt([&] { d.apply_map(cmp->maps[j]); });
    fail(w + ".apply_map", judge(d.comm(), out2, !accepts, -1, accepts ? "" : "another kind"));
    if (!accepts) {
      if (problem.empty() && state_words(d) != before_apply)
        fail(w + ".apply_map", "a refused apply_map changed the domain");
      return;
    }
    fresh = Fresh::unknown;
    if constexpr (requires { d.local_elements(); }) partitioned = e_built = true;
    if (hold_level < 0 && d.last_migration().elements != cmp->rows[j].remap_values)
      fail(w + ".apply_map", "moved " + std::to_string(d.last_migration().elements) +
                                 " values, the comparison said " +
                                 std::to_string(cmp->rows[j].remap_values));
  }

  // ---- cell domain calls ----

  // A grid map (rectangles, rows) cannot gather a family its parts cut: adapt ignores that
  // family's coarsen marks (doc/guide/cell-data.md, "What an adapt moves").
  template <class M>
  static bool grid_map(const M& m) {
    if constexpr (M::contiguous_segments)
      return false;
    else if constexpr (requires { m.template get_if<irr::SegmentMap<C>>(); })
      return m.template get_if<irr::SegmentMap<C>>() == nullptr;
    else
      return true;
  }

  // The rank holding each leaf of the model (-1 where the domain's leaves differ from it).
  std::vector<int> leaf_owners(const CD& d) {
    const auto g = gather_cells(d);
    std::vector<std::pair<std::uint64_t, int>> at;
    for (std::size_t k = 0; k < g.starts.size(); ++k) at.push_back({g.starts[k], g.owner[k]});
    std::sort(at.begin(), at.end());
    std::vector<int> owners(ct.size(), -1);
    for (std::size_t i = 0; i < ct.size() && i < at.size(); ++i)
      if (at[i].first == static_cast<std::uint64_t>(ct.start(i))) owners[i] = at[i].second;
    return owners;
  }

  // Marks of the children of a family held by more than one rank become keep.
  void keep_cut_families(std::vector<irr::Mark>& marks, const std::vector<int>& owners) const {
    for (std::size_t i = 0; i < ct.size();) {
      const int lv = ct.cell(i).level;
      std::size_t j = i + 1;
      if (lv > 0) {
        auto parent = ct.cell(i);
        parent.level -= 1;
        for (int d = 0; d < D; ++d) parent.anchor[d] /= C::arity;
        while (j < ct.size() && ct.cell(j).level == lv && [&] {
          auto q = ct.cell(j);
          q.level -= 1;
          for (int d = 0; d < D; ++d) q.anchor[d] /= C::arity;
          return q == parent;
        }())
          ++j;
        bool cut = false;
        for (std::size_t k = i + 1; k < j; ++k) cut = cut || owners[k] != owners[i];
        if (cut)
          for (std::size_t k = i; k < j; ++k)
            if (marks[k] == irr::Mark::coarsen) marks[k] = irr::Mark::keep;
      }
      i = j;
    }
  }

  void c_adapt() {
    const std::uint64_t salt = rng.next();
    const bool grow = ct.size() < 300;
    const int maxlev = D == 2 ? 7 : 4;
    // A mark per leaf, decided by its cell, so the model and the ranks agree; coarsening by
    // families (the parent's word) so that some families merge whole.
    auto decide = [&](const irr::Cell<D>& c) {
      const auto hw = mix64(salt ^ cell_word(c));
      if (grow && c.level < maxlev && hw % 100 < 12) return irr::Mark::refine;
      if (c.level > 0) {
        auto parent = c;
        parent.level -= 1;
        for (int d = 0; d < D; ++d) parent.anchor[d] /= C::arity;
        const auto pw = mix64(salt ^ 0xFA ^ cell_word(parent));
        if (pw % 100 < 30 && hw % 100 < 95) return irr::Mark::coarsen;
      }
      return irr::Mark::keep;
    };
    const bool bad_mark = rng.chance(0.08);
    const int bad_rank = static_cast<int>(rng.below(static_cast<std::uint64_t>(cd->comm().size())));
    const bool by_cell = rng.chance(0.5);
    const int bad = bad_mark ? -1 : maybe_arm(cd->comm(), 0.2, 40);
    const bool armed_here = g_plan.armed;
    g_plan.armed = false;
    note("C.mark + adapt(" + std::string(by_cell ? "by cell" : "by id") +
         (bad_mark ? ", a bad mark on rank " + std::to_string(bad_rank) : "") +
         (bad >= 0 ? ", split/merge/metric throws on rank " + std::to_string(bad) : "") + ")");
    for (std::size_t i = 0; i < cd->local_leaf_count(); ++i) {
      const auto m = decide(cd->cell(i));
      if (m == irr::Mark::keep) continue;
      if (by_cell)
        cd->mark(cd->cell(i), m);
      else
        cd->mark(i, m);
    }
    if (bad_mark && cd->comm().rank() == bad_rank)
      cd->mark(cd->local_leaf_count() + 3, irr::Mark::refine);
    const auto before = state_words(*cd);
    const auto before_owners = leaf_owners(*cd);
    irr::AdaptStats st;
    g_plan.armed = armed_here;
    const auto out = attempt([&] { st = cd->adapt(Split<D>{}, Merge{}); });
    const bool fired = plan_fired(cd->comm());
    fail("C.adapt", judge(cd->comm(), out, fired || bad_mark, bad_mark ? bad_rank : bad,
                          bad_mark ? "does not exist" : injected));
    if (fired || bad_mark) {
      if (problem.empty() && state_words(*cd) != before)
        fail("C.adapt", "a failed adapt changed the domain");
      return;
    }
    std::vector<irr::Mark> marks(ct.size());
    for (std::size_t i = 0; i < ct.size(); ++i) marks[i] = decide(ct.cell(i));
    if (grid_map(cd->ownership())) keep_cut_families(marks, before_owners);
    const auto want = ct.adapt(std::span<const irr::Mark>(marks), Split<D>{false}, Merge{false});
    std::uint64_t r = st.refined, c = st.coarsened, rs = 0, cs = 0;
    mpi::all_reduce(cd->comm(), r, rs, std::plus<std::uint64_t>());
    mpi::all_reduce(cd->comm(), c, cs, std::plus<std::uint64_t>());
    if (rs != want.refined || cs != want.coarsened)
      fail("C.adapt", "refined/coarsened " + std::to_string(rs) + "/" + std::to_string(cs) +
                          ", the model " + std::to_string(want.refined) + "/" +
                          std::to_string(want.coarsened));
    c_fresh = Fresh::unknown;
  }

  void c_balance() {
    const auto kind = rng.chance(0.5) ? irr::BalanceKind::face : irr::BalanceKind::full;
    const int bad = maybe_arm(cd->comm(), 0.2, 20);
    note(std::string("C.balance(") + (kind == irr::BalanceKind::face ? "face" : "full") + ")" +
         (bad >= 0 ? " [split/metric throws on rank " + std::to_string(bad) + "]" : ""));
    const auto before = state_words(*cd);
    std::size_t split = 0;
    const auto out = attempt([&] { split = cd->balance(kind, Split<D>{}); });
    const bool fired = plan_fired(cd->comm());
    fail("C.balance", judge(cd->comm(), out, fired, bad, injected));
    if (fired) {
      if (problem.empty() && state_words(*cd) != before)
        fail("C.balance", "a failed balance changed the domain");
      return;
    }
    const auto want = ct.balance(kind, Split<D>{false}, per);
    std::uint64_t s = split, total = 0;
    mpi::all_reduce(cd->comm(), s, total, std::plus<std::uint64_t>());
    if (total != want)
      fail("C.balance",
           "split " + std::to_string(total) + " leaves, the model " + std::to_string(want));
    if (want > 0) c_fresh = Fresh::stale;
  }

  void c_write_values(std::uint64_t salt) {
    for (std::size_t i = 0; i < cd->local_leaf_count(); ++i)
      cd->data(i).v = static_cast<double>(
          mix64(salt ^ static_cast<std::uint64_t>(cd->local_tree().start(i))) % 1000);
    for (std::size_t i = 0; i < ct.size(); ++i)
      ct.data(i).v =
          static_cast<double>(mix64(salt ^ static_cast<std::uint64_t>(ct.start(i))) % 1000);
  }

  void c_exchange() {
    exchange_step(
        "C", *cd, [&](std::uint64_t salt) { c_write_values(salt); },
        [&](auto& d) { return check_cell_ghost_values(d); });
  }

  void c_accumulate() {
    const std::uint64_t salt = rng.next();
    const bool with_op = rng.chance(0.5);
    const int bad = with_op ? maybe_arm(cd->comm(), 0.3, 10) : -1;
    const bool armed_here = g_plan.armed;
    g_plan.armed = false;
    note(std::string("C.accumulate_ghosts(") + (with_op ? "op" : "+=") + ")" +
         (bad >= 0 ? " [op throws on rank " + std::to_string(bad) + "]" : ""));
    const bool current = cd->ghosts_current();
    auto contribution = [&](std::uint64_t start) {
      return static_cast<double>(1 + mix64(salt ^ start) % 5);
    };
    std::vector<std::uint64_t> starts;
    for (std::size_t g = 0; g < cd->ghosts().size(); ++g) {
      const auto s = static_cast<std::uint64_t>(cd->ghosts().starts()[g]);
      cd->ghost_data(g).v = contribution(s);
      starts.push_back(s);
    }
    std::vector<std::vector<std::uint64_t>> all;
    mpi::all_gather(cd->comm(), starts, all);
    const auto before = state_words(*cd);
    g_plan.armed = armed_here;
    const auto out = attempt([&] {
      if (with_op)
        (void)cd->accumulate_ghosts([](Datum& m, const Datum& c) {
          g_plan.tick();
          m.v += c.v;
        });
      else
        (void)cd->accumulate_ghosts();
    });
    const bool fired = plan_fired(cd->comm());
    fail("C.accumulate",
         judge(cd->comm(), out, fired || !current, fired ? bad : -1, fired ? injected : ""));
    if (fired || !current) {
      if (problem.empty() && state_words(*cd) != before)
        fail("C.accumulate", "a failed accumulate changed the domain");
      return;
    }
    std::map<std::uint64_t, int> copies;
    for (const auto& v : all)
      for (auto s : v) ++copies[s];
    for (std::size_t i = 0; i < ct.size(); ++i) {
      auto it = copies.find(static_cast<std::uint64_t>(ct.start(i)));
      if (it != copies.end()) ct.data(i).v += it->second * contribution(it->first);
    }
  }

  void c_save_load() {
    const int q = draw_group_size();
    note("C.save + load on " + std::to_string(q) + " ranks");
    const auto path = ck_path("c");
    const auto before = state_words(*cd);
    const auto out = attempt([&] { cd->save(path, {.type_tag = "seq c"}); });
    fail("C.save", judge(cd->comm(), out, false, -1, ""));
    if (problem.empty() && state_words(*cd) != before) fail("C.save", "save changed the domain");
    if (!problem.empty()) return;
    auto group = world.split(world.rank() < q ? 0 : 1);
    std::string bad;
    if (world.rank() < q) {
      const auto lo = attempt([&] {
        auto back = CD::load(group, path, c_options(), {.type_tag = "seq c"});
        bad = check_cells(back, true);
      });
      if (lo.threw || lo.other) bad = "load failed: " + lo.message;
    }
    fail("C.load", agree_problem(world, bad));
    world.barrier();
    if (world.rank() == 0) std::filesystem::remove(path);
  }

  // ---- the program ----

  bool make_cells() {
    const int p = world.size();
    const int level = D == 2 ? rng.range(1, 4) : rng.range(1, 2);
    const bool given = rng.chance(0.4);
    const bool init_fails = !given && rng.chance(0.15);
    const int bad_rank = static_cast<int>(rng.below(static_cast<std::uint64_t>(p)));
    ct = Tree::uniform(level, [](const irr::Cell<D>& c) { return init_datum<D>(c); });
    if (init_fails) {
      note("CellDomain(level " + std::to_string(level) + ", init throws on rank " +
           std::to_string(bad_rank) + ")");
      const auto out = attempt([&] {
        CD bad(
            world, cbox, level,
            [&](const irr::Cell<D>& c) {
              if (world.rank() == bad_rank) throw std::runtime_error(injected);
              return init_datum<D>(c);
            },
            c_options());
      });
      const bool anything = true;  // every rank creates at least... maybe no cells: then no throw
      (void)anything;
      // A rank with no cells of its own never calls init: the failure is due when it has some.
      std::uint64_t cells = (static_cast<std::uint64_t>(1) << (D * level));
      const bool has =
          static_cast<std::uint64_t>(bad_rank + 1) * cells / static_cast<std::uint64_t>(p) >
          static_cast<std::uint64_t>(bad_rank) * cells / static_cast<std::uint64_t>(p);
      fail("CellDomain", judge(world, out, has, bad_rank, injected));
      if (!problem.empty()) return false;
    }
    note(std::string("CellDomain(") + (given ? "given leaves" : "uniform") + ", level " +
         std::to_string(level) + ")");
    const auto out = attempt([&] {
      if (given) {
        std::vector<irr::Cell<D>> cells;
        std::vector<Datum> data;
        for (std::size_t i = 0; i < ct.size(); ++i)
          if (static_cast<int>(mix64(seed ^ i) % static_cast<std::uint64_t>(p)) == world.rank()) {
            cells.push_back(ct.cell(i));
            data.push_back(ct.data(i));
          }
        cd = std::make_unique<CD>(world, cbox, std::span<const irr::Cell<D>>(cells), data,
                                  c_options());
      } else {
        cd = std::make_unique<CD>(
            world, cbox, level, [](const irr::Cell<D>& c) { return init_datum<D>(c); },
            c_options());
      }
    });
    fail("CellDomain", judge(world, out, false, -1, ""));
    return problem.empty();
  }

  void run() {
    // The domains: boxes, refinement, periodicity, hold level.
    for (int d = 0; d < D; ++d) {
      box.lo[d] = rng.chance(0.5) ? 0.0 : (rng.unit() - 0.5) * 8;
      box.hi[d] = box.lo[d] + (rng.chance(0.5) ? 1.0 : 0.25 + rng.unit() * 4);
      cbox.lo[d] = 0;
      cbox.hi[d] = rng.chance(0.5) ? 1.0 : 2.0;
      per[d] = rng.chance(0.2);
      centre[d] = rng.unit();
    }
    static const std::size_t ks[] = {1, 2, 3, 4, 6, 8, 16};
    k = ks[rng.below(7)];
    if (Program::ED::map_type::contiguous_segments && rng.chance(0.2)) hold_level = rng.range(1, 2);
    const int n_calls = rng.range(50, 200);
    note(policy_name + ", k " + std::to_string(k) + ", hold_level " + std::to_string(hold_level) +
         ", periodic " + std::to_string(per[0]) + std::to_string(per[1]) + ", " +
         std::to_string(n_calls) + " calls");
    ed = std::make_unique<ED>(world, box, condition(), e_options());
    if (!make_cells()) return;
    if (problem.empty()) fail("start", check_elements(*ed));
    if (problem.empty()) fail("start", check_cells(*cd));
    bool e_changed = false, c_changed = false;  // since the kept values were computed
    for (int call = 0; call < n_calls && problem.empty(); ++call) {
      const auto verb = rng.below(100);
      const std::string at = "call " + std::to_string(call + 1);
      const auto e_shape = state_words(*ed, true);
      const auto c_shape = state_words(*cd, true);
      bool never = false;
      if (verb < 10)
        e_insert();
      else if (verb < 15)
        e_build();
      else if (verb < 24)
        e_move();
      else if (verb < 29) {
        rebalance(*ed, e_fresh, partitioned, "E");
        e_built = e_built || partitioned;
      } else if (verb < 35) {
        if (e_built)
          collect(*ed, e_fresh, "E");
        else {
          note("E.collect_ghosts() before build");
          const auto out = attempt([&] { (void)ed->collect_ghosts(); });
          fail("E.collect_ghosts", judge(ed->comm(), out, true, -1, "not built"));
        }
      } else if (verb < 40)
        e_exchange();
      else if (verb < 44)
        e_accumulate();
      else if (verb < 49) {
        if (e_built)
          hnodes(
              *ed, e_values, e_ifp, e_changed, [&] { return alone_elements(); }, "E");
      } else if (verb < 51) {
        if (e_built) e_save_load();
      } else if (verb < 54)
        advise(*ed, e_fresh, e_built, "E");
      else if (verb < 65)
        c_adapt();
      else if (verb < 69)
        c_balance();
      else if (verb < 74)
        rebalance(*cd, c_fresh, never, "C");
      else if (verb < 80)
        collect(*cd, c_fresh, "C");
      else if (verb < 85)
        c_exchange();
      else if (verb < 89)
        c_accumulate();
      else if (verb < 94)
        hnodes(
            *cd, c_values, c_ifp, c_changed, [&] { return alone_cells(); }, "C");
      else if (verb < 96) {
        c_save_load();
      } else
        advise(*cd, c_fresh, true, "C");
      if (problem.empty()) fail(at, check_elements(*ed));
      if (problem.empty()) fail(at, check_cells(*cd));
      // Kept values go stale when the tree or the map changes (the leaves or the map words).
      if (state_words(*ed, true) != e_shape) e_changed = true;
      if (state_words(*cd, true) != c_shape) c_changed = true;
      if (!problem.empty()) problem = at + ", " + problem;
    }
  }
};

// One program of the configuration; returns its problem (empty when none) and its calls.
template <class C, class P>
std::string run_one(const mpi::communicator& world, std::uint64_t seed, P policy,
                    const std::string& name, std::string& calls) {
  Program<C, P> prog(world, seed, std::move(policy), name);
  prog.run();
  calls = prog.log;
  return prog.problem;
}

}  // namespace sequences
