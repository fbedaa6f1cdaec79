// The pipelined fallback of the optimal blocking cut: Nicol's parametric search where each
// greedy probe passes its carry from rank to rank along the chain (p - 1 hops per probe). Used
// only when the separator windows are too large to distribute (blocking_partitioner.hpp).
#pragma once

#include <irregular/distributed/partitioners/detail/cut_support.hpp>
#include <irregular/mpi/operations.hpp>

#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace irregular::detail {

/// What a greedy probe with bottleneck B carries from rank to rank along the chain.
struct ProbeCarry {
  double part_start = 0;    // global prefix value where the current part began
  std::uint64_t parts = 1;  // parts opened so far (the current one included)
  double attained = 0;      // largest closed part load
  double extension =
      std::numeric_limits<double>::infinity();  // least load that would have let a part grow
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& part_start& parts& attained& extension;
  }
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
    const auto it =
        std::upper_bound(prefix.begin() + static_cast<std::ptrdiff_t>(j) + 1, prefix.end(), limit);
    const auto s = static_cast<std::size_t>(it - prefix.begin()) - 1;
    if (s == n) break;                          // the part runs past this rank's slice
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

/// The greedy separators (global positions this rank holds) of an optimal cut, by parametric
/// search over pipelined probes (Nicol's characterisation: an infeasible B lifts the lower bound
/// to the least part extension, a feasible one lowers the upper bound to the load it attained;
/// both are interval sums, so it ends exactly). lo and hi bound the optimum. Collective over comm.
inline std::vector<std::uint64_t> pipelined_cut(const boost::mpi::communicator& comm,
                                                const ChainPrefix& prefix, double W, double lo,
                                                double hi, std::uint64_t first_global,
                                                const CutCounter& count) {
  const int p = comm.size(), rank = comm.rank();
  std::vector<std::uint64_t> my_cuts;
  const std::vector<double> all_prefix = prefix.values();
  auto probe = [&](double B, std::vector<std::uint64_t>* cuts) {
    ProbeCarry c;
    if (count.s) {
      ++count.s->probes;
      count.s->rounds += static_cast<std::size_t>(p - 1);
    }
    if (rank > 0) {
      irregular::mpi::recv_value(comm, rank - 1, 0, c);
      count.hop(sizeof c, false);
    }
    if (c.parts <= static_cast<std::uint64_t>(p))
      probe_slice(all_prefix, B, static_cast<std::uint64_t>(p), c, cuts, first_global);
    if (rank + 1 < p) {
      irregular::mpi::send_value(comm, rank + 1, 0, c);
      count.hop(sizeof c, true);
    }
    // The last rank closes the final part and tells everyone.
    if (rank == p - 1) c.attained = std::max(c.attained, W - c.part_start);
    irregular::mpi::broadcast_value(comm, c, p - 1);
    count.collective(rank == p - 1 ? sizeof c : 0, rank == p - 1 ? 0 : sizeof c);
    return c;
  };
  // With floating-point loads a part's computed load and the greedy comparison can round
  // differently, so every step forces progress, the search is capped, and the final cut
  // falls back to the last bottleneck whose probe succeeded.
  const auto fits = [p](const ProbeCarry& c) { return c.parts <= static_cast<std::uint64_t>(p); };
  hi = std::max(lo, hi);
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
  return my_cuts;
}

}  // namespace irregular::detail
