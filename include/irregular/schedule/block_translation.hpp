// BlockTranslation: global index -> (rank, local index) from the p+1 block boundaries alone, the
// translation of kaddoura-ranka-1995 §3.2 (Figure 3) once the 1D locality transform (§3.1) has
// made every rank's part a contiguous block. Replicated state is O(p): no translation table.
#pragma once

#include <irregular/core/error.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace irregular::schedule {

/// Where a global index lives: its home rank and its local index there.
struct Home {
  int rank = 0;            ///< home rank
  std::int64_t local = 0;  ///< local index there
  /// Same rank and local index.
  friend bool operator==(const Home&, const Home&) = default;
};

/// p contiguous blocks of the renumbered index space [0, n): rank r holds
/// [boundary(r), boundary(r + 1)). Lookups are binary searches over the p + 1 boundaries.
class BlockTranslation {
 public:
  /// One block [0, n) on one rank.
  explicit BlockTranslation(std::int64_t n = 0) : bounds_{0, n} {
    if (n < 0)
      throw invalid_argument("irregular::schedule::BlockTranslation: negative size " +
                             std::to_string(n));
  }

  /// p + 1 boundaries 0 = b_0 <= b_1 <= ... <= b_p = n. Throws irregular::invalid_argument
  /// otherwise.
  explicit BlockTranslation(std::vector<std::int64_t> boundaries) : bounds_(std::move(boundaries)) {
    if (bounds_.size() < 2)
      throw invalid_argument(
          "irregular::schedule::BlockTranslation: need p + 1 >= 2 boundaries, got " +
          std::to_string(bounds_.size()));
    if (bounds_.front() != 0)
      throw invalid_argument("irregular::schedule::BlockTranslation: boundary 0 must be 0, got " +
                             std::to_string(bounds_.front()));
    for (std::size_t k = 1; k < bounds_.size(); ++k)
      if (bounds_[k] < bounds_[k - 1])
        throw invalid_argument("irregular::schedule::BlockTranslation: boundaries decrease at " +
                               std::to_string(k));
  }

  /// From the separators of a 1D chain partition
  /// (irregular::partition::ChainPartition::separators).
  [[nodiscard]] static BlockTranslation from_separators(std::span<const std::size_t> separators) {
    std::vector<std::int64_t> b(separators.begin(), separators.end());
    return BlockTranslation(std::move(b));
  }

  /// Number of blocks p.
  [[nodiscard]] int parts() const noexcept { return static_cast<int>(bounds_.size()) - 1; }
  /// n: the size of the whole index space.
  [[nodiscard]] std::int64_t size() const noexcept { return bounds_.back(); }
  /// The p + 1 boundaries.
  [[nodiscard]] const std::vector<std::int64_t>& boundaries() const noexcept { return bounds_; }
  /// First index of `rank`'s block.
  [[nodiscard]] std::int64_t begin(int rank) const noexcept {
    return bounds_[static_cast<std::size_t>(rank)];
  }
  /// One past the last index of `rank`'s block.
  [[nodiscard]] std::int64_t end(int rank) const noexcept {
    return bounds_[static_cast<std::size_t>(rank) + 1];
  }
  /// Number of indices `rank` holds.
  [[nodiscard]] std::int64_t count(int rank) const noexcept { return end(rank) - begin(rank); }
  /// True if `g` lies in [0, n).
  [[nodiscard]] bool contains(std::int64_t g) const noexcept { return g >= 0 && g < size(); }

  /// Home rank of g (empty blocks never own anything). Precondition: contains(g).
  [[nodiscard]] int owner(std::int64_t g) const noexcept {
    const auto it = std::upper_bound(bounds_.begin(), bounds_.end(), g);
    return static_cast<int>(it - bounds_.begin()) - 1;
  }
  /// (rank, local index) of g: the local address is g minus its block's first index.
  /// Precondition: contains(g).
  [[nodiscard]] Home translate(std::int64_t g) const noexcept {
    const int r = owner(g);
    return {r, g - begin(r)};
  }
  /// The inverse of translate.
  [[nodiscard]] std::int64_t global(int rank, std::int64_t local) const noexcept {
    return begin(rank) + local;
  }

  friend bool operator==(const BlockTranslation&, const BlockTranslation&) = default;

 private:
  std::vector<std::int64_t> bounds_;
};

}  // namespace irregular::schedule
