// Thin adapter from the rectangular partitioners to the 1D engine of partition/ (nicol_plus.hpp:
// optimal_bottleneck): a chain is a callable prefix view pre(x) of a stripe, cut on [lo, hi).
// No algorithm lives here (doc/guide/rectangular.md: rect/ includes partition/, never the reverse).
#pragma once

#include <irregular/partition/nicol_plus.hpp>
#include <irregular/partition/probe.hpp>

#include <cstddef>
#include <vector>

namespace irregular::detail {

/// Optimal 1D partition of [lo, hi) into p parts: the bottleneck (exact for integer sums).
/// When `ends` is given, it receives the p part ends: the greedy optimal separators (trailing
/// parts may be empty, ending at hi). Greedy, not balanced: the 2D heuristics were tuned on
/// them, and with them every rectangular imbalance table stayed as it was when the 1D engine
/// gained balanced separators (bench/results/partition1d.md, doc/guide/rectangular.md).
template <class S, class Pre>
S chain_optimum(const Pre& pre, std::size_t lo, std::size_t hi, std::size_t p,
                std::vector<std::size_t>* ends = nullptr,
                partition::SeparatorChoice choice = partition::SeparatorChoice::greedy) {
  if (!ends) return static_cast<S>(partition::optimal_bottleneck(pre, lo, hi, p));
  std::vector<std::size_t> seps(p + 1);
  const S b = static_cast<S>(partition::optimal_bottleneck(pre, lo, hi, p, seps.data(), choice));
  ends->insert(ends->end(), seps.begin() + 1, seps.end());
  return b;
}

}  // namespace irregular::detail
