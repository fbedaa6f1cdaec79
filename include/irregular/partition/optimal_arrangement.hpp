// The arrangement of largest overlap (kaddoura-ranka §3.4's problem solved exactly): dynamic
// programming over subsets, O(2^p p). The blocks placed first are a set S whose sizes fix where
// the next block starts, so best(S) = max over r in S of best(S - r) + overlap of r at sum(S - r).
// The oracle for MinimizeCostRedistribution on small p, and best_arrangement: this exact answer
// where it is cheap, the paper's heuristic beyond.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/partition/minimize_cost_redistribution.hpp>
#include <irregular/partition/redistribution.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace irregular::partition {

/// Largest p optimal_arrangement accepts (2^p states of 12 bytes).
inline constexpr std::size_t optimal_arrangement_max_processors = 20;

/// An arrangement of largest overlap. Throws irregular::invalid_argument for more than
/// optimal_arrangement_max_processors processors.
[[nodiscard]] inline std::vector<int> optimal_arrangement(const Redistribution& inst) {
  const std::size_t p = inst.processors();
  if (p > optimal_arrangement_max_processors)
    throw invalid_argument("irregular::partition::optimal_arrangement: " + std::to_string(p) +
                           " processors exceed the limit of " +
                           std::to_string(optimal_arrangement_max_processors));
  const std::size_t states = std::size_t{1} << p;
  std::vector<std::uint64_t> best(states, 0), sum(states, 0);
  std::vector<std::uint8_t> last(states, 0);
  for (std::size_t s = 1; s < states; ++s) {
    const std::size_t low = static_cast<std::size_t>(__builtin_ctzll(s));
    sum[s] = sum[s & (s - 1)] + inst.new_size(static_cast<int>(low));
    bool first = true;
    for (std::size_t r = 0; r < p; ++r) {
      const std::size_t bit = std::size_t{1} << r;
      if (!(s & bit)) continue;
      const std::size_t before = s ^ bit;
      const std::uint64_t v = best[before] + inst.overlap_at(static_cast<int>(r), sum[before]);
      if (first || v > best[s]) {
        best[s] = v;
        last[s] = static_cast<std::uint8_t>(r);
        first = false;
      }
    }
  }
  std::vector<int> order(p);
  for (std::size_t s = states - 1, k = p; k-- > 0;) {
    order[k] = last[s];
    s ^= std::size_t{1} << last[s];
  }
  return order;
}

/// Largest p for which best_arrangement solves exactly: optimal_arrangement takes at most about
/// 1 ms up to here (bench_rebalance --arrangements; bench/results/rebalance.md, *Arrangements*).
inline constexpr std::size_t best_arrangement_exact_max_processors = 13;

/// The arrangement of largest overlap the cost allows: optimal_arrangement for at most
/// `exact_max` processors, else MinimizeCostRedistribution from the old arrangement. The
/// heuristic alone is no substitute where the optimum is cheap: on random instances it keeps as
/// little as 0.6 of the optimal overlap at p = 5, and 53 of 64 on the paper's own example.
/// Throws irregular::invalid_argument when exact_max exceeds optimal_arrangement's limit.
[[nodiscard]] inline std::vector<int> best_arrangement(
    const Redistribution& inst, std::size_t exact_max = best_arrangement_exact_max_processors) {
  if (exact_max > optimal_arrangement_max_processors)
    throw invalid_argument("irregular::partition::best_arrangement: exact_max " +
                           std::to_string(exact_max) + " exceeds optimal_arrangement's limit of " +
                           std::to_string(optimal_arrangement_max_processors));
  if (inst.processors() <= exact_max) return optimal_arrangement(inst);
  return minimize_cost_redistribution(inst, inst.old_order());
}

}  // namespace irregular::partition
