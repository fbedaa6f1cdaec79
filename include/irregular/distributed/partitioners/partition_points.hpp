// Weighted points on many ranks cut into P parts along a space-filling curve (P independent of
// the number of ranks): sample sort by curve key, then the optimal P-part blocking cut of the
// distributed chain (baiardi-2001 §3; Nicol's parametric search, saule-bas-catalyurek §2.2).
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/htree/sample_sort.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/partition_points.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/vector.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace irregular {

namespace detail {

/// A point on its way through the sample sort: curve key, index in the concatenation of all
/// ranks' points (rank order), quantized weight. Trivially copyable: travels as bytes.
template <class Index>
struct PointRecord {
  Index key;
  std::uint64_t global_index;
  std::uint64_t weight;
};

/// A part id on its way back to the point's home rank.
struct PartOfPoint {
  std::uint64_t global_index;
  std::uint64_t part;
};

/// What a greedy probe with bottleneck B carries along the ranks (integer prefix sums).
struct PointsProbeCarry {
  std::uint64_t part_start = 0;  // prefix value where the open part began
  std::uint64_t parts = 1;       // parts opened so far
  std::uint64_t attained = 0;    // largest closed part load
  std::uint64_t extension =
      std::numeric_limits<std::uint64_t>::max();  // least load that lets a part grow
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& part_start& parts& attained& extension;
  }
};

/// Greedy probe over one slice: each part takes the longest run with load <= B. Precondition:
/// B >= every single weight.
inline void points_probe_slice(std::span<const std::uint64_t> q, std::uint64_t B,
                               std::uint64_t max_parts, PointsProbeCarry& c) {
  const std::size_t m = q.size() - 1;
  std::size_t j = 0;
  while (j < m && c.parts <= max_parts) {
    const std::uint64_t limit = c.part_start + B;
    const auto s =
        static_cast<std::size_t>(
            std::upper_bound(q.begin() + static_cast<std::ptrdiff_t>(j) + 1, q.end(), limit) -
            q.begin()) -
        1;
    if (s == m) return;  // the part runs on into the next slice
    // The part closes before element s; Nicol: the least extension bounds the optimum below.
    c.attained = std::max(c.attained, q[s] - c.part_start);
    c.extension = std::min(c.extension, q[s + 1] - c.part_start);
    c.part_start = q[s];
    ++c.parts;
    j = s;
  }
}

// Tags on the duplicated communicator of one call.
inline constexpr int points_tag_sort = 1;
inline constexpr int points_tag_probe = 2;
inline constexpr int points_tag_right = 3;
inline constexpr int points_tag_cut = 4;
inline constexpr int points_tag_return = 5;

/// Agrees on the input before anything moves: the box, `parts` (equal on every rank), the
/// points and weights. Collective over world.
template <SpaceFillingCurve C>
void points_agree_on_input(const boost::mpi::communicator& world, const Box<C::dim>& box,
                           std::span<const std::array<double, C::dim>> points,
                           std::span<const double> weights, std::size_t parts) {
  // One reduction gives the largest and the smallest `parts` (as max - parts).
  std::uint64_t span_of_parts[2] = {parts, std::numeric_limits<std::uint64_t>::max() - parts};
  std::uint64_t span_all[2] = {0, 0};
  boost::mpi::all_reduce(world, span_of_parts, 2, span_all, boost::mpi::maximum<std::uint64_t>());
  std::optional<std::string> failure;
  const std::string where = " on rank " + std::to_string(world.rank());
  try {
    box.validate();
  } catch (const irregular::error& e) {
    failure = std::string(e.what()) + where;
  }
  if (!failure && span_all[0] != std::numeric_limits<std::uint64_t>::max() - span_all[1])
    failure = "irregular::partition_points: parts differs between ranks (from " +
              std::to_string(std::numeric_limits<std::uint64_t>::max() - span_all[1]) + " to " +
              std::to_string(span_all[0]) + ")";
  if (!failure) failure = check_parts_count(parts);
  if (!failure) failure = check_points<C::dim>(box, points, weights, where);
  mpi::agree_on(world, failure);
}

/// The global numbering of the points (rank order) and the weight scale, from O(p) numbers.
struct PointsNumbering {
  std::vector<std::uint64_t> home;  // first global index per rank, p + 1 values
  WeightScale scale;
};

inline PointsNumbering points_numbering(const boost::mpi::communicator& world, std::size_t n_local,
                                        std::span<const double> weights) {
  const int p = world.size();
  PointsNumbering out;
  std::vector<std::uint64_t> counts;
  boost::mpi::all_gather(world, static_cast<std::uint64_t>(n_local), counts);
  out.home.assign(static_cast<std::size_t>(p) + 1, 0);
  for (int r = 0; r < p; ++r)
    out.home[static_cast<std::size_t>(r) + 1] =
        out.home[static_cast<std::size_t>(r)] + counts[static_cast<std::size_t>(r)];
  double local_max = n_local > 0 ? 1.0 : 0.0;
  if (!weights.empty()) local_max = *std::max_element(weights.begin(), weights.end());
  double max_w = 0;
  boost::mpi::all_reduce(world, local_max, max_w, boost::mpi::maximum<double>());
  out.scale = weight_scale(max_w, out.home.back());
  return out;
}

/// Curve order: local radix sort (ties by input index), then the sample sort, which keeps the
/// order of equal keys by source rank and position: the global order is (key, global index).
/// `first` is this rank's first global index. Collective over world.
template <SpaceFillingCurve C>
std::vector<PointRecord<typename C::index_type>> points_in_curve_order(
    const boost::mpi::communicator& world, const Box<C::dim>& box,
    std::span<const std::array<double, C::dim>> points, std::span<const double> weights,
    std::uint64_t first, WeightScale scale) {
  using Index = typename C::index_type;
  const std::size_t n_local = points.size();
  std::vector<PointRecord<Index>> recs(n_local);
  std::vector<Index> keys(n_local);
  {
    // Keys and their curve order as in the serial call (keyed_sort.hpp); the records are
    // written bucket by bucket in that order while the bucket is in cache.
    constexpr int top_shift = keyed_shift(key_bits_of<C>);
    const PooledArray<Index> key_array(n_local);
    KeyedCounts count{};
    Index lo = 0, hi = 0;
    // Every point is in the box (points_agree_on_input checked them).
    (void)keys_of_points<C>(box, points, key_array.get(), 0, top_shift, count, lo, hi);
    const std::uint64_t unit = quantize(1.0, scale);
    with_position_type(n_local, [&]<class Pos>() {
      const PooledArray<Pos> order_array(n_local);
      const Pos* const order = order_array.get();
      const auto fill = [&](std::size_t b, std::size_t e) {
        for (std::size_t j = b; j < e; ++j) {
          const auto i = static_cast<std::size_t>(order[j]);
          recs[j] = {keys[j], first + i, weights.empty() ? unit : quantize(weights[i], scale)};
        }
      };
      keyed_order(static_cast<const Index*>(key_array.get()), n_local, lo, hi, top_shift, count,
                  order_array.get(), keys.data(), KeyedNoTies{}, fill);
    });
  }
  (void)irregular::sample_sort(
      world, recs, keys, index_end<C>(), [](const PointRecord<Index>& r) { return r.key; },
      points_tag_sort);
  return recs;
}

/// This rank's slice of the global prefix sums of the quantized weights in curve order.
struct PointsChain {
  std::vector<std::uint64_t> q;  // Q[first .. first + m]
  std::uint64_t first = 0;       // global position of this rank's first point
  std::uint64_t W = 0;           // total weight
  std::uint64_t maxq = 0;        // largest weight
};

template <class Index>
PointsChain points_prefix_slice(const boost::mpi::communicator& world,
                                const std::vector<PointRecord<Index>>& recs) {
  const int p = world.size(), rank = world.rank();
  const std::size_t m = recs.size();
  std::uint64_t local_sum = 0, local_maxq = 0;
  for (const auto& r : recs) {
    local_sum += r.weight;
    local_maxq = std::max(local_maxq, r.weight);
  }
  std::vector<std::uint64_t> slice_counts, slice_sums;
  boost::mpi::all_gather(world, static_cast<std::uint64_t>(m), slice_counts);
  boost::mpi::all_gather(world, local_sum, slice_sums);
  PointsChain c;
  std::uint64_t offset = 0;
  for (int r = 0; r < p; ++r) {
    if (r < rank) {
      c.first += slice_counts[static_cast<std::size_t>(r)];
      offset += slice_sums[static_cast<std::size_t>(r)];
    }
    c.W += slice_sums[static_cast<std::size_t>(r)];
  }
  boost::mpi::all_reduce(world, local_maxq, c.maxq, boost::mpi::maximum<std::uint64_t>());
  c.q.resize(m + 1);
  c.q[0] = offset;
  for (std::size_t i = 0; i < m; ++i) c.q[i + 1] = c.q[i] + recs[i].weight;
  return c;
}

/// One greedy probe with bottleneck B: its carry passes along the ranks and the last rank
/// broadcasts the outcome. Collective over world.
inline PointsProbeCarry points_probe(const boost::mpi::communicator& world,
                                     std::span<const std::uint64_t> q, std::uint64_t B,
                                     std::uint64_t P, std::uint64_t W) {
  const int p = world.size(), rank = world.rank();
  PointsProbeCarry c;
  if (rank > 0) irregular::mpi::recv_value(world, rank - 1, points_tag_probe, c);
  points_probe_slice(q, B, P, c);
  if (rank + 1 < p) irregular::mpi::send_value(world, rank + 1, points_tag_probe, c);
  if (rank == p - 1) c.attained = std::max(c.attained, W - c.part_start);
  irregular::mpi::broadcast_value(world, c, p - 1);
  return c;
}

/// The optimal bottleneck: Nicol's parametric search over greedy probes, between the average
/// part and the greedy bound W/P + max w.
inline std::uint64_t points_bottleneck(const boost::mpi::communicator& world,
                                       const PointsChain& chain, std::uint64_t P) {
  const std::uint64_t avg = chain.W / P + (chain.W % P != 0);
  // Greedy at W/P + max w fits.
  std::uint64_t lo = std::max(avg, chain.maxq), hi = avg + chain.maxq;
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    const auto c = points_probe(world, chain.q, mid, P, chain.W);
    if (c.parts <= P)
      hi = std::min(mid, c.attained);
    else
      lo = std::max(mid + 1, c.extension);
  }
  return lo;
}

/// The canonical separators at bottleneck B (tree/partition_points.hpp): L_k by the
/// right-to-left greedy passed from the last rank down, then s_k left to right; every rank gets
/// all of them (sep) and the prefix value at each (q_at). Collective over world.
inline void points_place_separators(const boost::mpi::communicator& world, const PrefixSlice& slice,
                                    std::uint64_t B, std::uint64_t W, std::uint64_t N,
                                    std::uint64_t P, std::vector<std::uint64_t>& sep,
                                    std::vector<std::uint64_t>& q_at) {
  const int p = world.size(), rank = world.rank();
  std::vector<std::pair<std::uint64_t, std::uint64_t>> lows;
  RightGreedyCarry rc{P - 1, W};
  if (rank + 1 < p) irregular::mpi::recv_value(world, rank + 1, points_tag_right, rc);
  right_greedy_slice(slice, B, rc, lows);
  if (rank > 0) irregular::mpi::send_value(world, rank - 1, points_tag_right, rc);
  // (k, position) pairs as two words each, gathered raw in rank order.
  std::vector<std::uint64_t> low_words;
  for (const auto& [k, pos] : lows) low_words.insert(low_words.end(), {k, pos});
  std::vector<int> counts;
  const auto all_lows =
      irregular::mpi::all_gather_raw(world, std::span<const std::uint64_t>(low_words), counts);
  std::vector<std::uint64_t> lower(P + 1, 0);
  lower[P] = N;
  for (std::size_t i = 0; i + 1 < all_lows.size(); i += 2) lower[all_lows[i]] = all_lows[i + 1];

  std::vector<PlacedSeparator> placed;
  CutCarry cc;
  if (rank > 0) irregular::mpi::recv_value(world, rank - 1, points_tag_cut, cc);
  cut_slice(slice, B, W, N, P, lower, cc, placed);
  if (rank + 1 < p) irregular::mpi::send_value(world, rank + 1, points_tag_cut, cc);
  const auto all_placed =
      irregular::mpi::all_gather_raw(world, std::span<const PlacedSeparator>(placed), counts);
  sep.assign(P + 1, N);
  sep[0] = 0;
  q_at[P] = W;
  for (const auto& s : all_placed) {
    sep[s.k] = s.position;
    q_at[s.k] = s.prefix;
  }
}

/// Prefix values at given separators: each rank fills those its slice knows (a value is the
/// same wherever it is known, so the maximum picks it); one reduction.
inline void points_prefix_at_separators(const boost::mpi::communicator& world,
                                        const PointsChain& chain,
                                        const std::vector<std::uint64_t>& sep,
                                        std::vector<std::uint64_t>& q_at) {
  const std::uint64_t P = sep.size() - 1, first = chain.first, m = chain.q.size() - 1;
  std::vector<std::uint64_t> mine(P + 1, 0);
  for (std::uint64_t k = 0; k <= P; ++k)
    if (sep[k] >= first && sep[k] <= first + m) mine[k] = chain.q[sep[k] - first];
  boost::mpi::all_reduce(world, mine.data(), static_cast<int>(P + 1), q_at.data(),
                         boost::mpi::maximum<std::uint64_t>());
}

/// Part ids back to the points' home ranks, one message per partner; `part` gets the part of
/// each of the n_local points of this rank (input order). Frees `recs` before the exchange.
/// Collective over world.
template <class Index>
void points_send_parts_home(const boost::mpi::communicator& world,
                            std::vector<PointRecord<Index>>& recs,
                            const std::vector<std::uint64_t>& home, std::uint64_t first,
                            const std::vector<std::uint64_t>& sep, std::size_t n_local,
                            std::vector<std::uint32_t>& part) {
  const int p = world.size();
  const std::size_t m = recs.size();
  const std::uint64_t P = sep.size() - 1;
  std::vector<std::size_t> out_offsets(static_cast<std::size_t>(p) + 1, 0);
  std::vector<int> dest(m);
  for (std::size_t i = 0; i < m; ++i) {
    const auto g = recs[i].global_index;
    dest[i] = static_cast<int>(std::upper_bound(home.begin(), home.end(), g) - home.begin()) - 1;
    ++out_offsets[static_cast<std::size_t>(dest[i]) + 1];
  }
  for (int r = 0; r < p; ++r)
    out_offsets[static_cast<std::size_t>(r) + 1] += out_offsets[static_cast<std::size_t>(r)];
  std::vector<PartOfPoint> out(m);
  {
    std::vector<std::size_t> fill(out_offsets.begin(), out_offsets.end() - 1);
    std::uint64_t k = 0;
    for (std::size_t i = 0; i < m; ++i) {
      const std::uint64_t pos = first + i;
      while (k + 1 < P && sep[k + 1] <= pos) ++k;
      out[fill[static_cast<std::size_t>(dest[i])]++] = {recs[i].global_index, k};
    }
  }
  recs = {};
  const auto got =
      mpi::sparse_exchange(world, std::span<const PartOfPoint>(out),
                           std::span<const std::size_t>(out_offsets), points_tag_return);
  part.assign(n_local, 0);
  const std::uint64_t mine = home[static_cast<std::size_t>(world.rank())];
  for (const auto& v : got.values) part[v.global_index - mine] = static_cast<std::uint32_t>(v.part);
}

}  // namespace detail

/// Distributed partition_points: every rank passes its own points (and weights: empty = all 1);
/// returns the part of each local point, in input order, and the loads and sizes of all parts
/// (replicated). The answer is that of the serial partition_points<C> on the concatenation of
/// all ranks' points in rank order — whatever the number of ranks. `box` and `parts` must be the
/// same on every rank. A bad point, weight or size on any rank, a bad box, parts == 0 or parts
/// differing between ranks make every rank throw the same irregular::collective_error (naming
/// the lowest failing rank and the point index there) before any point moves.
/// Cost: a sample sort of the points, O(log W) probes of the chain each passing O(1) numbers
/// along the ranks, O(P) replicated numbers, one message per partner to send part ids home.
/// Collective over comm.
template <SpaceFillingCurve C>
[[nodiscard]] PointPartition partition_points(const boost::mpi::communicator& comm,
                                              const Box<C::dim>& box,
                                              std::span<const std::array<double, C::dim>> points,
                                              std::span<const double> weights, std::size_t parts) {
  // The call's own communicator: its tags cannot meet the caller's messages.
  const boost::mpi::communicator world(comm, boost::mpi::comm_duplicate);
  detail::points_agree_on_input<C>(world, box, points, weights, parts);
  const detail::PointsNumbering numbering = detail::points_numbering(world, points.size(), weights);
  const auto& home = numbering.home;
  const std::uint64_t N = home.back(), P = parts;
  auto recs = detail::points_in_curve_order<C>(
      world, box, points, weights, home[static_cast<std::size_t>(world.rank())], numbering.scale);
  const detail::PointsChain chain = detail::points_prefix_slice(world, recs);
  const std::uint64_t m = recs.size();
  const detail::PrefixSlice slice{chain.q, chain.first, chain.first + m == N};

  // Separators s_0..s_P (replicated) and the prefix value at each.
  std::vector<std::uint64_t> sep = detail::trivial_separators(N, chain.W, P);
  std::vector<std::uint64_t> q_at(P + 1, 0);
  if (sep.empty()) {
    const std::uint64_t B = detail::points_bottleneck(world, chain, P);
    detail::points_place_separators(world, slice, B, chain.W, N, P, sep, q_at);
  } else {
    detail::points_prefix_at_separators(world, chain, sep, q_at);
  }

  PointPartition result;
  result.loads.resize(parts);
  result.sizes.resize(parts);
  for (std::uint64_t k = 0; k < P; ++k) {
    result.sizes[k] = sep[k + 1] - sep[k];
    result.loads[k] = detail::dequantize(q_at[k + 1] - q_at[k], numbering.scale);
    result.bottleneck = std::max(result.bottleneck, result.loads[k]);
  }
  detail::points_send_parts_home(world, recs, home, chain.first, sep, points.size(), result.part);
  return result;
}

/// Unweighted: every point weighs 1. Collective over comm.
template <SpaceFillingCurve C>
[[nodiscard]] PointPartition partition_points(const boost::mpi::communicator& comm,
                                              const Box<C::dim>& box,
                                              std::span<const std::array<double, C::dim>> points,
                                              std::size_t parts) {
  return partition_points<C>(comm, box, points, std::span<const double>{}, parts);
}

}  // namespace irregular
