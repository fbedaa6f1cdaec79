// Monotone searches over an index range: plain bisection and galloping (exponential then binary)
// search for the boundary of a predicate that is true then false. Shared by the 1D chain and
// the rectangular partitioners; the predicate is a template parameter so every call inlines.
#pragma once

#include <cstddef>

namespace irregular::detail {

/// Last x in [good, bad) with pred(x), given pred(good) and, if bad is in range, !pred(bad);
/// pred is true then false. Plain bisection: best when the window is already narrow.
template <class Pred>
constexpr std::size_t bisect_last_true(std::size_t good, std::size_t bad, Pred&& pred) {
  while (bad - good > 1) {
    const std::size_t mid = good + (bad - good) / 2;
    if (pred(mid))
      good = mid;
    else
      bad = mid;
  }
  return good;
}

/// First x in (bad, good] with pred(x), given pred(good) and, if bad is in range, !pred(bad);
/// pred is false then true. Plain bisection.
template <class Pred>
constexpr std::size_t bisect_first_true(std::size_t bad, std::size_t good, Pred&& pred) {
  return bisect_last_true(bad, good, [&](std::size_t x) { return !pred(x); }) + 1;
}

/// Largest x in [lo, hi] with pred(x), given pred(lo); pred is true then false. Galloping up
/// from lo costs O(log(x - lo)) evaluations, which keeps searches cheap when the answer is near.
template <class Pred>
constexpr std::size_t gallop_last_true(std::size_t lo, std::size_t hi, Pred&& pred) {
  // This loop shape (one bound test per step, hi probed last) compiles to fewer instructions
  // in the rect chain kernels than a clamped probe position does.
  std::size_t good = lo, step = 1;
  while (true) {
    const std::size_t x = good + step;
    if (x >= hi) return (good == hi || pred(hi)) ? hi : bisect_last_true(good, hi, pred);
    if (!pred(x)) return bisect_last_true(good, x, pred);
    good = x;
    step <<= 1;
  }
}

/// Largest x in [lo, hi] with pred(x), given pred(lo); pred is true then false. Gallops outwards
/// from a guess in [lo, hi] (up if pred(guess), else down), so a good guess costs
/// O(log |x - guess|) evaluations around the answer instead of touching the whole window.
template <class Pred>
constexpr std::size_t gallop_last_true_from(std::size_t lo, std::size_t hi, std::size_t guess,
                                            Pred&& pred) {
  if (pred(guess)) return gallop_last_true(guess, hi, pred);
  std::size_t good = lo, bad = guess, step = 1;
  while (true) {  // terminates: pred(lo)
    const std::size_t x = bad - lo > step ? bad - step : lo;
    if (pred(x)) {
      good = x;
      break;
    }
    bad = x;
    step <<= 1;
  }
  return bisect_last_true(good, bad, pred);
}

/// Smallest x in [lo, hi] with pred(x), given pred(hi); pred is false then true. Gallops down
/// from hi.
template <class Pred>
constexpr std::size_t gallop_first_true_down(std::size_t lo, std::size_t hi, Pred&& pred) {
  return hi - gallop_last_true(0, hi - lo, [&](std::size_t i) { return pred(hi - i); });
}

}  // namespace irregular::detail
