// Capacity-proportional cut of the distributed leaf chain (kaddoura-ranka §3.1, §3.4: contiguous
// blocks proportional to the processors' capacities, in a given arrangement), optimal: the
// bottleneck max_k load_k / c_k is the least any cut on leaf boundaries reaches. Separator
// windows as in the homogeneous optimal cut (Pinar & Aykanat's bounds, here weighted by the
// capacities) stay distributed and are probed by a tree scan (detail/window_cut.hpp);
// DirectCut with capacities is the fallback when a window grows too large.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/partitioners/detail/cut_support.hpp>
#include <irregular/mpi/detail/index_wire.hpp>
#include <irregular/distributed/partitioners/detail/window_cut.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
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
/// attains UB, so the optimum's separators lie in these windows. Rank j receives windows j-1
/// and j (one alltoallv, about p · (largest leaf / least c) / (mean leaf / mean c) positions
/// each), and the exact bisection of detail_win::WindowSearch finds the optimum with part costs
/// load / c_k: per probe 2 ceil(log2(q-1)) tree-scan rounds, at most four maps sent per rank, and one all_reduce;
/// the greedy separators at the optimum are returned. When some rank would receive more than
/// `max_window` positions the cut is DirectCut's (each separator within half a leaf of its
/// share, one all_reduce). Bytes per rank O(p + windows), never O(p^2).
/// Throws irregular::collective_error on every rank when any work value is negative or not
/// finite. Collective over comm.
template <SpaceFillingCurve C>
CapacityCut<C> capacity_cut(const boost::mpi::communicator& comm, const SegmentMap<C>& current,
                            const LocalLeaves<C>& leaves, std::span<const double> work,
                            std::span<const double> capacities, std::size_t max_window = std::size_t{1} << 20) {
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
  // Totals (NaN flags a bad rank, and every rank then agrees on the failure), largest leaves and
  // leaf counts (for global chain positions).
  const double big = work.empty() || bad ? 0.0 : *std::max_element(work.begin(), work.end());
  const std::array<double, 3> mine{bad ? std::nan("") : prefix.back(), big, static_cast<double>(work.size())};
  std::vector<double> both(3 * p);
  boost::mpi::all_gather(comm, mine.data(), 3, both.data());
  bool any_bad = false;
  double largest = 0;
  for (std::size_t r = 0; r < p; ++r) {
    any_bad = any_bad || std::isnan(both[3 * r]);
    largest = std::max(largest, both[3 * r + 1]);
  }
  if (any_bad) mpi::agree_on(comm, bad);
  // Every rank sums the same totals in the same order, so the slices [offset_r, offset_{r+1})
  // tile [0, W) exactly.
  std::vector<double> offset(p + 1, 0.0);
  std::uint64_t first = 0, n_global = 0;
  for (std::size_t r = 0; r < p; ++r) {
    offset[r + 1] = offset[r] + both[3 * r];
    if (r == me) first = n_global;
    n_global += static_cast<std::uint64_t>(both[3 * r + 2]);
  }
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
  const double UB = (W / csum + largest / cmin) * (1 + 1e-12);
  CapacityCut<C> cut;
  cut.capacities.assign(capacities.begin(), capacities.end());
  auto direct = [&] {
    return detail_cut::direct_capacity_cut<C>(comm, current, leaves, prefix, offset, capacities, std::move(cut));
  };
  if (W == 0 || q < 2) return direct();
  // The windows, widened by one rounding margin per part so that a greedy step from the top of
  // window j-1 never passes the top of window j.
  const double delta = 16 * std::numeric_limits<double>::epsilon() * W;
  auto bounds = [&c_before, W, csum, delta, q](std::size_t j, double b) {
    return std::array<double, 2>{W - b * (csum - c_before[j]) - static_cast<double>(q - j + 1) * delta,
                                 b * c_before[j] + static_cast<double>(j + 1) * delta};
  };
  std::vector<double> lo(q, 0.0), hi(q, 0.0);
  for (std::size_t j = 1; j < q; ++j) {
    const auto r = bounds(j, UB);
    lo[j] = r[0];
    hi[j] = r[1];
  }
  detail::ChainPrefix chain(work);
  chain.set_offset(offset[me]);
  const detail_win::WindowPlan plan(chain, work.size() + (me + 1 == p ? 1 : 0), comm.size(), q, std::move(lo), std::move(hi));
  std::vector<std::uint64_t> recv(p);
  BOOST_MPI_CHECK_RESULT(MPI_Alltoall, (plan.counts.data(), 1, MPI_UINT64_T, recv.data(), 1, MPI_UINT64_T, MPI_Comm(comm)));
  std::uint64_t held = 0, over = 0;
  for (auto c : recv) held += c / 2;
  const std::uint64_t mine_over = held > max_window ? 1 : 0;
  BOOST_MPI_CHECK_RESULT(MPI_Allreduce, (&mine_over, &over, 1, MPI_UINT64_T, MPI_MAX, MPI_Comm(comm)));
  if (over != 0) return direct();
  auto cost = [&c_live](std::size_t k, double g0, double g1) { return (g1 - g0) / c_live[k]; };
  const detail::CutCounter none{nullptr};
  detail_win::WindowSearch search(comm, detail_win::exchange_windows(comm, chain, first, plan, recv, none), q, W, cost,
                                  bounds, none);
  if (!search.solve(W / csum * (1.0 - 1e-12), UB, false)) return direct();
  // Separator j's position and prefix from rank j; the rank holding that leaf names its start.
  const std::uint64_t sep = search.separator();
  const std::array<std::uint64_t, 2> rec{sep, me >= 1 && me < q && sep != detail_win::no_position
                                                  ? std::bit_cast<std::uint64_t>(search.windows().cur.at(sep))
                                                  : 0};
  std::vector<std::uint64_t> all(2 * p);
  boost::mpi::all_gather(comm, rec.data(), 2, all.data());
  std::vector<std::uint64_t> pos(q + 1, n_global);
  std::vector<double> at(q + 1, W);
  pos[0] = 0;
  at[0] = 0;
  detail_cut::SplitterSlots<I> slots(q + 1);
  for (std::size_t j = 1; j < q; ++j) {
    pos[j] = all[2 * j];
    at[j] = std::bit_cast<double>(all[2 * j + 1]);
    if (pos[j] >= first && pos[j] < first + work.size()) slots.claim(j, leaves.starts_[pos[j] - first], at[j]);
  }
  slots.replicate(comm);
  // Parts of capacity 0 sit empty where the chain stands when their turn comes.
  auto start = [&](std::size_t j) { return j == 0 ? I{0} : slots.claimed(j) ? slots.start(j) : SegmentMap<C>::domain_end(); };
  cut.splitters.assign(1, I{0});
  std::size_t j = 0;
  for (std::size_t k = 0; k < p; ++k) {
    const bool takes = j < q && live[j] == k;
    const std::size_t from = std::min(j, q), to = takes ? j + 1 : from;
    cut.splitters.push_back(k + 1 == p ? SegmentMap<C>::domain_end() : start(to));
    cut.loads.push_back(at[to] - at[from]);
    j += takes ? 1 : 0;
  }
  return cut;
}

}  // namespace irregular
