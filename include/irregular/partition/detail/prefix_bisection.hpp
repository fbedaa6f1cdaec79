// NicolPlus's engine on prefix sums: exact bisection over probes (Pinar & Aykanat's EBS) where
// every probe searches each separator only inside the window left by earlier probes (their
// separator-index bounds), and the next bottleneck is interpolated from the last probes' ends.
// The one engine of optimal 1D cuts: nicol_plus on PrefixSums and the rectangular partitioners'
// stripes (any prefix accessor, integer, uint128_t or floating-point sums) both run it.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/detail/search.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular::detail {

/// Optimal bottleneck of p parts over prefix sums P[0..n] (part cost P[j] - P[i]); Pre is a
/// pointer to the sums or a callable P(x) (see partition::PrefixAccessor), already shifted so
/// that the chain starts at 0.
/// Invariants: lb <= optimum (every b < lb is infeasible), ub >= optimum; ub is a realised
/// bottleneck once a probe succeeded. Greedy separators grow with b, so an infeasible probe's
/// separators bound those of every later (larger) probe from below and a feasible probe's
/// bound them from above: windows shrink as [lb, ub] does, and the late probes cost O(1) per
/// separator. Snapping keeps the search exact and finite for floating point: an infeasible
/// probe at b stays infeasible for every value below its cheapest one-task extension, and a
/// feasible probe at b also succeeds at the bottleneck it realised.
template <class W, class Pre = const W*>
class PrefixBisection {
 public:
  PrefixBisection(Pre sums, std::size_t n, std::size_t p) : P_(sums), n_(n), p_(p) {}

  /// Writes the p+1 separators of an optimal partition; returns its bottleneck. guess is a
  /// first bottleneck to try (any value; it is clamped into [lb, ub)); max_task is the largest
  /// single-task cost, often the optimum itself (0 when unknown). The separators written are the
  /// greedy ones (each part maximal); greedy() keeps them for balanced_separators.
  W solve(W lb, W ub, W max_task, double guess, std::size_t* seps) {
    max_task_ = max_task;
    seps[0] = 0;
    seps[p_] = n_;
    if (p_ == 1 || n_ == 0) {
      for (std::size_t k = 1; k < p_; ++k) seps[k] = n_;
      return at(n_) - at(0);
    }
    lo_.assign(p_ + 1, 0);
    hi_.assign(p_ + 1, n_);
    cur_.assign(p_ + 1, 0);
    lo_[p_] = hi_[p_] = n_;
    avg_task_ = static_cast<double>(at(n_) - at(0)) / static_cast<double>(n_);
    probes_ = 0;
    bool have_hi = false, have_lo = false;
    double b_lo = 0, f_lo = 0, b_hi = 0, f_hi = 0;
    int same_side = 0, last_side = 0;
    while (lb < ub) {
      double target;
      if (probes_ == 0) {
        target = guess;
      } else if (have_lo && have_hi) {
        target = b_lo + f_lo * (b_hi - b_lo) / (f_lo - f_hi);
      } else if (have_lo) {
        target = b_lo + f_lo / static_cast<double>(p_);
      } else {
        target = b_hi + f_hi / static_cast<double>(p_);
      }
      // Regula falsi stalls when one end stays put; the Illinois rule (below) halves the kept
      // end's value, and nine probes on one side bisect. When lb reaches the largest task, test
      // lb itself: the optimum often is that task.
      W mid;
      if (last_side < 0 && near_max_task(lb))
        mid = lb;
      else
        mid = pick(lb, ub, target, same_side >= 8);
      ++probes_;
      W snapped;
      const bool ok = probe(mid, snapped);
      const double f = static_cast<double>(at(n_) - at(cur_[p_ - 1])) - static_cast<double>(mid);
      const int side = ok ? 1 : -1;
      same_side = side == last_side ? same_side + 1 : 0;
      last_side = side;
      // Illinois rule: an end kept twice in a row has its value halved, so the secant moves.
      if (same_side >= 1) {
        if (ok)
          f_lo *= 0.5;
        else
          f_hi *= 0.5;
      }
      if (ok) {
        ub = snapped;
        std::swap(hi_, cur_);
        have_hi = true;
        b_hi = static_cast<double>(mid);
        f_hi = f;
      } else {
        lb = snapped;
        std::swap(lo_, cur_);
        have_lo = true;
        b_lo = static_cast<double>(mid);
        f_lo = f;
      }
    }
    if (!have_hi) {  // ub was optimal but no probe realised it: place the greedy separators
      W realised;
      [[maybe_unused]] const bool ok = probe(ub, realised);
      IRREGULAR_ASSERT(ok);
      std::swap(hi_, cur_);
    }
    for (std::size_t k = 1; k < p_; ++k) seps[k] = hi_[k];
    return ub;
  }

  [[nodiscard]] std::size_t probes() const noexcept { return probes_; }

 private:
  // lb at the largest task, up to the rounding of a one-task prefix-sum difference.
  bool near_max_task(W lb) const {
    if (!(max_task_ > W{0})) return false;
    const double l = static_cast<double>(lb), m = static_cast<double>(max_task_);
    return l >= m * (1 - 1e-9) && l <= m * (1 + 1e-9);
  }

  // A value in [lb, ub) near target (or the midpoint when bisecting).
  static W pick(W lb, W ub, double target, bool bisect) {
    W mid;
    if constexpr (std::is_floating_point_v<W>) {
      mid = bisect ? lb + (ub - lb) / 2 : static_cast<W>(target);
      if (!(mid >= lb)) mid = lb;  // also catches NaN
      if (!(mid < ub)) mid = lb + (ub - lb) / 2;
      if (!(mid < ub)) mid = lb;
    } else {
      if (bisect || !(target >= static_cast<double>(lb))) {
        mid = bisect ? lb + (ub - lb) / 2 : lb;
      } else if (!(target < static_cast<double>(ub))) {
        mid = lb + (ub - lb) / 2;
      } else {
        mid = static_cast<W>(target);
        mid = std::clamp(mid, lb, static_cast<W>(ub - 1));
      }
    }
    return mid;
  }

  // Greedy probe at b placing all p-1 separators into cur_ (each inside [lo_, hi_]). Returns
  // feasibility; out is the realised bottleneck when feasible, else the smallest value at which
  // the greedy would change (the cheapest one-task extension of a part, or the last part).
  bool probe(W b, W& out) {
    std::size_t prev = 0;
    // Expected part length: the last part's in this probe (local density), first b / mean task.
    std::size_t len = avg_task_ > 0 && static_cast<double>(b) / avg_task_ < static_cast<double>(n_)
                          ? static_cast<std::size_t>(static_cast<double>(b) / avg_task_)
                          : n_;
    W realised{0};
    W next{0};
    bool have_next = false;
    // Leading separators whose window closed are where every probe in (lb, ub) puts them. Parts
    // between two of them cost <= the last infeasible probe's bottleneck < the optimum, and
    // extend only beyond the last feasible one's, so they affect neither outcome: skip them.
    std::size_t first = 1;
    while (first < p_ && lo_[first] == hi_[first]) {
      cur_[first] = lo_[first];
      ++first;
    }
    if (first > 1) prev = lo_[first - 1];
    for (std::size_t k = first; k < p_; ++k) {
      if (prev == n_) {
        for (std::size_t q = k; q < p_; ++q) cur_[q] = n_;
        break;
      }
#if defined(__GNUC__)
      // A probe is a chain of dependent searches bound by memory latency; the windows of later
      // separators are known, so start loading them early.
      if constexpr (std::is_pointer_v<Pre>)
        if (k + 16 < p_) __builtin_prefetch(P_ + lo_[k + 16]);
#endif
      const std::size_t lo = std::max(prev, lo_[k]);
      const std::size_t hi = hi_[k];
      IRREGULAR_ASSERT(lo <= hi);
      const W base = at(prev);
      std::size_t x = lo;
      if (lo < hi) x = search(lo, hi, prev, base, b, len);
      len = x - prev;
      const W c = at(x) - base;
      IRREGULAR_ASSERT(c <= b);
      if (realised < c) realised = c;
      if (x < n_) {
        const W e = at(x + 1) - base;
        if (!have_next || e < next) next = e;
        have_next = true;
      }
      cur_[k] = x;
      prev = x;
    }
    const W last = at(n_) - at(prev);
    if (last <= b) {
      out = realised < last ? last : realised;
      return true;
    }
    out = (!have_next || last < next) ? last : next;
    return false;
  }

  // Last x in [lo, hi] with P[x] - base <= b, given that lo qualifies.
  std::size_t search(std::size_t lo, std::size_t hi, std::size_t prev, W base, W b,
                     std::size_t len) const {
    auto fits = [&](std::size_t j) { return at(j) - base <= b; };
    if (hi - lo <= 32) return bisect_last_true(lo, hi + 1, fits);
    // Wide window: start at the expected end of the part and gallop outwards, so the search
    // touches a few cache lines around the answer instead of the whole window.
    const std::size_t g = len < hi - prev ? std::clamp(prev + len, lo, hi) : hi;
    return gallop_last_true_from(lo, hi, g, fits);
  }

  W at(std::size_t x) const noexcept {
    if constexpr (std::is_pointer_v<Pre>)
      return P_[x];
    else
      return P_(x);
  }

  Pre P_;
  std::size_t n_, p_;
  double avg_task_ = 0;
  W max_task_{};
  std::size_t probes_ = 0;
  std::vector<std::size_t> lo_, hi_, cur_;
};

}  // namespace irregular::detail
