// How messages, bytes and collective calls grow with the number of ranks p, per rank and per
// phase of IrregularDomain::build(), move_elements() and rebalance(), counted exactly by a PMPI
// interposition layer compiled into this executable (bench/detail/pmpi_counters.hpp): every
// MPI call of the library, of Boost.MPI (headers and libboost_mpi.so) and of this program is
// counted and forwarded to PMPI_*. A sanity check at start-up runs a known call sequence and
// fails the program when the counters do not see it exactly.
//
// The domain exposes phase times (last_profile) but no counters per phase, so build() is
// reproduced here with the library's public pieces, reading the counters between the steps
// (exactly what domain.hpp does, in the same order, with the same agreements):
//   sort      agree(rekey) + sample_sort                            (distributed_sort.hpp)
//   leaves    agree(construct_leaves on the sorted runs) + settle_on_map + agree(loads)
//   partition SfcBlocking::partition                                 (sfc_blocking.hpp)
//   migration settle_on_map on the new map + all_reduce of the migration counters
// move_elements (every point squeezed into the strip x in [0.1, 0.3], so the load piles up on a
// few ranks) and rebalance (decide = agree_remap_options + plan_remap; partition + estimate_remap;
// migration) likewise. The
// same operations run through an IrregularDomain on the same data; the table prints both, and
// the program checks that the sum of the phases equals the domain's whole call exactly (calls,
// messages, bytes on every rank; polls such as MPI_Improbe/MPI_Test vary with timing and are
// not compared).
//
// Each launch measures one p (weak scaling: --n points per rank, half uniform, half in three
// Gaussian clusters). One row per (operation, phase): max and mean over the ranks.
//   for n in 1 2 4 8 16 32 64; do mpiexec --oversubscribe -n $n bench_scale --no-header; done
// (print the header once: drop --no-header on the first run; with --csv the same for CSV.)
// Oversubscribed ranks share cores: the times are only indicative; the counts are exact.
// --greedy: SfcBlocking{.cut = BlockingCut::greedy} instead of the default optimal cut.
// --distributed: SfcBlocking{.max_gathered = 0}, the optimal cut's windows never meet on rank 0.
// Usage: mpiexec -n P bench_scale [--quick] [--csv] [--no-header] [--greedy] [--distributed] [--n N] [--reps R]
#include "detail/pmpi_counters.hpp"

#include <irregular/irregular.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <algorithm>
#include <numeric>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace {

namespace irr = irregular;
namespace bmpi = boost::mpi;
namespace pc = pmpi_counters;

struct Pt {
  std::array<double, 2> position;
  double mass;
};

using C = irr::curve::Hilbert<2>;
using I = C::index_type;
using Metric = irr::load::ElementCount;
using Policy = irr::partitioner::SfcBlocking;
using Map = irr::SegmentMap<C>;
using Domain = irr::IrregularDomain<Pt, irr::stencil::Moore<2>, C, Metric, Policy>;
constexpr std::size_t leaf_capacity = 16;  // refine::max_elements
constexpr double threshold = 0.05;         // rebalance threshold
// The domain's tags (domain.hpp): same tags here, on the pipeline's own duplicate communicator.
constexpr int tag_sort = 11, tag_migrate = 12, tag_move = 13;

// Half uniform, half in three Gaussian clusters; seeded by rank (any distribution will do:
// build() sorts them).
std::vector<Pt> make(std::size_t n, int rank) {
  std::mt19937_64 rng(1000 + static_cast<std::uint64_t>(rank));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 0.05);
  const double c[3][2] = {{0.25, 0.3}, {0.7, 0.75}, {0.6, 0.2}};
  std::vector<Pt> out(n);
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < 2; ++d)
      out[i].position[d] = std::clamp(i % 2 ? c[i % 3][d] + g(rng) : u(rng), 0.0, 1.0 - 1e-12);
  for (auto& p : out) p.mass = 1;
  return out;
}
void squeeze(Pt& p) { p.position[0] = 0.1 + 0.2 * p.position[0]; }

// ---- phase recording -----------------------------------------------------------------------

struct Record {
  std::string op, how, phase;  // how: "phases" (reproduced) or "domain" (one call)
  pc::Counters c;
  double seconds = 0;
};

class Recorder {
 public:
  explicit Recorder(MPI_Comm comm) : comm_(comm) {}
  void start() {
    PMPI_Barrier(comm_);  // not counted: separates the phases in time
    at_ = pc::totals;
    t0_ = std::chrono::steady_clock::now();
  }
  void stop(const char* op, const char* how, const char* phase) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    records.push_back({op, how, phase, pc::totals - at_, s});
  }
  std::vector<Record> records;

 private:
  MPI_Comm comm_;
  pc::Counters at_;
  std::chrono::steady_clock::time_point t0_;
};

// ---- build / move / rebalance from the library's public pieces, as domain.hpp composes them --

class Pipeline {
 public:
  Pipeline(const bmpi::communicator& world, Recorder& rec, Policy policy)
      : comm_(world, bmpi::comm_duplicate), store_(irr::Box<2>{{0, 0}, {1, 1}}), map_(comm_.size()), rec_(rec),
        policy_(policy) {}

  void insert(const std::vector<Pt>& pts) { store_.pending.insert(store_.pending.end(), pts.begin(), pts.end()); }

  irr::mpi::ExchangeStats sort_stats;
  irr::mpi::MigrationCounters migration_global;

  void build() {
    migration_ = {};
    rec_.start();
    auto& st = store_;
    st.elements.insert(st.elements.end(), st.pending.begin(), st.pending.end());
    st.pending.clear();
    irr::mpi::agree(comm_, [&] { st.rekey(); });
    sort_stats = {};
    const auto bounds = sort(st);
    rec_.stop("build", "phases", "sort");

    rec_.start();
    const Map sorted(bounds);
    construct(sorted);
    (void)settle_on(sorted);
    rec_.stop("build", "phases", "leaves");
    repartition("build", nullptr);
  }

  template <class Update>
  void move_elements(Update&& update) {
    rec_.start();
    auto moved = store_.elements;
    irr::mpi::agree(comm_, [&] {
      for (auto& e : moved) update(e);
      if (auto bad = store_.first_invalid(std::span<const Pt>(moved), "move_elements", comm_.rank()))
        throw irr::out_of_domain(*bad);
    });
    store_.elements = std::move(moved);
    migration_ = {};
    store_.rekey();
    irr::LocalLeaves<C> none;
    std::vector<double> no_payload;
    migration_ += irr::place(comm_, map_, none, no_payload, store_.elements, store_.keys, store_.key_fn(), tag_move);
    construct(map_);
    map_ = settle_on(map_);
    migration_global = irr::mpi::all_reduce_sum(comm_, migration_);
    rec_.stop("move", "phases", "all");
  }

  bool rebalance() {
    rec_.start();
    // The options (threshold among them) agreed in one all_reduce, every rank's state gathered
    // in one all_gather: the plan says the unbalance.
    const irr::RebalanceOptions opt{.threshold = threshold};
    irr::agree_remap_options(comm_, opt, true, false, "bench_scale");
    double mine = 0;
    for (double l : loads_) mine += l;
    const auto plan = irr::plan_remap(comm_, opt, {mine, static_cast<double>(store_.elements.size()), 0, 0}, false);
    migration_ = {};
    rec_.stop("rebalance", "phases", "decide");
    if (plan.unbalance <= threshold) return false;
    rec_.start();
    auto next = policy_.partition<C>(comm_, irr::LeafChain<C>{leaves_, loads_}, &map_);
    // What the remap would move, estimated from the cuts (one all_reduce): the decision record.
    (void)irr::estimate_remap(comm_, next, plan.order, leaves_, loads_, std::span<const I>(store_.keys), sizeof(Pt) + sizeof(I),
                              std::accumulate(loads_.begin(), loads_.end(), 0.0));
    rec_.stop("rebalance", "phases", "partition");
    rec_.start();
    map_ = settle_on(next);
    migration_global = irr::mpi::all_reduce_sum(comm_, migration_);
    rec_.stop("rebalance", "phases", "migration");
    return true;
  }

  [[nodiscard]] std::size_t leaf_count() const { return leaves_.size(); }
  [[nodiscard]] std::size_t element_count() const { return store_.elements.size(); }

 private:
  std::vector<I> sort(irr::ElementStore<Pt, C>& st) {
    return irr::sample_sort(comm_, st.elements, st.keys, Map::domain_end(), st.key_fn(), tag_sort, &sort_stats);
  }

  void repartition(const char* op, const Map* current) {
    rec_.start();
    auto next = policy_.partition<C>(comm_, irr::LeafChain<C>{leaves_, loads_}, current);
    rec_.stop(op, "phases", "partition");
    rec_.start();
    map_ = settle_on(next);
    migration_global = irr::mpi::all_reduce_sum(comm_, migration_);
    rec_.stop(op, "phases", "migration");
  }

  Map settle_on(const Map& map) {
    std::vector<double> payload;  // non-measured loads do not travel: they are estimated again
    Map settled = irr::settle_on_map(comm_, map, leaves_, payload, store_.elements, store_.keys, store_.key_fn(),
                                     tag_migrate, migration_);
    store_.index_leaves(leaves_);
    irr::mpi::agree(comm_, [&] {
      loads_.resize(leaves_.size());
      for (std::size_t i = 0; i < leaves_.size(); ++i)
        loads_[i] = Metric{}(leaves_.cell(i), static_cast<std::size_t>(leaves_.counts()[i]));
    });
    return settled;
  }

  void construct(const Map& map) {
    irr::mpi::agree(comm_, [&] {
      leaves_ = irr::construct_leaves(comm_, map, std::span<const I>(store_.keys), irr::refine::max_elements(leaf_capacity),
                                      std::size_t{1} << 40);
    });
  }

  bmpi::communicator comm_;
  irr::ElementStore<Pt, C> store_;
  Map map_;
  irr::LocalLeaves<C> leaves_;
  std::vector<double> loads_;
  irr::mpi::MigrationCounters migration_{};
  Recorder& rec_;
  Policy policy_;
};

// ---- the sanity check of the interposition layer --------------------------------------------

int sanity_check(const bmpi::communicator& w) {
  const int p = w.size(), r = w.rank();
  const pc::Counters before = pc::totals;
  double a[3] = {1, 2, 3}, b[3];
  bmpi::all_reduce(w, a, 3, b, std::plus<double>());  // header template -> MPI_Allreduce
  std::vector<int> ranks;
  bmpi::all_gather(w, r, ranks);  // MPI_Allgather
  std::vector<int> mine(static_cast<std::size_t>(r) + 1, r);
  std::vector<std::vector<int>> vecs;
  bmpi::all_gather(w, mine, vecs);  // serialized: MPI_Allgather of sizes + MPI_Allgatherv
  w.barrier();                      // inside libboost_mpi.so -> MPI_Barrier
  if (p > 1) {
    int v = r, got = -1;
    MPI_Request req;
    MPI_Isend(&v, 1, MPI_INT, (r + 1) % p, 99, MPI_Comm(w), &req);
    MPI_Recv(&got, 1, MPI_INT, (r + p - 1) % p, 99, MPI_Comm(w), MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  const pc::Counters d = pc::totals - before;
  std::array<std::uint64_t, pc::Fn::count> want{};
  want[pc::Allreduce] = 1;
  want[pc::Allgather] = 2;
  want[pc::Allgatherv] = 1;
  want[pc::Barrier] = 1;
  if (p > 1) want[pc::Isend] = want[pc::Recv] = want[pc::Wait] = 1;
  std::string bad;
  for (int f = 0; f < pc::Fn::count; ++f)
    if (d.calls[f] != want[f]) bad += std::string(" ") + pc::names[f] + "=" + std::to_string(d.calls[f]);
  if (d.out[pc::Allreduce] != 24 || d.in[pc::Allreduce] != 24) bad += " Allreduce bytes";
  if (d.in[pc::Allgather] != 4u * static_cast<unsigned>(p) * 2u) bad += " Allgather bytes";
  if (p > 1 && (d.out[pc::Isend] != 4 || d.in[pc::Recv] != 4)) bad += " point-to-point bytes";
  int failed = bad.empty() ? 0 : 1, any = 0;
  pc::enabled = false;
  PMPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_Comm(w));
  pc::enabled = true;
  if (failed) std::fprintf(stderr, "bench_scale: PMPI sanity check failed on rank %d:%s\n", r, bad.c_str());
  return any;
}

// ---- aggregation ------------------------------------------------------------------------------

// Per rank and record: the numbers gathered to rank 0.
enum Stat : int { msgs_sent, p2p_out, msgs_recv, p2p_in, coll_calls, coll_out, coll_in, polls, usec, nstats };
constexpr int fields = int{nstats} + 2 * int{pc::Fn::count};  // then calls, then bytes in+out, per MPI function

std::vector<std::uint64_t> flatten(const Record& r) {
  std::vector<std::uint64_t> v(fields, 0);
  v[msgs_sent] = r.c.sum_calls(pc::is_send);
  v[p2p_out] = r.c.sum_out(pc::is_send);
  v[msgs_recv] = r.c.sum_calls(pc::is_recv);
  v[p2p_in] = r.c.sum_in(pc::is_recv) + r.c.in[pc::Sendrecv];
  v[coll_calls] = r.c.sum_calls(pc::is_collective);
  v[coll_out] = r.c.sum_out(pc::is_collective);
  v[coll_in] = r.c.sum_in(pc::is_collective);
  v[polls] = r.c.sum_calls(pc::is_poll);
  v[usec] = static_cast<std::uint64_t>(r.seconds * 1e6);
  for (int f = 0; f < pc::Fn::count; ++f) {
    v[nstats + f] = r.c.calls[f];
    v[int{nstats} + int{pc::Fn::count} + f] = r.c.in[f] + r.c.out[f];
  }
  return v;
}
std::uint64_t bytes_of(const std::vector<std::uint64_t>& v) { return v[p2p_out] + v[p2p_in] + v[coll_out] + v[coll_in]; }

struct Options {
  std::size_t n = 4000;
  int reps = 3;
  bool quick = false, csv = false, header = true, greedy = false, distributed = false;
};

}  // namespace

int main(int argc, char** argv) {
  bmpi::environment env(argc, argv);
  bmpi::communicator world;
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") { o.quick = true; o.n = 300; o.reps = 1; }
    else if (a == "--csv") o.csv = true;
    else if (a == "--greedy") o.greedy = true;
    else if (a == "--distributed") o.distributed = true;
    else if (a == "--no-header") o.header = false;
    else if (a == "--n" && i + 1 < argc) o.n = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--reps" && i + 1 < argc) o.reps = std::max(1, std::atoi(argv[++i]));
    else {
      if (world.rank() == 0)
        std::fprintf(stderr, "usage: bench_scale [--quick] [--csv] [--no-header] [--greedy] [--distributed] [--n N] [--reps R]\n");
      return 2;
    }
  }
  if (sanity_check(world) != 0) return 1;
  const int p = world.size();
  const int me = world.rank();
  const auto pts = make(o.n, me);
  const Policy policy{.cut = o.greedy ? irr::BlockingCut::greedy : irr::BlockingCut::optimal,
                      .max_gathered = o.distributed ? 0 : irr::blocking_default_max_gathered};

  // reps × records; counts from the last repetition, times: median over repetitions.
  std::vector<std::vector<Record>> reps;
  std::vector<std::string> problems;
  irr::mpi::ExchangeStats sort_stats;
  irr::mpi::MigrationCounters pipe_build_mig, dom_build_mig;
  std::uint64_t global_leaves = 0;
  for (int rep = 0; rep < o.reps; ++rep) {
    Recorder rec{MPI_Comm(world)};
    // Reproduced phases.
    Pipeline pipe(world, rec, policy);
    pipe.insert(pts);
    pipe.build();
    sort_stats = pipe.sort_stats;
    pipe_build_mig = pipe.migration_global;
    const auto pipe_leaves_built = pipe.leaf_count();
    pipe.move_elements(squeeze);
    const bool pipe_remapped = pipe.rebalance();
    // The same through the domain.
    rec.start();
    irr::DomainOptions<2, Metric, Policy> opt;
    opt.partitioner = policy;
    Domain dom(world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(leaf_capacity), opt);
    dom.insert(pts);
    rec.stop("setup", "domain", "ctor+insert");
    rec.start();
    dom.build();
    rec.stop("build", "domain", "whole");
    dom_build_mig = dom.last_migration();
    const auto dom_leaves_built = dom.local_leaf_count();
    pc::enabled = false;  // bookkeeping, not counted
    global_leaves = dom.global_leaf_count();
    pc::enabled = true;
    rec.start();
    dom.move_elements(squeeze);
    rec.stop("move", "domain", "whole");
    rec.start();
    const bool dom_remapped = dom.rebalance({.threshold = threshold});
    rec.stop("rebalance", "domain", "whole");
    if (pipe_leaves_built != dom_leaves_built) problems.push_back("local leaves after build differ");
    if (pipe.leaf_count() != dom.local_leaf_count() || pipe.element_count() != dom.local_element_count())
      problems.push_back("local leaves/elements after rebalance differ");
    if (pipe_remapped != dom_remapped) problems.push_back("rebalance decisions differ");
    if (!dom_remapped && p > 1) problems.push_back("rebalance did not remap (the squeeze should unbalance the load)");
    if (!(pipe_build_mig == dom_build_mig)) problems.push_back("build migration counters differ");
    reps.push_back(std::move(rec.records));
  }

  // Gather to rank 0 (not counted).
  pc::enabled = false;
  const auto& last = reps.back();
  const std::size_t nrec = last.size();
  std::vector<std::uint64_t> mine;
  for (std::size_t k = 0; k < nrec; ++k) {
    auto v = flatten(last[k]);
    std::vector<double> ts;
    for (const auto& r : reps) ts.push_back(r[k].seconds);
    std::nth_element(ts.begin(), ts.begin() + static_cast<std::ptrdiff_t>(ts.size() / 2), ts.end());
    v[usec] = static_cast<std::uint64_t>(ts[ts.size() / 2] * 1e6);
    mine.insert(mine.end(), v.begin(), v.end());
  }
  // The sum of the phases against the domain's whole call, per rank and exactly.
  const auto sum_of = [&](const std::string& op) {
    std::vector<std::uint64_t> s(fields, 0);
    for (std::size_t k = 0; k < nrec; ++k)
      if (last[k].op == op && last[k].how == "phases") {
        const auto v = flatten(last[k]);
        for (int f = 0; f < fields; ++f) s[f] += v[f];
      }
    return s;
  };
  const auto whole_of = [&](const std::string& op) {
    for (std::size_t k = 0; k < nrec; ++k)
      if (last[k].op == op && last[k].how == "domain") return flatten(last[k]);
    return std::vector<std::uint64_t>(fields, 0);
  };
  for (const char* op : {"build", "move", "rebalance"}) {
    const auto s = sum_of(op), w = whole_of(op);
    for (int f : {int(msgs_sent), int(p2p_out), int(msgs_recv), int(p2p_in), int(coll_calls), int(coll_out), int(coll_in)})
      if (s[f] != w[f]) {
        problems.push_back(std::string(op) + ": sum of phases differs from the domain's call on rank " +
                           std::to_string(me) + " (stat " + std::to_string(f) + ": " + std::to_string(s[f]) +
                           " vs " + std::to_string(w[f]) + ")");
        break;
      }
  }
  // The library's own counters against PMPI: the sort's exchange bytes = the sort's Issend bytes.
  for (const auto& r : last)
    if (r.op == "build" && r.phase == "sort" && r.c.out[pc::Issend] != sort_stats.bytes_sent)
      problems.push_back("sort: ExchangeStats.bytes_sent " + std::to_string(sort_stats.bytes_sent) +
                         " != PMPI Issend bytes " + std::to_string(r.c.out[pc::Issend]));
  std::vector<std::uint64_t> all;
  bmpi::gather(world, mine.data(), static_cast<int>(mine.size()), all, 0);
  std::vector<std::vector<std::string>> all_problems;
  bmpi::gather(world, problems, all_problems, 0);
  if (me != 0) return 0;

  std::vector<std::string> issues;
  for (const auto& v : all_problems)
    for (const auto& s : v)
      if (std::find(issues.begin(), issues.end(), s) == issues.end()) issues.push_back(s);

  const auto at = [&](int rank, std::size_t k, int f) {
    return all[(static_cast<std::size_t>(rank) * nrec + k) * fields + static_cast<std::size_t>(f)];
  };
  struct Agg {
    double max = 0, mean = 0;
  };
  const auto agg = [&](std::size_t k, auto&& get) {
    Agg a;
    for (int r = 0; r < p; ++r) {
      const double x = static_cast<double>(get(r, k));
      a.max = std::max(a.max, x);
      a.mean += x / p;
    }
    return a;
  };
  const auto stat = [&](int f) { return [&, f](int r, std::size_t k) { return at(r, k, f); }; };
  const auto bytes = [&](int r, std::size_t k) {
    std::vector<std::uint64_t> v(fields);
    for (int f = 0; f < fields; ++f) v[f] = at(r, k, f);
    return bytes_of(v);
  };
  // "Name:max" per MPI function, max over ranks, from the counters at `first` (calls, or bytes
  // in + out: where the volume comes from); polls are left out of the calls.
  const auto per_function = [&](std::size_t k, int first, bool skip_polls) {
    std::string s;
    for (int f = 0; f < pc::Fn::count; ++f) {
      if (skip_polls && pc::is_poll(f)) continue;
      std::uint64_t mx = 0;
      for (int r = 0; r < p; ++r) mx = std::max(mx, at(r, k, first + f));
      if (mx == 0) continue;
      if (!s.empty()) s += ' ';
      s += pc::names[f];
      s += ':';
      s += std::to_string(mx);
    }
    return s.empty() ? std::string("-") : s;
  };
  const auto fn_bytes = [&](std::size_t k) { return per_function(k, int{nstats} + int{pc::Fn::count}, false); };
  const auto fn_calls = [&](std::size_t k) { return per_function(k, int{nstats}, true); };

  if (o.csv) {
    if (o.header)
      std::printf("p,n_per_rank,op,how,phase,msgs_sent_max,msgs_sent_mean,p2p_bytes_sent_max,p2p_bytes_recv_max,"
                  "coll_calls_max,coll_bytes_out_max,coll_bytes_in_max,coll_bytes_in_mean,bytes_per_rank_max,"
                  "bytes_per_rank_mean,polls_max,time_ms_max,calls_by_function,bytes_by_function\n");
    for (std::size_t k = 0; k < nrec; ++k) {
      const auto& r = last[k];
      std::printf("%d,%zu,%s,%s,%s,%.0f,%.2f,%.0f,%.0f,%.0f,%.0f,%.0f,%.1f,%.0f,%.1f,%.0f,%.3f,%s,%s\n", p, o.n,
                  r.op.c_str(), r.how.c_str(), r.phase.c_str(), agg(k, stat(msgs_sent)).max,
                  agg(k, stat(msgs_sent)).mean, agg(k, stat(p2p_out)).max, agg(k, stat(p2p_in)).max,
                  agg(k, stat(coll_calls)).max, agg(k, stat(coll_out)).max, agg(k, stat(coll_in)).max,
                  agg(k, stat(coll_in)).mean, agg(k, bytes).max, agg(k, bytes).mean, agg(k, stat(polls)).max,
                  agg(k, stat(usec)).max / 1e3, fn_calls(k).c_str(), fn_bytes(k).c_str());
    }
  } else {
    if (o.header) {
      std::printf("Messages, bytes and collective calls per rank and phase (PMPI counters; max and mean over ranks).\n"
                  "%zu points per rank (weak scaling), Hilbert 2D, refine::max_elements(%zu), load::ElementCount, "
                  "SfcBlocking{.cut = %s%s}; move squeezes x into [0.1, 0.3]; rebalance threshold %.2f. bytes/rank = p2p sent + "
                  "received + collective send and receive buffers. Times: median of %d, max over ranks.\n\n",
                  o.n, leaf_capacity, o.greedy ? "greedy" : "optimal", o.distributed ? ", .max_gathered = 0" : "", threshold,
                  o.reps);
      std::printf("| p | op | phase | msgs sent max | msgs sent mean | p2p bytes sent max | coll calls max | "
                  "coll bytes in max | coll bytes in mean | bytes/rank max | bytes/rank mean | time max ms | "
                  "calls by function (max over ranks) |\n");
      std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    }
    for (std::size_t k = 0; k < nrec; ++k) {
      const auto& r = last[k];
      const std::string phase = r.how == "domain" ? "**" + r.phase + " (domain)**" : r.phase;
      std::printf("| %d | %s | %s | %.0f | %.2f | %.0f | %.0f | %.0f | %.1f | %.0f | %.1f | %.2f | %s |\n", p,
                  r.op.c_str(), phase.c_str(), agg(k, stat(msgs_sent)).max, agg(k, stat(msgs_sent)).mean,
                  agg(k, stat(p2p_out)).max, agg(k, stat(coll_calls)).max, agg(k, stat(coll_in)).max,
                  agg(k, stat(coll_in)).mean, agg(k, bytes).max, agg(k, bytes).mean, agg(k, stat(usec)).max / 1e3,
                  fn_calls(k).c_str());
    }
  }
  std::fprintf(o.csv ? stderr : stdout, "%sp=%d, %llu leaves after build (%.0f per rank); checks: %s\n",
               o.csv ? "" : "\n", p, static_cast<unsigned long long>(global_leaves),
               static_cast<double>(global_leaves) / p,
               issues.empty() ? "sum of phases == domain call on every rank (calls, messages, bytes); "
                                "sort bytes == library ExchangeStats; same leaves; rebalance remapped (p > 1)"
                              : "FAILED");
  for (const auto& s : issues) std::fprintf(stderr, "bench_scale: %s\n", s.c_str());
  return issues.empty() ? 0 : 1;
}
