// The decision of a nonuniform rebalance (kaddoura-ranka §3.5, baiardi-2001 §3): options agreed
// by every rank, every rank's load, elements and last migration time gathered once, capacities
// given or measured (§5: elements per second of the last phase), the unbalance in time, the
// chain arrangement (§3.4), and the profitability of a remap: its cost, the measured seconds per
// byte times the bytes the new cuts would move, against the time it saves over a horizon.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/remap/neighbour_shift.hpp>
#include <irregular/distributed/remap/rebalance_decision.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/communicator.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/partition/minimize_cost_redistribution.hpp>
#include <irregular/partition/optimal_arrangement.hpp>
#include <irregular/partition/overlap_matching.hpp>
#include <irregular/partition/redistribution.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace irregular {

/// Why rebalance() did what it did.
enum class RebalanceReason {
  within_threshold,  ///< the unbalance did not exceed the threshold: nothing was computed
  not_profitable,    ///< the estimated cost exceeded the saving over the horizon: nothing moved
  remapped           ///< the data moved to the new cuts
};

/// The reason in words, for reports.
[[nodiscard]] inline const char* to_string(RebalanceReason r) noexcept {
  switch (r) {
    case RebalanceReason::within_threshold:
      return "within threshold";
    case RebalanceReason::not_profitable:
      return "not profitable";
    case RebalanceReason::remapped:
      return "remapped";
  }
  return "?";
}

/// A partitioner's choice among candidates (partitioner::Auto): what it compared, what each was
/// predicted to cost per step, and what it applied.
struct PartitionerChoice {
  std::vector<std::string> candidates;    ///< registry names, in the order compared
  std::vector<double> predicted_seconds;  ///< predicted step time of each
  std::string chosen;                     ///< the candidate applied
  bool kept_family = false;  ///< hysteresis kept the family in force over a slightly cheaper one
};

/// The decision record of one rebalance() (replicated unless marked). Converts to bool: remapped.
struct RebalanceDecision {
  bool remapped = false;                                       ///< true if the data moved
  RebalanceReason reason = RebalanceReason::within_threshold;  ///< why it did or did not
  RemapStrategy strategy = RemapStrategy::direct;              ///< how it moved (or would have)
  double unbalance = 0;            ///< before: max_r |t_r - ideal| / ideal, t_r = load_r / c_r
  double unbalance_after = 0;      ///< after the remap, from the new loads (= unbalance if none)
  double efficiency = 1;           ///< kaddoura-ranka §4 now: (W / sum c) / max_r t_r
  double efficiency_after = 1;     ///< the same on the new cuts (= efficiency if none)
  std::vector<double> capacities;  ///< relative capacity per rank (mean 1), before any renumbering
  std::vector<int> order;          ///< ranks (numbering before the call) in the new chain order
  // Profitability (kaddoura-ranka §3.5); estimates are computed from the cuts before data moves.
  double current_seconds = 0;       ///< bottleneck time per iteration now
  double predicted_seconds = 0;     ///< bottleneck time per iteration on the new cuts
  double horizon = 0;               ///< iterations the remap must pay for itself in (0: no check)
  double saving_seconds = 0;        ///< (current - predicted) * horizon
  double seconds_per_byte = 0;      ///< given or measured at the last migration
  std::uint64_t bytes_to_move = 0;  ///< what the new cuts move (all ranks)
  std::uint64_t elements_to_move = 0;  ///< elements the new cuts move (all ranks)
  double cost_seconds = 0;             ///< seconds_per_byte * bytes_to_move
  // What happened (the strategy's report).
  int rounds = 0;                    ///< neighbour-shift rounds (1 for a direct remap)
  std::uint64_t elements_moved = 0;  ///< elements that moved, over all ranks
  std::uint64_t bytes_moved = 0;     ///< bytes that moved, over all ranks
  double decision_seconds = 0;       ///< this rank: measuring the loads and deciding
  double cut_seconds = 0;            ///< this rank: the new cuts and their estimate
  double migration_seconds = 0;      ///< this rank: moving the data
  std::vector<std::uint64_t>
      elements_to;  ///< this rank: elements sent to each rank (new numbering)
  /// The partitioner's choice among candidates when it makes one (partitioner::Auto).
  std::optional<PartitionerChoice> choice;

  /// True if the data moved: `if (domain.rebalance())` reads well.
  operator bool() const noexcept {  // NOLINT: implicit on purpose
    return remapped;
  }
};

/// Every rank's options must be valid and the same: a bad value on any rank (horizon <= 0,
/// capacities negative, not finite, all zero or not one per rank, an order that is not a
/// permutation, options the map or metric cannot honour) makes every rank throw the same
/// irregular::collective_error (naming `who`); so do options that differ between ranks, the
/// threshold among them. One all_reduce when all is well. Collective over comm.
inline void agree_remap_options(const boost::mpi::communicator& comm, const RebalanceOptions& opt,
                                bool segment_map, bool measured_metric, const std::string& who) {
  const std::size_t p = static_cast<std::size_t>(comm.size());
  const std::string at = " on rank " + std::to_string(comm.rank());
  std::optional<std::string> bad;
  auto fail = [&](const std::string& what) {
    if (!bad) bad = who + ": " + what + at;
  };
  if (!(opt.threshold >= 0) || !std::isfinite(opt.threshold))
    fail("threshold " + std::to_string(opt.threshold) + " must be finite and >= 0");
  if (opt.horizon && (!(*opt.horizon > 0) || !std::isfinite(*opt.horizon)))
    fail("horizon " + std::to_string(*opt.horizon) + " must be finite and > 0");
  if (opt.seconds_per_byte &&
      (!(*opt.seconds_per_byte >= 0) || !std::isfinite(*opt.seconds_per_byte)))
    fail("seconds_per_byte must be finite and >= 0");
  if (!(opt.seconds_per_load > 0) || !std::isfinite(opt.seconds_per_load))
    fail("seconds_per_load must be finite and > 0");
  if (opt.max_rounds < 0) fail("max_rounds must be >= 0");
  if (!opt.capacities.empty()) {
    if (opt.capacities.size() != p)
      fail("capacities has " + std::to_string(opt.capacities.size()) + " entries for " +
           std::to_string(p) + " ranks");
    double sum = 0;
    for (std::size_t r = 0; r < opt.capacities.size(); ++r) {
      if (!(opt.capacities[r] >= 0) || !std::isfinite(opt.capacities[r]))
        fail("capacity of rank " + std::to_string(r) + " is " + std::to_string(opt.capacities[r]) +
             " (must be finite and >= 0)");
      sum += opt.capacities[r];
    }
    if (!(sum > 0)) fail("all capacities are zero");
    if (opt.measure_capacities) fail("capacities are either given or measured, not both");
  }
  if (opt.measure_capacities && !measured_metric)
    fail("measured capacities need the load::Measured metric");
  if (!opt.order.empty()) {
    try {
      partition::check_arrangement(opt.order, p, who + ": order (SP)");
    } catch (const invalid_argument& e) {
      fail(e.what());
    }
    if (opt.arrangement != ChainArrangement::keep)
      fail("order and a computed arrangement exclude each other");
  }
  if (opt.arrangement == ChainArrangement::optimal && p > 16)
    fail("the optimal arrangement is limited to 16 ranks");
  const bool nonuniform = !opt.capacities.empty() || opt.measure_capacities || !opt.order.empty() ||
                          opt.arrangement != ChainArrangement::keep ||
                          opt.strategy != RemapStrategy::direct;
  if (nonuniform && !segment_map)
    fail("capacities, orders and the neighbour shift need a segment map (SfcBlocking)");
  if (opt.strategy == RemapStrategy::neighbour_shift &&
      (!opt.order.empty() || opt.arrangement != ChainArrangement::keep))
    fail("the neighbour shift keeps the chain order: give no order or arrangement");
  // A fingerprint of the options (FNV-1a over their bytes) detects ranks that disagree.
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* data, std::size_t bytes) {
    const auto* c = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) h = (h ^ c[i]) * 1099511628211ull;
  };
  const int ints[4] = {static_cast<int>(opt.strategy), static_cast<int>(opt.arrangement),
                       opt.max_rounds, opt.measure_capacities ? 1 : 0};
  const double reals[4] = {opt.horizon.value_or(-1), opt.seconds_per_byte.value_or(-1),
                           opt.seconds_per_load, 0};
  mix(ints, sizeof ints);
  mix(reals, sizeof reals);
  mix(opt.capacities.data(), opt.capacities.size() * sizeof(double));
  mix(opt.order.data(), opt.order.size() * sizeof(int));
  // A valid threshold is a finite double >= 0, whose bits order as the values do: max and min
  // over the ranks in the same all_reduce name the ranks below the largest threshold.
  const std::uint64_t t = bad ? 0 : std::bit_cast<std::uint64_t>(opt.threshold + 0.0);
  const std::array<std::uint64_t, 5> mine{bad ? 1u : 0u, t, ~t, h, ~h};
  std::array<std::uint64_t, 5> top{};
  boost::mpi::all_reduce(comm, mine.data(), 5, top.data(), boost::mpi::maximum<std::uint64_t>());
  if (top[0] != 0) mpi::agree_on(comm, bad);
  if (top[1] != ~top[2])
    mpi::agree_on(comm, t == top[1]
                            ? std::nullopt
                            : std::optional<std::string>(
                                  who + ": threshold " + std::to_string(opt.threshold) + at +
                                  " differs from " + std::to_string(std::bit_cast<double>(top[1])) +
                                  " on another rank"));
  if (top[3] != ~top[4])
    mpi::agree_on(comm, h == top[3]
                            ? std::nullopt
                            : std::optional<std::string>(who + ": the rebalance options" + at +
                                                         " differ from those on another rank"));
}

/// An arrangement procedure: the chain order of the instance's processors.
using ArrangementProcedure = std::vector<int> (*)(const partition::Redistribution&);

/// The procedure behind each computed ChainArrangement (nullptr for keep): the one place the
/// option becomes an algorithm, so a new arrangement or another default for `best` is a line
/// here and none in the plan.
[[nodiscard]] inline ArrangementProcedure arrangement_procedure(ChainArrangement a) noexcept {
  switch (a) {
    case ChainArrangement::best:
      return
          [](const partition::Redistribution& inst) { return partition::best_arrangement(inst); };
    case ChainArrangement::minimize_cost:
      return [](const partition::Redistribution& inst) {
        return partition::minimize_cost_redistribution(inst, inst.old_order());
      };
    case ChainArrangement::optimal:
      return &partition::optimal_arrangement;
    case ChainArrangement::overlap_matching:
      return &partition::overlap_matching;
    case ChainArrangement::keep:
      break;
  }
  return nullptr;
}

/// What every rank contributes to the decision (one all_gather of 4 doubles each).
struct RankState {
  double load = 0;               ///< sum of the leaf loads (seconds under load::Measured)
  double elements = 0;           ///< elements held
  double migration_seconds = 0;  ///< wall time of this rank's last migration
  double spare = 0;              ///< unused: pads the contribution to four doubles
};

/// The replicated plan of a nonuniform rebalance: capacities, the work the chain is cut by, the
/// unbalance in time, and the chain order.
struct RemapPlan {
  std::vector<RankState> ranks;  ///< every rank's contribution
  std::vector<double> capacity;  ///< per rank, mean 1
  double work_scale = 1;     ///< this rank's leaf work = load * work_scale (its capacity when loads
                             ///< are measured seconds)
  std::vector<double> work;  ///< per rank: load * (capacity when loads are measured seconds)
  double unbalance = 0;      ///< max_r |t_r - ideal| / ideal in time, t_r = work_r / capacity_r.
  std::vector<int> order;    ///< chain position -> rank
  bool uniform = true;       ///< equal capacities, rank order: the partitioner's own cut applies

  /// The capacities in chain order (order[k]'s capacity at position k).
  [[nodiscard]] std::vector<double> chain_capacities() const {
    std::vector<double> c;
    for (int r : order) c.push_back(capacity[static_cast<std::size_t>(r)]);
    return c;
  }
  /// The slowest rank's time on the current cuts: max_r work_r / capacity_r.
  [[nodiscard]] double current_bottleneck() const {
    double b = 0;
    for (std::size_t r = 0; r < work.size(); ++r)
      if (work[r] > 0) b = std::max(b, capacity[r] > 0 ? work[r] / capacity[r] : INFINITY);
    return b;
  }
};

/// Gathers every rank's state and derives the plan (agreed options assumed). Measured capacities:
/// elements per second of load; a rank that timed nothing or holds nothing gets the mean of the
/// others (1 when none is known). Collective over comm.
inline RemapPlan plan_remap(const boost::mpi::communicator& comm, const RebalanceOptions& opt,
                            RankState mine, bool measured_metric) {
  RemapPlan plan;
  const auto p = static_cast<std::size_t>(comm.size());
  plan.ranks.resize(p);
  boost::mpi::all_gather(comm, reinterpret_cast<const double*>(&mine), 4,
                         reinterpret_cast<double*>(plan.ranks.data()));
  plan.capacity.assign(p, 1.0);
  if (!opt.capacities.empty()) {
    plan.capacity = opt.capacities;
  } else if (opt.measure_capacities) {
    double known = 0;
    std::size_t count = 0;
    for (std::size_t r = 0; r < p; ++r)
      if (plan.ranks[r].load > 0 && plan.ranks[r].elements > 0) {
        plan.capacity[r] = plan.ranks[r].elements / plan.ranks[r].load;
        known += plan.capacity[r];
        ++count;
      } else {
        plan.capacity[r] = -1;
      }
    for (auto& c : plan.capacity)
      if (c < 0) c = count ? known / static_cast<double>(count) : 1.0;
  }
  const double csum = std::accumulate(plan.capacity.begin(), plan.capacity.end(), 0.0);
  for (auto& c : plan.capacity) c *= static_cast<double>(p) / csum;
  // Measured seconds already carry a rank's speed: the work of a leaf is its seconds times the
  // capacity of the rank that measured them (seconds on a processor of mean speed).
  const bool scale = measured_metric && (!opt.capacities.empty() || opt.measure_capacities);
  plan.work_scale = scale ? plan.capacity[static_cast<std::size_t>(comm.rank())] : 1.0;
  for (std::size_t r = 0; r < p; ++r)
    plan.work.push_back(plan.ranks[r].load * (scale ? plan.capacity[r] : 1.0));
  plan.unbalance = capacity_unbalance(plan.work, plan.capacity);
  plan.order.resize(p);
  std::iota(plan.order.begin(), plan.order.end(), 0);
  if (!opt.order.empty()) plan.order = opt.order;
  if (opt.arrangement != ChainArrangement::keep && p > 1) {
    std::vector<std::uint64_t> old_sizes(p);
    std::uint64_t total = 0;
    for (std::size_t r = 0; r < p; ++r)
      total += old_sizes[r] = static_cast<std::uint64_t>(plan.ranks[r].elements);
    if (total > 0) {
      const partition::Redistribution inst(plan.order, old_sizes,
                                           partition::proportional_sizes(total, plan.capacity));
      plan.order = arrangement_procedure(opt.arrangement)(inst);
    }
  }
  bool equal = true;
  for (std::size_t r = 0; r < p; ++r)
    equal = equal && plan.capacity[r] == plan.capacity[0] && plan.order[r] == static_cast<int>(r);
  plan.uniform = equal && opt.strategy == RemapStrategy::direct;
  return plan;
}

/// What a remap to a target map would do, estimated from the cuts before anything moves
/// (replicated): the work each chain position would hold, and the elements and bytes that leave
/// their rank (the least any remap to these cuts must move).
struct RemapEstimate {
  std::vector<double> position_work;  ///< work of each chain position on the target cuts
  std::uint64_t elements = 0;         ///< elements that would leave their rank
  std::uint64_t bytes = 0;            ///< bytes that would leave (elements and leaves)
};

/// Estimates a remap of this rank's leaves (`work` each) and sorted element keys onto `target`,
/// whose part k the rank `order[k]` will hold. `element_bytes` is what one element costs on the
/// wire with its key, a leaf costs its start, count, level and payload. `local_work` is the sum
/// of `work` (known to the caller). One all_reduce of p + 2 values. Collective over comm.
template <OwnershipMap M>
RemapEstimate estimate_remap(const boost::mpi::communicator& comm, const M& target,
                             std::span<const int> order,
                             const LocalLeaves<typename M::curve_type>& leaves,
                             std::span<const double> work,
                             std::span<const typename M::curve_type::index_type> keys,
                             std::size_t element_bytes, double local_work) {
  using I = typename M::curve_type::index_type;
  const auto p = static_cast<std::size_t>(comm.size());
  std::size_t pos = 0;  // this rank's new chain position
  while (pos < p && order[pos] != comm.rank()) ++pos;
  std::vector<double> mine(p + 2, 0.0), all(p + 2, 0.0);
  std::uint64_t leaves_out = 0, elements_out = 0;
  if constexpr (M::contiguous_segments) {
    // Parts are curve intervals: the leaves and keys outside the new segment are two runs.
    const auto seg = target.segment(static_cast<int>(pos));
    // Owners grow along the sorted starts: one run per owner, found by binary search. Only the
    // runs that leave are summed; the run that stays gets the rest of this rank's total (most
    // leaves stay, and a pass over them cost more than the whole estimate otherwise).
    const auto st = leaves.starts();
    double leaving = 0;
    for (std::size_t i = 0; i < st.size();) {
      const int k = target.owner(st[i]);
      const auto end = static_cast<std::size_t>(
          std::partition_point(st.begin() + static_cast<std::ptrdiff_t>(i), st.end(),
                               [&](const I& x) { return target.owner(x) <= k; }) -
          st.begin());
      if (static_cast<std::size_t>(k) != pos) {
        const double run = std::accumulate(work.begin() + static_cast<std::ptrdiff_t>(i),
                                           work.begin() + static_cast<std::ptrdiff_t>(end), 0.0);
        mine[static_cast<std::size_t>(k)] += run;
        leaving += run;
      }
      i = end;
    }
    if (pos < p) mine[pos] += std::max(0.0, local_work - leaving);
    const auto lo = std::lower_bound(leaves.starts().begin(), leaves.starts().end(), seg.start) -
                    leaves.starts().begin();
    const auto hi = std::lower_bound(leaves.starts().begin(), leaves.starts().end(), seg.end) -
                    leaves.starts().begin();
    leaves_out = leaves.size() - static_cast<std::uint64_t>(hi - lo);
    const auto klo = std::lower_bound(keys.begin(), keys.end(), seg.start) - keys.begin();
    const auto khi = std::lower_bound(keys.begin(), keys.end(), seg.end) - keys.begin();
    elements_out = keys.size() - static_cast<std::uint64_t>(khi - klo);
  } else {
    // A settled leaf holds all its elements here, so a leaf that leaves takes its count along:
    // no per-element lookup.
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      const int q = target.leaf_owner(leaves.cell(i));
      mine[static_cast<std::size_t>(q)] += work[i];
      if (q != static_cast<int>(pos)) {
        ++leaves_out;
        elements_out += leaves.counts()[i];
      }
    }
  }
  const std::size_t leaf_bytes = sizeof(I) + sizeof(std::uint64_t) + 1 + sizeof(double);
  mine[p] = static_cast<double>(elements_out);
  mine[p + 1] = static_cast<double>(elements_out * element_bytes + leaves_out * leaf_bytes);
  boost::mpi::all_reduce(comm, mine.data(), static_cast<int>(mine.size()), all.data(),
                         std::plus<double>());
  RemapEstimate e;
  e.position_work.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(p));
  e.elements = static_cast<std::uint64_t>(all[p]);
  e.bytes = static_cast<std::uint64_t>(all[p + 1]);
  return e;
}

/// The record of a plan before the cuts: unbalance, capacities, order.
inline RebalanceDecision start_record(const RemapPlan& plan, const RebalanceOptions& opt) {
  RebalanceDecision d;
  d.strategy = opt.strategy;
  d.unbalance = d.unbalance_after = plan.unbalance;
  const double W = std::accumulate(plan.work.begin(), plan.work.end(), 0.0),
               b = plan.current_bottleneck();
  d.efficiency = d.efficiency_after =
      b > 0 ? W / static_cast<double>(plan.work.size()) / b : 1.0;  // sum c = p
  d.capacities = plan.capacity;
  d.order = plan.order;
  d.horizon = opt.horizon.value_or(0);
  return d;
}

/// kaddoura-ranka §3.5: fills the estimates of `d` from the plan and the estimated remap and
/// says whether the remap pays for itself: cost = seconds per byte (given, or the slowest rank's
/// last migration time over the bytes it moved, `last_bytes`) times the bytes to move; saving =
/// (current - predicted bottleneck time) times the horizon. Without a horizon every remap pays.
inline bool judge_profitability(const RemapPlan& plan, const RemapEstimate& est,
                                const RebalanceOptions& opt, std::uint64_t last_bytes,
                                RebalanceDecision& d) {
  std::vector<double> cap;
  for (int r : plan.order) cap.push_back(plan.capacity[static_cast<std::size_t>(r)]);
  double predicted = 0;
  for (std::size_t k = 0; k < cap.size(); ++k)
    if (est.position_work[k] > 0)
      predicted = std::max(predicted, cap[k] > 0 ? est.position_work[k] / cap[k] : INFINITY);
  d.unbalance_after = capacity_unbalance(est.position_work, cap);
  const double W = std::accumulate(est.position_work.begin(), est.position_work.end(), 0.0);
  d.efficiency_after = predicted > 0 ? W / static_cast<double>(cap.size()) / predicted : 1.0;
  d.current_seconds = plan.current_bottleneck() * opt.seconds_per_load;
  d.predicted_seconds = predicted * opt.seconds_per_load;
  double slowest = 0;
  for (const auto& r : plan.ranks) slowest = std::max(slowest, r.migration_seconds);
  d.seconds_per_byte = opt.seconds_per_byte
                           ? *opt.seconds_per_byte
                           : (last_bytes > 0 ? slowest / static_cast<double>(last_bytes) : 0.0);
  d.bytes_to_move = est.bytes;
  d.elements_to_move = est.elements;
  d.cost_seconds = d.seconds_per_byte * static_cast<double>(est.bytes);
  d.saving_seconds = (d.current_seconds - d.predicted_seconds) * d.horizon;
  if (opt.horizon && !(d.cost_seconds < d.saving_seconds)) {
    d.reason = RebalanceReason::not_profitable;
    d.unbalance_after = d.unbalance;
    d.efficiency_after = d.efficiency;
    return false;
  }
  return true;
}

/// Renumbers `comm` so that rank k is the rank order[k] was (one split), unless order is the
/// identity; returns the communicator it replaced, to restore after a failure. Collective over
/// comm.
inline std::optional<mpi::OwnedCommunicator> renumber_ranks(mpi::OwnedCommunicator& comm,
                                                            std::span<const int> order) {
  if (std::is_sorted(order.begin(), order.end())) return std::nullopt;
  const auto at = std::find(order.begin(), order.end(), comm.rank()) - order.begin();
  std::optional<mpi::OwnedCommunicator> old(std::move(comm));
  comm = mpi::OwnedCommunicator(old->get().split(0, static_cast<int>(at)));
  return old;
}

/// The record's migration figures: what moved (all ranks) and this rank's migration time.
inline RebalanceDecision finish_record(RebalanceDecision d, const mpi::MigrationCounters& moved,
                                       double seconds) {
  d.elements_moved = moved.elements;
  d.bytes_moved = moved.bytes;
  d.migration_seconds = seconds;
  return d;
}

}  // namespace irregular
