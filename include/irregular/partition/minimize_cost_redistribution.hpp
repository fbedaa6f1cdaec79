// MinimizeCostRedistribution (kaddoura-ranka §3.4, Figures 6-7): the greedy that moves each
// processor of the list in turn to the position where the overlap between old and new intervals
// is largest. The paper's O(p^3) procedure, and the same procedure with incremental overlap
// evaluation, O(p^2), which returns the same arrangement.
#pragma once

#include <irregular/partition/redistribution.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace irregular::partition {

/// Figure 7's MOVE: processor c goes to position l, the others keep their relative order.
inline void move_processor(std::vector<int>& list, int c, std::size_t l) {
  const auto x = static_cast<std::size_t>(std::find(list.begin(), list.end(), c) - list.begin());
  if (x < l)
    std::rotate(list.begin() + static_cast<std::ptrdiff_t>(x),
                list.begin() + static_cast<std::ptrdiff_t>(x) + 1,
                list.begin() + static_cast<std::ptrdiff_t>(l) + 1);
  else if (x > l)
    std::rotate(list.begin() + static_cast<std::ptrdiff_t>(l),
                list.begin() + static_cast<std::ptrdiff_t>(x),
                list.begin() + static_cast<std::ptrdiff_t>(x) + 1);
}

/// Figure 6 as printed, O(p^3): for each processor LIST[i] in turn, every position j is tried by
/// MOVE and COST (the overlap, O(p)); the processor stays at the first position of largest
/// overlap. `max` and `jmax` start afresh for each processor: kept across processors (the other
/// reading of the figure's layout) a processor with no improving position would be moved to
/// another's best position, and on the paper's own example the result (overlap 24) would be
/// worse than not rearranging (31). Starts from `list` (the old arrangement). Throws
/// irregular::invalid_argument when list is not a permutation of the instance's processors.
[[nodiscard]] inline std::vector<int> minimize_cost_redistribution_paper(
    const Redistribution& inst, std::span<const int> list) {
  check_arrangement(list, inst.processors(),
                    "irregular::partition::minimize_cost_redistribution_paper");
  const std::size_t p = list.size();
  std::vector<int> out(list.begin(), list.end());
  for (std::size_t i = 0; i < p; ++i) {
    std::int64_t max = -1;
    std::size_t jmax = 0;
    for (std::size_t j = 0; j < p; ++j) {
      move_processor(out, list[i], j);
      const auto temp = static_cast<std::int64_t>(inst.overlap(out));
      if (temp > max) {
        max = temp;
        jmax = j;
      }
    }
    move_processor(out, list[i], jmax);
  }
  return out;
}

/// The same greedy with incremental overlap evaluation, O(p^2): with processor c removed, the
/// others' overlaps before position j are a prefix sum at their unshifted starts and those after
/// it a suffix sum at their starts shifted by c's new size, so all p positions cost O(p) together.
/// Returns exactly minimize_cost_redistribution_paper's arrangement (integer overlaps, same ties).
[[nodiscard]] inline std::vector<int> minimize_cost_redistribution(const Redistribution& inst,
                                                                   std::span<const int> list) {
  check_arrangement(list, inst.processors(), "irregular::partition::minimize_cost_redistribution");
  const std::size_t p = list.size();
  std::vector<int> out(list.begin(), list.end()), rest;
  std::vector<std::uint64_t> start(p), suffix(p + 1);
  rest.reserve(p);
  for (std::size_t i = 0; i < p; ++i) {
    const int c = list[i];
    const std::uint64_t sc = inst.new_size(c);
    rest.clear();
    for (int r : out)
      if (r != c) rest.push_back(r);
    const std::size_t m = rest.size();
    std::uint64_t at = 0;
    for (std::size_t k = 0; k < m; ++k) {
      start[k] = at;
      at += inst.new_size(rest[k]);
    }
    start[m] = at;
    suffix[m] = 0;
    for (std::size_t k = m; k-- > 0;)
      suffix[k] = suffix[k + 1] + inst.overlap_at(rest[k], start[k] + sc);
    std::uint64_t prefix = 0, best = 0;
    std::size_t jmax = 0;
    for (std::size_t j = 0; j <= m; ++j) {
      const std::uint64_t v = prefix + inst.overlap_at(c, start[j]) + suffix[j];
      if (j == 0 || v > best) {
        best = v;
        jmax = j;
      }
      if (j < m) prefix += inst.overlap_at(rest[j], start[j]);
    }
    out.assign(rest.begin(), rest.end());
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(jmax), c);
  }
  return out;
}

}  // namespace irregular::partition
