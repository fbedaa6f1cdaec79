// DomainRemap: the remap pipeline of an IrregularDomain (baiardi-2001 §3): the tree's leaves
// under a map, the partitioner's map of the settled leaves, and moving leaves (with their
// loads) and elements onto a map, whole, by one remap or by rounds of neighbour shifts. A
// private base of IrregularDomain over DomainState.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/distributed/domain/domain_state.hpp>
#include <irregular/distributed/htree/leaf_loads.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/partitioners/partitioner.hpp>
#include <irregular/distributed/remap/rebalance_decision.hpp>
#include <irregular/distributed/remap/remap.hpp>
#include <irregular/distributed/remap/remap_plan.hpp>  // neighbour shift, decision record
#include <irregular/distributed/remap/segment_shift.hpp>
#include <irregular/mpi/counters.hpp>

#include <chrono>
#include <concepts>
#include <cstddef>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

namespace irregular::detail {

template <class Element, SpaceFillingCurve C, class Metric, class P>
class DomainRemap : public DomainState<Element, C, Metric, P> {
  using State = DomainState<Element, C, Metric, P>;

 protected:
  using State::State;
  using typename State::map_type;
  using index_type = typename C::index_type;
  using State::comm_, State::store_, State::condition_, State::options_, State::map_, State::leaves_, State::loads_,
      State::migration_, State::migration_global_, State::profile_, State::max_leaves_, State::generation_,
      State::migration_seconds_, State::migration_bytes_, State::tag_migrate, State::guarded;

  using clock = std::chrono::steady_clock;
  static double lap(clock::time_point& t0) {
    const auto t1 = clock::now();
    const double s = std::chrono::duration<double>(t1 - t0).count();
    t0 = t1;
    return s;
  }

  /// Before the first build everything is on rank 0: the map that says so.
  map_type initial_map() const {
    if constexpr (std::constructible_from<map_type, int>) return map_type(comm_.size());
    else return map_type{};
  }

  /// The leaves of the tree under `map` (the condition is user code, the budget may run out).
  template <OwnershipMap M>
  void construct(const M& map) {
    guarded([&] {
      leaves_ = construct_leaves(comm_.get(), map, std::span<const index_type>(store_.keys), condition_, max_leaves_);
    });
  }

  // The tree or the map changed: a new generation, so stale ghosts are detected.
  void finish_counters() {
    migration_global_ = mpi::all_reduce_sum(comm_.get(), migration_);
    ++generation_;
  }

  /// The partitioner maps the (settled) leaves; leaves and elements move to the new map.
  void repartition(const map_type* current, clock::time_point& t0) {
    loads_.agree_unit(comm_.get(), leaves_);
    auto next = options_.partitioner.template partition<C>(comm_.get(), LeafChain<C>{leaves_, loads_.values()}, current);
    profile_.partition = lap(t0);
    remap_to(next, t0);
  }
  void remap_to(const map_type& next, clock::time_point& t0) {
    // A remap starts a new measurement window: old seconds would make long-lived leaves heavy.
    loads_.new_window(leaves_.size());
    map_ = settle_on(next, true);  // every settle_on indexed the runs of the leaves it left
    profile_.migration = lap(t0);
    finish_counters();
    std::tie(migration_seconds_, migration_bytes_) = std::tuple(profile_.migration, migration_global_.bytes);
  }
  /// Rounds of neighbour shifts with the leaf work as payload; the loads are estimated anew after.
  void shift_neighbours(const RebalanceOptions& opt, const RemapPlan& plan, std::vector<double>& work,
                        RebalanceDecision& d, clock::time_point& t0) {
    const auto rep = neighbour_shift(comm_.get(), map_, leaves_, work, store_.offsets, plan.capacity, opt.threshold,
                                     opt.max_rounds ? opt.max_rounds : 2 * comm_.size() + 2, [&](const map_type& m) {
      mpi::MigrationCounters sent;
      (void)settle_on_map(comm_.get(), m, leaves_, work, store_.elements, store_.keys, store_.key_fn(), tag_migrate, sent,
                          &store_.offsets);
      migration_ += sent;
      return sent;
    });
    std::tie(d.rounds, d.unbalance_after, d.elements_to) = std::tuple(rep.rounds, rep.unbalance, rep.elements_to);
    loads_.new_window(leaves_.size());
    guarded([&] { estimate_loads(); });
    loads_.agree_unit(comm_.get(), leaves_);
    profile_.migration = lap(t0);
    finish_counters();
    std::tie(migration_seconds_, migration_bytes_) = std::tuple(profile_.migration, migration_global_.bytes);
  }

  /// Holds every leaf whole on `map` and places leaves (with their measured seconds or loads)
  /// and elements there; refreshes leaf runs and loads. `runs_current`: the element store's leaf
  /// runs and the loads match the leaves now, so the remap keeps them up to date instead of
  /// indexing anew, and after a segment shift only the arrivals are estimated (the loads of
  /// other metrics than measured ones are their estimates). Returns the settled map.
  template <OwnershipMap M>
  M settle_on(const M& map, bool runs_current = false) {
    // Only measured seconds are worth carrying; other metrics are estimated again below.
    std::vector<double> payload;
    if constexpr (LeafLoads<C, Metric>::is_measured) payload = loads_.payload(leaves_.size());
    ShiftLayout layout;
    M settled = settle_on_map(comm_.get(), map, leaves_, payload, store_.elements, store_.keys, store_.key_fn(),
                              tag_migrate, migration_, runs_current ? &store_.offsets : nullptr, &layout);
    if (!runs_current) {
      leaves_.reserve_headroom();
      store_.index_leaves(leaves_);
    }
    loads_.receive(std::move(payload), leaves_.size());
    guarded([&] {  // the metric may be user code
      if constexpr (!LeafLoads<C, Metric>::is_measured) {
        if (runs_current && layout.spliced) {
          loads_.shift(layout, options_.load, leaves_, [this](std::size_t i) { return store_.of_leaf(i); },
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

  /// Leaf loads from the metric (local; the metric may be user code and throw).
  void estimate_loads() {
    loads_.estimate(options_.load, leaves_, [this](std::size_t i) { return store_.of_leaf(i); }, comm_.rank());
  }
};

}  // namespace irregular::detail
