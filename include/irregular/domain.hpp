// IrregularDomain: the H-Tree of one irregular problem distributed over the ranks of a
// communicator (baiardi-2001 §2–4). A thin front over the element store, the distributed leaves,
// a Partitioner policy and the remap pipeline; it never looks at which partitioner or ownership
// map it holds. The core (state, transaction, remap pipeline): distributed/domain/core.hpp.
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/element_traits.hpp>
#include <irregular/core/error.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/advisor/dry_run.hpp>
#include <irregular/distributed/domain/build_profile.hpp>
#include <irregular/distributed/domain/checkpoint.hpp>
#include <irregular/distributed/domain/core.hpp>
#include <irregular/distributed/domain/element_store.hpp>
#include <irregular/distributed/domain/neighbourhood.hpp>
#include <irregular/distributed/domain/options.hpp>
#include <irregular/distributed/ghost/layer.hpp>
#include <irregular/distributed/ghost/store.hpp>
#include <irregular/distributed/ghost/strategies.hpp>
#include <irregular/distributed/htree/leaf_loads.hpp>
#include <irregular/distributed/htree/load_metric.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/htree/replicated_htree.hpp>
#include <irregular/distributed/htree/sample_sort.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/distributed/partitioners/partitioner.hpp>
#include <irregular/distributed/partitioners/registry.hpp>
#include <irregular/distributed/partitioners/sfc_blocking.hpp>
#include <irregular/distributed/remap/rebalance_decision.hpp>
#include <irregular/distributed/remap/remap.hpp>
#include <irregular/distributed/remap/remap_plan.hpp>  // the rebalance decision record
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/communicator.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/tree/contact.hpp>
#include <irregular/tree/neighbours.hpp>
#include <irregular/tree/refine.hpp>
#include <irregular/tree/stencil.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular {

/// One distributed irregular problem: elements of type Element located in a Box, an H-Tree
/// refined by a count-based condition, ordered by Curve, mapped onto the ranks by a Partitioner
/// policy (SFC blocking by default; partitioner::Rectangular; partitioner::ByName).
template <class Element, Stencil S, SpaceFillingCurve C, class Metric = load::Constant,
          class P = partitioner::SfcBlocking>
requires Locatable<Element, C::dim> && LoadMetric<Metric, C::dim> &&(S::dim == C::dim) &&
    Partitioner<P, C> class IrregularDomain {
 public:
  static constexpr int dim = C::dim;  ///< dimension of the box and of the cells
  using element_type = Element;       ///< what the leaves hold
  using curve_type = C;               ///< the space-filling curve that orders leaves and elements
  using stencil_type = S;             ///< the cells a leaf reads (neighbours, ghosts)
  using partitioner_type = P;         ///< the policy that maps the leaves onto the ranks
  using map_type = typename P::template map_type<C>;  ///< the ownership map P produces
  using index_type = typename C::index_type;          ///< the curve's index (finest-level keys)
  /// The refinement condition: whether a cell holding `count` elements must split.
  using condition_type = std::function<bool(const Cell<dim>&, std::size_t)>;
  using options_type = DomainOptions<dim, Metric, P>;  ///< periodicity, metric, partitioner...

  /// A view of one local leaf.
  struct Leaf {
    std::size_t id;                      ///< local leaf index (0 .. local_leaf_count())
    Cell<dim> cell;                      ///< its space
    IndexInterval<index_type> interval;  ///< its finest-level curve indices
    std::uint64_t count;                 ///< elements in it (all local after build/move)
    double load;                         ///< its current load estimate or measurement
    std::span<Element> elements;         ///< its elements, sorted by key (writable)
  };

  /// `condition(cell, count)` says whether a cell must be split (refine::max_elements(k),
  /// refine::max_level(l) or a user predicate). Throws irregular::collective_error on every rank
  /// for a bad box, an empty condition or partitioner options that cannot work with comm.size()
  /// parts (bad options: tests `domain_np*`, `domain_maps_np*`). Collective over comm
  /// (duplicates it).
  IrregularDomain(const boost::mpi::communicator& comm, Box<dim> box, condition_type condition,
                  options_type options = {})
      : core_(comm, box, std::move(options),
              [&] {
                if (!condition)
                  throw invalid_argument("irregular::IrregularDomain: empty refinement condition");
              }),
        condition_(std::move(condition)) {
    if (core_.comm_.rank() == 0)
      core_.leaves_.push_back(0, 0, 0);  // the root: one leaf on rank 0 until build()
    core_.store_.index_leaves(core_.leaves_);
    core_.loads_.new_window(core_.leaves_.size());
    core_.guarded([&] { core_.estimate_loads(); });
  }

  // ---- building -----------------------------------------------------------------------------

  /// Adds elements given on any rank in any distribution; they join the tree at the next
  /// build(). Throws irregular::collective_error on every rank, naming the element index and the
  /// rank, when any rank passes an element outside the box or with a NaN coordinate; nothing is
  /// inserted then. Collective over comm.
  void insert(std::span<const Element> elements) {
    mpi::agree(core_.comm_.get(), [&] { reject_invalid(elements, "insert"); });
    core_.store_.pending.insert(core_.store_.pending.end(), elements.begin(), elements.end());
  }
  /// Adds the elements of a vector, as insert(std::span) does. Collective over comm.
  void insert(const std::vector<Element>& elements) { insert(std::span<const Element>(elements)); }

  /// Builds the H-Tree over all elements (inserted and present): distributed sort by curve
  /// index, leaf construction, partition of the leaves, migration. The result (leaves, their
  /// counts, the partition) does not depend on how elements were spread over the ranks.
  /// Collective over comm.
  void build() {
    core_.transaction(core_.snapshot(), [&] {
      core_.migration_ = {};
      core_.profile_ = {};
      auto t0 = clock::now();
      auto& st = core_.store_;
      st.elements.insert(st.elements.end(), st.pending.begin(), st.pending.end());
      st.pending.clear();
      core_.guarded([&] { st.rekey(); });  // element_traits may be user code
      mpi::ExchangeStats sort_stats;
      const auto bounds =
          sample_sort(core_.comm_.get(), st.elements, st.keys, SegmentMap<C>::domain_end(),
                      st.key_fn(), Core::tag_sort, &sort_stats);
      core_.profile_.sort = core_.lap(t0);
      core_.profile_.sort_bytes = sort_stats.bytes_sent;
      // The sorted runs form a segment map: the leaves are built and settled on it first, so
      // every leaf is whole with its elements before its load is measured.
      const SegmentMap<C> sorted(bounds);
      construct(sorted);
      core_.loads_.new_window(core_.leaves_.size());
      (void)core_.settle_on(sorted);
      core_.profile_.leaves = core_.lap(t0);
      core_.repartition(nullptr, t0);
    });
  }

  /// Applies `update(Element&)` to every local element (new positions), sends the elements that
  /// left their holder's part to the new holders (only those travel), and adapts the tree: cells
  /// refine and prune so the leaves equal a fresh build over the moved elements; the map changes
  /// only where a coarsened leaf is cut by a part boundary (it is then held whole).
  /// Elements come and go here too: when `update` returns bool, an element for which it returns
  /// false is removed (a particle absorbed, an animal that died), and the elements insert()ed
  /// since the last build or move join (not passed to `update`). If any rank's update throws or
  /// yields a position outside the box, every rank throws irregular::collective_error and no
  /// element changes, none is removed and the inserted ones stay pending. Collective over comm.
  template <class Update>
  requires std::invocable<Update&, Element&> &&
      (std::is_void_v<std::invoke_result_t<Update&, Element&>> ||
       std::same_as<std::invoke_result_t<Update&, Element&>, bool>)void move_elements(Update&&
                                                                                          update) {
    constexpr bool removes = std::same_as<std::invoke_result_t<Update&, Element&>, bool>;
    decltype(core_.store_.elements) moved;
    moved.reserve(core_.store_.elements.size() + core_.store_.pending.size());
    mpi::agree(core_.comm_.get(), [&] {  // update is user code: one rank's throw fails every rank
      for (const auto& e : core_.store_.elements) {
        moved.push_back(e);
        if constexpr (removes) {
          if (!update(moved.back())) moved.pop_back();
        } else {
          update(moved.back());
        }
      }
      reject_invalid(std::span<const Element>(moved), "move_elements");
    });
    moved.insert(moved.end(), core_.store_.pending.begin(),
                 core_.store_.pending.end());  // checked by insert()
    auto saved = snapshot_taking_elements();
    core_.store_.pending.clear();
    core_.store_.elements = std::move(moved);
    core_.transaction(std::move(saved), [&] {
      core_.migration_ = {};
      auto& st = core_.store_;
      st.rekey();
      // 1. Elements go to the holders of their new keys (one merged message per partner).
      LocalLeaves<C> none;
      std::vector<double> no_payload;
      core_.migration_ += place(core_.comm_.get(), core_.map_, none, no_payload, st.elements,
                                st.keys, st.key_fn(), Core::tag_move);
      // 2. The tree adapts: leaves of the new distribution, counted globally.
      const auto old_leaves = std::move(core_.leaves_);
      construct(core_.map_);
      core_.loads_.carry(old_leaves, core_.leaves_);
      // 3. Leaves cut by a part boundary are held whole.
      core_.map_ = core_.settle_on(core_.map_);
      core_.finish_counters();
    });
  }

  /// Remaps when the load is unbalanced beyond the threshold (baiardi-2001 §3): each rank's load
  /// is gathered and max_unbalance computed (in time, against capacities given or measured); only
  /// if it exceeds `threshold` new cuts are computed and, when a horizon is given, only if the
  /// estimated migration cost is below the time saved (kaddoura-ranka §3.5) the data moves, by
  /// the strategy chosen, through the chain order chosen. A new order renumbers comm(): rank k
  /// then holds chain part k. Returns the decision record (true when it remapped). Bad options
  /// on any rank throw irregular::collective_error on every rank, nothing changed. See
  /// distributed/remap_plan.hpp. Collective over comm.
  RebalanceDecision rebalance(RebalanceOptions opt = {}) {
    return core_.rebalance(std::move(opt), "irregular::IrregularDomain::rebalance");
  }

  /// The partitioner advisor (doc/guide/advisor.md): each candidate partitioner, by registry name
  /// (partitioner::ByName), maps the live leaves and loads, and its map is measured: balance,
  /// neighbour parts and ghosts under the stencil (exact: what applying it and collecting would
  /// give), the remap from the map in force (what the migration counters would report), the time
  /// to compute it, and the step time `opt.model` predicts. Moves no element or datum; the domain
  /// does not change. Every rank passes the same names and options; an unknown name, bad options or
  /// a failure on any rank make every rank throw the same irregular::collective_error. Collective.
  advisor::PartitionerComparison<C> compare_partitioners(const std::vector<std::string>& names,
                                                         const advisor::AdvisorOptions& opt = {}) {
    return core_.template compare_partitioners<S>(
        names, opt, "irregular::IrregularDomain::compare_partitioners");
  }
  /// Moves the leaves and their elements to `map` (one of a comparison's maps), as a remapping
  /// rebalance would: last_migration() then reports what moved. A map of another kind than this
  /// domain's partitioner makes (unless it is partitioner::ByName or Auto), or for another number
  /// of ranks, is refused on every rank with the same irregular::collective_error. Collective.
  void apply_map(const AnyOwnershipMap<C>& map) {
    core_.apply_map(map, "irregular::IrregularDomain::apply_map");
  }

  /// Starts a new measurement window (load::Measured): the seconds measured so far are dropped
  /// and leaves are estimated again until timed. Each remap starts a new window too. Local.
  void reset_measurements() { core_.reset_measurements(); }

  // ---- queries (local, no communication) ----------------------------------------------------

  /// The domain's own communicator: a duplicate of the one given, renumbered when a rebalance
  /// picks a new chain order (rank k then holds chain part k).
  [[nodiscard]] const boost::mpi::communicator& comm() const noexcept { return core_.comm_.get(); }
  /// The box every element lies in.
  [[nodiscard]] const Box<dim>& box() const noexcept { return core_.store_.box(); }
  /// The options the domain was made with.
  [[nodiscard]] const options_type& options() const noexcept { return core_.options_; }
  /// The ownership map in force: who holds the data of every index and leaf (replicated).
  [[nodiscard]] const map_type& ownership() const noexcept { return core_.map_; }
  /// The replicated H-Tree of the current segments: every rank's private roots with their
  /// owners and the hnodes above them, O(p · depth), computed from the splitters alone.
  [[nodiscard]] ReplicatedHTree<C> replicated_tree()
      const requires std::same_as<map_type, SegmentMap<C>> {
    return ReplicatedHTree<C>(core_.map_);
  }
  /// This rank's leaves (the leaves of its private H-Trees) in curve order: their starts,
  /// levels and global element counts.
  [[nodiscard]] const LocalLeaves<C>& local_tree() const noexcept { return core_.leaves_; }
  /// Number of leaves this rank holds.
  [[nodiscard]] std::size_t local_leaf_count() const noexcept { return core_.leaves_.size(); }
  /// Number of elements this rank holds, not counting those inserted since the last build.
  [[nodiscard]] std::size_t local_element_count() const noexcept {
    return core_.store_.elements.size();
  }
  /// This rank's elements sorted by curve key: each local leaf's are one contiguous run.
  [[nodiscard]] std::span<Element> local_elements() noexcept { return core_.store_.elements; }
  /// This rank's elements sorted by curve key (read-only).
  [[nodiscard]] std::span<const Element> local_elements() const noexcept {
    return core_.store_.elements;
  }
  /// The curve key (finest-level index) of each local element, in local_elements() order.
  [[nodiscard]] std::span<const index_type> local_keys() const noexcept {
    return core_.store_.keys;
  }
  /// One load per local leaf, in leaf order: the metric's estimates, or the seconds timed under
  /// load::Measured.
  [[nodiscard]] std::span<const double> local_loads() const noexcept {
    return core_.loads_.values();
  }

  /// Local leaf i as a Leaf view, its elements writable. Precondition: i < local_leaf_count().
  [[nodiscard]] Leaf leaf(std::size_t i) {
    IRREGULAR_ASSERT(i < core_.leaves_.size());
    return Leaf{i,
                core_.leaves_.cell(i),
                core_.leaves_.interval(i),
                core_.leaves_.counts()[i],
                core_.loads_.values()[i],
                core_.store_.of_leaf(i)};
  }
  /// The local leaves in curve order, as Leaf views: `for (auto leaf : domain.local_leaves())`.
  [[nodiscard]] auto local_leaves() {
    return std::views::iota(std::size_t{0}, core_.leaves_.size()) |
           std::views::transform([this](std::size_t i) { return leaf(i); });
  }

  /// Curve key of a position (finest-level index). Precondition: inside the box.
  [[nodiscard]] index_type key_of_position(const std::array<double, dim>& x) const {
    return core_.store_.key_of_position(x);
  }
  /// Curve key of an element: the key of its position. Precondition: inside the box.
  [[nodiscard]] index_type key_of(const Element& e) const { return core_.store_.key_of(e); }
  /// The rank that holds the data at a position: after build, move_elements and rebalance an
  /// element at x is on owner_of(x). Throws irregular::out_of_domain outside the box.
  [[nodiscard]] int owner_of(const std::array<double, dim>& x) const {
    if (!box().contains(x))
      throw out_of_domain("irregular::IrregularDomain::owner_of: position outside the box");
    return core_.map_.owner(key_of_position(x));
  }
  /// The rank that holds all data of a cell, or -1 when several ranks hold parts of it.
  [[nodiscard]] int owner_of(const Cell<dim>& c) const {
    (void)curve::checked_index<C>(c);
    const auto h = core_.map_.holders(curve::hnode_interval<C>(c));
    return h.size() == 1 ? h.front() : -1;
  }
  /// Local leaf containing a position, or local_leaf_count() when another rank holds it.
  [[nodiscard]] std::size_t leaf_containing(const std::array<double, dim>& x) const {
    if (!box().contains(x))
      throw out_of_domain("irregular::IrregularDomain::leaf_containing: position outside the box");
    return core_.leaves_.find(key_of_position(x));
  }

  /// Every leaf whose space meets the stencil cells of local leaf `i` (same, coarser and finer
  /// levels): local ones by id, remote ones as index ranges with a rank holding data there.
  void neighbours(std::size_t i, Neighbourhood<index_type>& out) const {
    IRREGULAR_ASSERT(i < core_.leaves_.size());
    const auto c = core_.leaves_.cell(i);
    neighbours_of_cell<C, S>(core_.leaves_.starts(), core_.leaves_.levels(), c,
                             core_.options_.periodic, out.local);
    out.remote.clear();
    if (core_.comm_.size() == 1) return;  // nothing is remote
    uncovered_stencil_intervals<C, S>(core_.leaves_.starts(), core_.leaves_.levels(), c,
                                      core_.options_.periodic, [&](IndexInterval<index_type> iv) {
                                        for_each_holder(core_.map_, iv,
                                                        [&](int r, IndexInterval<index_type> part) {
                                                          if (r != core_.comm_.rank())
                                                            out.remote.push_back({part, r});
                                                        });
                                      });
    std::sort(out.remote.begin(), out.remote.end(), [](const auto& a, const auto& b) {
      return a.interval.start != b.interval.start ? a.interval.start < b.interval.start
                                                  : a.owner < b.owner;
    });
    out.remote.erase(std::unique(out.remote.begin(), out.remote.end(),
                                 [](const auto& a, const auto& b) {
                                   return a.interval == b.interval && a.owner == b.owner;
                                 }),
                     out.remote.end());
  }
  /// As neighbours(i, out), returned by value (a loop reuses one Neighbourhood through that form).
  [[nodiscard]] Neighbourhood<index_type> neighbours(std::size_t i) const {
    Neighbourhood<index_type> out;
    neighbours(i, out);
    return out;
  }

  // ---- the ghost layer (remote-data collection) ---------------------------------------------

  /// A view of one ghost leaf: a read-only copy of a remote leaf and of its elements.
  struct GhostLeaf {
    std::size_t id;                      ///< ghost id (0 .. ghosts().size())
    Cell<dim> cell;                      ///< its space
    IndexInterval<index_type> interval;  ///< its finest-level curve indices
    std::uint64_t count;                 ///< elements in it
    int owner;                           ///< the rank that holds the leaf
    std::span<const Element> elements;   ///< the copies of its elements
  };

  /// Collects the ghost layer: read-only copies of every remote leaf (and its elements) that a
  /// local leaf reads under the stencil `Reads` (the domain's by default), restricted to
  /// `opt.levels` and `opt.contact`, by `strategy` (informed fault prevention by default;
  /// ghost::RequestAnswer, ghost::FaultPrevention, ghost::ByName). The schedule is cached until
  /// the tree or the map changes (build, move_elements, a remapping rebalance); exchange_ghosts()
  /// then refreshes values cheaply. Returns this rank's statistics (all_reduce_sum for totals).
  /// Throws irregular::collective_error on every rank before build() or for a bad level range.
  /// Collective over comm.
  template <Stencil Reads = S, GhostStrategy G = ghost::InformedFaultPrevention>
  const GhostStats& collect_ghosts(GhostOptions opt = {}, G strategy = {}) {
    static_assert(Reads::dim == dim,
                  "irregular::IrregularDomain::collect_ghosts: the stencil's dimension differs "
                  "from the domain's");
    return core_.with_held_tree(
        "irregular::IrregularDomain::collect_ghosts", [&](const auto& tree) -> const GhostStats& {
          return core_.ghosts_.template collect<Reads>(tree, opt, strategy, core_.payload());
        });
  }

  /// Request/answer with excess parallelism (baiardi-collecting-remote-data §3.1): runs
  /// f(Leaf, const LeafNeighbours&) on every local leaf, the neighbours under the domain's
  /// stencil and `opt.contact`. Leaves that read nothing remote run while the requests and
  /// answers travel; the others are deferred and run once their remote leaves and elements have
  /// arrived. Leaves the collected ghost layer behind, as collect_ghosts(opt, RequestAnswer)
  /// would. f should write its results where no other leaf reads (another member): values
  /// travel while it runs. If f throws on any rank, every rank throws the same
  /// irregular::collective_error once the exchange is complete, with the elements restored.
  /// Returns this rank's statistics. Collective over comm.
  template <class F>
  const GhostStats& sweep(F&& f, GhostOptions opt = {}) {
    auto saved = core_.store_.elements;  // f is user code and may change elements
    std::optional<std::string> failure;
    LeafNeighbours nb;
    const auto run = [&](std::size_t i) {
      if (failure) return;
      try {
        neighbours(i, nb, opt.contact);
        f(leaf(i), std::as_const(nb));
      } catch (const std::exception& e) {
        failure = "irregular::IrregularDomain::sweep: on rank " +
                  std::to_string(core_.comm_.rank()) + ": " + e.what();
      } catch (...) {
        failure = "irregular::IrregularDomain::sweep: unknown exception on rank " +
                  std::to_string(core_.comm_.rank());
      }
    };
    try {  // a failure of the exchange (a serialize that throws) or of f: the elements as they were
      const auto& stats = core_.ghosts_.template sweep<S>(
          core_.tree("irregular::IrregularDomain::sweep"), opt, core_.payload(), run);
      mpi::agree_on(core_.comm_.get(), failure);
      return stats;
    } catch (const collective_error&) {
      core_.store_.elements = std::move(saved);
      throw;
    }
  }

  /// The ghost leaves of the last collection (sorted by start; ids index ghost()).
  [[nodiscard]] const GhostLayer<C>& ghosts() const noexcept { return core_.ghosts_.layer(); }
  /// Ghost leaf g as a GhostLeaf view. Precondition: g < ghosts().size().
  [[nodiscard]] GhostLeaf ghost(std::size_t g) const {
    const auto& l = core_.ghosts_.layer();
    IRREGULAR_ASSERT(g < l.size());
    return GhostLeaf{
        g, l.cell(g), l.interval(g), l.counts()[g], l.owners()[g], core_.ghosts_.of(g)};
  }
  /// Every ghost element, ghost by ghost in curve order (writable for accumulate_ghosts).
  [[nodiscard]] std::span<Element> ghost_elements() noexcept { return core_.ghosts_.values(); }
  /// Every ghost element, ghost by ghost in curve order (read-only).
  [[nodiscard]] std::span<const Element> ghost_elements() const noexcept {
    return core_.ghosts_.values();
  }
  /// Whether the ghost layer still matches the tree and the map.
  [[nodiscard]] bool ghosts_current() const noexcept {
    return core_.ghosts_.current(core_.generation_);
  }

  /// Refreshes the ghost elements from their owners along the cached schedule (one message per
  /// partner). Throws irregular::collective_error on every rank when the
  /// tree or the map changed since the collection. Collective over comm.
  GhostPhase exchange_ghosts() {
    return core_.ghosts_.exchange(core_.tree("irregular::IrregularDomain::exchange_ghosts"),
                                  core_.payload());
  }

  /// Sends every ghost element back to its owner, which combines it into its own element with
  /// op(Element& mine, const Element& contribution), partners in rank order (deterministic).
  /// Ghost elements are left as they are (reset them before the next round of contributions).
  /// Throws irregular::collective_error when the ghosts are stale or op throws on any rank; then
  /// no local element has changed. Collective over comm.
  template <class Op>
  GhostPhase accumulate_ghosts(Op&& op) {
    return core_.ghosts_.accumulate(core_.tree("irregular::IrregularDomain::accumulate_ghosts"),
                                    std::span<Element>(core_.store_.elements),
                                    std::span<const std::size_t>(core_.store_.offsets), op);
  }

  /// The neighbours of local leaf i by id: local leaves and ghosts that it reads under the
  /// domain's stencil and are in `contact` with it (Contact::stencil keeps every leaf meeting a
  /// stencil cell; face, edge and corner keep touching leaves only). Remote leaves are found
  /// among the ghosts of the last collection only. Local, no communication.
  void neighbours(std::size_t i, LeafNeighbours& out, Contact contact = Contact::stencil) const {
    IRREGULAR_ASSERT(i < core_.leaves_.size());
    core_.ghosts_.template neighbours<S>(core_.leaves_, core_.leaves_.cell(i),
                                         core_.options_.periodic, contact, out);
  }

  /// What the last build / move_elements / rebalance moved, summed over all ranks (replicated).
  [[nodiscard]] const mpi::MigrationCounters& last_migration() const noexcept {
    return core_.migration_global_;
  }

  /// This rank's phase timings of the last build() or remapping rebalance().
  [[nodiscard]] const BuildProfile& last_profile() const noexcept { return core_.profile_; }

  /// Times the work on a local leaf (load::Measured): the seconds join the leaf's load.
  [[nodiscard]] ScopedTimer time_leaf(std::size_t i) { return core_.time_leaf(i); }

  /// The upward pass (distributed/htree/reduce_up.hpp): `leaf_value(cell, elements)` on each
  /// local leaf, `combine(cell, children)` on each hnode above, children in curve order; the
  /// values of this rank's hnodes and the replicated ones, the same bits at every rank count.
  /// Errors are agreed. Collective over comm.
  template <class LeafValue, class Combine>
  [[nodiscard]] auto reduce_up(LeafValue&& leaf_value, Combine&& combine) const {
    return core_.reduce_up(
        [&](std::size_t i) { return leaf_value(core_.leaves_.cell(i), core_.store_.of_leaf(i)); },
        combine);
  }
  /// Remote hnodes by a traversal predicate (distributed/ghost/hnode_walk.hpp): every local
  /// leaf walks `values` (reduce_up's, since the last change of tree or map) from the root;
  /// `open(hnode_box, reader_box)` or `open(hnodes::HnodeView, reader_box)` (monotone in the
  /// reader, the leaf's box; sampled when assertions are on) decides what is entered; `accept(leaf,
  /// hnode, false, {})` for an hnode taken as it is, `accept(leaf, hnode, true, elements)` for a
  /// leaf opened. A leaf's calls are consecutive, in one order at every rank count and strategy
  /// (hnodes::RequestAnswer, FaultPrevention, InformedFaultPrevention: keep it across calls,
  /// ByName). Without one, the domain's own informed fault prevention (hnodes::Kept), kept per kind
  /// of walk, so repeated walks reuse its sets. Errors are agreed. Collective over comm.
  template <class V, class Open, class Accept, class Strategy = hnodes::Kept>
  HnodeStats walk_hnodes(HnodeValues<C, V>& values, Open&& open, Accept&& accept,
                         Strategy&& strategy = {}) const {
    return core_.template walk_hnodes<Element>(
        values, open, accept, strategy, [&](std::size_t i) { return core_.store_.of_leaf(i); },
        "irregular::IrregularDomain::walk_hnodes");
  }

  // ---- checkpoint and restart ----------------------------------------------------------------

  /// Saves the tree, the elements in curve order and (load::Measured) the leaf loads to one file
  /// at `path`, written by all ranks through MPI-IO; its bytes do not depend on the number of
  /// ranks (doc/guide/checkpoints.md). Written under a temporary name and renamed, so a crash
  /// leaves the previous file at `path` intact. Throws irregular::checkpoint_error on every rank
  /// when the directory is not writable or a write fails, and irregular::collective_error when
  /// elements are pending (insert()ed, not yet built); the domain is unchanged. Collective.
  void save(const std::string& path, const SaveOptions& opt = {}) {
    mpi::agree(core_.comm_.get(), [&] {
      if (!core_.store_.pending.empty())
        throw invalid_argument(
            "irregular::IrregularDomain::save: " + std::to_string(core_.store_.pending.size()) +
            " inserted elements are not built yet on rank " + std::to_string(core_.comm_.rank()));
    });
    detail::save_core(core_, path, checkpoint::Kind::elements, opt);
  }

  /// Loads a domain saved by save() on any number of ranks: each rank reads an even share of
  /// the leaves and their elements, and the partitioner in `options` maps them by their loads.
  /// The curve, dimension, element format and size, `opt.type_tag`, periodicity and hold level
  /// must match the file's; the box is the file's. Every rank throws the same
  /// irregular::checkpoint_error, naming the section, block and byte offset, for a missing,
  /// truncated, corrupt or mismatched file. Collective over comm.
  static IrregularDomain load(const boost::mpi::communicator& comm, const std::string& path,
                              condition_type condition, options_type options = {},
                              const LoadOptions& opt = {}) {
    auto in = detail::open_checkpoint<C, Element, dim>(
        comm, path, checkpoint::Kind::elements, opt.type_tag, options.periodic, options.hold_level);
    return IrregularDomain(LoadTag{}, comm, in, std::move(condition), std::move(options), opt);
  }

  // ---- collective summaries -----------------------------------------------------------------

  /// Every rank's load, the average and the unbalance. Collective over comm.
  [[nodiscard]] LoadReport load_report() {
    core_.loads_.agree_unit(core_.comm_.get(), core_.leaves_);
    return gather_load_report(core_.comm_.get(),
                              core_.loads_.total());  // loads summed in leaf order by LeafLoads
  }
  /// Number of elements over all ranks, inserted-but-not-built ones included. Collective over comm.
  [[nodiscard]] std::uint64_t global_element_count() const {
    std::uint64_t n = core_.store_.elements.size() + core_.store_.pending.size(), total = 0;
    boost::mpi::all_reduce(core_.comm_.get(), n, total, std::plus<std::uint64_t>());
    return total;
  }
  /// Number of leaves over all ranks. Collective over comm.
  [[nodiscard]] std::uint64_t global_leaf_count() const {
    std::uint64_t n = core_.leaves_.size(), total = 0;
    boost::mpi::all_reduce(core_.comm_.get(), n, total, std::plus<std::uint64_t>());
    return total;
  }

 private:
  using Core = detail::DomainCore<ElementStore<Element, C>, C, Metric, P>;
  using clock = typename Core::clock;

  struct LoadTag {};
  IrregularDomain(LoadTag, const boost::mpi::communicator& comm, detail::OpenedCheckpoint& in,
                  condition_type condition, options_type options, const LoadOptions& opt)
      : core_(comm, detail::saved_box<dim>(in.header), std::move(options),
              [&] {
                if (!condition)
                  throw invalid_argument("irregular::IrregularDomain: empty refinement condition");
              }),
        condition_(std::move(condition)) {
    detail::load_core(core_, in, opt);
  }

  /// The leaves of the tree under `map` (the condition is user code, the budget may run out).
  template <OwnershipMap M>
  void construct(const M& map) {
    core_.guarded([&] {
      core_.leaves_ =
          construct_leaves(core_.comm_.get(), map, std::span<const index_type>(core_.store_.keys),
                           condition_, core_.max_leaves_);
    });
  }
  /// A snapshot that takes the elements instead of copying them (the caller replaces them).
  typename Core::Saved snapshot_taking_elements() {
    auto& st = core_.store_;
    ElementStore<Element, C> kept(st.box());
    kept.elements = std::move(st.elements);
    kept.keys = st.keys;
    kept.pending = st.pending;
    kept.offsets = st.offsets;
    return {std::move(kept), core_.map_, core_.leaves_, core_.loads_, core_.generation_};
  }

  void reject_invalid(std::span<const Element> elements, const char* who) const {
    if (auto bad = core_.store_.first_invalid(elements, who, core_.comm_.rank()))
      throw out_of_domain(*bad);
  }

  Core core_;
  condition_type condition_;
};

}  // namespace irregular
