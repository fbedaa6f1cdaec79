// Prefix sums of a chain of task loads: P[0] = 0, P[i] = sum of the first i loads.
// saule-bas-catalyurek §2.2: every 1D algorithm reads interval loads as P[j] - P[i].
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/core/index.hpp>

#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace irregular::partition {

namespace detail {
template <class T>
struct wide_type {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>,
                "irregular::partition: task loads must be a non-bool arithmetic type");
  using type =
      std::conditional_t<std::is_floating_point_v<T>, double,
                         std::conditional_t<std::is_unsigned_v<T>, std::uint64_t, std::int64_t>>;
};
}  // namespace detail

/// Accumulator type of loads T: int64/uint64 for integral T, double for floating-point T.
template <class T>
using wide_t = typename detail::wide_type<T>::type;

/// The n+1 prefix sums of n non-negative loads, validated once so algorithms need not recheck.
template <class T>
class PrefixSums {
 public:
  /// The accumulator type of the sums.
  using value_type = wide_t<T>;

  /// An empty chain (n = 0).
  PrefixSums() = default;

  /// Throws irregular::invalid_argument naming the index of a negative, NaN or infinite load,
  /// or the index where an integral sum overflows.
  explicit PrefixSums(std::span<const T> loads) : sums_(loads.size() + 1, value_type{0}) {
    value_type acc{0};
    for (std::size_t i = 0; i < loads.size(); ++i) {
      const T w = loads[i];
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(w)) fail(i, "is NaN");
        if (!(w >= T{0})) fail(i, "is negative (" + std::to_string(w) + ")");
        if (std::isinf(w)) fail(i, "is infinite");
      } else if constexpr (std::is_signed_v<T>) {
        if (w < T{0}) fail(i, "is negative (" + std::to_string(w) + ")");
      }
      const auto v = static_cast<value_type>(w);
      if constexpr (std::is_integral_v<T>) {
        if (v > std::numeric_limits<value_type>::max() - acc) fail(i, "makes the total overflow");
      }
      acc += v;
      sums_[i + 1] = acc;
      if (max_load_ < v) max_load_ = v;
    }
  }

  /// Number of tasks n.
  [[nodiscard]] std::size_t size() const noexcept { return sums_.size() - 1; }
  /// P[i], 0 <= i <= n.
  [[nodiscard]] value_type operator[](std::size_t i) const noexcept { return sums_[i]; }
  /// Load of the tasks [i, j), i <= j <= n.
  [[nodiscard]] value_type interval(std::size_t i, std::size_t j) const noexcept {
    return sums_[j] - sums_[i];
  }
  /// P[n]: the load of the whole chain.
  [[nodiscard]] value_type total() const noexcept { return sums_.back(); }
  /// The largest single load (0 for an empty chain); a lower bound of every bottleneck.
  [[nodiscard]] value_type max_load() const noexcept { return max_load_; }
  /// The n+1 sums.
  [[nodiscard]] std::span<const value_type> data() const noexcept { return sums_; }

 private:
  [[noreturn]] static void fail(std::size_t i, const std::string& what) {
    throw invalid_argument("irregular::partition: load at index " + std::to_string(i) + " " + what);
  }

  std::vector<value_type> sums_ = std::vector<value_type>(1, value_type{0});
  value_type max_load_{0};
};

/// Where the 1D algorithms read a chain's prefix sums: a pointer to sums, or any callable
/// pre(x) -> sum (e.g. a stripe of a 2D prefix array). A chain is a sub-range [lo, hi) of an
/// accessor: part [i, j) costs pre(j) - pre(i), so pre must be nondecreasing on [lo, hi].
/// Sums are integers (exact), uint128_t, or floating point (the cost model is then the rounded
/// difference pre(j) - pre(i), see doc/guide/partitioners.md).
template <class A>
concept PrefixAccessor =
    (std::is_pointer_v<A> &&
     (std::is_arithmetic_v<std::remove_cvref_t<std::remove_pointer_t<A>>> ||
      std::is_same_v<std::remove_cv_t<std::remove_pointer_t<A>>, uint128_t>)) ||
    std::invocable<const A&, std::size_t>;

/// P[x] of an accessor.
template <PrefixAccessor A>
[[nodiscard]] constexpr auto prefix_at(const A& pre, std::size_t x) noexcept {
  if constexpr (std::is_pointer_v<A>)
    return pre[x];
  else
    return pre(x);
}

/// Sum type of an accessor.
template <PrefixAccessor A>
using prefix_value_t = std::remove_cvref_t<decltype(prefix_at(std::declval<const A&>(), 0))>;

namespace detail {
// The accessor seen from lo: shifted(x) = pre(lo + x), so the algorithms index from 0.
template <class A>
struct Shifted {
  A pre;
  std::size_t lo;
  auto operator()(std::size_t x) const noexcept { return prefix_at(pre, lo + x); }
};
template <class A>
auto shifted(const A& pre, std::size_t lo) {
  if constexpr (std::is_pointer_v<A>)
    return pre + lo;
  else
    return Shifted<A>{pre, lo};
}
}  // namespace detail

}  // namespace irregular::partition
