// Barnes–Hut physics of the nbody example: bodies, multipoles (monopole and traceless quadrupole
// about the centre of mass, combined by the parallel-axis shift), the multipole acceptance
// criterion, and the force kernels over structure-of-arrays interaction lists.
//
// Everything here is serial and deterministic: a body's acceleration is summed in the order of
// its interaction lists (multipoles first, in walk order, then near bodies, in walk order), so
// the same walk gives the same bits whatever the number of ranks.
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/core/cell.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace nbody {

/// One body. Trivially copyable: it travels between ranks as bytes.
template <int D>
struct Body {
  std::array<double, D> position;      ///< read by the domain (element_traits)
  std::array<double, D> velocity;      ///< at the same time as position after a full step
  std::array<double, D> acceleration;  ///< of the last force evaluation
  double mass = 0;
  double potential = 0;          ///< of the last force evaluation (G = 1; the body's own term excluded)
  std::uint64_t id = 0;          ///< 0 .. N-1, the same at every rank count
  std::uint64_t interactions = 0;  ///< multipoles + bodies it felt in the last evaluation (its cost)
};

/// Number of independent components of a symmetric D x D matrix.
template <int D>
inline constexpr int sym = D * (D + 1) / 2;

/// Index of component (a, b) of a symmetric matrix stored as its upper triangle, row by row.
template <int D>
constexpr int qi(int a, int b) noexcept {
  if (a > b) std::swap(a, b);
  return a * D - a * (a - 1) / 2 + (b - a);
}

/// The multipole of an hnode about its centre of mass: mass, centre of mass, the traceless
/// quadrupole Q = sum m (3 d d^T - |d|^2 I) and the trace T = sum m |d|^2 (d: a body's offset from
/// the centre of mass). T makes the softened expansion exact to second order.
template <int D>
struct Multipole {
  double mass = 0;
  std::array<double, D> com{};
  std::array<double, sym<D>> q{};
  double trace = 0;
};

/// The centre of a cell in physical coordinates.
template <int D>
std::array<double, D> cell_centre(const irregular::Box<D>& box, const irregular::Cell<D>& c) {
  const irregular::coord_t n = irregular::ipow<irregular::coord_t>(2, c.level);
  const auto lo = box.lower(c, n), hi = box.upper(c, n);
  std::array<double, D> x;
  for (int d = 0; d < D; ++d) x[d] = 0.5 * (lo[d] + hi[d]);
  return x;
}

/// The physical box of a cell.
template <int D>
irregular::Box<D> cell_box(const irregular::Box<D>& box, const irregular::Cell<D>& c) {
  const irregular::coord_t n = irregular::ipow<irregular::coord_t>(2, c.level);
  return {box.lower(c, n), box.upper(c, n)};
}

/// Adds m (3 d d^T - |d|^2 I) to q and m |d|^2 to t.
template <int D>
void add_second_moment(std::array<double, sym<D>>& q, double& t, double m, const std::array<double, D>& d) {
  double d2 = 0;
  for (int a = 0; a < D; ++a) d2 += d[a] * d[a];
  for (int a = 0; a < D; ++a)
    for (int b = a; b < D; ++b) q[qi<D>(a, b)] += m * (3 * d[a] * d[b] - (a == b ? d2 : 0.0));
  t += m * d2;
}

/// Mass and centre of mass of `items` (bodies or children's multipoles), in their order; an empty
/// set has its centre at the cell's centre.
template <int D, class Items, class Mass, class Position>
Multipole<D> monopole(const irregular::Box<D>& box, const irregular::Cell<D>& cell, const Items& items,
                      Mass mass, Position position) {
  Multipole<D> p;
  for (const auto& x : items) {
    p.mass += mass(x);
    for (int a = 0; a < D; ++a) p.com[a] += mass(x) * position(x)[a];
  }
  if (p.mass == 0) {
    p.com = cell_centre(box, cell);
    return p;
  }
  for (int a = 0; a < D; ++a) p.com[a] /= p.mass;
  return p;
}

/// The multipole of a leaf from its bodies (in their order in the leaf). An empty leaf has mass 0
/// and its centre of mass at the cell's centre.
template <int D>
Multipole<D> leaf_multipole(const irregular::Box<D>& box, const irregular::Cell<D>& cell,
                            std::span<const Body<D>> bodies) {
  Multipole<D> p = monopole(box, cell, bodies, [](const Body<D>& b) { return b.mass; },
                            [](const Body<D>& b) -> const auto& { return b.position; });
  if (p.mass == 0) return p;
  for (const auto& b : bodies) {
    std::array<double, D> d;
    for (int a = 0; a < D; ++a) d[a] = b.position[a] - p.com[a];
    add_second_moment<D>(p.q, p.trace, b.mass, d);
  }
  return p;
}

/// The multipole of an hnode from its children's (curve order): masses and centres add, each
/// child's quadrupole moves to the new centre by the parallel-axis shift.
template <int D>
Multipole<D> combine_multipoles(const irregular::Box<D>& box, const irregular::Cell<D>& cell,
                                std::span<const Multipole<D>> children) {
  Multipole<D> p = monopole(box, cell, children, [](const Multipole<D>& c) { return c.mass; },
                            [](const Multipole<D>& c) -> const auto& { return c.com; });
  if (p.mass == 0) return p;
  for (const auto& c : children) {
    if (c.mass == 0) continue;
    std::array<double, D> d;
    for (int a = 0; a < D; ++a) d[a] = c.com[a] - p.com[a];
    for (int k = 0; k < sym<D>; ++k) p.q[k] += c.q[k];
    p.trace += c.trace;
    add_second_moment<D>(p.q, p.trace, c.mass, d);
  }
  return p;
}

/// The box–box acceptance criterion: an hnode of side s must be opened for a reader leaf when
/// s > theta * dist, dist being the least distance between the hnode's box and the reader's box
/// (0 when they touch or overlap). Monotone in the reader box: a larger box is never farther.
/// theta = 0 opens every hnode (direct summation through the tree).
template <int D>
struct OpeningCriterion {
  double theta = 0.5;
  bool operator()(const irregular::Box<D>& h, const irregular::Box<D>& r) const noexcept {
    double dist2 = 0;
    for (int a = 0; a < D; ++a) {
      const double gap = std::max({0.0, h.lo[a] - r.hi[a], r.lo[a] - h.hi[a]});
      dist2 += gap * gap;
    }
    const double side = h.hi[0] - h.lo[0];
    return side > theta * std::sqrt(dist2);
  }
};

/// What one body felt in one force evaluation.
template <int D>
struct Felt {
  std::array<double, D> acceleration{};
  double potential = 0;
  std::uint64_t interactions = 0;
};

/// What body `b` feels from every other body of `all` (skipped by id), summed in `all`'s order:
/// the direct sum, a scalar loop, the reference of the tree's forces.
template <int D>
Felt<D> direct_felt(const Body<D>& b, std::span<const Body<D>> all, double eps) {
  const double eps2 = eps * eps;
  Felt<D> f;
  for (const auto& o : all) {
    if (o.id == b.id) continue;
    std::array<double, D> r;
    double r2 = eps2;
    for (int a = 0; a < D; ++a) {
      r[a] = b.position[a] - o.position[a];
      r2 += r[a] * r[a];
    }
    const double inv = 1.0 / std::sqrt(r2);
    const double minv = o.mass * inv, minv3 = minv * inv * inv;
    for (int a = 0; a < D; ++a) f.acceleration[a] -= minv3 * r[a];
    f.potential -= minv;
  }
  f.interactions = all.size() - 1;
  return f;
}

/// The interaction lists of one reader leaf, as structures of arrays, and the kernels that
/// evaluate the leaf's bodies against them: the loops run over the reader's bodies (the inner
/// loop), one list entry at a time, so each body's sums are in list order and g++ -O3
/// vectorizes the inner loop without reassociating anything.
template <int D>
class InteractionLists {
 public:
  InteractionLists(double eps, bool quadrupole) : eps2_(eps * eps), quadrupole_(quadrupole) {}

  void clear() {
    for (auto& v : mc_) v.clear();
    for (auto& v : mq_) v.clear();
    mm_.clear();
    mt_.clear();
    for (auto& v : nx_) v.clear();
    nm_.clear();
    own_ = false;
  }
  void add_multipole(const Multipole<D>& p) {
    if (p.mass == 0) return;
    for (int a = 0; a < D; ++a) mc_[a].push_back(p.com[a]);
    for (int k = 0; k < sym<D>; ++k) mq_[k].push_back(p.q[k]);
    mm_.push_back(p.mass);
    mt_.push_back(p.trace);
  }
  /// Bodies of another leaf, near the reader: felt body by body.
  void add_bodies(std::span<const Body<D>> bodies) {
    for (const auto& b : bodies) {
      for (int a = 0; a < D; ++a) nx_[a].push_back(b.position[a]);
      nm_.push_back(b.mass);
    }
  }
  /// The reader's own leaf: its bodies act on each other (a body not on itself), after the lists.
  void add_own() noexcept { own_ = true; }
  [[nodiscard]] std::size_t multipoles() const noexcept { return mm_.size(); }
  [[nodiscard]] std::size_t near_bodies() const noexcept { return nm_.size(); }

  /// Evaluates `readers` against the lists into out[0 .. readers.size()): the multipoles in list
  /// order, then the near bodies in list order, then (add_own) the readers on each other.
  void evaluate(std::span<const Body<D>> readers, Felt<D>* out) {
    const std::size_t n = readers.size();
    for (int a = 0; a < D; ++a) {
      px_[a].resize(n);
      ax_[a].assign(n, 0.0);
    }
    ph_.assign(n, 0.0);
    pm_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      for (int a = 0; a < D; ++a) px_[a][i] = readers[i].position[a];
      pm_[i] = readers[i].mass;
    }
    if (quadrupole_)
      multipole_kernel<true>(n);
    else
      multipole_kernel<false>(n);
    near_kernel(n);
    if (own_) own_kernel(n);
    for (std::size_t i = 0; i < n; ++i) {
      for (int a = 0; a < D; ++a) out[i].acceleration[a] = ax_[a][i];
      out[i].potential = ph_[i];
      out[i].interactions = mm_.size() + nm_.size() + (own_ ? n - 1 : 0);
    }
  }

 private:
  template <bool Quad>
  void multipole_kernel(std::size_t n) {
    const double eps2 = eps2_;
    std::array<const double*, D> p;
    std::array<double*, D> acc;
    for (int a = 0; a < D; ++a) {
      p[a] = px_[a].data();
      acc[a] = ax_[a].data();
    }
    double* const phi = ph_.data();
    for (std::size_t j = 0; j < mm_.size(); ++j) {
      std::array<double, D> c;
      for (int a = 0; a < D; ++a) c[a] = mc_[a][j];
      std::array<double, sym<D>> q;
      for (int k = 0; k < sym<D>; ++k) q[k] = mq_[k][j];
      const double m = mm_[j];
      const double te = mt_[j] * eps2;  // the trace's softening term
#pragma GCC ivdep  // the accumulators and the positions are distinct arrays
      for (std::size_t i = 0; i < n; ++i) {
        std::array<double, D> r;
        double r2 = eps2;
        for (int a = 0; a < D; ++a) {
          r[a] = p[a][i] - c[a];
          r2 += r[a] * r[a];
        }
        const double inv = 1.0 / std::sqrt(r2);
        const double inv2 = inv * inv, inv3 = inv * inv2;
        if constexpr (Quad) {
          const double inv5 = inv3 * inv2, inv7 = inv5 * inv2;
          std::array<double, D> qr;
          double rqr = 0;
          for (int a = 0; a < D; ++a) {
            double s = 0;
            for (int b = 0; b < D; ++b) s += q[qi<D>(a, b)] * r[b];
            qr[a] = s;
            rqr += r[a] * s;
          }
          // a = -M r/s^3 + Q r/s^5 - 5/2 (r.Q.r) r/s^7 + 5/2 T eps^2 r/s^7  (s^2 = r^2 + eps^2)
          const double radial = -m * inv3 + 2.5 * (te - rqr) * inv7;
          for (int a = 0; a < D; ++a) acc[a][i] += radial * r[a] + qr[a] * inv5;
          // phi = -M/s - 1/2 (r.Q.r)/s^5 + 1/2 T eps^2/s^5
          phi[i] += -m * inv + 0.5 * (te - rqr) * inv5;
        } else {
          const double radial = -m * inv3;
          for (int a = 0; a < D; ++a) acc[a][i] += radial * r[a];
          phi[i] += -m * inv;
        }
      }
    }
  }

  void near_kernel(std::size_t n) {
    const double eps2 = eps2_;
    std::array<const double*, D> p;
    std::array<double*, D> acc;
    for (int a = 0; a < D; ++a) {
      p[a] = px_[a].data();
      acc[a] = ax_[a].data();
    }
    double* const phi = ph_.data();
    for (std::size_t j = 0; j < nm_.size(); ++j) {
      std::array<double, D> x;
      for (int a = 0; a < D; ++a) x[a] = nx_[a][j];
      const double mj = nm_[j];
#pragma GCC ivdep  // the accumulators and the positions are distinct arrays
      for (std::size_t i = 0; i < n; ++i) {
        std::array<double, D> r;
        double r2 = eps2;
        for (int a = 0; a < D; ++a) {
          r[a] = p[a][i] - x[a];
          r2 += r[a] * r[a];
        }
        const double inv = 1.0 / std::sqrt(r2);
        const double minv = mj * inv;
        const double minv3 = minv * inv * inv;
        for (int a = 0; a < D; ++a) acc[a][i] -= minv3 * r[a];
        phi[i] -= minv;
      }
    }
  }

  /// The reader leaf's own bodies, each against the others (j != i), in leaf order: a few
  /// bodies, a scalar loop.
  void own_kernel(std::size_t n) {
    const double eps2 = eps2_;
    for (std::size_t j = 0; j < n; ++j) {
      const double mj = pm_[j];
      for (std::size_t i = 0; i < n; ++i) {
        if (i == j) continue;
        std::array<double, D> r;
        double r2 = eps2;
        for (int a = 0; a < D; ++a) {
          r[a] = px_[a][i] - px_[a][j];
          r2 += r[a] * r[a];
        }
        const double inv = 1.0 / std::sqrt(r2);
        const double minv = mj * inv;
        const double minv3 = minv * inv * inv;
        for (int a = 0; a < D; ++a) ax_[a][i] -= minv3 * r[a];
        ph_[i] -= minv;
      }
    }
  }

  double eps2_;
  bool quadrupole_;
  std::array<std::vector<double>, D> mc_;
  std::array<std::vector<double>, sym<D>> mq_;
  std::vector<double> mm_, mt_;
  std::array<std::vector<double>, D> nx_;
  std::vector<double> nm_;
  bool own_ = false;  ///< the reader's own leaf was opened (its bodies act on each other)
  // the reader leaf
  std::array<std::vector<double>, D> px_, ax_;
  std::vector<double> ph_, pm_;
};

}  // namespace nbody
