// LocalLeaves: a rank's share of the H-Tree leaves (its private H-Trees' leaves), stored as
// sorted structure-of-arrays, and their distributed construction under any ownership map.
// baiardi-2001 §2–3; counts of hnodes that straddle ranks are reduced once (O(p·depth) values).
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/detail/headroom.hpp>
#include <irregular/core/detail/splice_vector.hpp>
#include <irregular/core/error.hpp>
#include <irregular/core/index.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/tree/linear_leaves.hpp>
#include <irregular/tree/refine.hpp>
#include <irregular/tree/refine_leaves.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

namespace irregular {

/// Leaves held by one rank, sorted by start (the tree's LinearLeaves over splice arrays, so a
/// remap keeps the run that stays in place: core/detail/splice_vector.hpp), with the global
/// element count of each leaf. The arrays are written only through splice(), reserve() and
/// push_back().
template <SpaceFillingCurve C>
class LocalLeaves : public LinearLeaves<C, detail::SpliceVector> {
  using Leaves = LinearLeaves<C, detail::SpliceVector>;

 public:
  /// The column of element counts, one per leaf.
  using counts_type = detail::SpliceVector<std::uint64_t>;

  /// The global element count of each leaf, aligned with starts().
  [[nodiscard]] std::span<const std::uint64_t> counts() const noexcept { return counts_; }
  /// Removes every leaf.
  void clear() noexcept {
    Leaves::clear();
    counts_.clear();
  }
  /// Reserves room for `n` leaves in the three columns.
  void reserve(std::size_t n) {
    Leaves::reserve(n);
    counts_.reserve(n);
  }
  /// Room for a later remap to splice in place (core/detail/headroom.hpp).
  void reserve_headroom() {
    splice([](auto& starts, auto& levels, auto& counts) {
      detail::reserve_headroom(starts, starts.size());
      detail::reserve_headroom(levels, levels.size());
      detail::reserve_headroom(counts, counts.size());
    });
  }
  /// Maps the headroom's pages now (DomainOptions::resident_headroom).
  void touch_headroom() noexcept {
    splice([](auto& starts, auto& levels, auto& counts) {
      starts.touch_room();
      levels.touch_room();
      counts.touch_room();
    });
  }
  /// Appends a leaf after the last one, with its element count.
  void push_back(typename C::index_type s, int level, std::uint64_t count) {
    Leaves::push_back(s, level);
    counts_.push_back(count);
  }
  /// The splice door: f(starts, levels, counts) rewrites the three columns together (a remap
  /// opening them around the run that stays, an adaptation adopting new arrays). The caller
  /// leaves them sorted, aligned and equally long.
  template <class F>
  decltype(auto) splice(F&& f) {
    return Leaves::splice(
        [&](auto& starts, auto& levels) -> decltype(auto) { return f(starts, levels, counts_); });
  }
  friend bool operator==(const LocalLeaves&, const LocalLeaves&) = default;

 private:
  counts_type counts_;
};

namespace detail {

/// (level, start) of an hnode: the key of the straddling-hnode table.
template <class Index>
struct HnodeKey {
  int level;
  Index start;
  friend constexpr auto operator<=>(const HnodeKey&, const HnodeKey&) = default;
};

[[noreturn]] inline void leaf_budget_exceeded(std::size_t max_leaves) {
  throw limit_exceeded(
      "irregular: the refinement condition asks for more than " + std::to_string(max_leaves) +
      " leaves on one rank (the leaf budget); a condition that always splits? Raise "
      "DomainOptions::max_leaves_per_rank if the tree is meant to be this large");
}

}  // namespace detail

/// The default leaf budget of one rank: a quarter of the node's physical memory, shared by the
/// ranks on the node, at 64 bytes a leaf (at least 10^6). Collective over comm.
inline std::size_t default_leaf_budget(const boost::mpi::communicator& comm) {
  const int node_ranks = mpi::node_rank_count(comm);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const double bytes =
      pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 1e9;
  return static_cast<std::size_t>(std::max(1e6, bytes / 4 / std::max(1, node_ranks) / 64));
}

namespace detail {

template <class Index>
std::uint64_t count_in(std::span<const Index> keys, IndexInterval<Index> iv) {
  const auto a = std::lower_bound(keys.begin(), keys.end(), iv.start);
  const auto b = std::lower_bound(a, keys.end(), iv.end);
  return static_cast<std::uint64_t>(b - a);
}

/// Global element counts of the hnodes whose elements may lie on several ranks: each rank's
/// counts of all of them, summed in one all_reduce (the same hnode list on every rank).
template <SpaceFillingCurve C>
class SharedCounts {
  using I = typename C::index_type;
  using Key = HnodeKey<I>;

 public:
  SharedCounts(const boost::mpi::communicator& comm, std::vector<Key> hnodes,
               std::span<const I> sorted_keys)
      : hnodes_(std::move(hnodes)) {
    std::sort(hnodes_.begin(), hnodes_.end());
    hnodes_.erase(std::unique(hnodes_.begin(), hnodes_.end()), hnodes_.end());
    std::vector<std::uint64_t> local(hnodes_.size());
    global_.resize(hnodes_.size());
    for (std::size_t i = 0; i < hnodes_.size(); ++i) {
      const I w = irregular::detail::levels_span<C>(C::max_level - hnodes_[i].level);
      local[i] = count_in<I>(sorted_keys, {hnodes_[i].start, hnodes_[i].start + w});
    }
    if (!hnodes_.empty())
      boost::mpi::all_reduce(comm, local.data(), static_cast<int>(local.size()), global_.data(),
                             std::plus<std::uint64_t>());
  }
  [[nodiscard]] bool empty() const noexcept { return hnodes_.empty(); }
  /// The global count of hnode (level, start), or nullptr when it is not shared.
  [[nodiscard]] const std::uint64_t* find(int level, I start) const {
    const auto it = std::lower_bound(hnodes_.begin(), hnodes_.end(), Key{level, start});
    if (it == hnodes_.end() || it->level != level || it->start != start) return nullptr;
    return &global_[static_cast<std::size_t>(it - hnodes_.begin())];
  }

 private:
  std::vector<Key> hnodes_;
  std::vector<std::uint64_t> global_;
};

}  // namespace detail

/// Builds this rank's leaves of the global H-Tree defined by `condition` (a count-based
/// RefineCondition), given that every rank holds the sorted keys of the elements in its range
/// [bounds[r], bounds[r+1]) (bounds replicated, p+1 values). Emits the leaves whose start lies
/// in the own range, with exact global counts. Hnodes that meet several ranges are the common
/// ancestors of the range boundaries, at most (p-1)·(max_level+1); their counts are summed in
/// one all_reduce. The result does not depend on the number of ranks. Collective over comm.
template <SpaceFillingCurve C, class Condition>
LocalLeaves<C> construct_leaves(const boost::mpi::communicator& comm,
                                const std::vector<typename C::index_type>& bounds,
                                std::span<const typename C::index_type> sorted_keys,
                                const Condition& condition, std::size_t max_leaves = SIZE_MAX) {
  using I = typename C::index_type;
  using Key = detail::HnodeKey<I>;
  const auto span_at = [](int level) {
    return irregular::detail::levels_span<C>(C::max_level - level);
  };
  // Common ancestors of b-1 and b for every inner boundary b: all hnodes that straddle ranks.
  std::vector<Key> straddling;
  const I end = bounds.back();
  for (std::size_t r = 1; r + 1 < bounds.size(); ++r) {
    const I b = bounds[r];
    if (b == 0 || b >= end) continue;
    for (int level = 0; level <= C::max_level; ++level) {
      const I w = span_at(level);
      if ((b - 1) / w != b / w) break;
      straddling.push_back({level, b / w * w});
    }
  }
  const detail::SharedCounts<C> shared(comm, std::move(straddling), sorted_keys);

  const IndexInterval<I> own{bounds[static_cast<std::size_t>(comm.rank())],
                             bounds[static_cast<std::size_t>(comm.rank()) + 1]};
  LocalLeaves<C> out;
  SortedKeyCounter<I> local_count(sorted_keys);
  auto count = [&](const Cell<C::dim>& cell, IndexInterval<I> iv) -> std::uint64_t {
    if (own.contains(iv)) return local_count(iv);
    const auto* g = shared.find(cell.level, iv.start);
    IRREGULAR_ASSERT(g != nullptr);
    return *g;
  };
  auto emit = [&](const Cell<C::dim>& cell, I start) {
    if (out.size() == max_leaves) detail::leaf_budget_exceeded(max_leaves);
    out.push_back(start, cell.level, count(cell, {start, start + span_at(cell.level)}));
  };
  refine_leaves<C>(own, count, condition, emit);
  return out;
}

/// Builds this rank's leaves of the global H-Tree defined by `condition` when every rank holds
/// the sorted keys of the elements `map.owner()` gives it, under any OwnershipMap. Hnodes whose
/// data may lie on several ranks (holders > 1, the *shared* hnodes) are found top-down on every
/// rank (a cell held by one rank has children held by that rank alone) and their counts summed
/// in one all_reduce; a shared leaf is emitted by its leaf_owner, every other hnode is refined by
/// its one holder. Maps with contiguous segments take the splitter path above. Leaves come out
/// sorted by start with exact global counts; a shared leaf's elements are not all local yet
/// (see remap.hpp, settle_on_map). Collective over comm.
template <OwnershipMap M, class Condition>
LocalLeaves<typename M::curve_type> construct_leaves(
    const boost::mpi::communicator& comm, const M& map,
    std::span<const typename M::curve_type::index_type> sorted_keys, const Condition& condition,
    std::size_t max_leaves = SIZE_MAX) {
  using C = typename M::curve_type;
  if constexpr (M::contiguous_segments) {
    return construct_leaves<C>(comm, map.splitters(), sorted_keys, condition, max_leaves);
  } else {
    using I = typename C::index_type;
    using Key = detail::HnodeKey<I>;
    constexpr int children = ipow<int>(C::arity, C::dim);
    const auto span_at = [](int level) {
      return irregular::detail::levels_span<C>(C::max_level - level);
    };
    const int me = comm.rank();
    // Shared hnodes in curve order (depth first), with the single holder of every other child.
    std::vector<Key> found;
    auto enumerate = [&](auto&& self, int level, I start) -> void {
      found.push_back({level, start});
      if (level == C::max_level) return;
      const I w = span_at(level + 1);
      for (int k = 0; k < children; ++k) {
        const I s = start + static_cast<I>(k) * w;
        if (map.holders({s, s + w}).size() > 1) self(self, level + 1, s);
      }
    };
    const bool root_shared = comm.size() > 1 && map.holders({I{0}, span_at(0)}).size() > 1;
    if (root_shared) enumerate(enumerate, 0, I{0});
    const detail::SharedCounts<C> shared(comm, std::move(found), sorted_keys);
    LocalLeaves<C> out;
    SortedKeyCounter<I> local_count(sorted_keys);
    const auto global_count = [&](int level, I start) { return shared.find(level, start); };
    const auto count = [&](const Cell<C::dim>& cell, IndexInterval<I> iv) -> std::uint64_t {
      if (const auto* g = global_count(cell.level, iv.start)) return *g;
      return local_count(iv);
    };
    const auto emit = [&](const Cell<C::dim>& cell, I start) {
      if (out.size() == max_leaves) detail::leaf_budget_exceeded(max_leaves);
      out.push_back(start, cell.level, count(cell, {start, start + span_at(cell.level)}));
    };
    // Held by one rank: that rank refines it alone (refine_leaves passes only through shared
    // ancestors on its way down, whose counts are global).
    const auto refine_held = [&](IndexInterval<I> iv) {
      const auto h = map.holders(iv);
      const int holder =
          h.empty() ? map.leaf_owner(curve::cell_of_finest<C>(iv.start, 0)) : h.front();
      if (holder == me) refine_leaves<C>(iv, count, condition, emit);
    };
    if (!root_shared) {
      refine_held({I{0}, span_at(0)});
      return out;
    }
    auto walk = [&](auto&& self, int level, I start) -> void {
      const auto cell = curve::cell_of_finest<C>(start, level);
      const std::uint64_t n = *global_count(level, start);
      if (level < C::max_level && condition(cell, static_cast<std::size_t>(n))) {
        const I w = span_at(level + 1);
        for (int k = 0; k < children; ++k) {
          const I s = start + static_cast<I>(k) * w;
          if (global_count(level + 1, s))
            self(self, level + 1, s);
          else
            refine_held({s, s + w});
        }
      } else if (map.leaf_owner(cell) == me) {
        if (out.size() == max_leaves) detail::leaf_budget_exceeded(max_leaves);
        out.push_back(start, level, n);
      }
    };
    walk(walk, 0, I{0});
    return out;
  }
}

}  // namespace irregular
