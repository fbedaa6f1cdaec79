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
  template <int D>
  constexpr double operator()(const Cell<D>&, std::size_t) const noexcept {
    return 1.0;
  }
};

/// (ii) A static weight: the element count (particle codes whose cost grows with the elements).
struct ElementCount {
  template <int D>
  constexpr double operator()(const Cell<D>&, std::size_t count) const noexcept {
    return static_cast<double>(count);
  }
};

/// (ii) A static weight given by the user: w(cell, count) -> double (non-negative, finite).
template <class F>
struct Weighted {
  F weight;
  template <int D>
  double operator()(const Cell<D>& c, std::size_t count) const {
    return static_cast<double>(weight(c, count));
  }
};
template <class F>
Weighted<F> weighted(F f) {
  return Weighted<F>{std::move(f)};
}

/// (ii) A weight per element, as Zoltan's object weights: a leaf's load is the sum of
/// `weight(element)` over its elements (non-negative, finite). The domain calls `weight`;
/// the (cell, count) form, the element count, serves code that has no elements at hand.
template <class F>
struct PerElement {
  static constexpr bool per_element = true;
  F weight;
  template <int D>
  constexpr double operator()(const Cell<D>&, std::size_t count) const noexcept {
    return static_cast<double>(count);
  }
};
template <class F>
PerElement<F> per_element(F f) {
  return PerElement<F>{std::move(f)};
}

/// (iii) Measured: seconds spent on each leaf, accumulated by IrregularDomain::time_leaf();
/// before the first measurement a leaf is estimated by its element count (scaled to seconds by
/// the rank's measured seconds per element once any leaf has been timed).
struct Measured {
  static constexpr bool measured = true;
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
  explicit ScopedTimer(double& sink) noexcept
      : sink_(&sink), t0_(std::chrono::steady_clock::now()) {}
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;
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
