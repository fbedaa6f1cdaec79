// The distributed cell-data domain ("Benchmarks", third bullet) against p4est on the same
// mesh, side by side in one run when p4est is installed.
//   2D: unit square, uniform level 6, refined toward the circle of radius 0.3 centred (0.4, 0.4)
//       up to level 14 (the rule of bench/detail/circle_mesh.hpp, which p4est's callback uses too);
//       16 bytes of data per leaf (the centre) on both sides (p4est data_size 16).
//   3D: unit cube, uniform level 4, refined toward the sphere of radius 0.3 centred (0.4, 0.4, 0.4)
//       up to level 8 (the rule of bench/tree_anchors.cpp); 24 bytes per leaf (p8est data_size 24).
// FULL 2:1 balance, then partition. Phases timed (slowest rank, median after warm-up, CPU =
// CLOCK_THREAD_CPUTIME_ID and wall):
//   ours:  CellDomain(comm, box, L0, init) | rounds of mark + adapt | balance(full) | rebalance()
//   p4est: p4est_new_ext / p8est_new_ext   | *_refine(recursive)    | *_balance(FULL) | *_partition
// Our refine runs one collective adapt per level (8 rounds in 2D, 4 in 3D); p4est refines
// recursively in one call: the times are reported as they are. Messages and bytes of both libraries
// are counted by the PMPI layer compiled in (bench/detail/pmpi_counters.hpp). Exit 1 when the leaf
// counts differ from the serial CellTree mesh (244,054 in 2D at level 14) or from p4est's.
// Usage: mpiexec -n 2 bench_cells [--quick] [--dim 2|3] [--level L] [--reps N] [--anchor-first]
#include <irregular/cell_domain.hpp>
#include <irregular/curve/morton.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include "detail/circle_mesh.hpp"
#include "detail/pmpi_counters.hpp"
#include "detail/timed_phase.hpp"
#include "detail/timing.hpp"

#ifdef IRREGULAR_HAVE_P4EST
#include <p4est_extended.h>
#include <p4est_ghost.h>
#include <p8est_extended.h>
#include <p8est_ghost.h>
#endif

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace {

namespace irr = irregular;
namespace mpi = boost::mpi;
namespace cm = bench::circle_mesh;
namespace pc = pmpi_counters;
using bench::max_over;
using bench::median;
using bench::now_s;
using bench::time_once;
using bench::Timing;
using bench::Traffic;

struct Config {
  int dims = 0;   // 0: both
  int level = 0;  // 0: the default of the dimension (14 in 2D, 8 in 3D)
  int warmups = 1, reps = 5;
  bool quick = false;
  bool anchor_first = false;  // p4est makes the process's first calls
};

// One mesh: uniform level, deepest level, and its per-dimension defaults.
template <int D>
struct Mesh {
  static constexpr int min_level = D == 2 ? cm::min_level : 4;
  static constexpr int default_level = D == 2 ? 14 : 8;
  static constexpr int quick_level = D == 2 ? 9 : 6;
};

// The leaf centre (as p4est's init callback writes into its user data): 16 bytes in 2D, 24 in 3D.
template <int D>
struct Datum {
  std::array<double, D> centre{};
};
static_assert(sizeof(Datum<2>) == 16 && sizeof(Datum<3>) == 24);

// The side of a cell at `level` in the unit cube: exact, and cheaper than std::ldexp (which
// showed up at 10% of our refine phase in perf); p4est's callbacks divide likewise.
double side(int level) { return 1.0 / static_cast<double>(std::uint64_t{1} << level); }

// The refinement rule on exact dyadic doubles, corner x0 and side h: the circle mesh's in 2D, the
// sphere's of bench/tree_anchors.cpp in 3D. Both libraries evaluate the same expression.
template <int D>
bool splits(const std::array<double, D>& x0, double h) {
  return cm::sphere_splits<D>(x0, h);
}

template <int D>
Datum<D> centre_of(const irr::Cell<D>& c) {
  const double h = side(c.level);
  Datum<D> x;
  for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d)
    x.centre[d] = (static_cast<double>(c.anchor[d]) + 0.5) * h;
  return x;
}

template <int D>
using Curve = irr::curve::Morton<D>;  // p4est's z-order
template <int D>
using Domain = irr::CellDomain<Datum<D>, irr::stencil::Moore<D>, Curve<D>>;

// The serial CellTree mesh: refined by the rule to max_level, FULL balanced; its leaf count is
// the reference (244,054 in 2D at level 14).
template <int D>
std::uint64_t reference_count(int max_level) {
  if constexpr (D == 2) {
    return cm::make_mesh(max_level).size();
  } else {
    auto t = irr::CellTree<Curve<D>, char>::uniform(Mesh<D>::min_level, char{0});
    t.refine(
        [](const irr::Cell<D>& c) {
          std::array<double, D> x0{};
          for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d)
            x0[d] = static_cast<double>(c.anchor[d]) * side(c.level);
          return splits<D>(x0, side(c.level));
        },
        max_level, [](const char&, const irr::Cell<D>&) { return char{0}; });
    t.balance(irr::BalanceKind::full, [](const char&, const irr::Cell<D>&) { return char{0}; });
    return t.size();
  }
}

// ---- measuring ---------------------------------------------------------------------------------

std::string per_rank(const mpi::communicator& comm, std::uint64_t mine) {
  std::vector<std::uint64_t> all;
  pc::enabled = false;
  mpi::all_gather(comm, mine, all);
  pc::enabled = true;
  std::string s;
  for (std::size_t r = 0; r < all.size(); ++r) s += (r ? " / " : "") + std::to_string(all[r]);
  return s;
}

std::string fmt(double x, int prec = 2) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, x);
  return b;
}
std::string ratio(double a, double b) { return b > 0 ? fmt(a / b, 2) + "x" : "-"; }
unsigned long long ull(std::uint64_t x) { return static_cast<unsigned long long>(x); }

enum Phase { New, Refine, Balance, Partition, Phases };

// The ghost layer after the partition (Contact::corner, p4est's CONNECT_FULL): cold is the first
// call on a freshly built mesh, warm the call after it on the same mesh; plain MPI moves the
// exchange's bytes between the same partners from preallocated buffers (its ceiling).
enum GhostCall { CollectCold, CollectWarm, ExchangeCold, ExchangeWarm, PlainMpi, PlainGather, GhostCalls };
constexpr const char* strategy_names[] = {"RA", "FP", "IFP"};
constexpr int strategies = 3;

struct GhostSide {
  std::array<Timing, GhostCalls> t;
  std::uint64_t ghosts = 0, useless = 0, sent = 0;
};

struct Side {
  std::array<Timing, Phases> t;
  std::array<Timing, Phases> first;  // the first call in the process (one sample, rep 0)
  bool first_pass = false;           // rep 0 of the process's first dimension: fills `first`
  Timing& slot(int ph) { return first_pass ? first[static_cast<std::size_t>(ph)] : t[static_cast<std::size_t>(ph)]; }
  std::uint64_t leaves = 0;
  std::string before_partition, after_partition;
  int rounds = 0;
  std::array<GhostSide, strategies> ghost;  // p4est: [0] only
};

// ---- ours --------------------------------------------------------------------------------------

// Plain MPI point-to-point of `send_bytes[k]` to `to[k]` and `recv_bytes[k]` from `from[k]`,
// preallocated: the ceiling of a value exchange with these partners.
void plain_exchange(const mpi::communicator& comm, const std::vector<int>& to,
                    const std::vector<std::size_t>& send_bytes, const std::vector<int>& from,
                    const std::vector<std::size_t>& recv_bytes, std::vector<std::vector<char>>& out,
                    std::vector<std::vector<char>>& in) {
  std::vector<MPI_Request> req;
  req.reserve(to.size() + from.size());
  for (std::size_t k = 0; k < from.size(); ++k)
    MPI_Irecv(in[k].data(), static_cast<int>(recv_bytes[k]), MPI_BYTE, from[k], 77, comm,
              &req.emplace_back());
  for (std::size_t k = 0; k < to.size(); ++k)
    MPI_Isend(out[k].data(), static_cast<int>(send_bytes[k]), MPI_BYTE, to[k], 77, comm,
              &req.emplace_back());
  MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE);
}

template <int D>
std::unique_ptr<Domain<D>> build_ours(const mpi::communicator& comm, int level, Side& s,
                                      bool keep) {
  auto init = [](const irr::Cell<D>& c) { return centre_of<D>(c); };
  auto split = [](const Datum<D>&, const irr::Cell<D>& c) { return centre_of<D>(c); };
  auto merge = [](std::span<const Datum<D>> kids) { return kids.front(); };
  std::unique_ptr<Domain<D>> d;
  irr::Box<D> box;
  for (int k = 0; k < D; ++k)
    box.lo[static_cast<std::size_t>(k)] = 0.0, box.hi[static_cast<std::size_t>(k)] = 1.0;
  time_once(comm, s.slot(New), keep || s.first_pass,
            [&] { d = std::make_unique<Domain<D>>(comm, box, Mesh<D>::min_level, init); });
  int rounds = 0;
  time_once(comm, s.slot(Refine), keep || s.first_pass, [&] {
    // A leaf that does not split now never will (the rule depends on the cell alone): one round per
    // level.
    for (int lv = Mesh<D>::min_level; lv < level; ++lv, ++rounds) {
      for (std::size_t i = 0; i < d->local_leaf_count(); ++i) {
        const auto c = d->cell(i);
        if (c.level >= level) continue;
        const double h = side(c.level);
        std::array<double, D> x0{};
        for (std::size_t k = 0; k < static_cast<std::size_t>(D); ++k)
          x0[k] = static_cast<double>(c.anchor[k]) * h;
        if (splits<D>(x0, h)) d->mark(i, irr::Mark::refine);
      }
      d->adapt(split, merge);
    }
  });
  s.rounds = rounds;
  time_once(comm, s.slot(Balance), keep || s.first_pass, [&] { d->balance(irr::BalanceKind::full, split); });
  s.before_partition = per_rank(comm, d->local_leaf_count());
  time_once(comm, s.slot(Partition), keep || s.first_pass,
            [&] { d->rebalance(); });
  s.after_partition = per_rank(comm, d->local_leaf_count());
  return d;
}

template <int D>
void run_ours(const mpi::communicator& comm, int level, Side& s, bool keep) {
  for (int g = 0; g < strategies; ++g) {
    // Every strategy's cold call meets a freshly built mesh; the first build's phases are timed.
    Side scratch;
    auto d = build_ours<D>(comm, level, g == 0 ? s : scratch, g == 0 && keep);
    GhostSide& gs = s.ghost[static_cast<std::size_t>(g)];
    const irr::GhostOptions opt{.contact = irr::Contact::corner};
    const irr::ghost::ByName strategy(strategy_names[g]);
    time_once(comm, gs.t[CollectCold], keep, [&] { d->collect_ghosts(opt, strategy); });
    time_once(comm, gs.t[CollectWarm], keep, [&] { d->collect_ghosts(opt, strategy); });
    time_once(comm, gs.t[ExchangeCold], keep, [&] { d->exchange_ghosts(); });
    time_once(comm, gs.t[ExchangeWarm], keep, [&] { d->exchange_ghosts(); });
    // The same bytes between the same partners by plain MPI.
    const auto& layer = d->ghosts();
    std::vector<int> to(layer.send_ranks().begin(), layer.send_ranks().end());
    std::vector<int> from(layer.recv_ranks().begin(), layer.recv_ranks().end());
    std::vector<std::size_t> sb, rb;
    std::vector<std::vector<char>> out, in;
    for (std::size_t k = 0; k < to.size(); ++k) {
      sb.push_back(layer.send_leaves(k).size() * sizeof(Datum<D>));
      out.emplace_back(sb.back(), char{1});
    }
    for (std::size_t k = 0; k < from.size(); ++k) {
      rb.push_back(layer.recv_ghosts(k).size() * sizeof(Datum<D>));
      in.emplace_back(rb.back(), char{0});
    }
    plain_exchange(comm, to, sb, from, rb, out, in);  // warm-up: the timed calls are warm
    time_once(comm, gs.t[PlainMpi], keep, [&] { plain_exchange(comm, to, sb, from, rb, out, in); });
    // The same after gathering the sent leaves' data by hand: the exchange's own copy.
    time_once(comm, gs.t[PlainGather], keep, [&] {
      for (std::size_t k = 0; k < to.size(); ++k) {
        char* at = out[k].data();
        for (std::size_t i : layer.send_leaves(k)) {
          std::memcpy(at, &d->data(i), sizeof(Datum<D>));
          at += sizeof(Datum<D>);
        }
      }
      plain_exchange(comm, to, sb, from, rb, out, in);
    });
    pc::enabled = false;
    const auto st = irr::all_reduce_sum(comm, d->ghosts().stats());
    std::uint64_t n = d->ghosts().size(), all = 0, bad = 0, wrong = 0;
    for (std::size_t k = 0; k < d->ghosts().size(); ++k)
      bad += d->ghost_data(k).centre != centre_of<D>(d->ghosts().cell(k)).centre;
    mpi::all_reduce(comm, n, all, std::plus<std::uint64_t>());
    mpi::all_reduce(comm, bad, wrong, std::plus<std::uint64_t>());
    gs.ghosts = wrong == 0 ? all : 0;  // a wrong ghost datum forces a count mismatch
    gs.useless = st.leaves_useless;
    gs.sent = st.leaves_sent;
    if (g == 0) {
      s.leaves = d->global_leaf_count();
      // The data travelled with their leaves: every datum is its leaf's centre.
      std::uint64_t lbad = 0, lall = 0;
      for (std::size_t i = 0; i < d->local_leaf_count(); ++i)
        lbad += d->data(i).centre != centre_of<D>(d->cell(i)).centre;
      mpi::all_reduce(comm, lbad, lall, std::plus<std::uint64_t>());
      if (lall != 0) {
        if (comm.rank() == 0)
          std::fprintf(stderr, "bench_cells: %llu leaves carry a wrong datum\n", ull(lall));
        s.leaves = 0;  // forces the failure
      }
    }
    pc::enabled = true;
  }
}

// ---- p4est -------------------------------------------------------------------------------------

#ifdef IRREGULAR_HAVE_P4EST
int g_max_level = 14;

// p4est / p8est through one set of names.
template <int D>
struct P4;
template <>
struct P4<2> {
  using forest = p4est_t;
  using quad = p4est_quadrant_t;
  static constexpr const char* names[Phases] = {"p4est_new_ext(level 6, data 16)",
                                                "p4est_refine(recursive)",
                                                "p4est_balance(CONNECT_FULL)", "p4est_partition"};
  static double len(const quad* q) {
    return static_cast<double>(P4EST_QUADRANT_LEN(q->level)) / P4EST_ROOT_LEN;
  }
  static std::array<double, 2> corner(const quad* q) {
    return {static_cast<double>(q->x) / P4EST_ROOT_LEN, static_cast<double>(q->y) / P4EST_ROOT_LEN};
  }
  static p4est_connectivity_t* new_conn() { return p4est_connectivity_new_unitsquare(); }
  static void destroy_conn(p4est_connectivity_t* c) { p4est_connectivity_destroy(c); }
  template <class Init>
  static forest* uniform(MPI_Comm comm, p4est_connectivity_t* c, int level, std::size_t bytes,
                         Init init) {
    return p4est_new_ext(comm, c, 0, level, 1, bytes, init, nullptr);
  }
  template <class Refine, class Init>
  static void refine(forest* f, Refine r, Init init) {
    p4est_refine(f, 1, r, init);
  }
  template <class Init>
  static void balance(forest* f, Init init) {
    p4est_balance(f, P4EST_CONNECT_FULL, init);
  }
  static void partition(forest* f) { p4est_partition(f, 0, nullptr); }
  static void destroy(forest* f) { p4est_destroy(f); }
  using ghost_t = p4est_ghost_t;
  static ghost_t* ghost_new(forest* f) { return p4est_ghost_new(f, P4EST_CONNECT_FULL); }
  static void ghost_destroy(ghost_t* g) { p4est_ghost_destroy(g); }
  static void exchange(forest* f, ghost_t* g, void* data) { p4est_ghost_exchange_data(f, g, data); }
  static const quad* ghost_quad(ghost_t* g, std::size_t k) {
    return p4est_quadrant_array_index(&g->ghosts, k);
  }
};
template <>
struct P4<3> {
  using forest = p8est_t;
  using quad = p8est_quadrant_t;
  static constexpr const char* names[Phases] = {"p8est_new_ext(level 4, data 24)",
                                                "p8est_refine(recursive)",
                                                "p8est_balance(CONNECT_FULL)", "p8est_partition"};
  static double len(const quad* q) {
    return static_cast<double>(P8EST_QUADRANT_LEN(q->level)) / P8EST_ROOT_LEN;
  }
  static std::array<double, 3> corner(const quad* q) {
    return {static_cast<double>(q->x) / P8EST_ROOT_LEN, static_cast<double>(q->y) / P8EST_ROOT_LEN,
            static_cast<double>(q->z) / P8EST_ROOT_LEN};
  }
  static p8est_connectivity_t* new_conn() { return p8est_connectivity_new_unitcube(); }
  static void destroy_conn(p8est_connectivity_t* c) { p8est_connectivity_destroy(c); }
  template <class Init>
  static forest* uniform(MPI_Comm comm, p8est_connectivity_t* c, int level, std::size_t bytes,
                         Init init) {
    return p8est_new_ext(comm, c, 0, level, 1, bytes, init, nullptr);
  }
  template <class Refine, class Init>
  static void refine(forest* f, Refine r, Init init) {
    p8est_refine(f, 1, r, init);
  }
  template <class Init>
  static void balance(forest* f, Init init) {
    p8est_balance(f, P8EST_CONNECT_FULL, init);
  }
  static void partition(forest* f) { p8est_partition(f, 0, nullptr); }
  static void destroy(forest* f) { p8est_destroy(f); }
  using ghost_t = p8est_ghost_t;
  static ghost_t* ghost_new(forest* f) { return p8est_ghost_new(f, P8EST_CONNECT_FULL); }
  static void ghost_destroy(ghost_t* g) { p8est_ghost_destroy(g); }
  static void exchange(forest* f, ghost_t* g, void* data) { p8est_ghost_exchange_data(f, g, data); }
  static const quad* ghost_quad(ghost_t* g, std::size_t k) {
    return p8est_quadrant_array_index(&g->ghosts, k);
  }
};

template <int D>
int refine_rule(typename P4<D>::forest*, p4est_topidx_t, typename P4<D>::quad* q) {
  if (q->level >= g_max_level) return 0;
  return splits<D>(P4<D>::corner(q), P4<D>::len(q));
}
template <int D>
void init_centre(typename P4<D>::forest*, p4est_topidx_t, typename P4<D>::quad* q) {
  const double h = P4<D>::len(q);
  const auto x = P4<D>::corner(q);
  auto* e = static_cast<Datum<D>*>(q->p.user_data);
  for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d) e->centre[d] = x[d] + h / 2;
}

template <int D>
void run_p4est(const mpi::communicator& comm, int level, Side& s, bool keep) {
  using P = P4<D>;
  g_max_level = level;
  auto* conn = P::new_conn();
  typename P::forest* p4 = nullptr;
  time_once(comm, s.slot(New), keep || s.first_pass, [&] {
    p4 = P::uniform(MPI_Comm(comm), conn, Mesh<D>::min_level, sizeof(Datum<D>), init_centre<D>);
  });
  time_once(comm, s.slot(Refine), keep || s.first_pass, [&] { P::refine(p4, refine_rule<D>, init_centre<D>); });
  time_once(comm, s.slot(Balance), keep || s.first_pass, [&] { P::balance(p4, init_centre<D>); });
  s.before_partition = per_rank(comm, static_cast<std::uint64_t>(p4->local_num_quadrants));
  time_once(comm, s.slot(Partition), keep || s.first_pass,
            [&] { P::partition(p4); });
  s.after_partition = per_rank(comm, static_cast<std::uint64_t>(p4->local_num_quadrants));
  s.leaves = static_cast<std::uint64_t>(p4->global_num_quadrants);
  // The ghost layer: p4est_ghost_new (no data) and p4est_ghost_exchange_data (the data).
  GhostSide& gs = s.ghost[0];
  typename P::ghost_t* ghost = nullptr;
  time_once(comm, gs.t[CollectCold], keep, [&] { ghost = P::ghost_new(p4); });
  P::ghost_destroy(ghost);
  time_once(comm, gs.t[CollectWarm], keep, [&] { ghost = P::ghost_new(p4); });
  std::vector<Datum<D>> data(ghost->ghosts.elem_count);
  time_once(comm, gs.t[ExchangeCold], keep, [&] { P::exchange(p4, ghost, data.data()); });
  time_once(comm, gs.t[ExchangeWarm], keep, [&] { P::exchange(p4, ghost, data.data()); });
  pc::enabled = false;
  std::uint64_t n = ghost->ghosts.elem_count, all = 0, bad = 0, wrong = 0;
  for (std::size_t k = 0; k < data.size(); ++k) {
    const auto* q = P::ghost_quad(ghost, k);
    const auto x = P::corner(q);
    for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d)
      bad += data[k].centre[d] != x[d] + P::len(q) / 2;
  }
  mpi::all_reduce(comm, n, all, std::plus<std::uint64_t>());
  mpi::all_reduce(comm, bad, wrong, std::plus<std::uint64_t>());
  pc::enabled = true;
  gs.ghosts = wrong == 0 ? all : 0;
  P::ghost_destroy(ghost);
  P::destroy(p4);
  P::destroy_conn(conn);
}
#endif

// The ghost layer's table: every strategy's collection and exchange, cold and warm, beside
// p4est_ghost_new and p4est_ghost_exchange_data, and the exchange beside plain MPI.
template <int D>
void print_ghosts(const Side& ours, const Side& p4, bool have_p4est, bool) {
  const auto& pg = p4.ghost[0];
  auto traffic = [](const Timing& t) {
    return std::to_string(t.traffic.p2p_messages) + " / " + std::to_string(t.traffic.p2p_bytes) +
           " | " + std::to_string(t.traffic.collectives) + " / " +
           std::to_string(t.traffic.collective_bytes);
  };
  std::printf(
      "\nGhost layer after the partition, Contact::corner (p4est: CONNECT_FULL). Ghosts: ours %llu "
      "(RA) / %llu "
      "(FP) / %llu (IFP), p4est %s; sent by the owners: %llu / %llu / %llu; useless (received, "
      "read by no "
      "leaf): %llu / %llu / %llu. Cold = first call on a freshly built mesh, warm = the call after "
      "it. Our "
      "collection ships the data with the leaves; p4est_ghost_new ships the leaves alone.\n\n",
      ull(ours.ghost[0].ghosts), ull(ours.ghost[1].ghosts), ull(ours.ghost[2].ghosts),
      have_p4est ? std::to_string(pg.ghosts).c_str() : "-", ull(ours.ghost[0].sent),
      ull(ours.ghost[1].sent), ull(ours.ghost[2].sent), ull(ours.ghost[0].useless),
      ull(ours.ghost[1].useless), ull(ours.ghost[2].useless));
  std::printf(
      "| call | ours wall (ms) | ours CPU (ms) | anchor wall (ms) | ours / anchor wall | ours p2p "
      "msgs / bytes | "
      "ours collectives / bytes | anchor p2p msgs / bytes | anchor collectives / bytes |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  const char* calls[] = {"collect_ghosts, cold", "collect_ghosts, warm", "exchange_ghosts, cold",
                         "exchange_ghosts, warm"};
  const char* anchors[] = {"p4est_ghost_new, cold", "p4est_ghost_new, warm",
                           "p4est_ghost_exchange_data, cold", "p4est_ghost_exchange_data, warm"};
  for (int g = 0; g < strategies; ++g)
    for (int c = 0; c < PlainMpi; ++c) {  // the plain MPI rows follow
      const auto& a = ours.ghost[static_cast<std::size_t>(g)].t[static_cast<std::size_t>(c)];
      const auto& b = pg.t[static_cast<std::size_t>(c)];
      std::printf("| %s (%s) vs %s | %.3f | %.3f | %s | %s | %s | %s |\n", calls[c],
                  strategy_names[g], anchors[c], a.wall_ms(), a.cpu_ms(),
                  have_p4est ? fmt(b.wall_ms(), 3).c_str() : "-",
                  have_p4est ? ratio(a.wall_ms(), b.wall_ms()).c_str() : "-", traffic(a).c_str(),
                  have_p4est ? traffic(b).c_str() : "- | -");
    }
  const auto& ifp = ours.ghost[2].t;
  std::printf(
      "| plain MPI_Isend/Irecv of the exchange's bytes, same partners | %.3f | %.3f | | | %s | | "
      "|\n",
      ifp[PlainMpi].wall_ms(), ifp[PlainMpi].cpu_ms(), traffic(ifp[PlainMpi]).c_str());
  std::printf("| the same after a hand gather of the sent leaves' data | %.3f | %.3f | | | %s | | |\n",
              ifp[PlainGather].wall_ms(), ifp[PlainGather].cpu_ms(), traffic(ifp[PlainGather]).c_str());
  auto verdict = [](double r, double target) {
    return fmt(r, 2) + "x (" + (r <= target ? "met" : "NOT met") + ")";
  };
  if (have_p4est) {
    const double both_cold = pg.t[CollectCold].wall_ms() + pg.t[ExchangeCold].wall_ms();
    const double bytes_p4 = static_cast<double>(pg.t[CollectCold].traffic.p2p_bytes +
                                                pg.t[CollectCold].traffic.collective_bytes);
    const double bytes_p4_data =
        bytes_p4 + static_cast<double>(pg.t[ExchangeCold].traffic.p2p_bytes);
    const auto& ic = ifp[CollectCold];
    const double bytes_ours =
        static_cast<double>(ic.traffic.p2p_bytes + ic.traffic.collective_bytes);
    std::printf(
        "\nTargets (IFP): collect cold %s, warm %s of p4est_ghost_new (<= 0.70x); cold %s of "
        "p4est_ghost_new + "
        "p4est_ghost_exchange_data, both cold (the same delivery); bytes %s of p4est_ghost_new's "
        "(<= 1.0x), %s of "
        "p4est_ghost_new + p4est_ghost_exchange_data; exchange cold %s, warm %s of "
        "p4est_ghost_exchange_data (<= "
        "1.0x); plain MPI / exchange warm = %s (>= 0.80), with the hand gather %s; useless ghosts "
        "%llu (0).\n",
        verdict(ic.wall_ms() / pg.t[CollectCold].wall_ms(), 0.7).c_str(),
        verdict(ifp[CollectWarm].wall_ms() / pg.t[CollectWarm].wall_ms(), 0.7).c_str(),
        fmt(ic.wall_ms() / both_cold).c_str(), verdict(bytes_ours / bytes_p4, 1.0).c_str(),
        fmt(bytes_ours / bytes_p4_data).c_str(),
        verdict(ifp[ExchangeCold].wall_ms() / pg.t[ExchangeCold].wall_ms(), 1.0).c_str(),
        verdict(ifp[ExchangeWarm].wall_ms() / pg.t[ExchangeWarm].wall_ms(), 1.0).c_str(),
        fmt(ifp[PlainMpi].wall_ms() / ifp[ExchangeWarm].wall_ms()).c_str(),
        fmt(ifp[PlainGather].wall_ms() / ifp[ExchangeWarm].wall_ms()).c_str(),
        ull(ours.ghost[2].useless));
  }
}

template <int D>
const char* const ours_names[Phases] = {
    D == 2 ? "CellDomain(uniform level 6)" : "CellDomain(uniform level 4)",
    "refine: rounds of mark + adapt", "balance(BalanceKind::full)", "rebalance()"};

// One dimension: the repeats, the table; returns whether the leaf counts agree.
template <int D>
bool run_dimension(const mpi::communicator& world, const Config& cfg, bool have_p4est,
                   bool first_in_process) {
  const int level =
      cfg.level ? cfg.level : (cfg.quick ? Mesh<D>::quick_level : Mesh<D>::default_level);
  const bool root = world.rank() == 0;
  const std::uint64_t reference = reference_count<D>(level);
  Side ours, p4;
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    const bool keep = rep >= cfg.warmups;
    // The process's first calls go to the side --anchor-first names; later repeats alternate.
    const bool p4est_first = have_p4est && (rep == 0 ? cfg.anchor_first : rep % 2 == 1);
    ours.first_pass = p4.first_pass = rep == 0 && first_in_process;
#ifdef IRREGULAR_HAVE_P4EST
    if (p4est_first) run_p4est<D>(world, level, p4, keep);
#else
    (void)p4est_first;  // only the anchor's side reads it
#endif
    run_ours<D>(world, level, ours, keep);
#ifdef IRREGULAR_HAVE_P4EST
    if (!p4est_first) run_p4est<D>(world, level, p4, keep);
#endif
    ours.first_pass = p4.first_pass = false;
  }
  const bool anchor = D == 2 && level == 14;
  // Every strategy's useful ghosts are the same set (request/answer also receives useless ones),
  // as many as p4est's.
  bool ghosts_differ = false;
  for (const auto& g : ours.ghost)
    ghosts_differ = ghosts_differ || g.ghosts == 0 ||
                    g.ghosts - g.useless != ours.ghost[2].ghosts || ours.ghost[2].useless != 0 ||
                    (have_p4est && g.ghosts - g.useless != p4.ghost[0].ghosts);
  const bool failed = ours.leaves != reference || (anchor && reference != 244054) ||
                      (have_p4est && p4.leaves != ours.leaves) || ghosts_differ;
  if (root) {
    std::printf(
        "\n### Cell-data domain against %s: %s, levels %d..%d, FULL 2:1 balance, %zu bytes per "
        "leaf, %d ranks\n\n",
        D == 2 ? "p4est" : "p8est", D == 2 ? "circle mesh (2D)" : "sphere mesh (3D)",
        Mesh<D>::min_level, level, sizeof(Datum<D>), world.size());
    std::printf(
        "Times: medians of %d after %d warm-up, slowest rank; CPU = CLOCK_THREAD_CPUTIME_ID; "
        "messages and "
        "bytes: PMPI counts summed over ranks (last repeat; p2p = sends, collectives = calls and "
        "bytes "
        "contributed).\n\n",
        cfg.reps, cfg.warmups);
    std::printf(
        "Leaves: ours %llu, p4est %s, reference %llu%s. Per rank before partition: ours %s, p4est "
        "%s; "
        "after: ours %s, p4est %s. Our refine: %d rounds of adapt.\n\n",
        ull(ours.leaves), have_p4est ? std::to_string(p4.leaves).c_str() : "-", ull(reference),
        anchor ? " (the anchor's 244,054)" : " (serial CellTree mesh)",
        ours.before_partition.c_str(), have_p4est ? p4.before_partition.c_str() : "-",
        ours.after_partition.c_str(), have_p4est ? p4.after_partition.c_str() : "-", ours.rounds);
    std::printf(
        "| phase | ours wall (ms) | ours CPU (ms) | p4est wall (ms) | p4est CPU (ms) | ours / "
        "p4est wall | "
        "ours / p4est CPU | ours p2p msgs / bytes | ours collectives / bytes | p4est p2p msgs / "
        "bytes | "
        "p4est collectives / bytes |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int ph = 0; ph < Phases; ++ph) {
      const auto& a = ours.t[ph];
      const auto& b = p4.t[ph];
#ifdef IRREGULAR_HAVE_P4EST
      const char* p4_name = P4<D>::names[ph];
#else
      const char* p4_name = "p4est";
#endif
      std::printf(
          "| %s vs %s | %.2f | %.2f | %s | %s | %s | %s | %llu / %llu | %llu / %llu | %s | %s |\n",
          ours_names<D>[ph], p4_name, a.wall_ms(), a.cpu_ms(),
          have_p4est ? fmt(b.wall_ms()).c_str() : "-", have_p4est ? fmt(b.cpu_ms()).c_str() : "-",
          have_p4est ? ratio(a.wall_ms(), b.wall_ms()).c_str() : "-",
          have_p4est ? ratio(a.cpu_ms(), b.cpu_ms()).c_str() : "-", ull(a.traffic.p2p_messages),
          ull(a.traffic.p2p_bytes), ull(a.traffic.collectives), ull(a.traffic.collective_bytes),
          have_p4est ? (std::to_string(b.traffic.p2p_messages) + " / " +
                        std::to_string(b.traffic.p2p_bytes))
                           .c_str()
                     : "-",
          have_p4est ? (std::to_string(b.traffic.collectives) + " / " +
                        std::to_string(b.traffic.collective_bytes))
                           .c_str()
                     : "-");
    }
    if (first_in_process) {
      std::printf("\nFirst call in the process (one sample each, %s first), ms, ours / p4est wall:",
                  cfg.anchor_first ? "p4est" : "ours");
      for (int ph = 0; ph < Phases; ++ph)
        std::printf(" %s %.2f / %s (%s)%s", ours_names<D>[ph], ours.first[ph].wall_ms(),
                    have_p4est ? fmt(p4.first[ph].wall_ms()).c_str() : "-",
                    have_p4est ? ratio(ours.first[ph].wall_ms(), p4.first[ph].wall_ms()).c_str() : "-",
                    ph + 1 < Phases ? ";" : ".\n");
    }
    print_ghosts<D>(ours, p4, have_p4est, first_in_process);
    if (have_p4est) {
      auto verdict = [&](Phase ph) {
        return ratio(ours.t[ph].wall_ms(), p4.t[ph].wall_ms()) + " wall, " +
               ratio(ours.t[ph].cpu_ms(), p4.t[ph].cpu_ms()) + " CPU (" +
               (ours.t[ph].wall_ms() <= p4.t[ph].wall_ms() ? "met" : "NOT met") + ")";
      };
      std::printf("\nTargets (<= 1.0x p4est, wall): refine %s, balance %s, partition %s.\n",
                  verdict(Refine).c_str(), verdict(Balance).c_str(), verdict(Partition).c_str());
      if (first_in_process)
        std::printf(
            "First rebalance in the process: %.2f ms, %s p4est's first partition (target <= 0.70x: "
            "%s); %s our "
            "warm rebalance (target <= 1.10x: %s).\n",
            ours.first[Partition].wall_ms(),
            ratio(ours.first[Partition].wall_ms(), p4.first[Partition].wall_ms()).c_str(),
            ours.first[Partition].wall_ms() <= 0.7 * p4.first[Partition].wall_ms() ? "met"
                                                                                 : "NOT met",
            ratio(ours.first[Partition].wall_ms(), ours.t[Partition].wall_ms()).c_str(),
            ours.first[Partition].wall_ms() <= 1.1 * ours.t[Partition].wall_ms() ? "met"
                                                                                : "NOT met");
    } else {
      std::printf("\np4est not installed: no ratios (install libp4est-dev and reconfigure).\n");
    }
    if (failed)
      std::fprintf(stderr,
                   "bench_cells: %dD LEAF COUNT MISMATCH: ours %llu, p4est %llu, reference %llu\n",
                   D, ull(ours.leaves), ull(p4.leaves), ull(reference));
    std::fflush(stdout);
  }
  return !failed;
}

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  mpi::communicator world;
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      cfg.quick = true;
    else if (std::strcmp(argv[i], "--dim") == 0 && i + 1 < argc)
      cfg.dims = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--level") == 0 && i + 1 < argc)
      cfg.level = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      cfg.reps = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--anchor-first") == 0)
      cfg.anchor_first = true;
    else {
      if (world.rank() == 0)
        std::fprintf(
            stderr,
            "usage: bench_cells [--quick] [--dim 2|3] [--level L] [--reps N] [--anchor-first]\n");
      return 2;
    }
  }
  if (cfg.quick) cfg.reps = 1;
  const bool bad_level =
      cfg.level != 0 && (cfg.level > 20 || (cfg.dims == 2 && cfg.level < Mesh<2>::min_level) ||
                         (cfg.dims == 3 && cfg.level < Mesh<3>::min_level) || cfg.dims == 0);
  if ((cfg.dims != 0 && cfg.dims != 2 && cfg.dims != 3) || bad_level || cfg.reps < 1) {
    if (world.rank() == 0)
      std::fprintf(
          stderr,
          "bench_cells: --dim 2 or 3; --level (with --dim) at least the uniform level (6 in 2D, 4 "
          "in 3D) and at most 20; --reps >= 1\n");
    return 2;
  }
  bool have_p4est = false;
#ifdef IRREGULAR_HAVE_P4EST
  have_p4est = true;
  sc_init(MPI_Comm(world), 0, 0, nullptr, SC_LP_ERROR);
  p4est_init(nullptr, SC_LP_ERROR);
#endif
  if (world.rank() == 0)
    std::printf("p4est: %s\n", have_p4est
                                   ? "installed (side by side, same process, alternating repeats)"
                                   : "not installed (its rows are skipped; our side runs)");
  bool ok = true;
  if (cfg.dims != 3) ok = run_dimension<2>(world, cfg, have_p4est, true) && ok;
  if (cfg.dims != 2) ok = run_dimension<3>(world, cfg, have_p4est, cfg.dims == 3) && ok;
#ifdef IRREGULAR_HAVE_P4EST
  sc_finalize();
#endif
  int f = ok ? 0 : 1, any = 0;
  MPI_Allreduce(&f, &any, 1, MPI_INT, MPI_MAX, world);
  return any;
}
