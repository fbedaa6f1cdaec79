// Blocking partitioner: cuts the SFC visit Sq(v(sf)) of the leaves into p segments of
// consecutive hnodes with loads as close as possible to the average (baiardi-2001 §3, the range
// property). Distributed: the chain is never gathered; each rank scans its own part of the
// global prefix sums and the ranks exchange O(p) numbers.
#pragma once

#include <irregular/core/error.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace irregular {

/// How the chain is cut: `optimal` minimises the largest segment load exactly (the bottleneck
/// equals the sequential NicolPlus optimum of the same chain); `greedy` cuts at the prefix-sum
/// thresholds k·W/p in one pass (no pipeline; Lmax <= W/p + largest hnode load).
enum class BlockingCut { optimal, greedy };

/// A cut of the global chain: separators as global leaf positions, p+1 values from 0 to n
/// (replicated), and the segment loads.
struct ChainCut {
  std::vector<std::uint64_t> separators;
  std::vector<double> loads;
  double bottleneck = 0;
  [[nodiscard]] double imbalance() const {
    double total = 0;
    for (double l : loads) total += l;
    if (total <= 0) return 0;
    return bottleneck / (total / static_cast<double>(loads.size())) - 1;
  }
};

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

}  // namespace detail

/// Cuts the global chain of hnode loads into `comm.size()` segments. `local_loads` are this
/// rank's leaves in curve order (ranks hold consecutive parts of the chain in rank order).
/// Throws irregular::collective_error-compatible irregular::invalid_argument on every rank when
/// any load is negative or not finite. Collective over comm.
inline ChainCut blocking_partition(const boost::mpi::communicator& comm,
                                   std::span<const double> local_loads,
                                   BlockingCut method = BlockingCut::optimal) {
  const int p = comm.size();
  const int rank = comm.rank();
  // Validate first, agreeing on the outcome (the lowest bad rank is named).
  int bad = -1;
  std::size_t bad_index = 0;
  for (std::size_t i = 0; i < local_loads.size(); ++i)
    if (!(local_loads[i] >= 0) || !std::isfinite(local_loads[i])) { bad = rank; bad_index = i; break; }
  int first_bad = p;
  boost::mpi::all_reduce(comm, bad < 0 ? p : bad, first_bad, boost::mpi::minimum<int>());
  if (first_bad < p) {
    std::uint64_t idx = bad_index;
    boost::mpi::broadcast(comm, idx, first_bad);
    throw invalid_argument("irregular::blocking_partition: hnode load " + std::to_string(idx) +
                           " on rank " + std::to_string(first_bad) + " is negative or not finite");
  }

  // Global prefix sums: an exclusive scan of local totals, then a local scan.
  const std::size_t n = local_loads.size();
  std::vector<double> prefix(n + 1);
  double local_total = 0, local_max = 0;
  for (std::size_t i = 0; i < n; ++i) {
    local_total += local_loads[i];
    local_max = std::max(local_max, local_loads[i]);
  }
  // (count, total) of every rank: O(p) replicated numbers.
  std::vector<double> totals;
  std::vector<std::uint64_t> counts;
  boost::mpi::all_gather(comm, local_total, totals);
  boost::mpi::all_gather(comm, static_cast<std::uint64_t>(n), counts);
  double offset = 0;
  std::uint64_t first_global = 0, n_global = 0;
  for (int r = 0; r < p; ++r) {
    if (r < rank) { offset += totals[static_cast<std::size_t>(r)]; first_global += counts[static_cast<std::size_t>(r)]; }
    n_global += counts[static_cast<std::size_t>(r)];
  }
  double W = 0;
  for (double t : totals) W += t;
  prefix[0] = offset;
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + local_loads[i];
  double wmax = 0;
  boost::mpi::all_reduce(comm, local_max, wmax, boost::mpi::maximum<double>());

  std::vector<std::uint64_t> my_cuts;
  if (method == BlockingCut::greedy) {
    // Part k starts at the first hnode whose prefix reaches k·W/p.
    for (int k = 1; k < p; ++k) {
      const double threshold = W * k / p;
      if (n == 0 || prefix[n] < threshold || prefix[0] >= threshold) continue;
      const auto it = std::lower_bound(prefix.begin() + 1, prefix.end(), threshold);
      my_cuts.push_back(first_global + static_cast<std::uint64_t>(it - prefix.begin()));
    }
  } else {
    // Optimal bottleneck by parametric search over greedy probes (Nicol's characterisation:
    // an infeasible B lifts the lower bound to the least part extension, a feasible one lowers
    // the upper bound to the load it attained; both are interval sums, so it ends exactly).
    // A probe passes the carry along the ranks (O(p) hops, no chain gathered).
    auto probe = [&](double B, std::vector<std::uint64_t>* cuts) {
      detail::ProbeCarry c;
      if (rank > 0) comm.recv(rank - 1, 0, c);
      if (c.parts <= static_cast<std::uint64_t>(p)) detail::probe_slice(prefix, B, static_cast<std::uint64_t>(p), c, cuts, first_global);
      if (rank + 1 < p) comm.send(rank + 1, 0, c);
      // The last rank closes the final part and tells everyone.
      if (rank == p - 1) c.attained = std::max(c.attained, W - c.part_start);
      boost::mpi::broadcast(comm, c, p - 1);
      return c;
    };
    // With floating-point loads a part's computed load and the greedy comparison can round
    // differently, so every step forces progress, the search is capped, and the final cut
    // falls back to the last bottleneck whose probe succeeded.
    const auto fits = [p](const detail::ProbeCarry& c) { return c.parts <= static_cast<std::uint64_t>(p); };
    double lo = std::max(W / p, wmax), hi = std::max(lo, W / p + wmax);
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

  // Gather the O(p) cuts; a probe may use fewer than p parts, the rest stay empty at the end.
  std::vector<std::vector<std::uint64_t>> all;
  boost::mpi::all_gather(comm, my_cuts, all);
  ChainCut cut;
  cut.separators.push_back(0);
  for (const auto& v : all) cut.separators.insert(cut.separators.end(), v.begin(), v.end());
  cut.separators.resize(std::min<std::size_t>(cut.separators.size(), static_cast<std::size_t>(p)));
  while (cut.separators.size() < static_cast<std::size_t>(p) + 1) cut.separators.push_back(n_global);
  // Segment loads from the global prefix values at the separators: each rank contributes the
  // prefix values it holds, one all_reduce.
  std::vector<double> at(static_cast<std::size_t>(p) + 1, 0.0), at_global(at.size());
  for (std::size_t k = 0; k < at.size(); ++k) {
    const std::uint64_t s = cut.separators[k];
    if (s >= first_global && s < first_global + n) at[k] = prefix[s - first_global];
    else if (s == n_global && rank == p - 1) at[k] = W;
  }
  boost::mpi::all_reduce(comm, at.data(), static_cast<int>(at.size()), at_global.data(), std::plus<double>());
  if (n_global > 0) at_global.back() = W;
  for (int k = 0; k < p; ++k) {
    const double l = at_global[static_cast<std::size_t>(k) + 1] - at_global[static_cast<std::size_t>(k)];
    cut.loads.push_back(l);
    cut.bottleneck = std::max(cut.bottleneck, l);
  }
  return cut;
}

}  // namespace irregular
