// Load metrics of hnodes, the three kinds of baiardi-2001 §3: (i) constant for all hnodes,
// (ii) a static weight per hnode, (iii) measured at run time by instrumenting the computation.
#pragma once

#include <irregular/core/cell.hpp>

#include <chrono>
#include <concepts>
#include <cstddef>
#include <utility>

namespace irregular {

/// A load metric estimates the load of a leaf from its cell and element count; a metric with
/// `static constexpr bool measured = true` is then replaced by measured seconds where available.
template <class M, int D>
concept LoadMetric = requires(const M& m, const Cell<D>& c, std::size_t count) {
  { m(c, count) } -> std::convertible_to<double>;
};

namespace load {

/// (i) Every hnode costs the same (adaptive multigrid squares, baiardi-2001 §5.1).
struct Constant {
  /// Load 1 for every leaf.
  template <int D>
  constexpr double operator()(const Cell<D>&, std::size_t) const noexcept {
    return 1.0;
  }
};

/// (ii) A static weight: the element count (particle codes whose cost grows with the elements).
struct ElementCount {
  /// The leaf's element count.
  template <int D>
  constexpr double operator()(const Cell<D>&, std::size_t count) const noexcept {
    return static_cast<double>(count);
  }
};

/// (ii) A static weight given by the user: w(cell, count) -> double (non-negative, finite).
template <class F>
struct Weighted {
  F weight;  ///< the user's w(cell, count)
  /// weight(c, count).
  template <int D>
  double operator()(const Cell<D>& c, std::size_t count) const {
    return static_cast<double>(weight(c, count));
  }
};
/// A Weighted metric from w(cell, count).
template <class F>
Weighted<F> weighted(F f) {
  return Weighted<F>{std::move(f)};
}

/// (ii) A weight per element, as Zoltan's object weights: a leaf's load is the sum of
/// `weight(element)` over its elements (non-negative, finite). The domain calls `weight`;
/// the (cell, count) form, the element count, serves code that has no elements at hand.
template <class F>
struct PerElement {
  /// Marks the metric as per element: the domain sums weight(element) itself.
  static constexpr bool per_element = true;
  F weight;  ///< the user's weight(element)
  /// The element count, for code without the elements at hand.
  template <int D>
  constexpr double operator()(const Cell<D>&, std::size_t count) const noexcept {
    return static_cast<double>(count);
  }
};
/// A PerElement metric from weight(element).
template <class F>
PerElement<F> per_element(F f) {
  return PerElement<F>{std::move(f)};
}

/// (iii) Measured: seconds spent on each leaf, accumulated by IrregularDomain::time_leaf();
/// before the first measurement a leaf is estimated by its element count (scaled to seconds by
/// the rank's measured seconds per element once any leaf has been timed).
struct Measured {
  /// Marks the metric as measured: timed seconds replace the estimate.
  static constexpr bool measured = true;
  /// The estimate before any timing: the element count.
  template <int D>
  constexpr double operator()(const Cell<D>&, std::size_t count) const noexcept {
    return static_cast<double>(count);
  }
};

}  // namespace load

namespace detail {
template <class M>
concept MeasuredMetric = requires {
  requires M::measured;
};
template <class M>
concept PerElementMetric = requires {
  requires M::per_element;
};
}  // namespace detail

/// Adds the seconds between construction and destruction to a counter (one leaf's load).
class ScopedTimer {
 public:
  /// Starts timing; the seconds go to `sink` when the timer is destroyed.
  explicit ScopedTimer(double& sink) noexcept
      : sink_(&sink), t0_(std::chrono::steady_clock::now()) {}
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;
  /// Takes over `o`'s timing; `o` then adds nothing.
  ScopedTimer(ScopedTimer&& o) noexcept : sink_(std::exchange(o.sink_, nullptr)), t0_(o.t0_) {}
  ScopedTimer& operator=(ScopedTimer&&) = delete;
  ~ScopedTimer() {
    if (sink_)
      *sink_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }

 private:
  double* sink_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace irregular
