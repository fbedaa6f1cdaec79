// A randomized differential test of IrregularDomain: seeded sequences of insert, build,
// move_elements and rebalance (with injected one-rank failures: invalid elements, throwing or
// invalid updates, bad thresholds) on several domain types (SFC segments optimal/greedy,
// rectangles of several algorithms and grid levels; Morton, Hilbert and Peano; 2D and 3D).
// After every operation the distributed state is compared with a replicated sequential oracle:
// the global leaves equal HTree::build over the built elements; count and checksum are
// conserved; segment maps have the range property; every leaf and element is where the
// ownership map says; a failed operation changes nothing and fails on every rank alike.
//
// Environment: IRREGULAR_FUZZ_SEED (base seed; sequence s uses seed base + s),
// IRREGULAR_FUZZ_SEQUENCES (number of sequences), IRREGULAR_FUZZ_VERBOSE (rank 0 prints every
// sequence's seed and operations as it runs). To replay one failing sequence:
//   IRREGULAR_FUZZ_SEED=<printed seed> IRREGULAR_FUZZ_SEQUENCES=1 mpiexec -n <p> mpi_fuzz_domain
// The randomness, the generators and the oracle with its invariants: support/sequence_support.hpp.
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>
#include <irregular/distributed/partitioners/rectangular.hpp>
#include <irregular/distributed/partitioners/sfc_blocking.hpp>
#include <irregular/domain.hpp>
#include <irregular/tree/htree.hpp>

#include <boost/archive/binary_oarchive.hpp>
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include "domain_support.hpp"
#include "sequence_support.hpp"
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;
using namespace domain_support;
using namespace sequence_support;

namespace {

// ---- elements, oracle, failure bits ----------------------------------------------------------

template <int D>
struct Elem {
  std::array<double, D> position;
  std::uint64_t id;
};

// An element that needs Boost.Serialization (variable size): migrations take the serialized
// path and rebalance() its transaction; the label must travel with its element.
template <int D>
struct Tagged {
  std::array<double, D> position{};
  std::uint64_t id = 0;
  std::string label;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& position& id& label;
  }
};

// This rank's state, to show that a rejected call changed nothing.
template <class Domain>
struct LocalState {
  std::vector<typename Domain::element_type> elements;
  std::vector<std::uint64_t> leaves;
  std::string map;
  std::uint64_t global_elements = 0;
  bool operator==(const LocalState& o) const {
    if (elements.size() != o.elements.size() || leaves != o.leaves || map != o.map ||
        global_elements != o.global_elements)
      return false;
    for (std::size_t i = 0; i < elements.size(); ++i)
      if (elements[i].id != o.elements[i].id || !same_label(elements[i], o.elements[i]) ||
          std::memcmp(elements[i].position.data(), o.elements[i].position.data(),
                      sizeof elements[i].position) != 0)
        return false;
    return true;
  }
};
template <class Domain>
LocalState<Domain> local_state(const Domain& d) {
  LocalState<Domain> s;
  s.elements.assign(d.local_elements().begin(), d.local_elements().end());
  const auto& t = d.local_tree();
  for (std::size_t i = 0; i < t.size(); ++i) {
    s.leaves.push_back(static_cast<std::uint64_t>(t.starts()[i]));
    s.leaves.push_back(t.levels()[i]);
    s.leaves.push_back(t.counts()[i]);
  }
  s.map = serialized(d.ownership());
  s.global_elements = d.global_element_count();  // collective: counts pending elements too
  return s;
}

// ---- one sequence ---------------------------------------------------------------------------

unsigned expect_failure(const mpi::communicator& w, bool threw, bool other, int failing,
                        int expected_rank) {
  unsigned bad = 0;
  if (other || !threw || failing != expected_rank) bad |= bad_agreement;
  return all_or(w, bad);
}

template <class Domain>
void run_sequence(const mpi::communicator& world, std::uint64_t seed,
                  const typename Domain::options_type& options, const std::string& name) {
  constexpr int D = Domain::dim;
  using E = typename Domain::element_type;
  const int me = world.rank(), p = world.size();
  Rng rng{mix64(seed)};
  const bool verbose = env_u64("IRREGULAR_FUZZ_VERBOSE", 0) != 0;

  // Box, refinement, ops.
  irr::Box<D> box;
  for (int d = 0; d < D; ++d) {
    box.lo[d] = rng.chance(0.5) ? 0.0 : (rng.unit() - 0.5) * 8;
    box.hi[d] = box.lo[d] + (rng.chance(0.5) ? 1.0 : 0.25 + rng.unit() * 4);
  }
  static const std::vector<std::size_t> ks{1, 2, 3, 4, 6, 8, 12, 20, 40};
  const std::size_t k = rng.pick(ks);
  const int n_ops = rng.range(4, 8);
  std::string log = name + " k=" + std::to_string(k);
  CAPTURE(seed);
  INFO("domain: " << name << ", k = " << k << "; replay: IRREGULAR_FUZZ_SEED=" << seed
                  << " IRREGULAR_FUZZ_SEQUENCES=1 at " << p << " ranks");

  Domain dom(world, box, irr::refine::max_elements(k), options);
  Oracle<E> o;
  bool partitioned = false;  // a build or a remapping rebalance made the map
  std::array<double, D> centre{};
  for (int d = 0; d < D; ++d) centre[d] = rng.unit();

  {
    INFO("initial state, before any operation");
    REQUIRE(describe(check_invariants(dom, o, k, false)) == "none");
  }

  for (int op = 0; op < n_ops; ++op) {
    // The first operation is usually an insert, so most sequences have data.
    int kind = op == 0 && rng.chance(0.85) ? 0 : static_cast<int>(rng.below(10));
    kind = kind < 3 ? 0 : kind < 5 ? 1 : kind < 8 ? 2 : 3;  // insert, build, move, rebalance
    std::string what;
    unsigned bad = 0;

    if (kind == 0) {  // ---- insert ----
      const int m = o.built.empty() && o.pending.empty() ? rng.range(20, 300) : rng.range(0, 120);
      const int split = static_cast<int>(rng.below(5));
      const int mode_all = static_cast<int>(rng.below(6));  // 5: mixed per element
      if (rng.chance(0.3))
        for (int d = 0; d < D; ++d) centre[d] = rng.unit();
      std::vector<E> all, local;
      for (int i = 0; i < m; ++i) {
        const int mode = mode_all == 5 ? static_cast<int>(rng.below(5)) : mode_all;
        const E e = make_element<E>(gen_position<D>(rng, box, mode, centre, o), o.next_id++);
        int r = 0;
        switch (split) {
          case 0:
            r = 0;
            break;
          case 1:
            r = p - 1;
            break;
          case 2:
            r = i % p;
            break;
          case 3:
            r = static_cast<int>(rng.below(static_cast<std::uint64_t>(p)));
            break;
          default:
            r = i * p / std::max(m, 1);
            break;
        }
        all.push_back(e);
        if (r == me) local.push_back(e);
      }
      const bool invalid = rng.chance(0.15);
      const int bad_rank = static_cast<int>(rng.below(static_cast<std::uint64_t>(p)));
      const auto bad_kind = rng.next();
      const int axis = static_cast<int>(rng.below(D));
      const auto place = rng.next();
      what = "insert(m=" + std::to_string(m) + ",split=" + std::to_string(split) +
             ",mode=" + std::to_string(mode_all);
      if (invalid) {
        what += ",invalid@r" + std::to_string(bad_rank) + ":kind" + std::to_string(bad_kind % 6);
        if (me == bad_rank) {
          E bad_e = make_element<E>(gen_position<D>(rng, box, 0, centre, o), ~std::uint64_t{0});
          make_invalid<D>(bad_e.position, box, bad_kind, axis);
          local.insert(local.begin() + static_cast<std::ptrdiff_t>(place % (local.size() + 1)),
                       bad_e);
        } else {
          (void)gen_position<D>(rng, box, 0, centre, o);  // keep the generator in step
        }
      }
      what += ")";
      const auto before = invalid ? local_state(dom) : LocalState<Domain>{};
      bool threw = false, other = false;
      int failing = -2;
      try {
        dom.insert(local);
      } catch (const irr::collective_error& e) {
        threw = true;
        failing = e.failing_rank();
      } catch (...) {
        other = true;
      }
      if (invalid) {
        bad |= expect_failure(world, threw, other, failing, bad_rank);
        if (!(local_state(dom) == before)) bad |= bad_failed_changed;
      } else {
        if (threw || other) bad |= bad_agreement;
        o.pending.insert(o.pending.end(), all.begin(), all.end());
      }
    } else if (kind == 1) {  // ---- build ----
      what = "build";
      bool failed = false;
      try {
        dom.build();
      } catch (...) {
        failed = true;
      }
      if (failed) bad |= bad_agreement;
      partitioned = true;
      o.built.insert(o.built.end(), o.pending.begin(), o.pending.end());
      o.pending.clear();
    } else if (kind == 2) {  // ---- move_elements ----
      const auto mv = random_mover<D>(rng, box, centre, o);
      const bool inject = rng.chance(0.2);
      // A third of the moves also remove: update returns false for ids divisible by mod + 1.
      const bool removes = rng.chance(0.33);
      const auto dies = [&](const E& e) { return removes && e.id % (mv.modulus + 1) == 0; };
      const auto who = rng.next(), at = rng.next(), fail_kind = rng.next();
      const int fail_axis = static_cast<int>(rng.below(D));
      // The failing rank must hold elements that survive, or the failing update never runs.
      std::uint64_t survivors = 0;
      for (const auto& e : dom.local_elements()) survivors += dies(e) ? 0 : 1;
      std::vector<std::uint64_t> counts;
      mpi::all_gather(world, survivors, counts);
      std::vector<int> holders;
      for (int r = 0; r < p; ++r)
        if (counts[static_cast<std::size_t>(r)] > 0) holders.push_back(r);
      const bool fail = inject && !holders.empty();
      const int bad_rank = fail ? holders[who % holders.size()] : -1;
      const std::uint64_t fail_at = fail ? at % counts[static_cast<std::size_t>(bad_rank)] : 0;
      what = "move(mode=" + std::to_string(mv.mode) + ",scale=" + std::to_string(mv.scale) +
             ",axis=" + std::to_string(mv.axis) + ",mod=" + std::to_string(mv.modulus) +
             (removes ? ",removes" : "");
      if (fail)
        what += ",fail@r" + std::to_string(bad_rank) + "#" + std::to_string(fail_at) + ":kind" +
                std::to_string(fail_kind % 4);
      what += ")";

      // Elements that must change holder under the current map (a lower bound on what travels).
      std::uint64_t leaving = 0;
      if (!fail)
        for (const auto& e0 : dom.local_elements()) {
          if (dies(e0)) continue;
          E e = e0;
          mv(e);
          if (dom.owner_of(e.position) != me) ++leaving;
        }
      std::uint64_t leaving_all = 0;
      mpi::all_reduce(world, leaving, leaving_all, std::plus<std::uint64_t>());

      const auto before = fail ? local_state(dom) : LocalState<Domain>{};
      std::uint64_t calls = 0;
      auto update = [&](E& e) {
        if (me == bad_rank && calls++ == fail_at) {
          switch (fail_kind % 4) {
            case 0:
              throw std::runtime_error("fuzz: update fails on purpose");
            case 1:
              throw 42;  // not even a std::exception
            case 2:
              make_invalid<D>(e.position, box, 0, fail_axis);
              return;
            default:
              make_invalid<D>(e.position, box, 3, fail_axis);
              return;
          }
        }
        mv(e);
      };
      bool threw = false, other = false;
      int failing = -2;
      try {
        if (removes)
          dom.move_elements([&](E& e) {
            if (dies(e)) return false;
            update(e);
            return true;
          });
        else
          dom.move_elements(update);
      } catch (const irr::collective_error& e) {
        threw = true;
        failing = e.failing_rank();
      } catch (...) {
        other = true;
      }
      if (fail) {
        bad |= expect_failure(world, threw, other, failing, bad_rank);
        if (!(local_state(dom) == before)) bad |= bad_failed_changed;
      } else {
        if (threw || other) bad |= bad_agreement;
        std::erase_if(o.built, dies);
        for (auto& e : o.built) mv(e);
        // The elements inserted since the last build or move join, unmoved (and may travel).
        const bool joined = !o.pending.empty();
        o.built.insert(o.built.end(), o.pending.begin(), o.pending.end());
        o.pending.clear();
        if (dom.last_migration().elements < leaving_all) bad |= bad_migration;
        if (mv.mode == 4 && !joined &&
            (dom.last_migration().elements != 0 || dom.last_migration().bytes != 0))
          bad |= bad_migration;
      }
    } else {  // ---- rebalance ----
      static const std::vector<double> thresholds{0.0, 0.0, 0.01, 0.05, 0.1, 0.3, 1.0, 1e300};
      double t = rng.pick(thresholds);
      if (t == 0.0 && rng.chance(0.5)) t = -0.0;  // valid: -0 >= 0
      const bool inject = rng.chance(0.2);
      const int bad_rank = static_cast<int>(rng.below(static_cast<std::uint64_t>(p)));
      const auto bad_kind = rng.below(4);
      double mine = t;
      if (inject && me == bad_rank)
        mine = bad_kind == 0   ? -0.01
               : bad_kind == 1 ? -1e300
               : bad_kind == 2 ? std::numeric_limits<double>::quiet_NaN()
                               : std::numeric_limits<double>::infinity();
      what = "rebalance(t=" + std::to_string(t) +
             (inject ? ",bad@r" + std::to_string(bad_rank) + ":kind" + std::to_string(bad_kind)
                     : std::string()) +
             ")";
      const auto report = dom.load_report();
      const auto before = inject ? local_state(dom) : LocalState<Domain>{};
      bool threw = false, other = false, remapped = false;
      int failing = -2;
      try {
        remapped = dom.rebalance({.threshold = mine});
      } catch (const irr::collective_error& e) {
        threw = true;
        failing = e.failing_rank();
      } catch (...) {
        other = true;
      }
      if (inject) {
        bad |= expect_failure(world, threw, other, failing, bad_rank);
        if (!(local_state(dom) == before)) bad |= bad_failed_changed;
      } else {
        if (threw || other) bad |= bad_agreement;
        if (remapped != (report.max_unbalance > t)) bad |= bad_rebalance;
        if (remapped) partitioned = true;
        int r = remapped ? 1 : 0, lo = 0, hi = 0;
        mpi::all_reduce(world, r, lo, mpi::minimum<int>());
        mpi::all_reduce(world, r, hi, mpi::maximum<int>());
        if (lo != hi) bad |= bad_rebalance;
        if (!remapped && (dom.last_migration().elements != 0 || dom.last_migration().bytes != 0))
          bad |= bad_migration;
      }
    }

    log += " | " + what;
    if (verbose && me == 0)
      std::printf("seed %llu: %s\n", static_cast<unsigned long long>(seed), log.c_str());
    const unsigned verdict = all_or(world, bad) | check_invariants(dom, o, k, partitioned);
    INFO("operations: " << log);
    REQUIRE(describe(verdict) == "none");
  }
}

// ---- the domain types ------------------------------------------------------------------------

template <int D, class Curve, class Metric, class P, class E = Elem<D>>
void run_with(const mpi::communicator& world, std::uint64_t seed, P policy,
              const std::string& name) {
  using Domain = irr::IrregularDomain<E, irr::stencil::Moore<D>, Curve, Metric, P>;
  typename Domain::options_type opt;
  opt.partitioner = policy;
  run_sequence<Domain>(world, seed, opt, name);
}

constexpr int n_configs = 16;

void run_config(const mpi::communicator& world, int config, std::uint64_t seed) {
  using irr::BlockingCut;
  using irr::partitioner::Rectangular;
  using irr::partitioner::SfcBlocking;
  namespace c = irr::curve;
  using Const = irr::load::Constant;
  using Count = irr::load::ElementCount;
  switch (config) {
    case 0:
      return run_with<2, c::Hilbert<2>, Const>(
          world, seed, SfcBlocking{.cut = BlockingCut::optimal}, "Hilbert2/SFC-optimal/Constant");
    case 1:
      return run_with<2, c::Morton<2>, Count>(world, seed, SfcBlocking{.cut = BlockingCut::greedy},
                                              "Morton2/SFC-greedy/ElementCount");
    case 2:
      return run_with<2, c::Peano<2>, Count>(world, seed, SfcBlocking{.cut = BlockingCut::optimal},
                                             "Peano2/SFC-optimal/ElementCount");
    case 3:
      return run_with<3, c::Hilbert<3>, Count>(world, seed, SfcBlocking{.cut = BlockingCut::greedy},
                                               "Hilbert3/SFC-greedy/ElementCount");
    case 4:
      return run_with<3, c::Morton<3>, Const>(world, seed, SfcBlocking{.cut = BlockingCut::optimal},
                                              "Morton3/SFC-optimal/Constant");
    case 5:
      return run_with<3, c::Peano<3>, Const>(world, seed, SfcBlocking{.cut = BlockingCut::greedy},
                                             "Peano3/SFC-greedy/Constant");
    case 6:
      return run_with<2, c::Hilbert<2>, Count>(world, seed,
                                               Rectangular{.algorithm = "JAG-M-HEUR-PROBE"},
                                               "Hilbert2/JAG-M-HEUR-PROBE/auto/ElementCount");
    case 7:
      return run_with<2, c::Morton<2>, Const>(world, seed,
                                              Rectangular{.algorithm = "HIER-RB", .level = 3},
                                              "Morton2/HIER-RB/level3/Constant");
    case 8:
      return run_with<2, c::Peano<2>, Count>(world, seed,
                                             Rectangular{.algorithm = "RECT-NICOL", .level = 2},
                                             "Peano2/RECT-NICOL/level2/ElementCount");
    case 9:
      return run_with<2, c::Hilbert<2>, Count>(world, seed,
                                               Rectangular{.algorithm = "HIER-RELAXED", .level = 5},
                                               "Hilbert2/HIER-RELAXED/level5/ElementCount");
    case 10:
      return run_with<3, c::Hilbert<3>, Count>(world, seed,
                                               Rectangular{.algorithm = "HIER-RELAXED"},
                                               "Hilbert3/HIER-RELAXED/auto/ElementCount");
    case 11:
      return run_with<3, c::Morton<3>, Const>(world, seed,
                                              Rectangular{.algorithm = "JAG-M-HEUR", .level = 2},
                                              "Morton3/JAG-M-HEUR/level2/Constant");
    case 12:
      return run_with<3, c::Peano<3>, Count>(world, seed,
                                             Rectangular{.algorithm = "HIER-RB-DIST", .level = 1},
                                             "Peano3/HIER-RB-DIST/level1/ElementCount");
    case 14:
      return run_with<2, c::Hilbert<2>, Count, SfcBlocking, Tagged<2>>(
          world, seed, SfcBlocking{.cut = BlockingCut::optimal},
          "Hilbert2/SFC-optimal/ElementCount/Tagged");
    case 15:
      return run_with<3, c::Morton<3>, Count, Rectangular, Tagged<3>>(
          world, seed, Rectangular{.algorithm = "JAG-M-HEUR-PROBE-BEST"},
          "Morton3/JAG-M-HEUR-PROBE-BEST/auto/ElementCount/Tagged");
    default:
      return run_with<2, c::Morton<2>, Count>(
          world, seed, Rectangular{.algorithm = "JAG-PQ-HEUR-BEST", .level = 4},
          "Morton2/JAG-PQ-HEUR-BEST/level4/ElementCount");
  }
}

}  // namespace

TEST_CASE("fuzz: random operation sequences agree with the sequential oracle", "[domain][fuzz]") {
  mpi::communicator world;
  std::uint64_t base = env_u64("IRREGULAR_FUZZ_SEED", 20240611);
  std::uint64_t sequences = env_u64("IRREGULAR_FUZZ_SEQUENCES", 300);
  mpi::broadcast(world, base, 0);  // one seed for every rank, whatever each one's environment says
  mpi::broadcast(world, sequences, 0);
  for (std::uint64_t s = 0; s < sequences; ++s) {
    const std::uint64_t seed = base + s;
    const int config = static_cast<int>(mix64(seed ^ 0xC0FFEEull) % n_configs);
    run_config(world, config, seed);
  }
}
