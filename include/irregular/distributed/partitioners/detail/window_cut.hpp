// The optimal cut of the distributed leaf chain over distributed separator windows (Pinar &
// Aykanat's separator-index bounds and exact bisection, as cited in saule-bas-catalyurek §2.2):
// rank j receives windows j-1 and j (one alltoallv), probes compose the greedy steps between
// windows by a tree scan (detail/position_scan.hpp) and one all_reduce per probe moves
// the bounds. Shared by blocking_partition (parts of equal capacity) and capacity_cut.
#pragma once

#include <irregular/distributed/partitioners/detail/cut_support.hpp>
#include <irregular/distributed/partitioners/detail/position_scan.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/partition/balanced.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace irregular::detail {

inline constexpr double inf = std::numeric_limits<double>::infinity();
inline constexpr int scan_tag =
    0x1c07;  // the probes' scan messages (and scan_tag + 1) on the caller's comm

/// Consecutive chain positions [first, first + g.size()) with their global prefix sums.
struct Window {
  std::uint64_t first = 0;
  std::vector<double> g;
  [[nodiscard]] std::uint64_t last() const { return first + g.size() - 1; }
  [[nodiscard]] double at(std::uint64_t x) const { return g[x - first]; }
  /// Indices [a, b) of the positions with prefix in [lo, hi] and position in [pmin, pmax].
  [[nodiscard]] std::pair<std::size_t, std::size_t> span(std::array<double, 2> v,
                                                         std::uint64_t pmin,
                                                         std::uint64_t pmax) const {
    auto a = static_cast<std::size_t>(std::lower_bound(g.begin(), g.end(), v[0]) - g.begin());
    auto b = static_cast<std::size_t>(std::upper_bound(g.begin(), g.end(), v[1]) - g.begin());
    if (pmin > first)
      a = std::max(a, static_cast<std::size_t>(std::min<std::uint64_t>(g.size(), pmin - first)));
    if (pmax != unmapped_position)
      b = std::min(b, static_cast<std::size_t>(pmax >= first ? pmax - first + 1 : 0));
    return {a, std::max(a, b)};
  }
};

/// Where separators 1..q-1 may lie: separator j's global prefix is in [lo[j], hi[j]] (both
/// non-decreasing in j). This rank's chain positions are local x in [0, m): its leaves, plus
/// the chain's end n on the last rank.
struct WindowPlan {
  std::vector<double> lo, hi;
  std::vector<std::size_t> a, b;      // window j's local positions [a[j], b[j])
  std::vector<std::uint64_t> counts;  // words sent to each rank (window j-1 and j to rank j)

  WindowPlan(const detail::ChainPrefix& prefix, std::size_t m, int p, std::size_t q,
             std::vector<double> lo_, std::vector<double> hi_)
      : lo(std::move(lo_)),
        hi(std::move(hi_)),
        a(q, 0),
        b(q, 0),
        counts(static_cast<std::size_t>(p), 0) {
    for (std::size_t j = 1; j < q; ++j) {
      a[j] = prefix.lower_bound(0, m, lo[j]);
      b[j] = std::max(a[j], prefix.upper_bound(0, m, hi[j]));
      counts[j] = 2 * (j > 1 ? b[j - 1] - a[j - 1] + second(j) : b[j] - a[j]);
    }
  }
  // Positions of window j not already sent as window j-1.
  [[nodiscard]] std::size_t second(std::size_t j) const {
    return b[j] - std::min(b[j], std::max(a[j], b[j - 1]));
  }
};

/// This rank's windows after the exchange (rank j in [1, q): window j-1 and window j).
struct Windows {
  Window prev, cur;
};

/// One alltoallv: every rank sends (position, prefix) pairs of its window positions to the
/// window holders. `recv` are the counts the alltoall of plan.counts returned.
inline Windows exchange_windows(const boost::mpi::communicator& comm,
                                const detail::ChainPrefix& prefix, std::uint64_t first_global,
                                const WindowPlan& plan, const std::vector<std::uint64_t>& recv,
                                const detail::CutCounter& counter) {
  const auto p = static_cast<std::size_t>(comm.size()), me = static_cast<std::size_t>(comm.rank());
  const std::size_t q = plan.a.size();
  std::vector<std::uint64_t> out;
  std::vector<int> sdispl(p, 0), rdispl(p, 0), scount(p, 0), rcount(p, 0);
  auto put = [&](std::size_t from, std::size_t to) {
    prefix.each(from, to, [&](std::size_t x, double g) {
      out.push_back(first_global + x);
      out.push_back(std::bit_cast<std::uint64_t>(g));
    });
  };
  for (std::size_t j = 1; j < q; ++j) {
    sdispl[j] = static_cast<int>(out.size());
    if (j > 1) put(plan.a[j - 1], plan.b[j - 1]);
    put(j > 1 ? plan.b[j] - plan.second(j) : plan.a[j], plan.b[j]);
  }
  std::size_t total = 0;
  for (std::size_t r = 0; r < p; ++r) {
    rdispl[r] = static_cast<int>(total);
    rcount[r] = me == 0 ? 0 : static_cast<int>(recv[r]);  // rank 0's slot carries the gather size
    scount[r] = r == 0 ? 0 : static_cast<int>(plan.counts[r]);
    total += static_cast<std::size_t>(rcount[r]);
  }
  std::vector<std::uint64_t> in(total);
  mpi::all_to_all_words(comm, out, scount, sdispl, in, rcount, rdispl);
  counter.collective(out.size() * sizeof(std::uint64_t), in.size() * sizeof(std::uint64_t));
  Windows w;
  if (me == 0 || me >= q) return w;
  if (me == 1) w.prev.g.push_back(0.0);  // window 0 is the chain's start
  for (std::size_t i = 0; i < in.size(); i += 2) {
    const double g = std::bit_cast<double>(in[i + 1]);
    for (Window* win : {me > 1 ? &w.prev : nullptr, &w.cur}) {
      const std::size_t j = win == &w.cur ? me : me - 1;
      if (!win || !(plan.lo[j] <= g && g <= plan.hi[j])) continue;
      if (win->g.empty()) win->first = in[i];
      win->g.push_back(g);
    }
  }
  return w;
}

/// The exact search over distributed windows for the parts 0..q-1 (separator j on rank j).
/// Cost(k, g0, g1) is part k's cost between prefixes g0 <= g1: non-decreasing in g1,
/// non-increasing in g0 (the rounded difference, or that divided by part k's capacity).
/// Bounds(j, b) is separator j's prefix range {lo, hi} when every part costs <= b (widened for
/// rounding); the windows exchanged are Bounds(j, UB).
///
/// Each probe's maps cover only what is left of the windows (Pinar & Aykanat's separator-index
/// bounding): the range Bounds(j, ub) at the current ub, between the separators of the last
/// infeasible and the last feasible probe (greedy separators grow with b). On the probe's own
/// path every separator stays in that range; other starting points are clamped into it, which
/// keeps every map's images inside the next map's domain. So the first probe's messages hold
/// about one window, and they shrink as [lb, ub] does.
template <class Cost, class Bounds>
class WindowSearch {
 public:
  struct Outcome {
    bool feasible = false;
    double value =
        0;  // the realised bottleneck (feasible), else the least value that changes a part
  };

  WindowSearch(const boost::mpi::communicator& comm, Windows w, std::size_t q, double W, Cost cost,
               Bounds bounds, const detail::CutCounter& counter)
      : comm_(comm),
        w_(std::move(w)),
        q_(q),
        W_(W),
        cost_(cost),
        bounds_(bounds),
        counter_(counter) {}

  /// Separator j's value range at bottleneck bound b (window 0 is the chain's start alone).
  [[nodiscard]] std::array<double, 2> range(std::size_t j, double b) const {
    return j == 0 ? std::array<double, 2>{-inf, inf} : bounds_(j, b);
  }

  /// Greedy probe at B: separator j is the last window position whose part from s_{j-1} costs
  /// <= B. One tree scan and one all_reduce of three doubles. Collective over comm.
  Outcome probe(double B) {
    const auto j = static_cast<std::size_t>(comm_.rank());
    const bool holder = j >= 1 && j < q_;
    if (counter_.s) ++counter_.s->probes;
    PositionMap h;
    std::size_t vlo = 0;  // window j's first position at the current ub
    if (holder) {
      const auto [d0, d1] = w_.prev.span(range(j - 1, ub_), prev_lo_, prev_hi_);
      const auto [i0, i1] = w_.cur.span(range(j, ub_), cur_lo_, cur_hi_);
      vlo = w_.cur.span(range(j, ub_), 0, unmapped_position).first;
      for (std::size_t i = d0; i < d1; ++i) {
        const double gx = w_.prev.g[i];
        const auto y = static_cast<std::size_t>(
            std::partition_point(w_.cur.g.begin(), w_.cur.g.end(),
                                 [&](double g) { return cost_(j - 1, gx, g) <= B; }) -
            w_.cur.g.begin());
        // Below the window the probe is infeasible; elsewhere clamp (only off its path).
        const std::uint64_t x = w_.prev.first + i;
        h.push(
            x,
            y <= vlo || i0 >= i1 ? unmapped_position : w_.cur.first + std::clamp(y - 1, i0, i1 - 1),
            x, true);
      }
    }
    scan_maps(
        comm_, holder ? static_cast<int>(j) - 1 : -1, static_cast<int>(q_) - 1,
        [](int t) { return t + 1; }, h, scan_tag, counter_);
    double v[3] = {-inf, -inf, 0};  // realised part, -(least change), infeasible
    if (holder) {
      prev_ = h.prev.empty() ? unmapped_position : h.prev[0];
      sep_ = h.to.empty() ? unmapped_position : h.to[0];
      if (prev_ != unmapped_position) {
        const double gp = w_.prev.at(prev_);
        if (sep_ ==
            unmapped_position) {  // left window j: infeasible below its first position's cost
          if (vlo < w_.cur.g.size()) v[1] = -cost_(j - 1, gp, w_.cur.g[vlo]);
          v[2] = 1;
        } else {
          const double gs = w_.cur.at(sep_);
          v[0] = cost_(j - 1, gp, gs);
          // Beyond the window the extension exceeds every bottleneck left to test.
          if (sep_ != w_.cur.last()) v[1] = -cost_(j - 1, gp, w_.cur.at(sep_ + 1));
          if (j + 1 == q_) {
            const double last = cost_(q_ - 1, gs, W_);
            v[0] = std::max(v[0], last);
            if (!(last <= B)) {
              v[1] = std::max(v[1], -last);
              v[2] = 1;
            }
          }
        }
      }
    }
    double all[3];
    boost::mpi::all_reduce(comm_, v, 3, all, boost::mpi::maximum<double>());
    counter_.collective(sizeof v, sizeof all);
    const bool feasible = !(all[2] > 0);
    // Later probes lie below a feasible one and above an infeasible one: so do their separators.
    if (holder && feasible) {
      prev_hi_ = prev_;
      cur_hi_ = sep_;
    } else if (holder) {
      if (prev_ != unmapped_position) prev_lo_ = prev_;
      if (sep_ != unmapped_position) cur_lo_ = sep_;
    }
    return feasible ? Outcome{true, all[0]} : Outcome{false, -all[1]};
  }

  /// The least bottleneck in [lb, ub] (lb a lower bound; ub feasible, realised when
  /// ub_realised): exact bisection, where a feasible probe lowers ub to the bottleneck it
  /// realised and an infeasible one lifts lb to the least value that changes a part; both are
  /// part costs, so the search ends on the optimum. Leaves the greedy separators at the optimum
  /// in separator()/previous(). Returns false when ub turned out infeasible (rounding only).
  bool solve(double lb, double ub, bool ub_realised, std::size_t max_probes = 200) {
    if (q_ < 2) {
      best_ = cost_(0, 0.0, W_);
      return true;
    }
    bool have = false;
    ub_ = ub;
    if (!ub_realised) {
      const Outcome o = probe(ub);
      if (!o.feasible) return false;
      ub_ = ub = o.value;
      have = true;
      kept_prev_ = prev_;
      kept_sep_ = sep_;
    }
    for (std::size_t it = 0; lb < ub && it < max_probes; ++it) {
      double mid = lb + (ub - lb) / 2;
      if (!(mid >= lb && mid < ub)) mid = lb;
      const Outcome o = probe(mid);
      if (o.feasible) {
        ub_ = ub = o.value;  // greedy separators at mid are those at the bottleneck they realise
        have = true;
        kept_prev_ = prev_;
        kept_sep_ = sep_;
      } else {
        lb = std::max(lb, o.value);
      }
    }
    if (!have) {
      if (!probe(ub).feasible) return false;
      kept_prev_ = prev_;
      kept_sep_ = sep_;
    }
    best_ = ub;
    prev_ = kept_prev_;
    sep_ = kept_sep_;
    return true;
  }

  [[nodiscard]] double bottleneck() const { return best_; }
  /// On rank j in [1, q): the greedy separators s_{j-1} and s_j at the optimum.
  [[nodiscard]] std::uint64_t previous() const { return prev_; }
  [[nodiscard]] std::uint64_t separator() const { return sep_; }
  [[nodiscard]] const Windows& windows() const { return w_; }

 private:
  const boost::mpi::communicator& comm_;
  Windows w_;
  std::size_t q_;
  double W_;
  Cost cost_;
  Bounds bounds_;
  detail::CutCounter counter_;
  std::uint64_t prev_ = unmapped_position, sep_ = unmapped_position, kept_prev_ = unmapped_position,
                kept_sep_ = unmapped_position;
  std::uint64_t prev_lo_ = 0, prev_hi_ = unmapped_position, cur_lo_ = 0,
                cur_hi_ = unmapped_position;
  double ub_ = inf, best_ = 0;
};

/// Balanced separators among the optimal cuts of p equal parts, by partition::balance's rule
/// (right to left, each s_k from s_{k+1} and the greedy R_k): rank p-1 places s_{p-1} from the
/// chain's end n, rank j in [2, p) holds the step window j -> window j-1, and one tree scan
/// runs from rank p-1 down. s_k lies between the greedy separators from the right and from the
/// left at B*, so within Bounds(k, B*) and at most R_k: the maps cover that range only.
/// Returns {s_{j-1}, s_{p-1}} on rank j (unmapped_position where this rank places none). Collective
/// over comm.
template <class Cost, class Bounds>
std::array<std::uint64_t, 2> balanced_pass(const boost::mpi::communicator& comm,
                                           const WindowSearch<Cost, Bounds>& search,
                                           std::uint64_t n, double W,
                                           const detail::CutCounter& counter) {
  const auto p = static_cast<std::size_t>(comm.size()), j = static_cast<std::size_t>(comm.rank());
  const double B = search.bottleneck();
  const std::uint64_t m = n >= p ? 1 : 0;
  const Windows& w = search.windows();
  // s_k from s_{k+1} = next, clamped into [c0, c1); positions left of window k read -infinity
  // (below the target and too far from next), which balance_step allows.
  auto step = [&](const Window& img, std::pair<std::size_t, std::size_t> c, std::size_t k,
                  std::uint64_t R, std::uint64_t next, double pnext) {
    if (c.first >= c.second) return unmapped_position;
    auto at = [&](std::size_t x) {
      return x < img.first ? -inf : x > img.last() ? inf : img.at(x);
    };
    const std::uint64_t lo = img.first + c.first, hi = img.first + c.second - 1;
    const std::uint64_t a = k * m, b = std::min(R, next - std::min(next, m));
    std::uint64_t x = a;
    if (a <= b && next >= m) {
      const double target = W * static_cast<double>(k) / static_cast<double>(p);
      x = partition::detail::balance_step<double>(at, 0.0, B, target, a, b, std::clamp(lo, a, b),
                                                  pnext);
    }
    return std::clamp<std::uint64_t>(x, lo, hi);
  };
  std::array<std::uint64_t, 2> out{unmapped_position, unmapped_position};
  PositionMap h;
  int t = -1;  // this rank's place in the scan from rank p-1 down to rank 2
  if (p >= 2 && j >= 1) {
    const auto own = w.cur.span(search.range(j, B), 0, search.separator());
    const auto before = w.prev.span(search.range(j - 1, B), 0, search.previous());
    if (j == p - 1) {
      out[1] = step(w.cur, own, p - 1, search.separator(), n, W);
      if (j >= 2) {
        h.push(0,
               out[1] == unmapped_position
                   ? unmapped_position
                   : step(w.prev, before, p - 2, search.previous(), out[1], w.cur.at(out[1])),
               0, false);
        t = 0;
      }
    } else if (j >= 2) {
      for (std::size_t i = own.first; i < own.second; ++i)
        h.push(w.cur.first + i,
               step(w.prev, before, j - 1, search.previous(), w.cur.first + i, w.cur.g[i]), 0,
               false);
      t = static_cast<int>(p - 1 - j);
    }
  }
  scan_maps(
      comm, t, p >= 2 ? static_cast<int>(p) - 2 : 0,
      [p](int u) { return static_cast<int>(p) - 1 - u; }, h, scan_tag, counter);
  if (t >= 0 && !h.to.empty()) out[0] = h.to[0];
  return out;
}

}  // namespace irregular::detail
