// Shared pieces of the distributed chain cuts (blocking_cut.hpp, capacity_cut.hpp, and the
// neighbour shift): global prefix sums of a rank's slice of the chain, cost counters, and the
// replicated splitter slots that single ranks decide.
#pragma once

#include <irregular/mpi/detail/index_wire.hpp>
#include <irregular/mpi/operations.hpp>

#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace irregular {

/// What one blocking_partition call cost this rank (optional out-parameter, for tests and
/// benchmarks). Collectives are counted per call of an MPI collective; point-to-point messages
/// occur in the distributed windows' probes (a tree scan) and on the pipelined fallback.
struct BlockingCutStats {
  std::size_t collectives = 0;     // MPI collective calls made by this rank
  std::size_t point_to_point = 0;  // sends + receives
  std::size_t rounds = 0;          // point-to-point rounds (tree-scan levels or pipeline hops)
  std::size_t bytes_sent = 0;      // payload this rank contributed
  std::size_t bytes_received = 0;  // payload this rank received
  std::size_t probes = 0;          // probes of a bottleneck (distributed windows or pipeline)
  std::uint64_t gathered = 0;      // window positions gathered on rank 0
  std::uint64_t window = 0;        // window positions this rank received (distributed windows)
  bool windowed = false;           // the optimal cut came from the windows gathered on rank 0
  bool distributed = false;        // the optimal cut came from the distributed windows
};

namespace detail {

/// The global prefix sums of this rank's slice of the chain, G[x] = offset + S[x] for x in
/// [0, n], S[x] the sequential running sum of the first x local loads. One pass keeps S only at
/// every block start (no O(n) array is written, no second pass adds the offset); S[x] is its
/// block's value plus the loads before x in the block, added in the same order, so every G[x]
/// equals the sequential prefix sum bit for bit, whatever the loads.
class ChainPrefix {
 public:
  static constexpr std::size_t block = 64;

  /// One pass over the loads: running sum, maximum and validity (minimum, NaN and infinity
  /// show in the sum); only a bad pass looks for the first negative or non-finite load.
  explicit ChainPrefix(std::span<const double> loads) : loads_(loads), n_(loads.size()) {
    blocks_.resize(n_ / block + 1);
    const Pass r = pass(loads.data(), n_, blocks_.data());
    const double run = r.run, lo[2] = {r.lo0, r.lo1}, hi[2] = {r.hi0, r.hi1};
    total_ = run;
    max_ = std::max(hi[0], hi[1]);
    if (!(std::min(lo[0], lo[1]) >= 0) || !std::isfinite(run)) {
      for (std::size_t i = 0; i < n_; ++i)
        if (!(loads[i] >= 0) || !std::isfinite(loads[i])) {
          bad_ = i;
          break;
        }
    }
  }

  struct Pass {
    double run, lo0, lo1, hi0, hi1;
  };
  /// The running sum (stored at every block start), minimum and maximum of in[0, n).
  static Pass pass(const double* in, std::size_t n, double* starts) noexcept {
    double run = 0, lo0 = 0, lo1 = 0, hi0 = 0, hi1 = 0;
    for (std::size_t b0 = 0, j = 0; b0 < n; b0 += block, ++j) {
      starts[j] = run;
      const std::size_t b1 = std::min(n, b0 + block);
      std::size_t i = b0;
      for (; i + 2 <= b1; i += 2) {  // the chain of adds is the bound; min and max ride along
        const double u = in[i], v = in[i + 1];
        run += u;
        run += v;
        lo0 = u < lo0 ? u : lo0;
        lo1 = v < lo1 ? v : lo1;
        hi0 = hi0 < u ? u : hi0;
        hi1 = hi1 < v ? v : hi1;
      }
      if (i < b1) {
        const double u = in[i];
        run += u;
        lo0 = u < lo0 ? u : lo0;
        hi0 = hi0 < u ? u : hi0;
      }
    }
    if (n % block == 0) starts[n / block] = run;
    return {run, lo0, lo1, hi0, hi1};
  }

  /// The first negative or non-finite load, if any (then nothing else is computed).
  [[nodiscard]] std::optional<std::size_t> bad() const { return bad_; }
  [[nodiscard]] double local_total() const noexcept { return total_; }
  [[nodiscard]] double local_max() const noexcept { return max_; }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }

  /// The global offset of this rank's slice (the totals of the ranks before, summed in order).
  void set_offset(double offset) noexcept { offset_ = offset; }

  /// G[x], x in [0, n].
  [[nodiscard]] double operator[](std::size_t x) const { return offset_ + local(x); }

  /// The first x in [lo, hi) whose G[x] satisfies pred (monotone: false, then true), hi if none.
  template <class Pred>
  [[nodiscard]] std::size_t first(std::size_t lo, std::size_t hi, Pred pred) const {
    if (lo >= hi) return hi;
    // Block starts j·block in [lo, hi): the first that satisfies pred bounds the scan.
    const std::size_t jl = (lo + block - 1) / block, jh = (hi + block - 1) / block;
    std::size_t j = jl, count = jh - jl;
    while (count > 0) {
      const std::size_t step = count / 2, mid = j + step;
      if (!pred(offset_ + blocks_[mid])) {
        j = mid + 1;
        count -= step + 1;
      } else {
        count = step;
      }
    }
    const std::size_t start = j == jl ? lo : (j - 1) * block, end = j < jh ? j * block : hi;
    double s = local(start);
    for (std::size_t x = start; x < end; ++x) {
      if (pred(offset_ + s)) return x;
      if (x < n_) s += loads_[x];
    }
    return end;
  }
  /// std::lower_bound / std::upper_bound over G[lo, hi).
  [[nodiscard]] std::size_t lower_bound(std::size_t lo, std::size_t hi, double t) const {
    return first(lo, hi, [t](double v) { return !(v < t); });
  }
  [[nodiscard]] std::size_t upper_bound(std::size_t lo, std::size_t hi, double t) const {
    return first(lo, hi, [t](double v) { return t < v; });
  }
  /// f(x, G[x]) for x in [lo, hi), in order.
  template <class F>
  void each(std::size_t lo, std::size_t hi, F&& f) const {
    if (lo >= hi) return;
    double s = local(lo);
    for (std::size_t x = lo; x < hi; ++x) {
      f(x, offset_ + s);
      if (x < n_) s += loads_[x];
    }
  }

  /// Every G[x] (the pipelined fallback probes read them all).
  [[nodiscard]] std::vector<double> values() const {
    std::vector<double> out;
    out.reserve(n_ + 1);
    each(0, n_ + 1, [&out](std::size_t, double g) { out.push_back(g); });
    return out;
  }

 private:
  /// S[x]: the block's running sum, continued in order.
  [[nodiscard]] double local(std::size_t x) const {
    const std::size_t j = x / block;
    double s = blocks_[j];
    for (std::size_t i = j * block; i < x; ++i) s += loads_[i];
    return s;
  }

  std::span<const double> loads_;
  std::size_t n_;
  std::vector<double> blocks_;  // S at every block start (and at n when n is one)
  double offset_ = 0, total_ = 0, max_ = 0;
  std::optional<std::size_t> bad_;
};

/// Counts collectives and payload into an optional BlockingCutStats.
struct CutCounter {
  BlockingCutStats* s;
  void collective(std::size_t sent, std::size_t received) const {
    if (!s) return;
    ++s->collectives;
    s->bytes_sent += sent;
    s->bytes_received += received;
  }
  void hop(std::size_t bytes, bool send) const {
    if (!s) return;
    ++s->point_to_point;
    (send ? s->bytes_sent : s->bytes_received) += bytes;
  }
  void round() const {
    if (s) ++s->rounds;
  }
};

/// Replicates splitters that single ranks decide: slot k carries a curve index and, when
/// `Valued`, a claimed word and one double. Each slot is written by at most one rank, so one
/// bitwise-or all_reduce of fixed size (O(slots) words, no serialization) replicates them all.
template <class I, bool Valued = true>
class SplitterSlots {
 public:
  explicit SplitterSlots(std::size_t slots) : words_(2 * slots * stride, 0) {}
  /// Sets slot k on this rank (no other rank may set it).
  void claim(std::size_t k, I start, double value = 0.0) {
    std::uint64_t* at = words_.data() + k * stride;
    if constexpr (Valued) {
      at[0] = 1;
      at[1] = std::bit_cast<std::uint64_t>(value);
    }
    const auto w = detail::IndexWire::from(start);
    at[head] = w.lo;
    if constexpr (index_words > 1) at[head + 1] = w.hi;
  }
  /// Collective over comm.
  void replicate(const boost::mpi::communicator& comm) {
    const std::size_t n = words_.size() / 2;
    mpi::all_reduce_bitwise_or(comm, std::span<const std::uint64_t>(words_.data(), n),
                               std::span<std::uint64_t>(words_.data() + n, n));
  }
  [[nodiscard]] bool claimed(std::size_t k) const requires Valued { return replicated(k)[0] != 0; }
  [[nodiscard]] double value(std::size_t k) const requires Valued {
    return std::bit_cast<double>(replicated(k)[1]);
  }
  /// Slot k's index after replicate() (0 when no rank claimed it).
  [[nodiscard]] I start(std::size_t k) const {
    detail::IndexWire w;
    w.lo = replicated(k)[head];
    if constexpr (index_words > 1) w.hi = replicated(k)[head + 1];
    return w.template as<I>();
  }

 private:
  static constexpr std::size_t index_words = (sizeof(I) + 7) / 8;
  static constexpr std::size_t head = Valued ? 2 : 0, stride = head + index_words;
  [[nodiscard]] const std::uint64_t* replicated(std::size_t k) const {
    return words_.data() + words_.size() / 2 + k * stride;
  }
  // This rank's slots, then the replicated ones: one buffer, since two vectors set off a false
  // -Wfree-nonheap-object in g++ 12 once inlined.
  std::vector<std::uint64_t> words_;
};

/// Local position x in [0, n] whose running sum prefix[x] is nearest to t (ties to the left).
inline std::size_t nearest_position(std::span<const double> prefix, double t) {
  const auto it = std::upper_bound(prefix.begin(), prefix.end(), t);
  std::size_t y = it == prefix.begin() ? 0 : static_cast<std::size_t>(it - prefix.begin()) - 1;
  if (y + 1 < prefix.size() && prefix[y + 1] - t < t - prefix[y]) ++y;
  return y;
}

}  // namespace detail

}  // namespace irregular
