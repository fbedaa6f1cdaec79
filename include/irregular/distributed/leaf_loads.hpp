// LeafLoads: the loads of a rank's leaves under a LoadMetric (baiardi-2001 §3: constant, static
// weight, measured), with measurement windows whose unit every rank agrees on.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/load_metric.hpp>
#include <irregular/distributed/local_leaves.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace irregular {

/// One load per local leaf. Measured metrics also keep the seconds timed in the current window
/// (`measured`, carried with their leaves when they move) and whether this rank timed any.
template <SpaceFillingCurve C, class Metric>
class LeafLoads {
 public:
  static constexpr bool is_measured = detail::MeasuredMetric<Metric>;

  [[nodiscard]] const std::vector<double>& values() const noexcept { return loads_; }

  /// Estimates from the metric: the sum of weight(e) over the leaf's elements for per-element
  /// metrics (`elements_of(i)` gives leaf i's elements), metric(cell, count) otherwise. Throws
  /// irregular::invalid_argument naming the leaf and rank for a negative or non-finite load.
  /// Local: the metric may be user code, so callers agree on the outcome.
  template <class ElementsOf>
  void estimate(const Metric& metric, const LocalLeaves<C>& leaves, ElementsOf&& elements_of, int rank) {
    loads_.resize(leaves.size());
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      double l;
      if constexpr (detail::PerElementMetric<Metric>) {
        l = 0;
        for (const auto& e : elements_of(i)) l += static_cast<double>(metric.weight(e));
      } else {
        l = static_cast<double>(metric(leaves.cell(i), static_cast<std::size_t>(leaves.counts_[i])));
      }
      if (!(l >= 0) || !std::isfinite(l))
        throw invalid_argument("irregular::IrregularDomain: the load metric gave " + std::to_string(l) +
                               " for leaf " + std::to_string(i) + " on rank " + std::to_string(rank) +
                               " (loads must be finite and >= 0)");
      loads_[i] = l;
    }
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
          mine[1] += static_cast<double>(leaves.counts_[i]);
        }
      boost::mpi::all_reduce(comm, mine.data(), 3, all.data(), std::plus<double>());
      if (all[2] == 0) return;
      const double rate = all[1] > 0 ? all[0] / all[1] : 0;
      for (std::size_t i = 0; i < leaves.size(); ++i)
        loads_[i] = measured_[i] > 0 ? measured_[i] : rate * static_cast<double>(leaves.counts_[i]);
    }
  }

  /// What travels with each leaf when leaves move: measured seconds, or nothing of value.
  [[nodiscard]] std::vector<double> payload(std::size_t leaves) const {
    return is_measured ? measured_ : std::vector<double>(leaves, 0.0);
  }
  /// The payload that arrived with the leaves now held (same order).
  void receive(std::vector<double> payload, std::size_t leaves) {
    measured_ = is_measured ? std::move(payload) : std::vector<double>(leaves, 0.0);
  }

  /// After the tree adapted: seconds of the leaves that exist before and after (same start and
  /// level); new leaves start unmeasured.
  void carry(const LocalLeaves<C>& old, const LocalLeaves<C>& now) {
    std::vector<double> m(now.size(), 0.0);
    if constexpr (is_measured) {
      std::size_t j = 0;
      for (std::size_t i = 0; i < now.size(); ++i) {
        while (j < old.size() && old.starts_[j] < now.starts_[i]) ++j;
        if (j < old.size() && old.starts_[j] == now.starts_[i] && old.levels_[j] == now.levels_[i]) m[i] = measured_[j];
      }
    }
    measured_ = std::move(m);
  }

  /// A new measurement window: nothing timed.
  void new_window(std::size_t leaves) {
    measured_.assign(leaves, 0.0);
    timed_ = false;
  }
  /// The seconds counter of leaf i (load::Measured), for a ScopedTimer.
  [[nodiscard]] double& seconds_of(std::size_t i) {
    timed_ = true;
    return measured_[i];
  }

 private:
  std::vector<double> loads_, measured_;
  bool timed_ = false;
};

}  // namespace irregular
