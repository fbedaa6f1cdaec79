// The advisor's check that every rank asked for the same comparison: one fingerprint per rank,
// compared by two reductions; only when they differ are the p fingerprints gathered, to name the
// ranks whose candidates or options differ from the majority's (O(p) words, a message of O(1)).
#pragma once

#include <irregular/core/error.hpp>

#include <boost/mpi/collectives/all_gather.hpp>
#include <boost/mpi/collectives/all_reduce.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/operations.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace irregular::advisor::detail {

/// FNV-1a over bytes: a fingerprint of the names and figures a rank asked for.
struct Fingerprint {
  std::uint64_t value = 1469598103934665603ull;
  void mix(const void* data, std::size_t bytes) {
    for (std::size_t k = 0; k < bytes; ++k)
      value = (value ^ static_cast<const unsigned char*>(data)[k]) * 1099511628211ull;
  }
};

/// "rank 3", "ranks 0 and 5", "ranks 0, 5 and 7", "ranks 0, 5 and 3 others": at most three
/// numbers, whatever the count (`ranks` ascending, not empty).
inline std::string rank_list(std::span<const int> ranks) {
  const auto n = ranks.size();
  const auto at = [&](std::size_t k) { return std::to_string(ranks[k]); };
  if (n == 1) return "rank " + at(0);
  if (n == 2) return "ranks " + at(0) + " and " + at(1);
  if (n == 3) return "ranks " + at(0) + ", " + at(1) + " and " + at(2);
  return "ranks " + at(0) + ", " + at(1) + " and " + std::to_string(n - 2) + " others";
}

/// What differs among the ranks' fingerprints (one per rank), as the message and failing rank of
/// a collective_error; nullopt when all are equal. With a strict majority the ranks outside it
/// are named, the lowest failing; without one, the ranks of each list (the first three lists,
/// ordered by their lowest rank), the lowest rank whose list is not rank 0's failing. O(p log p).
inline std::optional<std::pair<std::string, int>> describe_mismatch(
    std::span<const std::uint64_t> prints) {
  const std::size_t p = prints.size();
  std::vector<std::pair<std::uint64_t, int>> by(p);
  for (std::size_t r = 0; r < p; ++r) by[r] = {prints[r], static_cast<int>(r)};
  std::sort(by.begin(), by.end());
  // One group per distinct fingerprint, its ranks ascending (the sort keeps them so).
  std::vector<std::vector<int>> groups;
  for (std::size_t k = 0; k < p; ++k) {
    if (k == 0 || by[k].first != by[k - 1].first) groups.emplace_back();
    groups.back().push_back(by[k].second);
  }
  if (groups.size() < 2) return std::nullopt;
  std::sort(groups.begin(), groups.end(),
            [](const auto& a, const auto& b) { return a.front() < b.front(); });
  std::string what =
      "irregular::compare_partitioners: the candidates or options differ between ranks";
  for (const auto& g : groups)
    if (2 * g.size() > p) {
      std::vector<int> odd;
      for (std::size_t r = 0; r < p; ++r)
        if (prints[r] != prints[static_cast<std::size_t>(g.front())])
          odd.push_back(static_cast<int>(r));
      what += ": " + rank_list(odd) + (odd.size() == 1 ? " differs" : " differ") +
              " from the other " + std::to_string(g.size()) + " ranks";
      return std::pair{what, odd.front()};
    }
  what += ", with no majority: " + rank_list(groups[0]) +
          (groups[0].size() == 1 ? " has" : " have") + " one list";
  const std::size_t shown = std::min<std::size_t>(groups.size(), 3);
  for (std::size_t k = 1; k < shown; ++k) what += "; " + rank_list(groups[k]) + " another";
  if (groups.size() > shown) what += "; and " + std::to_string(groups.size() - shown) + " more";
  return std::pair{what, groups[1].front()};
}

/// Every rank throws the same collective_error (describe_mismatch) unless `print` is the same on
/// every rank. Two reductions when it is; then one all_gather of p words. Collective over comm.
inline void agree_on_fingerprint(const boost::mpi::communicator& comm, std::uint64_t print) {
  std::uint64_t lo = 0, hi = 0;
  boost::mpi::all_reduce(comm, print, lo, boost::mpi::minimum<std::uint64_t>());
  boost::mpi::all_reduce(comm, print, hi, boost::mpi::maximum<std::uint64_t>());
  if (lo == hi) return;
  std::vector<std::uint64_t> prints;
  boost::mpi::all_gather(comm, print, prints);
  // Every rank holds the same fingerprints, so every rank builds the same error.
  auto [what, failing] = *describe_mismatch(prints);
  throw collective_error(what, failing);
}

}  // namespace irregular::advisor::detail
