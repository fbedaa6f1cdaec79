// Capacity-proportional cut of the distributed leaf chain (kaddoura-ranka §3.1, §3.4: contiguous
// blocks proportional to the processors' capacities, in a given arrangement), optimal: the
// bottleneck max_k load_k / c_k is the least any cut on leaf boundaries reaches. Separator
// windows as in the homogeneous optimal cut (Pinar & Aykanat's bounds, here weighted by the
// capacities) stay distributed and are probed by a tree scan (detail/window_cut.hpp);
// DirectCut with capacities is the fallback when a window grows too large.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/distributed/partitioners/detail/cut_support.hpp>
#include <irregular/distributed/partitioners/detail/window_cut.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/partition/heterogeneous.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

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
  std::vector<typename C::index_type> splitters;  ///< p+1 splitters over the curve
  std::vector<double> loads;                      ///< load of each part
  std::vector<double> capacities;                 ///< relative capacity of each part's rank
  /// The ownership map of the cut.
  [[nodiscard]] SegmentMap<C> map() const { return SegmentMap<C>(splitters); }
  /// max_k loads_k / capacities_k: the predicted time of the slowest part (in load units).
  [[nodiscard]] double bottleneck() const {
    double b = 0;
    for (std::size_t k = 0; k < loads.size(); ++k)
      if (loads[k] > 0)
        b = std::max(b, capacities[k] > 0 ? loads[k] / capacities[k]
                                          : std::numeric_limits<double>::infinity());
    return b;
  }
};

namespace detail {

/// Running sums of the local work, prefix[0] = 0; throws irregular::invalid_argument naming
/// the leaf and rank for a negative or non-finite value.
inline std::vector<double> running_sums(std::span<const double> work, int rank, const char* who) {
  std::vector<double> prefix(work.size() + 1, 0.0);
  for (std::size_t i = 0; i < work.size(); ++i) {
    if (!(work[i] >= 0) || !std::isfinite(work[i]))
      throw invalid_argument(std::string(who) + ": the load of leaf " + std::to_string(i) +
                             " on rank " + std::to_string(rank) + " is " + std::to_string(work[i]) +
                             " (must be finite and >= 0)");
    prefix[i + 1] = prefix[i] + work[i];
  }
  return prefix;
}

/// DirectCut with capacities, the fallback of capacity_cut: separator k at the leaf boundary
/// nearest to W · (c_0 + ... + c_{k-1}) / sum c, placed by the one rank whose slice of the chain
/// holds the target; one all_reduce.
template <SpaceFillingCurve C>
CapacityCut<C> direct_capacity_cut(const boost::mpi::communicator& comm,
                                   const SegmentMap<C>& current, const LocalLeaves<C>& leaves,
                                   std::span<const double> prefix, std::span<const double> offset,
                                   std::span<const double> capacities, CapacityCut<C> cut) {
  using I = typename C::index_type;
  const auto p = static_cast<std::size_t>(comm.size()), me = static_cast<std::size_t>(comm.rank());
  const double W = offset[p];
  double csum = 0;
  for (double c : capacities) csum += c;
  detail::SplitterSlots<I> slots(p + 1);
  double cpre = 0;
  for (std::size_t k = 1; k < p; ++k) {
    cpre += capacities[k - 1];
    const double target = W * (cpre / csum);
    if (!(offset[me] <= target && target < offset[me + 1])) continue;  // not in this slice
    const std::size_t x = detail::nearest_position(prefix, target - offset[me]);
    slots.claim(k, x < leaves.size() ? leaves.starts()[x] : current.splitters()[me + 1],
                offset[me] + prefix[x]);
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
  // Unclaimed targets at W sit at the end; keep both monotone.
  for (std::size_t k = 1; k <= p; ++k) {
    if (cut.splitters[k] < cut.splitters[k - 1]) cut.splitters[k] = cut.splitters[k - 1];
    at[k] = std::max(at[k], at[k - 1]);
  }
  for (std::size_t k = 0; k < p; ++k) cut.loads.push_back(at[k + 1] - at[k]);
  return cut;
}

/// Every rank's slice of the chain: running sums of this rank's work, the slices' global offsets
/// (the same sums in the same order on every rank, so they tile [0, W) exactly), the largest
/// leaf, and this rank's first global position. Agrees on bad work (NaN flags a bad rank).
struct ChainTotals {
  std::vector<double> prefix, offset;
  double largest = 0;
  std::uint64_t first = 0, n_global = 0;
};
inline ChainTotals chain_totals(const boost::mpi::communicator& comm,
                                std::span<const double> work) {
  const auto p = static_cast<std::size_t>(comm.size()), me = static_cast<std::size_t>(comm.rank());
  ChainTotals t;
  std::optional<std::string> bad;
  try {
    t.prefix = running_sums(work, comm.rank(), "irregular::capacity_cut");
  } catch (const invalid_argument& e) {
    bad = e.what();
    t.prefix.assign(1, 0.0);
  }
  const double big = work.empty() || bad ? 0.0 : *std::max_element(work.begin(), work.end());
  const std::array<double, 3> mine{bad ? std::nan("") : t.prefix.back(), big,
                                   static_cast<double>(work.size())};
  std::vector<double> both(3 * p);
  boost::mpi::all_gather(comm, mine.data(), 3, both.data());
  bool any_bad = false;
  for (std::size_t r = 0; r < p; ++r) {
    any_bad = any_bad || std::isnan(both[3 * r]);
    t.largest = std::max(t.largest, both[3 * r + 1]);
  }
  if (any_bad) mpi::agree_on(comm, bad);
  t.offset.assign(p + 1, 0.0);
  for (std::size_t r = 0; r < p; ++r) {
    t.offset[r + 1] = t.offset[r] + both[3 * r];
    if (r == me) t.first = t.n_global;
    t.n_global += static_cast<std::uint64_t>(both[3 * r + 2]);
  }
  return t;
}

/// The cut at the optimal separators: separator j's position and prefix come from rank j, the
/// rank holding that leaf names its start (one all_gather, one bitwise-or reduction). Parts of
/// capacity 0 sit empty where the chain stands when their turn comes.
template <SpaceFillingCurve C, class Search>
void cut_at_separators(const boost::mpi::communicator& comm, const LocalLeaves<C>& leaves,
                       std::size_t n_local, const ChainTotals& t, const Search& search,
                       std::span<const std::size_t> live, CapacityCut<C>& cut) {
  using I = typename C::index_type;
  const auto p = static_cast<std::size_t>(comm.size()), me = static_cast<std::size_t>(comm.rank());
  const std::size_t q = live.size();
  const double W = t.offset[p];
  const std::uint64_t sep = search.separator();
  const std::array<std::uint64_t, 2> rec{
      sep, me >= 1 && me < q && sep != unmapped_position
               ? std::bit_cast<std::uint64_t>(search.windows().cur.at(sep))
               : 0};
  std::vector<std::uint64_t> all(2 * p);
  boost::mpi::all_gather(comm, rec.data(), 2, all.data());
  std::vector<std::uint64_t> pos(q + 1, t.n_global);
  std::vector<double> at(q + 1, W);
  pos[0] = 0;
  at[0] = 0;
  SplitterSlots<I> slots(q + 1);
  for (std::size_t j = 1; j < q; ++j) {
    pos[j] = all[2 * j];
    at[j] = std::bit_cast<double>(all[2 * j + 1]);
    if (pos[j] >= t.first && pos[j] < t.first + n_local)
      slots.claim(j, leaves.starts()[pos[j] - t.first], at[j]);
  }
  slots.replicate(comm);
  auto start = [&](std::size_t j) {
    return j == 0 ? I{0} : slots.claimed(j) ? slots.start(j) : SegmentMap<C>::domain_end();
  };
  cut.splitters.assign(1, I{0});
  std::size_t j = 0;
  for (std::size_t k = 0; k < p; ++k) {
    const bool takes = j < q && live[j] == k;
    const std::size_t from = std::min(j, q), to = takes ? j + 1 : from;
    cut.splitters.push_back(k + 1 == p ? SegmentMap<C>::domain_end() : start(to));
    cut.loads.push_back(at[to] - at[from]);
    j += takes ? 1 : 0;
  }
}

}  // namespace detail

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
/// each), and the exact bisection of detail::WindowSearch finds the optimum with part costs
/// load / c_k: per probe 2 ceil(log2(q-1)) tree-scan rounds, at most four maps sent per rank, and
/// one all_reduce; the greedy separators at the optimum are returned. When some rank would receive
/// more than `max_window` positions the cut is DirectCut's (each separator within half a leaf of
/// its share, one all_reduce). Bytes per rank O(p + windows), never O(p^2). Throws
/// irregular::collective_error on every rank when any work value is negative or not finite.
/// Collective over comm.
template <SpaceFillingCurve C>
CapacityCut<C> capacity_cut(const boost::mpi::communicator& comm, const SegmentMap<C>& current,
                            const LocalLeaves<C>& leaves, std::span<const double> work,
                            std::span<const double> capacities,
                            std::size_t max_window = std::size_t{1} << 20) {
  const auto p = static_cast<std::size_t>(comm.size()), me = static_cast<std::size_t>(comm.rank());
  auto totals = detail::chain_totals(comm, work);
  const double W = totals.offset[p];
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
  const double UB = (W / csum + totals.largest / cmin) * (1 + 1e-12);
  CapacityCut<C> cut;
  cut.capacities.assign(capacities.begin(), capacities.end());
  auto direct = [&] {
    return detail::direct_capacity_cut<C>(comm, current, leaves, totals.prefix, totals.offset,
                                          capacities, std::move(cut));
  };
  if (W == 0 || q < 2) return direct();
  // The windows, widened by one rounding margin per part so that a greedy step from the top of
  // window j-1 never passes the top of window j.
  const double delta = 16 * std::numeric_limits<double>::epsilon() * W;
  auto bounds = [&c_before, W, csum, delta, q](std::size_t j, double b) {
    return std::array<double, 2>{
        W - b * (csum - c_before[j]) - static_cast<double>(q - j + 1) * delta,
        b * c_before[j] + static_cast<double>(j + 1) * delta};
  };
  std::vector<double> lo(q, 0.0), hi(q, 0.0);
  for (std::size_t j = 1; j < q; ++j) {
    const auto r = bounds(j, UB);
    lo[j] = r[0];
    hi[j] = r[1];
  }
  detail::ChainPrefix chain(work);
  chain.set_offset(totals.offset[me]);
  const detail::WindowPlan plan(chain, work.size() + (me + 1 == p ? 1 : 0), comm.size(), q,
                                std::move(lo), std::move(hi));
  std::vector<std::uint64_t> recv(p);
  boost::mpi::all_to_all(comm, plan.counts, recv);
  std::uint64_t held = 0;
  for (auto c : recv) held += c / 2;
  if (mpi::all_reduce_max(comm, std::uint64_t{held > max_window ? 1u : 0u}) != 0) return direct();
  auto cost = [&c_live](std::size_t k, double g0, double g1) { return (g1 - g0) / c_live[k]; };
  const detail::CutCounter none{nullptr};
  detail::WindowSearch search(comm,
                              detail::exchange_windows(comm, chain, totals.first, plan, recv, none),
                              q, W, cost, bounds, none);
  if (!search.solve(W / csum * (1.0 - 1e-12), UB, false)) return direct();
  detail::cut_at_separators<C>(comm, leaves, work.size(), totals, search, live, cut);
  return cut;
}

}  // namespace irregular
