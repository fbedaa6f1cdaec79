// DomainCore: the one core of both domains (IrregularDomain, CellDomain), held by each as a
// member. It owns the communicator, the map, the distributed leaves, their loads, the ghosts,
// the counters, the leaf budget, the tags and one transaction (snapshot, agree, commit or
// restore), and it implements once what both domains do: the initial map, the remap pipeline
// partition -> map -> migrate (baiardi-2001 §3), the neighbour shift, load estimates and the
// rebalance decision (kaddoura-ranka §3.5). A Store plugs in what lives on the leaves.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/box.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/advisor/dry_run.hpp>
#include <irregular/distributed/domain/build_profile.hpp>
#include <irregular/distributed/domain/options.hpp>
#include <irregular/distributed/ghost/hnode_walk.hpp>
#include <irregular/distributed/ghost/store.hpp>
#include <irregular/distributed/htree/leaf_loads.hpp>
#include <irregular/distributed/htree/load_metric.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/htree/reduce_up.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/distributed/partitioners/partitioner.hpp>
#include <irregular/distributed/partitioners/registry.hpp>
#include <irregular/distributed/remap/rebalance_decision.hpp>
#include <irregular/distributed/remap/remap_plan.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/communicator.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/transport.hpp>
#include <irregular/tree/detail/curve_math.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace irregular::detail {

/// What lives on the leaves of a domain: ElementStore (many elements per leaf, keyed by
/// position) or CellStore (one datum per leaf, keyed by the leaf's start).
template <class S, class C>
concept LeafStore = requires(S& s, const S& cs, const LocalLeaves<C>& leaves, std::size_t i) {
  typename S::value_type;
  { S::per_leaf } -> std::convertible_to<bool>;
  { S::item_bytes } -> std::convertible_to<std::size_t>;
  { cs.box() } -> std::convertible_to<const Box<C::dim>&>;
  { cs.size() } -> std::convertible_to<std::size_t>;
  {cs.of_leaf(i)};
  { cs.keys_of(leaves) } -> std::convertible_to<std::span<const typename C::index_type>>;
  { cs.payload() } -> std::same_as<LeafPayload<typename S::value_type>>;
  s.touch_headroom();
}
&&std::copy_constructible<S>;

/// A metric whose loads are computed without user code and cannot fail.
template <class M, int D>
concept NothrowMetric =
    !PerElementMetric<M> && requires(const M& m, const Cell<D>& c, std::size_t n) {
  { m(c, n) }
  noexcept;
};

/// Leaf i's first value is value i: the offsets of a store with one value per leaf.
struct IdentityOffsets {
  std::size_t operator[](std::size_t i) const noexcept { return i; }
};

template <class Store, SpaceFillingCurve C, class Metric, class P>
requires LeafStore<Store, C>
class DomainCore {
 public:
  static constexpr int dim = C::dim;
  using curve_type = C;
  using store_type = Store;
  using index_type = typename C::index_type;
  using map_type = typename P::template map_type<C>;
  using options_type = DomainOptions<dim, Metric, P>;
  using value_type = typename Store::value_type;
  using ghost_store = GhostStore<C, value_type, Store::per_leaf>;
  using clock = std::chrono::steady_clock;
  static constexpr bool measured = LeafLoads<C, Metric>::is_measured;
  static constexpr bool segments = std::same_as<map_type, SegmentMap<C>>;

  // Each phase has its own tag on the domain's own communicator (tag_ghost .. tag_ghost + 4 are
  // the ghost store's).
  static constexpr int tag_sort = 11, tag_migrate = 12, tag_move = 13, tag_families = 14,
                       tag_balance = 15, tag_checkpoint = 16,
                       tag_hnodes = 17;  // and 18
  static constexpr int tag_ghost = 21;
  static constexpr int tag_advisor = 31;  // .. 35: compare_partitioners, partitioner::Auto

  /// Validates the box, the partitioner and the held level, then `more()` (the front's own
  /// input), all in one agreement. Collective over comm (duplicates it).
  template <class More>
  DomainCore(const boost::mpi::communicator& comm, const Box<dim>& box, options_type options,
             More&& more)
      : comm_(comm), store_(box), options_(std::move(options)) {
    mpi::agree(comm_.get(), [&] {
      box.validate();
      options_.partitioner.template check<C>(comm_.size());
      check_hold_level();
      more();
    });
    max_leaves_ = options_.max_leaves_per_rank ? options_.max_leaves_per_rank
                                               : default_leaf_budget(comm_.get());
    map_ = initial_map();
  }

  // ---- the transaction: one rank's failure is every rank's, and nothing changes ---------------

  struct Saved {
    Store store;
    map_type map;
    LocalLeaves<C> leaves;
    LeafLoads<C, Metric> loads;
    std::uint64_t generation;
  };
  [[nodiscard]] Saved snapshot() const { return Saved{store_, map_, leaves_, loads_, generation_}; }
  void restore(Saved&& s) {
    generation_ = s.generation;
    store_ = std::move(s.store);
    map_ = std::move(s.map);
    leaves_ = std::move(s.leaves);
    loads_ = std::move(s.loads);
  }
  /// Runs a collective step; when it fails with an agreed collective_error every rank restores
  /// `saved` and rethrows, so a rejected call leaves the domain as it was.
  template <class Body>
  decltype(auto) transaction(Saved saved, Body&& body) {
    try {
      return body();
    } catch (const collective_error&) {
      restore(std::move(saved));
      throw;
    }
  }
  /// Whether a remap can fail after data moved: only when values need serialization (a user
  /// serialize may throw) or the metric is user code (it is evaluated on the arrivals).
  static constexpr bool remap_can_fail =
      !mpi::is_raw_transportable<value_type> || !NothrowMetric<Metric, dim>;
  /// A remap, in a transaction only when it can fail (the snapshot copies every value).
  template <class Body>
  void remap_transaction(Body&& body) {
    if constexpr (remap_can_fail)
      transaction(snapshot(), std::forward<Body>(body));
    else
      body();
  }
  /// Runs a local step that may throw (user code, bad values) and agrees on its outcome before
  /// the next collective step. Collective over comm.
  template <class F>
  decltype(auto) guarded(F&& f) {
    return mpi::agree(comm_.get(), std::forward<F>(f));
  }

  // ---- the remap pipeline ----------------------------------------------------------------

  /// Before the first partition everything is on rank 0, or on the map's default.
  [[nodiscard]] map_type initial_map() const {
    if constexpr (std::constructible_from<map_type, int>)
      return map_type(comm_.size());
    else
      return map_type{};
  }
  void check_hold_level() const {
    const int h = options_.hold_level;
    if (h > C::max_level)
      throw invalid_argument("irregular: hold_level " + std::to_string(h) + " beyond max_level " +
                             std::to_string(C::max_level));
    if (h >= 0 && !map_type::contiguous_segments)
      throw invalid_argument(
          "irregular: hold_level needs a partitioner whose parts are curve segments");
  }

  static double lap(clock::time_point& t0) {
    const auto t1 = clock::now();
    const double s = std::chrono::duration<double>(t1 - t0).count();
    t0 = t1;
    return s;
  }
  // The tree or the map changed: a new generation, so stale ghosts are detected.
  void finish_counters() {
    migration_global_ = mpi::all_reduce_sum(comm_.get(), migration_);
    ++generation_;
  }

  /// Leaf loads from the metric (local; the metric may be user code and throw).
  void estimate_loads() {
    loads_.estimate(
        options_.load, leaves_, [this](std::size_t i) { return store_.of_leaf(i); }, comm_.rank());
  }

  /// The partitioner maps the (settled) leaves; leaves and values move to the new map.
  void repartition(const map_type* current, clock::time_point& t0) {
    loads_.agree_unit(comm_.get(), leaves_);
    auto next = hold_cells(options_.partitioner.template partition<C>(
        comm_.get(), LeafChain<C>{leaves_, loads_.values(), {}, traffic()}, current));
    profile_.partition = lap(t0);
    remap_to(next, t0);
  }
  void remap_to(const map_type& next, clock::time_point& t0) {
    // A remap starts a new measurement window: old seconds would make long-lived leaves heavy.
    loads_.new_window(leaves_.size());
    map_ = settle_on(next, true);
    profile_.migration = lap(t0);
    finish_counters();
    std::tie(migration_seconds_, migration_bytes_) =
        std::tuple(profile_.migration, migration_global_.bytes);
  }

  /// Holds every leaf whole on `map` and places leaves (with their measured seconds) and values
  /// there; refreshes leaf runs and loads. `runs_current`: the store's leaf runs and the loads
  /// match the leaves now, so after a segment shift only the arrivals are estimated. Returns
  /// the settled map.
  template <OwnershipMap M>
  M settle_on(const M& map, bool runs_current = false) {
    if constexpr (std::same_as<M, AnyOwnershipMap<C>>)  // the held map's own transport
      return std::visit([&](const auto& m) { return M(settle_on(m, runs_current)); },
                        map.variant());
    else
      return settle_on_held(map, runs_current);
  }
  template <OwnershipMap M>
  M settle_on_held(const M& map, bool runs_current) {
    std::vector<double> payload;  // only measured seconds are worth carrying
    if constexpr (measured) payload = loads_.payload(leaves_.size());
    ShiftLayout layout;
    M settled = store_.move(comm_.get(), map, leaves_, payload, tag_migrate, migration_,
                            runs_current, &layout);
    loads_.receive(std::move(payload), leaves_.size());
    guarded([&] {  // the metric may be user code
      if constexpr (!measured) {
        if (runs_current && layout.spliced) {
          loads_.shift(
              layout, options_.load, leaves_, [this](std::size_t i) { return store_.of_leaf(i); },
              comm_.rank());
          return;
        }
      }
      estimate_loads();
    });
    loads_.agree_unit(comm_.get(), leaves_);
    if (options_.resident_headroom) {  // once per allocation: a no-op when already written
      store_.touch_headroom();
      leaves_.touch_headroom();
      loads_.touch_headroom();
    }
    return settled;
  }

  /// The map with its cuts moved out of the cells of options_.hold_level (replicated: computed
  /// from the segments alone, no communication).
  [[nodiscard]] map_type hold_cells(map_type next) const {
    if constexpr (map_type::contiguous_segments) {
      const int h = options_.hold_level;
      if (h < 0) return next;
      std::vector<Cell<dim>> cut;
      for (int r = 1; r < next.parts(); ++r) {
        const index_type b = next.segment(r).start;
        if (b == detail::index_end<C>() || b % detail::span_at<C>(h) == 0) continue;
        const auto c = detail::cell_at<C>(detail::ancestor_start<C>(b, h), h);
        if (cut.empty() || !(cut.back() == c)) cut.push_back(c);
      }
      return cut.empty() ? next : next.hold_whole(std::span<const Cell<dim>>(cut));
    } else {
      return next;
    }
  }

  /// Rounds of neighbour shifts with the leaf work as payload; the loads are estimated anew after.
  void shift_neighbours(const RebalanceOptions& opt, const RemapPlan& plan,
                        std::vector<double>& work, RebalanceDecision& d, clock::time_point& t0) {
    const auto shift = [&](const auto& offsets) {  // read after every round: a container
      return neighbour_shift(
          comm_.get(), map_, leaves_, work, offsets, plan.capacity, opt.threshold,
          opt.max_rounds ? opt.max_rounds : 2 * comm_.size() + 2, [&](const map_type& m) {
            mpi::MigrationCounters sent;
            (void)store_.move(comm_.get(), m, leaves_, work, tag_migrate, sent, true, nullptr);
            migration_ += sent;
            return sent;
          });
    };
    const auto rep = [&] {
      if constexpr (Store::per_leaf)
        return shift(IdentityOffsets{});  // one datum per leaf
      else
        return shift(store_.offsets);
    }();
    std::tie(d.rounds, d.unbalance_after, d.elements_to) =
        std::tuple(rep.rounds, rep.unbalance, rep.elements_to);
    loads_.new_window(leaves_.size());
    guarded([&] { estimate_loads(); });
    loads_.agree_unit(comm_.get(), leaves_);
    profile_.migration = lap(t0);
    finish_counters();
    std::tie(migration_seconds_, migration_bytes_) =
        std::tuple(profile_.migration, migration_global_.bytes);
  }

  /// Takes the leaves read from a checkpoint (an even share, in curve order, their values already
  /// in the store) with their stored seconds (load::Measured; empty otherwise), and lets the
  /// partitioner map them by their loads. Collective over comm.
  void adopt(LocalLeaves<C>&& leaves, std::vector<double>&& seconds) {
    leaves_ = std::move(leaves);
    loads_.new_window(leaves_.size());
    if constexpr (measured)
      if (seconds.size() == leaves_.size())
        loads_.adopt_seconds(std::move(seconds), leaves_.size());
    guarded([&] { estimate_loads(); });
    migration_ = {};
    profile_ = {};
    auto t0 = clock::now();
    loads_.agree_unit(comm_.get(), leaves_);
    auto next = hold_cells(options_.partitioner.template partition<C>(
        comm_.get(), LeafChain<C>{leaves_, loads_.values(), {}, traffic()}, nullptr));
    profile_.partition = lap(t0);
    // Not remap_to: the stored seconds travel with their leaves and their window goes on, so a
    // save right after a load writes the same loads.
    map_ = settle_on(next);
    profile_.migration = lap(t0);
    finish_counters();
  }

  // ---- the rebalance decision (baiardi-2001 §3, kaddoura-ranka §3.4–3.5) -----------------

  /// Remaps when the unbalance exceeds opt.threshold and, with a horizon, when the remap pays
  /// for itself; by opt.strategy, through the chain order chosen. Collective over comm.
  RebalanceDecision rebalance(RebalanceOptions opt, const std::string& who) {
    auto t0 = clock::now();
    agree_remap_options(comm_.get(), opt, segments, measured, who);
    if (opt.strategy == RemapStrategy::neighbour_shift && options_.hold_level >= 0)
      guarded([&] {  // the shifts move cuts freely; agreed options are the same on every rank
        throw invalid_argument(who +
                               ": the neighbour shift cannot keep the cells of hold_level whole");
      });
    loads_.agree_unit(comm_.get(), leaves_);
    const auto plan = plan_remap(
        comm_.get(), opt, {loads_.total(), double(store_.size()), migration_seconds_, 0}, measured);
    migration_ = {};
    migration_global_ = {};  // a rebalance that does not remap moved nothing
    auto d = start_record(plan, opt);
    d.decision_seconds = lap(t0);
    if (plan.unbalance <= opt.threshold) return d;
    // The leaf work: the loads, copied only when scaled or changed by neighbour shifts.
    std::vector<double> work;
    if (plan.work_scale != 1.0 || (segments && opt.strategy == RemapStrategy::neighbour_shift))
      for (double l : loads_.values()) work.push_back(l * plan.work_scale);
    const std::span<const double> leaf_work =
        work.empty() ? std::span<const double>(loads_.values()) : work;
    const auto next = hold_cells(next_map(plan, leaf_work));
    if constexpr (requires { options_.partitioner.last_choice(); })
      if (const auto* c = options_.partitioner.last_choice()) d.choice = *c;
    const auto est =
        estimate_remap(comm_.get(), next, plan.order, leaves_, leaf_work, store_.keys_of(leaves_),
                       Store::item_bytes, loads_.total() * plan.work_scale);
    d.cut_seconds = lap(t0);
    if (!judge_profitability(plan, est, opt, migration_bytes_, d)) return d;
    commit_remap(opt, plan, next, work, d, t0);
    return finish_record(d, migration_global_, profile_.migration);
  }

  /// The partitioner's next map; with capacities or a new chain order, the chain carries the
  /// capacities in chain order and the leaf work (the partitioner is the only door to a map).
  map_type next_map(const RemapPlan& plan, std::span<const double> leaf_work) {
    const std::vector<double> capacities =
        plan.uniform ? std::vector<double>{} : plan.chain_capacities();
    const auto loads = plan.uniform ? std::span<const double>(loads_.values()) : leaf_work;
    return options_.partitioner.template partition<C>(
        comm_.get(), LeafChain<C>{leaves_, loads, capacities, traffic()}, &map_);
  }

  /// Moves the data to `next` (or by neighbour shifts), renumbering the ranks for a new chain
  /// order; on an agreed failure every rank is back as it was, its numbering too.
  void commit_remap(const RebalanceOptions& opt, const RemapPlan& plan, const map_type& next,
                    std::vector<double>& work, RebalanceDecision& d, clock::time_point& t0) {
    d.remapped = true;
    d.reason = RebalanceReason::remapped;
    d.rounds = 1;
    profile_ = {};
    profile_.partition = d.cut_seconds;
    auto saved_comm = renumber_ranks(comm_, plan.order);  // a new chain order renumbers the ranks
    try {
      remap_transaction([&] {
        if constexpr (segments)
          if (opt.strategy == RemapStrategy::neighbour_shift)
            return shift_neighbours(opt, plan, work, d, t0);
        remap_to(next, t0);
      });
    } catch (const collective_error&) {
      if (saved_comm) comm_ = std::move(*saved_comm);
      throw;
    }
    // Informed fault prevention's cache names its partners by rank: under the new numbering
    // every rank forgets it (a failed remap kept the old numbering, and the cache with it).
    if (saved_comm) ghosts_.extension().forget();
  }

  // ---- the partitioner advisor (distributed/advisor) --------------------------------------

  /// What the leaves carry when they move or are read as ghosts.
  [[nodiscard]] LeafTraffic<dim> traffic() const {
    return {options_.periodic, Store::per_leaf, sizeof(value_type), Store::remap_wire(), measured};
  }
  void check_built(const char* who) const {
    if (generation_ == 0)
      throw invalid_argument(std::string(who) + ": the domain is not built yet");
  }
  /// The dry run of every candidate under stencil S on the live leaves. Collective over comm.
  template <Stencil S>
  advisor::PartitionerComparison<C> compare_partitioners(std::span<const std::string> names,
                                                         const advisor::AdvisorOptions& opt,
                                                         const char* who) {
    guarded([&] { check_built(who); });
    loads_.agree_unit(comm_.get(), leaves_);
    const advisor::LiveTree<C, map_type> live{comm_.get(), leaves_,   loads_.values(),
                                              &map_,       traffic(), tag_advisor};
    return advisor::compare<S>(live, names, opt);
  }
  /// Moves leaves and values to `next` (held whole, and the cells of hold_level), as a remapping
  /// rebalance would; a map for another number of parts is refused on every rank. Collective
  /// over comm.
  void apply_map(const AnyOwnershipMap<C>& any, const char* who) {
    if constexpr (std::same_as<map_type, AnyOwnershipMap<C>>) {
      apply_map(any, who, 0);
    } else {
      const map_type* m = nullptr;
      if constexpr (holds_kind<map_type>(
                        static_cast<typename AnyOwnershipMap<C>::variant_type*>(nullptr)))
        m = any.template get_if<map_type>();
      guarded([&] {
        if (m == nullptr)
          throw invalid_argument(std::string(who) +
                                 ": the map is of another kind than the domain's partitioner "
                                 "makes (a domain with partitioner::ByName or Auto takes any)");
      });
      apply_map(*m, who, 0);
    }
  }
  template <class M, class... Ms>
  static constexpr bool holds_kind(const std::variant<Ms...>*) {
    return (std::same_as<M, Ms> || ...);
  }
  void apply_map(const map_type& next, const char* who, int) {
    guarded([&] {
      check_built(who);
      if (next.parts() != comm_.size())
        throw invalid_argument(std::string(who) + ": a map of " + std::to_string(next.parts()) +
                               " parts on " + std::to_string(comm_.size()) + " ranks");
    });
    auto t0 = clock::now();
    migration_ = {};
    profile_ = {};
    remap_transaction([&] { remap_to(hold_cells(next), t0); });
  }

  // ---- measured loads (load::Measured) ---------------------------------------------------

  /// Times the work on a local leaf: the seconds join the leaf's load.
  [[nodiscard]] ScopedTimer time_leaf(std::size_t i) {
    static_assert(measured, "irregular: time_leaf needs the load::Measured metric");
    IRREGULAR_ASSERT(i < leaves_.size());
    return ScopedTimer(loads_.seconds_of(i));
  }
  /// A new measurement window: the seconds so far are dropped. Local.
  void reset_measurements() {
    loads_.new_window(leaves_.size());
    estimate_loads();
  }

  // ---- queries ---------------------------------------------------------------------------

  /// Every rank's load, the average and the unbalance. Collective over comm.
  [[nodiscard]] LoadReport load_report() {
    loads_.agree_unit(comm_.get(), leaves_);
    return gather_load_report(comm_.get(), loads_.total());  // summed in leaf order by LeafLoads
  }
  /// Number of leaves over all ranks. Collective over comm.
  [[nodiscard]] std::uint64_t global_leaf_count() const {
    std::uint64_t n = leaves_.size(), total = 0;
    boost::mpi::all_reduce(comm_.get(), n, total, std::plus<std::uint64_t>());
    return total;
  }
  /// The upward pass over the leaves, `leaf_value(i)` on leaf i (distributed/htree/reduce_up.hpp),
  /// the values stamped with the tree's state. Collective over comm.
  template <class LeafValue, class Combine>
  auto reduce_up(LeafValue&& leaf_value, Combine& combine) const {
    auto values = irregular::reduce_up(comm_.get(), leaves_, leaf_value, combine);
    values.set_stamp(generation_ + 1);
    return values;
  }
  /// Every leaf's walk over `values` (distributed/ghost/hnode_walk.hpp), `elements_of(i)` the
  /// values on leaf i (raw: they travel as bytes), once every rank agreed that `values` are the
  /// current tree's. Collective over comm.
  template <class E, class V, class Open, class Accept, class Strategy, class ElementsOf>
  HnodeStats walk_hnodes(HnodeValues<C, V>& values, Open& open, Accept& accept, Strategy& strategy,
                         ElementsOf elements_of, const char* who) const {
    static_assert(std::is_trivially_copyable_v<E>,
                  "walk_hnodes: the leaves' values travel as bytes");
    mpi::agree(comm_.get(), [&] {
      if (values.stamp() != generation_ + 1)
        throw invalid_argument(std::string(who) +
                               ": the hnode values are from another tree or map; call reduce_up "
                               "after the last change");
    });
    hnodes::WalkInput<C, V, E, Open> in{comm_.get(),  values, leaves_,   elements_of,
                                        store_.box(), open,   tag_hnodes};
    if constexpr (std::same_as<std::remove_cvref_t<Strategy>, hnodes::Kept>)
      return hnodes::walk(in, accept, kept_walks_.template of<V, std::remove_cvref_t<Open>>());
    else
      return hnodes::walk(in, accept, strategy);
  }
  /// What a ghost collection reads about the tree, for one call named `who`.
  [[nodiscard]] typename ghost_store::template Tree<map_type> tree(const char* who) const {
    return {comm_.get(), leaves_, map_, options_.periodic, generation_, tag_ghost, who};
  }
  /// Calls f(tree) with what a collection reads, its map the held one when the domain's is
  /// AnyOwnershipMap: a segment map knows its private roots, so interior leaves skip the search.
  template <class F>
  decltype(auto) with_held_tree(const char* who, F&& f) const {
    if constexpr (std::same_as<map_type, AnyOwnershipMap<C>>)
      return std::visit(
          [&](const auto& m) -> decltype(auto) {
            return f(typename ghost_store::template Tree<std::remove_cvref_t<decltype(m)>>{
                comm_.get(), leaves_, m, options_.periodic, generation_, tag_ghost, who});
          },
          map_.variant());
    else
      return f(tree(who));
  }
  [[nodiscard]] LeafPayload<value_type> payload() const { return store_.payload(); }

  mpi::OwnedCommunicator comm_;
  Store store_;
  options_type options_;
  map_type map_{};
  LocalLeaves<C> leaves_;
  LeafLoads<C, Metric> loads_;
  ghost_store ghosts_;
  mpi::MigrationCounters migration_{}, migration_global_{};
  BuildProfile profile_{};
  mutable hnodes::KeptStates kept_walks_;  // the strategy of walks that name none
  std::size_t max_leaves_ = 0;
  std::uint64_t generation_ = 0;       ///< bumped whenever the tree or the map changes
  double migration_seconds_ = 0;       ///< this rank's time in the last remap
  std::uint64_t migration_bytes_ = 0;  ///< the bytes that remap moved (all ranks)
};

}  // namespace irregular::detail
