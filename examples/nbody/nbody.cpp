// Barnes–Hut N-body on an IrregularDomain (issue 27): gravitating bodies in 3D (or 2D) whose
// octree is the domain's H-Tree, partitioned along a Hilbert curve by the bodies' cost (the
// interactions each felt in the last step), moved every step and rebalanced when the cost
// drifts. Forces come from one upward pass (reduce_up: mass, centre of mass, traceless
// quadrupole of every hnode) and one downward walk per leaf (walk_hnodes: hnodes far enough are
// accepted as multipoles, near leaves' bodies are read body by body, remote hnodes and bodies
// arrive by request/answer, fault prevention or informed fault prevention). The answer is the
// same bits at every rank count and under every strategy.
//
//   mpiexec -n 4 nbody [--n N] [--steps S] [--dt DT] [--theta T] [--eps E] [--ic plummer|clumpy]
//                      [--strategy RA|FP|IFP[,..]] [--dim 2|3] [--out DIR] [--progress K]
//                      [--vtkhdf DIR] ...
//   mpiexec -n 3 nbody --check-accuracy --theta 1,0.7,0.5,0.3,0   # against direct summation
//
// --vtkhdf DIR writes the first strategy's run as one ParaView time series,
// DIR/nbody.vtkhdf.series: step 0, every --progress K-th step and the last (the time is step x dt),
// the tree's leaves and the bodies with mass, velocity, acceleration and potential. It needs a
// build with HDF5 (-Dhdf5); without it the option is refused (exit status 2).
//
// See doc/tutorials/nbody.md for every option and the output.
#include <irregular/irregular.hpp>

#include "initial.hpp"
#include "output.hpp"
#include "physics.hpp"
#include "setup.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;
using namespace nbody;

namespace {

using clock_type = std::chrono::steady_clock;
double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// ---- options ------------------------------------------------------------------------------------

struct Args {
  int dim = 3;
  std::size_t n = 2000;
  int steps = 10;
  double dt = 0.01;
  std::vector<double> thetas{0.5};
  double eps = 0.02;
  std::string ic = "plummer";
  std::vector<std::string> strategies{"IFP"};
  std::string out;
  std::string vtkhdf;  // --vtkhdf: the series' directory
  int progress = 1;
  bool check_accuracy = false;
  std::vector<double> max_median, max_error;  // per theta (one value: every theta)
  bool digest = false;
  bool direct = false;
  std::uint64_t seed = 2027;
  int leaf = 16;
  double threshold = 0.05;
  int order = 2;
  std::string expect_digest;
  double max_energy_drift = -1, max_momentum_drift = -1;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> r;
  std::stringstream in(s);
  for (std::string t; std::getline(in, t, ',');) r.push_back(t);
  return r;
}

double to_double(const std::string& k, const std::string& v) {
  std::size_t used = 0;
  double x = std::numeric_limits<double>::quiet_NaN();
  try {
    x = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || !std::isfinite(x)) throw irr::invalid_argument("nbody: " + k + " needs a number, got '" + v + "'");
  return x;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw irr::invalid_argument("nbody: " + k + " needs a value");
      return argv[++i];
    };
    auto number = [&](double least) {
      const double x = to_double(k, value());
      if (x < least) throw irr::invalid_argument("nbody: " + k + " must be >= " + std::to_string(least));
      return x;
    };
    auto numbers = [&] {
      std::vector<double> r;
      for (const auto& t : split(value())) r.push_back(to_double(k, t));
      if (r.empty()) throw irr::invalid_argument("nbody: " + k + " needs at least one number");
      return r;
    };
    auto integer = [&](long long least) {
      const double x = number(static_cast<double>(least));
      if (x != std::floor(x)) throw irr::invalid_argument("nbody: " + k + " needs an integer");
      return static_cast<long long>(x);
    };
    if (k == "--dim") a.dim = static_cast<int>(integer(2));
    else if (k == "--n") a.n = static_cast<std::size_t>(integer(1));
    else if (k == "--steps") a.steps = static_cast<int>(integer(0));
    else if (k == "--dt") a.dt = number(0);
    else if (k == "--theta") a.thetas = numbers();
    else if (k == "--eps") a.eps = number(0);
    else if (k == "--ic") a.ic = value();
    else if (k == "--strategy") a.strategies = split(value());
    else if (k == "--out") a.out = value();
    else if (k == "--vtkhdf") a.vtkhdf = value();
    else if (k == "--progress") a.progress = static_cast<int>(integer(0));
    else if (k == "--check-accuracy") a.check_accuracy = true;
    else if (k == "--max-median-error") a.max_median = numbers();
    else if (k == "--max-error") a.max_error = numbers();
    else if (k == "--digest") a.digest = true;
    else if (k == "--direct") a.direct = true;
    else if (k == "--seed") a.seed = static_cast<std::uint64_t>(integer(0));
    else if (k == "--leaf") a.leaf = static_cast<int>(integer(1));
    else if (k == "--threshold") a.threshold = number(0);
    else if (k == "--order") a.order = static_cast<int>(integer(1));
    else if (k == "--expect-digest") a.expect_digest = value();
    else if (k == "--max-energy-drift") a.max_energy_drift = number(0);
    else if (k == "--max-momentum-drift") a.max_momentum_drift = number(0);
    else throw irr::invalid_argument("nbody: unknown option " + k);
  }
  if (a.dim != 2 && a.dim != 3) throw irr::invalid_argument("nbody: --dim is 2 or 3");
  if (a.ic != "plummer" && a.ic != "clumpy") throw irr::invalid_argument("nbody: --ic is plummer or clumpy");
  if (a.order != 1 && a.order != 2) throw irr::invalid_argument("nbody: --order is 1 (monopole) or 2 (quadrupole)");
  for (const auto& s : a.strategies)
    if (s != "RA" && s != "FP" && s != "IFP") throw irr::invalid_argument("nbody: unknown strategy '" + s + "' (RA, FP, IFP)");
  if (a.strategies.empty()) throw irr::invalid_argument("nbody: --strategy needs a name");
  for (double t : a.thetas)
    if (t < 0) throw irr::invalid_argument("nbody: --theta must be >= 0");
  for (auto* lim : {&a.max_median, &a.max_error})
    if (lim->size() > 1 && lim->size() != a.thetas.size())
      throw irr::invalid_argument("nbody: an error limit needs one value or one per --theta");
  if (!a.check_accuracy && a.thetas.size() != 1)
    throw irr::invalid_argument("nbody: several --theta values need --check-accuracy");
  if (a.check_accuracy && !a.vtkhdf.empty())
    throw irr::invalid_argument("nbody: --check-accuracy takes no --vtkhdf");
  examples::check_vtkhdf_option(a.vtkhdf, "nbody: ");
  return a;
}

// ---- the domain ---------------------------------------------------------------------------------

template <int D>
using Domain = irr::IrregularDomain<Body<D>, irr::stencil::Moore<D>, irr::curve::Hilbert<D>, irr::load::PerElement<Cost<D>>>;

// ---- forces -------------------------------------------------------------------------------------

/// What walks cost (irr::HnodeStats' fields as an array, to sum over ranks in one call).
struct WalkCost {
  std::array<std::uint64_t, 7> v{};  // messages, bytes, hnodes_sent, elements_sent, unopened, faults, rounds
  WalkCost& operator+=(const WalkCost& o) {
    for (std::size_t k = 0; k < v.size(); ++k) v[k] += o.v[k];
    return *this;
  }
};

WalkCost sum_over_ranks(const mpi::communicator& comm, const WalkCost& mine) {
  WalkCost all;
  MPI_Allreduce(mine.v.data(), all.v.data(), static_cast<int>(mine.v.size()), MPI_UINT64_T, MPI_SUM, comm);
  return all;
}

struct ForceOptions {
  double theta = 0.5, eps = 0.02;
  bool quadrupole = true;
  irr::hnodes::ByName* strategy = nullptr;  ///< kept across walks (informed fault prevention reuses its sets)
};

/// Barnes–Hut forces on every local body: the upward pass, then one walk per local leaf whose
/// interactions fill the leaf's lists, evaluated when the walk moves to the next leaf. Writes
/// acceleration, potential and interactions into the bodies; returns the walk's cost.
template <int D>
WalkCost tree_forces(Domain<D>& d, const ForceOptions& o) {
  canonical_order(d);
  const auto box = d.box();
  auto values = d.reduce_up(
      [&](const irr::Cell<D>& c, std::span<const Body<D>> b) { return leaf_multipole<D>(box, c, b); },
      [&](const irr::Cell<D>& c, std::span<const Multipole<D>> ch) { return combine_multipoles<D>(box, c, ch); });
  std::vector<Felt<D>> felt(d.local_element_count());
  std::vector<char> walked(d.local_leaf_count(), 0);
  InteractionLists<D> lists(o.eps, o.quadrupole);
  const Body<D>* const base = d.local_elements().data();
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::size_t current = none;
  auto flush = [&] {
    const auto leaf = d.leaf(current);
    lists.evaluate(leaf.elements, felt.data() + (leaf.elements.data() - base));
    walked[current] = 1;
    lists.clear();
  };
  const OpeningCriterion<D> open{o.theta};
  auto accept = [&](std::size_t reader, std::size_t hnode, bool near, std::span<const Body<D>> elements) {
    if (reader != current) {
      if (current != none) flush();
      if (reader >= walked.size() || walked[reader])
        throw irr::error("nbody: the walk of leaf " + std::to_string(reader) + " is not one run of calls");
      current = reader;
    }
    if (near && values.local_leaf(hnode) == reader)
      lists.add_own();
    else if (near)
      lists.add_bodies(elements);
    else
      lists.add_multipole(values.value(hnode));
  };
  const irr::HnodeStats s = d.walk_hnodes(values, open, accept, *o.strategy);
  const WalkCost cost{{s.messages, s.bytes, s.hnodes_sent, s.elements_sent, s.unopened, s.faults, s.rounds}};
  if (current != none) flush();
  for (std::size_t i = 0; i < walked.size(); ++i)
    if (!walked[i] && d.leaf(i).count > 0)
      throw irr::error("nbody: leaf " + std::to_string(i) + " had no walk");
  auto els = d.local_elements();
  for (std::size_t k = 0; k < els.size(); ++k) {
    els[k].acceleration = felt[k].acceleration;
    els[k].potential = felt[k].potential;
    els[k].interactions = felt[k].interactions;
  }
  return cost;
}

/// Direct summation: every body against every other, in id order (all bodies gathered on every
/// rank; a scalar loop, the reference). Writes acceleration, potential and interactions into the
/// local bodies.
template <int D>
void direct_forces(Domain<D>& d, double eps) {
  auto mine = d.local_elements();
  auto all = gather_raw<Body<D>>(d.comm(), std::span<const Body<D>>(mine.data(), mine.size()), true);
  std::sort(all.begin(), all.end(), [](const Body<D>& x, const Body<D>& y) { return x.id < y.id; });
  for (auto& b : mine) {
    const Felt<D> f = direct_felt<D>(b, all, eps);
    b.acceleration = f.acceleration;
    b.potential = f.potential;
    b.interactions = f.interactions;
  }
}

// ---- diagnostics --------------------------------------------------------------------------------

/// Energies, momentum and digest, summed on rank 0 in id order (the gathered bodies).
template <int D>
struct Totals {
  double kinetic = 0, potential = 0, energy = 0;
  std::array<double, D> momentum{};
  std::uint64_t bodies = 0, digest = 0;
};

template <int D>
Totals<D> totals(Domain<D>& d, std::vector<Body<D>>* keep = nullptr, std::vector<int>* ranks = nullptr) {
  auto mine = d.local_elements();
  std::vector<int> from;
  auto all = gather_raw<Body<D>>(d.comm(), std::span<const Body<D>>(mine.data(), mine.size()), false, &from);
  Totals<D> t;
  if (d.comm().rank() != 0) return t;
  std::vector<std::size_t> order(all.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return all[x].id < all[y].id; });
  std::vector<Body<D>> sorted;
  std::vector<int> sorted_ranks;
  sorted.reserve(all.size());
  for (auto k : order) {
    sorted.push_back(all[k]);
    sorted_ranks.push_back(from[k]);
  }
  for (const auto& b : sorted) {
    double v2 = 0;
    for (int a = 0; a < D; ++a) {
      v2 += b.velocity[a] * b.velocity[a];
      t.momentum[a] += b.mass * b.velocity[a];
    }
    t.kinetic += 0.5 * b.mass * v2;
    t.potential += 0.5 * b.mass * b.potential;
  }
  t.energy = t.kinetic + t.potential;
  t.bodies = sorted.size();
  t.digest = nbody::digest<D>(sorted);
  if (keep) *keep = std::move(sorted);
  if (ranks) *ranks = std::move(sorted_ranks);
  return t;
}

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

std::string hex16(std::uint64_t v) {
  char s[17];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(v));
  return s;
}

template <int D>
std::uint64_t local_interactions(Domain<D>& d) {
  std::uint64_t s = 0, all = 0;
  for (const auto& b : d.local_elements()) s += b.interactions;
  mpi::all_reduce(d.comm(), s, all, std::plus<std::uint64_t>());
  return all;
}

template <int D>
std::unique_ptr<Domain<D>> make_domain(const mpi::communicator& world, const Args& a, const std::vector<Body<D>>& all) {
  auto d = std::make_unique<Domain<D>>(world, cube_for(all), irr::refine::max_elements(static_cast<std::size_t>(a.leaf)),
                                       typename Domain<D>::options_type{.load = irr::load::per_element(Cost<D>{})});
  std::vector<Body<D>> mine;
  const auto p = static_cast<std::size_t>(world.size()), r = static_cast<std::size_t>(world.rank());
  for (std::size_t i = r; i < all.size(); i += p) mine.push_back(all[i]);
  d->insert(mine);
  d->build();
  return d;
}

// ---- accuracy against direct summation ----------------------------------------------------------

template <int D>
int check_accuracy(const mpi::communicator& world, const Args& a) {
  const bool root = world.rank() == 0;
  const auto all = initial_bodies<D>(a.ic, a.n, a.seed);
  auto d = make_domain<D>(world, a, all);
  direct_forces<D>(*d, a.eps);
  std::vector<std::array<double, D>> exact;
  std::vector<double> exact_phi;
  for (const auto& b : d->local_elements()) {
    exact.push_back(b.acceleration);
    exact_phi.push_back(b.potential);
  }
  if (root)
    std::printf("nbody accuracy on %d ranks: %zu bodies (%s, %dD), eps %g, %s, leaves of <= %d, strategy %s; "
                "relative force error |a - a_direct| / |a_direct| against direct summation\n\n"
                "| theta | median error | 90th percentile | max error | potential median | interactions/body | messages |    KiB |\n"
                "|------:|-------------:|----------------:|----------:|-----------------:|------------------:|---------:|-------:|\n",
                world.size(), a.n, a.ic.c_str(), D, a.eps, a.order == 2 ? "quadrupoles" : "monopoles", a.leaf,
                a.strategies.front().c_str());
  irr::hnodes::ByName strategy(a.strategies.front());
  int status = 0;
  double previous_median = std::numeric_limits<double>::infinity(), previous_theta = 0;
  for (std::size_t t = 0; t < a.thetas.size(); ++t) {
    const double theta = a.thetas[t];
    const auto cost = sum_over_ranks(world, tree_forces<D>(*d, {theta, a.eps, a.order == 2, &strategy}));
    std::vector<double> err, perr;
    std::size_t k = 0;
    for (const auto& b : d->local_elements()) {
      double num = 0, den = 0;
      for (int c = 0; c < D; ++c) {
        num += (b.acceleration[c] - exact[k][c]) * (b.acceleration[c] - exact[k][c]);
        den += exact[k][c] * exact[k][c];
      }
      err.push_back(std::sqrt(num / den));
      perr.push_back(std::abs(b.potential - exact_phi[k]) / std::abs(exact_phi[k]));
      ++k;
    }
    const auto inter = local_interactions<D>(*d);
    auto all_err = gather_raw<double>(world, err, false);
    auto all_perr = gather_raw<double>(world, perr, false);
    int verdict = 0;
    if (root) {
      std::sort(all_err.begin(), all_err.end());
      std::sort(all_perr.begin(), all_perr.end());
      const double median = all_err[all_err.size() / 2], p90 = all_err[all_err.size() * 9 / 10], max = all_err.back();
      std::printf("| %5.2f | %12.3e | %15.3e | %9.3e | %16.3e | %17.1f | %8llu | %6.1f |\n", theta, median, p90, max,
                  all_perr[all_perr.size() / 2], static_cast<double>(inter) / static_cast<double>(a.n),
                  static_cast<unsigned long long>(cost.v[0]), static_cast<double>(cost.v[1]) / 1024.0);
      auto limit = [&](const std::vector<double>& l) {
        return l.empty() ? std::numeric_limits<double>::infinity() : l.size() == 1 ? l[0] : l[t];
      };
      if (median > limit(a.max_median)) {
        std::fprintf(stderr, "nbody: theta %g: median error %.3e above %.3e\n", theta, median, limit(a.max_median));
        verdict = 1;
      }
      if (max > limit(a.max_error)) {
        std::fprintf(stderr, "nbody: theta %g: max error %.3e above %.3e\n", theta, max, limit(a.max_error));
        verdict = 1;
      }
      if (t > 0 && theta < previous_theta && !(median < previous_median)) {
        std::fprintf(stderr, "nbody: the median error did not fall from theta %g to %g\n", previous_theta, theta);
        verdict = 1;
      }
      previous_median = median;
      previous_theta = theta;
    }
    mpi::broadcast(world, verdict, 0);
    status = std::max(status, verdict);
  }
  return status;
}

// ---- the simulation -----------------------------------------------------------------------------

struct RunResult {
  double energy = 0;
  std::uint64_t digest = 0;
  int status = 0;
};

template <int D>
RunResult simulate(const mpi::communicator& world, const Args& a, const std::string& strategy, bool pictures) {
  const bool root = world.rank() == 0;
  const auto all = initial_bodies<D>(a.ic, a.n, a.seed);
  const auto t_start = clock_type::now();
  auto d_ptr = make_domain<D>(world, a, all);
  auto& d = *d_ptr;
  irr::hnodes::ByName walk_strategy(strategy);
  const ForceOptions fo{a.thetas.front(), a.eps, a.order == 2, &walk_strategy};
  // phase seconds on this rank: forces, move, rebalance, diagnostics
  std::array<double, 4> phase{};
  WalkCost step_cost, run_cost;
  auto forces = [&] {
    const auto t0 = clock_type::now();
    if (a.direct)
      direct_forces<D>(d, a.eps);
    else
      step_cost = tree_forces<D>(d, fo);
    run_cost += step_cost;
    phase[0] += seconds_since(t0);
  };
  forces();
  std::vector<Body<D>> gathered;
  std::vector<int> ranks;
  auto t0 = totals<D>(d, pictures && !a.out.empty() ? &gathered : nullptr, &ranks);
  if (root) {
    std::printf("nbody on %d ranks: %zu bodies (%s, %dD), %s, theta %g, eps %g, dt %g, %d steps, leaves of <= %d, "
                "strategy %s, rebalance threshold %g; box [%g, %g]^%d\n",
                world.size(), a.n, a.ic.c_str(), D, a.direct ? "direct summation" : a.order == 2 ? "quadrupoles" : "monopoles",
                a.thetas.front(), a.eps, a.dt, a.steps, a.leaf, strategy.c_str(), a.threshold, d.box().lo[0], d.box().hi[0], D);
    if (a.progress > 0)
      std::printf("\n| step |   time |         energy E | abs(dE/E0) |  |dP|   | interactions | imbalance | remaps | messages |      KiB | step ms |\n"
                "|-----:|-------:|-----------------:|-----------:|---------:|-------------:|----------:|-------:|---------:|---------:|--------:|\n");
  }
  if (pictures && !a.out.empty()) {
    if (root) {
      std::filesystem::create_directories(a.out);
      write_svg<D>(a.out + "/nbody_step0.svg", gathered, ranks, world.size(),
                   "step 0: " + std::to_string(a.n) + " bodies (" + a.ic + "), x-y projection, coloured by rank");
    }
  }
  BodySeries<Domain<D>, D> series(pictures ? a.vtkhdf : std::string());
  series.write(d, 0.0);
  int remaps = 0;
  double max_drift = 0, max_dp = 0;
  auto row = [&](int step, double step_seconds) {
    const auto tt = totals<D>(d);
    const auto inter = local_interactions<D>(d);
    const auto rep = d.load_report();
    const auto cost = sum_over_ranks(world, step_cost);
    if (!root) return;
    const double drift = std::abs((tt.energy - t0.energy) / t0.energy);
    double dp = 0;
    for (int c = 0; c < D; ++c) dp += (tt.momentum[c] - t0.momentum[c]) * (tt.momentum[c] - t0.momentum[c]);
    dp = std::sqrt(dp);
    max_drift = std::max(max_drift, drift);
    max_dp = std::max(max_dp, dp);
    std::printf("| %4d | %6.3f | %16.12f | %10.3e | %8.2e | %12llu | %9.4f | %6d | %8llu | %8.1f | %7.1f |\n", step,
                step * a.dt, tt.energy, drift, dp, static_cast<unsigned long long>(inter), rep.imbalance, remaps,
                static_cast<unsigned long long>(cost.v[0]), static_cast<double>(cost.v[1]) / 1024.0, step_seconds * 1e3);
  };
  if (a.progress > 0) row(0, 0);
  const double h = 0.5 * a.dt;
  std::uint64_t lost = 0;
  for (int step = 1; step <= a.steps; ++step) {
    const auto ts = clock_type::now();
    auto tm = clock_type::now();
    const auto box = d.box();
    d.move_elements([&](Body<D>& b) {  // kick (half a step), drift
      for (int c = 0; c < D; ++c) {
        b.velocity[c] += h * b.acceleration[c];
        b.position[c] += a.dt * b.velocity[c];
      }
      return box.contains(b.position);
    });
    phase[1] += seconds_since(tm);
    tm = clock_type::now();
    if (d.rebalance({.threshold = a.threshold})) ++remaps;
    phase[2] += seconds_since(tm);
    forces();
    for (auto& b : d.local_elements())  // kick (half a step)
      for (int c = 0; c < D; ++c) b.velocity[c] += h * b.acceleration[c];
    const double step_seconds = seconds_since(ts);
    if (a.progress > 0 && (step % a.progress == 0 || step == a.steps)) {
      tm = clock_type::now();
      row(step, step_seconds);
      phase[3] += seconds_since(tm);
    }
    // The progress rows' cadence (step 0 and the last alone without them).
    if (a.progress > 0 ? step % a.progress == 0 || step == a.steps : step == a.steps)
      series.write(d, step * a.dt);
  }
  const double wall = seconds_since(t_start);
  const auto count = d.global_element_count();
  lost = a.n - count;
  const auto final_totals = totals<D>(d, pictures && !a.out.empty() ? &gathered : nullptr, &ranks);
  const auto cost = sum_over_ranks(world, run_cost);
  std::array<double, 4> slowest{};
  MPI_Reduce(phase.data(), slowest.data(), 4, MPI_DOUBLE, MPI_MAX, 0, world);
  if (pictures && !a.out.empty()) {
    if (root)
      write_svg<D>(a.out + "/nbody_final.svg", gathered, ranks, world.size(),
                   "step " + std::to_string(a.steps) + ": x-y projection, coloured by rank (" + std::to_string(world.size()) + " ranks)");
    write_bodies_pvtu<D>(world, a.out, "bodies", std::span<const Body<D>>(d.local_elements().data(), d.local_elements().size()));
  }
  RunResult r;
  if (root) {
    max_drift = std::max(max_drift, std::abs((final_totals.energy - t0.energy) / t0.energy));
    double dp = 0;
    for (int c = 0; c < D; ++c)
      dp += (final_totals.momentum[c] - t0.momentum[c]) * (final_totals.momentum[c] - t0.momentum[c]);
    max_dp = std::max(max_dp, std::sqrt(dp));
    std::uint64_t dg = final_totals.digest;
    dg = (dg ^ bits(final_totals.energy)) * 0x100000001b3ull;  // the energy's bits join the digest
    r.digest = dg;
    r.energy = final_totals.energy;
    std::printf("\n%llu bodies present (%llu left the box); %d remaps; walk totals over ranks: %llu messages, %.1f KiB, "
                "%llu hnodes and %llu bodies sent, %llu faults\n",
                static_cast<unsigned long long>(count), static_cast<unsigned long long>(lost), remaps,
                static_cast<unsigned long long>(cost.v[0]), static_cast<double>(cost.v[1]) / 1024.0,
                static_cast<unsigned long long>(cost.v[2]), static_cast<unsigned long long>(cost.v[3]),
                static_cast<unsigned long long>(cost.v[5]));
    std::printf("conservation over the printed steps and the last: max abs(dE/E0) %.3e, max |dP| %.3e (|P0| %.3e)\n", max_drift, max_dp,
                [&] {
                  double p = 0;
                  for (int c = 0; c < D; ++c) p += t0.momentum[c] * t0.momentum[c];
                  return std::sqrt(p);
                }());
    std::printf("seconds: %.3f wall; slowest rank: forces %.3f, move %.3f, rebalance %.3f, diagnostics %.3f\n", wall,
                slowest[0], slowest[1], slowest[2], slowest[3]);
    if (pictures && !a.vtkhdf.empty())
      std::printf("ParaView time series: %s\n", series.index().c_str());
    if (a.digest || !a.expect_digest.empty())
      std::printf("digest %s energy %.17g (bits %s) strategy %s ranks %d\n", hex16(dg).c_str(), final_totals.energy,
                  hex16(bits(final_totals.energy)).c_str(), strategy.c_str(), world.size());
    if (a.max_energy_drift >= 0 && !(max_drift <= a.max_energy_drift)) {
      std::fprintf(stderr, "nbody: energy drift %.3e above %.3e\n", max_drift, a.max_energy_drift);
      r.status = 1;
    }
    if (a.max_momentum_drift >= 0 && !(max_dp <= a.max_momentum_drift)) {
      std::fprintf(stderr, "nbody: momentum drift %.3e above %.3e\n", max_dp, a.max_momentum_drift);
      r.status = 1;
    }
    if (!a.expect_digest.empty() && a.expect_digest != hex16(dg)) {
      std::fprintf(stderr, "nbody: digest %s, expected %s\n", hex16(dg).c_str(), a.expect_digest.c_str());
      r.status = 1;
    }
  }
  mpi::broadcast(world, r.status, 0);
  return r;
}

template <int D>
int run(const mpi::communicator& world, const Args& a) {
  if (a.check_accuracy) return check_accuracy<D>(world, a);
  int status = 0;
  std::vector<RunResult> results;
  for (std::size_t s = 0; s < a.strategies.size(); ++s) {
    if (s > 0 && world.rank() == 0) std::printf("\n");
    results.push_back(simulate<D>(world, a, a.strategies[s], s == 0));
    status = std::max(status, results.back().status);
  }
  if (world.rank() == 0 && results.size() > 1) {
    bool same = true;
    for (const auto& r : results) same = same && r.digest == results[0].digest && bits(r.energy) == bits(results[0].energy);
    std::printf("\nstrategies %s: %s\n", [&] {
      std::string s;
      for (const auto& n : a.strategies) s += (s.empty() ? "" : ", ") + n;
      return s;
    }().c_str(), same ? "the same digest and energy, bit for bit" : "DIFFERENT results");
    if (!same) status = 3;
  }
  mpi::broadcast(world, status, 0);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  mpi::communicator world;
  Args args;
  try {
    args = parse(argc, argv);
  } catch (const irr::error& e) {
    if (world.rank() == 0) std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  try {
    return args.dim == 2 ? run<2>(world, args) : run<3>(world, args);
  } catch (const irr::error& e) {
    if (world.rank() == 0) std::fprintf(stderr, "nbody: %s\n", e.what());
    return 2;
  }
}
