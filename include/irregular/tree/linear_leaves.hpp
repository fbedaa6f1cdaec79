// LinearLeaves: leaves of a linear H-Tree as sorted structure-of-arrays (starts, levels). Every
// hnode is an aligned interval of finest curve indices, so the SFC visit of the leaves is this
// array sorted by start (baiardi-2001 §2). The one leaf sequence of HTree, CellTree, the
// distributed H-Tree (LocalLeaves) and the ghost layer: they add what each keeps per leaf.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/index.hpp>
#include <irregular/tree/detail/curve_math.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace irregular {

/// Leaves sorted by start, each an aligned interval [start, start + span(level)) of the curve.
/// `Array` holds each column (std::vector, or the splice arrays of a distributed tree). The
/// sequence may tile the curve (a whole tree) or be any sorted, disjoint part of it.
template <SpaceFillingCurve C, template <class> class Array = std::vector>
class LinearLeaves {
 public:
  /// The space-filling curve whose visit orders the leaves.
  using curve_type = C;
  /// The curve index type (finest-level positions).
  using index_type = typename C::index_type;
  /// Column of starts: the first finest index of each leaf.
  using starts_type = Array<index_type>;
  /// Column of levels: each leaf spans span(level) finest indices.
  using levels_type = Array<std::uint8_t>;

  LinearLeaves() = default;
  /// Adopts the two columns, sorted by start and equally long.
  LinearLeaves(starts_type starts, levels_type levels)
      : starts_(std::move(starts)), levels_(std::move(levels)) {
    IRREGULAR_ASSERT(starts_.size() == levels_.size());
  }

  /// Number of leaves.
  [[nodiscard]] std::size_t size() const noexcept { return starts_.size(); }
  /// True when there is no leaf.
  [[nodiscard]] bool empty() const noexcept { return starts_.empty(); }
  /// The starts column, sorted ascending.
  [[nodiscard]] std::span<const index_type> starts() const noexcept { return starts_; }
  /// The levels column, aligned with starts().
  [[nodiscard]] std::span<const std::uint8_t> levels() const noexcept { return levels_; }
  /// First finest curve index of leaf `i`.
  [[nodiscard]] index_type start(std::size_t i) const noexcept {
    IRREGULAR_ASSERT(i < size());
    return starts_[i];
  }
  /// One past the last finest curve index of leaf `i`: start(i) + span(level(i)).
  [[nodiscard]] index_type end(std::size_t i) const noexcept {
    IRREGULAR_ASSERT(i < size());
    return starts_[i] + detail::span_at<C>(levels_[i]);
  }
  /// Level of leaf `i` (0 is the root).
  [[nodiscard]] int level(std::size_t i) const noexcept {
    IRREGULAR_ASSERT(i < size());
    return levels_[i];
  }
  /// The interval [start(i), end(i)) of the curve that leaf `i` covers.
  [[nodiscard]] IndexInterval<index_type> interval(std::size_t i) const noexcept {
    return {start(i), end(i)};
  }
  /// The leaf's cell, recomputed from start and level through the curve.
  [[nodiscard]] Cell<C::dim> cell(std::size_t i) const noexcept {
    IRREGULAR_ASSERT(i < size());
    return detail::cell_at<C>(starts_[i], levels_[i]);
  }
  /// The leaf whose interval contains finest index `x`, or size() when none does.
  [[nodiscard]] std::size_t find(index_type x) const noexcept {
    const auto it = std::upper_bound(starts_.begin(), starts_.end(), x);
    if (it == starts_.begin()) return size();
    const auto k = static_cast<std::size_t>(it - starts_.begin()) - 1;
    return x < end(k) ? k : size();
  }

  /// Appends a leaf; the caller keeps the sequence sorted and disjoint.
  void push_back(index_type start, int level) {
    starts_.push_back(start);
    levels_.push_back(static_cast<std::uint8_t>(level));
  }
  /// Reserves room for `n` leaves in both columns.
  void reserve(std::size_t n) {
    starts_.reserve(n);
    levels_.reserve(n);
  }
  /// Removes every leaf.
  void clear() noexcept {
    starts_.clear();
    levels_.clear();
  }
  /// New leaves in place of the old (an adaptation, a balance, a rebuild).
  void assign(starts_type starts, levels_type levels) {
    IRREGULAR_ASSERT(starts.size() == levels.size());
    starts_ = std::move(starts);
    levels_ = std::move(levels);
  }
  /// The splice door: f(starts, levels) rewrites both columns together (a remap that opens the
  /// arrays around the run that stays). The caller leaves them sorted, aligned and equally long.
  template <class F>
  decltype(auto) splice(F&& f) {
    return std::forward<F>(f)(starts_, levels_);
  }

  /// Same leaves: equal columns.
  friend bool operator==(const LinearLeaves&, const LinearLeaves&) = default;

 private:
  starts_type starts_;
  levels_type levels_;
};

}  // namespace irregular
