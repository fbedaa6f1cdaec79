// Boost.Serialization of rect::Rect, rect::CutTree and rect::Partition (non-intrusive), so a
// RectangleMap can be replicated; rect/ itself stays standard-library only (DESIGN.md "Layers").
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/rect/partition.hpp>

#include <boost/serialization/split_free.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

namespace boost::serialization {

/// Bounds travel as 64-bit integers (std::size_t differs between platforms).
template <class Archive, int D>
void serialize(Archive& ar, irregular::rect::Rect<D>& r, unsigned /*version*/) {
  for (int d = 0; d < D; ++d) {
    std::uint64_t lo = r.lo[d], hi = r.hi[d];
    ar& lo& hi;
    r.lo[d] = static_cast<std::size_t>(lo);
    r.hi[d] = static_cast<std::size_t>(hi);
  }
}

template <class Archive, int D>
void save(Archive& ar, const irregular::rect::CutTree<D>& t, unsigned /*version*/) {
  std::uint64_t n = t.nodes().size(), nb = t.bounds().size();
  ar& n& nb;
  for (const auto& v : t.nodes()) {
    std::int32_t dim = v.dim;
    std::uint32_t first = v.first, count = v.count, bounds = v.bounds;
    ar& dim& first& count& bounds;
  }
  for (std::size_t b : t.bounds()) {
    std::uint64_t x = b;
    ar& x;
  }
}

/// Rebuilds the tree through its public construction calls: replaying split() on the internal
/// nodes in the order of their first children reproduces the stored layout exactly (each split
/// appends one block of children and one block of boundaries). A stored tree that this replay
/// does not reproduce is malformed: irregular::parse_error, and `t` is left unchanged.
template <class Archive, int D>
void load(Archive& ar, irregular::rect::CutTree<D>& t, unsigned /*version*/) {
  using Tree = irregular::rect::CutTree<D>;
  using Node = typename Tree::Node;
  std::uint64_t n = 0, nb = 0;
  ar& n& nb;
  auto bad = [](const char* what) {
    return irregular::parse_error(std::string("irregular: malformed rect::CutTree in archive: ") +
                                  what);
  };
  if (n == 0 || n > (std::uint64_t{1} << 32) || nb > (std::uint64_t{1} << 40)) throw bad("sizes");
  std::vector<Node> nodes(static_cast<std::size_t>(n));
  for (auto& v : nodes) {
    std::int32_t dim = 0;
    std::uint32_t first = 0, count = 0, bounds = 0;
    ar& dim& first& count& bounds;
    v = Node{dim, first, count, bounds};
  }
  std::vector<std::size_t> bounds(static_cast<std::size_t>(nb));
  for (auto& b : bounds) {
    std::uint64_t x = 0;
    ar& x;
    b = static_cast<std::size_t>(x);
  }
  std::vector<std::uint32_t> internal;
  for (std::uint32_t v = 0; v < nodes.size(); ++v) {
    const Node& x = nodes[v];
    if (x.dim >= D || x.dim < -1) throw bad("split dimension");
    if (x.dim < 0) continue;
    if (x.count == 0 || std::uint64_t{x.bounds} + x.count + 1 > bounds.size() ||
        std::uint64_t{x.first} + x.count > nodes.size())
      throw bad("child or boundary range");
    internal.push_back(v);
  }
  std::sort(internal.begin(), internal.end(),
            [&](std::uint32_t a, std::uint32_t b) { return nodes[a].first < nodes[b].first; });
  Tree out;
  for (std::uint32_t v : internal) {
    const Node& x = nodes[v];
    if (v >= out.nodes().size() || out.nodes()[v].dim >= 0) throw bad("node order");
    const std::span<const std::size_t> b(bounds.data() + x.bounds, x.count + 1);
    if (!std::is_sorted(b.begin(), b.end())) throw bad("boundaries not sorted");
    if (out.split(v, x.dim, b) != x.first ||
        out.bounds().size() != std::size_t{x.bounds} + x.count + 1)
      throw bad("layout");
  }
  if (out.nodes().size() != nodes.size() || out.bounds().size() != bounds.size())
    throw bad("unreferenced nodes");
  for (std::uint32_t v = 0; v < nodes.size(); ++v)
    if (nodes[v].dim < 0) out.set_leaf(v, nodes[v].first);
  t = std::move(out);
}

template <class Archive, int D>
void serialize(Archive& ar, irregular::rect::CutTree<D>& t, unsigned version) {
  split_free(ar, t, version);
}

/// The box, the parts and the cut tree. On load, every leaf must name a part (else
/// irregular::parse_error).
template <class Archive, int D>
void serialize(Archive& ar, irregular::rect::Partition<D>& p, unsigned /*version*/) {
  ar& p.box;
  std::uint64_t n = p.parts.size();
  ar& n;
  if constexpr (Archive::is_loading::value) {
    if (n > (std::uint64_t{1} << 32))
      throw irregular::parse_error("irregular: malformed rect::Partition in archive: part count");
    p.parts.resize(static_cast<std::size_t>(n));
  }
  for (auto& r : p.parts) ar& r;
  ar& p.tree;
  if constexpr (Archive::is_loading::value) {
    for (const auto& v : p.tree.nodes())
      if (v.dim < 0 && v.first >= p.parts.size())
        throw irregular::parse_error(
            "irregular: malformed rect::Partition in archive: a leaf names no part");
  }
}

}  // namespace boost::serialization
