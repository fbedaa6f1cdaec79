// Overlap matching of new parts to processors, as Zoltan's REMAP renumbers parts (the baseline
// MinimizeCostRedistribution is compared with): the list is cut anew in the old arrangement, part
// k meets old intervals with some overlap, and a path-growing matching (Drake & Hougardy 2003:
// grow paths along the heaviest remaining edge, alternate the edges between two matchings, keep
// the heavier) pairs parts with processors. The result is an arrangement, evaluated like any other.
#pragma once

#include <irregular/partition/redistribution.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace irregular::partition {

/// The arrangement in which part k of the old arrangement's new cut goes to its matched
/// processor (unmatched parts take the unmatched processors in order). O(p log p).
[[nodiscard]] inline std::vector<int> overlap_matching(const Redistribution& inst) {
  const std::size_t p = inst.processors();
  const auto& old = inst.old_order();
  // Part k is [part[k], part[k+1]); the edges (processor, part) of positive overlap come from a
  // merge of the two partitions of the list: at most 2p of them.
  std::vector<std::uint64_t> part(p + 1, 0);
  for (std::size_t k = 0; k < p; ++k) part[k + 1] = part[k] + inst.new_size(old[k]);
  struct Edge {
    std::size_t r, k;  // vertex r (processor) and vertex p + k (part)
    std::uint64_t w;
  };
  std::vector<Edge> edges;
  for (std::size_t i = 0, k = 0; i < p && k < p;) {
    const auto [lo, hi] = inst.old_interval(old[i]);
    const std::uint64_t a = std::max(lo, part[k]), b = std::min(hi, part[k + 1]);
    if (b > a) edges.push_back({static_cast<std::size_t>(old[i]), k, b - a});
    if (hi <= part[k + 1])
      ++i;
    else
      ++k;
  }
  // Adjacency sorted by weight (heaviest first, ties to the lower neighbour).
  std::vector<std::vector<std::pair<std::uint64_t, std::size_t>>> adj(2 * p);
  for (const auto& e : edges) {
    adj[e.r].push_back({e.w, p + e.k});
    adj[p + e.k].push_back({e.w, e.r});
  }
  for (auto& a : adj)
    std::sort(a.begin(), a.end(), [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first > y.first : x.second < y.second;
    });
  std::vector<char> gone(2 * p, 0);
  std::vector<std::pair<std::size_t, std::size_t>> m[2];
  std::uint64_t weight[2] = {0, 0};
  for (std::size_t start = 0; start < 2 * p; ++start) {
    std::size_t v = start;
    int side = 0;
    while (!gone[v]) {
      gone[v] = 1;
      std::size_t next = 2 * p;
      std::uint64_t w = 0;
      for (const auto& [ew, u] : adj[v])
        if (!gone[u]) {
          next = u;
          w = ew;
          break;
        }
      if (next == 2 * p) break;
      m[side].push_back({v, next});
      weight[side] += w;
      side ^= 1;
      v = next;
    }
  }
  const auto& chosen = weight[1] > weight[0] ? m[1] : m[0];
  std::vector<int> order(p, -1);
  std::vector<char> used(p, 0);
  for (auto [a, b] : chosen) {
    const std::size_t r = a < p ? a : b, k = (a < p ? b : a) - p;
    order[k] = static_cast<int>(r);
    used[r] = 1;
  }
  std::size_t free_r = 0;
  for (std::size_t k = 0; k < p; ++k) {
    if (order[k] >= 0) continue;
    while (used[free_r]) ++free_r;
    order[k] = static_cast<int>(free_r);
    used[free_r] = 1;
  }
  return order;
}

}  // namespace irregular::partition
