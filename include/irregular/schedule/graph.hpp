// Graph: the computational graph of an unstructured loop as compressed rows (kaddoura-ranka-1995
// §3.1: nodes are tasks, edges their interactions), its renumbering by a permutation T, and what
// a blocking of the renumbered list costs: cut edges and ghost (remote neighbour) counts.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/schedule/block_translation.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace irregular::schedule {

/// Compressed rows: the neighbours of vertex v are adjacency[offsets[v] .. offsets[v + 1]), in
/// the order the loop visits them (Figure 8's indirection array ia is `adjacency`).
struct Graph {
  std::vector<std::int64_t> offsets{0};  ///< vertices() + 1 row offsets into adjacency
  std::vector<std::int64_t> adjacency;   ///< every row's neighbours, row after row

  /// Number of vertices (rows).
  [[nodiscard]] std::int64_t vertices() const noexcept {
    return static_cast<std::int64_t>(offsets.size()) - 1;
  }
  /// Directed entries: twice the undirected edges of a symmetric graph.
  [[nodiscard]] std::int64_t entries() const noexcept {
    return static_cast<std::int64_t>(adjacency.size());
  }
  /// Number of neighbours of `v`.
  [[nodiscard]] std::int64_t degree(std::int64_t v) const noexcept {
    return offsets[static_cast<std::size_t>(v) + 1] - offsets[static_cast<std::size_t>(v)];
  }
  /// The neighbours of `v`, in visit order.
  [[nodiscard]] std::span<const std::int64_t> neighbours(std::int64_t v) const noexcept {
    const auto b = static_cast<std::size_t>(offsets[static_cast<std::size_t>(v)]);
    return {adjacency.data() + b, static_cast<std::size_t>(degree(v))};
  }
  /// Same rows.
  friend bool operator==(const Graph&, const Graph&) = default;
};

/// The symmetric graph of n vertices with these undirected edges: self loops and repeated edges
/// dropped, each row sorted by neighbour index. Throws irregular::invalid_argument for an endpoint
/// outside [0, n), naming the edge.
[[nodiscard]] inline Graph graph_from_edges(std::int64_t n,
                                            std::span<const std::array<std::int64_t, 2>> edges) {
  if (n < 0) throw invalid_argument("irregular::schedule::graph_from_edges: negative vertex count");
  Graph g;
  g.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  for (std::size_t e = 0; e < edges.size(); ++e) {
    const auto [a, b] = edges[e];
    if (a < 0 || a >= n || b < 0 || b >= n)
      throw invalid_argument("irregular::schedule::graph_from_edges: edge " + std::to_string(e) +
                             " (" + std::to_string(a) + ", " + std::to_string(b) +
                             ") has an endpoint outside [0, " + std::to_string(n) + ")");
    if (a == b) continue;
    ++g.offsets[static_cast<std::size_t>(a) + 1];
    ++g.offsets[static_cast<std::size_t>(b) + 1];
  }
  for (std::size_t v = 0; v < static_cast<std::size_t>(n); ++v) g.offsets[v + 1] += g.offsets[v];
  g.adjacency.resize(static_cast<std::size_t>(g.offsets.back()));
  std::vector<std::int64_t> fill(g.offsets.begin(), g.offsets.end() - 1);
  for (const auto& [a, b] : edges) {
    if (a == b) continue;
    g.adjacency[static_cast<std::size_t>(fill[static_cast<std::size_t>(a)]++)] = b;
    g.adjacency[static_cast<std::size_t>(fill[static_cast<std::size_t>(b)]++)] = a;
  }
  // Sort and deduplicate each row, then compact.
  std::int64_t out = 0;
  for (std::size_t v = 0; v < static_cast<std::size_t>(n); ++v) {
    const auto first = g.adjacency.begin() + g.offsets[v],
               last = g.adjacency.begin() + g.offsets[v + 1];
    std::sort(first, last);
    const auto uend = std::unique(first, last);
    g.offsets[v] = out;
    out = static_cast<std::int64_t>(std::copy(first, uend, g.adjacency.begin() + out) -
                                    g.adjacency.begin());
  }
  g.offsets.back() = out;
  g.adjacency.resize(static_cast<std::size_t>(out));
  return g;
}

/// The graph renumbered by the permutation T (vertex v becomes T[v]): row T[v] lists T[u] for the
/// neighbours u of v in v's row order, so a loop over the new rows adds the same terms in the same
/// order as over the old ones. Throws irregular::invalid_argument unless T is a permutation of [0,
/// n).
[[nodiscard]] inline Graph renumbered(const Graph& g, std::span<const std::int64_t> T) {
  const std::int64_t n = g.vertices();
  if (static_cast<std::int64_t>(T.size()) != n)
    throw invalid_argument("irregular::schedule::renumbered: permutation of length " +
                           std::to_string(T.size()) + " for " + std::to_string(n) + " vertices");
  std::vector<std::int64_t> inverse(static_cast<std::size_t>(n), -1);
  for (std::int64_t v = 0; v < n; ++v) {
    const std::int64_t t = T[static_cast<std::size_t>(v)];
    if (t < 0 || t >= n || inverse[static_cast<std::size_t>(t)] != -1)
      throw invalid_argument("irregular::schedule::renumbered: T is not a permutation (vertex " +
                             std::to_string(v) + " maps to " + std::to_string(t) + ")");
    inverse[static_cast<std::size_t>(t)] = v;
  }
  Graph r;
  r.offsets.resize(static_cast<std::size_t>(n) + 1);
  r.adjacency.reserve(g.adjacency.size());
  r.offsets[0] = 0;
  for (std::int64_t t = 0; t < n; ++t) {
    for (const std::int64_t u : g.neighbours(inverse[static_cast<std::size_t>(t)]))
      r.adjacency.push_back(T[static_cast<std::size_t>(u)]);
    r.offsets[static_cast<std::size_t>(t) + 1] = static_cast<std::int64_t>(r.adjacency.size());
  }
  return r;
}

/// What a blocking of a (renumbered) graph costs each rank.
struct BlockCost {
  std::vector<std::int64_t> cut;  ///< per rank: directed entries of its rows that leave its block
  std::vector<std::int64_t> ghosts;  ///< per rank: distinct remote vertices its rows reference
  std::int64_t edge_cut = 0;         ///< undirected edges between blocks (half the cut entries)
};

/// Cut and ghost counts of the blocks of `t` over graph g (g symmetric for edge_cut to be exact).
/// Throws irregular::invalid_argument when t does not cover g's vertices.
[[nodiscard]] inline BlockCost block_cost(const Graph& g, const BlockTranslation& t) {
  if (t.size() != g.vertices())
    throw invalid_argument("irregular::schedule::block_cost: blocks cover " +
                           std::to_string(t.size()) + " indices, the graph has " +
                           std::to_string(g.vertices()) + " vertices");
  BlockCost c;
  c.cut.assign(static_cast<std::size_t>(t.parts()), 0);
  c.ghosts.assign(static_cast<std::size_t>(t.parts()), 0);
  std::vector<std::int64_t> remote;
  std::int64_t total = 0;
  for (int r = 0; r < t.parts(); ++r) {
    remote.clear();
    for (std::int64_t v = t.begin(r); v < t.end(r); ++v)
      for (const std::int64_t u : g.neighbours(v))
        if (u < t.begin(r) || u >= t.end(r)) remote.push_back(u);
    c.cut[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(remote.size());
    total += static_cast<std::int64_t>(remote.size());
    std::sort(remote.begin(), remote.end());
    c.ghosts[static_cast<std::size_t>(r)] =
        static_cast<std::int64_t>(std::unique(remote.begin(), remote.end()) - remote.begin());
  }
  c.edge_cut = total / 2;
  return c;
}

}  // namespace irregular::schedule
