// A scan under composition over a chain of ranks, each holding a map of leaf-chain positions (a
// greedy or balancing step from one separator window to the next): after 2 ceil(log2 count)
// rounds of a tree's up- and down-sweep, rank t holds h_t o ... o h_0, so every separator of a
// greedy probe is known in O(log p) latency instead of p pipelined hops (Pinar & Aykanat's
// probe, distributed), and each rank sends O(1) maps, so O(window) bytes, per scan.
#pragma once

#include <irregular/distributed/partitioners/detail/cut_support.hpp>
#include <irregular/mpi/operations.hpp>

#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace irregular::detail {

/// No position: the probe left the windows (infeasible), absorbing under composition.
inline constexpr std::uint64_t unmapped_position = ~std::uint64_t{0};

/// A map of chain positions, constant on runs: x in [from[i], from[i+1]) maps to to[i]. When
/// `prev` is kept, prev[i] is the image one map earlier (the separator before), so the last
/// rank of a composition knows both ends of its part.
struct PositionMap {
  std::vector<std::uint64_t> from, to, prev;

  [[nodiscard]] std::size_t run(std::uint64_t x) const {
    const auto it = std::upper_bound(from.begin(), from.end(), x);
    return it == from.begin() ? 0 : static_cast<std::size_t>(it - from.begin()) - 1;
  }
  void push(std::uint64_t x, std::uint64_t y, std::uint64_t before, bool keep_prev) {
    if (!to.empty() && to.back() == y && (!keep_prev || prev.back() == before)) return;
    from.push_back(x);
    to.push_back(y);
    if (keep_prev) prev.push_back(before);
  }
  /// outer o inner (inner applied first; its images lie in outer's domain).
  [[nodiscard]] static PositionMap compose(const PositionMap& outer, const PositionMap& inner) {
    const bool keep = !outer.prev.empty();
    PositionMap r;
    for (std::size_t i = 0; i < inner.from.size(); ++i) {
      const std::uint64_t v = inner.to[i];
      if (v == unmapped_position || outer.from.empty()) {
        r.push(inner.from[i], unmapped_position, unmapped_position, keep);
      } else {
        const std::size_t k = outer.run(v);
        r.push(inner.from[i], outer.to[k], keep ? outer.prev[k] : 0, keep);
      }
    }
    return r;
  }
  /// The wire form [from..., to...] (prev stays local); runs equal in `to` merge.
  [[nodiscard]] std::vector<std::uint64_t> wire() const {
    std::vector<std::uint64_t> f, t;
    for (std::size_t i = 0; i < from.size(); ++i)
      if (t.empty() || t.back() != to[i]) {
        f.push_back(from[i]);
        t.push_back(to[i]);
      }
    f.insert(f.end(), t.begin(), t.end());
    return f;
  }
  [[nodiscard]] static PositionMap from_wire(const std::vector<std::uint64_t>& w) {
    PositionMap m;
    const std::size_t r = w.size() / 2;
    m.from.assign(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(r));
    m.to.assign(w.begin() + static_cast<std::ptrdiff_t>(r), w.end());
    return m;
  }
};

/// The tree scan's shape over elements [0, count): node [a, b) splits at a + the largest power
/// of two below b - a, so the depth is ceil(log2 count). The count - 1 splits are distinct, and
/// the node splitting at m belongs to element m - 1: every element owns its leaf and at most one
/// node, so it sends and receives O(1) maps per scan whatever the count.
struct ScanNode {
  int a = 0, m = 0, b = 0;
  [[nodiscard]] static int split(int a, int b) {
    return a + static_cast<int>(std::bit_floor(static_cast<unsigned>(b - a - 1)));
  }
  /// The element that owns the part [a, b): its leaf when b - a == 1, else its node.
  [[nodiscard]] static int owner(int a, int b) { return b - a == 1 ? a : split(a, b) - 1; }
};

/// Inclusive scan under composition along `count` ranks rank_of(0), ..., rank_of(count - 1):
/// this rank is number t (or not in the chain when t < 0) and holds `mine` = h_t, whose domain
/// is h_{t-1}'s image window; on return it holds h_t o ... o h_0. An up-sweep composes the
/// segments' maps towards the root, a down-sweep hands each segment the prefix before it
/// (whose domain is h_0's, one position in the probes); 2 ceil(log2 count) rounds, and each
/// rank sends at most two maps each way, so its bytes stay within a few windows (pointer
/// doubling would send one per round, O(window log p)). Messages carry `tag` (up) and
/// `tag + 1` (down) on comm, which the caller keeps to this exchange.
template <class RankOf>
void scan_maps(const boost::mpi::communicator& comm, int t, int count, RankOf rank_of,
               PositionMap& mine, int tag, const detail::CutCounter& counter) {
  const int depth = count > 1 ? std::bit_width(static_cast<unsigned>(count - 1)) : 0;
  for (int r = 0; r < 2 * depth; ++r) counter.round();
  if (t < 0 || count < 2) return;
  std::vector<std::vector<std::uint64_t>> out;  // kept alive until every send completes
  mpi::RequestSet reqs;
  out.reserve(4);
  auto send = [&](const PositionMap& m, int to, int tg) {
    out.push_back(m.wire());
    reqs.send_words(comm, out.back(), rank_of(to), tg);
    counter.hop(out.back().size() * sizeof(std::uint64_t), true);
  };
  auto receive = [&](int from, int tg) {
    const auto in = mpi::receive_words(comm, rank_of(from), tg);
    counter.hop(in.size() * sizeof(std::uint64_t), false);
    return PositionMap::from_wire(in);
  };
  // The path from the root to leaf t: leaf t's parent is the last node, this element's own
  // node (split t + 1) is on it, and so is that node's parent.
  ScanNode leaf_parent, own, own_parent;
  bool has_own = false, has_own_parent = false;
  for (int a = 0, b = count; b - a > 1;) {
    const ScanNode node{a, ScanNode::split(a, b), b};
    if (node.m == t + 1) {
      own = node;
      has_own = true;
      has_own_parent = !(a == 0 && b == count);
    } else if (!has_own) {
      own_parent = node;
    }
    leaf_parent = node;
    (t < node.m ? b : a) = node.m;
  }
  // Up: the leaf goes to its parent unless this element owns it (then t is its left child).
  if (leaf_parent.m != t + 1) send(mine, leaf_parent.m - 1, tag);
  PositionMap left;  // S[a, m), kept for the down-sweep
  if (has_own) {
    left = own.m - own.a == 1 ? mine : receive(ScanNode::owner(own.a, own.m), tag);
    const PositionMap right = receive(ScanNode::owner(own.m, own.b), tag);
    if (has_own_parent) send(PositionMap::compose(right, left), own_parent.m - 1, tag);
  }
  // Down: the prefix before a part is the identity when the part starts the chain.
  std::optional<PositionMap> before;  // P_t, the prefix before leaf t (nullopt: identity)
  if (has_own) {
    std::optional<PositionMap> pa;
    if (own.a > 0) pa = receive(own_parent.m - 1, tag + 1);
    if (own.m - own.a == 1)
      before = pa;
    else if (pa)
      send(*pa, ScanNode::owner(own.a, own.m), tag + 1);
    send(pa ? PositionMap::compose(left, *pa) : left, ScanNode::owner(own.m, own.b), tag + 1);
  }
  if (leaf_parent.m == t) before = receive(t - 1, tag + 1);  // t is its parent's right child
  if (before) mine = PositionMap::compose(mine, *before);
  reqs.wait_all();
}

}  // namespace irregular::detail
