// CostModel: the time a candidate map would cost per step, from counts the dry run measures
// exactly (distributed/advisor/dry_run.hpp) and three machine figures a short calibration
// measures: a message costs a start-up plus its bytes over the bandwidth (the start-up per
// partner that baiardi-bounded-neighbours §1 bounds; the amount and number of messages that
// kaddoura-ranka §3.4 weighs), compute is the slowest part's load (baiardi-2001 §3), and a
// remap is paid once and amortized over the steps it serves (kaddoura-ranka §3.5).
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/operations.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace irregular::advisor {

/// Options of CostModel::calibrate.
struct CalibrationOptions {
  int repetitions = 20;  ///< round trips per message size; the median counts
  /// Message sizes of the ping-pong, in bytes: the smallest gives the start-up, the largest the
  /// bandwidth.
  std::vector<std::size_t> sizes{8, 4096, 1u << 20};
  int tag = 36;  ///< the tag of the ping-pong on the communicator given
};

/// Seconds of one step under a map: the slowest part's compute and ghost exchange, plus a remap
/// amortized over the steps it serves (Hockney's model for each message: latency + bytes /
/// bandwidth).
struct CostModel {
  double latency = 5e-6;            ///< seconds per message (start-up)
  double seconds_per_byte = 1e-10;  ///< inverse bandwidth
  /// Seconds per unit of leaf load. Unset: 1 when the loads are measured seconds
  /// (load::Measured), else 1e-7, a guess (100 ns per element or leaf): give your own figure
  /// (seconds per element for load::ElementCount), or 0 to rank by communication only.
  std::optional<double> seconds_per_load{};

  /// The seconds per unit of load in force: the figure given, or the default above.
  [[nodiscard]] double load_seconds(bool measured) const noexcept {
    return seconds_per_load.value_or(measured ? 1.0 : 1e-7);
  }

  /// Seconds of `messages` messages carrying `bytes` bytes in all.
  [[nodiscard]] double message_seconds(double messages, double bytes) const noexcept {
    return messages * latency + bytes * seconds_per_byte;
  }

  /// Throws irregular::invalid_argument unless every figure is finite and >= 0.
  void validate() const {
    for (double v : {latency, seconds_per_byte, seconds_per_load.value_or(0.0)})
      if (!(v >= 0) || !std::isfinite(v))
        throw invalid_argument(
            "irregular::advisor::CostModel: latency, seconds_per_byte and seconds_per_load must be "
            "finite and >= 0");
  }

  /// Measures latency and bandwidth by ping-pong between rank pairs (0,1), (2,3), ... at
  /// opt.sizes (a least-squares line through the median one-way times); every rank gets the same
  /// figures (the slowest pair's), so a choice made from them is the same on every rank.
  /// `seconds_per_load` is kept from `base`. One rank: the figures of `base`. Collective over comm.
  static CostModel calibrate(const boost::mpi::communicator& comm, CalibrationOptions opt,
                             CostModel base) {
    mpi::agree(comm, [&] {
      base.validate();
      if (opt.sizes.size() < 2 || opt.repetitions < 1)
        throw invalid_argument(
            "irregular::advisor::CostModel::calibrate: need two sizes and one repetition");
    });
    const int p = comm.size(), me = comm.rank();
    if (p < 2) return base;
    std::sort(opt.sizes.begin(), opt.sizes.end());
    const int partner = (me % 2 == 0) ? me + 1 : me - 1;  // the last rank of an odd p idles
    std::vector<char> buf(opt.sizes.back(), 0);
    std::vector<double> one_way(opt.sizes.size(), 0.0);
    for (std::size_t s = 0; s < opt.sizes.size(); ++s) {
      const int n = static_cast<int>(opt.sizes[s]);
      std::vector<double> t(static_cast<std::size_t>(opt.repetitions), 0.0);
      comm.barrier();
      if (partner < p) {
        for (int k = 0; k <= opt.repetitions; ++k) {  // round 0 warms the path
          const auto t0 = std::chrono::steady_clock::now();
          if (me % 2 == 0) {
            comm.send(partner, opt.tag, buf.data(), n);
            comm.recv(partner, opt.tag, buf.data(), n);
          } else {
            comm.recv(partner, opt.tag, buf.data(), n);
            comm.send(partner, opt.tag, buf.data(), n);
          }
          const double dt =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          if (k > 0) t[static_cast<std::size_t>(k - 1)] = dt / 2;
        }
        std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
        one_way[s] = t[t.size() / 2];
      }
    }
    std::vector<double> slowest(one_way.size());
    mpi::all_reduce_max(comm, std::span<const double>(one_way), std::span<double>(slowest));
    // Least squares over the sizes: the start-up is the intercept, the inverse bandwidth the slope.
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const double k = static_cast<double>(opt.sizes.size());
    for (std::size_t s = 0; s < opt.sizes.size(); ++s) {
      const double x = static_cast<double>(opt.sizes[s]), y = slowest[s];
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
    }
    CostModel m = base;
    const double den = k * sxx - sx * sx;
    m.seconds_per_byte = den > 0 ? std::max(0.0, (k * sxy - sx * sy) / den) : 0.0;
    m.latency = std::max(0.0, (sy - m.seconds_per_byte * sx) / k);
    return m;
  }
  /// calibrate(comm, opt, CostModel{}).
  static CostModel calibrate(const boost::mpi::communicator& comm, CalibrationOptions opt = {});
};

inline CostModel CostModel::calibrate(const boost::mpi::communicator& comm,
                                      CalibrationOptions opt) {
  return calibrate(comm, std::move(opt), CostModel{});
}

}  // namespace irregular::advisor
