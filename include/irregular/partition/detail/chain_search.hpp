// Internals shared by the 1D chain partitioners: monotone searches, the greedy probe with
// separator-index bounds, and Nicol's first-separator search with Pinar & Aykanat's pruning
// (saule-bas-catalyurek §2.2). A Cost is cost(part k, i, j): the value of giving tasks [i, j)
// to part k, nondecreasing when [i, j) grows, smallest on empty intervals.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/detail/search.hpp>
#include <irregular/core/error.hpp>
#include <irregular/core/index.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace irregular::detail {

inline void check_parts(std::size_t p, std::string_view who) {
  if (p == 0) throw invalid_argument(std::string(who) + ": the number of parts p must be > 0");
}

inline void check_capacities(const double* cap, std::size_t p, std::string_view who) {
  if (p == 0) throw invalid_argument(std::string(who) + ": capacities must not be empty");
  for (std::size_t k = 0; k < p; ++k)
    if (!(cap[k] > 0) || std::isinf(cap[k]))
      throw invalid_argument(std::string(who) + ": capacity at index " + std::to_string(k) +
                             " must be positive and finite, got " + std::to_string(cap[k]));
}

/// Greedy probe and Nicol search over a monotone cost. W is the cost type.
/// No prefetching: for cost oracles without an underlying array.
struct NoPrefetch {
  void operator()(std::size_t, std::size_t) const noexcept {}
};

/// Prefetches the prefix sums of a window [lo, hi] (its ends and middle).
template <class W>
struct PrefetchSums {
  const W* sums;
  void operator()(std::size_t lo, std::size_t hi) const noexcept {
#if defined(__GNUC__)
    __builtin_prefetch(sums + lo);
    __builtin_prefetch(sums + lo + (hi - lo) / 2);
    __builtin_prefetch(sums + hi);
#else
    (void)lo;
    (void)hi;
#endif
  }
};

/// Decides cost(k, i, j) <= b by evaluating the cost (the default decision oracle).
struct FitsByCost {};

template <class W, class Cost, class Prefetch = NoPrefetch, class Fits = FitsByCost>
class ChainSearch {
 public:
  ChainSearch(std::size_t n, std::size_t p, Cost cost, Prefetch prefetch = {}, Fits fits = {})
      : n_(n), p_(p), cost_(cost), prefetch_(prefetch), fits_(fits) {}

  /// Greedy (maximal prefix) partition of [start, n) into parts first..p-1 with every part
  /// cost <= b. Writes separators first+1..p-1 into out (when non-null). With bounds on, the
  /// k-th separator is searched only inside [lo_[k], hi_[k]]; when they meet it costs nothing.
  bool probe(std::size_t first, std::size_t start, W b, std::size_t* out) {
    std::size_t prev = start;
    for (std::size_t m = first; m + 1 < p_; ++m) {
      if (prev == n_) {  // the rest are empty parts, whose cost is minimal
        if (out)
          for (std::size_t q = m + 1; q < p_; ++q) out[q] = n_;
        return true;
      }
      std::size_t lo = prev, hi = n_;
      if (bounded_) {
        lo = std::max(lo, lo_[m + 1]);
        hi = std::min(hi, hi_[m + 1]);
        IRREGULAR_ASSERT(lo <= hi);
        // Windows of later separators are known now: start their memory traffic early, since a
        // probe is a chain of dependent searches otherwise bound by memory latency.
        if (m + 3 < p_) prefetch_(lo_[m + 3], hi_[m + 3]);
      }
      std::size_t x = lo;
      if (lo < hi) {
        if (!fits(m, prev, lo, b)) {  // only without bounds: not even an empty part fits
          IRREGULAR_ASSERT(lo == prev);
          return false;
        }
        auto fits_to = [&](std::size_t j) { return fits(m, prev, j, b); };
        // a narrow window: plain bisection beats galloping
        x = (bounded_ && hi - lo <= 64) ? bisect_last_true(lo, hi + 1, fits_to)
                                        : gallop_last_true(lo, hi, fits_to);
      } else {
        IRREGULAR_ASSERT(fits(m, prev, lo, b));
      }
      if (out) out[m + 1] = x;
      prev = x;
    }
    return fits(p_ - 1, prev, n_, b);
  }

  /// Reverse greedy at b: out[k] (1 <= k < p) is the smallest position separator k takes in
  /// any partition whose parts all cost <= b.
  void reverse_greedy(W b, std::size_t* out) {
    out[p_] = n_;
    out[0] = 0;
    std::size_t next = n_;
    for (std::size_t m = p_ - 1; m >= 1; --m) {
      if (fits(m, 0, next, b)) {
        for (std::size_t q = 1; q <= m; ++q) out[q] = 0;
        return;
      }
      next = gallop_first_true_down(0, next, [&](std::size_t i) { return fits(m, i, next, b); });
      out[m] = next;
    }
  }

  /// Nicol's algorithm: the optimal bottleneck, given a lower bound lb (b < lb infeasible, and
  /// b == lb too when lb_open) and an upper bound ub >= optimum (not necessarily realised).
  /// Each step k finds the first separator of the subchain [s, n) on parts k..p-1 by binary
  /// search over probes, but only among candidates cost(k, s, j) in [lb, best): cheaper ones
  /// are known infeasible, dearer ones cannot improve. Every probe tightens lb or best for all
  /// later steps, and its greedy separators bound those of every later probe (Pinar & Aykanat's
  /// separator-index bounds): greedy positions grow with b and with the start. Writes the p+1
  /// separators of an optimal partition to seps.
  W nicol(W lb, bool lb_open, W ub, std::size_t* seps) {
    W best = ub;
    seps[0] = 0;
    seps[p_] = n_;
    if (p_ == 1 || n_ == 0) {
      for (std::size_t q = 1; q < p_; ++q) seps[q] = n_;
      return cost_(0, 0, n_);
    }
    lo_.assign(p_ + 1, 0);
    hi_.assign(p_ + 1, n_);
    scratch_.assign(p_ + 1, 0);
    bounded_ = true;
    probes_ = 0;
    std::size_t best_step = p_;  // step whose feasible probe realised best; p_: none yet
    std::size_t s = 0;
    bool finished = true;
    for (std::size_t k = 0; k + 1 < p_; ++k) {
      seps[k] = s;
      if (!lb_open && !(lb < best)) {
        finished = false;
        break;
      }
      const W empty = cost_(k, s, s);
      if (!(empty < best)) {
        finished = false;
        break;
      }
      auto known_infeasible = [&](const W& v) { return lb_open ? !(lb < v) : (v < lb); };
      // Positions up to lo_[k+1] give first parts no dearer than an infeasible probe's.
      std::size_t from = s;
      if (lb_open && lo_[k + 1] > s) from = lo_[k + 1];
      IRREGULAR_ASSERT(cost_(k, s, from) < best);
      const std::size_t big_j =
          gallop_last_true(from, n_, [&](std::size_t j) { return cost_(k, s, j) < best; });
      std::size_t a = from;
      if (known_infeasible(cost_(k, s, from)))
        a = gallop_last_true(from, big_j,
                             [&](std::size_t j) { return known_infeasible(cost_(k, s, j)); }) +
            1;
      std::size_t b = big_j + 1;
      while (a < b) {
        const std::size_t m = a + (b - a) / 2;
        const W v = cost_(k, s, m);
        if (m == n_) {  // everything left in part k: feasible without a probe
          b = m;
          best = v;
          best_step = k;
          for (std::size_t q = k + 1; q < p_; ++q) hi_[q] = n_;
          continue;
        }
        ++probes_;
        if (probe(k, s, v, scratch_.data())) {
          b = m;
          best = v;
          best_step = k;
          for (std::size_t q = k + 1; q < p_; ++q) hi_[q] = scratch_[q];
        } else {
          a = m + 1;
          lb = v;
          lb_open = true;
          for (std::size_t q = k + 1; q < p_; ++q) lo_[q] = scratch_[q];
        }
      }
      if (a == s) {  // an empty first part is feasible: best is the minimal cost
        finished = false;
        break;
      }
      s = a - 1;
    }
    if (finished) {
      seps[p_ - 1] = s;
      const W last = cost_(p_ - 1, s, n_);
      if (last < best) {
        best = last;
        best_step = p_ - 1;
      }
    }
    if (best_step == p_) {  // ub was optimal and never realised by a probe
      bounded_ = false;
      greedy(best, seps);
    } else {
      for (std::size_t q = best_step + 1; q < p_; ++q) seps[q] = hi_[q];
    }
    bounded_ = false;
    return best;
  }

  /// Exact bisection: binary search on the bottleneck value, each probe snapping the bounds to
  /// realised costs so it ends after finitely many probes even for floating point.
  W exact_bisection(W lb, W ub) {
    scratch_.assign(p_ + 1, 0);
    scratch_[0] = 0;
    scratch_[p_] = n_;
    while (lb < ub) {
      W mid;
      if constexpr (std::is_floating_point_v<W>) {
        mid = lb + (ub - lb) / 2;
        if (!(mid < ub)) mid = lb;
      } else {
        mid = lb + (ub - lb) / 2;
      }
      if (probe(0, 0, mid, scratch_.data())) {
        W realised = cost_(0, 0, scratch_[1]);
        for (std::size_t k = 1; k < p_; ++k) {
          const W c = cost_(k, scratch_[k], scratch_[k + 1]);
          if (realised < c) realised = c;
        }
        ub = realised;
      } else {
        // Greedy separators stay put for every b below the cheapest one-task extension, and the
        // outcome stays infeasible below the last part's cost too.
        fill_greedy_prefix(mid);
        W next = cost_(p_ - 1, scratch_[p_ - 1], n_);
        for (std::size_t k = 0; k + 1 < p_; ++k) {
          if (scratch_[k + 1] >= n_) break;
          const W c = cost_(k, scratch_[k], scratch_[k + 1] + 1);
          if (c < next) next = c;
        }
        lb = next;
      }
    }
    return ub;
  }

  /// Greedy separators at b without bounds (used to build the final partition).
  void greedy(W b, std::size_t* out) {
    out[0] = 0;
    out[p_] = n_;
    [[maybe_unused]] const bool ok = probe(0, 0, b, out);
    IRREGULAR_ASSERT(ok);
  }

  [[nodiscard]] std::size_t probes() const noexcept { return probes_; }

 private:
  // Like probe, but always places all p-1 separators (the failing last part is kept).
  void fill_greedy_prefix(W b) {
    std::size_t prev = 0;
    for (std::size_t m = 0; m + 1 < p_; ++m) {
      std::size_t x = prev;
      if (prev < n_ && fits(m, prev, prev, b))
        x = gallop_last_true(prev, n_, [&](std::size_t j) { return fits(m, prev, j, b); });
      scratch_[m + 1] = x;
      prev = x;
    }
  }

  bool fits(std::size_t k, std::size_t i, std::size_t j, const W& b) {
    if constexpr (std::is_same_v<Fits, FitsByCost>)
      return cost_(k, i, j) <= b;
    else
      return fits_(k, i, j, b);
  }

  std::size_t n_, p_;
  Cost cost_;
  Prefetch prefetch_;
  [[no_unique_address]] Fits fits_;
  bool bounded_ = false;
  std::size_t probes_ = 0;
  std::vector<std::size_t> lo_, hi_, scratch_;
};

/// Manne & Olstad's dynamic program B(k, j) = min_i max(B(k-1, i), cost(k-1, i, j)) in O(p n):
/// the cost max(...) is quasi-convex in i and its argmin moves right with j, so one pointer per
/// row suffices. Returns the optimal bottleneck of p parts over n tasks.
template <class W, class Cost>
W dp_bottleneck(std::size_t n, std::size_t p, Cost& cost) {
  std::vector<W> prev(n + 1), cur(n + 1);
  for (std::size_t j = 0; j <= n; ++j) prev[j] = cost(0, 0, j);
  for (std::size_t k = 1; k < p; ++k) {
    std::size_t i = 0;
    for (std::size_t j = 0; j <= n; ++j) {
      auto f = [&](std::size_t x) {
        const W c = cost(k, x, j);
        return prev[x] < c ? c : prev[x];
      };
      W fi = f(i);
      while (i < j) {
        const W next = f(i + 1);
        if (next <= fi) {
          ++i;
          fi = next;
        } else {
          break;
        }
      }
      cur[j] = fi;
    }
    std::swap(prev, cur);
  }
  return prev[n];
}

/// Exact comparison helpers for cut targets k * total / p on integral sums (128-bit products).
template <class W>
struct CutTarget {
  // true when value <= num / den, with value, num, den >= 0
  static bool at_most(W value, W num_total, std::size_t num_k, std::size_t den) {
    if constexpr (std::is_floating_point_v<W>) {
      return value <= num_total * static_cast<double>(num_k) / static_cast<double>(den);
    } else {
      return static_cast<uint128_t>(value) * den <= static_cast<uint128_t>(num_total) * num_k;
    }
  }
};

}  // namespace irregular::detail
