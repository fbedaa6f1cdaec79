// Particles drifting through clustered swirls: the IrregularDomain workflow of baiardi-2001 on
// a real run — curve showcase, distributed H-Tree build, blocking partition, migration,
// movement with tree adaptation, threshold-driven rebalancing, a short-range density computed
// through the ghost layer (each collection strategy's cost side by side) — then the same run
// under a partitioner named at run time (rectangles), and a moving hotspot rebalanced onto a
// machine whose last rank slows down (measured capacities, neighbour shifts); tables and SVGs.
//
//   mpiexec -n 4 particles [--quick] [--steps N] [--expect-density HEX] [--vtkhdf DIR] [output-dir]
//
// --vtkhdf DIR writes the swirl run (part 2) as one ParaView time series,
// DIR/particles.vtkhdf.series: a file per step (step 0 and each swirl step; the time is the step)
// with the leaves and the particles, fields id and velocity (the swirl's, at the particle). It
// needs a build with HDF5 (-Dhdf5); without it the option is refused (exit status 2).
//
// Checkpoint and restart: with --checkpoint-every N --checkpoint PATH and/or
// --restart PATH the program runs part 2 alone, as a production run would: it builds the domain
// (or loads it from PATH, on any number of ranks), moves the particles up to step --steps, saves
// the domain and the step after every N-th step, and prints the density digest through the
// ghosts, bit for bit the one of a run that never stopped.
//
//   mpiexec -n 3 particles --quick --steps 2 --checkpoint-every 2 --checkpoint run.ck
//   mpiexec -n 2 particles --quick --steps 4 --restart run.ck      # the digest of 4 straight steps
#include <irregular/irregular.hpp>

#include "hotspot.hpp"
#include "owner_svg.hpp"

#include "../common/vtkhdf_option.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/serialization/vector.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;

namespace {

struct Particle {
  std::array<double, 2> position;
  std::uint64_t id;
};

// Half uniform, half in three Gaussian clusters (sigma 0.05), as in the benchmarks.
std::vector<std::array<double, 2>> clustered(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 0.05);
  const double cx[3] = {0.25, 0.72, 0.6}, cy[3] = {0.3, 0.75, 0.2};
  std::vector<std::array<double, 2>> pts(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 2 == 0) { pts[i] = {u(rng), u(rng)}; continue; }
    const auto c = i % 3;
    pts[i] = {std::clamp(cx[c] + g(rng), 0.0, 1.0), std::clamp(cy[c] + g(rng), 0.0, 1.0)};
  }
  return pts;
}

// A swirl around the centre: faster near it, so the clusters shear and load drifts.
std::array<double, 2> swirl(std::array<double, 2> x, double dt) {
  const double rx = x[0] - 0.5, ry = x[1] - 0.5;
  const double r = std::sqrt(rx * rx + ry * ry) + 1e-9;
  const double w = dt * 2.5 * std::exp(-4 * r);
  const double c = std::cos(w), s = std::sin(w);
  return {std::clamp(0.5 + c * rx - s * ry, 0.0, 1.0), std::clamp(0.5 + s * rx + c * ry, 0.0, 1.0)};
}

// Part 1 (one process): each curve orders the same leaves; NicolPlus cuts them in 4 segments.
template <class Curve>
void showcase(const char* name, const std::vector<std::array<double, 2>>& pts, const std::string& dir) {
  const irr::Box<2> box{{0, 0}, {1, 1}};
  const irr::coord_t n = irr::ipow<irr::coord_t>(Curve::arity, Curve::max_level);
  std::vector<typename Curve::index_type> keys;
  for (const auto& x : pts) keys.push_back(Curve::index(box.cell_of(x, Curve::max_level, n)));
  std::sort(keys.begin(), keys.end());
  const auto tree = irr::HTree<Curve>::build(keys, irr::refine::max_elements(64));
  std::vector<std::uint64_t> chain;
  for (std::size_t i = 0; i < tree.size(); ++i) chain.push_back(tree.element_count(i));
  const auto cut = irr::partition::nicol_plus<std::uint64_t>(chain, 4);
  std::printf("  %-8s %6zu leaves   segment loads", name, tree.size());
  for (auto l : cut.loads) std::printf(" %6llu", static_cast<unsigned long long>(l));
  std::printf("   imbalance %.4f\n", cut.imbalance);
  std::vector<irr::Cell<2>> cells;
  std::vector<int> parts;
  for (std::size_t i = 0; i < tree.size(); ++i) {
    cells.push_back(tree.cell(i));
    parts.push_back(static_cast<int>(std::upper_bound(cut.separators.begin(), cut.separators.end(), i) -
                                     cut.separators.begin()) - 1);
  }
  std::ofstream f(dir + "/showcase_" + name + ".svg");
  irr::io::SvgOptions opt;
  opt.title = std::string(name) + " curve: leaves of <= 64 points, 4 segments (NicolPlus)";
  irr::io::write_leaves_svg(f, box, Curve::arity, cells, parts, 4, {}, opt);
}

using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, irr::curve::Hilbert<2>,
                                    irr::load::ElementCount>;

/// The --vtkhdf series: one step per call when a directory was given, nothing otherwise.
class Series : public examples::OptionalSeries {
 public:
  explicit Series(const std::string& dir) : OptionalSeries(dir, "particles") {}
  /// Writes the domain at swirl step `step`. Collective.
  void write(const Domain& d, int step) {
    OptionalSeries::write(d, step, [] {
      constexpr double dt = 0.35;  // the swirl's step
      return std::vector<irr::io::Field<Particle>>{
          irr::io::scalar<Particle>("id",
                                    [](const Particle& p) { return static_cast<double>(p.id); }),
          irr::io::vector<Particle>("velocity", [](const Particle& p) {
            const auto next = swirl(p.position, dt);
            return std::array<double, 2>{(next[0] - p.position[0]) / dt,
                                         (next[1] - p.position[1]) / dt};
          })};
    });
  }
};

template <class D>
void print_step(D& d, const std::string& label) {
  const auto rep = d.load_report();
  std::uint64_t mine[2] = {d.local_leaf_count(), d.local_element_count()};
  std::vector<std::uint64_t> leaves, elems;
  mpi::gather(d.comm(), mine[0], leaves, 0);
  mpi::gather(d.comm(), mine[1], elems, 0);
  const auto moved = d.last_migration();
  if (d.comm().rank() != 0) return;
  std::printf("\n%s\n", label.c_str());
  std::printf("  | rank | leaves | elements |   load |\n  |-----:|-------:|---------:|-------:|\n");
  for (std::size_t r = 0; r < leaves.size(); ++r)
    std::printf("  | %4zu | %6llu | %8llu | %6.0f |\n", r, static_cast<unsigned long long>(leaves[r]),
                static_cast<unsigned long long>(elems[r]), rep.loads[r]);
  std::printf("  imbalance %.4f (Lmax/Lavg - 1), max_unbalance %.4f; moved %llu hnodes, %llu elements, %.1f KiB in %llu messages\n",
              rep.imbalance, rep.max_unbalance, static_cast<unsigned long long>(moved.hnodes),
              static_cast<unsigned long long>(moved.elements), moved.bytes / 1024.0,
              static_cast<unsigned long long>(moved.messages));
}


// Part 3: the ghost layer. Each strategy collects the remote leaves touching local leaves; rank 0
// prints what each one cost, summed over the ranks (the papers' comparison).
template <class D>
void strategy_table(D& d) {
  if (d.comm().rank() == 0)
    std::printf("\n3. Computing across ranks: the ghost layer (remote leaves touching a local leaf, with their\n"
                "   particles), collected by each strategy; totals over the ranks:\n\n"
                "  | strategy                  | messages |   KiB | leaves sent | useless | ms   | msgs+bytes vs RA |\n"
                "  |---------------------------|---------:|------:|------------:|--------:|-----:|-----------------:|\n");
  double ra_cost = 0;
  for (const char* name : {"RA", "FP", "IFP"}) {
    const auto t = irr::all_reduce_sum(d.comm(), d.collect_ghosts({.contact = irr::Contact::corner}, irr::ghost::ByName(name)));
    const double cost = static_cast<double>(t.messages()) + static_cast<double>(t.bytes());
    if (ra_cost == 0) ra_cost = cost;
    if (d.comm().rank() == 0)
      std::printf("  | %-25s | %8llu | %5.1f | %11llu | %7llu | %4.1f | %15.0f%% |\n", irr::ghost::ByName(name).name(),
                  static_cast<unsigned long long>(t.messages()), t.bytes() / 1024.0,
                  static_cast<unsigned long long>(t.leaves_sent), static_cast<unsigned long long>(t.leaves_useless),
                  t.seconds * 1e3, 100.0 * cost / ra_cost);
  }
}

// A short-range density through ghosts: for each particle, sum (1 - r/h)^2 over the particles
// within h, the side of its leaf, in its own leaf and every leaf touching it (local or ghost).
// Leaves are visited in curve order and particles by id, so the numbers are the same at every
// rank count; the digest adds the bit patterns of all densities (order-free, exact).
template <class D>
std::uint64_t density_digest(D& d, double& sum_out) {
  irr::LeafNeighbours nb;
  std::vector<std::pair<std::uint64_t, std::array<double, 2>>> near;
  std::uint64_t digest = 0;
  double sum = 0;
  for (auto leaf : d.local_leaves()) {
    const double h = 1.0 / static_cast<double>(1u << leaf.cell.level);
    d.neighbours(leaf.id, nb, irr::Contact::corner);
    std::vector<std::pair<typename D::index_type, std::span<const Particle>>> runs{{leaf.interval.start, leaf.elements}};
    for (auto j : nb.local) runs.emplace_back(d.local_tree().starts()[j], d.leaf(j).elements);
    for (auto g : nb.ghost) runs.emplace_back(d.ghosts().starts()[g], d.ghost(g).elements);
    std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    near.clear();
    for (const auto& [start, run] : runs) {
      const auto from = near.size();
      for (const auto& q : run) near.emplace_back(q.id, q.position);
      std::sort(near.begin() + static_cast<std::ptrdiff_t>(from), near.end());
    }
    for (const auto& p : leaf.elements) {
      double rho = 0;
      for (const auto& [id, x] : near) {
        const double r = std::hypot(p.position[0] - x[0], p.position[1] - x[1]);
        if (r < h) rho += (1 - r / h) * (1 - r / h);
      }
      std::uint64_t bits;
      std::memcpy(&bits, &rho, sizeof bits);
      digest += bits * 0x9E3779B97F4A7C15ull + p.id;
      sum += rho;
    }
  }
  std::uint64_t all = 0;
  mpi::all_reduce(d.comm(), digest, all, std::plus<std::uint64_t>());
  mpi::all_reduce(d.comm(), sum, sum_out, std::plus<double>());
  return all;
}

std::string hex16(std::uint64_t v) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(v));
  return hex;
}

// ---- checkpoint and restart: part 2 as a production run -------------------------------------

struct Args {
  bool quick = false;
  std::string dir = "demo-out", expect_digest;
  int steps = -1;  ///< swirl steps; -1: 3 with --quick, else 6
  int every = 0;   ///< --checkpoint-every
  std::string checkpoint, restart;
  std::string vtkhdf;  ///< --vtkhdf: the series' directory
  [[nodiscard]] bool production() const { return every > 0 || !restart.empty(); }
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw irr::invalid_argument("particles: " + k + " needs a value");
      return argv[++i];
    };
    auto count = [&](int least) {
      const std::string v = value();
      std::size_t used = 0;
      int n = -1;
      try {
        n = std::stoi(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != v.size() || n < least)
        throw irr::invalid_argument("particles: " + k + " needs an integer >= " + std::to_string(least) + ", got '" + v + "'");
      return n;
    };
    if (k == "--quick") a.quick = true;
    else if (k == "--expect-density") a.expect_digest = value();
    else if (k == "--steps") a.steps = count(0);
    else if (k == "--checkpoint-every") a.every = count(1);
    else if (k == "--checkpoint") a.checkpoint = value();
    else if (k == "--restart") a.restart = value();
    else if (k == "--vtkhdf") a.vtkhdf = value();
    else if (k.starts_with("--")) throw irr::invalid_argument("particles: unknown option " + k);
    else a.dir = k;
  }
  if ((a.every > 0) != !a.checkpoint.empty())
    throw irr::invalid_argument("particles: --checkpoint-every N and --checkpoint PATH go together");
  if (a.steps < 0) a.steps = a.quick ? 3 : 6;
  examples::check_vtkhdf_option(a.vtkhdf, "particles: ");
  return a;
}

/// What a checkpoint carries besides the domain: the steps done and the number of particles.
/// Nothing else is needed to continue: the swirl is a function of the position alone, the tree
/// is in the file, and the density reads the tree and the particles only.
struct RunState {
  int step = 0;
  std::uint64_t particles = 0;
};
constexpr const char* checkpoint_tag = "irregular-example particles/Particle v1";

std::string encode_state(const RunState& s) {
  std::ostringstream out;
  out << "particles run v1\nstep " << s.step << "\nparticles " << s.particles << "\n";
  return out.str();
}

/// The run state from a checkpoint's user section (the same bytes on every rank: every rank
/// throws alike).
RunState decode_state(const std::string& user, const std::string& path) {
  std::istringstream in(user);
  std::string head, k1, k2;
  RunState s;
  if (!std::getline(in, head) || head != "particles run v1" || !(in >> k1 >> s.step >> k2 >> s.particles) ||
      k1 != "step" || k2 != "particles" || s.step < 0)
    throw irr::invalid_argument("'" + path + "' is a checkpoint, but not of a particles run");
  return s;
}

/// Part 2 alone: build (or load) the domain, swirl up to step a.steps with a checkpoint after
/// every a.every-th step, then the density through the ghosts. Returns the exit status.
int production_run(const mpi::communicator& world, const Args& a) {
  const bool root = world.rank() == 0;
  // Built, or loaded on this rank count (the domain is constructed in place: no move).
  std::string user;
  Domain domain = a.restart.empty()
                      ? Domain(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(32))
                      : Domain::load(world, a.restart, irr::refine::max_elements(32), {},
                                     {.type_tag = checkpoint_tag, .user = &user});
  RunState st;
  if (a.restart.empty()) {
    st.particles = a.quick ? 20000 : 200000;
    const auto pts = clustered(st.particles, 2026);
    std::vector<Particle> mine;
    for (std::size_t i = static_cast<std::size_t>(world.rank()); i < pts.size(); i += static_cast<std::size_t>(world.size()))
      mine.push_back({pts[i], i});
    domain.insert(mine);
    domain.build();
    const auto leaves = domain.global_leaf_count();
    if (root)
      std::printf("particles on %d ranks: %llu clustered particles, %llu leaves of <= 32\n", world.size(),
                  static_cast<unsigned long long>(st.particles), static_cast<unsigned long long>(leaves));
  } else {
    st = decode_state(user, a.restart);
    const auto leaves = domain.global_leaf_count();
    const auto particles = domain.global_element_count();
    if (root)
      std::printf("restart: step %d loaded from %s (%llu particles, %llu leaves) on %d ranks\n", st.step,
                  a.restart.c_str(), static_cast<unsigned long long>(particles), static_cast<unsigned long long>(leaves),
                  world.size());
  }
  if (st.step > a.steps)
    throw irr::invalid_argument("the checkpoint is at step " + std::to_string(st.step) + ", beyond --steps " +
                                std::to_string(a.steps));
  Series series(a.vtkhdf);
  series.write(domain, st.step);
  for (int step = st.step + 1; step <= a.steps; ++step) {
    domain.move_elements([](Particle& p) { p.position = swirl(p.position, 0.35); });
    const bool remapped = domain.rebalance({.threshold = 0.05});
    const auto leaves = domain.global_leaf_count();
    const auto rep = domain.load_report();
    if (root)
      std::printf("step %d: %llu leaves, imbalance %.4f%s\n", step, static_cast<unsigned long long>(leaves),
                  rep.imbalance, remapped ? " (rebalanced)" : "");
    if (a.every > 0 && step % a.every == 0) {
      st.step = step;
      domain.save(a.checkpoint, {.type_tag = checkpoint_tag, .user = encode_state(st)});
      if (root) std::printf("checkpoint: step %d saved to %s\n", step, a.checkpoint.c_str());
    }
    series.write(domain, step);
  }
  if (root && !a.vtkhdf.empty()) std::printf("ParaView: %s\n", series.index().c_str());
  const auto total = domain.global_element_count();
  if (root)
    std::printf("%llu of %llu particles present after %d steps\n", static_cast<unsigned long long>(total),
                static_cast<unsigned long long>(st.particles), a.steps);
  if (total != st.particles) return 1;
  domain.collect_ghosts({.contact = irr::Contact::corner}, irr::ghost::ByName("IFP"));
  double density_sum = 0;
  const auto hex = hex16(density_digest(domain, density_sum));
  if (root) std::printf("short-range density through the ghosts: sum %.6f, digest %s\n", density_sum, hex.c_str());
  if (!a.expect_digest.empty() && a.expect_digest != hex) {
    if (root) std::fprintf(stderr, "density digest %s, expected %s\n", hex.c_str(), a.expect_digest.c_str());
    return 1;
  }
  return 0;
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
  if (args.production()) {
    try {
      return production_run(world, args);
    } catch (const irr::error& e) {
      if (world.rank() == 0) std::fprintf(stderr, "particles: %s\n", e.what());
      return 2;
    }
  }
  const bool quick = args.quick;
  const std::string dir = args.dir, expect_digest = args.expect_digest;
  const std::size_t n = quick ? 20000 : 200000;
  const int steps = args.steps;
  const auto pts = clustered(n, 2026);
  if (world.rank() == 0) {
    std::filesystem::create_directories(dir);
    std::printf("irregular demo on %d ranks: %zu clustered particles in the unit square\n\n", world.size(), n);
    std::printf("1. The three curves order the same H-Tree (leaves of <= 64 particles) and the blocking\n"
                "   partitioner cuts each visit into 4 segments of equal load:\n");
    showcase<irr::curve::Morton<2>>("morton", pts, dir);
    showcase<irr::curve::Hilbert<2>>("hilbert", pts, dir);
    showcase<irr::curve::Peano<2>>("peano", pts, dir);
    std::printf("\n2. IrregularDomain<Particle, Moore<2>, Hilbert<2>, ElementCount>, leaves of <= 32 particles.\n"
                "   Every rank starts with a slice of the input, as a reader would give it.\n");
  }
  try {
    Domain domain(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(32));
    std::vector<Particle> mine;
    for (std::size_t i = static_cast<std::size_t>(world.rank()); i < n; i += static_cast<std::size_t>(world.size()))
      mine.push_back({pts[i], i});
    domain.insert(mine);
    domain.build();
    const auto prof = domain.last_profile();
    if (world.rank() == 0)
      std::printf("   build phases on rank 0: sort %.1f ms, leaves %.1f ms, partition %.1f ms, migration %.1f ms\n",
                  prof.sort * 1e3, prof.leaves * 1e3, prof.partition * 1e3, prof.migration * 1e3);
    print_step(domain, "after build (" + std::to_string(domain.global_leaf_count()) + " leaves)");
    draw_owners(domain, dir + "/domain_step0.svg", "step 0: leaves coloured by owner rank, Hilbert order");
    Series series(args.vtkhdf);
    series.write(domain, 0);
    for (int step = 1; step <= steps; ++step) {
      domain.move_elements([](Particle& p) { p.position = swirl(p.position, 0.35); });
      print_step(domain, "step " + std::to_string(step) + ": particles moved, tree adapted (" +
                             std::to_string(domain.global_leaf_count()) + " leaves)");
      if (domain.rebalance({.threshold = 0.05}))
        print_step(domain, "step " + std::to_string(step) + ": max_unbalance above 5%, rebalanced");
      draw_owners(domain, dir + "/domain_step" + std::to_string(step) + ".svg",
           "step " + std::to_string(step) + ": leaves coloured by owner rank");
      series.write(domain, step);
    }
    const auto total = domain.global_element_count();
    if (world.rank() == 0)
      std::printf("\n   %llu of %zu particles present after %d steps\n", static_cast<unsigned long long>(total), n, steps);
    if (total != n) return 1;

    strategy_table(domain);
    double density_sum = 0;
    const auto hex = hex16(density_digest(domain, density_sum));
    if (world.rank() == 0)
      std::printf("\n   short-range density through the ghosts: sum %.6f, digest %s (the same at every rank count)\n",
                  density_sum, hex.c_str());
    if (!expect_digest.empty() && expect_digest != hex) {
      if (world.rank() == 0) std::fprintf(stderr, "density digest %s, expected %s\n", hex.c_str(), expect_digest.c_str());
      return 1;
    }

    // 4. The same particles under a partitioner named at run time: rectangles of a grid of leaf
    //    loads. The domain code is the same; only the ownership map differs.
    using Named = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, irr::curve::Hilbert<2>,
                                       irr::load::ElementCount, irr::partitioner::ByName>;
    const std::string method = "JAG-M-HEUR-PROBE";
    Named rect(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(32), {.partitioner = {method}});
    std::vector<Particle> again;
    for (std::size_t i = static_cast<std::size_t>(world.rank()); i < n; i += static_cast<std::size_t>(world.size()))
      again.push_back({pts[i], i});
    rect.insert(again);
    rect.build();
    if (world.rank() == 0)
      std::printf("\n4. The same particles with partitioner::ByName{\"%s\"} (read from an input file in a real code):\n"
                  "   rectangles of a grid of leaf loads; the same H-Tree, a different ownership map.\n", method.c_str());
    print_step(rect, "after build (" + std::to_string(rect.global_leaf_count()) + " leaves)");
    std::uint64_t least = 0, sent = 0;
    for (int step = 1; step <= steps; ++step) {
      std::uint64_t mine_changed = 0, changed = 0;
      for (const auto& p : rect.local_elements())
        if (rect.owner_of(swirl(p.position, 0.35)) != world.rank()) ++mine_changed;
      mpi::all_reduce(world, mine_changed, changed, std::plus<std::uint64_t>());
      rect.move_elements([](Particle& p) { p.position = swirl(p.position, 0.35); });
      least += changed;
      sent += rect.last_migration().elements;
      rect.rebalance({.threshold = 0.05});
    }
    // owner_of names the rank that holds each particle, whatever the map.
    int wrong = 0, wrong_all = 0;
    for (const auto& p : rect.local_elements()) wrong += rect.owner_of(p.position) != world.rank();
    mpi::all_reduce(world, wrong, wrong_all, std::plus<int>());
    print_step(rect, "after " + std::to_string(steps) + " swirl steps (" + std::to_string(rect.global_leaf_count()) + " leaves)");
    draw_owners(rect, dir + "/rectangles.svg", "rectangles (" + method + "): leaves coloured by owner rank");
    const auto rect_total = rect.global_element_count();
    if (world.rank() == 0)
      std::printf("   moves sent %llu particles for %llu that changed rank; owner_of wrong for %d particles\n",
                  static_cast<unsigned long long>(sent), static_cast<unsigned long long>(least), wrong_all);
    // Would another partitioner suit these leaves better? A dry run measures each candidate's map
    // exactly (balance, ghosts, remap) and prices it; nothing moves (doc/guide/advisor.md).
    const auto cmp = rect.compare_partitioners({"SFC", "HIER-RB", "JAG-M-HEUR-PROBE", "BN-2", "BN-4"},
                                               {.model = {.seconds_per_load = 1e-7}});
    irr::io::write_comparison_svg(dir + "/advisor.svg", rect, cmp,
                                  {.width_px = 360, .draw_curve = false,
                                   .title = "compare_partitioners: the same leaves under each candidate's map"});
    if (world.rank() == 0) {
      std::printf("   compare_partitioners: five maps of these leaves, measured without moving (0.1 us/particle):\n");
      std::istringstream table(cmp.markdown());
      for (std::string line; std::getline(table, line);) std::printf("   %s\n", line.c_str());
    }

    // 5. A hotspot drifts while the last rank slows down: capacities measured, neighbour shifts.
    const bool hotspot_kept = run_hotspot_story(world, dir);
    if (world.rank() == 0) {
      std::printf("\nsummary: %llu of %zu particles present under both maps (none lost, none duplicated);"
                  " hotspot particles %s\n",
                  static_cast<unsigned long long>(rect_total), n, hotspot_kept ? "all present" : "LOST");
      std::printf("pictures: %s/showcase_{morton,hilbert,peano}.svg, %s/domain_step0..%d.svg, %s/rectangles.svg,\n"
                  "          %s/advisor.svg, %s/hotspot_{first,last}.svg\n",
                  dir.c_str(), dir.c_str(), steps, dir.c_str(), dir.c_str(), dir.c_str());
      if (!args.vtkhdf.empty())
        std::printf("ParaView: %s (the swirl run of part 2)\n", series.index().c_str());
    }
    return rect_total == n && wrong_all == 0 && hotspot_kept ? 0 : 1;
  } catch (const irr::error& e) {
    if (world.rank() == 0) std::fprintf(stderr, "irregular error: %s\n", e.what());
    return 2;
  }
}
