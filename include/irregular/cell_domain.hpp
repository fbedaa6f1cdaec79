// CellDomain: a distributed linear H-Tree whose leaves carry one user datum each — the grids of
// adaptive multigrid, finite volumes and cellular automata (baiardi-2001 §5). A thin front over
// the domain core (distributed/domain/core.hpp) with the cell store: the same options, remap
// pipeline, rebalance decision, transaction and ghost layer as IrregularDomain; its own verbs
// are mark, adapt and balance.
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/advisor/dry_run.hpp>
#include <irregular/distributed/domain/cell_adapt.hpp>
#include <irregular/distributed/domain/cell_store.hpp>
#include <irregular/distributed/domain/checkpoint.hpp>
#include <irregular/distributed/domain/core.hpp>
#include <irregular/distributed/domain/options.hpp>
#include <irregular/distributed/ghost/store.hpp>
#include <irregular/distributed/ghost/strategies.hpp>
#include <irregular/distributed/htree/balance.hpp>
#include <irregular/distributed/htree/leaf_loads.hpp>
#include <irregular/distributed/htree/load_metric.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/htree/sample_sort.hpp>
#include <irregular/distributed/partitioners/partitioner.hpp>
#include <irregular/distributed/partitioners/registry.hpp>
#include <irregular/distributed/partitioners/sfc_blocking.hpp>
#include <irregular/distributed/remap/rebalance_decision.hpp>
#include <irregular/distributed/remap/remap_plan.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/communicator.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/detail/index_wire.hpp>
#include <irregular/tree/balance.hpp>
#include <irregular/tree/cell_tree.hpp>
#include <irregular/tree/contact.hpp>
#include <irregular/tree/detail/adapt.hpp>
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

/// A leaf met by CellDomain::adjacent(): which leaf, and where it touches.
template <int D>
struct Adjacent {
  std::size_t id;  ///< local leaf id, or ghost id when `ghost`
  bool ghost;      ///< the leaf is a ghost (a copy of a remote leaf), not a local one
  int level;       ///< its level in the H-Tree
  int dimension;   ///< of the shared boundary: D-1 for a face, 0 for a corner
  std::array<int, D>
      direction;  ///< per axis: -1 (the neighbour lies below), +1 (above), 0 (overlap)
};

/// One distributed grid: leaves of curve C, each with a Data; mapped by Partitioner P; read by
/// stencil S (ghosts, neighbours).
template <class Data, Stencil S, SpaceFillingCurve C, class Metric = load::Constant,
          class P = partitioner::SfcBlocking>
requires LoadMetric<Metric, C::dim> &&(S::dim == C::dim) &&
    Partitioner<P, C>&& std::default_initializable<Data> class CellDomain {
  using Core = detail::DomainCore<CellStore<Data, C>, C, Metric, P>;
  using Keyed = typename CellStore<Data, C>::Keyed;
  static_assert(!detail::PerElementMetric<Metric>,
                "irregular::CellDomain: leaves hold data, not elements; use load::Constant, "
                "weighted or Measured");

 public:
  static constexpr int dim = C::dim;          ///< dimension of the box and of the cells
  using data_type = Data;                     ///< the datum each leaf carries
  using curve_type = C;                       ///< the space-filling curve that orders the leaves
  using stencil_type = S;                     ///< the cells a leaf reads (neighbours, ghosts)
  using index_type = typename C::index_type;  ///< the curve's index (finest-level keys)
  using map_type = typename P::template map_type<C>;   ///< the ownership map P produces
  using options_type = DomainOptions<dim, Metric, P>;  ///< periodicity, metric, partitioner...

  /// A uniform grid at `level`: each rank creates only its share (an even split of the cells
  /// in curve order) with data init(cell), then the partitioner maps it. Throws
  /// irregular::collective_error on every rank for a bad box or level, a leaf budget exceeded,
  /// or an init that throws anywhere. Collective over comm (duplicates it).
  template <class Init>
  requires std::invocable < Init&, const Cell<C::dim>
  & > CellDomain(const boost::mpi::communicator& comm, Box<dim> box, int level, Init init,
                 options_type options = {})
      : core_(comm, box, std::move(options), [&] {
          if (level < 0 || level > C::max_level)
            throw invalid_argument("irregular::CellDomain: level " + std::to_string(level) +
                                   " outside [0, max_level = " + std::to_string(C::max_level) +
                                   "]");
        }) {
    const int p = core_.comm_.size(), me = core_.comm_.rank();
    const index_type cells = detail::index_end<C>() / detail::span_at<C>(level);
    const auto share = [&](int r) {  // first cell of rank r: r * cells / p without overflow
      return static_cast<index_type>(cells / static_cast<index_type>(p) *
                                         static_cast<index_type>(r) +
                                     cells % static_cast<index_type>(p) *
                                         static_cast<index_type>(r) / static_cast<index_type>(p));
    };
    std::vector<index_type> splitters(static_cast<std::size_t>(p) + 1);
    for (int r = 0; r <= p; ++r)
      splitters[static_cast<std::size_t>(r)] = share(r) * detail::span_at<C>(level);
    mpi::agree(core_.comm_.get(), [&] {
      const auto n = static_cast<std::size_t>(share(me + 1) - share(me));
      if (n > core_.max_leaves_) detail::leaf_budget_exceeded(core_.max_leaves_);
      core_.leaves_.reserve(n);
      core_.store_.data.reserve(n);
      for (index_type k = share(me); k < share(me + 1); ++k) {
        core_.leaves_.push_back(k * detail::span_at<C>(level), level, 1);
        core_.store_.data.push_back(init(C::cell(k, level)));
      }
    });
    // The leaves lie on an even split of the curve now; the partitioner maps them for good.
    partition_first();
  }

  /// Given leaves: each rank passes any share of them (cells and data, any order, any
  /// distribution); together they must tile the domain. They are sorted along the curve (no
  /// rank gathers them) and then mapped by the partitioner. Throws irregular::collective_error
  /// on every rank when the cells overlap, leave gaps, or a level exceeds max_level, or when
  /// cells and data differ in number on any rank. Collective over comm (duplicates it).
  CellDomain(const boost::mpi::communicator& comm, Box<dim> box, std::span<const Cell<dim>> cells,
             std::vector<Data> data, options_type options = {})
      : core_(comm, box, std::move(options), [] {}) {
    std::vector<Keyed> keyed;
    std::vector<index_type> keys;
    mpi::agree(core_.comm_.get(), [&] {
      if (cells.size() != data.size())
        throw invalid_argument("irregular::CellDomain: " + std::to_string(cells.size()) +
                               " cells and " + std::to_string(data.size()) + " data on rank " +
                               std::to_string(core_.comm_.rank()));
      for (std::size_t i = 0; i < cells.size(); ++i) {
        keys.push_back(curve::checked_index<C>(cells[i]) * detail::span_at<C>(cells[i].level));
        keyed.push_back(
            Keyed{keys.back(), static_cast<std::uint8_t>(cells[i].level), std::move(data[i])});
      }
    });
    (void)sample_sort(
        core_.comm_.get(), keyed, keys, detail::index_end<C>(),
        [](const Keyed& k) { return k.start; }, Core::tag_migrate);
    // Tiling: each run is contiguous, and the runs join end to start from 0 to the domain end.
    std::array<detail::IndexWire, 2> ends{
        detail::IndexWire::from(keyed.empty() ? index_type{0} : keyed.front().start),
        detail::IndexWire::from(keyed.empty() ? index_type{0} : end_of(keyed.back()))};
    std::vector<std::array<detail::IndexWire, 2>> all;
    std::vector<int> sizes;
    boost::mpi::all_gather(core_.comm_.get(), ends, all);
    boost::mpi::all_gather(core_.comm_.get(), static_cast<int>(!keyed.empty()), sizes);
    mpi::agree(core_.comm_.get(), [&] {
      const auto gap = [&](const std::string& what) {
        throw invalid_argument("irregular::CellDomain: the given leaves do not tile the domain: " +
                               what);
      };
      for (std::size_t i = 1; i < keyed.size(); ++i)
        if (end_of(keyed[i - 1]) != keyed[i].start)
          gap(end_of(keyed[i - 1]) < keyed[i].start ? "a gap between two leaves"
                                                    : "two leaves overlap");
      if (core_.comm_.rank() == 0) {
        index_type at = 0;
        for (std::size_t r = 0; r < all.size(); ++r) {
          if (!sizes[r]) continue;
          if (all[r][0].template as<index_type>() != at)
            gap("a gap or overlap between ranks' runs");
          at = all[r][1].template as<index_type>();
        }
        if (at != detail::index_end<C>()) gap("the leaves do not reach the end of the domain");
      }
      if (keyed.size() > core_.max_leaves_) detail::leaf_budget_exceeded(core_.max_leaves_);
    });
    for (auto& k : keyed) {
      core_.leaves_.push_back(k.start, k.level, 1);
      core_.store_.data.push_back(std::move(k.data));
    }
    partition_first();
  }

  // ---- checkpoint and restart ----------------------------------------------------------------

  /// Saves the leaves, their data in curve order and (load::Measured) their loads to one file
  /// at `path`, written by all ranks through MPI-IO; its bytes do not depend on the number of
  /// ranks (doc/guide/checkpoints.md). Written under a temporary name and renamed, so a crash
  /// leaves the previous file at `path` intact. Throws irregular::checkpoint_error on every rank
  /// when the directory is not writable or a write fails; the grid is unchanged. Collective.
  void save(const std::string& path, const SaveOptions& opt = {}) {
    detail::save_core(core_, path, checkpoint::Kind::cells, opt);
  }

  /// Loads a grid saved by save() on any number of ranks: each rank reads an even share of the
  /// leaves and their data, and the partitioner in `options` maps them by their loads. The
  /// curve, dimension, data format and size, `opt.type_tag`, periodicity and hold level must
  /// match the file's; the box is the file's. Every rank throws the same
  /// irregular::checkpoint_error, naming the section, block and byte offset, for a missing,
  /// truncated, corrupt or mismatched file. Collective over comm.
  static CellDomain load(const boost::mpi::communicator& comm, const std::string& path,
                         options_type options = {}, const LoadOptions& opt = {}) {
    auto in = detail::open_checkpoint<C, Data, dim>(
        comm, path, checkpoint::Kind::cells, opt.type_tag, options.periodic, options.hold_level);
    return CellDomain(LoadTag{}, comm, in, std::move(options), opt);
  }

  // ---- queries (local) -----------------------------------------------------------------------
  /// The grid's own communicator: a duplicate of the one given, renumbered when a rebalance
  /// picks a new chain order (rank k then holds chain part k).
  [[nodiscard]] const boost::mpi::communicator& comm() const noexcept { return core_.comm_.get(); }
  /// The box the leaves tile.
  [[nodiscard]] const Box<dim>& box() const noexcept { return core_.store_.box(); }
  /// The options the grid was made with.
  [[nodiscard]] const options_type& options() const noexcept { return core_.options_; }
  /// The ownership map in force: who holds the data of every index and leaf (replicated).
  [[nodiscard]] const map_type& ownership() const noexcept { return core_.map_; }
  /// This rank's leaves (the leaves of its private H-Trees) in curve order: starts and levels.
  [[nodiscard]] const LocalLeaves<C>& local_tree() const noexcept { return core_.leaves_; }
  /// Number of leaves this rank holds.
  [[nodiscard]] std::size_t local_leaf_count() const noexcept { return core_.leaves_.size(); }
  /// The cell of local leaf i.
  [[nodiscard]] Cell<dim> cell(std::size_t i) const { return core_.leaves_.cell(i); }
  /// The level of local leaf i.
  [[nodiscard]] int level(std::size_t i) const { return core_.leaves_.levels()[i]; }
  /// The datum of local leaf i.
  [[nodiscard]] Data& data(std::size_t i) { return core_.store_.data[i]; }
  /// The datum of local leaf i (read-only).
  [[nodiscard]] const Data& data(std::size_t i) const { return core_.store_.data[i]; }
  /// One datum per local leaf, in leaf (curve) order.
  [[nodiscard]] std::span<Data> local_data() noexcept { return core_.store_.data; }
  /// One datum per local leaf, in leaf (curve) order (read-only).
  [[nodiscard]] std::span<const Data> local_data() const noexcept { return core_.store_.data; }
  /// One load per local leaf, in leaf order: the metric's estimates, or the seconds timed under
  /// load::Measured.
  [[nodiscard]] std::span<const double> local_loads() const noexcept {
    return core_.loads_.values();
  }
  /// The upward pass: as IrregularDomain::reduce_up, with `leaf_value(cell, data)`. Collective.
  template <class LeafValue, class Combine>
  [[nodiscard]] auto reduce_up(LeafValue&& leaf_value, Combine&& combine) const {
    return core_.reduce_up([&](std::size_t i) { return leaf_value(cell(i), data(i)); }, combine);
  }
  /// Remote hnodes by a traversal predicate: as IrregularDomain::walk_hnodes, a leaf's one
  /// datum as its elements. Collective over comm.
  template <class V, class Open, class Accept, class Strategy = hnodes::Kept>
  HnodeStats walk_hnodes(HnodeValues<C, V>& values, Open&& open, Accept&& accept,
                         Strategy&& strategy = {}) const {
    return core_.template walk_hnodes<Data>(
        values, open, accept, strategy,
        [&](std::size_t i) { return std::span<const Data>(&data(i), 1); },
        "irregular::CellDomain::walk_hnodes");
  }
  /// The centre of leaf i in box coordinates.
  [[nodiscard]] std::array<double, dim> centre(std::size_t i) const {
    const auto c = cell(i);
    const double n = static_cast<double>(detail::axis_cells<C>(c.level));
    std::array<double, dim> x{};
    for (int d = 0; d < dim; ++d)
      x[d] = core_.store_.box().lo[d] + (static_cast<double>(c.anchor[d]) + 0.5) / n *
                                            (core_.store_.box().hi[d] - core_.store_.box().lo[d]);
    return x;
  }
  /// What the last remap moved, summed over all ranks.
  [[nodiscard]] const mpi::MigrationCounters& last_migration() const noexcept {
    return core_.migration_global_;
  }
  /// Number of leaves over all ranks. Collective over comm.
  [[nodiscard]] std::uint64_t global_leaf_count() const {
    std::uint64_t n = core_.leaves_.size(), total = 0;
    boost::mpi::all_reduce(core_.comm_.get(), n, total, std::plus<std::uint64_t>());
    return total;
  }

  // ---- adaptation ----------------------------------------------------------------------------

  /// Marks local leaf i for the next adapt(). A leaf id out of range is reported by adapt().
  void mark(std::size_t i, Mark m) {
    if (i >= core_.leaves_.size()) {
      bad_mark("leaf " + std::to_string(i) + " does not exist (the rank holds " +
               std::to_string(core_.leaves_.size()) + " leaves)");
      return;
    }
    marks_.resize(core_.leaves_.size(), Mark::keep);
    marks_[i] = m;
  }
  /// Marks the local leaf with this cell; a cell that is no local leaf is reported by adapt().
  void mark(const Cell<dim>& c, Mark m) {
    const auto i = core_.leaves_.find(curve::finest_index<C>(c));
    if (i == core_.leaves_.size() || core_.leaves_.levels()[i] != c.level) {
      bad_mark("the cell at level " + std::to_string(c.level) + " is not a leaf held by this rank");
      return;
    }
    mark(i, m);
  }

  /// Applies the marks, then clears them: a leaf marked refine splits into its children with
  /// data split(const Data& parent, const Cell& child); a complete family of leaves all marked
  /// coarsen merges into the parent with data merge(std::span<const Data> children) (curve
  /// order). Coarsen marks on incomplete families (a sibling refined further, or not marked) are
  /// ignored, as CellTree::adapt does (tree/detail/adapt.hpp). A family that straddles ranks
  /// merges when the map can gather it on one rank (segment maps can, grid maps cannot: its marks
  /// are then ignored); else only the children of a refined leaf a grid map holds whole move, to
  /// their own ranks (doc/guide/cell-data.md). Throws irregular::collective_error on every rank,
  /// with the domain unchanged, for a mark on a cell that is no leaf, a refine at max_level, a
  /// split, merge, load metric or datum's serialization that throws, or a leaf budget exceeded.
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

  /// Refines to the coarsest 2:1 balanced tree (`BalanceKind::face`: leaves sharing a face
  /// differ by at most one level; `full`: sharing any point), periodic axes included; new leaves
  /// get data split(parent data, child cell), repeated down the levels. Equal to the sequential
  /// CellTree::balance of the same tree at every rank count (distributed/htree/balance.hpp).
  /// Returns the number of local leaves split; a balance that splits leaves clears the marks.
  /// Children of a leaf a grid map holds whole go to their own ranks, as after adapt. Throws
  /// irregular::collective_error on every rank, the domain unchanged, when split, the metric or
  /// a datum's serialization throws or the leaf budget is exceeded anywhere. Collective over comm.
  template <class Split>
  std::size_t balance(BalanceKind kind, Split&& split) {
    auto b = balance_distributed<C>(core_.comm_.get(), core_.map_, core_.leaves_.starts(),
                                    core_.leaves_.levels(), kind, core_.options_.periodic,
                                    Core::tag_balance);
    std::optional<Prepared> next;
    auto made = mpi::agree(core_.comm_.get(), [&] {
      if (b.starts.size() > core_.max_leaves_) detail::leaf_budget_exceeded(core_.max_leaves_);
      auto m = detail::split_data<C>(core_.leaves_.starts(), core_.leaves_.levels(),
                                     std::span<const Data>(core_.store_.data), b, split);
      if (m.split_count) next = prepare(b.starts, b.levels);
      return m;
    });
    std::uint64_t here = made.split_count, any = 0;
    boost::mpi::all_reduce(core_.comm_.get(), here, any, boost::mpi::maximum<std::uint64_t>());
    if (any == 0) return 0;
    // Nothing split here but elsewhere: the metric of the same leaves, agreed like the rest.
    mpi::agree(core_.comm_.get(), [&] {
      if (!next) next = prepare(b.starts, b.levels);
    });
    const int change = detail::tree_change(core_, next->leaves);
    std::optional<std::pair<typename Core::Saved, std::vector<Mark>>> saved;
    if (detail::placing_can_fail<Core>(change)) saved.emplace(core_.snapshot(), marks_);
    auto data = detail::assemble_data<C>(core_.leaves_.starts(), core_.leaves_.levels(),
                                         core_.store_.data, b, made.fresh);
    commit(std::move(*next), std::move(data));
    try {
      detail::place_changed(core_, change, false);
    } catch (const collective_error&) {
      if (!saved) throw;
      core_.restore(std::move(saved->first));
      marks_ = std::move(saved->second);
      throw;
    }
    return made.split_count;
  }

  // ---- partition -----------------------------------------------------------------------------

  /// Every rank's load, the average and the unbalance. Collective over comm.
  [[nodiscard]] LoadReport load_report() { return core_.load_report(); }

  /// Remaps when the load is unbalanced beyond opt.threshold, exactly as
  /// IrregularDomain::rebalance: every RebalanceOptions field (strategy, capacities given or
  /// measured, horizon, chain order and arrangement) is honoured, and the decision record says
  /// what happened (true when it remapped). Bad options on any rank, or a load metric or a
  /// datum's serialization that throws on any rank, throw irregular::collective_error on every
  /// rank with the domain unchanged. Collective over comm.
  RebalanceDecision rebalance(RebalanceOptions opt = {}) {
    return core_.rebalance(std::move(opt), "irregular::CellDomain::rebalance");
  }

  /// The partitioner advisor (doc/guide/advisor.md): each candidate partitioner, by registry name
  /// (partitioner::ByName), maps the live leaves and loads, and its map is measured: balance,
  /// neighbour parts and ghosts under the stencil (exact: what applying it and collecting would
  /// give), the remap from the map in force (what the migration counters would report), the time
  /// to compute it, and the step time `opt.model` predicts. Moves no datum; the domain does not
  /// change. Every rank passes the same names and options; an unknown name, bad options or a
  /// failure on any rank make every rank throw the same irregular::collective_error. Collective.
  advisor::PartitionerComparison<C> compare_partitioners(const std::vector<std::string>& names,
                                                         const advisor::AdvisorOptions& opt = {}) {
    return core_.template compare_partitioners<S>(names, opt,
                                                  "irregular::CellDomain::compare_partitioners");
  }
  /// Moves the leaves and their data to `map` (one of a comparison's maps), as a remapping
  /// rebalance would: last_migration() then reports what moved. A map of another kind than this
  /// domain's partitioner makes (unless it is partitioner::ByName or Auto), or for another number
  /// of ranks, is refused on every rank with the same irregular::collective_error. Collective.
  void apply_map(const AnyOwnershipMap<C>& map) {
    core_.apply_map(map, "irregular::CellDomain::apply_map");
  }

  /// Times the work on a local leaf (load::Measured): the seconds join the leaf's load, as
  /// IrregularDomain::time_leaf.
  [[nodiscard]] ScopedTimer time_leaf(std::size_t i) { return core_.time_leaf(i); }
  /// Starts a new measurement window (load::Measured). Local.
  void reset_measurements() { core_.reset_measurements(); }

  // ---- ghosts --------------------------------------------------------------------------------

  /// Collects read-only copies of the remote leaves (and their data) that local leaves read
  /// under `Reads`, as IrregularDomain::collect_ghosts. Collective over comm.
  template <Stencil Reads = S, GhostStrategy G = ghost::InformedFaultPrevention>
  const GhostStats& collect_ghosts(GhostOptions opt = {}, G strategy = {}) {
    static_assert(
        Reads::dim == dim,
        "irregular::CellDomain::collect_ghosts: the stencil's dimension differs from the domain's");
    return core_.with_held_tree(
        "irregular::CellDomain::collect_ghosts", [&](const auto& tree) -> const GhostStats& {
          return core_.ghosts_.template collect<Reads>(tree, opt, strategy, core_.payload());
        });
  }
  /// Refreshes the ghost data from their owners. Collective over comm.
  GhostPhase exchange_ghosts() {
    return core_.ghosts_.exchange(core_.tree("irregular::CellDomain::exchange_ghosts"),
                                  core_.payload());
  }
  /// Combines each ghost's datum into its owner's with op(Data& mine, const Data& contribution)
  /// (by default mine += contribution). Collective over comm.
  template <class Op = std::nullptr_t>
  GhostPhase accumulate_ghosts(Op op = nullptr) {
    auto apply = [&](Data& mine, const Data& c) {
      if constexpr (std::is_same_v<Op, std::nullptr_t>)
        mine += c;
      else
        op(mine, c);
    };
    return core_.ghosts_.accumulate(core_.tree("irregular::CellDomain::accumulate_ghosts"),
                                    std::span<Data>(core_.store_.data),
                                    std::span<const std::size_t>(core_.store_.offsets()), apply);
  }
  /// The ghost leaves of the last collection (sorted by start; ids index ghost_data()).
  [[nodiscard]] const GhostLayer<C>& ghosts() const noexcept { return core_.ghosts_.layer(); }
  /// The copy of ghost leaf g's datum (read-only).
  [[nodiscard]] const Data& ghost_data(std::size_t g) const { return core_.ghosts_.of(g).front(); }
  /// The copy of ghost leaf g's datum, writable for accumulate_ghosts().
  [[nodiscard]] Data& ghost_data(std::size_t g) { return core_.ghosts_.of(g).front(); }
  /// Whether the ghost layer still matches the tree and the map.
  [[nodiscard]] bool ghosts_current() const noexcept {
    return core_.ghosts_.current(core_.generation_);
  }

  /// Local and ghost leaves that leaf i reads under S and in `contact` (local, no communication).
  void neighbours(std::size_t i, LeafNeighbours& out, Contact contact = Contact::stencil) const {
    core_.ghosts_.template neighbours<S>(core_.leaves_, core_.leaves_.cell(i),
                                         core_.options_.periodic, contact, out);
  }

  /// The leaves touching leaf i (local ones and ghosts of the last collection), each with the
  /// dimension of the shared boundary and the direction it lies in, in curve order: what a
  /// finite-volume or multigrid stencil iterates over (face neighbours have dimension dim-1 and
  /// one non-zero direction). Local, no communication.
  void adjacent(std::size_t i, std::vector<Adjacent<dim>>& out,
                Contact contact = Contact::corner) const {
    out.clear();
    const auto c = core_.leaves_.cell(i);
    const auto& g = core_.ghosts_.layer();
    std::vector<std::size_t> ids;
    auto add = [&](std::span<const index_type> st, std::span<const std::uint8_t> lv, bool ghost) {
      detail::read_by<C, stencil::Moore<dim>>(st, lv, c, core_.options_.periodic, contact,
                                              LevelRange::all(), ids);
      for (std::size_t j : ids) {
        const auto other = detail::cell_at<C>(st[j], lv[j]);
        out.push_back({j, ghost, lv[j], contact_dimension<C>(c, other, core_.options_.periodic),
                       contact_direction<C>(c, other)});
      }
    };
    add(core_.leaves_.starts(), core_.leaves_.levels(), false);
    if (g.size() > 0) add(g.starts(), g.levels(), true);
    std::sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
      const auto sa = a.ghost ? g.starts()[a.id] : core_.leaves_.starts()[a.id];
      const auto sb = b.ghost ? g.starts()[b.id] : core_.leaves_.starts()[b.id];
      return sa < sb;
    });
  }

 private:
  struct LoadTag {};
  CellDomain(LoadTag, const boost::mpi::communicator& comm, detail::OpenedCheckpoint& in,
             options_type options, const LoadOptions& opt)
      : core_(comm, detail::saved_box<dim>(in.header), std::move(options), [] {}) {
    detail::load_core(core_, in, opt);
  }

  /// The leaves of an adaptation with their loads, made before anything is committed (the
  /// metric may be user code).
  struct Prepared {
    LocalLeaves<C> leaves;
    LeafLoads<C, Metric> loads;
  };
  template <class Starts, class Levels>
  Prepared prepare(Starts& starts, Levels& levels) const {
    Prepared p;
    p.leaves.splice([&](auto& s, auto& l, auto& counts) {
      counts.reserve(starts.capacity());  // the starts' room: a remap splices arrivals in place
      counts.assign(starts.size(), 1);
      detail::adopt(s, std::move(starts));
      detail::adopt(l, std::move(levels));
    });
    p.loads.new_window(p.leaves.size());
    p.loads.estimate(
        core_.options_.load, p.leaves, [](std::size_t) { return std::span<const Data>(); },
        core_.comm_.rank());
    return p;
  }
  /// The tree after adapt or balance: new leaves and data in curve order (detail::place_changed
  /// then makes the map hold them).
  void commit(Prepared&& p, detail::store_vector<Data> data) {
    core_.leaves_ = std::move(p.leaves);
    core_.loads_ = std::move(p.loads);
    core_.store_.data = std::move(data);
    marks_.clear();  // they named the old leaves
    ++core_.generation_;
  }

  /// Partitions the leaves that construction placed on an even split.
  void partition_first() {
    core_.loads_.new_window(core_.leaves_.size());
    core_.guarded([&] { core_.estimate_loads(); });
    auto t0 = Core::clock::now();
    core_.repartition(nullptr, t0);
  }

  void bad_mark(std::string what) {
    if (!mark_error_) mark_error_ = std::move(what);
  }
  static index_type end_of(const Keyed& k) { return k.start + detail::span_at<C>(k.level); }

  template <class Split, class Merge>
  AdaptStats adapt_marked(Split& split, Merge& merge) {
    marks_.resize(core_.leaves_.size(), Mark::keep);
    auto pending = std::move(mark_error_);
    mark_error_.reset();
    mpi::agree_on(
        core_.comm_.get(),
        pending ? std::optional<std::string>("irregular::CellDomain::adapt: " + *pending +
                                             " (rank " + std::to_string(core_.comm_.rank()) + ")")
                : std::nullopt);
    auto saved = detail::hold_families(core_, marks_);  // a snapshot when families moved
    const bool moved = saved.has_value();
    try {
      AdaptStats stats;
      typename LocalLeaves<C>::starts_type starts;  // become the leaves' arrays
      typename LocalLeaves<C>::levels_type levels;
      detail::store_vector<Data> data;
      detail::AdaptSources<Data> sources;
      auto next = core_.guarded([&] {
        // The exact count of new leaves when nothing coarsens: one allocation, no regrowth
        // (capped by the leaf budget, which the count after coarsening is checked against).
        const auto refined =
            static_cast<std::size_t>(std::count(marks_.begin(), marks_.end(), Mark::refine));
        const std::size_t n = std::min(
            core_.leaves_.size() + refined * (detail::children_of<C> - 1), core_.max_leaves_ + 1);
        starts.reserve(n);
        levels.reserve(n);
        data.reserve(n);
        stats = detail::adapt_leaves<C>(
            core_.leaves_.starts(), core_.leaves_.levels(),
            std::span<const Data>(core_.store_.data), std::span<const Mark>(marks_), split, merge,
            starts, levels, data, sources,
            [&](std::size_t i) {
              return "irregular::CellDomain::adapt: leaf " + std::to_string(i) + " on rank " +
                     std::to_string(core_.comm_.rank());
            },
            [&](std::size_t count) {
              if (count > core_.max_leaves_) detail::leaf_budget_exceeded(core_.max_leaves_);
            });
        return prepare(starts, levels);
      });
      const int change = detail::tree_change(core_, next.leaves);
      if (!saved && detail::placing_can_fail<Core>(change)) saved = core_.snapshot();
      detail::assemble_adapted(std::span<Data>(core_.store_.data), sources, data);
      commit(std::move(next), std::move(data));
      detail::place_changed(core_, change, moved);
      return stats;
    } catch (const collective_error&) {
      if (saved) core_.restore(std::move(*saved));
      throw;
    }
  }

  Core core_;
  std::vector<Mark> marks_;
  std::optional<std::string> mark_error_;
};

}  // namespace irregular
