// The upward pass: a value on every hnode a rank holds, from its leaves up through its private
// H-Trees to the replicated hnodes (baiardi-2001 §2–3: the replicated part holds what the ranks
// share). An hnode's value is always combine(its children's values in curve order), so it is
// the same bits at every rank count: the replicated hnodes combine the private roots' values,
// gathered once, never partial sums in rank order.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/distributed/htree/hnode_values.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/tree/detail/curve_math.hpp>

#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <numeric>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular {

namespace detail {

/// Builds the hnodes of one rank and of the replicated part, calling the user's functions.
template <SpaceFillingCurve C, class V, class LeafValue, class Combine>
class UpwardPass {
  using I = typename C::index_type;
  using Values = HnodeValues<C, V>;
  using Record = typename Values::record_type;
  static constexpr int kids = Values::children;

 public:
  UpwardPass(const LocalLeaves<C>& leaves, LeafValue& leaf_value, Combine& combine, int me)
      : leaves_(leaves), leaf_value_(leaf_value), combine_(combine), me_(me) {}

  /// The private H-Trees: every hnode whose leaves are all here, below the maximal ones (the
  /// private roots). A cell is covered when the spans of the local leaves inside it sum to its
  /// span (leaves are disjoint).
  void build_private(Values& out) {
    const auto starts = leaves_.starts();
    covered_.assign(starts.size() + 1, I{0});
    for (std::size_t i = 0; i < starts.size(); ++i)
      covered_[i + 1] = covered_[i] + span_at<C>(leaves_.level(i));
    out.reserve(2 * starts.size() + 1);
    find_roots(out, I{0}, 0, 0, starts.size());
  }

  /// This rank's private roots, in curve order.
  [[nodiscard]] std::span<const std::size_t> private_roots() const noexcept { return mine_; }

  /// The replicated hnodes above every rank's private roots (`all`, gathered, any order), and
  /// the root. Own private roots link to the hnodes build_private made.
  void build_replicated(Values& out, std::span<const Record> all, std::span<const int> owner) {
    order_.resize(all.size());
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    std::sort(order_.begin(), order_.end(),
              [&](std::size_t a, std::size_t b) { return all[a].start < all[b].start; });
    const std::size_t root = replicated(out, all, owner, I{0}, 0, 0, order_.size());
    out.finish(root, std::move(mine_), std::move(all_roots_));
  }

 private:
  std::size_t leaf_lower(I s) const {
    const auto st = leaves_.starts();
    return static_cast<std::size_t>(std::lower_bound(st.begin(), st.end(), s) - st.begin());
  }

  void find_roots(Values& out, I s, int l, std::size_t a, std::size_t b) {
    if (a == b) return;
    if (covered_[b] - covered_[a] == span_at<C>(l)) {
      const std::size_t n = out.add(s, l, HnodeKind::closed, me_, V{});
      fill(out, n, a, b);
      mine_.push_back(n);
      return;
    }
    for (int k = 0; k < kids; ++k) {
      const I cs = s + static_cast<I>(k) * span_at<C>(l + 1);
      const std::size_t ca = leaf_lower(cs), cb = leaf_lower(cs + span_at<C>(l + 1));
      find_roots(out, cs, l + 1, std::max(ca, a), std::min(cb, b));
    }
  }

  // Hnode n covers the local leaves [a, b) exactly.
  void fill(Values& out, std::size_t n, std::size_t a, std::size_t b) {
    if (b - a == 1 && leaves_.level(a) == out.level(n)) {
      out.set(n, HnodeKind::leaf, leaf_value_(a), a);
      return;
    }
    out.open_links(n);
    for (int k = 0; k < kids; ++k) {
      const I cs = out.child_start(n, k);
      const std::size_t c = out.add(cs, out.level(n) + 1, HnodeKind::closed, me_, V{});
      out.link(n, k, c);
      const std::size_t ca = std::max(a, leaf_lower(cs));
      const std::size_t cb = std::min(b, leaf_lower(cs + span_at<C>(out.level(n) + 1)));
      fill(out, c, ca, cb);
    }
    out.set(n, HnodeKind::internal, combine_children(out, n));
  }

  V combine_children(const Values& out, std::size_t n) {
    std::array<V, static_cast<std::size_t>(kids)> v;
    for (int k = 0; k < kids; ++k) v[static_cast<std::size_t>(k)] = out.value(out.child(n, k));
    return combine_(out.cell(n), std::span<const V>(v));
  }

  // The hnode (s, l) over the sorted private roots order_[a, b) of all ranks.
  std::size_t replicated(Values& out, std::span<const Record> all, std::span<const int> owner, I s,
                         int l, std::size_t a, std::size_t b) {
    if (b - a == 1 && all[order_[a]].level == l) {
      const Record& r = all[order_[a]];
      const int o = owner[order_[a]];
      all_roots_.push_back(o == me_ ? own_root(out, s)
                                    : out.add(s, l, HnodeKind::closed, o, r.value, r.leaf != 0));
      return all_roots_.back();
    }
    if (a == b || l >= C::max_level)
      throw std::logic_error("irregular::reduce_up: the private roots do not tile the domain");
    const std::size_t n = out.add(s, l, HnodeKind::internal, -1, V{});
    out.open_links(n);
    std::size_t lo = a;
    for (int k = 0; k < kids; ++k) {
      const I end = s + static_cast<I>(k + 1) * span_at<C>(l + 1);
      std::size_t hi = lo;
      while (hi < b && all[order_[hi]].start < end) ++hi;
      out.link(n, k, replicated(out, all, owner, out.child_start(n, k), l + 1, lo, hi));
      lo = hi;
    }
    out.set(n, HnodeKind::internal, combine_children(out, n));
    return n;
  }

  std::size_t own_root(const Values& out, I s) const {
    const auto it = std::lower_bound(mine_.begin(), mine_.end(), s,
                                     [&](std::size_t n, I x) { return out.start(n) < x; });
    return *it;
  }

  const LocalLeaves<C>& leaves_;
  LeafValue& leaf_value_;
  Combine& combine_;
  int me_;
  std::vector<I> covered_;              // prefix sums of the local leaves' spans
  std::vector<std::size_t> mine_;       // this rank's private roots, in curve order
  std::vector<std::size_t> order_;      // gathered private roots by start
  std::vector<std::size_t> all_roots_;  // every rank's private roots, in curve order
};

}  // namespace detail

/// The upward pass over the distributed H-Tree: `leaf_value(i)` gives local leaf i's value and
/// `combine(cell, children)` an internal hnode's value from its children's, in curve order.
/// Returns every hnode this rank holds (its leaves, its private H-Trees) and every replicated
/// hnode, each with its value, which is bitwise the same at every rank count. The private roots'
/// values travel in one all_gather (O(p · max_level · children) values for curve segments).
/// When leaf_value or combine throws on any rank, every rank throws the same collective_error.
/// Collective over comm.
template <SpaceFillingCurve C, class LeafValue, class Combine>
auto reduce_up(const boost::mpi::communicator& comm, const LocalLeaves<C>& leaves,
               LeafValue&& leaf_value, Combine&& combine) {
  using V = std::remove_cvref_t<std::invoke_result_t<LeafValue&, std::size_t>>;
  static_assert(
      std::is_convertible_v<std::invoke_result_t<Combine&, const Cell<C::dim>&, std::span<const V>>,
                            V>,
      "irregular::reduce_up: combine(cell, std::span<const V> children) must return the "
      "leaf_value's type V");
  using Values = HnodeValues<C, V>;
  detail::UpwardPass<C, V, std::remove_reference_t<LeafValue>, std::remove_reference_t<Combine>>
      pass(leaves, leaf_value, combine, comm.rank());
  Values out;
  std::vector<typename Values::record_type> roots;
  mpi::agree(comm, [&] {
    pass.build_private(out);
    roots.reserve(pass.private_roots().size());
    for (std::size_t n : pass.private_roots()) roots.push_back(out.record(n));
  });
  std::vector<int> counts;
  const auto all =
      mpi::all_gather_raw(comm, std::span<const typename Values::record_type>(roots), counts);
  std::vector<int> owner;
  owner.reserve(all.size());
  for (std::size_t r = 0; r < counts.size(); ++r)
    owner.insert(owner.end(), static_cast<std::size_t>(counts[r]), static_cast<int>(r));
  mpi::agree(comm, [&] { pass.build_replicated(out, all, owner); });
  return out;
}

}  // namespace irregular
