// Brute-force oracles for the rect tests: exhaustive search over 1D chains, P x Q-way and m-way
// jagged partitions, rectilinear partitions and hierarchical bipartitions of tiny matrices.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <irregular/rect/load_matrix.hpp>
#include <irregular/rect/partition.hpp>
#include <limits>
#include <map>
#include <random>
#include <vector>

namespace rect_test {

using irregular::rect::LoadGrid;
using irregular::rect::LoadMatrix;
using irregular::rect::Rect;
using Sum = std::uint64_t;
constexpr Sum kInf = std::numeric_limits<Sum>::max();

/// Plain dense matrix for the oracles (row-major n1 x n2).
struct Dense {
  std::size_t n1 = 0, n2 = 0;
  std::vector<Sum> v;
  Sum at(std::size_t i, std::size_t j) const { return v[i * n2 + j]; }
  Sum sum(std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1) const {
    Sum s = 0;
    for (std::size_t i = i0; i < i1; ++i)
      for (std::size_t j = j0; j < j1; ++j) s += at(i, j);
    return s;
  }
  Dense transposed() const {
    Dense t{n2, n1, std::vector<Sum>(v.size())};
    for (std::size_t i = 0; i < n1; ++i)
      for (std::size_t j = 0; j < n2; ++j) t.v[j * n1 + i] = at(i, j);
    return t;
  }
};

template <class T>
Dense dense(const LoadMatrix<T>& g) {
  Dense d{g.extent(0), g.extent(1), {}};
  for (auto x : g.values()) d.v.push_back(static_cast<Sum>(x));
  return d;
}

/// Optimal bottleneck of a 1D array into p parts (empty parts allowed), exhaustively.
inline Sum opt1d(const std::vector<Sum>& a, std::size_t start, std::size_t p) {
  Sum rest = 0;
  for (std::size_t k = start; k < a.size(); ++k) rest += a[k];
  if (p == 1 || start == a.size()) return rest;
  Sum best = kInf, first = 0;
  for (std::size_t end = start; end <= a.size(); ++end) {
    if (end > start) first += a[end - 1];
    best = std::min(best, std::max(first, opt1d(a, end, p - 1)));
  }
  return best;
}

/// Column sums of rows [i, j).
inline std::vector<Sum> stripe(const Dense& d, std::size_t i, std::size_t j) {
  std::vector<Sum> s(d.n2, 0);
  for (std::size_t r = i; r < j; ++r)
    for (std::size_t c = 0; c < d.n2; ++c) s[c] += d.at(r, c);
  return s;
}

/// Optimal P x Q-way jagged (main dimension 0): b stripes of q parts from row i on.
inline Sum brute_pq(const Dense& d, std::size_t i, std::size_t b, std::size_t q) {
  if (b == 1) return opt1d(stripe(d, i, d.n1), 0, q);
  Sum best = kInf;
  for (std::size_t j = i; j <= d.n1; ++j)
    best = std::min(best, std::max(opt1d(stripe(d, i, j), 0, q), brute_pq(d, j, b - 1, q)));
  return best;
}

/// Optimal m-way jagged (main dimension 0): rows [i, n1) with p processors, any stripes.
inline Sum brute_m(const Dense& d, std::size_t i, std::size_t p) {
  if (i == d.n1) return 0;
  if (p == 0) return kInf;
  Sum best = kInf;
  for (std::size_t j = i + 1; j <= d.n1; ++j)
    for (std::size_t q = 1; q <= p; ++q) {
      const Sum rest = brute_m(d, j, p - q);
      if (rest == kInf) continue;
      best = std::min(best, std::max(opt1d(stripe(d, i, j), 0, q), rest));
    }
  return best;
}

/// Optimal m-way jagged for fixed stripes sb and P processors in total (>= 1 each).
inline Sum brute_probe(const Dense& d, const std::vector<std::size_t>& sb, std::size_t k,
                       std::size_t p) {
  const std::size_t m = sb.size() - 1;
  if (k == m) return 0;
  Sum best = kInf;
  const std::size_t left = m - k - 1;
  for (std::size_t q = 1; q + left <= p; ++q) {
    if (k + 1 == m && q != p) continue;
    best = std::min(
        best, std::max(opt1d(stripe(d, sb[k], sb[k + 1]), 0, q), brute_probe(d, sb, k + 1, p - q)));
  }
  return best;
}

/// Optimal m-way jagged for fixed processor counts q (stripes may be empty).
inline Sum brute_alloc(const Dense& d, const std::vector<std::size_t>& q, std::size_t k,
                       std::size_t i) {
  if (k + 1 == q.size()) return opt1d(stripe(d, i, d.n1), 0, q[k]);
  Sum best = kInf;
  for (std::size_t j = i; j <= d.n1; ++j)
    best = std::min(best, std::max(opt1d(stripe(d, i, j), 0, q[k]), brute_alloc(d, q, k + 1, j)));
  return best;
}

/// All ways to cut [0, n) into p intervals (boundary lists).
inline void all_cuts(std::size_t n, std::size_t p, std::vector<std::size_t>& cur,
                     std::vector<std::vector<std::size_t>>& out) {
  if (cur.size() == p) {
    auto c = cur;
    c.push_back(n);
    out.push_back(c);
    return;
  }
  for (std::size_t x = cur.back(); x <= n; ++x) {
    cur.push_back(x);
    all_cuts(n, p, cur, out);
    cur.pop_back();
  }
}

/// Optimal p1 x p2 rectilinear partition.
inline Sum brute_rect(const Dense& d, std::size_t p1, std::size_t p2) {
  std::vector<std::vector<std::size_t>> c1, c2;
  std::vector<std::size_t> cur{0};
  all_cuts(d.n1, p1, cur, c1);
  cur = {0};
  all_cuts(d.n2, p2, cur, c2);
  Sum best = kInf;
  for (const auto& a : c1)
    for (const auto& b : c2) {
      Sum worst = 0;
      for (std::size_t x = 0; x < p1; ++x)
        for (std::size_t y = 0; y < p2; ++y)
          worst = std::max(worst, d.sum(a[x], a[x + 1], b[y], b[y + 1]));
      best = std::min(best, worst);
    }
  return best;
}

/// Optimal hierarchical bipartition of a D-dimensional box with p parts (memoised recursion
/// straight from the definition: a part, or a cut along some dimension with p1 + p2 = p).
template <class T, int D>
struct BruteHier {
  const LoadGrid<T, D>& g;
  std::map<std::pair<std::array<std::size_t, 2 * D>, std::size_t>, Sum> memo;
  Sum load(const Rect<D>& r) const {
    // brute-force cell sum (independent of the prefix sums)
    if (r.empty()) return 0;
    Sum s = 0;
    std::array<std::size_t, D> c = r.lo;
    while (true) {
      s += static_cast<Sum>(g(c));
      int d = D - 1;
      for (; d >= 0; --d) {
        if (++c[d] < r.hi[d]) break;
        c[d] = r.lo[d];
      }
      if (d < 0) break;
    }
    return s;
  }
  Sum operator()(const Rect<D>& r, std::size_t p) {
    std::array<std::size_t, 2 * D> key;
    for (int d = 0; d < D; ++d) {
      key[2 * d] = r.lo[d];
      key[2 * d + 1] = r.hi[d];
    }
    if (auto it = memo.find({key, p}); it != memo.end()) return it->second;
    Sum best = load(r);
    if (p > 1) {
      bool cut = false;
      Sum b2 = kInf;
      for (int d = 0; d < D; ++d)
        for (std::size_t c = r.lo[d] + 1; c < r.hi[d]; ++c) {
          Rect<D> a = r, b = r;
          a.hi[d] = c;
          b.lo[d] = c;
          for (std::size_t p1 = 1; p1 < p; ++p1) {
            cut = true;
            b2 = std::min(b2, std::max((*this)(a, p1), (*this)(b, p - p1)));
          }
        }
      if (cut) best = b2;
    }
    memo[{key, p}] = best;
    return best;
  }
};

/// Random matrix with loads in [lo, hi].
inline LoadMatrix<std::uint32_t> random_matrix(std::mt19937_64& rng, std::size_t n1, std::size_t n2,
                                               std::uint32_t lo, std::uint32_t hi) {
  std::vector<std::uint32_t> v(n1 * n2);
  for (auto& x : v) x = lo + static_cast<std::uint32_t>(rng() % (hi - lo + 1));
  return LoadMatrix<std::uint32_t>({n1, n2}, v);
}

}  // namespace rect_test
