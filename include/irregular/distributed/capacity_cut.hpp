// Capacity-proportional cut of the distributed leaf chain (kaddoura-ranka §3.1, §3.4: contiguous
// blocks proportional to the processors' capacities, in a given arrangement), optimal: the
// bottleneck max_k load_k / c_k is the least any cut on leaf boundaries reaches. Separator
// windows as in the homogeneous optimal cut (Pinar & Aykanat's bounds, here weighted by the
// capacities) are gathered and solved alike on every rank; DirectCut with capacities is the
// fallback when the windows grow too large.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/detail/index_wire.hpp>
#include <irregular/distributed/local_leaves.hpp>
#include <irregular/distributed/segment_map.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/partition/heterogeneous.hpp>

#include <boost/mpi/collectives.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/exception.hpp>

#include <mpi.h>

#include <algorithm>
#include <array>
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

/// DirectCut with capacities, the fallback of capacity_cut: separator k at the leaf boundary
/// nearest to W · (c_0 + ... + c_{k-1}) / sum c, placed by the one rank whose slice of the chain
/// holds the target; one all_reduce.
template <SpaceFillingCurve C>
CapacityCut<C> direct_capacity_cut(const boost::mpi::communicator& comm, const SegmentMap<C>& current,
                                   const LocalLeaves<C>& leaves, std::span<const double> prefix,
                                   std::span<const double> offset, std::span<const double> capacities, CapacityCut<C> cut) {
  using I = typename C::index_type;
  const auto p = static_cast<std::size_t>(comm.size()), me = static_cast<std::size_t>(comm.rank());
  const double W = offset[p];
  double csum = 0;
  for (double c : capacities) csum += c;
  SplitterSlots<I> slots(p + 1);
  double cpre = 0;
  for (std::size_t k = 1; k < p; ++k) {
    cpre += capacities[k - 1];
    const double target = W * (cpre / csum);
    if (!(offset[me] <= target && target < offset[me + 1])) continue;  // not in this slice
    const std::size_t x = nearest_position(prefix, target - offset[me]);
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

}  // namespace detail_cut

/// Cuts the chain of leaf work (`work`, one value per local leaf; the ranks' slices lie in rank
/// order on `current`, a settled segment map) into comm.size() parts for ranks of capacities
/// `capacities` (chain order, replicated, >= 0, not all zero), minimizing the bottleneck
/// max_k load_k / c_k over separators on leaf boundaries; parts of capacity 0 stay empty.
///
/// Every cut of bottleneck B <= UB = W / sum c + (largest leaf) / (least positive c) has the
/// prefix at separator j (over the positive-capacity parts) in [W - UB · C_{>=j}, UB · C_{<j}]:
/// the parts before it hold at most UB · C_{<j}, those after at most UB · C_{>=j}. DirectCut
/// attains UB, so the optimum's separators lie in these windows; each rank contributes its
/// window positions (leaf start and global prefix), every rank gathers them all and solves the
/// window chain with partition::nicol_plus, the same on every rank. The windows hold about
/// p · (largest leaf / least c) / (mean leaf / mean c) positions; beyond `max_gathered` the cut
/// is DirectCut's (each separator within half a leaf of its share, one all_reduce).
/// Throws irregular::collective_error on every rank when any work value is negative or not
/// finite. Three collectives (four on the fallback). Collective over comm.
template <SpaceFillingCurve C>
CapacityCut<C> capacity_cut(const boost::mpi::communicator& comm, const SegmentMap<C>& current,
                            const LocalLeaves<C>& leaves, std::span<const double> work,
                            std::span<const double> capacities, std::size_t max_gathered = std::size_t{1} << 20) {
  using I = typename C::index_type;
  constexpr std::size_t words = detail_cut::SplitterSlots<I>::words;
  const auto p = static_cast<std::size_t>(comm.size()), me = static_cast<std::size_t>(comm.rank());
  std::vector<double> prefix;
  std::optional<std::string> bad;
  try {
    prefix = detail_cut::running_sums(work, comm.rank(), "irregular::capacity_cut");
  } catch (const invalid_argument& e) {
    bad = e.what();
    prefix.assign(1, 0.0);
  }
  // Totals (NaN flags a bad rank, and every rank then agrees on the failure) and largest leaves.
  const double big = work.empty() || bad ? 0.0 : *std::max_element(work.begin(), work.end());
  const std::array<double, 2> mine{bad ? std::nan("") : prefix.back(), big};
  std::vector<double> both(2 * p);
  boost::mpi::all_gather(comm, mine.data(), 2, both.data());
  bool any_bad = false;
  double largest = 0;
  for (std::size_t r = 0; r < p; ++r) {
    any_bad = any_bad || std::isnan(both[2 * r]);
    largest = std::max(largest, both[2 * r + 1]);
  }
  if (any_bad) mpi::agree_on(comm, bad);
  // Every rank sums the same totals in the same order, so the slices [offset_r, offset_{r+1})
  // tile [0, W) exactly.
  std::vector<double> offset(p + 1, 0.0);
  for (std::size_t r = 0; r < p; ++r) offset[r + 1] = offset[r] + both[2 * r];
  const double W = offset[p];
  std::vector<std::size_t> live;  // parts of positive capacity
  std::vector<double> c_live, c_before{0.0};
  for (std::size_t k = 0; k < p; ++k)
    if (capacities[k] > 0) {
      live.push_back(k);
      c_live.push_back(capacities[k]);
      c_before.push_back(c_before.back() + capacities[k]);
    }
  const std::size_t q = live.size();
  const double csum = c_before.back(), cmin = *std::min_element(c_live.begin(), c_live.end());
  const double UB = (W / csum + largest / cmin) * (1 + 1e-12), slack = W * 1e-12;
  // This rank's window positions: local leaves x (not the chain's first) whose global prefix
  // lies in some window; each sent once as (prefix, start words).
  std::vector<std::uint64_t> win;
  const std::size_t n = leaves.size();
  std::size_t covered = 0;
  for (std::size_t j = 1; j < q && W > 0; ++j) {
    const double lo = W - UB * (csum - c_before[j]) - slack - offset[me], hi = UB * c_before[j] + slack - offset[me];
    const auto a = static_cast<std::size_t>(std::lower_bound(prefix.begin(), prefix.begin() + static_cast<std::ptrdiff_t>(n), lo) - prefix.begin());
    const auto b = static_cast<std::size_t>(std::upper_bound(prefix.begin(), prefix.begin() + static_cast<std::ptrdiff_t>(n), hi) - prefix.begin());
    for (std::size_t x = std::max(a, covered); x < b; ++x) {
      if (leaves.starts_[x] == I{0}) continue;  // the chain's start is every rank's first position
      const auto w = detail::IndexWire::from(leaves.starts_[x]);
      win.push_back(std::bit_cast<std::uint64_t>(offset[me] + prefix[x]));
      win.push_back(w.lo);
      if constexpr (words > 1) win.push_back(w.hi);
    }
    covered = std::max(covered, b);
  }
  std::vector<int> sizes;
  boost::mpi::all_gather(comm, static_cast<int>(win.size()), sizes);
  std::size_t total = 0;
  for (int z : sizes) total += static_cast<std::size_t>(z);
  CapacityCut<C> cut;
  cut.capacities.assign(capacities.begin(), capacities.end());
  if (W == 0 || total / (words + 1) > max_gathered)
    return detail_cut::direct_capacity_cut<C>(comm, current, leaves, prefix, offset, capacities, std::move(cut));
  std::vector<int> displs(p, 0);
  for (std::size_t r = 1; r < p; ++r) displs[r] = displs[r - 1] + sizes[r - 1];
  std::vector<std::uint64_t> all(total);
  BOOST_MPI_CHECK_RESULT(MPI_Allgatherv, (win.data(), static_cast<int>(win.size()), MPI_UINT64_T, all.data(), sizes.data(),
                                          displs.data(), MPI_UINT64_T, MPI_Comm(comm)));
  // The window chain: the chain's start, the window positions in chain order, its end.
  std::vector<I> starts{I{0}};
  std::vector<double> at{0.0}, loads;
  for (std::size_t i = 0; i < total; i += words + 1) {
    detail::IndexWire w;
    w.lo = all[i + 1];
    if constexpr (words > 1) w.hi = all[i + 2];
    starts.push_back(w.template as<I>());
    at.push_back(std::bit_cast<double>(all[i]));
  }
  starts.push_back(SegmentMap<C>::domain_end());
  at.push_back(W);
  for (std::size_t i = 0; i + 1 < at.size(); ++i) loads.push_back(std::max(0.0, at[i + 1] - at[i]));
  const auto best = partition::nicol_plus<double>(std::span<const double>(loads), std::span<const double>(c_live));
  // Parts of capacity 0 sit empty where the chain stands when their turn comes.
  cut.splitters.assign(1, I{0});
  std::size_t j = 0;
  for (std::size_t k = 0; k < p; ++k) {
    const bool takes = j < q && live[j] == k;
    const std::size_t from = takes ? best.separators[j] : (j < q ? best.separators[j] : best.separators[q]);
    const std::size_t to = takes ? best.separators[j + 1] : from;
    cut.splitters.push_back(k + 1 == p ? SegmentMap<C>::domain_end() : starts[to]);
    cut.loads.push_back(at[to] - at[from]);
    j += takes ? 1 : 0;
  }
  return cut;
}

}  // namespace irregular
