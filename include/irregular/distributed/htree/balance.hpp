// Distributed 2:1 balance of a partitioned linear H-Tree: the closure of
// tree/balance.hpp (the balanced tree's internal nodes, level by level from the deepest) taken
// on every rank's own leaves, with the nodes a level makes inside another rank's part sent to it
// before the next level is closed. Nodes at level j - 1 come only from nodes at level j, so one
// sparse exchange per level completes the closure (no rounds until nothing changes), each rank's
// work is the serial closure of its own leaves, and the result is the serial balance exactly.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/detail/nbx.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/tree/balance.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/stencil.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace irregular {

/// This rank's leaves of the coarsest 2:1 balanced refinement (`kind`, across `per`'s wrapped
/// axes) of the tree whose leaves the ranks hold as placed by `map` (settled: every leaf whole on
/// map.leaf_owner, owner(i) the holder of the leaf containing finest index i). `starts` and
/// `levels` are this rank's leaves, sorted by start. Equal to balance_leaves of the gathered
/// leaves, restricted to this rank's part. Costs the serial closure of the local leaves and one
/// sparse exchange per level (the internal nodes made in other parts; nothing is gathered).
/// Collective over comm; `tag` belongs to the caller.
template <SpaceFillingCurve C, OwnershipMap M>
requires std::same_as<typename M::curve_type, C> LeafArrays<typename C::index_type>
balance_distributed(const boost::mpi::communicator& comm, const M& map,
                    std::span<const typename C::index_type> starts,
                    std::span<const std::uint8_t> levels, BalanceKind kind, Periodicity<C::dim> per,
                    int tag) {
  using I = typename C::index_type;
  const int me = comm.rank();
  int mine = 0;
  for (auto l : levels) mine = std::max(mine, static_cast<int>(l));
  const int deepest = mpi::all_reduce_max(comm, mine);
  if (deepest < 2) return {{starts.begin(), starts.end()}, {levels.begin(), levels.end()}};
  const bool full = kind == BalanceKind::full;

  // Whether a node starting at s lies in this rank's part (then its closure is ours to take).
  // A node that another part holds goes to that part; one that straddles parts is an ancestor
  // of leaves on each of them, known there already, so either answer is right for it.
  IndexInterval<I> seg{0, 0};
  if constexpr (M::contiguous_segments) seg = map.segment(me);
  const auto here = [&](I s) {
    if constexpr (M::contiguous_segments)
      return seg.contains(s);
    else
      return map.owner(s) == me;
  };

  std::vector<std::vector<I>> inner(static_cast<std::size_t>(deepest));
  detail::seed_inner<C>(starts, levels, inner);
  // Per level: nodes for other parts, grouped by destination, sorted and unique.
  std::vector<std::pair<int, I>> away;
  std::vector<I> out;
  std::vector<detail::ByteRegion> regions;
  std::vector<detail::OutgoingGather> sends;
  std::vector<int> dests;
  struct Sink {
    std::vector<I>* to;
    std::size_t base = 0;
    char* reserve(int, std::size_t offset, std::size_t bytes) {
      if (offset == 0) base = to->size();
      to->resize(base + (offset + bytes + sizeof(I) - 1) / sizeof(I));
      return reinterpret_cast<char*>(to->data() + base) + offset;
    }
    void finish(int, std::size_t total) { to->resize(base + total / sizeof(I)); }
  };
  mpi::ExchangeStats xs;
  mpi::detail::check_tag(tag);
  for (int j = deepest - 1; j >= 1; --j) {
    auto& up = inner[static_cast<std::size_t>(j - 1)];
    const std::size_t from = up.size();
    detail::close_level<C>(inner[static_cast<std::size_t>(j)], j, full, per, up);
    if (j == 1) break;  // level 0 is the root, an ancestor of every leaf: nothing to send
    // Keep this part's nodes in place; route the others to the parts that hold them.
    away.clear();
    std::size_t keep = from;
    for (std::size_t k = from; k < up.size(); ++k) {
      const I s = up[k];
      if (here(s))
        up[keep++] = s;
      else
        away.push_back({map.owner(s), s});
    }
    up.resize(keep);
    std::sort(away.begin(), away.end());
    away.erase(std::unique(away.begin(), away.end()), away.end());
    out.clear();
    regions.clear();
    sends.clear();
    out.reserve(away.size());
    dests.clear();
    for (std::size_t k = 0; k < away.size();) {  // one message per destination
      const std::size_t first = k;
      for (; k < away.size() && away[k].first == away[first].first; ++k)
        out.push_back(away[k].second);
      regions.push_back(
          {reinterpret_cast<const char*>(out.data() + first), (k - first) * sizeof(I)});
      dests.push_back(away[first].first);
    }
    for (std::size_t r = 0; r < regions.size(); ++r)
      sends.push_back({dests[r], std::span<const detail::ByteRegion>(regions).subspan(r, 1)});
    Sink sink{&up};
    detail::nbx_exchange(comm, tag, std::span<const detail::OutgoingGather>(sends), sink, xs);
  }
  // Room to grow (virtual memory until used): the remap that usually follows a balance splices
  // the arrivals in place instead of moving every leaf array onto fresh pages.
  return detail::emit_leaves<C>(starts, levels, inner, 2 * starts.size());
}

namespace detail {

// Data of the new leaves inside old leaf (start, lv) of a refinement `b` from position j:
// split(parent datum, child cell) repeated down the levels, in curve order.
template <SpaceFillingCurve C, class Data, class Split>
void split_down(const LeafArrays<typename C::index_type>& b, std::size_t& j,
                typename C::index_type start, int lv, const Data& d, Split& split,
                std::vector<Data>& fresh) {
  const auto cs = detail::span_at<C>(lv + 1);
  for (int k = 0; k < detail::children_of<C>; ++k) {
    const auto s = start + static_cast<typename C::index_type>(k) * cs;
    Data cd = split(d, detail::cell_at<C>(s, lv + 1));
    if (b.levels[j] == lv + 1) {
      fresh.push_back(std::move(cd));
      ++j;
    } else {
      split_down<C>(b, j, s, lv + 1, cd, split, fresh);
    }
  }
}

/// The data of the new leaves of a refinement `b` of leaves (starts, levels) with data `data`,
/// in curve order: split(parent datum, child cell) repeated down from the old leaf (as
/// CellTree::balance). Only the callbacks run: `data` is untouched, so a throwing split changes
/// nothing. `split_count` is the number of old leaves split.
template <class Data>
struct NewData {
  std::vector<Data> fresh;
  std::size_t split_count = 0;
};
template <SpaceFillingCurve C, class Data, class Split>
NewData<Data> split_data(std::span<const typename C::index_type> starts,
                         std::span<const std::uint8_t> levels, std::span<const Data> data,
                         const LeafArrays<typename C::index_type>& b, Split& split) {
  NewData<Data> r;
  r.fresh.reserve(b.starts.size() - starts.size() + b.starts.size() / 64);
  for (std::size_t i = 0, j = 0; i < starts.size(); ++i) {
    if (b.levels[j] == levels[i]) {
      ++j;
      continue;
    }
    ++r.split_count;
    split_down<C>(b, j, starts[i], levels[i], data[i], split, r.fresh);
  }
  return r;
}

/// The data of refinement `b`: kept leaves' data moved from `data`, new leaves' from `fresh`,
/// into an array of data's type.
template <SpaceFillingCurve C, class DataV>
DataV assemble_data(std::span<const typename C::index_type> starts,
                    std::span<const std::uint8_t> levels, DataV& data,
                    const LeafArrays<typename C::index_type>& b,
                    std::vector<typename DataV::value_type>& fresh) {
  DataV out;
  out.reserve(b.starts.capacity());  // the leaf arrays' room to grow (a remap splices arrivals in)
  for (std::size_t i = 0, j = 0, f = 0; i < starts.size(); ++i) {
    if (b.levels[j] == levels[i]) {
      out.push_back(std::move(data[i]));
      ++j;
      continue;
    }
    const auto end = starts[i] + detail::span_at<C>(levels[i]);
    for (; j < b.starts.size() && b.starts[j] < end; ++j) out.push_back(std::move(fresh[f++]));
  }
  return out;
}

}  // namespace detail

}  // namespace irregular
