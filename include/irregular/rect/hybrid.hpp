// HYBRID(phase1/phase2) two-phase partitioning (saule-bas-catalyurek §5): phase 1 cuts the array
// into P' parts, processors go to the parts by JAG-M-HEUR's rule, phase 2 partitions each part;
// P' is the square with the best expected imbalance; a fast/slow phase 2 refines the worst part.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/rect/detail/common.hpp>
#include <irregular/rect/load_matrix.hpp>
#include <irregular/rect/metrics.hpp>
#include <irregular/rect/partition.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <vector>

namespace irregular::rect {

/// A partitioner of a box of a load array into a given number of parts.
template <class T, int D>
using Partitioner = std::function<Partition<D>(const LoadGrid<T, D>&, const Rect<D>&, std::size_t)>;

/// How HYBRID (saule-bas-catalyurek §5) picks P', the parts of its first phase, and partitions
/// each of them in the second.
struct HybridOptions {
  /// Smallest P' tried (the user's time/quality trade-off: small P' means larger, slower phase-2
  /// problems and a more global optimisation). 0: 16.
  std::size_t min_parts = 0;
  /// Largest P' tried; 0: P / 2 (each part keeps about two processors or more).
  std::size_t max_parts = 0;
  /// Phase 2 by the fast algorithm everywhere, then the slow one on the worst part while it
  /// improves it (HYBRID-F); false: the slow algorithm on every part.
  bool fast_slow = true;
};

/// What HYBRID chose, for reports and the benchmark.
struct HybridReport {
  std::size_t parts = 0;          ///< the chosen P'
  double expected_imbalance = 0;  ///< max_i (L_i / p_i) / (L / P) - 1 after phase 1
  std::size_t slow_runs = 0;      ///< phase-2 parts refined by the slow algorithm
};

/// Candidate P' values: the squares k^2 in [min_parts, max_parts] (the imbalance of phase 1
/// drops in steps that follow sqrt(P'), so the ends of those steps are the candidates).
inline std::vector<std::size_t> hybrid_candidates(std::size_t P, const HybridOptions& o) {
  const std::size_t lo = std::max<std::size_t>(1, o.min_parts ? o.min_parts : 16);
  const std::size_t hi = std::min(P, std::max(lo, o.max_parts ? o.max_parts : P / 2));
  std::vector<std::size_t> c;
  for (std::size_t k = 1; k * k <= hi; ++k)
    if (k * k >= lo) c.push_back(k * k);
  if (c.empty()) c.push_back(std::min(P, lo));
  return c;
}

/// HYBRID(phase1/phase2); `fast` is the fast phase-2 algorithm of HYBRID-F (the paper uses
/// JAG-M-HEUR-PROBE); `slow` is phase2.
template <class T, int D>
Partition<D> hybrid(const LoadGrid<T, D>& g, const Rect<D>& box, std::size_t P,
                    const Partitioner<T, D>& phase1, const Partitioner<T, D>& slow,
                    const Partitioner<T, D>& fast, const HybridOptions& opt = {},
                    HybridReport* report = nullptr) {
  using S = load_sum_t<T>;
  irregular::detail::check_part_count(P, "hybrid");
  irregular::detail::check_box<D>(box, g.extents(), "hybrid");
  if (!phase1 || !slow || (opt.fast_slow && !fast))
    throw invalid_argument("irregular::rect::hybrid: missing phase algorithm");
  const double avg = static_cast<double>(g.load(box)) / static_cast<double>(P);
  Partition<D> best1;
  std::vector<std::size_t> bestq;
  double best_exp = std::numeric_limits<double>::infinity();
  for (std::size_t Pp : hybrid_candidates(P, opt)) {
    Partition<D> p1 = phase1(g, box, Pp);
    std::vector<S> loads = part_loads(g, p1);
    auto q = irregular::detail::allocate_by_load(loads, P);
    double worst = 0;
    for (std::size_t i = 0; i < q.size(); ++i)
      worst = std::max(worst, static_cast<double>(loads[i]) / static_cast<double>(q[i]));
    const double e = avg > 0 ? worst / avg - 1 : 0;
    if (e < best_exp) {
      best_exp = e;
      best1 = std::move(p1);
      bestq = std::move(q);
    }
  }
  const std::size_t n = best1.parts.size();
  std::vector<Partition<D>> sub(n);
  std::size_t slow_runs = 0;
  if (!opt.fast_slow) {
    for (std::size_t i = 0; i < n; ++i) sub[i] = slow(g, best1.parts[i], bestq[i]);
    slow_runs = n;
  } else {
    std::vector<S> lmax(n);
    std::vector<char> refined(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      sub[i] = fast(g, best1.parts[i], bestq[i]);
      lmax[i] = max_load(g, sub[i]);
    }
    while (n > 0) {
      const std::size_t w =
          static_cast<std::size_t>(std::max_element(lmax.begin(), lmax.end()) - lmax.begin());
      if (refined[w]) break;
      refined[w] = 1;
      ++slow_runs;
      Partition<D> s = slow(g, best1.parts[w], bestq[w]);
      const S l = max_load(g, s);
      if (!(l < lmax[w])) break;
      sub[w] = std::move(s);
      lmax[w] = l;
    }
  }
  if (report) *report = HybridReport{n, best_exp, slow_runs};
  Partition<D> out = irregular::detail::compose(best1, sub);
  out.box = box;
  return out;
}

}  // namespace irregular::rect
