// The adaptive multigrid (AMM) of baiardi-2001 §5 on a CellDomain: cell-centred finite volumes on
// the composite grid, a correction-scheme V-cycle over the grids T_l of hierarchy.hpp with the
// operators in the order of baiardi-collecting-remote-data Fig. 2 (restriction level by level,
// smoothing, prolongation level by level, norm, refinement), a remote-data collection before each
// operator with that operator's stencil and level, and a rebalance at the end of each V-cycle.
//
// Numerics: values are cell means, a hnode's the mean of its children's. A fine cell next to a
// coarser leaf reads a ghost exact for quadratics (interface.hpp); other cells that are no hnode
// (halos for prolongation) take the bilinear interpolation of level l-1.
// Jacobi smoothing (weight 4/5) keeps every result independent of the rank count: no update reads
// a value written in the same sweep. The grids coarser than Lh are replicated: the level-Lh
// residual is gathered once per cycle and solved by SOR on every rank alike.
#pragma once

#include "hierarchy.hpp"
#include "interface.hpp"

#include <irregular/mpi/collective_error.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <numbers>
#include <span>

namespace amm {

struct Options {
  Problem problem = Problem::wave;
  int l0 = 7;              ///< the uniform grid: 4^l0 initial points (the paper's 2^14: l0 = 7)
  int lmax = 12;           ///< finest level (the paper's maximum grid level 12)
  int hold = 5;            ///< Lh: grids from here up are distributed, coarser ones replicated
  double tau = 4;          ///< refine where a second difference exceeds tau * h(lmax)^2 * scale
  int sweeps = 3;          ///< Jacobi sweeps per level
  double threshold = 0.1;  ///< rebalance when the unbalance exceeds this
  std::vector<std::string> strategies{"IFP"};  ///< the first one's ghosts are read
};

/// The error of a solution split into the algebraic error (against the discrete solution) and
/// the discretization error (the discrete solution against the exact one), max and L2 norms.
struct ErrorSplit {
  double algebraic_max = 0, algebraic_l2 = 0;
  double discretization_max = 0, discretization_l2 = 0;
  int cycles = 0;  ///< the V-cycles run to reach the discrete solution
};

/// The state after one V-cycle.
struct CycleReport {
  int min_level = 0, max_level = 0;
  std::uint64_t points = 0;
  double max_error = 0, l2_error = 0;  ///< against the exact solution: algebraic + discretization
  double residual = 0;                 ///< max |f + Δu| over the leaves, after the cycle
  double correction = 0;               ///< max |u_after - u_before|: bounds the algebraic error left
  double second_difference = 0;        ///< max |δ²u| over the leaves (h² |u''|), after the cycle
  double imbalance = 0;
  bool remapped = false;
  std::vector<Traffic> traffic;  ///< per strategy, this cycle, all ranks
  std::uint64_t digest = 0;      ///< of every leaf's cell and value bits, rank-order independent
};

class Solver {
 public:
  Solver(const boost::mpi::communicator& world, Options opt)
      : opt_(std::move(opt)), grid_(make_grid(world, opt_)), comm_(grid_.comm(), boost::mpi::comm_duplicate) {
    start();
  }

  /// A solver that continues on the grid saved at `path` by save() (on any number of ranks),
  /// whose user bytes go to `user`: the leaves and their values are the whole state between
  /// V-cycles; the grids T_l, the ghosts and the scale are rebuilt from them as after a
  /// refinement. opt.hold must be the saved grid's (Grid::load checks it). Collective.
  Solver(const boost::mpi::communicator& world, Options opt, const std::string& path, const std::string& type_tag,
         std::string* user)
      : opt_(std::move(opt)),
        grid_(Grid::load(world, path, grid_options(opt_), {.type_tag = type_tag, .user = user})),
        comm_(grid_.comm(), boost::mpi::comm_duplicate) {
    start();
  }

  /// The options the composite grid is created and loaded with.
  static Grid::options_type grid_options(const Options& o) {
    Grid::options_type go;
    go.hold_level = o.hold;
    return go;
  }

  /// Saves the composite grid to one file (Grid::save): the leaves and their values, with the
  /// application's bytes in `so.user`. Collective.
  void save(const std::string& path, const irr::SaveOptions& so) { grid_.save(path, so); }

  [[nodiscard]] const Grid& grid() const { return grid_; }
  [[nodiscard]] const Options& options() const { return opt_; }

  /// The composite residual f + Δu of each local leaf (local leaf order), as the last cycle or
  /// refinement left it: each leaf's is kept at its own level of the hierarchy. Local.
  [[nodiscard]] std::vector<double> leaf_residuals() const {
    std::vector<double> r(grid_.local_leaf_count(), 0.0);
    for (const Level& lv : levels_)
      for (std::size_t k = 0; k < lv.tree.size(); ++k)
        if (lv.active(k) && !lv.interior(k)) r[lv.leaf[k]] = lv.r[k];
    return r;
  }

  /// One V-cycle: coarse solve, prolongation and smoothing up the levels, the correction added
  /// to the leaves, the rebalance (unless `rebalance` is false: the leaves stay where they are),
  /// then the restriction and the residuals of the new values (the next cycle's right-hand side,
  /// and this cycle's report), and the norm. Collective.
  CycleReport vcycle(bool rebalance = true) {
    coarse_solve();
    for (int l = opt_.hold + 1; l <= top_; ++l) {
      prolongate(l);
      smooth(l);
    }
    const double moved = correct();
    const bool remapped = rebalance && grid_.rebalance({.threshold = opt_.threshold});
    if (remapped) rebuild();
    restrict_values();
    residuals();
    auto rep = norm();
    rep.remapped = remapped;
    boost::mpi::all_reduce(comm_, moved, rep.correction, boost::mpi::maximum<double>());
    rep.imbalance = grid_.load_report().imbalance;
    rep.traffic = traffic_totals();  // with the refinement's collections before this cycle
    for (auto& t : traffic_) t = Traffic{};
    return rep;
  }

  /// Marks the leaves whose second differences exceed the tolerance, refines them with bilinear
  /// values and restores the full 2:1 balance. Returns the number of leaves refined on all
  /// ranks. Collective.
  std::uint64_t refine() {
    restrict_values();
    part_ = Part::refine;
    collect_all_wide();
    const double tol = opt_.tau * scale_ * std::ldexp(1.0, -2 * opt_.lmax);
    std::uint64_t marked = 0;
    for (int l = opt_.hold; l <= top_; ++l) {
      Level& lv = level(l);
      for (std::size_t k = 0; k < lv.tree.size(); ++k) {
        if (!lv.active(k) || lv.interior(k)) continue;
        const auto c = lv.tree.cell(k);
        const int x = static_cast<int>(c.anchor[0]), y = static_cast<int>(c.anchor[1]);
        const double u = lv.val[k].u;
        auto f = [&](int dx, int dy) { return face(l, x + dx, y + dy, x, y, &NodeVal::u, u, lv.wide[0]); };
        const double d = std::max(std::abs(f(1, 0) - 2 * u + f(-1, 0)), std::abs(f(0, 1) - 2 * u + f(0, -1)));
        Leaf& leaf = grid_.data(lv.leaf[k]);
        for (int q = 0; q < 4; ++q)
          leaf.kids[static_cast<std::size_t>(q)] = bilinear(l, x, y, q & 1 ? 1 : -1, q & 2 ? 1 : -1, &NodeVal::u);
        if (d > tol && l < opt_.lmax) {
          grid_.mark(lv.leaf[k], irr::Mark::refine);
          ++marked;
        }
      }
    }
    marked = all_sum(marked);
    if (marked == 0) return 0;
    auto split = [](const Leaf& p, const irr::Cell<2>& c) {
      const double v = p.kids[(c.anchor[0] & 1u) + 2 * (c.anchor[1] & 1u)];
      return Leaf{v, {v, v, v, v}};
    };
    auto merge = [](std::span<const Leaf> kids) {
      double s = 0;
      for (const auto& k : kids) s += k.u;
      return Leaf{s / static_cast<double>(kids.size()), {}};
    };
    grid_.adapt(split, merge);
    grid_.balance(irr::BalanceKind::full, split);
    rebuild();
    restrict_values();  // the residuals of the new leaves: the next cycle's right-hand side
    residuals();
    return marked;
  }

  /// The truncation error of the composite operator: the residual of the exact cell means, max
  /// over the leaves that read an interface ghost, over the other leaves at the boundary, and
  /// over the rest. Replaces u. Collective.
  std::array<double, 3> truncation() {
    for (std::size_t i = 0; i < grid_.local_leaf_count(); ++i) {
      const auto c = grid_.centre(i);
      grid_.data(i).u = exact_mean(opt_.problem, c[0], c[1], std::ldexp(1.0, -grid_.level(i)));
    }
    restrict_values();
    residuals();
    return residual_kinds_;
  }

  /// The errors of the current values split in two: V-cycles without rebalancing (the leaves
  /// stay put) run on to the discrete solution u*, until the correction is 1e-4 of the first
  /// one (the algebraic error is then known to 0.01%) or stops halving (roundoff), at most
  /// `cap` of them; the algebraic error is u - u*, the discretization error u* - exact.
  /// Replaces u by u*. Collective.
  ErrorSplit split_errors(int cap) {
    std::vector<double> before(grid_.local_leaf_count());
    for (std::size_t i = 0; i < before.size(); ++i) before[i] = grid_.data(i).u;
    ErrorSplit out;
    for (double first = 0, last = HUGE_VAL; out.cycles < cap;) {
      const double c = vcycle(false).correction;
      if (++out.cycles == 1) first = c;
      if (!(c < 0.5 * last) || c <= 1e-4 * first) break;  // c == 0 stops too
      last = c;
    }
    const auto alg = norms([&](std::size_t i) { return before[i] - grid_.data(i).u; });
    const auto rep = norm();
    out.algebraic_max = alg[0];
    out.algebraic_l2 = alg[1];
    out.discretization_max = rep.max_error;
    out.discretization_l2 = rep.l2_error;
    return out;
  }

  /// The errors, levels and points of the current values, as a V-cycle reports them (no traffic,
  /// correction or remap). Collective.
  CycleReport report() { return norm(); }

  /// The largest value of the Dirichlet data: the problem's scale.
  [[nodiscard]] double scale() const { return scale_; }

  /// Bits of every leaf's cell and value, summed over leaves: equal for equal grids and values,
  /// whatever the rank count.
  [[nodiscard]] std::uint64_t digest() const {
    std::uint64_t h = 0;
    for (std::size_t i = 0; i < grid_.local_leaf_count(); ++i) {
      std::uint64_t x = static_cast<std::uint64_t>(grid_.local_tree().starts()[i]) * 0x9E3779B97F4A7C15ull;
      x ^= std::bit_cast<std::uint64_t>(grid_.data(i).u) + 0x632BE59BD9B4E019ull + static_cast<std::uint64_t>(grid_.level(i));
      x ^= x >> 31;
      x *= 0xBF58476D1CE4E5B9ull;
      x ^= x >> 29;
      h += x;
    }
    return all_sum(h);
  }

 private:
  static Grid make_grid(const boost::mpi::communicator& world, const Options& o) {
    // The initial guess is zero: nothing of the solution is known inside.
    return Grid(world, irr::Box<2>{{0, 0}, {1, 1}}, o.l0, [](const irr::Cell<2>&) { return Leaf{}; }, grid_options(o));
  }

  void start() {
    for (const auto& s : opt_.strategies) strategies_.emplace_back(s);
    traffic_.assign(strategies_.size(), Traffic{});
    told_.resize(strategies_.size());
    rebuild();
    restrict_values();  // the first cycle's right-hand side
    residuals();
  }

  Level& level(int l) { return levels_[static_cast<std::size_t>(l - opt_.hold)]; }

  /// The grids T_l anew from the leaves (after a refinement or a remap).
  void rebuild() {
    ++generation_;
    int top = opt_.hold;
    for (std::size_t i = 0; i < grid_.local_leaf_count(); ++i) top = std::max(top, grid_.level(i));
    boost::mpi::all_reduce(comm_, top, top_, boost::mpi::maximum<int>());
    const std::size_t old = levels_.size();
    levels_.resize(static_cast<std::size_t>(top_ - opt_.hold + 1));
    for (std::size_t k = old; k < levels_.size(); ++k) {
      levels_[k].near.resize(strategies_.size());
      levels_[k].wide.resize(strategies_.size());
    }
    Level& t = level(top_);
    t.l = top_;
    t.tree = grid_.local_tree();
    t.leaf.resize(t.tree.size());
    t.src.assign(t.tree.size(), none);
    for (std::size_t i = 0; i < t.leaf.size(); ++i) t.leaf[i] = i;
    cut_levels(levels_);
    scale_ = 0;
    for (double x : {0.0, 0.25, 0.5, 0.75, 1.0})
      for (double y : {0.0, 1.0}) scale_ = std::max({scale_, std::abs(exact(opt_.problem, x, y)), std::abs(exact(opt_.problem, y, x))});
    scale_ = std::max(scale_, std::abs(exact(opt_.problem, 0.7, 0.3)));
  }

  // ---- the operators ------------------------------------------------------------------------

  /// Restriction of the solution: each hnode's value is the mean of its children's. Local.
  void restrict_values() {
    Level& t = level(top_);
    for (std::size_t k = 0; k < t.tree.size(); ++k) t.val[k].u = grid_.data(t.leaf[k]).u;
    for (int l = top_ - 1; l >= opt_.hold; --l) {
      const Level& up = level(l + 1);
      Level& lv = level(l);
      for (std::size_t k = 0; k < lv.tree.size(); ++k) {
        const std::size_t s = lv.src[k];
        lv.val[k].u = lv.interior(k) ? 0.25 * (up.val[s].u + up.val[s + 1].u + up.val[s + 2].u + up.val[s + 3].u)
                                     : up.val[s].u;
      }
    }
  }

  /// The composite residual r = f + Δu at every leaf, restricted level by level (means of the
  /// children). Reads the faces and halos of every level: one collection per level.
  void residuals() {
    part_ = Part::residual;
    collect_all_wide();
    std::array<double, 4> rmax{};  // per kind of leaf (see touched_), then the second difference
    for (int l = top_; l >= opt_.hold; --l) {
      Level& lv = level(l);
      const double h = std::ldexp(1.0, -l);
      for (std::size_t k = 0; k < lv.tree.size(); ++k) {
        if (!lv.active(k)) continue;
        if (lv.interior(k)) {
          const Level& up = level(l + 1);
          const std::size_t s = lv.src[k];
          lv.r[k] = 0.25 * (up.r[s] + up.r[s + 1] + up.r[s + 2] + up.r[s + 3]);
          continue;
        }
        const auto c = lv.tree.cell(k);
        const int x = static_cast<int>(c.anchor[0]), y = static_cast<int>(c.anchor[1]);
        const double u = lv.val[k].u;
        auto f = [&](int dx, int dy) { return face(l, x + dx, y + dy, x, y, &NodeVal::u, u, lv.wide[0]); };
        touched_ = 0;
        const double east = f(1, 0), west = f(-1, 0), north = f(0, 1), south = f(0, -1);
        const double lap = (east + west + north + south - 4 * u) / (h * h);
        lv.r[k] = source(opt_.problem, (x + 0.5) * h, (y + 0.5) * h) + lap;
        auto& m = rmax[static_cast<std::size_t>(touched_)];
        m = std::max(m, std::abs(lv.r[k]));
        rmax[3] = std::max({rmax[3], std::abs(east - 2 * u + west), std::abs(north - 2 * u + south)});
      }
    }
    std::array<double, 4> all{};
    boost::mpi::all_reduce(comm_, rmax.data(), 4, all.data(), boost::mpi::maximum<double>());
    std::copy_n(all.begin(), 3, residual_kinds_.begin());
    residual_ = std::max({all[0], all[1], all[2]});
    second_difference_ = all[3];
  }

  /// The replicated coarse grids: the level-Lh residual gathered, -Δe = r solved by SOR on the
  /// uniform grid alike on every rank (same input, same order), each rank keeping its entries.
  void coarse_solve() {
    Level& lv = level(opt_.hold);
    const int n = 1 << opt_.hold;
    std::vector<double> mine(lv.tree.size() * 2);
    for (std::size_t k = 0; k < lv.tree.size(); ++k) {
      const auto c = lv.tree.cell(k);
      mine[2 * k] = static_cast<double>(c.anchor[0] + static_cast<std::size_t>(n) * c.anchor[1]);
      mine[2 * k + 1] = lv.r[k];
    }
    std::vector<int> sizes;
    boost::mpi::all_gather(comm_, static_cast<int>(mine.size()), sizes);
    std::vector<int> displs(sizes.size(), 0);
    for (std::size_t r = 1; r < sizes.size(); ++r) displs[r] = displs[r - 1] + sizes[r - 1];
    std::vector<double> all(static_cast<std::size_t>(displs.back() + sizes.back()));
    MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), sizes.data(), displs.data(),
                   MPI_DOUBLE, comm_);
    const auto N = static_cast<std::size_t>(n);
    std::vector<double> rhs(N * N, 0.0), e(N * N, 0.0);
    for (std::size_t q = 0; q + 1 < all.size(); q += 2) rhs[static_cast<std::size_t>(all[q])] = all[q + 1];
    const double h2 = std::ldexp(1.0, -2 * opt_.hold);
    const double w = 2 / (1 + std::sin(std::numbers::pi / n));
    auto at = [&](int x, int y, double own) {  // homogeneous Dirichlet: the mirror value
      return (x < 0 || y < 0 || x >= n || y >= n) ? -own : e[static_cast<std::size_t>(x) + N * static_cast<std::size_t>(y)];
    };
    for (int sweep = 0; sweep < 40 * n; ++sweep)
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x) {
          double& v = e[static_cast<std::size_t>(x) + N * static_cast<std::size_t>(y)];
          const double gs = (at(x + 1, y, v) + at(x - 1, y, v) + at(x, y + 1, v) + at(x, y - 1, v) +
                             h2 * rhs[static_cast<std::size_t>(x) + N * static_cast<std::size_t>(y)]) / 4;
          v += w * (gs - v);
        }
    for (std::size_t k = 0; k < lv.tree.size(); ++k) {
      const auto c = lv.tree.cell(k);
      lv.val[k].e = e[c.anchor[0] + N * c.anchor[1]];
    }
  }

  /// Prolongation to level l: every level-l hnode starts from the bilinear interpolation of the
  /// correction of level l-1. Reads the parent's neighbours: the level l-1 collection.
  void prolongate(int l) {
    // The coarser leaves' corrections, final now, join their copies in T_l.
    const Level& down = level(l - 1);
    Level& lv = level(l);
    for (std::size_t k = 0; k < down.tree.size(); ++k)
      if (!down.interior(k)) lv.val[down.src[k]].e = down.val[k].e;
    part_ = Part::prolong;
    collect(level(l - 1), &Level::wide);
    for (std::size_t k = 0; k < lv.tree.size(); ++k) {
      if (!lv.active(k)) continue;
      const auto c = lv.tree.cell(k);
      const int x = static_cast<int>(c.anchor[0]), y = static_cast<int>(c.anchor[1]);
      lv.val[k].e = bilinear(l - 1, x >> 1, y >> 1, x & 1 ? 1 : -1, y & 1 ? 1 : -1, &NodeVal::e);
    }
  }

  /// Weighted Jacobi on the level-l hnodes for -Δe = r: faces at level l (halos from level l-1).
  void smooth(int l) {
    Level& lv = level(l);
    part_ = Part::smooth;
    collect(lv, &Level::near);
    const double h2 = std::ldexp(1.0, -2 * l);
    std::vector<double> next(lv.tree.size());
    for (int s = 0; s < opt_.sweeps; ++s) {
      if (s > 0) exchange(lv, &Level::near);
      for (std::size_t k = 0; k < lv.tree.size(); ++k) {
        if (!lv.active(k)) continue;
        const auto c = lv.tree.cell(k);
        const int x = static_cast<int>(c.anchor[0]), y = static_cast<int>(c.anchor[1]);
        const double e = lv.val[k].e;
        auto f = [&](int dx, int dy) { return face(l, x + dx, y + dy, x, y, &NodeVal::e, e, lv.near[0]); };
        const double jac = (f(1, 0) + f(-1, 0) + f(0, 1) + f(0, -1) + h2 * lv.r[k]) / 4;
        next[k] = e + 0.8 * (jac - e);
      }
      for (std::size_t k = 0; k < lv.tree.size(); ++k)
        if (lv.active(k)) lv.val[k].e = next[k];
    }
  }

  /// u += e at every leaf (a leaf of level a takes the correction of level a). Returns the
  /// largest |e| added here. Local.
  double correct() {
    double moved = 0;
    for (int l = opt_.hold; l <= top_; ++l) {
      const Level& lv = level(l);
      for (std::size_t k = 0; k < lv.tree.size(); ++k)
        if (lv.active(k) && !lv.interior(k)) {
          grid_.data(lv.leaf[k]).u += lv.val[k].e;
          moved = std::max(moved, std::abs(lv.val[k].e));
        }
    }
    return moved;
  }

  /// The max and L2 norms of err(i) over the local leaves i, on all ranks. Collective.
  std::array<double, 2> norms(const std::function<double(std::size_t)>& err) const {
    double emax = 0, e2 = 0;
    for (std::size_t i = 0; i < grid_.local_leaf_count(); ++i) {
      const double e = err(i), h = std::ldexp(1.0, -grid_.level(i));
      emax = std::max(emax, std::abs(e));
      e2 += e * e * h * h;
    }
    std::array<double, 2> out{};
    boost::mpi::all_reduce(comm_, emax, out[0], boost::mpi::maximum<double>());
    boost::mpi::all_reduce(comm_, e2, out[1], std::plus<double>());
    out[1] = std::sqrt(out[1]);
    return out;
  }

  /// Max and L2 errors against the exact solution at the leaf centres. Collective.
  CycleReport norm() {
    CycleReport rep;
    const auto e = norms([&](std::size_t i) {
      const auto x = grid_.centre(i);
      return grid_.data(i).u - exact(opt_.problem, x[0], x[1]);
    });
    rep.max_error = e[0];
    rep.l2_error = e[1];
    int lo = 1 << 30, hi = 0;
    for (std::size_t i = 0; i < grid_.local_leaf_count(); ++i) {
      lo = std::min(lo, grid_.level(i));
      hi = std::max(hi, grid_.level(i));
    }
    boost::mpi::all_reduce(comm_, lo, rep.min_level, boost::mpi::minimum<int>());
    boost::mpi::all_reduce(comm_, hi, rep.max_level, boost::mpi::maximum<int>());
    rep.points = grid_.global_leaf_count();
    rep.residual = residual_;
    rep.second_difference = second_difference_;
    rep.digest = digest();
    return rep;
  }

  // ---- reads --------------------------------------------------------------------------------

  /// The value of field f at the level-l cell (x, y), read from the level-l hnode (x0, y0) whose
  /// value is `own`: beyond the boundary the mirror value (Dirichlet data for u, 0 for e); a cell
  /// that is no hnode lies in a coarser leaf and gets the ghost value of `interface_ghost`.
  double face(int l, int x, int y, int x0, int y0, double NodeVal::*f, double own, const Store& st) {
    const int n = 1 << l;
    if (x < 0 || y < 0 || x >= n || y >= n) {
      touched_ = std::max(touched_, 1);
      if (f == &NodeVal::e) return -own;
      const double h = std::ldexp(1.0, -l);
      const double px = std::clamp((x0 + x + 1) * 0.5 * h, 0.0, 1.0), py = std::clamp((y0 + y + 1) * 0.5 * h, 0.0, 1.0);
      return 2 * exact(opt_.problem, px, py) - own;
    }
    const Found at = find(level(l), st, index_of(x, y, l));
    if (!at.v) throw_missing(l, x, y);
    if (at.level == l) return at.v->*f;
    if (at.level == l - 1) return touched_ = 2, interface_ghost(l, x, y, x0, y0, f, own, st);
    return at.v->*f;  // two levels coarser: excluded by the full 2:1 balance
  }

  /// The fine ghost (x, y) of level l inside the level l-1 leaf C, seen from the hnode (x0, y0):
  /// interface.hpp's mean over the ghost cell from the hnode, its sibling behind it, C and C's
  /// tangential neighbours (beyond the boundary: the Dirichlet mean along C's edge, 0 for e).
  double interface_ghost(int l, int x, int y, int x0, int y0, double NodeVal::*f, double own, const Store& st) {
    const int dx = x - x0, dy = y - y0, tx = dy != 0, cx = x >> 1, cy = y >> 1, n = 1 << (l - 1);
    const int side = ((tx ? x : y) & 1) ? 1 : -1, t = tx ? cx : cy;
    const Found behind = find(level(l), st, index_of(x0 - dx, y0 - dy, l));
    if (!behind.v || behind.level != l) throw_missing(l, x0 - dx, y0 - dy);
    auto read = [&](int along, bool& beyond) {  // C's tangential neighbour at `along`
      beyond = along < 0 || along >= n;
      if (beyond && f == &NodeVal::e) return 0.0;
      if (beyond) {  // the mean of the Dirichlet data along C's edge on that side
        const double H = std::ldexp(1.0, -(l - 1)), edge = along < 0 ? 0.0 : 1.0, a0 = (tx ? cy : cx) * H;
        return tx ? exact_edge_mean(opt_.problem, edge, a0, edge, a0 + H) : exact_edge_mean(opt_.problem, a0, edge, a0 + H, edge);
      }
      const int qx = tx ? along : cx, qy = tx ? cy : along;
      const Found at = find(level(l - 1), level(l - 1).wide[0], index_of(qx, qy, l - 1));
      if (!at.v) throw_missing(l - 1, qx, qy);
      return at.v->*f;
    };
    GhostStencil s{own, behind.v->*f};
    bool outside = false;  // never: C is a leaf
    s.c = read(t, outside);
    s.near = read(t + side, s.near_is_boundary);
    s.far = read(t - side, s.far_is_boundary);
    return ghost_mean(s);
  }

  /// The bilinear value of field f of level l at the quarter of cell (qx, qy) towards (sx, sy):
  /// (9 v(Q) + 3 v(Q+sx) + 3 v(Q+sy) + v(Q+sx+sy)) / 16, each v read at level l (the value of the
  /// covering leaf where no hnode exists), mirrored at the boundary.
  double bilinear(int l, int qx, int qy, int sx, int sy, double NodeVal::*f) {
    const int n = 1 << l;
    const double h = std::ldexp(1.0, -l);
    auto read = [&](int x, int y) {
      const Found at = find(level(l), level(l).wide[0], index_of(x, y, l));
      if (!at.v) throw_missing(l, x, y);
      return at.v->*f;
    };
    auto v = [&](int x, int y) {
      const int mx = x < 0 ? 0 : x >= n ? n - 1 : x, my = y < 0 ? 0 : y >= n ? n - 1 : y;
      if (mx == x && my == y) return read(x, y);
      const double inside = read(mx, my);
      if (f == &NodeVal::e) return -inside;
      const double px = std::clamp((x + mx + 1) * 0.5 * h, 0.0, 1.0), py = std::clamp((y + my + 1) * 0.5 * h, 0.0, 1.0);
      return 2 * exact(opt_.problem, px, py) - inside;
    };
    return (9 * v(qx, qy) + 3 * v(qx + sx, qy) + 3 * v(qx, qy + sy) + v(qx + sx, qy + sy)) / 16;
  }

  [[noreturn]] static void throw_missing(int l, int x, int y) {
    throw irr::invalid_argument("amm: no value for level " + std::to_string(l) + " cell (" + std::to_string(x) +
                                ", " + std::to_string(y) + "): a ghost is missing");
  }

  // ---- collections --------------------------------------------------------------------------

  // Only the entries of level l read (the paper's I(op, l)); one extension cache per strategy
  // serves every level and both stencils.
  template <class S>
  void collect_with(Level& lv, std::vector<Store>& stores) {
    const irr::LeafPayload<NodeVal> payload{lv.val, lv.offsets};
    irr::GhostOptions opt;
    opt.readers = irr::LevelRange::only(lv.l);
    for (std::size_t s = 0; s < stores.size(); ++s) {
      const Store::Tree<Grid::map_type> tree{comm_, lv.tree, grid_.ownership(), irr::Periodicity<2>{}, generation_,
                                             1000 + 20 * lv.l + (&stores == &lv.wide ? 10 : 0), "amm", &told_[s]};
      const auto& st = stores[s].template collect<S>(tree, opt, strategies_[s], payload);
      traffic_[s].add(st.extension, Part::extension);
      for (const auto& phase : {st.prevention, st.request, st.answer, st.values}) traffic_[s].add(phase, part_);
    }
  }
  void collect(Level& lv, std::vector<Store> Level::*which) {
    if (which == &Level::near) collect_with<irr::stencil::VonNeumann<2, 1>>(lv, lv.near);
    else collect_with<irr::stencil::Moore<2, 2>>(lv, lv.wide);
  }
  void collect_all_wide() {
    // Informed fault prevention's readers of every level, told once per tree generation.
    std::vector<irr::ExtensionTree<Curve>> trees;
    for (int l = top_; l >= opt_.hold; --l) trees.push_back({level(l).tree, irr::LevelRange::only(l)});
    const std::span<const irr::ExtensionTree<Curve>> all(trees);
    for (std::size_t s = 0; s < strategies_.size(); ++s) {
      const auto st = strategies_[s].extend<irr::stencil::Moore<2, 2>>(comm_, all, grid_.ownership(), {}, generation_,
                                                                        told_[s], 990);
      traffic_[s].add(st.extension, Part::extension);
    }
    for (int l = top_; l >= opt_.hold; --l) collect(level(l), &Level::wide);
  }
  void exchange(Level& lv, std::vector<Store> Level::*which) {
    const Store::Tree<Grid::map_type> tree{comm_, lv.tree, grid_.ownership(), irr::Periodicity<2>{}, generation_,
                                           1000 + 20 * lv.l + (which == &Level::wide ? 10 : 0), "amm"};
    const irr::LeafPayload<NodeVal> payload{lv.val, lv.offsets};
    auto& stores = lv.*which;
    for (std::size_t s = 0; s < stores.size(); ++s) traffic_[s].add(stores[s].exchange(tree, payload), Part::sweeps);
  }

  std::vector<Traffic> traffic_totals() {
    std::vector<Traffic> out(traffic_.size());
    for (std::size_t s = 0; s < traffic_.size(); ++s) {
      out[s].messages = all_sum(traffic_[s].messages);
      out[s].bytes = all_sum(traffic_[s].bytes);
      for (std::size_t k = 0; k < out[s].by_part.size(); ++k) out[s].by_part[k] = all_sum(traffic_[s].by_part[k]);
    }
    return out;
  }
  std::uint64_t all_sum(std::uint64_t x) const {
    std::uint64_t t = 0;
    boost::mpi::all_reduce(comm_, x, t, std::plus<std::uint64_t>());
    return t;
  }

  Options opt_;
  Grid grid_;
  boost::mpi::communicator comm_;
  std::vector<irr::ghost::ByName> strategies_;
  std::vector<Level> levels_;
  std::vector<Traffic> traffic_;
  Part part_ = Part::residual;  ///< the operator whose collection runs
  std::vector<irr::ExtensionCache<Curve>> told_;  ///< informed fault prevention's, per strategy
  std::uint64_t generation_ = 0;
  int top_ = 0;
  double scale_ = 1;
  double residual_ = 0;
  double second_difference_ = 0;  ///< max |δ²u| over the leaves, from residuals()
  std::array<double, 3> residual_kinds_{};  ///< max residual per kind of leaf (see touched_)
  int touched_ = 0;  ///< what face() read for a leaf: 0 leaves only, 1 the boundary, 2 an interface ghost
};

}  // namespace amm
