// Blocking partitioner: cuts the SFC visit Sq(v(sf)) of the leaves into p segments of
// consecutive hnodes with loads as close as possible to the average (baiardi-2001 §3, the range
// property). Distributed optimal cut: Pinar & Aykanat's separator-index windows (as cited in
// saule-bas-catalyurek §2.2) around a DirectCut upper bound; the windows alone, never the chain,
// meet on rank 0, which runs the sequential NicolPlus engine. A constant number of collectives.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/error.hpp>
#include <irregular/partition/balanced.hpp>
#include <irregular/partition/nicol_plus.hpp>
#include <irregular/partition/probe.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

#include <algorithm>
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
  std::vector<std::uint64_t> separators;
  std::vector<double> loads;
  double bottleneck = 0;
  std::uint64_t first = 0;  ///< this rank's first leaf as a global position (not replicated)
  [[nodiscard]] double imbalance() const {
    double total = 0;
    for (double l : loads) total += l;
    if (total <= 0) return 0;
    return bottleneck / (total / static_cast<double>(loads.size())) - 1;
  }
};

/// What one blocking_partition call cost this rank (optional out-parameter, for tests and
/// benchmarks). Collective rounds are counted per call of an MPI collective; point-to-point
/// hops only occur on the pipelined fallback.
struct BlockingCutStats {
  std::size_t collectives = 0;      // MPI collective calls made by this rank
  std::size_t point_to_point = 0;   // sends + receives (pipelined fallback only)
  std::size_t bytes_sent = 0;       // payload this rank contributed
  std::size_t bytes_received = 0;   // payload this rank received
  std::size_t probes = 0;           // pipelined probes (fallback only)
  std::uint64_t gathered = 0;       // window positions gathered on rank 0
  bool windowed = false;            // the optimal cut came from the gathered windows
};

/// Default bound on the window positions gathered on rank 0 (16 bytes each): beyond it the
/// optimal cut falls back to pipelined probes.
inline std::uint64_t blocking_default_max_gathered(int p) {
  return std::max<std::uint64_t>(std::uint64_t{1} << 21, 64 * static_cast<std::uint64_t>(p));
}

namespace detail {

/// What a greedy probe with bottleneck B carries from rank to rank along the chain.
struct ProbeCarry {
  double part_start = 0;    // global prefix value where the current part began
  std::uint64_t parts = 1;  // parts opened so far (the current one included)
  double attained = 0;      // largest closed part load
  double extension = std::numeric_limits<double>::infinity();  // least load that would have let a part grow
  template <class Archive>
  void serialize(Archive& ar, unsigned) { ar & part_start & parts & attained & extension; }
};

/// Greedy probe over this rank's slice of the prefix sums: every part takes the longest run of
/// hnodes with load <= B. prefix has n_local+1 global values (prefix[0] = offset).
/// Appends the positions (local leaf indices) where new parts start to `cuts` when given.
inline void probe_slice(std::span<const double> prefix, double B, std::uint64_t max_parts,
                        ProbeCarry& c, std::vector<std::uint64_t>* cuts,
                        std::uint64_t first_global) {
  std::size_t j = 0;
  const std::size_t n = prefix.size() - 1;
  const auto infeasible = std::numeric_limits<std::uint64_t>::max() / 2;
  while (j < n) {
    // Largest s in [j, n] with prefix[s] - part_start <= B; prefix is non-decreasing.
    const double limit = c.part_start + B;
    const auto it = std::upper_bound(prefix.begin() + static_cast<std::ptrdiff_t>(j) + 1, prefix.end(), limit);
    const auto s = static_cast<std::size_t>(it - prefix.begin()) - 1;
    if (s == n) break;  // the part runs past this rank's slice
    if (s == j && prefix[j] == c.part_start) {  // hnode j alone exceeds B (only by rounding)
      c.extension = std::min(c.extension, prefix[j + 1] - c.part_start);
      c.parts = infeasible;
      return;
    }
    // The part closes before hnode s, which does not fit; a new part starts at s. The least
    // extension over the first p parts is a valid lower bound on the optimum (Nicol 1994).
    c.attained = std::max(c.attained, prefix[s] - c.part_start);
    c.extension = std::min(c.extension, prefix[s + 1] - c.part_start);
    c.part_start = prefix[s];
    if (++c.parts > max_parts) return;
    if (cuts) cuts->push_back(first_global + s);
    j = s;
  }
}

/// The global prefix sums of this rank's slice of the chain, G[x] = offset + S[x] for x in
/// [0, n], S[x] the sequential running sum of the first x local loads. One pass keeps S only at
/// every block start (no O(n) array is written, no second pass adds the offset); S[x] is its
/// block's value plus the loads before x in the block, added in the same order, so every G[x]
/// equals the sequential prefix sum bit for bit, whatever the loads.
class ChainPrefix {
 public:
  static constexpr std::size_t block = 64;

  /// One pass over the loads: running sum, maximum and validity (minimum, NaN and infinity
  /// show in the sum); only a bad pass looks for the first negative or non-finite load.
  explicit ChainPrefix(std::span<const double> loads) : loads_(loads), n_(loads.size()) {
    blocks_.resize(n_ / block + 1);
    const Pass r = pass(loads.data(), n_, blocks_.data());
    const double run = r.run, lo[2] = {r.lo0, r.lo1}, hi[2] = {r.hi0, r.hi1};
    total_ = run;
    max_ = std::max(hi[0], hi[1]);
    if (!(std::min(lo[0], lo[1]) >= 0) || !std::isfinite(run)) {
      for (std::size_t i = 0; i < n_; ++i)
        if (!(loads[i] >= 0) || !std::isfinite(loads[i])) {
          bad_ = i;
          break;
        }
    }
  }

  struct Pass {
    double run, lo0, lo1, hi0, hi1;
  };
  /// The running sum (stored at every block start), minimum and maximum of in[0, n).
  static Pass pass(const double* in, std::size_t n, double* starts) noexcept {
    double run = 0, lo0 = 0, lo1 = 0, hi0 = 0, hi1 = 0;
    for (std::size_t b0 = 0, j = 0; b0 < n; b0 += block, ++j) {
      starts[j] = run;
      const std::size_t b1 = std::min(n, b0 + block);
      std::size_t i = b0;
      for (; i + 2 <= b1; i += 2) {  // the chain of adds is the bound; min and max ride along
        const double u = in[i], v = in[i + 1];
        run += u;
        run += v;
        lo0 = u < lo0 ? u : lo0;
        lo1 = v < lo1 ? v : lo1;
        hi0 = hi0 < u ? u : hi0;
        hi1 = hi1 < v ? v : hi1;
      }
      if (i < b1) {
        const double u = in[i];
        run += u;
        lo0 = u < lo0 ? u : lo0;
        hi0 = hi0 < u ? u : hi0;
      }
    }
    if (n % block == 0) starts[n / block] = run;
    return {run, lo0, lo1, hi0, hi1};
  }

  /// The first negative or non-finite load, if any (then nothing else is computed).
  [[nodiscard]] std::optional<std::size_t> bad() const { return bad_; }
  [[nodiscard]] double local_total() const noexcept { return total_; }
  [[nodiscard]] double local_max() const noexcept { return max_; }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }

  /// The global offset of this rank's slice (the totals of the ranks before, summed in order).
  void set_offset(double offset) noexcept { offset_ = offset; }

  /// G[x], x in [0, n].
  [[nodiscard]] double operator[](std::size_t x) const { return offset_ + local(x); }

  /// The first x in [lo, hi) whose G[x] satisfies pred (monotone: false, then true), hi if none.
  template <class Pred>
  [[nodiscard]] std::size_t first(std::size_t lo, std::size_t hi, Pred pred) const {
    if (lo >= hi) return hi;
    // Block starts j·block in [lo, hi): the first that satisfies pred bounds the scan.
    const std::size_t jl = (lo + block - 1) / block, jh = (hi + block - 1) / block;
    std::size_t j = jl, count = jh - jl;
    while (count > 0) {
      const std::size_t step = count / 2, mid = j + step;
      if (!pred(offset_ + blocks_[mid])) {
        j = mid + 1;
        count -= step + 1;
      } else {
        count = step;
      }
    }
    const std::size_t start = j == jl ? lo : (j - 1) * block, end = j < jh ? j * block : hi;
    double s = local(start);
    for (std::size_t x = start; x < end; ++x) {
      if (pred(offset_ + s)) return x;
      if (x < n_) s += loads_[x];
    }
    return end;
  }
  /// std::lower_bound / std::upper_bound over G[lo, hi).
  [[nodiscard]] std::size_t lower_bound(std::size_t lo, std::size_t hi, double t) const {
    return first(lo, hi, [t](double v) { return !(v < t); });
  }
  [[nodiscard]] std::size_t upper_bound(std::size_t lo, std::size_t hi, double t) const {
    return first(lo, hi, [t](double v) { return t < v; });
  }
  /// f(x, G[x]) for x in [lo, hi), in order.
  template <class F>
  void each(std::size_t lo, std::size_t hi, F&& f) const {
    if (lo >= hi) return;
    double s = local(lo);
    for (std::size_t x = lo; x < hi; ++x) {
      f(x, offset_ + s);
      if (x < n_) s += loads_[x];
    }
  }

  /// Every G[x] (the pipelined fallback probes read them all).
  [[nodiscard]] std::vector<double> values() const {
    std::vector<double> out;
    out.reserve(n_ + 1);
    each(0, n_ + 1, [&out](std::size_t, double g) { out.push_back(g); });
    return out;
  }

 private:
  /// S[x]: the block's running sum, continued in order.
  [[nodiscard]] double local(std::size_t x) const {
    const std::size_t j = x / block;
    double s = blocks_[j];
    for (std::size_t i = j * block; i < x; ++i) s += loads_[i];
    return s;
  }

  std::span<const double> loads_;
  std::size_t n_;
  std::vector<double> blocks_;  // S at every block start (and at n when n is one)
  double offset_ = 0, total_ = 0, max_ = 0;
  std::optional<std::size_t> bad_;
};

/// Counts collectives and payload into an optional BlockingCutStats.
struct CutCounter {
  BlockingCutStats* s;
  void collective(std::size_t sent, std::size_t received) const {
    if (!s) return;
    ++s->collectives;
    s->bytes_sent += sent;
    s->bytes_received += received;
  }
  void hop(std::size_t bytes, bool send) const {
    if (!s) return;
    ++s->point_to_point;
    (send ? s->bytes_sent : s->bytes_received) += bytes;
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
/// [W - (p-k)·UB, k·UB] (widened by a few ulps of W for rounding). Each rank sends the
/// (position, prefix) pairs of its window positions to rank 0 (one gatherv); rank 0 solves the
/// window chain with partition::optimal_bottleneck (the window chain's optimum equals the full
/// chain's: its cuts are cuts of the chain and the greedy optimal cut lies in the windows),
/// takes the greedy separators at the optimum, balances them like partition::nicol_plus
/// (balanced_separators: every position balance() reads is a window position, or left of
/// window k where the answer does not depend on the exact prefix), and broadcasts the
/// separators and loads. Six collectives whatever p: O(log p) latency with tree collectives;
/// O(p) replicated numbers; rank 0 briefly holds the windows (about p·(UB - W/p) / mean load
/// positions per window). When they exceed max_gathered (skewed loads: a few huge hnodes make
/// UB large, so windows span most of the chain; or long zero-load runs) the cut falls back to
/// the parametric search with pipelined probes (p hops per probe, greedy-leftmost separators);
/// stats->windowed says which path ran.
///
/// Throws irregular::collective_error-compatible irregular::invalid_argument on every rank when
/// any load is negative or not finite. Collective over comm.
inline ChainCut blocking_partition(const boost::mpi::communicator& comm,
                                   std::span<const double> local_loads,
                                   BlockingCut method = BlockingCut::optimal,
                                   BlockingCutStats* stats = nullptr,
                                   std::uint64_t max_gathered = 0) {
  const int p = comm.size();
  const int rank = comm.rank();
  const auto up = static_cast<std::size_t>(p);
  const detail::CutCounter count{stats};
  if (stats) *stats = BlockingCutStats{};
  if (max_gathered == 0) max_gathered = blocking_default_max_gathered(p);
  // One pass validates the loads and sums them (detail::ChainPrefix); one all_gather of
  // (count, total, max, first bad load + 1) per rank (O(p) numbers) gives every rank the offsets
  // and the outcome of the validation (the lowest bad rank is named).
  const std::size_t n = local_loads.size();
  detail::ChainPrefix prefix(local_loads);
  const std::uint64_t mine[4] = {static_cast<std::uint64_t>(n), std::bit_cast<std::uint64_t>(prefix.local_total()),
                                 std::bit_cast<std::uint64_t>(prefix.local_max()),
                                 prefix.bad() ? static_cast<std::uint64_t>(*prefix.bad()) + 1 : 0};
  std::vector<std::uint64_t> summary(4 * up);
  boost::mpi::all_gather(comm, mine, 4, summary.data());
  count.collective(sizeof mine, sizeof mine * up);
  for (std::size_t r = 0; r < up; ++r)
    if (summary[4 * r + 3] != 0)
      throw invalid_argument("irregular::blocking_partition: hnode load " + std::to_string(summary[4 * r + 3] - 1) +
                             " on rank " + std::to_string(r) + " is negative or not finite");
  double offset = 0, W = 0, wmax = 0;
  std::uint64_t first_global = 0, n_global = 0;
  for (int r = 0; r < p; ++r) {
    const auto cnt = summary[4 * static_cast<std::size_t>(r)];
    const double tot = std::bit_cast<double>(summary[4 * static_cast<std::size_t>(r) + 1]);
    if (r == rank) { offset = W; first_global = n_global; }
    W += tot;  // the same order on every rank: offsets and W agree bit for bit
    n_global += cnt;
    wmax = std::max(wmax, std::bit_cast<double>(summary[4 * static_cast<std::size_t>(r) + 2]));
  }
  prefix.set_offset(offset);  // prefix[n] = offset of the next rank, exactly

  ChainCut cut;
  cut.first = first_global;
  std::vector<std::uint64_t> my_cuts;
  bool done = false;
  if (method == BlockingCut::greedy) {
    // Part k starts at the first hnode whose prefix reaches k·W/p.
    for (int k = 1; k < p; ++k) {
      const double threshold = W * k / p;
      if (n == 0 || prefix[n] < threshold || prefix[0] >= threshold) continue;
      my_cuts.push_back(first_global + static_cast<std::uint64_t>(prefix.lower_bound(1, n + 1, threshold)));
    }
  } else {
    // DirectCut (Miguet & Pierson) as partition::direct_cut_separators places it: separator k
    // at y or y+1, y the last position with G[y] <= k·W/p, whichever prefix is nearer. The rank
    // holding y (and y+1 in prefix[]) reports G at the separator; UB is the largest part.
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

    // Window positions of this slice (global position 0 is rank 0's to add). Both bounds grow
    // with k, so the windows are merged in one sweep. delta covers the rounding of k·UB and of
    // the p part costs summed (each within an ulp of W).
    const double delta = 8 * std::numeric_limits<double>::epsilon() * (static_cast<double>(p) + 2) * W;
    std::vector<double> win;  // (position bit-cast, prefix) pairs
    if (n > 0) {
      std::size_t covered = first_global == 0 ? 1 : 0;  // local positions below are taken
      for (std::size_t k = 1; k < up; ++k) {
        const double lo = W - static_cast<double>(p - static_cast<int>(k)) * ub - delta;
        const double hi = static_cast<double>(k) * ub + delta;
        if (hi < prefix[0]) continue;
        if (lo > prefix[n - 1]) break;
        const std::size_t a = prefix.lower_bound(0, n, lo), b = prefix.upper_bound(0, n, hi);
        prefix.each(std::max(a, covered), b, [&](std::size_t x, double g) {
          win.push_back(std::bit_cast<double>(static_cast<std::uint64_t>(first_global + x)));
          win.push_back(g);
        });
        covered = std::max(covered, b);
      }
    }
    const auto my_count = static_cast<std::uint64_t>(win.size() / 2);
    std::vector<std::uint64_t> counts;
    boost::mpi::all_gather(comm, my_count, counts);
    count.collective(sizeof my_count, sizeof my_count * up);
    std::uint64_t total_win = 0;
    for (auto c : counts) total_win += c;

    if (total_win <= max_gathered) {
      // Rank 0 gathers the windows and solves the window chain exactly.
      std::vector<double> all_win;
      std::vector<int> sizes, displs;
      if (rank == 0) {
        all_win.resize(2 * total_win);
        int at = 0;
        for (auto c : counts) {
          sizes.push_back(static_cast<int>(2 * c));
          displs.push_back(at);
          at += static_cast<int>(2 * c);
        }
        boost::mpi::gatherv(comm, win, all_win.data(), sizes, displs, 0);
      } else {
        boost::mpi::gatherv(comm, win, 0);
      }
      count.collective(win.size() * sizeof(double), rank == 0 ? all_win.size() * sizeof(double) : 0);
      // The reply: bottleneck, p+1 separators, p loads, one broadcast.
      std::vector<std::uint64_t> reply(2 * up + 2);
      if (rank == 0) {
        std::vector<std::uint64_t> pos{0};
        std::vector<double> val{0.0};
        for (std::size_t i = 0; i < total_win; ++i) {
          pos.push_back(std::bit_cast<std::uint64_t>(all_win[2 * i]));
          val.push_back(all_win[2 * i + 1]);
        }
        if (n_global > 0) { pos.push_back(n_global); val.push_back(W); }
        std::vector<double>().swap(all_win);
        const std::size_t m = pos.size() - 1;
        const double best = partition::optimal_bottleneck(val.data(), 0, m, up);
        // Greedy (maximal) separators at the optimum: window positions, as in the full chain.
        std::vector<std::size_t> ends;
        [[maybe_unused]] const std::size_t parts = partition::greedy_parts(val.data(), 0, m, best, up, &ends);
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
        partition::detail_bal::balance_or_greedy<double>(global_prefix, static_cast<std::size_t>(n_global), up, best,
                                                         R.data(), seps.data());
        reply[0] = std::bit_cast<std::uint64_t>(best);
        for (std::size_t k = 0; k <= up; ++k) reply[1 + k] = seps[k];
        for (std::size_t k = 0; k < up; ++k)
          reply[up + 2 + k] = std::bit_cast<std::uint64_t>(global_prefix(seps[k + 1]) - global_prefix(seps[k]));
      }
      boost::mpi::broadcast(comm, reply.data(), static_cast<int>(reply.size()), 0);
      count.collective(rank == 0 ? reply.size() * sizeof(std::uint64_t) : 0,
                       rank == 0 ? 0 : reply.size() * sizeof(std::uint64_t));
      if (stats) { stats->windowed = true; stats->gathered = total_win; }
      cut.bottleneck = std::bit_cast<double>(reply[0]);
      cut.separators.assign(reply.begin() + 1, reply.begin() + 2 + static_cast<std::ptrdiff_t>(up));
      for (std::size_t k = 0; k < up; ++k) cut.loads.push_back(std::bit_cast<double>(reply[up + 2 + k]));
      done = true;
    } else {
      // Fallback: optimal bottleneck by parametric search over greedy probes (Nicol's
      // characterisation: an infeasible B lifts the lower bound to the least part extension, a
      // feasible one lowers the upper bound to the load it attained; both are interval sums, so
      // it ends exactly). A probe passes the carry along the ranks (p hops).
      const std::vector<double> all_prefix = prefix.values();
      auto probe = [&](double B, std::vector<std::uint64_t>* cuts) {
        detail::ProbeCarry c;
        if (stats) ++stats->probes;
        if (rank > 0) { comm.recv(rank - 1, 0, c); count.hop(sizeof c, false); }
        if (c.parts <= static_cast<std::uint64_t>(p)) detail::probe_slice(all_prefix, B, static_cast<std::uint64_t>(p), c, cuts, first_global);
        if (rank + 1 < p) { comm.send(rank + 1, 0, c); count.hop(sizeof c, true); }
        // The last rank closes the final part and tells everyone.
        if (rank == p - 1) c.attained = std::max(c.attained, W - c.part_start);
        boost::mpi::broadcast(comm, c, p - 1);
        count.collective(rank == p - 1 ? sizeof c : 0, rank == p - 1 ? 0 : sizeof c);
        return c;
      };
      // With floating-point loads a part's computed load and the greedy comparison can round
      // differently, so every step forces progress, the search is capped, and the final cut
      // falls back to the last bottleneck whose probe succeeded.
      const auto fits = [p](const detail::ProbeCarry& c) { return c.parts <= static_cast<std::uint64_t>(p); };
      double lo = std::max(W / p, wmax), hi = std::max(lo, ub);
      while (!fits(probe(hi, nullptr))) hi = hi * 2 + 1;  // only rounding can make this loop
      double best = hi;
      for (int iter = 0; lo < hi && iter < 400; ++iter) {
        double mid = lo + (hi - lo) / 2;
        if (!(mid > lo && mid < hi)) mid = lo;
        const auto c = probe(mid, nullptr);
        if (fits(c)) {
          best = mid;
          hi = std::min(mid, c.attained);
        } else {
          lo = std::max(c.extension, std::nextafter(mid, std::numeric_limits<double>::infinity()));
        }
      }
      if (!fits(probe(hi, &my_cuts))) {
        my_cuts.clear();
        (void)probe(best, &my_cuts);
      }
    }
  }
  if (done) return cut;

  // Gather the O(p) cuts; a probe may use fewer than p parts, the rest stay empty at the end.
  std::vector<std::vector<std::uint64_t>> all;
  boost::mpi::all_gather(comm, my_cuts, all);
  count.collective(my_cuts.size() * sizeof(std::uint64_t), up * sizeof(std::uint64_t));
  cut.separators.push_back(0);
  for (const auto& v : all) cut.separators.insert(cut.separators.end(), v.begin(), v.end());
  cut.separators.resize(std::min<std::size_t>(cut.separators.size(), up));
  while (cut.separators.size() < up + 1) cut.separators.push_back(n_global);
  // Segment loads from the global prefix values at the separators: each rank contributes the
  // prefix values it holds, one all_reduce.
  std::vector<double> at(up + 1, 0.0), at_global(at.size());
  for (std::size_t k = 0; k < at.size(); ++k) {
    const std::uint64_t s = cut.separators[k];
    if (s >= first_global && s < first_global + n) at[k] = prefix[s - first_global];
    else if (s == n_global && rank == p - 1) at[k] = W;
  }
  boost::mpi::all_reduce(comm, at.data(), static_cast<int>(at.size()), at_global.data(), std::plus<double>());
  count.collective(at.size() * sizeof(double), at.size() * sizeof(double));
  if (n_global > 0) at_global.back() = W;
  for (int k = 0; k < p; ++k) {
    const double l = at_global[static_cast<std::size_t>(k) + 1] - at_global[static_cast<std::size_t>(k)];
    cut.loads.push_back(l);
    cut.bottleneck = std::max(cut.bottleneck, l);
  }
  return cut;
}

}  // namespace irregular
