// The data-redistribution problem of kaddoura-ranka §3.4: a list held in contiguous blocks by p
// processors in an old arrangement is divided anew into blocks of new sizes (proportional to the
// new capacities); an arrangement (the processor at each position along the list) decides how
// many elements stay where they are (the overlap) and how many messages the move needs.
#pragma once

#include <irregular/core/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace irregular::partition {

/// What an arrangement costs: elements that stay on their processor (maximized by MCR), the
/// messages (ordered pairs of processors between which some elements move) and the processors
/// that receive anything.
struct ArrangementCost {
  std::uint64_t overlap = 0;  ///< elements that stay
  std::size_t messages = 0;   ///< ordered processor pairs that exchange elements
  std::size_t receivers = 0;  ///< processors that receive anything
  /// Same three counts.
  friend bool operator==(const ArrangementCost&, const ArrangementCost&) = default;
};

/// Throws irregular::invalid_argument unless `order` is a permutation of 0 .. p-1 (`who` names
/// the caller).
inline void check_arrangement(std::span<const int> order, std::size_t p, const std::string& who) {
  if (order.size() != p)
    throw invalid_argument(who + ": an arrangement of " + std::to_string(p) + " processors has " +
                           std::to_string(p) + " entries, got " + std::to_string(order.size()));
  std::vector<char> seen(p, 0);
  for (std::size_t k = 0; k < p; ++k) {
    const int r = order[k];
    if (r < 0 || static_cast<std::size_t>(r) >= p || seen[static_cast<std::size_t>(r)])
      throw invalid_argument(who + ": the arrangement is not a permutation of 0.." +
                             std::to_string(p - 1) + " (entry " + std::to_string(k) + " is " +
                             std::to_string(r) + ")");
    seen[static_cast<std::size_t>(r)] = 1;
  }
}

/// Sizes proportional to `weights` that sum to `total` exactly (largest remainder; ties to the
/// lower index). Throws irregular::invalid_argument for a negative, NaN or infinite weight or a
/// zero sum.
inline std::vector<std::uint64_t> proportional_sizes(std::uint64_t total,
                                                     std::span<const double> weights) {
  double sum = 0;
  for (std::size_t k = 0; k < weights.size(); ++k) {
    if (!(weights[k] >= 0) || !std::isfinite(weights[k]))
      throw invalid_argument("irregular::partition::proportional_sizes: weight " +
                             std::to_string(k) + " must be finite and >= 0, got " +
                             std::to_string(weights[k]));
    sum += weights[k];
  }
  if (!(sum > 0))
    throw invalid_argument("irregular::partition::proportional_sizes: the weights sum to zero");
  std::vector<std::uint64_t> out(weights.size());
  std::vector<std::pair<double, std::size_t>> rest(weights.size());
  std::uint64_t given = 0;
  for (std::size_t k = 0; k < weights.size(); ++k) {
    const double exact = static_cast<double>(total) * (weights[k] / sum);
    out[k] = static_cast<std::uint64_t>(std::floor(exact));
    given += out[k];
    rest[k] = {exact - std::floor(exact), k};
  }
  std::stable_sort(rest.begin(), rest.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; given < total; i = (i + 1) % rest.size(), ++given) ++out[rest[i].second];
  while (given > total) {  // only rounding of huge totals can overshoot
    for (auto& o : out)
      if (o > 0 && given > total) {
        --o;
        --given;
      }
  }
  return out;
}

/// One instance: processor r held the old interval [old_start(r), old_end(r)) (the old
/// arrangement `old_order` laid out blocks of `old_sizes[r]`) and is to hold `new_sizes[r]`
/// elements. The totals must agree.
class Redistribution {
 public:
  /// Throws irregular::invalid_argument unless there is one old and one new size per processor,
  /// `old_order` is a permutation of them, and the totals agree.
  Redistribution(std::span<const int> old_order, std::span<const std::uint64_t> old_sizes,
                 std::span<const std::uint64_t> new_sizes)
      : new_(new_sizes.begin(), new_sizes.end()), old_order_(old_order.begin(), old_order.end()) {
    const std::size_t p = old_sizes.size();
    if (p == 0 || new_sizes.size() != p)
      throw invalid_argument(
          "irregular::partition::Redistribution: need one old and one new size per processor (" +
          std::to_string(p) + " and " + std::to_string(new_sizes.size()) + ")");
    check_arrangement(old_order, p, "irregular::partition::Redistribution");
    lo_.resize(p);
    hi_.resize(p);
    std::uint64_t at = 0;
    for (int r : old_order) {
      lo_[static_cast<std::size_t>(r)] = at;
      at += old_sizes[static_cast<std::size_t>(r)];
      hi_[static_cast<std::size_t>(r)] = at;
    }
    const std::uint64_t nt = std::accumulate(new_.begin(), new_.end(), std::uint64_t{0});
    if (nt != at)
      throw invalid_argument("irregular::partition::Redistribution: the new sizes sum to " +
                             std::to_string(nt) + ", the old ones to " + std::to_string(at));
    total_ = at;
  }

  /// Number of processors p.
  [[nodiscard]] std::size_t processors() const noexcept { return new_.size(); }
  /// Number of elements, old and new alike.
  [[nodiscard]] std::uint64_t total() const noexcept { return total_; }
  /// Elements processor r is to hold.
  [[nodiscard]] std::uint64_t new_size(int r) const noexcept {
    return new_[static_cast<std::size_t>(r)];
  }
  /// The old arrangement: processors in list order.
  [[nodiscard]] const std::vector<int>& old_order() const noexcept { return old_order_; }
  /// r's old interval [first, second) along the list.
  [[nodiscard]] std::pair<std::uint64_t, std::uint64_t> old_interval(int r) const noexcept {
    return {lo_[static_cast<std::size_t>(r)], hi_[static_cast<std::size_t>(r)]};
  }

  /// Elements of r's old interval inside the new block [start, start + new_size(r)). O(1).
  [[nodiscard]] std::uint64_t overlap_at(int r, std::uint64_t start) const noexcept {
    const auto u = static_cast<std::size_t>(r);
    const std::uint64_t a = std::max(lo_[u], start), b = std::min(hi_[u], start + new_[u]);
    return b > a ? b - a : 0;
  }

  /// The overlap of an arrangement (processor at each position), O(p). Precondition: a permutation.
  [[nodiscard]] std::uint64_t overlap(std::span<const int> order) const noexcept {
    std::uint64_t at = 0, sum = 0;
    for (int r : order) {
      sum += overlap_at(r, at);
      at += new_size(r);
    }
    return sum;
  }

  /// Overlap, messages and receivers of an arrangement, O(p) (both layouts merged along the
  /// list). Throws irregular::invalid_argument when order is not a permutation.
  [[nodiscard]] ArrangementCost evaluate(std::span<const int> order) const {
    check_arrangement(order, processors(), "irregular::partition::Redistribution::evaluate");
    ArrangementCost c;
    c.overlap = overlap(order);
    // Walk both partitions of [0, total) along the list: each maximal run with one old and one
    // new holder that differ is one message (a pair meets in at most one run).
    std::size_t i = 0, j = 0;
    std::uint64_t at = 0, new_end = order.empty() ? 0 : new_size(order[0]);
    std::vector<char> receives(processors(), 0);
    while (i < old_order_.size() && j < order.size()) {
      const int src = old_order_[i], dst = order[j];
      const std::uint64_t old_end = hi_[static_cast<std::size_t>(src)];
      const std::uint64_t end = std::min(old_end, new_end);
      if (end > at && src != dst) {
        ++c.messages;
        receives[static_cast<std::size_t>(dst)] = 1;
      }
      at = std::max(at, end);
      if (old_end <= at) ++i;
      if (new_end <= at && ++j < order.size()) new_end += new_size(order[j]);
    }
    c.receivers = static_cast<std::size_t>(std::count(receives.begin(), receives.end(), 1));
    return c;
  }

 private:
  std::vector<std::uint64_t> new_, lo_, hi_;
  std::vector<int> old_order_;
  std::uint64_t total_ = 0;
};

}  // namespace irregular::partition
