// Weighted points cut into P parts along a space-filling curve: the curve order of the points
// split into P contiguous runs with the least possible bottleneck (the SFC blocking partition of
// baiardi-2001 §3 applied to points; NicolPlus of saule-bas-catalyurek §2.2 on the chain).
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/core/index.hpp>
#include <irregular/partition/nicol_plus.hpp>
#include <irregular/partition/prefix_sums.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/detail/keyed_sort.hpp>
#include <irregular/tree/sort.hpp>

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
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular {

/// Which part each point belongs to, and what each part holds. Parts are contiguous runs of
/// the curve order of the points (equal curve keys ordered by input index), numbered along it.
struct PointPartition {
  std::vector<std::uint32_t>
      part;                   ///< part of each point, in input order (distributed: local points)
  std::vector<double> loads;  ///< sum of the weights in each part (all P parts)
  std::vector<std::uint64_t> sizes;  ///< number of points in each part (all P parts)
  double bottleneck = 0;             ///< the largest part load

  /// Number of parts P.
  [[nodiscard]] std::size_t parts() const noexcept { return loads.size(); }

  /// Lmax / Lavg - 1 (saule-bas-catalyurek §2); 0 when the total load is 0.
  [[nodiscard]] double imbalance() const noexcept {
    double total = 0;
    for (double l : loads) total += l;
    if (!(total > 0)) return 0.0;
    return bottleneck / (total / static_cast<double>(loads.size())) - 1.0;
  }

  /// Parts without points; 0 whenever there are at least as many points as parts.
  [[nodiscard]] std::size_t empty_parts() const noexcept {
    return static_cast<std::size_t>(std::count(sizes.begin(), sizes.end(), std::uint64_t{0}));
  }
};

namespace detail {

// ---- Keys -------------------------------------------------------------------------------

/// Curve index of the finest cell that holds x. Precondition: box.contains(x).
template <SpaceFillingCurve C>
[[nodiscard]] typename C::index_type point_key(const Box<C::dim>& box,
                                               const std::array<double, C::dim>& x) noexcept {
  return C::index(box.cell_of(x, C::max_level, axis_cells<C>(C::max_level)));
}

/// Bits of the finest keys of C: every key is below 2^key_bits_of<C>.
template <SpaceFillingCurve C>
inline constexpr int key_bits_of = used_bits(static_cast<typename C::index_type>(index_end<C>() -
                                                                                 1));

/// The finest keys of the points shifted right by `drop` (keys[i] of points[i]) with their
/// digit counts at `shift` (keyed_order's scatter) and their bounds, in one pass; false if a
/// point is outside the box or NaN (its key is then that of box.lo: check_points names it).
template <SpaceFillingCurve C, class Key>
[[nodiscard]] bool keys_of_points(const Box<C::dim>& box,
                                  std::span<const std::array<double, C::dim>> points, Key* keys,
                                  int drop, int shift, KeyedCounts& count, Key& lo, Key& hi) {
  const coord_t cells = axis_cells<C>(C::max_level);
  bool inside = true;
  Key l = static_cast<Key>(~Key{0}), h = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const bool in = box.contains(points[i]);
    inside &= in;
    const auto k = static_cast<Key>(
        C::index(box.cell_of(in ? points[i] : box.lo, C::max_level, cells)) >> drop);
    keys[i] = k;
    ++count[keyed_digit(k, shift)];
    l = std::min(l, k);
    h = std::max(h, k);
  }
  lo = points.empty() ? 0 : l;
  hi = h;
  return inside;
}

/// The largest weight (1 for no weights and some points); false if a weight is negative, NaN or
/// infinite (check_points names it).
[[nodiscard]] inline bool max_weight(std::span<const double> weights, std::size_t n,
                                     double& max_w) {
  max_w = n > 0 ? 1.0 : 0.0;
  if (weights.empty()) return true;
  bool good = true;
  double m = weights[0];
  for (const double w : weights) {
    good &= (w >= 0) & (w <= std::numeric_limits<double>::max());  // NaN fails both
    m = std::max(m, w);
  }
  max_w = m;
  return good;
}

// ---- Input checks -----------------------------------------------------------------------

/// The first bad point or weight, as a message naming its index (`where` adds e.g. the rank);
/// nothing if all are good. Weights: empty (all 1) or one finite non-negative value per point.
template <int D>
[[nodiscard]] std::optional<std::string> check_points(const Box<D>& box,
                                                      std::span<const std::array<double, D>> points,
                                                      std::span<const double> weights,
                                                      const std::string& where) {
  const std::string who = "irregular::partition_points: ";
  if (!weights.empty() && weights.size() != points.size())
    return who + std::to_string(weights.size()) + " weights for " + std::to_string(points.size()) +
           " points" + where;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!box.contains(points[i])) {
      std::string at = "(";
      for (int d = 0; d < D; ++d)
        at += (d ? ", " : "") + std::to_string(points[i][static_cast<std::size_t>(d)]);
      return who + "point " + std::to_string(i) + at + ") is outside the box or NaN" + where;
    }
  }
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double w = weights[i];
    if (!(w >= 0) || !std::isfinite(w))
      return who + "weight of point " + std::to_string(i) + " (" + std::to_string(w) +
             ") is negative, NaN or infinite" + where;
  }
  return std::nullopt;
}

[[nodiscard]] inline std::optional<std::string> check_parts_count(std::size_t parts) {
  if (parts == 0) return std::string("irregular::partition_points: parts must be at least 1");
  if (parts > std::numeric_limits<std::uint32_t>::max())
    return "irregular::partition_points: parts = " + std::to_string(parts) +
           " exceeds 2^32 - 1 (part ids are 32-bit)";
  return std::nullopt;
}

// ---- Fixed-point weights ----------------------------------------------------------------
// Weights become integers w * 2^e with e chosen from the largest weight and the point count
// (both independent of how the points are spread over ranks), so every prefix sum is exact and
// the same whatever order or rank computes it: the cut is then reproducible bit for bit.
// Integer weights (1, 4, ...) are represented exactly; others to max_w * 2^(-61 + log2 N).

struct WeightScale {
  double factor = 1.0;  ///< 2^e
};

[[nodiscard]] inline WeightScale weight_scale(double max_weight, std::uint64_t n) noexcept {
  if (!(max_weight > 0) || n == 0) return {};
  int ex = 0;
  (void)std::frexp(max_weight, &ex);  // max_weight < 2^ex
  // Each weight below 2^(62 - bit_width(n)), so n of them sum below 2^62 (plus n/2 rounding).
  const int e = std::clamp(62 - ex - static_cast<int>(std::bit_width(n)), -1074, 1023);
  return {std::ldexp(1.0, e)};
}

[[nodiscard]] inline std::uint64_t quantize(double w, WeightScale s) noexcept {
  return static_cast<std::uint64_t>(w * s.factor + 0.5);
}

[[nodiscard]] inline double dequantize(std::uint64_t q, WeightScale s) noexcept {
  return static_cast<double>(q) / s.factor;
}

// ---- The canonical optimal cut ----------------------------------------------------------
// Among the cuts with the optimal bottleneck B, one rule picks the separators, so a serial call
// and a distributed one (each rank holding a slice of the prefix sums) agree exactly:
//   L_k = where the right-to-left greedy cut with bound B starts its (P-k) last parts (the least
//         separator k that still lets the rest fit);
//   s_k = clamp(t_k, max(s_{k-1} + 1, L_k), min(G(s_{k-1}), n - (P - k))), where G(s) is the
//         farthest end of a part starting at s with load <= B and t_k is the first position
//         whose prefix reaches k·W/P.
// Every part stays within B, no part is empty (n >= P), and the cuts follow the even targets
// k·W/P as closely as the bound allows. (n < P: s_k = min(k, n); W = 0: s_k = k·n/P.)
// A slice holds Q[first .. first + m] (global prefix sums of the quantized weights).

inline constexpr std::uint64_t no_position = std::numeric_limits<std::uint64_t>::max();

struct PrefixSlice {
  std::span<const std::uint64_t> q;  ///< Q[first + i], i = 0..m
  std::uint64_t first = 0;
  bool holds_end = true;  ///< first + m == n: this slice ends the chain
  [[nodiscard]] std::uint64_t end() const noexcept { return first + q.size() - 1; }
};

/// Carry of the right-to-left greedy: next separator k to place and the prefix value where the
/// part after it ends.
struct RightGreedyCarry {
  std::uint64_t k = 0;
  std::uint64_t q_end = 0;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& k& q_end;
  }
};

/// Places L_k (k = c.k down to 1) that lie in this slice; stops (to pass c on to the previous
/// slice) when L_k lies at or before the slice's first position and the slice is not the first.
inline void right_greedy_slice(const PrefixSlice& s, std::uint64_t B, RightGreedyCarry& c,
                               std::vector<std::pair<std::uint64_t, std::uint64_t>>& placed) {
  while (c.k >= 1) {
    const std::uint64_t target = c.q_end > B ? c.q_end - B : 0;
    if (s.first > 0 && s.q.front() >= target) return;
    const auto j =
        static_cast<std::uint64_t>(std::lower_bound(s.q.begin(), s.q.end(), target) - s.q.begin());
    placed.emplace_back(c.k, s.first + j);
    c.q_end = s.q[j];
    --c.k;
  }
}

/// Carry of the left-to-right pass: next separator k to place, the previous separator and its
/// prefix value.
struct CutCarry {
  std::uint64_t k = 1;
  std::uint64_t s_prev = 0;
  std::uint64_t q_prev = 0;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& k& s_prev& q_prev;
  }
};

/// One separator with its prefix value: what the ranks exchange to assemble the cut.
struct PlacedSeparator {
  std::uint64_t k = 0, position = 0, prefix = 0;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& k& position& prefix;
  }
};

/// Places s_k (rule above) while s_k lies before this slice's end (or anywhere if the slice
/// ends the chain). `lower` holds L_0..L_P. A bound at or past the slice end is only known to
/// be there, which is enough: the clamp is then decided by a later slice.
inline void cut_slice(const PrefixSlice& s, std::uint64_t B, std::uint64_t W, std::uint64_t n,
                      std::uint64_t P, std::span<const std::uint64_t> lower, CutCarry& c,
                      std::vector<PlacedSeparator>& placed) {
  const std::uint64_t E = s.end();
  while (c.k < P) {
    const std::uint64_t lo = std::max(c.s_prev + 1, lower[c.k]);
    std::uint64_t G;
    const std::uint64_t limit = c.q_prev + B;
    if (s.q.back() <= limit) {
      G = s.holds_end ? E : no_position;
    } else {
      G = s.first +
          static_cast<std::uint64_t>(std::upper_bound(s.q.begin(), s.q.end(), limit) -
                                     s.q.begin()) -
          1;
    }
    const std::uint64_t hi = std::min(G, n - (P - c.k));
    const auto T = static_cast<std::uint64_t>(static_cast<uint128_t>(c.k) * W / P);
    const std::uint64_t t =
        s.q.back() < T ? no_position
                       : s.first + static_cast<std::uint64_t>(
                                       std::lower_bound(s.q.begin(), s.q.end(), T) - s.q.begin());
    const std::uint64_t r = std::max(lo, std::min(t, hi));
    if (r >= E && !s.holds_end) return;
    const std::uint64_t qr = s.q[r - s.first];
    placed.push_back({c.k, r, qr});
    c.s_prev = r;
    c.q_prev = qr;
    ++c.k;
  }
}

/// Separators s_0..s_P of the chain for the degenerate cases (n < P or W = 0), where they
/// follow from n and P alone; empty when the general rule applies.
[[nodiscard]] inline std::vector<std::uint64_t> trivial_separators(std::uint64_t n, std::uint64_t W,
                                                                   std::uint64_t P) {
  std::vector<std::uint64_t> s;
  if (n < P) {
    for (std::uint64_t k = 0; k <= P; ++k) s.push_back(std::min(k, n));
  } else if (W == 0) {
    for (std::uint64_t k = 0; k <= P; ++k)
      s.push_back(static_cast<std::uint64_t>(static_cast<uint128_t>(k) * n / P));
  }
  return s;
}

}  // namespace detail

/// Partitions weighted points into `parts` parts along the curve C: the points in curve order
/// (finest-level keys in `box`; equal keys in input order) are cut into `parts` contiguous runs
/// whose largest load is the least possible; among such cuts, part loads follow the even
/// targets k·W/parts and no part is empty when there are at least `parts` points. Part k is the
/// k-th run along the curve. `weights`: empty (every point weighs 1) or one per point.
/// Weights are summed exactly in fixed point (see detail::weight_scale), so the answer is
/// reproducible; weights below max_weight·2^-61·N count only to that precision.
/// Throws irregular::invalid_argument naming the first bad point (outside the box or NaN) or
/// weight (negative, NaN, infinite), for a weights/points size mismatch, for parts == 0, or for
/// a bad box; nothing else happens then. O(N) keys and a radix sort, then O(P log N).
template <SpaceFillingCurve C>
[[nodiscard]] PointPartition partition_points(const Box<C::dim>& box,
                                              std::span<const std::array<double, C::dim>> points,
                                              std::span<const double> weights, std::size_t parts) {
  using Index = typename C::index_type;
  box.validate();
  if (auto bad = detail::check_parts_count(parts)) throw invalid_argument(*bad);
  const std::size_t n = points.size();
  const auto fail = [&] {
    throw invalid_argument(*detail::check_points<C::dim>(box, points, weights, ""));
  };
  if (!weights.empty() && weights.size() != n) fail();
  // The checks ride along the passes that read the points and weights anyway; check_points
  // only runs to name the first bad one.
  double max_w = 0;
  if (!detail::max_weight(weights, n, max_w)) fail();
  const std::uint64_t P = parts;
  const detail::WeightScale scale = detail::weight_scale(max_w, n);

  // The top 32 bits of the keys with the digit counts of the sort's scatter, in one pass over
  // the points. Sorting 4-byte keys moves half the bytes; the few points whose top bits tie
  // (the same cell 16 levels down in 2D) are ordered by their whole keys afterwards.
  constexpr int drop = std::max(0, detail::key_bits_of<C> - 32);
  using Key = std::conditional_t<(drop > 0), std::uint32_t, Index>;
  constexpr int top_shift = detail::keyed_shift(detail::key_bits_of<C> - drop);
  const detail::PooledArray<Key> key_array(n);
  detail::KeyedCounts count{};
  Key lo = 0, hi = 0;
  if (!detail::keys_of_points<C>(box, points, key_array.get(), drop, top_shift, count, lo, hi))
    fail();

  PointPartition r;
  detail::with_position_type(n, [&]<class Pos>() {
    // Curve order (ties by input index) as input positions, with the prefix sums of the
    // quantized weights along it filled bucket by bucket while the bucket is in cache.
    const detail::PooledArray<Pos> order_array(n);
    const detail::PooledArray<std::uint64_t> prefix(n + 1);
    const Pos* const order = order_array.get();
    std::uint64_t* const Q = prefix.get();
    Q[0] = 0;
    const std::uint64_t unit = detail::quantize(1.0, scale);
    const auto fill_prefix = [&](std::size_t b, std::size_t e) {
      std::uint64_t acc = Q[b];
      if (weights.empty()) {
        for (std::size_t j = b; j < e; ++j) Q[j + 1] = (acc += unit);
      } else {
        for (std::size_t j = b; j < e; ++j)
          Q[j + 1] = (acc += detail::quantize(weights[static_cast<std::size_t>(order[j])], scale));
      }
    };
    // Ties of the top bits: the whole keys decide, equal ones stay in input order.
    std::vector<detail::KeyedLocal<Index, Pos>> tied, tied_scratch;
    std::vector<std::uint32_t> tied_count;
    const auto order_ties = [&](Pos* run, std::size_t m) {
      tied.resize(m);
      for (std::size_t j = 0; j < m; ++j)
        tied[j] = {detail::point_key<C>(box, points[static_cast<std::size_t>(run[j])]), run[j]};
      detail::sort_pairs(tied.data(), m, tied_scratch, tied_count);
      for (std::size_t j = 0; j < m; ++j) run[j] = tied[j].pos;
    };
    const auto sort_with = [&](auto&& ties) {
      detail::keyed_order(static_cast<const Key*>(key_array.get()), n, lo, hi, top_shift, count,
                          order_array.get(), static_cast<Key*>(nullptr), ties, fill_prefix);
    };
    if constexpr (drop > 0)
      sort_with(order_ties);
    else
      sort_with(detail::KeyedNoTies{});
    const std::uint64_t W = Q[n];

    std::vector<std::uint64_t> sep = detail::trivial_separators(n, W, P);
    if (sep.empty()) {
      // The optimal bottleneck (exact on integer sums) straight from the prefix array.
      const std::uint64_t B =
          partition::optimal_bottleneck(static_cast<const std::uint64_t*>(Q), 0, n, parts);
      const detail::PrefixSlice slice{std::span<const std::uint64_t>(Q, n + 1), 0, true};
      std::vector<std::uint64_t> lower(P + 1, 0);
      lower[P] = n;
      std::vector<std::pair<std::uint64_t, std::uint64_t>> lows;
      detail::RightGreedyCarry rc{P - 1, W};
      detail::right_greedy_slice(slice, B, rc, lows);
      for (const auto& [k, pos] : lows) lower[k] = pos;
      std::vector<detail::PlacedSeparator> placed;
      detail::CutCarry cc;
      detail::cut_slice(slice, B, W, n, P, lower, cc, placed);
      sep.assign(P + 1, n);
      sep[0] = 0;
      for (const auto& p : placed) sep[p.k] = p.position;
    }

    r.part.resize(n);
    r.loads.resize(parts);
    r.sizes.resize(parts);
    std::uint32_t* const part = r.part.data();
    for (std::uint64_t k = 0; k < P; ++k) {
      for (std::uint64_t pos = sep[k]; pos < sep[k + 1]; ++pos)
        part[static_cast<std::size_t>(order[pos])] = static_cast<std::uint32_t>(k);
      r.sizes[k] = sep[k + 1] - sep[k];
      r.loads[k] = detail::dequantize(Q[sep[k + 1]] - Q[sep[k]], scale);
      r.bottleneck = std::max(r.bottleneck, r.loads[k]);
    }
  });
  return r;
}

/// Unweighted: every point weighs 1.
template <SpaceFillingCurve C>
[[nodiscard]] PointPartition partition_points(const Box<C::dim>& box,
                                              std::span<const std::array<double, C::dim>> points,
                                              std::size_t parts) {
  return partition_points<C>(box, points, std::span<const double>{}, parts);
}

}  // namespace irregular
