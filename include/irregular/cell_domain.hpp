// CellDomain: a distributed linear H-Tree whose leaves carry one user datum each — the grids of
// adaptive multigrid, finite volumes and cellular automata (baiardi-2001 §5). It shares the
// element domain's pieces: LocalLeaves, the Partitioner/OwnershipMap seam, the remap pipeline
// (settle_on_map), the leaf loads and the ghost layer (GhostStore, every collection strategy).
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/htree/balance.hpp>
#include <irregular/distributed/domain/cell_domain_core.hpp>
#include <irregular/distributed/domain/cell_domain_options.hpp>
#include <irregular/mpi/detail/index_wire.hpp>
#include <irregular/distributed/htree/sample_sort.hpp>
#include <irregular/distributed/ghost/store.hpp>
#include <irregular/distributed/ghost/strategies.hpp>
#include <irregular/distributed/htree/leaf_loads.hpp>
#include <irregular/distributed/htree/load_metric.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/partitioners/partitioner.hpp>
#include <irregular/distributed/remap/rebalance_decision.hpp>
#include <irregular/distributed/remap/remap.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/distributed/partitioners/sfc_blocking.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/communicator.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/tree/balance.hpp>
#include <irregular/tree/cell_tree.hpp>
#include <irregular/tree/contact.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/stencil.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular {

/// One distributed grid: leaves of curve C, each with a Data; mapped by Partitioner P; read by
/// stencil S (ghosts, neighbours).
template <class Data, Stencil S, SpaceFillingCurve C, class Metric = load::Constant,
          class P = partitioner::SfcBlocking>
  requires LoadMetric<Metric, C::dim> && (S::dim == C::dim) && Partitioner<P, C> && std::default_initializable<Data>
class CellDomain : private detail::CellDomainCore<Data, S, C, Metric, P> {
  using Core = detail::CellDomainCore<Data, S, C, Metric, P>;
  using typename Core::Keyed;
  using Core::comm_;
  using Core::box_;
  using Core::options_;
  using Core::map_;
  using Core::leaves_;
  using Core::data_;
  using Core::marks_;
  using Core::mark_error_;
  using Core::loads_;
  using Core::ghosts_;
  using Core::offsets_;
  using Core::migration_;
  using Core::migration_global_;
  using Core::generation_;
  using Core::max_leaves_;
  using Core::initial_map;
  using Core::tree;
  using Core::identity_offsets;
  using Core::payload;
  using Core::bad_mark;
  using Core::family_at;
  using Core::check_hold_level;
  using Core::anchor_text;
  using Core::in_family;
  using Core::hold_families;
  using Core::move_to;
  using Core::repartition;
  using Core::hold_cells;
  using Core::estimate_loads;
  using Core::replace_leaves;
  using Core::end_of;
  using Core::tag_migrate;
  using Core::tag_families;
  using Core::tag_ghost;
  using Core::tag_balance;
  static_assert(!detail::PerElementMetric<Metric>,
                "irregular::CellDomain: leaves hold data, not elements; use load::Constant, weighted or Measured");

 public:
  static constexpr int dim = C::dim;
  using data_type = Data;
  using curve_type = C;
  using stencil_type = S;
  using index_type = typename C::index_type;
  using map_type = typename P::template map_type<C>;
  using options_type = CellDomainOptions<dim, Metric, P>;

  /// A uniform grid at `level`: each rank creates only its share (an even split of the cells
  /// in curve order) with data init(cell), then the partitioner maps it. Throws
  /// irregular::collective_error on every rank for a bad box or level, a leaf budget exceeded,
  /// or an init that throws anywhere. Collective over comm (duplicates it).
  template <class Init>
    requires std::invocable<Init&, const Cell<C::dim>&>
  CellDomain(const boost::mpi::communicator& comm, Box<dim> box, int level, Init init, options_type options = {})
      : Core(comm, box, std::move(options)) {
    mpi::agree(comm_.get(), [&] {
      box.validate();
      if (level < 0 || level > C::max_level)
        throw invalid_argument("irregular::CellDomain: level " + std::to_string(level) + " outside [0, max_level = " +
                               std::to_string(C::max_level) + "]");
      options_.partitioner.template check<C>(comm_.size());
      check_hold_level();
    });
    max_leaves_ = options_.max_leaves_per_rank ? options_.max_leaves_per_rank : default_leaf_budget(comm_.get());
    const int p = comm_.size(), me = comm_.rank();
    const index_type cells = detail::index_end<C>() / detail::span_at<C>(level);
    const auto share = [&](int r) {  // first cell of rank r: r * cells / p without overflow
      return static_cast<index_type>(cells / static_cast<index_type>(p) * static_cast<index_type>(r) +
                                     cells % static_cast<index_type>(p) * static_cast<index_type>(r) /
                                         static_cast<index_type>(p));
    };
    std::vector<index_type> splitters(static_cast<std::size_t>(p) + 1);
    for (int r = 0; r <= p; ++r) splitters[static_cast<std::size_t>(r)] = share(r) * detail::span_at<C>(level);
    mpi::agree(comm_.get(), [&] {
      const auto n = static_cast<std::size_t>(share(me + 1) - share(me));
      if (n > max_leaves_) detail::leaf_budget_exceeded(max_leaves_);
      leaves_.starts_.reserve(n);
      data_.reserve(n);
      for (index_type k = share(me); k < share(me + 1); ++k) {
        leaves_.push_back(k * detail::span_at<C>(level), level, 1);
        data_.push_back(init(C::cell(k, level)));
      }
    });
    // The leaves lie on an even split of the curve now; the partitioner maps them for good.
    map_ = initial_map();
    loads_.new_window(leaves_.size());
    repartition(nullptr);
  }

  /// Given leaves: each rank passes any share of them (cells and data, any order, any
  /// distribution); together they must tile the domain. They are sorted along the curve (no
  /// rank gathers them) and then mapped by the partitioner. Throws irregular::collective_error
  /// on every rank when the cells overlap, leave gaps, or a level exceeds max_level, or when
  /// cells and data differ in number on any rank. Collective over comm (duplicates it).
  CellDomain(const boost::mpi::communicator& comm, Box<dim> box, std::span<const Cell<dim>> cells,
             std::vector<Data> data, options_type options = {})
      : Core(comm, box, std::move(options)) {
    std::vector<Keyed> keyed;
    std::vector<index_type> keys;
    mpi::agree(comm_.get(), [&] {
      box.validate();
      options_.partitioner.template check<C>(comm_.size());
      check_hold_level();
      if (cells.size() != data.size())
        throw invalid_argument("irregular::CellDomain: " + std::to_string(cells.size()) + " cells and " +
                               std::to_string(data.size()) + " data on rank " + std::to_string(comm_.rank()));
      for (std::size_t i = 0; i < cells.size(); ++i) {
        keys.push_back(curve::checked_index<C>(cells[i]) * detail::span_at<C>(cells[i].level));
        keyed.push_back(Keyed{keys.back(), static_cast<std::uint8_t>(cells[i].level), std::move(data[i])});
      }
    });
    max_leaves_ = options_.max_leaves_per_rank ? options_.max_leaves_per_rank : default_leaf_budget(comm_.get());
    (void)sample_sort(comm_.get(), keyed, keys, detail::index_end<C>(), [](const Keyed& k) { return k.start; },
                      tag_migrate);
    // Tiling: each run is contiguous, and the runs join end to start from 0 to the domain end.
    std::array<detail::IndexWire, 2> ends{detail::IndexWire::from(keyed.empty() ? index_type{0} : keyed.front().start),
                                          detail::IndexWire::from(keyed.empty() ? index_type{0} : end_of(keyed.back()))};
    std::vector<std::array<detail::IndexWire, 2>> all;
    std::vector<int> sizes;
    boost::mpi::all_gather(comm_.get(), ends, all);
    boost::mpi::all_gather(comm_.get(), static_cast<int>(!keyed.empty()), sizes);
    mpi::agree(comm_.get(), [&] {
      const auto gap = [&](const std::string& what) {
        throw invalid_argument("irregular::CellDomain: the given leaves do not tile the domain: " + what);
      };
      for (std::size_t i = 1; i < keyed.size(); ++i)
        if (end_of(keyed[i - 1]) != keyed[i].start)
          gap(end_of(keyed[i - 1]) < keyed[i].start ? "a gap between two leaves" : "two leaves overlap");
      if (comm_.rank() == 0) {
        index_type at = 0;
        for (std::size_t r = 0; r < all.size(); ++r) {
          if (!sizes[r]) continue;
          if (all[r][0].template as<index_type>() != at) gap("a gap or overlap between ranks' runs");
          at = all[r][1].template as<index_type>();
        }
        if (at != detail::index_end<C>()) gap("the leaves do not reach the end of the domain");
      }
      if (keyed.size() > max_leaves_) detail::leaf_budget_exceeded(max_leaves_);
    });
    for (auto& k : keyed) {
      leaves_.push_back(k.start, k.level, 1);
      data_.push_back(std::move(k.data));
    }
    map_ = initial_map();
    loads_.new_window(leaves_.size());
    repartition(nullptr);
  }

  // ---- queries (local) -----------------------------------------------------------------------
  [[nodiscard]] const boost::mpi::communicator& comm() const noexcept { return comm_.get(); }
  [[nodiscard]] const Box<dim>& box() const noexcept { return box_; }
  [[nodiscard]] const options_type& options() const noexcept { return options_; }
  [[nodiscard]] const map_type& ownership() const noexcept { return map_; }
  [[nodiscard]] const LocalLeaves<C>& local_tree() const noexcept { return leaves_; }
  [[nodiscard]] std::size_t local_leaf_count() const noexcept { return leaves_.size(); }
  [[nodiscard]] Cell<dim> cell(std::size_t i) const { return leaves_.cell(i); }
  [[nodiscard]] int level(std::size_t i) const { return leaves_.levels()[i]; }
  [[nodiscard]] Data& data(std::size_t i) { return data_[i]; }
  [[nodiscard]] const Data& data(std::size_t i) const { return data_[i]; }
  [[nodiscard]] std::span<Data> local_data() noexcept { return data_; }
  [[nodiscard]] std::span<const Data> local_data() const noexcept { return data_; }
  [[nodiscard]] std::span<const double> local_loads() const noexcept { return loads_.values(); }
  /// The centre of leaf i in box coordinates.
  [[nodiscard]] std::array<double, dim> centre(std::size_t i) const {
    const auto c = cell(i);
    const double n = static_cast<double>(detail::axis_cells<C>(c.level));
    std::array<double, dim> x{};
    for (int d = 0; d < dim; ++d)
      x[d] = box_.lo[d] + (static_cast<double>(c.anchor[d]) + 0.5) / n * (box_.hi[d] - box_.lo[d]);
    return x;
  }
  /// What the last remap moved, summed over all ranks.
  [[nodiscard]] const mpi::MigrationCounters& last_migration() const noexcept { return migration_global_; }
  /// Number of leaves over all ranks. Collective over comm.
  [[nodiscard]] std::uint64_t global_leaf_count() const {
    std::uint64_t n = leaves_.size(), total = 0;
    boost::mpi::all_reduce(comm_.get(), n, total, std::plus<std::uint64_t>());
    return total;
  }

  // ---- adaptation ----------------------------------------------------------------------------

  /// Marks local leaf i for the next adapt(). A leaf id out of range is reported by adapt().
  void mark(std::size_t i, Mark m) {
    if (i >= leaves_.size()) {
      bad_mark("leaf " + std::to_string(i) + " does not exist (the rank holds " + std::to_string(leaves_.size()) +
               " leaves)");
      return;
    }
    marks_.resize(leaves_.size(), Mark::keep);
    marks_[i] = m;
  }
  /// Marks the local leaf with this cell; a cell that is no local leaf is reported by adapt().
  void mark(const Cell<dim>& c, Mark m) {
    const auto i = leaves_.find(curve::finest_index<C>(c));
    if (i == leaves_.size() || leaves_.levels()[i] != c.level) {
      bad_mark("the cell at level " + std::to_string(c.level) + " is not a leaf held by this rank");
      return;
    }
    mark(i, m);
  }

  /// Applies the marks, then clears them: a leaf marked refine splits into its children with
  /// data split(const Data& parent, const Cell& child); a complete family of leaves all marked
  /// coarsen merges into the parent with data merge(std::span<const Data> children) (curve
  /// order). Families that straddle ranks are first gathered on one rank. Throws
  /// irregular::collective_error on every rank, with the domain unchanged, for a mark on a cell
  /// that is no leaf, a refine at max_level, a coarsen mark on a leaf whose siblings are not all
  /// leaves (an incomplete family), a split or merge that throws, or a leaf budget exceeded.
  /// Collective over comm.
  template <class Split, class Merge>
  AdaptStats adapt(Split&& split, Merge&& merge) {
    try {
      return adapt_marked(split, merge);
    } catch (const collective_error&) {
      marks_.clear();  // a rejected adapt consumes its marks too
      throw;
    }
  }

 private:
  template <class Split, class Merge>
  AdaptStats adapt_marked(Split& split, Merge& merge) {
    marks_.resize(leaves_.size(), Mark::keep);
    auto pending = std::move(mark_error_);
    mark_error_.reset();
    mpi::agree_on(comm_.get(), pending ? std::optional<std::string>("irregular::CellDomain::adapt: " + *pending +
                                                                      " (rank " + std::to_string(comm_.rank()) + ")")
                                       : std::nullopt);
    hold_families();
    AdaptStats stats;
    decltype(leaves_.starts_) starts;  // become the leaves' arrays
    decltype(leaves_.levels_) levels;
    decltype(data_) data;
    mpi::agree(comm_.get(), [&] {
      constexpr int kids = detail::children_of<C>;
      {  // the exact count of new leaves when nothing coarsens: one allocation, no regrowth
        // (capped by the leaf budget, which the count after coarsening is checked against)
        const auto refined = static_cast<std::size_t>(std::count(marks_.begin(), marks_.end(), Mark::refine));
        const std::size_t n = std::min(leaves_.size() + refined * (kids - 1), max_leaves_ + 1);
        starts.reserve(n);
        levels.reserve(n);
        data.reserve(n);
      }
      const auto& s = leaves_.starts();
      const auto& l = leaves_.levels();
      for (std::size_t i = 0; i < leaves_.size();) {
        const int lv = l[i];
        if (marks_[i] == Mark::refine) {
          if (lv >= C::max_level)
            throw invalid_argument("irregular::CellDomain::adapt: leaf " + std::to_string(i) + " on rank " +
                                   std::to_string(comm_.rank()) + " is at max_level " + std::to_string(C::max_level) +
                                   " and cannot refine");
          for (int k = 0; k < kids; ++k) {
            const index_type cs = s[i] + static_cast<index_type>(k) * detail::span_at<C>(lv + 1);
            starts.push_back(cs);
            levels.push_back(static_cast<std::uint8_t>(lv + 1));
            data.push_back(split(std::as_const(data_[i]), detail::cell_at<C>(cs, lv + 1)));
          }
          ++stats.refined;
          ++i;
          continue;
        }
        if (marks_[i] == Mark::coarsen) {
          if (lv == 0 || !in_family(i))
            throw invalid_argument("irregular::CellDomain::adapt: leaf " + std::to_string(i) + " (level " +
                                   std::to_string(lv) + ", anchor " + anchor_text(leaves_.cell(i)) + ") on rank " +
                                   std::to_string(comm_.rank()) +
                                   " is marked coarsen but its siblings are not all leaves (an incomplete family)");
          const bool all = family_at(i) && std::all_of(marks_.begin() + static_cast<std::ptrdiff_t>(i),
                                       marks_.begin() + static_cast<std::ptrdiff_t>(i + kids),
                                       [](Mark m) { return m == Mark::coarsen; });
          if (all) {
            starts.push_back(s[i] - s[i] % detail::span_at<C>(lv - 1));
            levels.push_back(static_cast<std::uint8_t>(lv - 1));
            data.push_back(merge(std::span<const Data>(data_).subspan(i, kids)));
            ++stats.coarsened;
            i += kids;
            continue;
          }
        }
        starts.push_back(s[i]);
        levels.push_back(static_cast<std::uint8_t>(lv));
        data.push_back(data_[i]);
        ++i;
      }
      if (starts.size() > max_leaves_) detail::leaf_budget_exceeded(max_leaves_);
    });
    marks_.clear();
    replace_leaves(std::move(starts), std::move(levels), std::move(data));
    return stats;
  }

 public:

  /// Refines to the coarsest 2:1 balanced tree (`BalanceKind::face`: leaves sharing a face
  /// differ by at most one level; `full`: sharing any point), periodic axes included; new leaves
  /// get data split(parent data, child cell), repeated down the levels. Equal to the sequential
  /// CellTree::balance of the same tree at every rank count (distributed/cell_balance.hpp).
  /// Returns the number of local leaves split; a balance that splits leaves clears the marks.
  /// Throws irregular::collective_error on every rank, the domain unchanged, when split throws or
  /// the leaf budget is exceeded anywhere. Collective over comm.
  template <class Split>
  std::size_t balance(BalanceKind kind, Split&& split) {
    auto b = balance_distributed<C>(comm_.get(), map_, leaves_.starts(), leaves_.levels(), kind, options_.periodic,
                                    tag_balance);
    auto made = mpi::agree(comm_.get(), [&] {
      if (b.starts.size() > max_leaves_) detail::leaf_budget_exceeded(max_leaves_);
      return detail_balance::split_data<C>(leaves_.starts(), leaves_.levels(), std::span<const Data>(data_), b, split);
    });
    std::uint64_t here = made.split_count, any = 0;
    boost::mpi::all_reduce(comm_.get(), here, any, boost::mpi::maximum<std::uint64_t>());
    if (any == 0) return 0;
    auto data = detail_balance::assemble_data<C>(leaves_.starts(), leaves_.levels(), data_, b, made.fresh);
    replace_leaves(std::move(b.starts), std::move(b.levels), std::move(data));
    return made.split_count;
  }

  // ---- partition -----------------------------------------------------------------------------

  /// Every rank's load, the average and the unbalance. Collective over comm.
  [[nodiscard]] LoadReport load_report() {
    loads_.agree_unit(comm_.get(), leaves_);
    return gather_load_report(comm_.get(), loads_.total());  // summed in leaf order by LeafLoads
  }

  /// Remaps when max_unbalance exceeds `opt.threshold` (as IrregularDomain::rebalance): the
  /// partitioner maps the leaves anew and leaves and data move. Returns whether it remapped.
  /// A threshold that is bad or differs on any rank fails every rank. Collective over comm.
  bool rebalance(RebalanceOptions opt = {}) {
    agree_threshold(comm_.get(), opt.threshold, "irregular::CellDomain::rebalance");
    if (load_report().max_unbalance <= opt.threshold) return false;
    const map_type current = map_;
    repartition(&current);
    return true;
  }

  // ---- ghosts --------------------------------------------------------------------------------

  /// Collects read-only copies of the remote leaves (and their data) that local leaves read
  /// under `Reads`, as IrregularDomain::collect_ghosts. Collective over comm.
  template <Stencil Reads = S, GhostStrategy G = ghost::InformedFaultPrevention>
  const GhostStats& collect_ghosts(GhostOptions opt = {}, G strategy = {}) {
    static_assert(Reads::dim == dim, "irregular::CellDomain::collect_ghosts: the stencil's dimension differs from the domain's");
    return ghosts_.template collect<Reads>(tree("irregular::CellDomain::collect_ghosts"), opt, strategy, payload());
  }
  /// Refreshes the ghost data from their owners. Collective over comm.
  GhostPhase exchange_ghosts() { return ghosts_.exchange(tree("irregular::CellDomain::exchange_ghosts"), payload()); }
  /// Combines each ghost's datum into its owner's with op(Data& mine, const Data& contribution)
  /// (by default mine += contribution). Collective over comm.
  template <class Op = std::nullptr_t>
  GhostPhase accumulate_ghosts(Op op = nullptr) {
    auto apply = [&](Data& mine, const Data& c) {
      if constexpr (std::is_same_v<Op, std::nullptr_t>) mine += c;
      else op(mine, c);
    };
    return ghosts_.accumulate(tree("irregular::CellDomain::accumulate_ghosts"), std::span<Data>(data_),
                              std::span<const std::size_t>(identity_offsets()), apply);
  }
  [[nodiscard]] const GhostLayer<C>& ghosts() const noexcept { return ghosts_.layer(); }
  [[nodiscard]] const Data& ghost_data(std::size_t g) const { return ghosts_.of(g).front(); }
  [[nodiscard]] Data& ghost_data(std::size_t g) { return ghosts_.of(g).front(); }
  [[nodiscard]] bool ghosts_current() const noexcept { return ghosts_.current(generation_); }

  /// Local and ghost leaves that leaf i reads under S and in `contact` (local, no communication).
  void neighbours(std::size_t i, LeafNeighbours& out, Contact contact = Contact::stencil) const {
    ghosts_.template neighbours<S>(leaves_, leaves_.cell(i), options_.periodic, contact, out);
  }

  /// The leaves touching leaf i (local ones and ghosts of the last collection), each with the
  /// dimension of the shared boundary and the direction it lies in, in curve order: what a
  /// finite-volume or multigrid stencil iterates over (face neighbours have dimension dim-1 and
  /// one non-zero direction). Local, no communication.
  void adjacent(std::size_t i, std::vector<Adjacent<dim>>& out, Contact contact = Contact::corner) const {
    out.clear();
    const auto c = leaves_.cell(i);
    const auto& g = ghosts_.layer();
    std::vector<std::size_t> ids;
    auto add = [&](std::span<const index_type> st, std::span<const std::uint8_t> lv, bool ghost) {
      detail_ghost::read_by<C, stencil::Moore<dim>>(st, lv, c, options_.periodic, contact, LevelRange::all(), ids);
      for (std::size_t j : ids) {
        const auto other = detail::cell_at<C>(st[j], lv[j]);
        out.push_back({j, ghost, lv[j], contact_dimension<C>(c, other, options_.periodic),
                        contact_direction<C>(c, other)});
      }
    };
    add(leaves_.starts(), leaves_.levels(), false);
    if (g.size() > 0) add(g.starts(), g.levels(), true);
    std::sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
      const auto sa = a.ghost ? g.starts()[a.id] : leaves_.starts()[a.id];
      const auto sb = b.ghost ? g.starts()[b.id] : leaves_.starts()[b.id];
      return sa < sb;
    });
  }

};

}  // namespace irregular
