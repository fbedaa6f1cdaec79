// Neighbour shift (baiardi-2001 §3): rebalancing by segment shifts between processors adjacent in
// the ordered set SP. From the unbalance of its predecessors Unb(Pre_i) and of its successors
// Unb(Suc_i), P_i sends a prefix of its segment to P_{i-1} or a suffix to P_{i+1}, or receives
// one; every step keeps the range property, and rounds repeat until the unbalance is within T.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/distributed/partitioners/detail/cut_support.hpp>
#include <irregular/mpi/counters.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace irregular {

/// What a neighbour shift did on this rank (rounds and the unbalance are replicated).
struct NeighbourShiftReport {
  int rounds = 0;                          ///< rounds that moved data
  double unbalance = 0;                    ///< max_r |t_r - ideal| / ideal after the last round
  double seconds = 0;                      ///< wall time of all rounds
  mpi::MigrationCounters sent;             ///< what this rank sent, summed over the rounds
  std::vector<std::uint64_t> elements_to;  ///< elements this rank sent to each rank (size p)
};

/// max_r |load_r / c_r - W / sum c| / (W / sum c): baiardi-2001's max_unbalance measured in time
/// on processors of capacities c (equal capacities: |load_r - average| / average).
inline double capacity_unbalance(std::span<const double> loads,
                                 std::span<const double> capacities) {
  double W = 0, csum = 0;
  for (std::size_t r = 0; r < loads.size(); ++r) {
    W += loads[r];
    csum += capacities[r];
  }
  if (!(W > 0) || !(csum > 0)) return 0;
  const double ideal = W / csum;
  double u = 0;
  for (std::size_t r = 0; r < loads.size(); ++r) {
    const double t = capacities[r] > 0 ? loads[r] / capacities[r] : (loads[r] > 0 ? INFINITY : 0.0);
    u = std::max(u, std::abs(t - ideal) / ideal);
  }
  return u;
}

/// Rounds of neighbour shifts on the segment map `map` (rank order is SP). Each round gathers the
/// ranks' work (p values), derives the flow across every boundary k, F_k = Pre_k - its
/// capacity share (the excess of P_0..P_{k-1}; positive: P_{k-1} sends a suffix to P_k, negative:
/// P_k sends a prefix to P_{k-1}), lets each sender cut at the leaf boundary nearest to the
/// flow, capped by what it holds (a prefix and a suffix never overlap), replicates the moved
/// splitters (one all_reduce) and calls `shift(next_map)`, which must place the leaves on it
/// (data then moves only between adjacent ranks) with `work` as their payload, and update
/// `offsets` (first element of every leaf, leaves + 1 values; read through this reference after
/// every round, so a container, never a view). Stops when the unbalance is at
/// most `threshold`, when no splitter moves, or after `max_rounds` rounds. `work` must be valid
/// (finite, >= 0). Collective over comm.
template <SpaceFillingCurve C, class Offsets, class Shift>
NeighbourShiftReport neighbour_shift(const boost::mpi::communicator& comm, SegmentMap<C>& map,
                                     const LocalLeaves<C>& leaves, std::vector<double>& work,
                                     const Offsets& offsets, std::span<const double> capacities,
                                     double threshold, int max_rounds, Shift&& shift) {
  using I = typename C::index_type;
  const auto t0 = std::chrono::steady_clock::now();
  const auto p = static_cast<std::size_t>(comm.size()), me = static_cast<std::size_t>(comm.rank());
  NeighbourShiftReport rep;
  rep.elements_to.assign(p, 0);
  double csum = 0;
  for (double c : capacities) csum += c;
  std::vector<double> totals, prefix;
  for (int round = 0;; ++round) {
    prefix.assign(work.size() + 1, 0.0);
    for (std::size_t i = 0; i < work.size(); ++i) prefix[i + 1] = prefix[i] + work[i];
    boost::mpi::all_gather(comm, prefix.back(), totals);
    rep.unbalance = capacity_unbalance(totals, capacities);
    if (rep.unbalance <= threshold || round >= max_rounds || p == 1) break;
    double W = 0;
    for (double t : totals) W += t;
    // Flow across boundary k (between k-1 and k), k = me and me + 1.
    auto flow = [&](std::size_t k) {
      double pre = 0, cpre = 0;
      for (std::size_t r = 0; r < k; ++r) {
        pre += totals[r];
        cpre += capacities[r];
      }
      return pre - W * (cpre / csum);
    };
    const double left = me > 0 ? flow(me) : 0, right = me + 1 < p ? flow(me + 1) : 0;
    const std::size_t n = leaves.size();
    std::size_t x = 0, y = n;  // prefix [0, x) goes left, suffix [y, n) goes right
    if (left < 0) x = detail::nearest_position(prefix, std::min(-left, prefix.back()));
    if (right > 0)
      y = std::max(x, detail::nearest_position(prefix, std::max(prefix.back() - right, prefix[x])));
    detail::SplitterSlots<I> slots(p + 1);
    if (x > 0) slots.claim(me, x < n ? leaves.starts()[x] : map.splitters()[me + 1], 0.0);
    if (y < n) slots.claim(me + 1, leaves.starts()[y], 0.0);
    slots.replicate(comm);
    std::vector<I> next = map.splitters();
    bool moved = false;
    for (std::size_t k = 1; k < p; ++k)
      if (slots.claimed(k) && slots.start(k) != next[k]) {
        next[k] = slots.start(k);
        moved = true;
      }
    if (!moved) break;  // every flow is below half a leaf: nothing more can move
    if (x > 0) rep.elements_to[me - 1] += offsets[x] - offsets[0];
    if (y < n) rep.elements_to[me + 1] += offsets[n] - offsets[y];
    map = SegmentMap<C>(std::move(next));
    rep.sent += shift(map);
    ++rep.rounds;
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace irregular
