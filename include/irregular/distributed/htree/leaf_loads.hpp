// LeafLoads: the loads of a rank's leaves under a LoadMetric (baiardi-2001 §3: constant, static
// weight, measured), with measurement windows whose unit every rank agrees on, and their total
// kept up to date (a segment shift estimates only the leaves that arrived).
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/detail/open_around.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/htree/load_metric.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace irregular {

/// One load per local leaf. Measured metrics also keep the seconds timed in the current window
/// (`measured`, carried with their leaves when they move) and whether this rank timed any.
template <SpaceFillingCurve C, class Metric>
class LeafLoads {
 public:
  /// True for a measured metric (load::Measured): loads are timed seconds.
  static constexpr bool is_measured = detail::MeasuredMetric<Metric>;

  /// One load per local leaf, in leaf order.
  [[nodiscard]] std::span<const double> values() const noexcept { return loads_; }
  /// Maps the headroom's pages now (DomainOptions::resident_headroom).
  void touch_headroom() noexcept { loads_.touch_room(); }

  /// The sum of values() in leaf order (as a sequential loop sums them), kept up to date.
  [[nodiscard]] double total() const noexcept { return total_; }

  /// Estimates from the metric: the sum of weight(e) over the leaf's elements for per-element
  /// metrics (`elements_of(i)` gives leaf i's elements), metric(cell, count) otherwise. Throws
  /// irregular::invalid_argument naming the leaf and rank for a negative or non-finite load.
  /// Local: the metric may be user code, so callers agree on the outcome.
  template <class ElementsOf>
  void estimate(const Metric& metric, const LocalLeaves<C>& leaves, ElementsOf&& elements_of,
                int rank) {
    detail::reserve_headroom(loads_, leaves.size());
    loads_.resize(leaves.size());
    double total = 0;
    bool integral = true;
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      const double l = estimate_one(metric, leaves, elements_of, i, rank);
      loads_[i] = l;
      total += l;
      integral = integral && is_integral(l);
    }
    total_ = total;
    integral_ = integral && total < exact_bound;
  }

  /// After a segment shift (`s.spliced`) that placed `leaves`: the kept leaves keep their loads
  /// (their cells, counts and elements did not change), the arrivals are estimated as estimate()
  /// would. O(shipped) unless the loads are not all integers (then the total is summed again).
  /// Only for metrics whose loads are their estimates (not measured ones, see agree_unit).
  /// Throws as estimate(). Local.
  template <class ElementsOf>
  void shift(const ShiftLayout& s, const Metric& metric, const LocalLeaves<C>& leaves,
             ElementsOf&& elements_of, int rank) {
    static_assert(!is_measured,
                  "irregular::LeafLoads::shift: measured loads are not their estimates");
    IRREGULAR_ASSERT(s.spliced && s.kept_first + s.kept <= loads_.size() &&
                     leaves.size() == s.low + s.kept + s.high);
    const std::size_t kept_end = s.kept_first + s.kept;
    bool integral = integral_;
    double dropped = 0;  // exact when integral: integers below 2^53
    if (integral) {
      for (std::size_t i = 0; i < s.kept_first; ++i) dropped += loads_[i];
      for (std::size_t i = kept_end; i < loads_.size(); ++i) dropped += loads_[i];
    }
    detail::open_around(loads_, s.kept_first, kept_end, s.low, s.high);
    double arrived = 0;
    auto arrive = [&](std::size_t i) {
      const double l = estimate_one(metric, leaves, elements_of, i, rank);
      loads_[i] = l;
      arrived += l;
      integral = integral && is_integral(l);
    };
    for (std::size_t i = 0; i < s.low; ++i) arrive(i);
    for (std::size_t i = s.low + s.kept; i < loads_.size(); ++i) arrive(i);
    if (integral) {
      total_ = total_ - dropped + arrived;
      integral_ = total_ < exact_bound;
      if (integral_) return;
    }
    summarize();
  }

  /// Measured metrics: the ranks agree on one unit. When any rank timed a leaf in this window,
  /// every load is in seconds — timed leaves their seconds, untimed ones their element count
  /// times the global seconds per element; otherwise the estimates stand. Collective over comm.
  void agree_unit(const boost::mpi::communicator& comm, const LocalLeaves<C>& leaves) {
    if constexpr (is_measured) {
      std::array<double, 3> mine{0, 0, timed_ ? 1.0 : 0.0}, all{};
      for (std::size_t i = 0; i < leaves.size(); ++i)
        if (measured_[i] > 0) {
          mine[0] += measured_[i];
          mine[1] += static_cast<double>(leaves.counts()[i]);
        }
      boost::mpi::all_reduce(comm, mine.data(), 3, all.data(), std::plus<double>());
      if (all[2] == 0) return;
      const double rate = all[1] > 0 ? all[0] / all[1] : 0;
      for (std::size_t i = 0; i < leaves.size(); ++i)
        loads_[i] =
            measured_[i] > 0 ? measured_[i] : rate * static_cast<double>(leaves.counts()[i]);
      summarize();
    }
  }

  /// What travels with each leaf when leaves move: measured seconds, or nothing of value.
  [[nodiscard]] std::vector<double> payload(std::size_t leaves) const {
    return is_measured ? measured_ : std::vector<double>(leaves, 0.0);
  }
  /// The payload that arrived with the leaves now held (same order). Only measured metrics keep
  /// seconds; the others keep nothing per leaf.
  void receive(std::vector<double> payload, [[maybe_unused]] std::size_t leaves) {
    if constexpr (is_measured) {
      IRREGULAR_ASSERT(payload.size() == leaves);
      measured_ = std::move(payload);
    }
  }

  /// Seconds stored with the leaves now held (a checkpoint's measured loads): they count as
  /// measured, so the next partition weighs the leaves by them.
  void adopt_seconds([[maybe_unused]] std::vector<double> seconds,
                     [[maybe_unused]] std::size_t leaves) {
    if constexpr (is_measured) {
      IRREGULAR_ASSERT(seconds.size() == leaves);
      measured_ = std::move(seconds);
      for (double x : measured_) timed_ = timed_ || x > 0;
    }
  }

  /// After the tree adapted: seconds of the leaves that exist before and after (same start and
  /// level); new leaves start unmeasured.
  void carry([[maybe_unused]] const LocalLeaves<C>& old,
             [[maybe_unused]] const LocalLeaves<C>& now) {
    if constexpr (is_measured) {
      std::vector<double> m(now.size(), 0.0);
      std::size_t j = 0;
      for (std::size_t i = 0; i < now.size(); ++i) {
        while (j < old.size() && old.starts()[j] < now.starts()[i]) ++j;
        if (j < old.size() && old.starts()[j] == now.starts()[i] &&
            old.levels()[j] == now.levels()[i])
          m[i] = measured_[j];
      }
      measured_ = std::move(m);
    }
  }

  /// A new measurement window: nothing timed.
  void new_window([[maybe_unused]] std::size_t leaves) {
    if constexpr (is_measured) measured_.assign(leaves, 0.0);
    timed_ = false;
  }
  /// The seconds counter of leaf i (load::Measured), for a ScopedTimer.
  [[nodiscard]] double& seconds_of(std::size_t i) {
    static_assert(is_measured, "irregular::LeafLoads::seconds_of needs a measured metric");
    timed_ = true;
    return measured_[i];
  }

 private:
  /// Sums of integers below 2^53 are exact in any order.
  static constexpr double exact_bound = 9007199254740992.0;
  static bool is_integral(double l) noexcept {  // l >= 0 and finite
    return l < exact_bound && static_cast<double>(static_cast<std::int64_t>(l)) == l;
  }

  template <class ElementsOf>
  static double estimate_one(const Metric& metric, const LocalLeaves<C>& leaves,
                             ElementsOf& elements_of, std::size_t i, int rank) {
    double l;
    if constexpr (detail::PerElementMetric<Metric>) {
      l = 0;
      for (const auto& e : elements_of(i)) l += static_cast<double>(metric.weight(e));
    } else {
      l = static_cast<double>(metric(leaves.cell(i), static_cast<std::size_t>(leaves.counts()[i])));
    }
    if (!(l >= 0) || !std::isfinite(l))
      throw invalid_argument("irregular::IrregularDomain: the load metric gave " +
                             std::to_string(l) + " for leaf " + std::to_string(i) + " on rank " +
                             std::to_string(rank) + " (loads must be finite and >= 0)");
    return l;
  }

  /// total_ and integral_ from loads_, summed in leaf order.
  void summarize() {
    double total = 0;
    bool integral = true;
    for (double l : loads_) {
      total += l;
      integral = integral && l >= 0 && is_integral(l);
    }
    total_ = total;
    integral_ = integral && total < exact_bound;
  }

  detail::SpliceVector<double> loads_;  // spliced in place by a remap
  std::vector<double> measured_;  ///< seconds per leaf (measured metrics only; empty otherwise)
  bool timed_ = false;
  double total_ = 0;      ///< sum of loads_ in leaf order
  bool integral_ = true;  ///< every load an integer and total_ < 2^53: total_ updates exactly
};

}  // namespace irregular
