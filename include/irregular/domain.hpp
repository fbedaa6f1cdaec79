// IrregularDomain: the H-Tree of one irregular problem distributed over the ranks of a
// communicator (baiardi-2001 §2–4). A thin front over the element store, the distributed leaves,
// a Partitioner policy and the remap pipeline; it never looks at which partitioner or ownership
// map it holds. State and agreement: distributed/domain_state.hpp; remap: domain_remap.hpp.
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/element_traits.hpp>
#include <irregular/core/error.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/domain/build_profile.hpp>
#include <irregular/distributed/htree/sample_sort.hpp>
#include <irregular/distributed/domain/options.hpp>
#include <irregular/distributed/domain/domain_remap.hpp>  // the remap pipeline over the domain's state
#include <irregular/distributed/domain/element_store.hpp>
#include <irregular/distributed/ghost/layer.hpp>
#include <irregular/distributed/ghost/store.hpp>
#include <irregular/distributed/ghost/strategies.hpp>
#include <irregular/distributed/htree/leaf_loads.hpp>
#include <irregular/distributed/htree/load_metric.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/domain/neighbourhood.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/partitioners/partitioner.hpp>
#include <irregular/distributed/remap/rebalance_decision.hpp>
#include <irregular/distributed/remap/remap_plan.hpp>  // capacity cut, neighbour shift, decision record
#include <irregular/distributed/remap/remap.hpp>
#include <irregular/distributed/htree/replicated_htree.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/distributed/partitioners/sfc_blocking.hpp>
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
#include <cstddef>
#include <cstdint>
#include <concepts>
#include <functional>
#include <optional>
#include <string>
#include <ranges>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular {

/// One distributed irregular problem: elements of type Element located in a Box, an H-Tree
/// refined by a count-based condition, ordered by Curve, mapped onto the ranks by a Partitioner
/// policy (SFC blocking by default; partitioner::Rectangular; partitioner::ByName).
template <class Element, Stencil S, SpaceFillingCurve C, class Metric = load::Constant,
          class P = partitioner::SfcBlocking>
  requires Locatable<Element, C::dim> && LoadMetric<Metric, C::dim> && (S::dim == C::dim) && Partitioner<P, C>
class IrregularDomain : private detail::DomainRemap<Element, C, Metric, P> {
 public:
  static constexpr int dim = C::dim;
  using element_type = Element;
  using curve_type = C;
  using stencil_type = S;
  using partitioner_type = P;
  using map_type = typename P::template map_type<C>;
  using index_type = typename C::index_type;
  using condition_type = std::function<bool(const Cell<dim>&, std::size_t)>;
  using options_type = DomainOptions<dim, Metric, P>;

  /// A view of one local leaf.
  struct Leaf {
    std::size_t id;          ///< local leaf index (0 .. local_leaf_count())
    Cell<dim> cell;          ///< its space
    IndexInterval<index_type> interval;
    std::uint64_t count;     ///< elements in it (all local after build/move)
    double load;             ///< its current load estimate or measurement
    std::span<Element> elements;
  };

  /// `condition(cell, count)` says whether a cell must be split (refine::max_elements(k),
  /// refine::max_level(l) or a user predicate). Throws irregular::invalid_argument for a bad
  /// box, an empty condition or partitioner options that cannot work with comm.size() parts.
  /// Collective over comm (duplicates it).
  IrregularDomain(const boost::mpi::communicator& comm, Box<dim> box, condition_type condition,
                  options_type options = {})
      : detail::DomainRemap<Element, C, Metric, P>(comm, box, std::move(condition), std::move(options)) {
    mpi::agree(comm_.get(), [&] {
      box.validate();
      if (!condition_) throw invalid_argument("irregular::IrregularDomain: empty refinement condition");
      options_.partitioner.template check<C>(comm_.size());
    });
    max_leaves_ = options_.max_leaves_per_rank ? options_.max_leaves_per_rank : default_leaf_budget(comm_.get());
    map_ = initial_map();
    if (comm_.rank() == 0) leaves_.push_back(0, 0, 0);  // the root: one leaf on rank 0 until build()
    store_.index_leaves(leaves_);
    loads_.new_window(leaves_.size());
    guarded([&] { estimate_loads(); });
  }

  // ---- building -----------------------------------------------------------------------------

  /// Adds elements given on any rank in any distribution; they join the tree at the next
  /// build(). Throws irregular::collective_error on every rank, naming the element index and the
  /// rank, when any rank passes an element outside the box or with a NaN coordinate; nothing is
  /// inserted then. Collective over comm.
  void insert(std::span<const Element> elements) {
    mpi::agree(comm_.get(), [&] { reject_invalid(elements, "insert"); });
    store_.pending.insert(store_.pending.end(), elements.begin(), elements.end());
  }
  void insert(const std::vector<Element>& elements) { insert(std::span<const Element>(elements)); }

  /// Builds the H-Tree over all elements (inserted and present): distributed sort by curve
  /// index, leaf construction, partition of the leaves, migration. The result (leaves, their
  /// counts, the partition) does not depend on how elements were spread over the ranks.
  /// Collective over comm.
  void build() {
    transaction(snapshot(), [&] {
      migration_ = {};
      profile_ = {};
      auto t0 = clock::now();
      auto& st = store_;
      st.elements.insert(st.elements.end(), st.pending.begin(), st.pending.end());
      st.pending.clear();
      guarded([&] { st.rekey(); });  // element_traits may be user code
      mpi::ExchangeStats sort_stats;
      const auto bounds = sample_sort(comm_.get(), st.elements, st.keys, SegmentMap<C>::domain_end(),
                                      st.key_fn(), tag_sort, &sort_stats);
      profile_.sort = lap(t0);
      profile_.sort_bytes = sort_stats.bytes_sent;
      // The sorted runs form a segment map: the leaves are built and settled on it first, so
      // every leaf is whole with its elements before its load is measured.
      const SegmentMap<C> sorted(bounds);
      construct(sorted);
      loads_.new_window(leaves_.size());
      (void)settle_on(sorted);
      profile_.leaves = lap(t0);
      repartition(nullptr, t0);
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
              std::same_as<std::invoke_result_t<Update&, Element&>, bool>)
  void move_elements(Update&& update) {
    constexpr bool removes = std::same_as<std::invoke_result_t<Update&, Element&>, bool>;
    decltype(store_.elements) moved;
    moved.reserve(store_.elements.size() + store_.pending.size());
    mpi::agree(comm_.get(), [&] {  // update is user code: one rank's throw fails every rank
      for (const auto& e : store_.elements) {
        moved.push_back(e);
        if constexpr (removes) {
          if (!update(moved.back())) moved.pop_back();
        } else {
          update(moved.back());
        }
      }
      reject_invalid(std::span<const Element>(moved), "move_elements");
    });
    moved.insert(moved.end(), store_.pending.begin(), store_.pending.end());  // checked by insert()
    auto saved = snapshot_taking_elements();
    store_.pending.clear();
    store_.elements = std::move(moved);
    transaction(std::move(saved), [&] {
      migration_ = {};
      auto& st = store_;
      st.rekey();
      // 1. Elements go to the holders of their new keys (one merged message per partner).
      LocalLeaves<C> none;
      std::vector<double> no_payload;
      migration_ += place(comm_.get(), map_, none, no_payload, st.elements, st.keys, st.key_fn(), tag_move);
      // 2. The tree adapts: leaves of the new distribution, counted globally.
      const auto old_leaves = std::move(leaves_);
      construct(map_);
      loads_.carry(old_leaves, leaves_);
      // 3. Leaves cut by a part boundary are held whole.
      map_ = settle_on(map_);
      finish_counters();
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
    const std::string who = "irregular::IrregularDomain::rebalance";
    constexpr bool segments = std::same_as<map_type, SegmentMap<C>>, measured = LeafLoads<C, Metric>::is_measured;
    auto t0 = clock::now();
    agree_remap_options(comm_.get(), opt, segments, measured, who);
    loads_.agree_unit(comm_.get(), leaves_);
    const auto plan = plan_remap(comm_.get(), opt, {loads_.total(), double(store_.elements.size()), migration_seconds_, 0}, measured);
    migration_ = {};
    migration_global_ = {};  // a rebalance that does not remap moved nothing
    auto d = start_record(plan, opt);
    d.decision_seconds = lap(t0);
    if (plan.unbalance <= opt.threshold) return d;
    // The leaf work: the loads, copied only when scaled or changed by neighbour shifts.
    std::vector<double> work;
    if (plan.work_scale != 1.0 || (segments && opt.strategy == RemapStrategy::neighbour_shift))
      for (double l : loads_.values()) work.push_back(l * plan.work_scale);
    const std::span<const double> leaf_work = work.empty() ? std::span<const double>(loads_.values()) : work;
    auto next = [&] {
      if constexpr (segments)
        if (!plan.uniform) return capacity_cut(comm_.get(), map_, leaves_, leaf_work, plan.chain_capacities()).map();
      return options_.partitioner.template partition<C>(comm_.get(), LeafChain<C>{leaves_, loads_.values()}, &map_);
    }();
    const auto est = estimate_remap(comm_.get(), next, plan.order, leaves_, leaf_work, std::span<const index_type>(store_.keys),
                                    sizeof(Element) + sizeof(index_type));
    d.cut_seconds = lap(t0);
    if (!judge_profitability(plan, est, opt, migration_bytes_, d)) return d;
    d.remapped = true;
    d.reason = RebalanceReason::remapped;
    d.rounds = 1;
    profile_ = {};
    profile_.partition = d.cut_seconds;
    auto saved_comm = renumber_ranks(comm_, plan.order);  // a new chain order renumbers the ranks
    try {  // only elements that need serialization can fail in flight, and only they pay for a snapshot
      auto body = [&] {
        if constexpr (segments)
          if (opt.strategy == RemapStrategy::neighbour_shift) return shift_neighbours(opt, plan, work, d, t0);
        remap_to(next, t0);
      };
      if constexpr (mpi::is_raw_transportable<Element>) body();
      else transaction(snapshot(), body);
    } catch (const collective_error&) {
      if (saved_comm) comm_ = std::move(*saved_comm);
      throw;
    }
    return finish_record(d, migration_global_, profile_.migration);
  }

  /// Starts a new measurement window (load::Measured): the seconds measured so far are dropped
  /// and leaves are estimated again until timed. Each remap starts a new window too. Local.
  void reset_measurements() {
    loads_.new_window(leaves_.size());
    estimate_loads();
  }

  // ---- queries (local, no communication) ----------------------------------------------------

  [[nodiscard]] const boost::mpi::communicator& comm() const noexcept { return comm_.get(); }
  [[nodiscard]] const Box<dim>& box() const noexcept { return store_.box(); }
  [[nodiscard]] const options_type& options() const noexcept { return options_; }
  /// The ownership map in force: who holds the data of every index and leaf (replicated).
  [[nodiscard]] const map_type& ownership() const noexcept { return map_; }
  /// The replicated H-Tree of the current segments: every rank's private roots with their
  /// owners and the hnodes above them, O(p · depth), computed from the splitters alone.
  [[nodiscard]] ReplicatedHTree<C> replicated_tree() const
    requires std::same_as<map_type, SegmentMap<C>>
  {
    return ReplicatedHTree<C>(map_);
  }
  [[nodiscard]] const LocalLeaves<C>& local_tree() const noexcept { return leaves_; }
  [[nodiscard]] std::size_t local_leaf_count() const noexcept { return leaves_.size(); }
  [[nodiscard]] std::size_t local_element_count() const noexcept { return store_.elements.size(); }
  [[nodiscard]] std::span<Element> local_elements() noexcept { return store_.elements; }
  [[nodiscard]] std::span<const Element> local_elements() const noexcept { return store_.elements; }
  [[nodiscard]] std::span<const index_type> local_keys() const noexcept { return store_.keys; }
  [[nodiscard]] std::span<const double> local_loads() const noexcept { return loads_.values(); }

  [[nodiscard]] Leaf leaf(std::size_t i) {
    IRREGULAR_ASSERT(i < leaves_.size());
    return Leaf{i, leaves_.cell(i), leaves_.interval(i), leaves_.counts_[i], loads_.values()[i], store_.of_leaf(i)};
  }
  /// The local leaves in curve order, as Leaf views: `for (auto leaf : domain.local_leaves())`.
  [[nodiscard]] auto local_leaves() {
    return std::views::iota(std::size_t{0}, leaves_.size()) |
           std::views::transform([this](std::size_t i) { return leaf(i); });
  }

  /// Curve key of a position (finest-level index). Precondition: inside the box.
  [[nodiscard]] index_type key_of_position(const std::array<double, dim>& x) const { return store_.key_of_position(x); }
  [[nodiscard]] index_type key_of(const Element& e) const { return store_.key_of(e); }
  /// The rank that holds the data at a position: after build, move_elements and rebalance an
  /// element at x is on owner_of(x). Throws irregular::out_of_domain outside the box.
  [[nodiscard]] int owner_of(const std::array<double, dim>& x) const {
    if (!box().contains(x)) throw out_of_domain("irregular::IrregularDomain::owner_of: position outside the box");
    return map_.owner(key_of_position(x));
  }
  /// The rank that holds all data of a cell, or -1 when several ranks hold parts of it.
  [[nodiscard]] int owner_of(const Cell<dim>& c) const {
    (void)curve::checked_index<C>(c);
    const auto h = map_.holders(curve::hnode_interval<C>(c));
    return h.size() == 1 ? h.front() : -1;
  }
  /// Local leaf containing a position, or local_leaf_count() when another rank holds it.
  [[nodiscard]] std::size_t leaf_containing(const std::array<double, dim>& x) const {
    if (!box().contains(x)) throw out_of_domain("irregular::IrregularDomain::leaf_containing: position outside the box");
    return leaves_.find(key_of_position(x));
  }

  /// Every leaf whose space meets the stencil cells of local leaf `i` (same, coarser and finer
  /// levels): local ones by id, remote ones as index ranges with a rank holding data there.
  void neighbours(std::size_t i, Neighbourhood<index_type>& out) const {
    IRREGULAR_ASSERT(i < leaves_.size());
    const auto c = leaves_.cell(i);
    neighbours_of_cell<C, S>(leaves_.starts(), leaves_.levels(), c, options_.periodic, out.local);
    out.remote.clear();
    if (comm_.size() == 1) return;  // nothing is remote
    uncovered_stencil_intervals<C, S>(leaves_.starts(), leaves_.levels(), c, options_.periodic,
                                      [&](IndexInterval<index_type> iv) {
      for_each_holder(map_, iv, [&](int r, IndexInterval<index_type> part) {
        if (r != comm_.rank()) out.remote.push_back({part, r});
      });
    });
    std::sort(out.remote.begin(), out.remote.end(), [](const auto& a, const auto& b) {
      return a.interval.start != b.interval.start ? a.interval.start < b.interval.start : a.owner < b.owner;
    });
    out.remote.erase(std::unique(out.remote.begin(), out.remote.end(),
                                 [](const auto& a, const auto& b) {
                                   return a.interval == b.interval && a.owner == b.owner;
                                 }),
                     out.remote.end());
  }
  [[nodiscard]] Neighbourhood<index_type> neighbours(std::size_t i) const {
    Neighbourhood<index_type> out;
    neighbours(i, out);
    return out;
  }

  // ---- the ghost layer (remote-data collection) ---------------------------------------------

  /// A view of one ghost leaf: a read-only copy of a remote leaf and of its elements.
  struct GhostLeaf {
    std::size_t id;  ///< ghost id (0 .. ghosts().size())
    Cell<dim> cell;
    IndexInterval<index_type> interval;
    std::uint64_t count;  ///< elements in it
    int owner;            ///< the rank that holds the leaf
    std::span<const Element> elements;
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
                  "irregular::IrregularDomain::collect_ghosts: the stencil's dimension differs from the domain's");
    return ghosts_.template collect<Reads>(tree("irregular::IrregularDomain::collect_ghosts"), opt, strategy, payload());
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
    auto saved = store_.elements;  // f is user code and may change elements
    std::optional<std::string> failure;
    LeafNeighbours nb;
    const auto& stats = ghosts_.template sweep<S>(tree("irregular::IrregularDomain::sweep"), opt, payload(),
                                                  [&](std::size_t i) {
      if (failure) return;
      try {
        neighbours(i, nb, opt.contact);
        f(leaf(i), std::as_const(nb));
      } catch (const std::exception& e) {
        failure = "irregular::IrregularDomain::sweep: on rank " + std::to_string(comm_.rank()) + ": " + e.what();
      } catch (...) {
        failure = "irregular::IrregularDomain::sweep: unknown exception on rank " + std::to_string(comm_.rank());
      }
    });
    try {
      mpi::agree_on(comm_.get(), failure);
    } catch (const collective_error&) {
      store_.elements = std::move(saved);
      throw;
    }
    return stats;
  }

  /// The ghost leaves of the last collection (sorted by start; ids index ghost()).
  [[nodiscard]] const GhostLayer<C>& ghosts() const noexcept { return ghosts_.layer(); }
  [[nodiscard]] GhostLeaf ghost(std::size_t g) const {
    const auto& l = ghosts_.layer();
    IRREGULAR_ASSERT(g < l.size());
    return GhostLeaf{g, l.cell(g), l.interval(g), l.counts()[g], l.owners()[g], ghosts_.of(g)};
  }
  /// Every ghost element, ghost by ghost in curve order (writable for accumulate_ghosts).
  [[nodiscard]] std::span<Element> ghost_elements() noexcept { return ghosts_.values(); }
  [[nodiscard]] std::span<const Element> ghost_elements() const noexcept { return ghosts_.values(); }
  /// Whether the ghost layer still matches the tree and the map.
  [[nodiscard]] bool ghosts_current() const noexcept { return ghosts_.current(generation_); }

  /// Refreshes the ghost elements from their owners along the cached schedule (one message per
  /// partner). Throws irregular::collective_error on every rank when the
  /// tree or the map changed since the collection. Collective over comm.
  GhostPhase exchange_ghosts() { return ghosts_.exchange(tree("irregular::IrregularDomain::exchange_ghosts"), payload()); }

  /// Sends every ghost element back to its owner, which combines it into its own element with
  /// op(Element& mine, const Element& contribution), partners in rank order (deterministic).
  /// Ghost elements are left as they are (reset them before the next round of contributions).
  /// Throws irregular::collective_error when the ghosts are stale or op throws on any rank; then
  /// no local element has changed. Collective over comm.
  template <class Op>
  GhostPhase accumulate_ghosts(Op&& op) {
    return ghosts_.accumulate(tree("irregular::IrregularDomain::accumulate_ghosts"), std::span<Element>(store_.elements),
                              std::span<const std::size_t>(store_.offsets), op);
  }

  /// The neighbours of local leaf i by id: local leaves and ghosts that it reads under the
  /// domain's stencil and are in `contact` with it (Contact::stencil keeps every leaf meeting a
  /// stencil cell; face, edge and corner keep touching leaves only). Remote leaves are found
  /// among the ghosts of the last collection only. Local, no communication.
  void neighbours(std::size_t i, LeafNeighbours& out, Contact contact = Contact::stencil) const {
    IRREGULAR_ASSERT(i < leaves_.size());
    ghosts_.template neighbours<S>(leaves_, leaves_.cell(i), options_.periodic, contact, out);
  }

  /// What the last build / move_elements / rebalance moved, summed over all ranks (replicated).
  [[nodiscard]] const mpi::MigrationCounters& last_migration() const noexcept { return migration_global_; }

  /// This rank's phase timings of the last build() or remapping rebalance().
  [[nodiscard]] const BuildProfile& last_profile() const noexcept { return profile_; }

  /// Times the work on a local leaf (load::Measured): the seconds join the leaf's load.
  [[nodiscard]] ScopedTimer time_leaf(std::size_t i) {
    static_assert(detail::MeasuredMetric<Metric>, "irregular::IrregularDomain::time_leaf needs load::Measured");
    IRREGULAR_ASSERT(i < leaves_.size());
    return ScopedTimer(loads_.seconds_of(i));
  }

  // ---- collective summaries -----------------------------------------------------------------

  /// Every rank's load, the average and the unbalance. Collective over comm.
  [[nodiscard]] LoadReport load_report() {
    loads_.agree_unit(comm_.get(), leaves_);
    return gather_load_report(comm_.get(), loads_.total());  // loads summed in leaf order by LeafLoads
  }
  /// Number of elements over all ranks, inserted-but-not-built ones included. Collective over comm.
  [[nodiscard]] std::uint64_t global_element_count() const {
    std::uint64_t n = store_.elements.size() + store_.pending.size(), total = 0;
    boost::mpi::all_reduce(comm_.get(), n, total, std::plus<std::uint64_t>());
    return total;
  }
  /// Number of leaves over all ranks. Collective over comm.
  [[nodiscard]] std::uint64_t global_leaf_count() const {
    std::uint64_t n = leaves_.size(), total = 0;
    boost::mpi::all_reduce(comm_.get(), n, total, std::plus<std::uint64_t>());
    return total;
  }

 private:
  using Base = detail::DomainRemap<Element, C, Metric, P>;
  // The state and the remap pipeline live in the (dependent) bases: their names, as members.
  using typename Base::clock;
  using Base::comm_, Base::store_, Base::condition_, Base::options_, Base::map_, Base::leaves_, Base::loads_,
      Base::migration_, Base::migration_global_, Base::profile_, Base::max_leaves_, Base::generation_,
      Base::migration_seconds_, Base::migration_bytes_, Base::ghosts_, Base::tag_sort, Base::tag_move,
      Base::tag_ghost, Base::lap, Base::initial_map, Base::construct, Base::finish_counters, Base::repartition,
      Base::remap_to, Base::shift_neighbours, Base::settle_on, Base::estimate_loads, Base::snapshot,
      Base::snapshot_taking_elements, Base::transaction, Base::guarded;

  void reject_invalid(std::span<const Element> elements, const char* who) const {
    if (auto bad = store_.first_invalid(elements, who, comm_.rank())) throw out_of_domain(*bad);
  }

  typename GhostStore<C, Element>::template Tree<map_type> tree(const char* who) const {
    return {comm_.get(), leaves_, map_, options_.periodic, generation_, tag_ghost, who};
  }
  LeafPayload<Element> payload() const {
    return {std::span<const Element>(store_.elements), std::span<const std::size_t>(store_.offsets)};
  }
};

}  // namespace irregular
