// Opening a sorted array around the run that stays: the splice of a remap (segment shifts and
// migrations), which moves the kept run once instead of copying every array to fresh memory.
#pragma once

#include <irregular/core/detail/splice_vector.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <type_traits>
#include <vector>

namespace irregular::detail {

/// Opens v for low ++ v[a, b) ++ high with k low and h high values: afterwards v.size() ==
/// k + (b - a) + h, the kept run sits at [k, k + b - a), transformed by f, and the k front and h
/// back slots hold unspecified values for the caller to overwrite. The kept run moves once (not
/// at all when k == a and f is the identity); storage is reallocated only when the result
/// outgrows it, and then only the kept run is copied.
template <class T, class F = std::identity>
void open_around(std::vector<T>& v, std::size_t a, std::size_t b, std::size_t k, std::size_t h,
                 F f = {}) {
  constexpr bool plain = std::is_same_v<F, std::identity>;
  const std::size_t kept = b - a, n = k + kept + h;
  const auto at = [](auto& w, std::size_t i) { return w.begin() + static_cast<std::ptrdiff_t>(i); };
  if (n > v.capacity()) {
    std::vector<T> w;
    w.reserve(n);
    w.resize(k);
    if constexpr (plain) {
      w.insert(w.end(), at(v, a), at(v, b));
    } else {
      w.resize(k + kept);
      std::transform(at(v, a), at(v, b), at(w, k), f);
    }
    w.resize(n);
    v.swap(w);
    return;
  }
  // Move first, transform after: both loops then run forward or as memmove, and vectorize.
  if (k > a) {  // the kept run moves up: make room first (no reallocation: n <= capacity)
    if (v.size() < n) v.resize(n);
    std::copy_backward(at(v, a), at(v, b), at(v, k + kept));
  } else if (k < a) {
    std::copy(at(v, a), at(v, b), at(v, k));
  }
  if constexpr (!plain)
    for (std::size_t i = k; i < k + kept; ++i) v[i] = f(v[i]);
  v.resize(n);
}

/// The same for a SpliceVector: the kept run stays where it is when the room around it suffices.
template <class T, class F = std::identity>
void open_around(SpliceVector<T>& v, std::size_t a, std::size_t b, std::size_t k, std::size_t h,
                 F f = {}) {
  v.open_around(a, b, k, h);
  if constexpr (!std::is_same_v<F, std::identity>)
    for (std::size_t i = k; i < k + (b - a); ++i) v[i] = f(v[i]);
}

}  // namespace irregular::detail

namespace irregular {

/// Where a segment shift put this rank's leaves: `low` arrivals first, then the `kept` leaves
/// that were at [kept_first, kept_first + kept), then `high` arrivals. Meaningful only when
/// `spliced` (the arrivals met in curve order, nothing was sorted again).
struct ShiftLayout {
  bool spliced = false;
  std::size_t low = 0, kept_first = 0, kept = 0, high = 0;
};

}  // namespace irregular
