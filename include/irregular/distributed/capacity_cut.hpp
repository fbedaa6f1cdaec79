// Capacity-proportional cut of the distributed leaf chain (kaddoura-ranka §3.1, §3.4: contiguous
// blocks proportional to the processors' capacities, in a given arrangement): DirectCut with
// capacities, separator k at the leaf boundary nearest to W · (c_0 + ... + c_{k-1}) / sum c.
// Each target is placed by the one rank whose slice of the chain holds it; one all_reduce.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/detail/index_wire.hpp>
#include <irregular/distributed/local_leaves.hpp>
#include <irregular/distributed/segment_map.hpp>
#include <irregular/mpi/collective_error.hpp>

#include <boost/mpi/collectives.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/exception.hpp>

#include <mpi.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace irregular {

/// A cut of the chain into parts along the chain order: part k is [splitters[k], splitters[k+1])
/// with `loads[k]` of work for a rank of capacity `capacities[k]` (replicated).
template <SpaceFillingCurve C>
struct CapacityCut {
  std::vector<typename C::index_type> splitters;
  std::vector<double> loads;
  std::vector<double> capacities;
  [[nodiscard]] SegmentMap<C> map() const { return SegmentMap<C>(splitters); }
  /// max_k loads_k / capacities_k: the predicted time of the slowest part (in load units).
  [[nodiscard]] double bottleneck() const {
    double b = 0;
    for (std::size_t k = 0; k < loads.size(); ++k)
      if (loads[k] > 0) b = std::max(b, capacities[k] > 0 ? loads[k] / capacities[k] : std::numeric_limits<double>::infinity());
    return b;
  }
};

namespace detail_cut {

/// Replicates splitters that single ranks decide: slot k carries a curve index and one double,
/// written by at most one rank (its `claimed` word set); one bitwise-or all_reduce.
template <class I>
class SplitterSlots {
 public:
  static constexpr std::size_t words = (sizeof(I) + 7) / 8;
  explicit SplitterSlots(std::size_t slots) : mine_(slots * (words + 2), 0), all_(mine_.size(), 0) {}
  void claim(std::size_t k, I start, double value) {
    const auto w = detail::IndexWire::from(start);
    std::uint64_t* at = mine_.data() + k * (words + 2);
    at[0] = 1;
    at[1] = std::bit_cast<std::uint64_t>(value);
    at[2] = w.lo;
    if constexpr (words > 1) at[3] = w.hi;
  }
  void replicate(const boost::mpi::communicator& comm) {
    BOOST_MPI_CHECK_RESULT(MPI_Allreduce, (mine_.data(), all_.data(), static_cast<int>(mine_.size()), MPI_UINT64_T,
                                           MPI_BOR, MPI_Comm(comm)));
  }
  [[nodiscard]] bool claimed(std::size_t k) const { return all_[k * (words + 2)] != 0; }
  [[nodiscard]] double value(std::size_t k) const { return std::bit_cast<double>(all_[k * (words + 2) + 1]); }
  [[nodiscard]] I start(std::size_t k) const {
    detail::IndexWire w;
    w.lo = all_[k * (words + 2) + 2];
    if constexpr (words > 1) w.hi = all_[k * (words + 2) + 3];
    return w.template as<I>();
  }

 private:
  std::vector<std::uint64_t> mine_, all_;
};

/// Local position x in [0, n] whose running sum prefix[x] is nearest to t (ties to the left).
inline std::size_t nearest_position(std::span<const double> prefix, double t) {
  const auto it = std::upper_bound(prefix.begin(), prefix.end(), t);
  std::size_t y = it == prefix.begin() ? 0 : static_cast<std::size_t>(it - prefix.begin()) - 1;
  if (y + 1 < prefix.size() && prefix[y + 1] - t < t - prefix[y]) ++y;
  return y;
}

/// Running sums of the local work, prefix[0] = 0; throws irregular::invalid_argument naming
/// the leaf and rank for a negative or non-finite value.
inline std::vector<double> running_sums(std::span<const double> work, int rank, const char* who) {
  std::vector<double> prefix(work.size() + 1, 0.0);
  for (std::size_t i = 0; i < work.size(); ++i) {
    if (!(work[i] >= 0) || !std::isfinite(work[i]))
      throw invalid_argument(std::string(who) + ": the load of leaf " + std::to_string(i) + " on rank " +
                             std::to_string(rank) + " is " + std::to_string(work[i]) + " (must be finite and >= 0)");
    prefix[i + 1] = prefix[i] + work[i];
  }
  return prefix;
}

}  // namespace detail_cut

/// Cuts the chain of leaf work (`work`, one value per local leaf; the ranks' slices lie in rank
/// order on `current`, a settled segment map) into comm.size() parts with loads proportional to
/// `capacities` (chain order, replicated, >= 0, not all zero). Separators fall on leaf
/// boundaries, each within half a leaf of its target, so a part's load is within one leaf of its
/// share. Throws irregular::collective_error on every rank when any work value is negative or
/// not finite. One all_gather and one all_reduce. Collective over comm.
template <SpaceFillingCurve C>
CapacityCut<C> capacity_cut(const boost::mpi::communicator& comm, const SegmentMap<C>& current,
                            const LocalLeaves<C>& leaves, std::span<const double> work,
                            std::span<const double> capacities) {
  using I = typename C::index_type;
  const auto p = static_cast<std::size_t>(comm.size()), me = static_cast<std::size_t>(comm.rank());
  std::vector<double> prefix;
  std::optional<std::string> bad;
  try {
    prefix = detail_cut::running_sums(work, comm.rank(), "irregular::capacity_cut");
  } catch (const invalid_argument& e) {
    bad = e.what();
    prefix.assign(1, 0.0);
  }
  // Totals with a NaN flag: a bad rank reports NaN, and every rank then agrees on the failure.
  std::vector<double> totals;
  boost::mpi::all_gather(comm, bad ? std::nan("") : prefix.back(), totals);
  bool any_bad = false;
  for (double t : totals) any_bad = any_bad || std::isnan(t);
  if (any_bad) mpi::agree_on(comm, bad);
  // Every rank sums the same totals in the same order, so the slices [offset_r, offset_{r+1})
  // tile [0, W) exactly and each target has exactly one claimant.
  std::vector<double> offset(p + 1, 0.0);
  for (std::size_t r = 0; r < p; ++r) offset[r + 1] = offset[r] + totals[r];
  const double W = offset[p];
  double csum = 0;
  for (double c : capacities) csum += c;
  CapacityCut<C> cut;
  cut.capacities.assign(capacities.begin(), capacities.end());
  detail_cut::SplitterSlots<I> slots(p + 1);
  double cpre = 0;
  for (std::size_t k = 1; k < p; ++k) {
    cpre += capacities[k - 1];
    const double target = W * (cpre / csum);
    if (!(offset[me] <= target && target < offset[me + 1])) continue;  // not in this slice
    const std::size_t x = detail_cut::nearest_position(prefix, target - offset[me]);
    slots.claim(k, x < leaves.size() ? leaves.starts_[x] : current.splitters()[me + 1], offset[me] + prefix[x]);
  }
  slots.replicate(comm);
  cut.splitters.assign(p + 1, SegmentMap<C>::domain_end());
  cut.splitters[0] = 0;
  std::vector<double> at(p + 1, W);
  at[0] = 0;
  for (std::size_t k = 1; k < p; ++k)
    if (slots.claimed(k)) {
      cut.splitters[k] = slots.start(k);
      at[k] = slots.value(k);
    }
  for (std::size_t k = 1; k <= p; ++k) {  // unclaimed targets at W sit at the end; keep both monotone
    if (cut.splitters[k] < cut.splitters[k - 1]) cut.splitters[k] = cut.splitters[k - 1];
    at[k] = std::max(at[k], at[k - 1]);
  }
  for (std::size_t k = 0; k < p; ++k) cut.loads.push_back(at[k + 1] - at[k]);
  return cut;
}

}  // namespace irregular
