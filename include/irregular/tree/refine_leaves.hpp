// refine_leaves: emits, in curve order, the leaves of the H-Tree defined by a count-based
// refinement condition, restricted to a range of leaf starts. The core of the serial and the
// distributed builds: the leaves sorted by start are the SFC visit Sq(v(sf)) (baiardi-2001 §2-3).
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/index.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/refine.hpp>

#include <algorithm>
#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>

namespace irregular {

namespace detail {

/// Calls a count callable with the richest signature it accepts:
/// count(cell, interval), count(interval) or count(cell).
template <SpaceFillingCurve C, class Count>
std::size_t call_count(Count& count, const Cell<C::dim>& cell,
                       IndexInterval<typename C::index_type> iv) {
  using I = IndexInterval<typename C::index_type>;
  if constexpr (std::is_invocable_v<Count&, const Cell<C::dim>&, I>) {
    return static_cast<std::size_t>(count(cell, iv));
  } else if constexpr (std::is_invocable_v<Count&, I>) {
    return static_cast<std::size_t>(count(iv));
  } else {
    static_assert(std::is_invocable_v<Count&, const Cell<C::dim>&>,
                  "irregular::refine_leaves: count must be callable as count(cell, interval), "
                  "count(interval) or count(cell) and return the number of elements");
    return static_cast<std::size_t>(count(cell));
  }
}

template <SpaceFillingCurve C, class Count, class Split, class Emit>
void refine_leaves_rec(IndexInterval<typename C::index_type> range, Count& count, Split& split,
                       Emit& emit, const Cell<C::dim>& cell, typename C::state_type state,
                       typename C::index_type start) {
  using I = typename C::index_type;
  const I sp = span_at<C>(cell.level);
  const IndexInterval<I> iv{start, start + sp};
  if (!iv.overlaps(range)) return;
  if (cell.level < C::max_level && split(cell, call_count<C>(count, cell, iv))) {
    const I cs = span_at<C>(cell.level + 1);
    I s = start;
    for (int k = 0; k < children_of<C>; ++k, s += cs) {
      if (s >= range.end) break;
      if (s + cs <= range.start) continue;
      refine_leaves_rec<C>(
          range, count, split, emit,
          child_at_position<C>(cell, static_cast<int>(C::child_position(state, k))),
          C::child_state(state, k), s);
    }
    return;
  }
  if (range.contains(start)) emit(cell, start);
}

}  // namespace detail

/// Emits `emit(cell, start)`, in curve order, for every leaf of the tree defined by
/// `should_split(cell, count(cell))` whose interval start lies in `range`; descends only into
/// cells that overlap `range`, so the cost is proportional to the leaves emitted plus the
/// ancestors of the range ends. `count` may take (cell, interval), (interval) or (cell) and
/// returns the (global) number of elements in the cell; it is called once per visited cell below
/// max_level. Cells at the curve's max_level are leaves whatever the condition says (clamped).
template <SpaceFillingCurve C, class Count, class ShouldSplit, class Emit>
void refine_leaves(IndexInterval<typename C::index_type> range, Count&& count,
                   ShouldSplit&& should_split, Emit&& emit) {
  static_assert(RefineCondition<std::remove_cvref_t<ShouldSplit>, C::dim>,
                "irregular::refine_leaves: should_split must be callable as "
                "should_split(const Cell<D>&, std::size_t count) -> bool");
  if (range.start >= range.end) return;
  Cell<C::dim> root{};
  detail::refine_leaves_rec<C>(range, count, should_split, emit, root, C::root_state(),
                               typename C::index_type{0});
}

/// Counts the sorted finest keys in intervals. refine_leaves asks in curve order, depth first, so
/// the interval starts never decrease: each search gallops forward from the previous start's
/// position, a query costs O(log count) and stays in cache instead of two binary searches over
/// the whole array. Queries in any other order are answered too (by a full search).
template <class Index>
class SortedKeyCounter {
 public:
  /// Counts in `sorted_keys` (ascending; the span must outlive the counter).
  explicit SortedKeyCounter(std::span<const Index> sorted_keys) : keys_(sorted_keys) {}

  /// Number of keys in [iv.start, iv.end).
  std::size_t operator()(IndexInterval<Index> iv) {
    pos_ = iv.start < last_ ? lower(0, keys_.size(), iv.start) : gallop(pos_, iv.start);
    last_ = iv.start;
    return gallop(pos_, iv.end) - pos_;
  }

 private:
  [[nodiscard]] std::size_t lower(std::size_t lo, std::size_t hi, Index x) const {
    return static_cast<std::size_t>(
        std::lower_bound(keys_.begin() + static_cast<std::ptrdiff_t>(lo),
                         keys_.begin() + static_cast<std::ptrdiff_t>(hi), x) -
        keys_.begin());
  }
  // The first position >= from whose key is >= x, when every key before `from` is below x.
  [[nodiscard]] std::size_t gallop(std::size_t from, Index x) const {
    std::size_t lo = from, hi = from, step = 1;
    while (hi < keys_.size() && keys_[hi] < x) {
      lo = hi + 1;
      hi += step;
      step *= 2;
    }
    return lower(lo, std::min(hi, keys_.size()), x);
  }

  std::span<const Index> keys_;
  std::size_t pos_ = 0;  // first position whose key is >= last_
  Index last_{0};
};

/// A count callable over sorted finest keys: the serial counterpart of the global counts the
/// distributed build computes.
template <class Index>
[[nodiscard]] auto count_sorted_keys(std::span<const Index> sorted_keys) {
  return SortedKeyCounter<Index>(sorted_keys);
}

}  // namespace irregular
