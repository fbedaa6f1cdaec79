// WaTor (Dewdney 1984) as baiardi-bounded-neighbours §5 runs it: fish, sharks and plankton on a
// toroidal grid, moves to the 4 nearest neighbours, a computation step then a balancing step.
// Only the occupants present are stored: they are the elements of an IrregularDomain whose
// partitioner is named at run time (SFC, any rectangular algorithm, BN-2/BN-4 once registered).
// Beyond the paper, the ocean is the same at every rank count and under every partitioner:
// random numbers are a hash of (seed, step, cell), every conflict is won by the highest hash of
// the cells involved, and proposals across a part boundary are read from the ghost layer.
//
//   mpiexec -n 2 wator [--params coexist|paper] [--width 600 --height 300 --steps 200 ...]
//                      [--partitioner SFC[,NAME...]] [--balance on|off|both] [--out DIR]
//                      [--expect-checksum HEX] [--require-coexistence]
//                      [--checkpoint-every N --checkpoint PATH] [--restart PATH] [--vtkhdf DIR]
// Run `wator --help` for every option; README.md "WaTor" states the rules.
//
// Checkpoint and restart: the ocean is saved after every N-th step with the step and
// the ocean's parameters (the random state: the numbers are a hash of (seed, step, cell), so the
// seed and the step are all of it); a restart loads it on any number of ranks and under any
// partitioner, and ends with the checksum of a run that never stopped. A restart is given the
// run's ocean options again (they are checked against the checkpoint); the rank count,
// --steps, --partitioner, --balance, --balance-every, --threshold and --leaf-capacity may change.
#include "wator_rules.hpp"

#include <irregular/irregular.hpp>
#include "../common/vtkhdf_option.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <time.h>

namespace irr = irregular;
namespace mpi = boost::mpi;
using namespace wator;

namespace {

/// A leaf's load: the animals it holds (a plankton patch costs a quarter of an animal, a free
/// slot nothing). Integer weights keep the load sums exact in any order.
struct CreatureWeight {
  double operator()(const Creature& c) const noexcept {
    return c.kind == fish || c.kind == shark ? 4.0 : c.kind == plankton ? 1.0 : 0.0;
  }
};
using Metric = irr::load::PerElement<CreatureWeight>;
using Domain = irr::IrregularDomain<Creature, irr::stencil::Moore<2>, irr::curve::Hilbert<2>, Metric,
                                    irr::partitioner::ByName>;

/// The torus: cell c = y * w + x; direction 0..3 = north, east, south, west.
struct Torus {
  std::uint32_t w, h;
  [[nodiscard]] std::uint32_t step(std::uint32_t c, int d) const noexcept {
    std::uint32_t x = c % w, y = c / w;
    switch (d) {
      case 0: y = y + 1 == h ? 0 : y + 1; break;
      case 1: x = x + 1 == w ? 0 : x + 1; break;
      case 2: y = y == 0 ? h - 1 : y - 1; break;
      default: x = x == 0 ? w - 1 : x - 1; break;
    }
    return y * w + x;
  }
  [[nodiscard]] std::array<double, 2> centre(std::uint32_t c) const noexcept {
    return {static_cast<double>(c % w) + 0.5, static_cast<double>(c / w) + 0.5};
  }
};

/// Cell -> record index, open addressing (one flat array, rebuilt each step: no per-entry
/// allocation). A row's cells hash to consecutive slots (a hashed row start plus the column),
/// so the east and west neighbours of a cell are found in the same cache line.
class CellTable {
 public:
  explicit CellTable(std::uint32_t width) : width_(width) {}
  void reset(std::size_t n) {
    std::size_t cap = 16;
    int bits = 4;
    while (cap < 2 * n + 2) cap <<= 1, ++bits;
    keys_.assign(cap, empty);
    values_.resize(cap);
    shift_ = 64 - bits;
    mask_ = cap - 1;
  }
  void insert(std::uint32_t key, std::int32_t value) {
    std::size_t i = slot(key);
    while (keys_[i] != empty) i = (i + 1) & mask_;
    keys_[i] = key;
    values_[i] = value;
  }
  [[nodiscard]] std::int32_t find(std::uint32_t key) const noexcept {
    for (std::size_t i = slot(key); keys_[i] != empty; i = (i + 1) & mask_)
      if (keys_[i] == key) return values_[i];
    return -1;
  }

 private:
  static constexpr std::uint32_t empty = 0xffffffffu;
  [[nodiscard]] std::size_t slot(std::uint32_t key) const noexcept {
    const std::uint64_t row = key / width_, column = key - row * width_;
    return static_cast<std::size_t>(((row * 0x9E3779B97F4A7C15ull) >> shift_) + column) & mask_;
  }
  std::uint32_t width_;
  std::vector<std::uint32_t> keys_;
  std::vector<std::int32_t> values_;
  int shift_ = 60;
  std::size_t mask_ = 15;
};

/// Raised when a migration loses, duplicates or alters an occupant (count or checksum differ).
struct ConservationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using clock_type = std::chrono::steady_clock;
/// CPU seconds of this thread: on a shared machine, the work a rank did apart from waiting.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
double seconds_since(clock_type::time_point& t0) {
  const auto t1 = clock_type::now();
  const double s = std::chrono::duration<double>(t1 - t0).count();
  t0 = t1;
  return s;
}

struct Sample {
  long long step;
  std::uint64_t fish, sharks, plankton_ripe;
  double imbalance;
};
struct BalanceRecord {
  long long step;
  double before, after;
};
struct Totals {
  std::uint64_t fish = 0, sharks = 0, plankton = 0, checksum = 0;
};

/// One WaTor run on `comm` with one partitioner, balancing on or off.
class Simulation {
 public:
  /// An empty ocean to seed(), or (`restart` not empty) the ocean saved there by save(), loaded
  /// on this rank count and mapped by `partitioner`, to resume(). Collective.
  Simulation(const mpi::communicator& comm, const Params& p, const std::string& partitioner, bool balance,
             const std::string& restart = {})
      : p_(p),
        torus_{static_cast<std::uint32_t>(p.width), static_cast<std::uint32_t>(p.height)},
        balance_(balance),
        domain_(make_domain(comm, p, partitioner, restart, saved_)) {}

  /// Every rank seeds one slice of the cells (as a reader would), then the domain sorts and
  /// partitions them. Collective.
  void seed() {
    const auto& comm = domain_.comm();
    const std::uint64_t n = static_cast<std::uint64_t>(p_.width) * static_cast<std::uint64_t>(p_.height);
    const std::uint64_t r = static_cast<std::uint64_t>(comm.rank()), np = static_cast<std::uint64_t>(comm.size());
    std::vector<Creature> mine;
    for (std::uint64_t c = n * r / np; c < n * (r + 1) / np; ++c) {
      const auto u = static_cast<long long>(random(seed_(), 0, c, Stream::init_kind) % 100);
      Creature k;
      k.home = k.cell = static_cast<std::uint32_t>(c);
      k.position = torus_.centre(k.home);
      const auto age = random(seed_(), 0, c, Stream::init_age);
      if (u < p_.fish_pct) {
        k.kind = fish;
        k.age = static_cast<std::uint32_t>(age % static_cast<std::uint64_t>(p_.fish_breed));
      } else if (u < p_.fish_pct + p_.shark_pct) {
        k.kind = shark;
        k.age = static_cast<std::uint32_t>(age % static_cast<std::uint64_t>(p_.shark_breed));
      } else if (u < p_.fish_pct + p_.shark_pct + p_.plankton_pct) {
        k.kind = plankton;
      } else {
        continue;
      }
      mine.push_back(k);
    }
    auto t0 = clock_type::now();
    domain_.insert(mine);
    domain_.build();
    collect();
    times_[exchange_t] += seconds_since(t0);
  }

  /// Continues from the checkpoint the ocean was loaded from: checks that it is this run's ocean
  /// (its parameters), collects the ghosts, and returns the steps done. Collective.
  long long resume() {
    const long long done = decode_state(saved_, p_);
    step_ = static_cast<std::uint64_t>(done - 1);  // the step the saved ocean came out of
    auto t0 = clock_type::now();
    collect();
    times_[exchange_t] += seconds_since(t0);
    return done;
  }

  /// Saves the ocean after `done` steps: the occupants in curve order, with the parameters and
  /// the step in the user section. Collective.
  void save(const std::string& path, long long done) {
    domain_.save(path, {.type_tag = checkpoint_tag, .user = encode_state(p_, done)});
  }

  /// One computation step, then (every balance_every steps, when on) a balancing step.
  /// Collective.
  void step(long long s) {
    auto t0 = clock_type::now();
    step_ = static_cast<std::uint64_t>(s);
    auto local = domain_.local_elements();
    for (auto& c : local) {
      c.flags = 0;
      c.target = -1;
      c.cell = c.home;
    }
    index();

    // 1. Sharks propose: a neighbouring fish if any, else an empty neighbouring cell.
    for (auto& c : local)
      if (c.kind == shark) c.target = choose(c.home, Stream::shark_move, [&](std::uint32_t n) {
        const auto a = animals_.find(n);
        return a < 0 ? 1 : at(a).kind == fish ? 2 : 0;
      });
    times_[compute_t] += seconds_since(t0);
    exchange();
    t0 = clock_type::now();

    // 2. Shark conflicts are settled at the target: the proposer of highest priority moves (and
    //    eats the fish there); the others stay. The fish's holder reaches the same verdict.
    for (std::size_t i = 0; i < local.size(); ++i) {
      auto& c = local[i];
      if (c.kind == shark && c.target >= 0 && winner(target(c), shark) == c.home) {
        const auto prey = animals_.find(target(c));
        if (prey >= 0 && at(prey).kind == fish) c.flags |= ate;
        c.flags |= moved;
        if (c.age >= static_cast<std::uint64_t>(p_.shark_breed)) c.flags |= bred;
        c.cell = target(c);
      } else if (c.kind == fish && winner(c.home, shark) >= 0) {
        c.flags |= eaten;
      }
    }
    times_[compute_t] += seconds_since(t0);
    exchange();
    t0 = clock_type::now();

    // 3. Fish propose: a free neighbouring cell after the sharks moved, ripe plankton first.
    for (auto& c : local)
      if (c.kind == fish && !(c.flags & eaten)) c.target = choose(c.home, Stream::fish_move, [&](std::uint32_t n) {
        if (occupied_after_sharks(n)) return 0;
        const auto pl = plankton_.find(n);
        return pl >= 0 && at(pl).ripe_at <= step_ ? 2 : 1;
      });
    times_[compute_t] += seconds_since(t0);
    exchange();
    t0 = clock_type::now();

    // 4. Fish conflicts as the sharks'; a fish eats the ripe plankton where it ends the step.
    for (auto& c : local) {
      if (c.kind != fish || (c.flags & eaten)) continue;
      if (c.target >= 0 && winner(target(c), fish) == c.home) {
        c.flags |= moved;
        if (c.age >= static_cast<std::uint64_t>(p_.fish_breed)) c.flags |= bred;
        c.cell = target(c);
      }
      const auto pl = plankton_.find(c.cell);
      if (pl >= 0 && at(pl).ripe_at <= step_) c.flags |= ate;
    }
    // The patch's holder reaches the fish's verdict: a fish stayed on it, or one moved in.
    for (auto& c : local) {
      if (c.kind != plankton || c.ripe_at > step_) continue;
      const auto a = animals_.find(c.home);
      const bool stayed = a >= 0 && at(a).kind == fish && !(at(a).flags & eaten) && at(a).cell == c.home;
      if (stayed || winner(c.home, fish) >= 0) c.ripe_at = static_cast<std::uint32_t>(step_ + 1 + static_cast<std::uint64_t>(p_.plankton_regrowth));
    }

    // 5. Meals, hunger, age, deaths and births (a newborn is left on the cell its parent left).
    births_.clear();
    for (std::size_t i = 0; i < local.size(); ++i) {
      auto& c = local[i];
      if (c.kind == fish || c.kind == shark) {
        if (c.flags & bred) births_.push_back({c.kind, c.home});
        if (c.flags & eaten) {
          c.kind = free_slot;
        } else {
          c.hunger = (c.flags & ate) ? 0 : c.hunger + 1;
          c.age = (c.flags & bred) ? 0 : c.age + 1;
          if (c.hunger >= static_cast<std::uint64_t>(c.kind == fish ? p_.fish_survival : p_.shark_survival))
            c.kind = free_slot;
        }
      }
      c.home = c.cell;
    }
    std::vector<Creature> born;
    for (const auto& [kind, cell] : births_) {
      Creature b;
      b.kind = kind;
      b.home = b.cell = cell;
      b.position = torus_.centre(cell);
      born.push_back(b);
    }
    times_[compute_t] += seconds_since(t0);

    // 6. Occupants go to the holders of their new cells, the dead leave and the newborns join
    //    (the domain's migration), checked.
    migrate(born);

    // 7. The balancing step.
    if (balance_ && p_.balance_every > 0 && (s + 1) % p_.balance_every == 0) {
      t0 = clock_type::now();
      const auto before = domain_.load_report();
      bool remapped = false;
      times_[balance_t] += seconds_since(t0);
      check_conservation([&] {
        t0 = clock_type::now();
        remapped = domain_.rebalance({.threshold = p_.threshold});
        times_[balance_t] += seconds_since(t0);
      }, "rebalance");
      if (remapped) {
        t0 = clock_type::now();
        const auto after = domain_.load_report();
        times_[balance_t] += seconds_since(t0);
        balances_.push_back({s + 1, before.imbalance, after.imbalance});
        messages_ += domain_.comm().rank() == 0 ? domain_.last_migration().messages : 0;
      }
    }
    t0 = clock_type::now();
    collect();
    times_[ghosts_t] += seconds_since(t0);
  }

  /// Counts and the order-free checksum of the ocean, on every rank. Collective.
  [[nodiscard]] Totals totals() const {
    std::array<std::uint64_t, 4> mine{}, all{};
    for (const auto& c : domain_.local_elements()) {
      mine[0] += c.kind == fish;
      mine[1] += c.kind == shark;
      mine[2] += c.kind == plankton && c.ripe_at <= step_ + 1;
      mine[3] += digest(c);
    }
    mpi::all_reduce(domain_.comm(), mine.data(), 4, all.data(), std::plus<std::uint64_t>());
    return {all[0], all[1], all[2], all[3]};
  }

  /// This rank's fish and sharks: the population chart's per-step samples, summed over the
  /// ranks only at a progress line (no message per step).
  [[nodiscard]] std::array<std::uint64_t, 2> local_animals() const {
    std::array<std::uint64_t, 2> n{};
    for (const auto& c : domain_.local_elements()) n[0] += c.kind == fish, n[1] += c.kind == shark;
    return n;
  }

  /// Draws the leaves coloured by their owner with the animals on top (rank 0 writes; a
  /// diagnostic gather of every leaf and of a sample of the animals). Collective.
  void draw(const std::string& file, const std::string& title) const {
    const auto& comm = domain_.comm();
    const auto& t = domain_.local_tree();
    std::vector<std::uint64_t> starts(t.starts().begin(), t.starts().end());
    std::vector<int> levels(t.levels().begin(), t.levels().end());
    // A deterministic sample of at most ~20,000 animals keeps the picture small.
    const std::uint64_t cells = static_cast<std::uint64_t>(p_.width * p_.height);
    const std::uint64_t keep = std::max<std::uint64_t>(1, cells / 40000);
    std::vector<double> pts;
    for (const auto& c : domain_.local_elements())
      if ((c.kind == fish || c.kind == shark) && mix(c.home) % keep == 0) pts.insert(pts.end(), {c.position[0], c.position[1]});
    std::vector<std::vector<std::uint64_t>> all_s;
    std::vector<std::vector<int>> all_l;
    std::vector<std::vector<double>> all_p;
    mpi::gather(comm, starts, all_s, 0);
    mpi::gather(comm, levels, all_l, 0);
    mpi::gather(comm, pts, all_p, 0);
    if (comm.rank() != 0) return;
    std::vector<irr::Cell<2>> leaf_cells;
    std::vector<int> owners;
    std::vector<std::array<double, 2>> points;
    for (std::size_t r = 0; r < all_s.size(); ++r) {
      for (std::size_t i = 0; i < all_s[r].size(); ++i) {
        leaf_cells.push_back(irr::curve::cell_of_finest<irr::curve::Hilbert<2>>(all_s[r][i], all_l[r][i]));
        owners.push_back(static_cast<int>(r));
      }
      for (std::size_t i = 0; i + 1 < all_p[r].size(); i += 2) points.push_back({all_p[r][i], all_p[r][i + 1]});
    }
    std::ofstream f(file);
    irr::io::SvgOptions opt;
    opt.title = title;
    opt.draw_curve = false;
    opt.width_px = 900;
    opt.point_radius_px = p_.width <= 200 ? 2.0 : 0.6;
    irr::io::write_leaves_svg(f, domain_.box(), 2, leaf_cells, owners, comm.size(), points, opt);
  }

  [[nodiscard]] Domain& domain() noexcept { return domain_; }
  /// exchange_t: the initial build and ghost collection; ghosts_t and migration_t: the steps.
  enum Timer { compute_t, exchange_t, balance_t, check_t, ghosts_t, migration_t };
  [[nodiscard]] const std::array<double, 6>& times() const noexcept { return times_; }
  [[nodiscard]] const std::vector<BalanceRecord>& balances() const noexcept { return balances_; }
  [[nodiscard]] std::uint64_t messages() const noexcept { return messages_; }
  bool corrupt_migration = false;  ///< test hook (--test-corrupt-migration)

 private:
  static constexpr const char* checkpoint_tag = "irregular-example wator/Creature v1";

  /// The parameters that shape the ocean (the seed is the random state with the step).
  static std::vector<std::pair<const char*, long long>> ocean(const Params& p) {
    return {{"--width", p.width},           {"--height", p.height},
            {"--fish", p.fish_pct},         {"--sharks", p.shark_pct},
            {"--plankton", p.plankton_pct}, {"--fish-survival", p.fish_survival},
            {"--shark-survival", p.shark_survival}, {"--fish-breed", p.fish_breed},
            {"--shark-breed", p.shark_breed},       {"--plankton-regrowth", p.plankton_regrowth},
            {"--seed", p.seed}};
  }
  static std::string encode_state(const Params& p, long long done) {
    std::ostringstream out;
    out << "wator run v1\nstep " << done << "\n";
    for (const auto& [name, v] : ocean(p)) out << name << ' ' << v << "\n";
    return out.str();
  }
  /// The steps done, from a checkpoint's user section whose ocean must be p's (the same bytes on
  /// every rank: every rank throws alike).
  static long long decode_state(const std::string& user, const Params& p) {
    std::istringstream in(user);
    std::string head;
    std::map<std::string, long long> v;
    if (!std::getline(in, head) || head != "wator run v1")
      throw irr::invalid_argument("the checkpoint is not of a WaTor run");
    for (std::string k; in >> k;) in >> v[k];
    for (const auto& [name, mine] : ocean(p)) {
      const auto it = v.find(name);
      if (it == v.end()) throw irr::invalid_argument(std::string("the checkpoint lacks ") + name);
      if (it->second != mine)
        throw irr::invalid_argument(std::string(name) + " " + std::to_string(mine) + " differs from the checkpoint's " +
                                    std::to_string(it->second) + " (a restart is given the run's ocean options)");
    }
    const auto it = v.find("step");
    if (it == v.end() || it->second < 1) throw irr::invalid_argument("the checkpoint has no step");
    if (it->second > p.steps)
      throw irr::invalid_argument("the checkpoint is at step " + std::to_string(it->second) + ", beyond --steps " +
                                  std::to_string(p.steps));
    return it->second;
  }

  /// The domain, created empty or loaded (a prvalue either way: constructed in place).
  static Domain make_domain(const mpi::communicator& comm, const Params& p, const std::string& partitioner,
                            const std::string& restart, std::string& user) {
    Domain::options_type options{.periodic = {true, true}, .load = Metric{CreatureWeight{}}, .partitioner = {partitioner}};
    if (!restart.empty())
      return Domain::load(comm, restart, condition(p), std::move(options), {.type_tag = checkpoint_tag, .user = &user});
    return Domain(comm, irr::Box<2>{{0, 0}, {static_cast<double>(p.width), static_cast<double>(p.height)}},
                  condition(p), std::move(options));
  }

  static Domain::condition_type condition(const Params& p) {
    // Leaves at most `level_cap` deep are at least 2 cells wide on both axes, so every cell
    // within distance 2 of a local occupant is local or in a ghost leaf touching a local leaf:
    // all that one step reads (a move's target and the other proposers for it).
    int level_cap = 0;
    while ((std::min(p.width, p.height) >> (level_cap + 1)) >= 2) ++level_cap;
    const auto cap = static_cast<std::size_t>(p.leaf_capacity);
    return [cap, level_cap](const irr::Cell<2>& c, std::size_t count) { return count > cap && c.level < level_cap; };
  }
  [[nodiscard]] std::uint64_t seed_() const noexcept { return static_cast<std::uint64_t>(p_.seed); }
  [[nodiscard]] static std::uint32_t target(const Creature& c) noexcept { return static_cast<std::uint32_t>(c.target); }

  /// Local records first, then the ghosts: index i < local size is local.
  [[nodiscard]] const Creature& at(std::int32_t i) const noexcept {
    const auto n = static_cast<std::int32_t>(local_count_);
    return i < n ? domain_.local_elements()[static_cast<std::size_t>(i)]
                 : domain_.ghost_elements()[static_cast<std::size_t>(i - n)];
  }

  /// Animals and plankton patches of the local and ghost leaves, by the cell they start on.
  void index() {
    const auto local = domain_.local_elements();
    const auto ghost = domain_.ghost_elements();
    local_count_ = local.size();
    animals_.reset(local.size() + ghost.size());
    plankton_.reset(local.size() + ghost.size());
    auto add = [&](const Creature& c, std::size_t i) {
      if (c.kind == fish || c.kind == shark) animals_.insert(c.home, static_cast<std::int32_t>(i));
      else if (c.kind == plankton) plankton_.insert(c.home, static_cast<std::int32_t>(i));
    };
    for (std::size_t i = 0; i < local.size(); ++i) add(local[i], i);
    for (std::size_t i = 0; i < ghost.size(); ++i) add(ghost[i], local.size() + i);
  }

  /// The neighbour of best rank (rank(n) > 0 allowed), ties broken by the random number of
  /// (seed, step, cell); -1 when none is allowed.
  template <class Rank>
  std::int32_t choose(std::uint32_t cell, Stream stream, Rank&& rank) const {
    std::array<std::uint32_t, 4> best{};
    int count = 0, best_rank = 0;
    for (int d = 0; d < 4; ++d) {
      const auto n = torus_.step(cell, d);
      const int r = rank(n);
      if (r == 0 || r < best_rank) continue;
      if (r > best_rank) best_rank = r, count = 0;
      best[static_cast<std::size_t>(count++)] = n;
    }
    if (count == 0) return -1;
    return static_cast<std::int32_t>(best[random(seed_(), step_, cell, stream) % static_cast<std::uint64_t>(count)]);
  }

  /// The cell of the animal of `kind` that wins `t` among those proposing it: the highest
  /// priority hash (seed, step, cell of the proposer), then the lowest cell. -1: no proposer.
  /// Depends on the cells around t only, so every rank that sees them agrees.
  [[nodiscard]] std::int64_t winner(std::uint32_t t, std::uint8_t kind) const {
    const Stream stream = kind == shark ? Stream::shark_priority : Stream::fish_priority;
    std::int64_t best = -1;
    std::uint64_t best_priority = 0;
    for (int d = 0; d < 4; ++d) {
      const auto n = torus_.step(t, d);
      const auto a = animals_.find(n);
      if (a < 0) continue;
      const auto& c = at(a);
      if (c.kind != kind || c.target != static_cast<std::int32_t>(t)) continue;
      const auto pr = random(seed_(), step_, n, stream);
      if (best < 0 || pr > best_priority || (pr == best_priority && n < best)) best = n, best_priority = pr;
    }
    return best;
  }

  /// Whether a cell holds an animal once the sharks have moved: a shark that stayed or left a
  /// newborn, a fish (or the shark that ate it), or a shark that moved in.
  [[nodiscard]] bool occupied_after_sharks(std::uint32_t x) const {
    const auto a = animals_.find(x);
    if (a >= 0) {
      const auto& c = at(a);
      return c.kind == fish || c.cell == x || (c.flags & bred);
    }
    return winner(x, shark) >= 0;
  }

  void exchange() {
    auto t0 = clock_type::now();
    const auto phase = domain_.exchange_ghosts();
    messages_ += phase.messages;
    times_[ghosts_t] += seconds_since(t0);
  }

  void collect() {
    const auto& stats = domain_.collect_ghosts({.contact = irr::Contact::corner});
    messages_ += stats.messages() + stats.values.messages;
  }

  /// Checks that `body` (a migration) keeps every occupant: the global count and checksum of
  /// the non-free records (and of `joining`, records that enter the domain) are the same before
  /// and after. One all-reduce, which also sums `extra` over the ranks (returned). Collective.
  template <class Body>
  std::uint64_t check_conservation(Body&& body, const char* what, std::span<const Creature> joining = {},
                                   std::uint64_t extra = 0) {
    auto t0 = clock_type::now();
    auto sums = [&](std::span<const Creature> more) {
      std::array<std::uint64_t, 2> mine{};
      for (const auto& c : domain_.local_elements()) mine[0] += c.kind != free_slot, mine[1] += digest(c);
      for (const auto& c : more) mine[0] += c.kind != free_slot, mine[1] += digest(c);
      return mine;
    };
    const auto before = sums(joining);
    times_[check_t] += seconds_since(t0);
    body();
    t0 = clock_type::now();
    const auto after = sums({});
    // Differences cancel across ranks only if they are not summed separately: reduce both.
    std::array<std::uint64_t, 5> mine{before[0], before[1], after[0], after[1], extra}, all{};
    mpi::all_reduce(domain_.comm(), mine.data(), 5, all.data(), std::plus<std::uint64_t>());
    times_[check_t] += seconds_since(t0);
    if (all[0] != all[2] || all[1] != all[3])
      throw ConservationError("wator: " + std::string(what) + " changed the ocean: " + std::to_string(all[0]) +
                              " occupants before, " + std::to_string(all[2]) + " after (checksums " +
                              std::to_string(all[1]) + ", " + std::to_string(all[3]) + ")");
    return all[4];
  }

  void migrate(std::span<const Creature> born) {
    const Torus torus = torus_;
    // The test hook: the last rank alters one animal in flight, which the check must catch.
    bool corrupt = corrupt_migration && domain_.comm().rank() == domain_.comm().size() - 1;
    check_conservation([&] {
      auto t0 = clock_type::now();
      domain_.insert(born);  // the newborns join in the move (their cells are set)
      domain_.move_elements([torus, &corrupt](Creature& c) {
        if (c.kind == free_slot) return false;  // the dead leave the domain: only the living are stored
        c.position = torus.centre(c.home);
        if (corrupt && (c.kind == fish || c.kind == shark)) ++c.age, corrupt = false;
        return true;
      });
      times_[migration_t] += seconds_since(t0);
      if (domain_.comm().rank() == 0) messages_ += domain_.last_migration().messages;
    }, "move_elements", born);
  }

  Params p_;
  Torus torus_;
  bool balance_;
  std::string saved_;  ///< the user section of the checkpoint loaded (before domain_: filled by its load)
  Domain domain_;
  std::uint64_t step_ = 0;
  std::size_t local_count_ = 0;
  CellTable animals_{torus_.w}, plankton_{torus_.w};
  std::vector<std::pair<std::uint8_t, std::uint32_t>> births_;
  std::array<double, 6> times_{};
  std::vector<BalanceRecord> balances_;
  std::uint64_t messages_ = 0;
};

struct Options {
  Params params;
  std::vector<std::string> partitioners{"SFC"};
  std::vector<bool> balance{true};
  std::string out;
  std::string expect;
  double t1 = 0;
  bool measure_t1 = false;
  bool corrupt_migration = false;
  bool require_coexistence = false;
  bool help = false;
  long long checkpoint_every = 0;
  std::string checkpoint, restart;
  std::string vtkhdf;  ///< --vtkhdf: the series' directory
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> r;
  std::size_t from = 0;
  while (from <= s.size()) {
    const auto comma = s.find(',', from);
    const auto to = comma == std::string::npos ? s.size() : comma;
    if (to > from) r.push_back(s.substr(from, to - from));
    from = to + 1;
  }
  return r;
}

Options parse(int argc, char** argv) {
  Options o;
  auto& p = o.params;
  // --params sets the rules the other options then override, wherever it stands on the line.
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--params") apply_rules(p, argv[i + 1]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw irr::invalid_argument("" + a + " needs a value");
      return argv[++i];
    };
    auto integer = [&](long long& field) { field = parse_int(a, value()); };
    if (a == "--help" || a == "-h") o.help = true;
    else if (a == "--params") value();  // applied above
    else if (a == "--width") integer(p.width);
    else if (a == "--height") integer(p.height);
    else if (a == "--fish") integer(p.fish_pct);
    else if (a == "--sharks") integer(p.shark_pct);
    else if (a == "--plankton") integer(p.plankton_pct);
    else if (a == "--fish-survival") integer(p.fish_survival);
    else if (a == "--shark-survival") integer(p.shark_survival);
    else if (a == "--fish-breed") integer(p.fish_breed);
    else if (a == "--shark-breed") integer(p.shark_breed);
    else if (a == "--plankton-regrowth") integer(p.plankton_regrowth);
    else if (a == "--steps") integer(p.steps);
    else if (a == "--seed") integer(p.seed);
    else if (a == "--leaf-capacity") integer(p.leaf_capacity);
    else if (a == "--progress") integer(p.progress);
    else if (a == "--balance-every") integer(p.balance_every);
    else if (a == "--svg-every") integer(p.svg_every);
    else if (a == "--threshold") p.threshold = parse_double(a, value());
    else if (a == "--partitioner") o.partitioners = split(value());
    else if (a == "--balance") {
      const auto v = value();
      if (v == "on") o.balance = {true};
      else if (v == "off") o.balance = {false};
      else if (v == "both") o.balance = {true, false};
      else throw irr::invalid_argument("--balance takes on, off or both, not '" + v + "'");
    } else if (a == "--out") o.out = value();
    else if (a == "--expect-checksum") o.expect = value();
    else if (a == "--t1") o.t1 = parse_double(a, value());
    else if (a == "--measure-t1") o.measure_t1 = true;
    else if (a == "--test-corrupt-migration") o.corrupt_migration = true;
    else if (a == "--require-coexistence") o.require_coexistence = true;
    else if (a == "--checkpoint-every") o.checkpoint_every = parse_int(a, value());
    else if (a == "--checkpoint") o.checkpoint = value();
    else if (a == "--restart") o.restart = value();
    else if (a == "--vtkhdf") o.vtkhdf = value();
    else throw irr::invalid_argument("unknown option '" + a + "' (see --help)");
  }
  validate(p);
  if (o.partitioners.empty()) throw irr::invalid_argument("--partitioner needs at least one name");
  if (!(o.t1 >= 0)) throw irr::invalid_argument("--t1 must be a number of seconds >= 0");
  if (o.checkpoint_every < 0 || (o.checkpoint_every > 0) != !o.checkpoint.empty())
    throw irr::invalid_argument("--checkpoint-every N (N >= 1) and --checkpoint PATH go together");
  if (o.checkpoint_every > 0 && o.partitioners.size() * o.balance.size() > 1)
    throw irr::invalid_argument("--checkpoint-every needs one run: one --partitioner and --balance on or off");
  examples::check_vtkhdf_option(o.vtkhdf, "");
  return o;
}

const char* usage =
    "usage: mpiexec -n P wator [options]\n"
    "  --params coexist|paper      the rules below at once: coexist (the defaults: fish and sharks\n"
    "                              persist in a predator-prey cycle) or paper (Table 1: 20% fish,\n"
    "                              30% sharks, 30% plankton, breeding at 10 and 12; the sharks die\n"
    "                              out); the options below override it\n"
    "  --width W --height H        toroidal grid (default 600 x 300)\n"
    "  --fish F --sharks S --plankton K   initial percentages of the cells (30, 3, 40; sum <= 100)\n"
    "  --fish-survival N           steps a fish lives without plankton (7)\n"
    "  --shark-survival N          steps a shark lives without a fish (3)\n"
    "  --fish-breed N --shark-breed N  breeding ages (3, 10)\n"
    "  --plankton-regrowth N       steps a grazed plankton patch needs to ripen again (3)\n"
    "  --steps N (200)  --seed N (2026)  --leaf-capacity N (64 occupants per H-Tree leaf)\n"
    "  --partitioner NAME[,NAME..] SFC, SFC-GREEDY, a rectangular algorithm (JAG-M-HEUR-PROBE, ...),\n"
    "                              BN-2, BN-4 when registered; several names: one run each\n"
    "  --balance on|off|both       the balancing step (on); both: one run each\n"
    "  --balance-every K (1)  --threshold V (0.05: remap when max_unbalance > V)\n"
    "  --progress K (20)           a progress line every K steps with the fish and sharks of each\n"
    "                              step since the last one as bars (0: none)\n"
    "  --out DIR                   SVG snapshots coloured by owner (first and last step, and\n"
    "  --svg-every K               every K steps)\n"
    "  --vtkhdf DIR                the first run as a ParaView time series,\n"
    "                              DIR/wator.vtkhdf.series: the first step, every --progress K-th\n"
    "                              and the last; leaves and occupants with species (0 free,\n"
    "                              1 plankton, 2 fish, 3 shark), age and hunger (needs HDF5)\n"
    "  --t1 SECONDS | --measure-t1 the one-rank time for the speedup (given, or run on rank 0)\n"
    "  --expect-checksum HEX       exit 1 unless every run ends with this ocean checksum\n"
    "  --require-coexistence       exit 1 unless every run ends with fish and sharks alive\n"
    "  --checkpoint-every N --checkpoint PATH   save the ocean after every N-th step (one run only)\n"
    "  --restart PATH              continue the run saved at PATH up to --steps, on any rank count and\n"
    "                              under any partitioner (the run's ocean options must be given again)\n"
    "  --test-corrupt-migration    test hook: alter one animal in flight (the check exits 3)\n"
    "exit status: 0 done, 1 checksum differs or a species died out (--require-coexistence),\n"
    "2 bad input (irregular::error), 3 a migration changed the ocean\n";

/// The values as a row of bars, one per value (the last of each group of k when more than
/// `columns`), heights in eighths of `top`; a blank is 0 (a species extinct).
std::string sparkline(std::span<const std::uint64_t> v, std::uint64_t top, std::size_t columns) {
  static constexpr std::array<const char*, 8> bars{"\u2581", "\u2582", "\u2583", "\u2584",
                                                   "\u2585", "\u2586", "\u2587", "\u2588"};
  const std::size_t n = v.size(), k = std::max<std::size_t>(1, (n + columns - 1) / columns);
  std::string r;
  for (std::size_t i = 0; i < n; i += k) {
    const std::uint64_t x = v[std::min(i + k, n) - 1];
    r += x == 0 || top == 0 ? " " : bars[static_cast<std::size_t>(std::min<std::uint64_t>(7, (8 * x + top - 1) / top - 1))];
  }
  return r;
}

/// The fish (all[0]) and sharks (all[1]) after each step from all[k][from] on (all[k][0] is step
/// `first_step`) as two rows of bars, each scaled to its species' maximum over all[k] (the run
/// so far): the predator-prey cycle at a glance.
void print_chart(const std::array<std::vector<std::uint64_t>, 2>& all, std::size_t from, long long first_step,
                 const char* indent) {
  for (std::size_t k = 0; k < 2; ++k) {
    const auto top = *std::max_element(all[k].begin(), all[k].end());
    const std::span<const std::uint64_t> shown = std::span(all[k]).subspan(from);
    std::printf("%s%-6s %s  steps %lld-%lld, full bar %llu\n", indent, k == 0 ? "fish" : "sharks",
                sparkline(shown, top, 64).c_str(), first_step + static_cast<long long>(from),
                first_step + static_cast<long long>(all[k].size()) - 1, static_cast<unsigned long long>(top));
  }
}

struct RunReport {
  Totals totals;
  double seconds = 0;
  std::array<double, 6> times{};
};

/// The --vtkhdf series: one step per call when a directory was given, nothing otherwise.
class Series : public examples::OptionalSeries {
 public:
  explicit Series(const std::string& dir) : OptionalSeries(dir, "wator") {}
  /// Writes the ocean after step `step`. Collective.
  void write(const Domain& d, long long step) {
    namespace io = irr::io;
    OptionalSeries::write(d, static_cast<double>(step), [] {
      return std::vector<io::Field<Creature>>{
          io::scalar<Creature>("species",
                               [](const Creature& c) { return static_cast<double>(c.kind); }),
          io::scalar<Creature>("age", [](const Creature& c) { return static_cast<double>(c.age); }),
          io::scalar<Creature>("hunger",
                               [](const Creature& c) { return static_cast<double>(c.hunger); })};
    });
  }
};

/// Runs one configuration. `verbose`: progress lines and the summary on rank 0; `series`: where
/// its steps go (--vtkhdf), or null. Collective.
RunReport run(const mpi::communicator& comm, const Options& o, const std::string& partitioner,
              bool balance, bool verbose, Series* series = nullptr) {
  const auto& p = o.params;
  const bool root = comm.rank() == 0;
  Simulation sim(comm, p, partitioner, balance, o.restart);
  sim.corrupt_migration = o.corrupt_migration;
  comm.barrier();
  const auto start = clock_type::now();
  const double cpu_start = thread_cpu_seconds();
  long long first = 0;  // the steps done before this run: a restart's
  if (o.restart.empty()) sim.seed();
  else first = sim.resume();
  const bool checkpoints = verbose && o.checkpoint_every > 0;
  std::string svg_prefix;
  if (verbose && !o.out.empty()) {
    if (root) std::filesystem::create_directories(o.out);
    std::string file_name = partitioner;
    for (auto& ch : file_name)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-') ch = '_';
    svg_prefix = o.out + "/wator_" + file_name + (balance ? "_balanced" : "_static") + "_step";
  }
  auto title = [&](long long s) {
    return "WaTor " + std::to_string(p.width) + "x" + std::to_string(p.height) + ", step " + std::to_string(s) + ", " +
           partitioner + (balance ? " balanced" : " unbalanced") + " on " + std::to_string(comm.size()) +
           " ranks: leaves coloured by owner, dots = animals";
  };
  std::vector<Sample> samples;
  // The population chart: each rank counts its fish and sharks after every step (`pending`), and
  // a progress line sums them on rank 0 (`history`: every step from `first`) in one reduction.
  const bool chart = verbose && p.progress > 0;
  std::vector<std::uint64_t> pending;
  std::array<std::vector<std::uint64_t>, 2> history;
  auto sample = [&](long long s) {
    const auto t = sim.totals();
    const auto rep = sim.domain().load_report();
    samples.push_back({s, t.fish, t.sharks, t.plankton, rep.imbalance});
    const std::size_t from = history[0].size();
    if (chart && s == first) {
      history = {{{t.fish}, {t.sharks}}};
    } else if (chart) {
      std::vector<std::uint64_t> sum(pending.size());
      mpi::reduce(comm, pending.data(), static_cast<int>(pending.size()), sum.data(), std::plus<std::uint64_t>(), 0);
      for (std::size_t i = 0; i < sum.size(); ++i) history[i % 2].push_back(sum[i]);
      pending.clear();
    }
    if (verbose && root)
      std::printf("step %5lld/%lld  fish %8llu  sharks %8llu  ripe plankton %8llu  imbalance %.3f  %.2f s\n", s, p.steps,
                  static_cast<unsigned long long>(t.fish), static_cast<unsigned long long>(t.sharks),
                  static_cast<unsigned long long>(t.plankton), rep.imbalance,
                  std::chrono::duration<double>(clock_type::now() - start).count());
    if (chart && root && s > first) print_chart(history, from, first, "               ");
  };
  if (verbose && root)
    std::printf("\nWaTor %lldx%lld on %d ranks, partitioner %s, balancing %s\n", p.width, p.height, comm.size(),
                partitioner.c_str(), balance ? "on" : "off");
  if (verbose && root && first > 0)
    std::printf("restart: step %lld loaded from %s\n", first, o.restart.c_str());
  if (verbose) sample(first);
  if (!svg_prefix.empty()) sim.draw(svg_prefix + std::to_string(first) + ".svg", title(first));
  if (series) series->write(sim.domain(), first);
  for (long long s = first; s < p.steps; ++s) {
    sim.step(s);
    const long long done = s + 1;
    if (chart) {
      const auto a = sim.local_animals();
      pending.insert(pending.end(), a.begin(), a.end());
    }
    if (verbose && p.progress > 0 && (done % p.progress == 0 || done == p.steps)) sample(done);
    if (!svg_prefix.empty() && (done == p.steps || (p.svg_every > 0 && done % p.svg_every == 0)))
      sim.draw(svg_prefix + std::to_string(done) + ".svg", title(done));
    // The progress lines' cadence (the first step and the last alone without them).
    if (series && ((p.progress > 0 && done % p.progress == 0) || done == p.steps))
      series->write(sim.domain(), done);
    if (checkpoints && done % o.checkpoint_every == 0) {
      sim.save(o.checkpoint, done);
      if (root) std::printf("checkpoint: step %lld saved to %s\n", done, o.checkpoint.c_str());
    }
  }
  comm.barrier();
  const double cpu = thread_cpu_seconds() - cpu_start;
  RunReport r;
  r.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  double cpu_max = 0, cpu_sum = 0;
  mpi::reduce(comm, cpu, cpu_max, mpi::maximum<double>(), 0);
  mpi::reduce(comm, cpu, cpu_sum, std::plus<double>(), 0);
  r.totals = sim.totals();
  mpi::reduce(comm, sim.times().data(), 6, r.times.data(), mpi::maximum<double>(), 0);
  if (!verbose) return r;

  std::uint64_t messages = 0;
  const std::uint64_t mine = sim.messages();
  mpi::reduce(comm, mine, messages, std::plus<std::uint64_t>(), 0);
  if (!root) return r;
  const long long ran = p.steps - first;
  std::printf("\nsummary: WaTor %lldx%lld, %lld steps%s, %d ranks, partitioner %s, balancing %s (V = %.3f every %lld steps)\n",
              p.width, p.height, p.steps, first > 0 ? (" (" + std::to_string(ran) + " after the restart)").c_str() : "",
              comm.size(), partitioner.c_str(), balance ? "on" : "off", p.threshold, p.balance_every);
  std::printf("  fish and sharks over time:\n");
  if (chart && history[0].size() > 1) print_chart(history, 0, first, "    ");
  std::printf("  |  step |     fish |   sharks | ripe plankton | imbalance |\n"
              "  |------:|---------:|---------:|--------------:|----------:|\n");
  for (const auto& s : samples)
    std::printf("  | %5lld | %8llu | %8llu | %13llu | %9.3f |\n", s.step, static_cast<unsigned long long>(s.fish),
                static_cast<unsigned long long>(s.sharks), static_cast<unsigned long long>(s.plankton_ripe), s.imbalance);
  const auto& b = sim.balances();
  std::printf("  balancing steps that remapped: %zu", b.size());
  if (!b.empty()) {
    double before = 0, after = 0;
    for (const auto& x : b) before += x.before, after += x.after;
    std::printf(" (imbalance Lmax/Lavg - 1: mean %.3f before, %.3f after)\n  | after step | before | after |\n"
                "  |-----------:|-------:|------:|\n", before / static_cast<double>(b.size()), after / static_cast<double>(b.size()));
    const std::size_t show = 30;
    for (std::size_t i = 0; i < b.size(); ++i) {
      if (b.size() > show && i == show / 2) std::printf("  |        ... | (%zu more) |  |\n", b.size() - show);
      if (b.size() > show && i >= show / 2 && i < b.size() - show / 2) continue;
      std::printf("  | %10lld | %6.3f | %5.3f |\n", b[i].step, b[i].before, b[i].after);
    }
  } else {
    std::printf("\n");
  }
  std::printf("  time (slowest rank): computation %.3f s, balancing %.3f s, exchange %.3f s (ghosts %.3f s, "
              "migration %.3f s, start %.3f s), checks %.3f s; total %.3f s, %.2f ms per step\n", r.times[0], r.times[2],
              r.times[1] + r.times[4] + r.times[5], r.times[4], r.times[5], r.times[1], r.times[3], r.seconds,
              ran > 0 ? 1e3 * r.seconds / static_cast<double>(ran) : 0.0);
  std::printf("  cpu time: %.3f s on the slowest rank, %.3f s on all ranks\n", cpu_max, cpu_sum);
  std::printf("  messages: %llu in all, %.1f per step\n", static_cast<unsigned long long>(messages),
              ran > 0 ? static_cast<double>(messages) / static_cast<double>(ran) : 0.0);
  std::printf("  final: %llu fish, %llu sharks, %llu ripe plankton patches\n",
              static_cast<unsigned long long>(r.totals.fish), static_cast<unsigned long long>(r.totals.sharks),
              static_cast<unsigned long long>(r.totals.plankton));
  if (!svg_prefix.empty()) std::printf("  pictures: %s{%lld..%lld}.svg\n", svg_prefix.c_str(), first, p.steps);
  if (series) std::printf("  ParaView time series: %s\n", series->index().c_str());
  return r;
}

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  mpi::communicator world;
  const bool root = world.rank() == 0;
  try {
    const Options o = irr::mpi::agree(world, [&] { return parse(argc, argv); });
    if (o.help) {
      if (root) std::fputs(usage, stdout);
      return 0;
    }
    std::optional<std::uint64_t> first;
    bool all_equal = true;
    Series series(o.vtkhdf);
    for (const auto& name : o.partitioners)
      for (bool balance : o.balance) {
        const auto r = run(world, o, name, balance, true, first ? nullptr : &series);
        double t1 = o.t1;
        if (o.measure_t1) {
          // The same run on rank 0 alone, while the other ranks wait.
          const auto self = world.split(root ? 0 : 1);
          if (root) t1 = run(self, o, name, balance, false).seconds;
          mpi::broadcast(world, t1, 0);
        }
        if (root) {
          if (t1 > 0)
            std::printf("  speedup against one rank: %.2f (%.3f s on 1 rank%s, %.3f s on %d)\n", t1 / r.seconds, t1,
                        o.measure_t1 ? ", measured" : ", given", r.seconds, world.size());
          std::printf("checksum %s\n", hex(r.totals.checksum).c_str());
        }
        if (o.require_coexistence && (r.totals.fish == 0 || r.totals.sharks == 0)) {
          if (root)
            std::fprintf(stderr, "wator: --require-coexistence: the %s died out (%llu fish, %llu sharks after step %lld)\n",
                         r.totals.fish == 0 ? "fish" : "sharks", static_cast<unsigned long long>(r.totals.fish),
                         static_cast<unsigned long long>(r.totals.sharks), o.params.steps);
          return 1;
        }
        if (first && *first != r.totals.checksum) all_equal = false;
        if (!first) first = r.totals.checksum;
      }
    if (!all_equal) {
      if (root) std::fprintf(stderr, "wator: the runs ended with different oceans\n");
      return 1;
    }
    if (!o.expect.empty() && first && hex(*first) != o.expect) {
      if (root) std::fprintf(stderr, "wator: checksum %s, expected %s\n", hex(*first).c_str(), o.expect.c_str());
      return 1;
    }
    return 0;
  } catch (const ConservationError& e) {
    if (root) std::fprintf(stderr, "%s\n", e.what());
    return 3;
  } catch (const irr::error& e) {
    if (root) std::fprintf(stderr, "wator: error: %s\n", e.what());
    return 2;
  }
}
