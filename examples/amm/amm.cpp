// The adaptive multigrid Poisson solver (baiardi-2001 §5) on the distributed cell-data domain:
//   mpiexec -n 4 amm [--problem 1|2|peak] [--l0 7] [--lmax 12] [--strategies RA,FP,IFP] [--out DIR]
//                    [--vtkhdf DIR]
// prints one row per V-cycle (levels, points, errors, residual, correction, imbalance, messages
// and bytes of each remote-data strategy), a line per stage, a summary with the final error split
// into its algebraic and discretization parts, the digest of the final grid and values on a line
// of its own (the same at every rank count and under every strategy), and writes amm.pvtu and SVG
// pictures. --vtkhdf DIR writes the run as one ParaView time series, DIR/amm.vtkhdf.series: the
// grid before the first V-cycle and after each one (the time is the cycle), with the solution u,
// the residual f + Δu and the error against the exact solution at each leaf. It needs a build
// with HDF5 (-Dhdf5); without it the option is refused (exit status 2).
//
// The schedule. Each stage runs V-cycles until it converges, then refines; at most --stages
// refinements, and the run ends with the stage after which nothing is refined. A stage converges
// when the last V-cycle's correction (max over the leaves; it bounds the algebraic error left
// while a cycle at least halves it) is at most --tol (1e-3) times the largest second difference
// of u over the leaves, h^2 |u''|, or at most the roundoff floor 1e-13 |h|max. Why: the
// discretization error of this second-order scheme follows h^2 |u''| (an eighth of that second
// difference on the wave and peak problems), so the algebraic error left is well under 1% of it,
// however fine the grid; a relative residual would not do, as the residual grows as 1/h^2 with
// the finest level. Where u is linear (problem ten) the second differences vanish and the stage
// runs to roundoff. A stage that takes more than --max-cycles (50) V-cycles stops the run with a
// message and exit status 1.
//
// --convergence runs the whole schedule for finest levels --from .. --lmax, the uniform level
// following (l0 + lmax - from), and prints per row the V-cycles of each stage, the algebraic error
// of the final values (against the discrete solution, which further V-cycles reach), the
// discretization error and its observed orders in the max and L2 norms; --expect-order fails the
// run when an order is lower. --truncation adds the composite operator's truncation error on
// exact cell means: its max at the interface leaves (those that read a fine ghost inside a coarser
// leaf), at the other leaves on the boundary and at the rest. --expect-error E fails a run whose
// final max error is above E.
//
// Checkpoint and restart. A step is one V-cycle, with the refinement that ends a converged stage.
// --steps S stops after cycle S; --checkpoint-every N --checkpoint PATH saves the composite grid
// after every N-th cycle, with the problem, the schedule and the place in it; --restart PATH
// loads that grid on any number of ranks and continues the schedule: the final digest is bit for
// bit the one of a straight run. A restart is given the run's problem and schedule options again
// (--problem, --l0, --lmax, --hold, --tau, --sweeps, --stages, --tol): they are checked against
// the checkpoint. The rank count, --strategies, --threshold, --max-cycles and --steps may change:
// they do not change the values.
//
//   mpiexec -n 3 amm --problem 2 --l0 4 --lmax 6 --hold 3 --steps 12 --checkpoint-every 12 --checkpoint c.ck
//   mpiexec -n 2 amm --problem 2 --l0 4 --lmax 6 --hold 3 --restart c.ck   # the straight run's digest
#include "solver.hpp"

#include <irregular/io/svg.hpp>
#include <irregular/io/vtk_domain.hpp>
#include "../common/vtkhdf_option.hpp"

#include <boost/mpi/environment.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>

namespace {

struct Args {
  amm::Options opt;
  int stages = 8;          // at most this many refinements, each after a converged stage
  double tol = 1e-3;       // a stage's correction against the largest second difference
  int max_cycles = 50;     // V-cycles a stage may take
  std::string out = "amm-out";
  bool convergence = false;
  int from = 6;            // --convergence: finest levels from .. lmax
  double expect_order = 0;
  double expect_error = -1;  // fail when the final max error is above (-1: no check)
  bool truncation = false;   // --convergence: print the truncation errors too
  std::string expect_digest;
  int steps = -1;          // stop after this V-cycle (-1: the whole schedule)
  int every = 0;           // --checkpoint-every
  std::string checkpoint, restart;
  std::string vtkhdf;  // --vtkhdf: the series' directory
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string t; std::getline(ss, t, ',');) out.push_back(t);
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument("missing value after " + k);
      return argv[++i];
    };
    if (k == "--problem") a.opt.problem = amm::problem_by_name(next());
    else if (k == "--l0") a.opt.l0 = std::stoi(next());
    else if (k == "--lmax") a.opt.lmax = std::stoi(next());
    else if (k == "--hold") a.opt.hold = std::stoi(next());
    else if (k == "--tau") a.opt.tau = std::stod(next());
    else if (k == "--sweeps") a.opt.sweeps = std::stoi(next());
    else if (k == "--threshold") a.opt.threshold = std::stod(next());
    else if (k == "--strategies") a.opt.strategies = split(next());
    else if (k == "--stages") a.stages = std::stoi(next());
    else if (k == "--tol") a.tol = std::stod(next());
    else if (k == "--max-cycles") a.max_cycles = std::stoi(next());
    else if (k == "--out") a.out = next();
    else if (k == "--convergence") a.convergence = true;
    else if (k == "--from") a.from = std::stoi(next());
    else if (k == "--expect-order") a.expect_order = std::stod(next());
    else if (k == "--expect-error") a.expect_error = std::stod(next());
    else if (k == "--truncation") a.truncation = true;
    else if (k == "--expect-digest") a.expect_digest = next();
    else if (k == "--steps") a.steps = std::stoi(next());
    else if (k == "--checkpoint-every") a.every = std::stoi(next());
    else if (k == "--checkpoint") a.checkpoint = next();
    else if (k == "--restart") a.restart = next();
    else if (k == "--vtkhdf") a.vtkhdf = next();
    else throw std::invalid_argument("unknown option " + k);
  }
  auto& o = a.opt;
  if (o.l0 < 1 || o.lmax < o.l0 || o.lmax > 20) throw std::invalid_argument("need 1 <= l0 <= lmax <= 20");
  if (o.hold < 1 || o.hold > o.l0) throw std::invalid_argument("need 1 <= hold <= l0");
  if (o.sweeps < 1 || a.max_cycles < 1 || a.stages < 0 || !(o.tau > 0) || !(a.tol >= 0))
    throw std::invalid_argument("sweeps, max-cycles and tau must be positive, stages and tol not negative");
  if (o.strategies.empty()) throw std::invalid_argument("--strategies needs at least one of RA, FP, IFP");
  for (const auto& s : o.strategies) irregular::ghost::ByName{s};  // rejects unknown names
  if (a.every < 0 || (a.every > 0) != !a.checkpoint.empty())
    throw std::invalid_argument("--checkpoint-every N (N >= 1) and --checkpoint PATH go together");
  if (a.steps < -1) throw std::invalid_argument("--steps must not be negative");
  if (a.convergence && (a.every > 0 || !a.restart.empty() || a.steps >= 0 || !a.vtkhdf.empty()))
    throw std::invalid_argument(
        "--convergence takes no --steps, --checkpoint-every, --restart or --vtkhdf");
  examples::check_vtkhdf_option(a.vtkhdf, "");
  return a;
}

std::string hex(std::uint64_t d) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(d));
  return b;
}

/// The place in the schedule: the V-cycles of each stage so far (the last one's still running
/// unless `over`), and whether the run is over (the last stage converged, nothing to refine).
struct Progress {
  std::vector<int> stage_cycles{0};
  bool over = false;
  [[nodiscard]] int done() const { return std::accumulate(stage_cycles.begin(), stage_cycles.end(), 0); }
};

/// The stage's cycles as "9+6+5".
std::string joined(const std::vector<int>& v) {
  std::ostringstream s;
  for (std::size_t i = 0; i < v.size(); ++i) s << (i ? "+" : "") << v[i];
  return s.str();
}

// ---- the checkpoint's user section: options, schedule, place in it ---------------------------

constexpr const char* checkpoint_tag = "irregular-example amm/Leaf v1";

std::string encode_state(const Args& a, const Progress& p) {
  const auto& o = a.opt;
  std::ostringstream out;
  out << "amm run v2\n"
      << "problem " << static_cast<int>(o.problem) << "\nl0 " << o.l0 << "\nlmax " << o.lmax << "\nhold " << o.hold
      << "\ntau " << std::bit_cast<std::uint64_t>(o.tau) << "\nsweeps " << o.sweeps << "\nstages " << a.stages
      << "\ntol " << std::bit_cast<std::uint64_t>(a.tol) << "\nover " << p.over << "\nstage_cycles "
      << p.stage_cycles.size();
  for (int c : p.stage_cycles) out << ' ' << c;
  out << "\n";
  return out.str();
}

/// The place in the schedule from a checkpoint's user section, whose problem and schedule
/// options must be a's. Every rank holds the same bytes and throws alike.
Progress decode_state(const std::string& user, const Args& a) {
  std::istringstream in(user);
  std::string head;
  std::map<std::string, std::vector<std::uint64_t>> v;
  if (!std::getline(in, head) || head != "amm run v2")
    throw irregular::invalid_argument("'" + a.restart + "' is a checkpoint, but not of an amm run of this version");
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string k;
    ls >> k;
    for (std::uint64_t x; ls >> x;) v[k].push_back(x);
  }
  const auto get = [&](const char* k, std::size_t i = 0) -> std::uint64_t {
    const auto it = v.find(k);
    if (it == v.end() || it->second.size() <= i) throw irregular::invalid_argument("'" + a.restart + "' lacks the field " + k);
    return it->second[i];
  };
  Progress p{{}, get("over") != 0};
  for (std::uint64_t i = 0, n = get("stage_cycles"); i < n; ++i)
    p.stage_cycles.push_back(static_cast<int>(get("stage_cycles", static_cast<std::size_t>(i + 1))));
  if (p.stage_cycles.empty()) throw irregular::invalid_argument("'" + a.restart + "' holds no stage");
  const auto agree = [&](const char* option, bool same, const std::string& saved) {
    if (!same)
      throw irregular::invalid_argument(std::string(option) + " differs from the checkpoint's " + saved +
                                        " (a restart is given the run's options)");
  };
  const auto& o = a.opt;
  const auto problem = static_cast<amm::Problem>(get("problem"));
  const int l0 = static_cast<int>(get("l0")), lmax = static_cast<int>(get("lmax")), hold = static_cast<int>(get("hold"));
  const int sweeps = static_cast<int>(get("sweeps")), stages = static_cast<int>(get("stages"));
  const double tau = std::bit_cast<double>(get("tau")), tol = std::bit_cast<double>(get("tol"));
  agree("--problem", problem == o.problem, amm::name_of(problem));
  agree("--l0", l0 == o.l0, std::to_string(l0));
  agree("--lmax", lmax == o.lmax, std::to_string(lmax));
  agree("--hold", hold == o.hold, std::to_string(hold));
  agree("--tau", tau == o.tau, std::to_string(tau));
  agree("--sweeps", sweeps == o.sweeps, std::to_string(sweeps));
  agree("--stages", stages == a.stages, std::to_string(stages));
  agree("--tol", tol == a.tol, std::to_string(tol));
  if (a.steps >= 0 && a.steps < p.done())
    throw irregular::invalid_argument("the checkpoint is at cycle " + std::to_string(p.done()) + ", beyond --steps " +
                                      std::to_string(a.steps));
  return p;
}

/// The --vtkhdf series: one step per call when a directory was given, nothing otherwise.
class Series : public examples::OptionalSeries {
 public:
  explicit Series(const std::string& dir) : OptionalSeries(dir, "amm") {}
  /// Writes the solver's grid after V-cycle `cycle`: u, the residual and the error. Collective.
  void write(const amm::Solver& s, int cycle) {
    const auto& g = s.grid();
    OptionalSeries::write(g, cycle, [&] {
      // A field sees a leaf's datum only; the residual and the centre are the leaf's, found by
      // the datum's place in local_data(), which the writer walks.
      const amm::Leaf* const first = g.local_data().data();
      const auto leaf = [first](const amm::Leaf& d) {
        return static_cast<std::size_t>(&d - first);
      };
      const auto problem = s.options().problem;
      return std::vector<irregular::io::Field<amm::Leaf>>{
          irregular::io::scalar<amm::Leaf>("u", [](const amm::Leaf& d) { return d.u; }),
          irregular::io::scalar<amm::Leaf>(
              "residual",
              [leaf, residual = s.leaf_residuals()](const amm::Leaf& d) { return residual[leaf(d)]; }),
          irregular::io::scalar<amm::Leaf>("error", [&g, leaf, problem](const amm::Leaf& d) {
            const auto x = g.centre(leaf(d));
            return d.u - amm::exact(problem, x[0], x[1]);
          })};
    });
  }
};

struct Run {
  amm::CycleReport last;
  std::vector<amm::Traffic> total;
  Progress progress;
  int first = 0;  ///< the cycle this run started after (a restart's)
  double seconds = 0;
};

/// The correction below which a stage has converged (see the head of this file): a.tol times
/// the largest second difference, or `roundoff` times |h|max, above where the corrections stop
/// falling on problem ten.
constexpr double roundoff = 1e-13;
double tolerance(const Args& a, const amm::Solver& s, const amm::CycleReport& r) {
  return std::max(a.tol * r.second_difference, roundoff * s.scale());
}

/// Stages of V-cycles, each until it converges, and refinements, from `from` (the start, or a
/// restart's place) up to cycle a.steps; rows printed when `table`; a checkpoint after every
/// a.every-th cycle; the grid before the first cycle and after each one into `series` when given.
/// Throws when a stage does not converge in a.max_cycles.
Run solve(amm::Solver& s, const Args& a, bool table, bool root, std::optional<Progress> from = {},
          Series* series = nullptr) {
  Run run;
  auto& pr = run.progress;
  pr = from.value_or(Progress{});
  run.first = pr.done();
  run.last = s.report();  // what a restart at the end reports
  run.total.assign(a.opt.strategies.size(), {});
  const auto t0 = std::chrono::steady_clock::now();
  if (table && root) {
    std::printf("%5s %7s %9s %11s %11s %10s %10s %6s", "cycle", "levels", "points", "max err", "L2 err", "residual",
                "correction", "imbal");
    for (const auto& n : a.opt.strategies) std::printf(" %8s %10s", (n + " msg").c_str(), (n + " bytes").c_str());
    std::printf("\n");
  }
  auto cycle = [&] {
    run.last = s.vcycle();
    ++pr.stage_cycles.back();
    for (std::size_t k = 0; k < run.total.size(); ++k) {
      run.total[k].messages += run.last.traffic[k].messages;
      run.total[k].bytes += run.last.traffic[k].bytes;
      for (std::size_t q = 0; q < amm::part_names.size(); ++q) run.total[k].by_part[q] += run.last.traffic[k].by_part[q];
    }
    if (table && root) {
      const auto& r = run.last;
      std::printf("%5d %4d-%-2d %9llu %11.3e %11.3e %10.2e %10.2e %5.1f%%%s", pr.done(), r.min_level, r.max_level,
                  static_cast<unsigned long long>(r.points), r.max_error, r.l2_error, r.residual, r.correction,
                  100 * r.imbalance, r.remapped ? "*" : " ");
      for (const auto& t : r.traffic)
        std::printf(" %8llu %10llu", static_cast<unsigned long long>(t.messages), static_cast<unsigned long long>(t.bytes));
      std::printf("\n");
      std::fflush(stdout);
    }
  };
  if (series) series->write(s, pr.done());
  while (!pr.over && (a.steps < 0 || pr.done() < a.steps)) {
    cycle();
    const double tol = tolerance(a, s, run.last);
    const int stage = static_cast<int>(pr.stage_cycles.size());
    if (run.last.correction <= tol) {  // the end of a stage
      if (table && root)
        std::printf("      stage %d converged in %d V-cycles (correction %.2e <= %.2e)", stage, pr.stage_cycles.back(),
                    run.last.correction, tol);
      const auto refined = stage <= a.stages ? s.refine() : 0;
      if (table && root && stage <= a.stages) std::printf("; refined %llu leaves\n", static_cast<unsigned long long>(refined));
      else if (table && root) std::printf("; the last stage (--stages %d)\n", a.stages);
      if (refined == 0) pr.over = true;
      else pr.stage_cycles.push_back(0);
    } else if (pr.stage_cycles.back() >= a.max_cycles) {
      char why[200];
      std::snprintf(why, sizeof why, "stage %d did not converge in %d V-cycles: the correction %.3e is above the "
                    "tolerance %.3e (see --tol and --max-cycles)", stage, a.max_cycles, run.last.correction, tol);
      throw std::runtime_error(why);
    }
    if (a.every > 0 && pr.done() % a.every == 0) {
      s.save(a.checkpoint, {.type_tag = checkpoint_tag, .user = encode_state(a, pr)});
      if (root) std::printf("      checkpoint: cycle %d saved to %s\n", pr.done(), a.checkpoint.c_str());
    }
    // After the stage's refinement: the grid the next cycle starts from, its residuals fresh.
    if (series) series->write(s, pr.done());
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

/// V-cycles a split of the errors may run on to reach the discrete solution.
constexpr int split_cap = 60;

/// SVG pictures of the final hierarchy, coloured by owner rank and by level (rank 0 gathers).
void pictures(const amm::Solver& s, const std::string& dir) {
  const auto& g = s.grid();
  const auto& comm = g.comm();
  // (start, level) pairs: a finest index takes all 62 bits of Morton<2>'s, nothing can share them.
  std::vector<unsigned long long> mine;
  for (std::size_t i = 0; i < g.local_leaf_count(); ++i) {
    mine.push_back(static_cast<unsigned long long>(g.local_tree().starts()[i]));
    mine.push_back(static_cast<unsigned long long>(g.level(i)));
  }
  std::vector<int> sizes(static_cast<std::size_t>(comm.size()));
  const int n = static_cast<int>(mine.size());
  MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, comm);
  std::vector<int> displs(sizes.size(), 0);
  for (std::size_t r = 1; r < sizes.size(); ++r) displs[r] = displs[r - 1] + sizes[r - 1];
  std::vector<unsigned long long> all(comm.rank() == 0 ? static_cast<std::size_t>(displs.back() + sizes.back()) : 0);
  MPI_Gatherv(mine.data(), n, MPI_UNSIGNED_LONG_LONG, all.data(), sizes.data(), displs.data(), MPI_UNSIGNED_LONG_LONG,
              0, comm);
  if (comm.rank() != 0) return;
  std::vector<irregular::Cell<2>> cells;
  std::vector<int> ranks, levels;
  int lo = 99, hi = 0;
  for (int r = 0; r < comm.size(); ++r)
    for (int k = 0; k < sizes[static_cast<std::size_t>(r)]; k += 2) {
      const auto at = static_cast<std::size_t>(displs[static_cast<std::size_t>(r)] + k);
      const int lv = static_cast<int>(all[at + 1]);
      cells.push_back(irregular::curve::cell_of_finest<amm::Curve>(static_cast<amm::Index>(all[at]), lv));
      ranks.push_back(r);
      levels.push_back(lv);
      lo = std::min(lo, lv);
      hi = std::max(hi, lv);
    }
  for (int& l : levels) l -= lo;
  const irregular::Box<2> box{{0, 0}, {1, 1}};
  irregular::io::SvgOptions o;
  o.draw_curve = false;
  o.title = "AMM hierarchy by rank (" + std::to_string(cells.size()) + " leaves)";
  std::ofstream f1(dir + "/amm_ranks.svg");
  irregular::io::write_leaves_svg(f1, box, 2, cells, ranks, comm.size(), {}, o);
  o.title = "AMM hierarchy by level (" + std::to_string(lo) + " to " + std::to_string(hi) + ")";
  std::ofstream f2(dir + "/amm_levels.svg");
  irregular::io::write_leaves_svg(f2, box, 2, cells, levels, hi - lo + 1, {}, o);
}

int convergence(const boost::mpi::communicator& world, const Args& a) {
  const bool root = world.rank() == 0;
  if (root)
    std::printf("Convergence (%s): finest level against the algebraic error of the final values and the\n"
                "discretization error (of the discrete solution, reached by further V-cycles)\n"
                "%4s %9s %-14s %10s %10s %10s %8s %10s %8s%s\n",
                amm::name_of(a.opt.problem), "lmax", "points", "V-cycles", "alg max", "alg L2", "disc max", "order",
                "disc L2", "order", a.truncation ? "  trunc iface  trunc bound  trunc inner" : "");
  double pmax = 0, pl2 = 0, worst = HUGE_VAL;
  for (int L = a.from; L <= a.opt.lmax; ++L) {
    Args b = a;
    b.opt.lmax = L;  // the whole hierarchy moves one level finer per row: l0 follows lmax
    b.opt.l0 = a.opt.l0 + (L - a.from);
    b.stages = L - b.opt.l0 + 2;
    amm::Solver s(world, b.opt);
    const auto run = solve(s, b, false, root);
    const auto e = s.split_errors(split_cap);  // replaces the solution by the discrete one
    const auto trunc = a.truncation ? s.truncation() : std::array<double, 3>{};  // replaces it by exact means
    const bool first = L == a.from;
    const double omax = first ? 0 : std::log2(pmax / e.discretization_max);
    const double ol2 = first ? 0 : std::log2(pl2 / e.discretization_l2);
    if (!first) worst = std::min({worst, omax, ol2});
    if (root) {
      const auto order = [&](double o) {  // blank on the first row
        char t[32] = "";
        if (!first) std::snprintf(t, sizeof t, "%.3f", o);
        return std::string(t);
      };
      std::printf("%4d %9llu %-14s %10.2e %10.2e %10.3e %8s %10.3e %8s", L, static_cast<unsigned long long>(run.last.points),
                  joined(run.progress.stage_cycles).c_str(), e.algebraic_max, e.algebraic_l2, e.discretization_max,
                  order(omax).c_str(), e.discretization_l2, order(ol2).c_str());
      if (a.truncation) std::printf(" %12.3e %12.3e %12.3e", trunc[2], trunc[1], trunc[0]);
      std::printf("\n");
    }
    pmax = e.discretization_max;
    pl2 = e.discretization_l2;
  }
  if (root && a.from < a.opt.lmax) std::printf("lowest observed order of the discretization error: %.3f\n", worst);
  if (a.expect_order > 0 && !(worst >= a.expect_order)) {
    if (root) std::fprintf(stderr, "amm: observed order %.3f below the expected %.3f\n", worst, a.expect_order);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  boost::mpi::environment env(argc, argv);
  boost::mpi::communicator world;
  const bool root = world.rank() == 0;
  Args a;
  try {
    a = parse(argc, argv);
  } catch (const std::exception& e) {
    if (root) std::fprintf(stderr, "amm: %s\n", e.what());
    return 2;
  }
  try {
    if (a.convergence) return convergence(world, a);
    // The solver owns its grid, created or loaded in place.
    std::optional<amm::Solver> solver;
    std::optional<Progress> from;
    if (!a.restart.empty()) {
      std::string user;
      solver.emplace(world, a.opt, a.restart, checkpoint_tag, &user);
      from = decode_state(user, a);
      const auto leaves = solver->grid().global_leaf_count();
      if (root)
        std::printf("Restart: cycle %d loaded from %s (%llu leaves) on %d ranks\n", from->done(), a.restart.c_str(),
                    static_cast<unsigned long long>(leaves), world.size());
    } else {
      solver.emplace(world, a.opt);
    }
    amm::Solver& s = *solver;
    if (root) {
      std::printf("Adaptive multigrid, -Lap u = f on ]0,1[^2, %s\n", amm::name_of(a.opt.problem));
      std::printf("%d ranks; uniform level %d (%llu points), finest level %d; grids from level %d distributed\n",
                  world.size(), a.opt.l0, 1ull << (2 * a.opt.l0), a.opt.lmax, a.opt.hold);
      std::printf("V-cycle: restriction, smoothing (%d Jacobi sweeps), prolongation, norm, refinement; rebalance "
                  "threshold %.2f ('*': remapped)\n", a.opt.sweeps, a.opt.threshold);
      std::printf("A stage ends when the correction is at most max(%g x the largest second difference, %.0e); at most "
                  "%d refinements\n\n", a.tol, roundoff * s.scale(), a.stages);
    }
    Series series(a.vtkhdf);
    const auto run = solve(s, a, true, root, from, &series);
    const std::uint64_t digest = s.digest();
    std::filesystem::create_directories(a.out);
    irregular::io::write_pvtu(s.grid(), a.out, "amm",
                              {{"u", [](const amm::Leaf& d) { return d.u; }}});
    pictures(s, a.out);
    // Last: the split replaces the values by the discrete solution.
    const auto split = run.progress.over ? std::optional(s.split_errors(split_cap)) : std::nullopt;
    if (root) {
      const auto& r = run.last;
      const int cycles = run.progress.done();
      std::printf("\nSummary: %d V-cycles%s (per stage %s) in %.2f s; %llu leaves on levels %d-%d; max error %.3e, "
                  "L2 error %.3e\n",
                  cycles, from ? (" (" + std::to_string(cycles - run.first) + " after the restart)").c_str() : "",
                  joined(run.progress.stage_cycles).c_str(), run.seconds, static_cast<unsigned long long>(r.points),
                  r.min_level, r.max_level, r.max_error, r.l2_error);
      if (split)
        std::printf("The error split: algebraic max %.3e, L2 %.3e (against the discrete solution, reached in %d more "
                    "V-cycles); discretization max %.3e, L2 %.3e\n",
                    split->algebraic_max, split->algebraic_l2, split->cycles, split->discretization_max,
                    split->discretization_l2);
      else
        std::printf("Stopped after cycle %d (--steps), in stage %zu\n", cycles, run.progress.stage_cycles.size());
      std::printf("Remote-data collection over the %s (all ranks):\n", from ? "cycles since the restart" : "whole run");
      for (std::size_t k = 0; k < run.total.size(); ++k) {
        std::printf("  %-4s %9llu messages %12llu bytes", a.opt.strategies[k].c_str(),
                    static_cast<unsigned long long>(run.total[k].messages),
                    static_cast<unsigned long long>(run.total[k].bytes));
        if (k > 0 && run.total[0].messages > 0)
          std::printf("   (%.0f%% of %s's messages, %.0f%% of its bytes)",
                      100.0 * static_cast<double>(run.total[k].messages) / static_cast<double>(run.total[0].messages),
                      a.opt.strategies[0].c_str(),
                      100.0 * static_cast<double>(run.total[k].bytes) / static_cast<double>(run.total[0].bytes));
        std::printf("\n");
      }
      std::printf("Messages by part of the V-cycle:\n");
      for (std::size_t k = 0; k < run.total.size(); ++k) {
        std::printf("  %-4s", a.opt.strategies[k].c_str());
        for (std::size_t q = 0; q < amm::part_names.size(); ++q)
          std::printf(" %s %llu", amm::part_names[q], static_cast<unsigned long long>(run.total[k].by_part[q]));
        std::printf("\n");
      }
      std::printf("Pictures: %s/amm_ranks.svg, %s/amm_levels.svg; ParaView: %s/amm.pvtu\n", a.out.c_str(),
                  a.out.c_str(), a.out.c_str());
      if (!a.vtkhdf.empty()) std::printf("ParaView time series: %s\n", series.index().c_str());
      std::printf("digest: %s\n", hex(digest).c_str());
    }
    if (!a.expect_digest.empty() && hex(digest) != a.expect_digest) {
      if (root) std::fprintf(stderr, "amm: digest %s differs from the expected %s\n", hex(digest).c_str(), a.expect_digest.c_str());
      return 1;
    }
    if (a.expect_error >= 0 && !(run.last.max_error <= a.expect_error)) {
      if (root) std::fprintf(stderr, "amm: max error %.3e above the expected %.3e\n", run.last.max_error, a.expect_error);
      return 1;
    }
  } catch (const std::exception& e) {
    if (root) std::fprintf(stderr, "amm: %s\n", e.what());
    return 1;
  }
  return 0;
}
