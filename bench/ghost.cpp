// The ghost layer on the p4est anchor mesh (circle, levels 6..14, FULL 2:1 balance,
// 244,054 leaves, 16 bytes per leaf): construction and value exchange against p4est_ghost_new
// and p4est_ghost_exchange_data side by side (p4est when installed), the papers' comparison of
// request/answer, fault prevention and informed fault prevention (messages, bytes, leaves sent
// and useless), the merge-buffer sweep, and the exchange against plain MPI point-to-point.
// Messages and bytes of both libraries are counted by a PMPI layer compiled in
// (bench/detail/pmpi_counters.hpp).
// Usage: mpiexec -n 2 bench_ghost [--quick] [--level L] [--reps N] [--hilbert]
//   --level 18: the ~3.9 million leaf variant; --hilbert: our side on the Hilbert curve (its
//   partition differs from p4est's z-order one, so no ghost count comparison).
#include <irregular/irregular.hpp>

#include "detail/circle_mesh.hpp"
#include "detail/pmpi_counters.hpp"
#include "detail/timed_phase.hpp"
#include "detail/timing.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#ifdef IRREGULAR_HAVE_P4EST
#include <p4est_extended.h>
#include <p4est_ghost.h>
#endif

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace irr = irregular;
namespace mpi = boost::mpi;
namespace cm = bench::circle_mesh;
namespace pc = pmpi_counters;
using bench::max_over;
using bench::time_once;
using bench::Timing;
using bench::Traffic;
using bench::median;
using bench::now_s;
using Moore = irr::stencil::Moore<2>;

struct Config {
  int level = 14;
  int warmups = 1, reps = 5, exchange_reps = 51;
  bool quick = false, hilbert = false;
};

bool g_failed = false;  // a ghost count or value mismatch: exit 1

// ---- measuring -------------------------------------------------------------------------------

std::string fmt(double x, int prec = 2) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, x);
  return b;
}
std::string pct(double a, double b) { return b > 0 ? fmt(100.0 * a / b, 1) + "%" : "-"; }
std::string ratio(double a, double b) { return b > 0 ? fmt(a / b, 2) + "x" : "-"; }
unsigned long long ull(std::uint64_t x) { return static_cast<unsigned long long>(x); }

// ---- our side ----------------------------------------------------------------------------------

template <class C>
using Domain = irr::IrregularDomain<cm::Element, Moore, C>;

/// The values phase of a layer: one message per partner, 16 bytes per scheduled element.
template <class C>
irr::GhostPhase values_of(const irr::GhostLayer<C>& g, const irr::LocalLeaves<C>& leaves) {
  irr::GhostPhase v;
  for (std::size_t k = 0; k < g.send_ranks().size(); ++k) {
    std::uint64_t n = 0;
    for (std::size_t i : g.send_leaves(k)) n += leaves.counts()[i];
    if (n == 0) continue;
    v.messages += 1;
    v.bytes += n * sizeof(cm::Element);
  }
  return v;
}

/// A strategy's collection alone (no value fill), as the domain runs it, on our own duplicate of
/// the domain's communicator. `cache` carries the informed-fault-prevention extension.
template <class C, class G>
irr::GhostLayer<C> collect(const mpi::communicator& comm, const Domain<C>& dom, irr::GhostOptions opt, G strategy,
                           irr::ExtensionCache<C>& cache) {
  const irr::CollectionInput<C, typename Domain<C>::map_type> in{
      comm, dom.local_tree(), dom.ownership(), dom.options().periodic, opt, 1, cache, 0};
  return strategy.template collect<Moore>(in);
}

const char* const strategy_names[] = {"RA", "FP", "IFP"};

// ---- p4est ---------------------------------------------------------------------------------------

#ifdef IRREGULAR_HAVE_P4EST
int g_max_level = 14;
int refine_circle(p4est_t*, p4est_topidx_t, p4est_quadrant_t* q) {
  if (q->level >= g_max_level) return 0;
  const double h = static_cast<double>(P4EST_QUADRANT_LEN(q->level)) / P4EST_ROOT_LEN;
  return cm::splits(static_cast<double>(q->x) / P4EST_ROOT_LEN, static_cast<double>(q->y) / P4EST_ROOT_LEN, h);
}
void init_centre(p4est_t*, p4est_topidx_t, p4est_quadrant_t* q) {
  const double h = static_cast<double>(P4EST_QUADRANT_LEN(q->level)) / P4EST_ROOT_LEN;
  auto* e = static_cast<cm::Element*>(q->p.user_data);
  e->position = {static_cast<double>(q->x) / P4EST_ROOT_LEN + h / 2, static_cast<double>(q->y) / P4EST_ROOT_LEN + h / 2};
}
irr::Cell<2> cell_of(const p4est_quadrant_t& q) {
  const int sh = P4EST_MAXLEVEL - q.level;
  return {{static_cast<irr::coord_t>(q.x) >> sh, static_cast<irr::coord_t>(q.y) >> sh}, q.level};
}

/// The anchor forest: uniform level 6, refined, FULL balanced, partitioned with uniform weights;
/// 16 bytes of user data per quadrant (its centre).
struct Forest {
  p4est_connectivity_t* conn = nullptr;
  p4est_t* p4 = nullptr;
  Forest(const mpi::communicator& comm, int max_level) {
    g_max_level = max_level;
    conn = p4est_connectivity_new_unitsquare();
    p4 = p4est_new_ext(MPI_Comm(comm), conn, 0, cm::min_level, 1, sizeof(cm::Element), init_centre, nullptr);
    p4est_refine(p4, 1, refine_circle, init_centre);
    p4est_balance(p4, P4EST_CONNECT_FULL, init_centre);
    p4est_partition_ext(p4, 0, nullptr);
  }
  ~Forest() {
    p4est_destroy(p4);
    p4est_connectivity_destroy(conn);
  }
  Forest(const Forest&) = delete;
  Forest& operator=(const Forest&) = delete;
  /// This rank's quadrants in order (one tree).
  [[nodiscard]] std::vector<irr::Cell<2>> local_cells() const {
    std::vector<irr::Cell<2>> out;
    for (p4est_topidx_t tr = p4->first_local_tree; tr <= p4->last_local_tree; ++tr) {
      auto* tree = p4est_tree_array_index(p4->trees, tr);
      for (std::size_t k = 0; k < tree->quadrants.elem_count; ++k)
        out.push_back(cell_of(*p4est_quadrant_array_index(&tree->quadrants, k)));
    }
    return out;
  }
};
#endif

// ---- the run -------------------------------------------------------------------------------------

struct CollectRow {
  std::string what;
  Timing t;
  std::vector<double> collection_wall;  // stats.seconds, slowest rank
  irr::GhostStats totals;
  irr::GhostPhase values;
  std::uint64_t ghosts = 0;
};

template <class C>
int run(const mpi::communicator& world, const Config& cfg) {
  constexpr bool morton = std::is_same_v<C, irr::curve::Morton<2>>;
  const int me = world.rank(), p = world.size();
  const bool root = me == 0;
  const double tm0 = now_s();
  const cm::Mesh mesh = cm::make_mesh(cfg.level);
  const cm::Condition condition(mesh);
  const double tm1 = now_s();
  auto make_domain = [&] {
    auto d = std::make_unique<Domain<C>>(world, irr::Box<2>{{0, 0}, {1, 1}}, condition);
    cm::fill(*d, mesh);
    return d;
  };
  const double tb0 = now_s();
  auto dom = make_domain();
  const double tb1 = now_s();
  const mpi::communicator comm(dom->comm(), mpi::comm_duplicate);  // for the direct strategy calls
  const std::uint64_t leaves = dom->global_leaf_count();
  std::vector<std::size_t> ours_counts;
  mpi::all_gather(world, dom->local_leaf_count(), ours_counts);
  if (leaves != mesh.size()) {
    if (root) std::fprintf(stderr, "bench_ghost: MISMATCH: the domain has %llu leaves, the mesh %zu\n", ull(leaves), mesh.size());
    g_failed = true;
  }
  if (root) {
    std::printf("\n## bench_ghost%s: circle mesh, levels %d..%d, %zu leaves%s, %d ranks, %s curve\n\n",
                cfg.quick ? " --quick" : "", cm::min_level, cfg.level, mesh.size(),
                cfg.level == 14 ? (mesh.size() == 244054 ? " (= the reference 244,054)" : " (NOT the reference 244,054)") : "",
                p, morton ? "Morton (p4est's z-order)" : "Hilbert");
    std::string per;
    for (auto c : ours_counts) per += (per.empty() ? "" : " / ") + std::to_string(c);
    std::printf("Leaves per rank (ours): %s. 16 bytes per leaf (one element of 2 doubles at its centre). "
                "Times: medians of %d after %d warm-up (exchanges: %d), slowest rank; CPU = CLOCK_THREAD_CPUTIME_ID "
                "(includes MPI's polling while waiting). Mesh %.2f s, domain build %.2f s (not timed below).\n",
                per.c_str(), cfg.reps, cfg.warmups, cfg.exchange_reps, tm1 - tm0, tb1 - tb0);
    std::fflush(stdout);
  }

  // ---- 1. construction and exchange against p4est ------------------------------------------------
  const irr::GhostOptions corner{.contact = irr::Contact::corner};
  std::vector<CollectRow> rows;
  for (const char* name : strategy_names) {
    CollectRow row;
    row.what = std::string("ours ") + name + " collection";
    irr::GhostLayer<C> layer;
    for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
      irr::ExtensionCache<C> cache;  // fresh: the extension is paid every time
      time_once(world, row.t, rep >= cfg.warmups, [&] { layer = collect(comm, *dom, corner, irr::ghost::ByName(name), cache); });
      if (rep >= cfg.warmups) row.collection_wall.push_back(max_over(world, layer.stats().seconds));
    }
    row.totals = irr::all_reduce_sum(world, layer.stats());
    irr::GhostPhase v = values_of(layer, dom->local_tree());
    std::uint64_t vv[3] = {v.messages, v.bytes, layer.size()}, gg[3];
    MPI_Allreduce(vv, gg, 3, MPI_UINT64_T, MPI_SUM, world);
    row.values = {gg[0], gg[1]};
    row.ghosts = gg[2];
    rows.push_back(std::move(row));
  }
  // The full domain call (collection + first value fill) on fresh domains (the IFP cache lives in
  // the domain), and then the exchange on the IFP layer.
  std::vector<CollectRow> full;
  std::unique_ptr<Domain<C>> ifp_dom;
  for (const char* name : strategy_names) {
    CollectRow row;
    row.what = std::string("ours ") + name + " collect_ghosts (incl. value fill)";
    for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
      auto d = make_domain();
      const irr::GhostStats* s = nullptr;
      time_once(world, row.t, rep >= cfg.warmups,
                [&] { s = &d->template collect_ghosts<Moore>(corner, irr::ghost::ByName(name)); });
      row.totals = irr::all_reduce_sum(world, *s);
      row.ghosts = 0;
      std::uint64_t n = d->ghosts().size();
      MPI_Allreduce(&n, &row.ghosts, 1, MPI_UINT64_T, MPI_SUM, world);
      if (std::strcmp(name, "IFP") == 0 && rep + 1 == cfg.warmups + cfg.reps) ifp_dom = std::move(d);
    }
    full.push_back(std::move(row));
  }
  // Values: every ghost element must be its leaf's centre.
  std::uint64_t bad_values = 0;
  {
    Domain<C>& d = *ifp_dom;
    for (std::size_t g = 0; g < d.ghosts().size(); ++g) {
      const auto gl = d.ghost(g);
      const auto c = gl.cell;
      const double h = std::ldexp(1.0, -c.level);
      const std::array<double, 2> want{(static_cast<double>(c.anchor[0]) + 0.5) * h, (static_cast<double>(c.anchor[1]) + 0.5) * h};
      if (gl.elements.size() != 1 || gl.elements[0].position != want) ++bad_values;
    }
  }
  Timing ours_exchange;
  for (int rep = 0; rep < 2 * cfg.warmups + cfg.exchange_reps; ++rep)
    time_once(world, ours_exchange, rep >= 2 * cfg.warmups, [&] { (void)ifp_dom->exchange_ghosts(); });

  // Plain MPI: the same byte counts to the same partners, contiguous buffers, Irecv + Isend + Waitall.
  Timing plain;
  {
    const auto& g = ifp_dom->ghosts();
    const auto& lv = ifp_dom->local_tree();
    std::vector<std::vector<cm::Element>> out(g.send_ranks().size()), in(g.recv_ranks().size());
    for (std::size_t k = 0; k < out.size(); ++k) {
      std::size_t n = 0;
      for (std::size_t i : g.send_leaves(k)) n += lv.counts()[i];
      out[k].assign(n, cm::Element{{1.0, 2.0}});
    }
    for (std::size_t k = 0; k < in.size(); ++k) {
      std::size_t n = 0;
      for (std::size_t i : g.recv_ghosts(k)) n += g.counts()[i];
      in[k].resize(n);
    }
    std::vector<MPI_Request> req;
    for (int rep = 0; rep < 2 * cfg.warmups + cfg.exchange_reps; ++rep)
      time_once(world, plain, rep >= 2 * cfg.warmups, [&] {
        req.clear();
        for (std::size_t k = 0; k < in.size(); ++k) {
          if (in[k].empty()) continue;
          req.emplace_back();
          MPI_Irecv(in[k].data(), static_cast<int>(in[k].size() * sizeof(cm::Element)), MPI_BYTE, g.recv_ranks()[k], 7,
                    comm, &req.back());
        }
        for (std::size_t k = 0; k < out.size(); ++k) {
          if (out[k].empty()) continue;
          req.emplace_back();
          MPI_Isend(out[k].data(), static_cast<int>(out[k].size() * sizeof(cm::Element)), MPI_BYTE, g.send_ranks()[k], 7,
                    comm, &req.back());
        }
        MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE);
      });
  }

  // p4est.
  bool have_p4est = false;
  Timing p4_new, p4_exchange;
  std::uint64_t p4_ghosts = 0, p4_leaves = 0, ghost_set_diff = 0, p4_bad_values = 0;
  bool same_partition = false;
  std::size_t quadrant_size = 0;
#ifdef IRREGULAR_HAVE_P4EST
  if constexpr (morton) {
    have_p4est = true;
    quadrant_size = sizeof(p4est_quadrant_t);
    Forest f(world, cfg.level);
    p4_leaves = static_cast<std::uint64_t>(f.p4->global_num_quadrants);
    // The same leaves on the same ranks?
    const auto mine = f.local_cells();
    std::uint64_t differ = mine.size() != dom->local_leaf_count();
    for (std::size_t i = 0; !differ && i < mine.size(); ++i) differ = !(mine[i] == dom->local_tree().cell(i));
    std::uint64_t any = 0;
    MPI_Allreduce(&differ, &any, 1, MPI_UINT64_T, MPI_SUM, world);
    same_partition = any == 0;
    p4est_ghost_t* ghost = nullptr;
    for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
      if (ghost) p4est_ghost_destroy(ghost);
      time_once(world, p4_new, rep >= cfg.warmups, [&] { ghost = p4est_ghost_new(f.p4, P4EST_CONNECT_FULL); });
    }
    std::uint64_t n = ghost->ghosts.elem_count;
    MPI_Allreduce(&n, &p4_ghosts, 1, MPI_UINT64_T, MPI_SUM, world);
    // The ghost sets, rank by rank, against our IFP layer.
    {
      std::vector<std::uint64_t> a, b;
      for (std::size_t k = 0; k < ghost->ghosts.elem_count; ++k)
        a.push_back(cm::cell_key(cell_of(*p4est_quadrant_array_index(&ghost->ghosts, k))));
      for (std::size_t g = 0; g < ifp_dom->ghosts().size(); ++g) b.push_back(cm::cell_key(ifp_dom->ghosts().cell(g)));
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      std::vector<std::uint64_t> diff;
      std::set_symmetric_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(diff));
      std::uint64_t d = diff.size();
      MPI_Allreduce(&d, &ghost_set_diff, 1, MPI_UINT64_T, MPI_SUM, world);
    }
    std::vector<cm::Element> data(ghost->ghosts.elem_count);
    for (int rep = 0; rep < 2 * cfg.warmups + cfg.exchange_reps; ++rep)
      time_once(world, p4_exchange, rep >= 2 * cfg.warmups,
                [&] { p4est_ghost_exchange_data(f.p4, ghost, data.data()); });
    std::uint64_t bad = 0;
    for (std::size_t k = 0; k < data.size(); ++k) {
      const auto c = cell_of(*p4est_quadrant_array_index(&ghost->ghosts, k));
      const double h = std::ldexp(1.0, -c.level);
      const std::array<double, 2> want{(static_cast<double>(c.anchor[0]) + 0.5) * h, (static_cast<double>(c.anchor[1]) + 0.5) * h};
      bad += data[k].position != want;
    }
    MPI_Allreduce(&bad, &p4_bad_values, 1, MPI_UINT64_T, MPI_SUM, world);
    p4est_ghost_destroy(ghost);
  }
#endif
  {
    std::uint64_t b = bad_values, all = 0;
    MPI_Allreduce(&b, &all, 1, MPI_UINT64_T, MPI_SUM, world);
    bad_values = all;
  }
  if (root) {
    std::printf("\n### 1. Ghost layer construction and value exchange, Contact::corner (p4est: %s)\n\n",
                have_p4est ? (same_partition ? "installed; the same leaves on the same ranks as ours"
                                             : "installed; its partition DIFFERS from ours")
                           : (morton ? "not installed: our side only" : "not compared on the Hilbert curve"));
    std::printf("| what | ghosts (sum over ranks) | wall (ms) | CPU (ms) | collection wall (ms, excl. fill) | "
                "p2p messages | p2p bytes | collectives | collective bytes | vs p4est_ghost_new (wall / CPU) |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    auto line = [&](const CollectRow& r, bool coll, const Timing* ref) {
      std::printf("| %s | %llu | %.2f | %.2f | %s | %llu | %llu | %llu | %llu | %s |\n", r.what.c_str(), ull(r.ghosts),
                  r.t.wall_ms(), r.t.cpu_ms(), coll ? fmt(median(r.collection_wall) * 1e3).c_str() : "-",
                  ull(r.t.traffic.p2p_messages), ull(r.t.traffic.p2p_bytes), ull(r.t.traffic.collectives),
                  ull(r.t.traffic.collective_bytes),
                  ref ? (ratio(r.t.wall_ms(), ref->wall_ms()) + " / " + ratio(r.t.cpu_ms(), ref->cpu_ms())).c_str() : "-");
    };
    for (const auto& r : rows) line(r, true, have_p4est ? &p4_new : nullptr);
    for (const auto& r : full) line(r, false, nullptr);
    if (have_p4est) {
      std::printf("| p4est_ghost_new(FULL) | %llu | %.2f | %.2f | - | %llu | %llu | %llu | %llu | 1 |\n", ull(p4_ghosts),
                  p4_new.wall_ms(), p4_new.cpu_ms(), ull(p4_new.traffic.p2p_messages), ull(p4_new.traffic.p2p_bytes),
                  ull(p4_new.traffic.collectives), ull(p4_new.traffic.collective_bytes));
      const double p4_full_wall = p4_new.wall_ms() + p4_exchange.wall_ms(), p4_full_cpu = p4_new.cpu_ms() + p4_exchange.cpu_ms();
      std::printf("| p4est_ghost_new + p4est_ghost_exchange_data (sum of medians) | %llu | %.2f | %.2f | - | | | | | "
                  "ours IFP collect_ghosts: %s / %s |\n",
                  ull(p4_ghosts), p4_full_wall, p4_full_cpu, ratio(full[2].t.wall_ms(), p4_full_wall).c_str(),
                  ratio(full[2].t.cpu_ms(), p4_full_cpu).c_str());
    }
    std::printf("\nValue exchange (16 bytes per ghost), %d repeats:\n\n"
                "| what | wall (us) | CPU (us) | p2p messages | p2p bytes | collectives | MB/s (wall) | vs plain MPI (wall) | vs p4est (wall / CPU) |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
                cfg.exchange_reps);
    auto xline = [&](const char* what, const Timing& t) {
      const double mbs = t.wall_ms() > 0 ? static_cast<double>(t.traffic.p2p_bytes) / (t.wall_ms() * 1e3) : 0;
      std::printf("| %s | %.1f | %.1f | %llu | %llu | %llu | %.0f | %s | %s |\n", what, 1e3 * t.wall_ms(), 1e3 * t.cpu_ms(),
                  ull(t.traffic.p2p_messages), ull(t.traffic.p2p_bytes), ull(t.traffic.collectives), mbs,
                  pct(plain.wall_ms(), t.wall_ms()).c_str(),
                  have_p4est ? (ratio(t.wall_ms(), p4_exchange.wall_ms()) + " / " + ratio(t.cpu_ms(), p4_exchange.cpu_ms())).c_str() : "-");
    };
    xline("ours exchange_ghosts() (IFP layer)", ours_exchange);
    if (have_p4est) xline("p4est_ghost_exchange_data", p4_exchange);
    xline("plain MPI Irecv/Isend, same bytes and partners", plain);
    std::printf("\nExchange throughput as a share of plain MPI (target >= 80%%): ours %s%s.\n",
                pct(plain.wall_ms(), ours_exchange.wall_ms()).c_str(),
                have_p4est ? (", p4est " + pct(plain.wall_ms(), p4_exchange.wall_ms())).c_str() : "");
    if (have_p4est) {
      // Bytes: ours = collection records + values; p4est = every byte it passed to MPI.
      const auto& ifp = rows[2];
      const double ours_bytes = static_cast<double>(ifp.t.traffic.p2p_bytes + ifp.t.traffic.collective_bytes +
                                                    ours_exchange.traffic.p2p_bytes);
      const double p4_bytes = static_cast<double>(p4_new.traffic.p2p_bytes + p4_new.traffic.collective_bytes +
                                                  p4_exchange.traffic.p2p_bytes);
      std::printf("\nBytes (PMPI, all ranks, point-to-point + collective send buffers): ours IFP collection %llu + "
                  "exchange %llu = %.0f; p4est ghost_new %llu + exchange %llu = %.0f (sizeof(p4est_quadrant_t) = %zu): "
                  "ratio %s (target <= 1.1x). Collection alone %s, exchange alone %s.\n",
                  ull(ifp.t.traffic.p2p_bytes + ifp.t.traffic.collective_bytes), ull(ours_exchange.traffic.p2p_bytes),
                  ours_bytes, ull(p4_new.traffic.p2p_bytes + p4_new.traffic.collective_bytes),
                  ull(p4_exchange.traffic.p2p_bytes), p4_bytes, quadrant_size, ratio(ours_bytes, p4_bytes).c_str(),
                  ratio(static_cast<double>(ifp.t.traffic.p2p_bytes + ifp.t.traffic.collective_bytes),
                        static_cast<double>(p4_new.traffic.p2p_bytes + p4_new.traffic.collective_bytes)).c_str(),
                  ratio(static_cast<double>(ours_exchange.traffic.p2p_bytes), static_cast<double>(p4_exchange.traffic.p2p_bytes)).c_str());
      std::printf("Targets: construction (IFP collection wall) %s of p4est_ghost_new (<= 1.0x: %s); exchange %s (<= 1.0x: %s).\n",
                  ratio(rows[2].t.wall_ms(), p4_new.wall_ms()).c_str(), rows[2].t.wall_ms() <= p4_new.wall_ms() ? "met" : "NOT met",
                  ratio(ours_exchange.wall_ms(), p4_exchange.wall_ms()).c_str(),
                  ours_exchange.wall_ms() <= p4_exchange.wall_ms() ? "met" : "NOT met");
    }
    std::fflush(stdout);
  }
  // Ghost counts: RA and IFP deliver exactly the touching remote leaves, i.e. p4est's ghosts.
  if (have_p4est && p4_leaves != mesh.size()) {
    if (root) std::fprintf(stderr, "bench_ghost: MISMATCH: p4est has %llu quadrants, the mesh %zu\n", ull(p4_leaves), mesh.size());
    g_failed = true;
  }
  if (have_p4est && same_partition) {
    // IFP: its layer is exactly the touching remote leaves. RA answers whole requested spaces
    // (the holder does not know the reader's cell), so under Contact::corner its layer is a
    // superset that reports the surplus as useless: its useful ghosts must equal p4est's.
    for (int k : {0, 1, 2}) {
      const std::uint64_t ours_useful = rows[k].ghosts - rows[k].totals.leaves_useless;
      const std::uint64_t domain_useful = full[k].ghosts - full[k].totals.leaves_useless;
      const bool exact = k == 2;
      if (ours_useful != p4_ghosts || domain_useful != p4_ghosts || (exact && rows[k].ghosts != p4_ghosts)) {
        if (root)
          std::fprintf(stderr, "bench_ghost: GHOST COUNT MISMATCH: ours %s %llu ghosts, %llu useful (domain call %llu), p4est %llu\n",
                       strategy_names[k], ull(rows[k].ghosts), ull(ours_useful), ull(domain_useful), ull(p4_ghosts));
        g_failed = true;
      }
    }
    if (ghost_set_diff != 0) {
      if (root) std::fprintf(stderr, "bench_ghost: GHOST SET MISMATCH: %llu cells differ between ours (IFP) and p4est\n", ull(ghost_set_diff));
      g_failed = true;
    }
  } else if (have_p4est && root) {
    std::fprintf(stderr, "bench_ghost: warning: p4est's partition differs from ours at %d ranks; ghost counts not compared\n", p);
  }
  if (bad_values != 0 || p4_bad_values != 0) {
    if (root) std::fprintf(stderr, "bench_ghost: VALUE MISMATCH: ours %llu, p4est %llu ghosts with a wrong centre\n",
                           ull(bad_values), ull(p4_bad_values));
    g_failed = true;
  }
  if (root) {
    std::printf("\nGhosts (layer size / useful = read by a local leaf in corner contact): ours RA %llu / %llu, FP %llu / %llu, "
                "IFP %llu / %llu; p4est %s; ghost cells differing from p4est's (IFP, per rank): %s.\n",
                ull(rows[0].ghosts), ull(rows[0].ghosts - rows[0].totals.leaves_useless), ull(rows[1].ghosts),
                ull(rows[1].ghosts - rows[1].totals.leaves_useless), ull(rows[2].ghosts),
                ull(rows[2].ghosts - rows[2].totals.leaves_useless),
                have_p4est ? std::to_string(p4_ghosts).c_str() : "-",
                have_p4est ? std::to_string(ghost_set_diff).c_str() : "-");
    std::fflush(stdout);
  }

  // ---- 2. the papers' comparison ------------------------------------------------------------------
  if (root)
    std::printf("\n### 2. Strategies compared (totals over %d ranks; collection = extension + prevention + request + "
                "answer; FP and IFP as a share of RA)\n\n"
                "| contact | b | strategy | extension msg / bytes | prevention msg / bytes | request msg / bytes | "
                "answer msg / bytes | collection msg / bytes | values msg / bytes | ghosts | leaves sent | useless | "
                "msg vs RA | bytes vs RA | (collection + values) bytes vs RA |\n"
                "|---|---:|---|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|\n",
                p);
  for (const irr::Contact contact : {irr::Contact::corner, irr::Contact::stencil})
    for (const std::size_t b : {std::size_t{0}, std::size_t{50}}) {
      irr::GhostOptions opt{.contact = contact, .merge = {.buffer_entries = b}};
      irr::GhostStats ra{};
      irr::GhostPhase ra_values{};
      irr::ExtensionCache<C> kept;  // for the second IFP collection
      for (int k = 0; k < 4; ++k) {
        const char* name = strategy_names[std::min(k, 2)];
        irr::ExtensionCache<C> fresh;
        auto layer = collect(comm, *dom, opt, irr::ghost::ByName(name), k >= 2 ? kept : fresh);
        const auto s = irr::all_reduce_sum(world, layer.stats());
        irr::GhostPhase v = values_of(layer, dom->local_tree());
        std::uint64_t vv[3] = {v.messages, v.bytes, layer.size()}, gg[3];
        MPI_Allreduce(vv, gg, 3, MPI_UINT64_T, MPI_SUM, world);
        if (k == 0) ra = s, ra_values = {gg[0], gg[1]};
        if (root) {
          auto ph = [](const irr::GhostPhase& x) { return std::to_string(x.messages) + " / " + std::to_string(x.bytes); };
          std::printf("| %s | %zu | %s%s | %s | %s | %s | %s | %llu / %llu | %llu / %llu | %llu | %llu | %llu | %s | %s | %s |\n",
                      contact == irr::Contact::corner ? "corner" : "stencil", b, name, k == 3 ? " (extension cached)" : "",
                      ph(s.extension).c_str(), ph(s.prevention).c_str(), ph(s.request).c_str(), ph(s.answer).c_str(),
                      ull(s.messages()), ull(s.bytes()), ull(gg[0]), ull(gg[1]), ull(gg[2]), ull(s.leaves_sent),
                      ull(s.leaves_useless), pct(static_cast<double>(s.messages()), static_cast<double>(ra.messages())).c_str(),
                      pct(static_cast<double>(s.bytes()), static_cast<double>(ra.bytes())).c_str(),
                      pct(static_cast<double>(s.bytes() + gg[1]), static_cast<double>(ra.bytes() + ra_values.bytes)).c_str());
        }
      }
    }
  if (root) std::fflush(stdout);

  // ---- 3. merge-buffer sweep (IFP, fresh extension) -----------------------------------------------
  if (root)
    std::printf("\n### 3. Merge buffer b and termination, IFP collection with a fresh extension, Contact::corner "
                "(medians of %d after %d warm-up; messages: totals over ranks)\n\n"
                "| b | termination | wall (ms) | CPU (ms) | collection messages (stats) | p2p sends (PMPI, incl. termination) | "
                "collectives (PMPI) | bytes (stats) |\n|---:|---|---:|---:|---:|---:|---:|---:|\n",
                cfg.reps, cfg.warmups);
  for (const auto term : {irr::mpi::Termination::nbx, irr::mpi::Termination::messages})
    for (const std::size_t b : {std::size_t{1}, std::size_t{15}, std::size_t{50}, std::size_t{0}}) {
      irr::GhostOptions opt{.contact = irr::Contact::corner, .merge = {.buffer_entries = b, .termination = term}};
      Timing t;
      irr::GhostLayer<C> layer;
      for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
        irr::ExtensionCache<C> cache;
        time_once(world, t, rep >= cfg.warmups,
                  [&] { layer = collect(comm, *dom, opt, irr::ghost::InformedFaultPrevention{}, cache); });
      }
      const auto s = irr::all_reduce_sum(world, layer.stats());
      if (root)
        std::printf("| %s | %s | %.2f | %.2f | %llu | %llu | %llu | %llu |\n", b == 0 ? "0 (unbounded)" : std::to_string(b).c_str(),
                    term == irr::mpi::Termination::nbx ? "nbx" : "messages", t.wall_ms(), t.cpu_ms(), ull(s.messages()),
                    ull(t.traffic.p2p_messages), ull(t.traffic.collectives), ull(s.bytes()));
    }
  if (root) std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  mpi::communicator world;
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) cfg.quick = true;
    else if (std::strcmp(argv[i], "--hilbert") == 0) cfg.hilbert = true;
    else if (std::strcmp(argv[i], "--level") == 0 && i + 1 < argc) cfg.level = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) cfg.reps = std::atoi(argv[++i]);
    else {
      if (world.rank() == 0) std::fprintf(stderr, "usage: bench_ghost [--quick] [--level L] [--reps N] [--hilbert]\n");
      return 2;
    }
  }
  if (cfg.quick) {
    cfg.level = 9;
    cfg.warmups = 1;
    cfg.reps = 1;
    cfg.exchange_reps = 3;
  }
  if (cfg.level < cm::min_level || cfg.level > 24) {
    if (world.rank() == 0) std::fprintf(stderr, "bench_ghost: --level must lie in [%d, 24]\n", cm::min_level);
    return 2;
  }
#ifdef IRREGULAR_HAVE_P4EST
  sc_init(MPI_Comm(world), 0, 0, nullptr, SC_LP_ERROR);
  p4est_init(nullptr, SC_LP_ERROR);
#endif
  if (world.rank() == 0) {
#ifdef IRREGULAR_HAVE_P4EST
    std::printf("p4est: installed (side by side).\n");
#else
    std::printf("p4est: not installed (its rows are skipped; our side runs).\n");
#endif
  }
  if (cfg.hilbert) run<irr::curve::Hilbert<2>>(world, cfg);
  else run<irr::curve::Morton<2>>(world, cfg);
#ifdef IRREGULAR_HAVE_P4EST
  sc_finalize();
#endif
  int failed = g_failed ? 1 : 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, world);
  if (any && world.rank() == 0) std::fprintf(stderr, "bench_ghost: FAILED (see the mismatch above)\n");
  return any;
}
