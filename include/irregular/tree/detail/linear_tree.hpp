// Shared algorithms on linear trees (leaves as sorted aligned intervals of finest curve
// indices, structure-of-arrays): search, validation. baiardi-2001 §2-3 (SFC visit of the H-Tree).
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/core/index.hpp>
#include <irregular/tree/detail/curve_math.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

namespace irregular::detail {

/// Index of the last leaf whose start is <= i (the leaf containing i in a tiling).
/// Precondition: starts non-empty and starts[0] <= i.
template <class Index>
std::size_t leaf_at(std::span<const Index> starts, Index i) noexcept {
  const auto it = std::upper_bound(starts.begin(), starts.end(), i);
  return static_cast<std::size_t>(it - starts.begin()) - 1;
}

/// Leaves of a tiling meeting [iv.start, iv.end): [first, last). Empty intervals give {k, k}.
template <class Index>
std::pair<std::size_t, std::size_t> leaves_meeting(std::span<const Index> starts,
                                                   IndexInterval<Index> iv) noexcept {
  const auto b = starts.begin();
  if (iv.start >= iv.end) {
    const auto k = static_cast<std::size_t>(std::lower_bound(b, starts.end(), iv.start) - b);
    return {k, k};
  }
  auto first = std::upper_bound(b, starts.end(), iv.start);
  if (first != b) --first;
  const auto last = std::lower_bound(first, starts.end(), iv.end);
  return {static_cast<std::size_t>(first - b), static_cast<std::size_t>(last - b)};
}

/// Leaves of a sorted, disjoint (not necessarily tiling) sequence whose intervals meet iv.
template <SpaceFillingCurve C>
std::pair<std::size_t, std::size_t> leaves_meeting_sparse(
    std::span<const typename C::index_type> starts, std::span<const std::uint8_t> levels,
    IndexInterval<typename C::index_type> iv) noexcept {
  const auto b = starts.begin();
  auto first = std::upper_bound(b, starts.end(), iv.start);
  if (first != b) {
    const auto p = static_cast<std::size_t>(first - b) - 1;
    if (starts[p] + span_at<C>(levels[p]) > iv.start) --first;
  }
  const auto last = std::lower_bound(first, starts.end(), iv.end);
  return {static_cast<std::size_t>(first - b), static_cast<std::size_t>(last - b)};
}

/// Throws irregular::invalid_argument unless the leaves are aligned, sorted, contiguous and tile
/// [0, index_end<C>()). `who` names the entry point in the message.
template <SpaceFillingCurve C, class Level>
void validate_tiling(std::span<const typename C::index_type> starts, std::span<const Level> levels,
                     const char* who) {
  using I = typename C::index_type;
  if (starts.size() != levels.size())
    throw invalid_argument(std::string(who) + ": starts and levels differ in size (" +
                           std::to_string(starts.size()) + " vs " + std::to_string(levels.size()) +
                           ")");
  if (starts.empty()) throw invalid_argument(std::string(who) + ": no leaves");
  I expect = 0;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    if (i > 0 && expect == index_end<C>())
      throw invalid_argument(std::string(who) + ": leaf " + std::to_string(i) +
                             " lies beyond the end of the index range");
    const int l = static_cast<int>(levels[i]);
    if (l < 0 || l > C::max_level)
      throw invalid_argument(std::string(who) + ": leaf " + std::to_string(i) + " has level " +
                             std::to_string(l) +
                             " outside [0, max_level = " + std::to_string(C::max_level) + "]");
    if (starts[i] != expect)
      throw invalid_argument(std::string(who) + ": leaf " + std::to_string(i) +
                             " does not start where the previous leaf ends (leaves must be "
                             "sorted and tile the index range)");
    if (starts[i] % span_at<C>(l) != 0)
      throw invalid_argument(std::string(who) + ": leaf " + std::to_string(i) +
                             " start is not aligned to its level");
    expect = starts[i] + span_at<C>(l);
  }
  if (expect != index_end<C>())
    throw invalid_argument(std::string(who) + ": leaves stop before the end of the index range");
}

}  // namespace irregular::detail
