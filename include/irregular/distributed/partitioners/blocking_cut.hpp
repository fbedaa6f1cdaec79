// Blocking partitioner: cuts the SFC visit Sq(v(sf)) of the leaves into p segments of
// consecutive hnodes with loads as close as possible to the average (baiardi-2001 §3, the range
// property). Distributed optimal cut: Pinar & Aykanat's separator-index windows (as cited in
// saule-bas-catalyurek §2.2) around a DirectCut upper bound, gathered on rank 0 while they are
// few, else held by the ranks that own the separators and probed by a tree scan of the greedy
// steps (O(log p) rounds, O(window) bytes per rank).
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/partitioners/detail/cut_support.hpp>
#include <irregular/distributed/partitioners/detail/pipelined_cut.hpp>
#include <irregular/distributed/partitioners/detail/window_cut.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/partition/balanced.hpp>
#include <irregular/partition/nicol_plus.hpp>
#include <irregular/partition/probe.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/operations.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace irregular {

/// How the chain is cut: `optimal` minimises the largest segment load exactly (the bottleneck
/// equals the sequential NicolPlus optimum of the same chain, and so do the separators when the
/// windows are gathered, see blocking_partition); `greedy` cuts at the prefix-sum thresholds
/// k·W/p in one pass (Lmax <= W/p + largest hnode load).
enum class BlockingCut { optimal, greedy };

/// A cut of the global chain: separators as global leaf positions, p+1 values from 0 to n
/// (replicated), and the segment loads.
struct ChainCut {
  std::vector<std::uint64_t> separators;  ///< p+1 global leaf positions, 0 to n (replicated)
  std::vector<double> loads;              ///< load of each segment
  double bottleneck = 0;                  ///< the largest segment load
  std::uint64_t first = 0;  ///< this rank's first leaf as a global position (not replicated)
  /// Lmax / Lavg - 1 (saule-bas-catalyurek §2); 0 when the total load is 0.
  [[nodiscard]] double imbalance() const {
    double total = 0;
    for (double l : loads) total += l;
    if (total <= 0) return 0;
    return bottleneck / (total / static_cast<double>(loads.size())) - 1;
  }
};

namespace detail {

/// The optimal cut from the distributed separator windows (see blocking_partition): the exact
/// search, the balanced separators, and one all_gather of both candidate cuts so that every
/// rank makes partition::detail::balance_or_greedy's choice alike. nullopt only when
/// rounding made the DirectCut bound infeasible (the caller then takes the pipelined probes).
/// Collective over comm.
template <class Bounds>
std::optional<ChainCut> distributed_window_cut(const boost::mpi::communicator& comm,
                                               const ChainPrefix& prefix,
                                               std::uint64_t first_global, std::uint64_t n_global,
                                               double W, double wmax, double ub, Bounds bounds,
                                               const detail::WindowPlan& plan,
                                               const std::vector<std::uint64_t>& recv,
                                               const CutCounter& count) {
  const auto up = static_cast<std::size_t>(comm.size());
  detail::Windows w = detail::exchange_windows(comm, prefix, first_global, plan, recv, count);
  if (count.s) {
    count.s->distributed = true;
    count.s->window = w.prev.g.size() + w.cur.g.size();
  }
  auto cost = [](std::size_t, double g0, double g1) { return g1 - g0; };
  detail::WindowSearch search(comm, std::move(w), up, W, cost, bounds, count);
  const double lb = std::max(0.0, std::max(W / static_cast<double>(up), wmax) -
                                      16 * std::numeric_limits<double>::epsilon() * W);
  if (!search.solve(std::min(lb, ub), ub, true)) return std::nullopt;
  const auto bal = detail::balanced_pass(comm, search, n_global, W, count);
  // Rank j's record: greedy s_j, balanced s_{j-1} and (rank p-1) balanced s_{p-1}, each with its
  // prefix.
  const auto& win = search.windows();
  auto g = [](std::uint64_t x, const detail::Window& v) {
    return x == detail::unmapped_position ? 0 : std::bit_cast<std::uint64_t>(v.at(x));
  };
  const std::array<std::uint64_t, 6> rec{
      search.separator(), g(search.separator(), win.cur), bal[0], g(bal[0], win.prev), bal[1],
      g(bal[1], win.cur)};
  std::vector<std::uint64_t> all(6 * up);
  boost::mpi::all_gather(comm, rec.data(), 6, all.data());
  count.collective(sizeof rec, sizeof rec * up);
  std::vector<std::size_t> R(up + 1, n_global), S(up + 1, n_global);
  std::vector<double> GR(up + 1, W), GS(up + 1, W);
  R[0] = S[0] = 0;
  GR[0] = GS[0] = 0;
  for (std::size_t j = 1; j < up; ++j) {
    R[j] = all[6 * j];
    GR[j] = std::bit_cast<double>(all[6 * j + 1]);
    const std::size_t from =
        j + 1 < up ? 6 * (j + 1) + 2 : 6 * j + 4;  // s_{p-1} is rank p-1's second
    S[j] = all[from];
    GS[j] = std::bit_cast<double>(all[from + 1]);
  }
  auto prefix_of = [](const std::vector<std::size_t>& s, const std::vector<double>& gs) {
    return [&s, &gs](std::size_t x) {
      return gs[static_cast<std::size_t>(std::upper_bound(s.begin(), s.end(), x) - s.begin()) - 1];
    };
  };
  bool greedy_empty = false;
  for (std::size_t k = 0; k < up; ++k) greedy_empty = greedy_empty || R[k] == R[k + 1];
  const bool greedy = up > 1 && !(n_global >= up && greedy_empty) &&
                      partition::detail::unevenness<double>(prefix_of(R, GR), up, R.data()) <
                          partition::detail::unevenness<double>(prefix_of(S, GS), up, S.data());
  const auto& seps = greedy ? R : S;
  const auto& gs = greedy ? GR : GS;
  ChainCut cut;
  cut.first = first_global;
  cut.bottleneck = search.bottleneck();
  cut.separators.assign(seps.begin(), seps.end());
  for (std::size_t k = 0; k < up; ++k) cut.loads.push_back(gs[k + 1] - gs[k]);
  return cut;
}

}  // namespace detail

/// Default bound on the window positions gathered on rank 0 (16 bytes each): a constant, so
/// rank 0's bytes do not grow with p; from it on the windows stay distributed.
inline constexpr std::uint64_t blocking_default_max_gathered = std::uint64_t{1} << 10;

/// Default bound on the window positions one rank receives on the distributed path: a few
/// times a rank's share of the chain plus O(p); beyond it the cut takes the pipelined probes.
inline std::uint64_t blocking_default_max_window(std::uint64_t n_global, int p) {
  const auto up = static_cast<std::uint64_t>(p);
  return 8 * (n_global / up) + 64 * up + 1024;
}

namespace detail {

/// The separators of window j for a bound b, widened by one delta per part so that a greedy
/// step from the top of window j-1 never passes the top of window j.
inline auto separator_window_bounds(double W, double delta, std::size_t up) {
  return [W, delta, up](std::size_t j, double b) {
    return std::array<double, 2>{
        W - static_cast<double>(up - j) * b - static_cast<double>(up - j + 1) * delta,
        static_cast<double>(j) * b + static_cast<double>(j + 1) * delta};
  };
}

/// The window positions this slice sends to rank 0, as local ranges [a, b), and how many.
struct WindowGather {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  std::uint64_t count = 0;
};

/// The blocking cut's phases on this rank's slice of the chain (see blocking_partition): the
/// global prefix sums, the greedy or DirectCut separators, the separator windows and their
/// gathered solution, and the cut assembled from separators.
struct BlockingChain {
  const boost::mpi::communicator& comm;
  ChainPrefix& prefix;
  const CutCounter& count;
  const int p, rank;
  const std::size_t up, n;                       // ranks, and leaves on this rank
  double W = 0, wmax = 0;                        // the chain's total and largest load
  std::uint64_t first_global = 0, n_global = 0;  // this rank's first leaf, the chain's length

  /// Global prefix sums: one all_gather of (count, total, max, first bad load + 1) per rank
  /// (O(p) numbers) gives every rank the offsets and the outcome of the validation (the lowest
  /// bad rank is named).
  BlockingChain(const boost::mpi::communicator& comm_, ChainPrefix& prefix_, std::size_t n_,
                const CutCounter& count_)
      : comm(comm_),
        prefix(prefix_),
        count(count_),
        p(comm_.size()),
        rank(comm_.rank()),
        up(static_cast<std::size_t>(p)),
        n(n_) {
    const std::uint64_t mine[4] = {
        static_cast<std::uint64_t>(n), std::bit_cast<std::uint64_t>(prefix.local_total()),
        std::bit_cast<std::uint64_t>(prefix.local_max()),
        prefix.bad() ? static_cast<std::uint64_t>(*prefix.bad()) + 1 : 0};
    std::vector<std::uint64_t> summary(4 * up);
    boost::mpi::all_gather(comm, mine, 4, summary.data());
    count.collective(sizeof mine, sizeof mine * up);
    for (std::size_t r = 0; r < up; ++r)
      if (summary[4 * r + 3] != 0)
        throw invalid_argument("irregular::blocking_partition: hnode load " +
                               std::to_string(summary[4 * r + 3] - 1) + " on rank " +
                               std::to_string(r) + " is negative or not finite");
    double offset = 0;
    for (int r = 0; r < p; ++r) {
      const auto cnt = summary[4 * static_cast<std::size_t>(r)];
      const double tot = std::bit_cast<double>(summary[4 * static_cast<std::size_t>(r) + 1]);
      if (r == rank) {
        offset = W;
        first_global = n_global;
      }
      W += tot;  // the same order on every rank: offsets and W agree bit for bit
      n_global += cnt;
      wmax = std::max(wmax, std::bit_cast<double>(summary[4 * static_cast<std::size_t>(r) + 2]));
    }
    prefix.set_offset(offset);  // prefix[n] = offset of the next rank, exactly
  }

  /// Greedy cut: part k starts at the first hnode whose prefix reaches k·W/p (this rank's
  /// separators, as global positions).
  [[nodiscard]] std::vector<std::uint64_t> greedy_separators() const {
    std::vector<std::uint64_t> my_cuts;
    for (int k = 1; k < p; ++k) {
      const double threshold = W * k / p;
      if (n == 0 || prefix[n] < threshold || prefix[0] >= threshold) continue;
      my_cuts.push_back(first_global +
                        static_cast<std::uint64_t>(prefix.lower_bound(1, n + 1, threshold)));
    }
    return my_cuts;
  }

  /// UB, the DirectCut (Miguet & Pierson) bottleneck, as partition::direct_cut_separators places
  /// it: separator k at y or y+1, y the last position with G[y] <= k·W/p, whichever prefix is
  /// nearer. The rank holding y (and y+1 in prefix[]) reports G at the separator; one all_reduce.
  [[nodiscard]] double direct_cut_bound() const {
    std::vector<double> dc(up + 1, -1.0), dc_all(up + 1);
    for (std::size_t k = 1; k < up && n > 0; ++k) {
      const double t = W * static_cast<double>(k) / static_cast<double>(p);
      if (!(prefix[0] <= t && prefix[n] > t)) continue;
      const std::size_t y = prefix.upper_bound(0, n + 1, t) - 1;
      dc[k] = (prefix[y + 1] - t) < (t - prefix[y]) ? prefix[y + 1] : prefix[y];
    }
    boost::mpi::all_reduce(comm, dc.data(), static_cast<int>(dc.size()), dc_all.data(),
                           boost::mpi::maximum<double>());
    count.collective(dc.size() * sizeof(double), dc.size() * sizeof(double));
    dc_all[0] = 0;
    dc_all[up] = W;
    double ub = 0;
    for (std::size_t k = 1; k <= up; ++k) {
      if (dc_all[k] < 0) dc_all[k] = W;  // no position at or below the target beyond n
      dc_all[k] = std::max(dc_all[k], dc_all[k - 1]);
      ub = std::max(ub, dc_all[k] - dc_all[k - 1]);
    }
    return ub;
  }

  /// Window positions of this slice for rank 0 (global position 0 is rank 0's to add). Both
  /// bounds grow with k, so the windows are merged in one sweep.
  [[nodiscard]] WindowGather window_gather(double ub, double delta) const {
    WindowGather g;
    if (n == 0) return g;
    std::size_t covered = first_global == 0 ? 1 : 0;  // local positions below are taken
    for (std::size_t k = 1; k < up; ++k) {
      const double lo = W - static_cast<double>(p - static_cast<int>(k)) * ub - delta;
      const double hi = static_cast<double>(k) * ub + delta;
      if (hi < prefix[0]) continue;
      if (lo > prefix[n - 1]) break;
      const std::size_t a = std::max(prefix.lower_bound(0, n, lo), covered),
                        b = prefix.upper_bound(0, n, hi);
      if (a < b) {
        g.ranges.emplace_back(a, b);
        g.count += b - a;
      }
      covered = std::max(covered, b);
    }
    return g;
  }

  /// The distributed windows under bound ub, and the sizes that the alltoall announces.
  template <class Bounds>
  [[nodiscard]] detail::WindowPlan window_plan(double ub, const Bounds& bounds) const {
    std::vector<double> wlo(up, 0.0), whi(up, 0.0);
    for (std::size_t j = 1; j < up; ++j) {
      const auto r = bounds(j, ub);
      wlo[j] = r[0];
      whi[j] = r[1];
    }
    return detail::WindowPlan(prefix, n + (rank == p - 1 ? 1 : 0), p, up, std::move(wlo),
                              std::move(whi));
  }

  /// The path: {window positions to gather in all, 1 when some rank would hold more than
  /// max_window positions}, from the alltoall's counts; one all_reduce.
  [[nodiscard]] std::array<std::uint64_t, 2> choose_path(const std::vector<std::uint64_t>& recv,
                                                         std::uint64_t gathered,
                                                         std::uint64_t max_window) const {
    std::uint64_t held = 0;
    for (std::size_t r = 0; r < up && rank > 0; ++r) held += recv[r] / 2;
    const std::uint64_t decide[2] = {gathered, held > max_window ? 1u : 0u};
    std::array<std::uint64_t, 2> decided;
    boost::mpi::all_reduce(comm, decide, 2, decided.data(), std::plus<std::uint64_t>());
    count.collective(sizeof decide, sizeof decided);
    return decided;
  }

  /// Rank 0 gathers the (position, prefix) pairs of every window (one gatherv): `total` pairs,
  /// rank r's share announced in recv[r]. Empty on the other ranks.
  [[nodiscard]] std::vector<double> gather_windows(const WindowGather& g, std::uint64_t total,
                                                   const std::vector<std::uint64_t>& recv) const {
    std::vector<double> win, all_win;
    for (auto [a, b] : g.ranges)
      prefix.each(a, b, [&](std::size_t x, double v) {
        win.push_back(std::bit_cast<double>(static_cast<std::uint64_t>(first_global + x)));
        win.push_back(v);
      });
    std::vector<int> sizes;
    if (rank == 0) {
      all_win.resize(2 * total);
      for (auto c : recv) sizes.push_back(static_cast<int>(c));
    }
    irregular::mpi::gatherv_raw(comm, std::span<const double>(win), std::span<double>(all_win),
                                std::span<const int>(sizes), 0);
    count.collective(win.size() * sizeof(double), rank == 0 ? all_win.size() * sizeof(double) : 0);
    return all_win;
  }

  /// Rank 0 solves the gathered window chain exactly: the reply is the bottleneck, p+1
  /// separators and p loads (as bits).
  [[nodiscard]] std::vector<std::uint64_t> solve_windows(std::vector<double>& all_win,
                                                         std::uint64_t total) const {
    std::vector<std::uint64_t> reply(2 * up + 2);
    std::vector<std::uint64_t> pos{0};
    std::vector<double> val{0.0};
    for (std::size_t i = 0; i < total; ++i) {
      pos.push_back(std::bit_cast<std::uint64_t>(all_win[2 * i]));
      val.push_back(all_win[2 * i + 1]);
    }
    if (n_global > 0) {
      pos.push_back(n_global);
      val.push_back(W);
    }
    std::vector<double>().swap(all_win);
    const std::size_t m = pos.size() - 1;
    const double best = partition::optimal_bottleneck(val.data(), 0, m, up);
    // Greedy (maximal) separators at the optimum: window positions, as in the full chain.
    std::vector<std::size_t> ends;
    [[maybe_unused]] const std::size_t parts =
        partition::greedy_parts(val.data(), 0, m, best, up, &ends);
    IRREGULAR_ASSERT(parts <= up);
    std::vector<std::size_t> R(up + 1, static_cast<std::size_t>(n_global)), seps(up + 1);
    R[0] = 0;
    for (std::size_t k = 0; k < ends.size(); ++k) R[k + 1] = static_cast<std::size_t>(pos[ends[k]]);
    // Balanced separators over the global positions. A position outside the windows reads
    // its left window neighbour's prefix: balance() only reads such positions left of
    // window k, where both values are below the target and infeasible alike.
    auto global_prefix = [&](std::size_t x) -> double {
      const auto it = std::upper_bound(pos.begin(), pos.end(), static_cast<std::uint64_t>(x));
      return val[static_cast<std::size_t>(it - pos.begin()) - 1];
    };
    partition::detail::balance_or_greedy<double>(global_prefix, static_cast<std::size_t>(n_global),
                                                 up, best, R.data(), seps.data());
    reply[0] = std::bit_cast<std::uint64_t>(best);
    for (std::size_t k = 0; k <= up; ++k) reply[1 + k] = seps[k];
    for (std::size_t k = 0; k < up; ++k)
      reply[up + 2 + k] =
          std::bit_cast<std::uint64_t>(global_prefix(seps[k + 1]) - global_prefix(seps[k]));
    return reply;
  }

  /// The gathered path: rank 0 gathers the windows, solves the window chain exactly and
  /// broadcasts the cut (one broadcast).
  [[nodiscard]] ChainCut gathered_window_cut(const WindowGather& g, std::uint64_t total,
                                             const std::vector<std::uint64_t>& recv) const {
    std::vector<double> all_win = gather_windows(g, total, recv);
    std::vector<std::uint64_t> reply =
        rank == 0 ? solve_windows(all_win, total) : std::vector<std::uint64_t>(2 * up + 2);
    boost::mpi::broadcast(comm, reply.data(), static_cast<int>(reply.size()), 0);
    count.collective(rank == 0 ? reply.size() * sizeof(std::uint64_t) : 0,
                     rank == 0 ? 0 : reply.size() * sizeof(std::uint64_t));
    if (count.s) {
      count.s->windowed = true;
      count.s->gathered = total;
    }
    ChainCut cut;
    cut.first = first_global;
    cut.bottleneck = std::bit_cast<double>(reply[0]);
    cut.separators.assign(reply.begin() + 1, reply.begin() + 2 + static_cast<std::ptrdiff_t>(up));
    for (std::size_t k = 0; k < up; ++k)
      cut.loads.push_back(std::bit_cast<double>(reply[up + 2 + k]));
    return cut;
  }

  /// The cut from every rank's separators (global positions it holds): one all_gather of the
  /// O(p) separators; a probe may use fewer than p parts, the rest stay empty at the end.
  /// Segment loads from the global prefix values at the separators: each rank contributes the
  /// prefix values it holds, one all_reduce.
  [[nodiscard]] ChainCut cut_at(const std::vector<std::uint64_t>& my_cuts) const {
    ChainCut cut;
    cut.first = first_global;
    std::vector<int> counts;
    const auto all =
        irregular::mpi::all_gather_raw(comm, std::span<const std::uint64_t>(my_cuts), counts);
    count.collective(my_cuts.size() * sizeof(std::uint64_t), up * sizeof(std::uint64_t));
    cut.separators.push_back(0);
    cut.separators.insert(cut.separators.end(), all.begin(), all.end());
    cut.separators.resize(std::min<std::size_t>(cut.separators.size(), up));
    while (cut.separators.size() < up + 1) cut.separators.push_back(n_global);
    std::vector<double> at(up + 1, 0.0), at_global(at.size());
    for (std::size_t k = 0; k < at.size(); ++k) {
      const std::uint64_t s = cut.separators[k];
      if (s >= first_global && s < first_global + n)
        at[k] = prefix[s - first_global];
      else if (s == n_global && rank == p - 1)
        at[k] = W;
    }
    boost::mpi::all_reduce(comm, at.data(), static_cast<int>(at.size()), at_global.data(),
                           std::plus<double>());
    count.collective(at.size() * sizeof(double), at.size() * sizeof(double));
    if (n_global > 0) at_global.back() = W;
    for (int k = 0; k < p; ++k) {
      const double l =
          at_global[static_cast<std::size_t>(k) + 1] - at_global[static_cast<std::size_t>(k)];
      cut.loads.push_back(l);
      cut.bottleneck = std::max(cut.bottleneck, l);
    }
    return cut;
  }
};

}  // namespace detail

/// Cuts the global chain of hnode loads into `comm.size()` segments. `local_loads` are this
/// rank's leaves in curve order (ranks hold consecutive parts of the chain in rank order).
///
/// Global prefix sums: one all_gather of (count, total, max) per rank (O(p) numbers) gives each
/// rank its offset; a position x of rank r has prefix G[x] = offset_r + (local running sum), so
/// neighbouring ranks agree on the prefix at their boundary. Integer-valued loads (below 2^53)
/// give exactly the sequential prefix sums; other doubles differ from a sequential summation by
/// the usual rounding, and the cost model is that of partition/ (a part costs the rounded
/// difference of its end prefixes).
///
/// `optimal` (Pinar & Aykanat's separator-index bounding): UB = the DirectCut bottleneck (one
/// all_reduce of p+1 prefix values). Every cut with parts <= B* <= UB has G[s_k] <= k·UB and
/// W - G[s_k] <= (p-k)·UB, so its separator k lies in the window of positions with prefix in
/// [W - (p-k)·UB, k·UB] (widened by a few ulps of W for rounding). The windows hold about
/// p·(UB - W/p) / mean load positions each, about 1.5·p² together for SFC leaf loads, so:
/// - while they total fewer than `max_gathered` positions (a constant, default 1024), rank 0
///   gathers them (one gatherv), solves the window chain with partition::optimal_bottleneck (its
///   optimum is the chain's: its cuts are cuts of the chain and the greedy optimal cut lies in
///   the windows), balances the greedy separators like partition::nicol_plus (every position
///   balance() reads is a window position, or left of window k where the answer does not depend
///   on the exact prefix) and broadcasts: 6 collectives, O(1) bytes;
/// - else rank j receives windows j-1 and j (one alltoallv: O(p) positions per rank on average),
///   and an exact bisection probes them (detail/window_cut.hpp): a probe composes the greedy
///   steps window j-1 -> window j by a tree scan (detail/position_scan.hpp), 2 ceil(log2(p-1))
///   rounds in which each rank sends at most four run-length maps of at most a window (pointer
///   doubling would send one per round, log p windows), plus one all_reduce of 3 doubles; a
///   feasible probe lowers UB to the bottleneck it realised, an infeasible one lifts LB to the
///   least cost that changes a part, so it ends on the optimum. The balanced separators follow
///   by one more scan right to left. 7 collectives plus one per probe;
/// - when one rank would receive more than `max_window` positions (default
///   blocking_default_max_window; skewed loads: a few huge
///   hnodes make UB large, so windows span most of the chain), the cut falls back to the same
///   search with probes pipelined along the ranks (p-1 hops per probe; greedy separators).
/// On the first two paths the bottleneck and the separators equal sequential NicolPlus's
/// (balanced separators) on the same prefix sums. stats says which path ran and what it cost.
///
/// Throws irregular::invalid_argument on every rank, naming the lowest bad rank, when any load
/// is negative or not finite (agreed through the first all_gather, nothing else is done).
/// Collective over comm.
inline ChainCut blocking_partition(const boost::mpi::communicator& comm,
                                   std::span<const double> local_loads,
                                   BlockingCut method = BlockingCut::optimal,
                                   BlockingCutStats* stats = nullptr,
                                   std::uint64_t max_gathered = blocking_default_max_gathered,
                                   std::uint64_t max_window = 0) {
  const detail::CutCounter count{stats};
  if (stats) *stats = BlockingCutStats{};
  // One pass validates the loads and sums them; one all_gather gives the global prefix sums.
  detail::ChainPrefix prefix(local_loads);
  const detail::BlockingChain chain(comm, prefix, local_loads.size(), count);
  const int p = chain.p;
  const double W = chain.W;
  if (max_window == 0) max_window = blocking_default_max_window(chain.n_global, p);
  if (method == BlockingCut::greedy) return chain.cut_at(chain.greedy_separators());

  const double ub = chain.direct_cut_bound();
  // delta covers the rounding of k·UB and of the p part costs summed (each within an ulp of W).
  const double delta =
      8 * std::numeric_limits<double>::epsilon() * (static_cast<double>(p) + 2) * W;
  const detail::WindowGather gather = chain.window_gather(ub, delta);
  const auto bounds = detail::separator_window_bounds(W, delta, chain.up);
  detail::WindowPlan plan = chain.window_plan(ub, bounds);
  plan.counts[0] = 2 * gather.count;  // rank 0 holds no window: its slot carries the gather size
  std::vector<std::uint64_t> recv(chain.up);
  boost::mpi::all_to_all(comm, plan.counts, recv);
  count.collective(chain.up * sizeof(std::uint64_t), chain.up * sizeof(std::uint64_t));
  const std::array<std::uint64_t, 2> decided = chain.choose_path(recv, gather.count, max_window);

  if (decided[0] < max_gathered) return chain.gathered_window_cut(gather, decided[0], recv);
  if (decided[1] == 0) {
    if (auto done = detail::distributed_window_cut(comm, prefix, chain.first_global, chain.n_global,
                                                   W, chain.wmax, ub, bounds, plan, recv, count))
      return *done;
  }
  return chain.cut_at(detail::pipelined_cut(comm, prefix, W, std::max(W / p, chain.wmax), ub,
                                            chain.first_global, count));
}

}  // namespace irregular
