// DomainState: the mutable state of an IrregularDomain and the agreement that guards it: a
// collective step either succeeds on every rank or, when one rank fails, every rank throws the
// same irregular::collective_error and the state is restored as it was. The innermost base of
// IrregularDomain (through DomainRemap, privately; no virtual functions), so the front reads as
// the operations it offers.
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/distributed/domain/build_profile.hpp>
#include <irregular/distributed/domain/options.hpp>
#include <irregular/distributed/domain/element_store.hpp>
#include <irregular/distributed/ghost/store.hpp>
#include <irregular/distributed/htree/leaf_loads.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/communicator.hpp>
#include <irregular/mpi/counters.hpp>

#include <boost/mpi/communicator.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>

namespace irregular::detail {

template <class Element, SpaceFillingCurve C, class Metric, class P>
class DomainState {
 protected:
  static constexpr int dim = C::dim;
  using map_type = typename P::template map_type<C>;
  using condition_type = std::function<bool(const Cell<dim>&, std::size_t)>;
  using options_type = DomainOptions<dim, Metric, P>;

  DomainState(const boost::mpi::communicator& comm, const Box<dim>& box, condition_type condition,
              options_type options)
      : comm_(comm), store_(box), condition_(std::move(condition)), options_(std::move(options)) {}

  // ---- agreement: one rank's failure is every rank's, and nothing changes -----------------

  /// The mutable state of the domain, for restoring after an agreed failure.
  struct Saved {
    ElementStore<Element, C> store;
    map_type map;
    LocalLeaves<C> leaves;
    LeafLoads<C, Metric> loads;
  };
  Saved snapshot() const { return Saved{store_, map_, leaves_, loads_}; }
  /// A snapshot that takes the elements instead of copying them (the caller replaces them).
  Saved snapshot_taking_elements() {
    ElementStore<Element, C> kept(store_.box());
    kept.elements = std::move(store_.elements);
    kept.keys = store_.keys;
    kept.pending = store_.pending;
    kept.offsets = store_.offsets;
    return Saved{std::move(kept), map_, leaves_, loads_};
  }
  /// Runs a collective operation; when it fails with an agreed collective_error every rank
  /// restores `saved` and rethrows, so a rejected call leaves the domain as it was.
  template <class Body>
  void transaction(Saved saved, Body&& body) {
    try {
      body();
    } catch (const collective_error&) {
      store_ = std::move(saved.store);
      map_ = std::move(saved.map);
      leaves_ = std::move(saved.leaves);
      loads_ = std::move(saved.loads);
      throw;
    }
  }
  /// Runs a local step that may throw (user code, bad values) and agrees on its outcome before
  /// the next collective step. Collective over comm.
  template <class F>
  void guarded(F&& f) {
    mpi::agree(comm_.get(), std::forward<F>(f));
  }

  // Each phase has its own tag on the domain's own communicator.
  static constexpr int tag_sort = 11, tag_migrate = 12, tag_move = 13;
  static constexpr int tag_ghost = 21;  // 21..23 collection phases, 24 values, 25 contributions

  mpi::OwnedCommunicator comm_;
  ElementStore<Element, C> store_;
  condition_type condition_;
  options_type options_;
  map_type map_{};
  LocalLeaves<C> leaves_;
  LeafLoads<C, Metric> loads_;
  mpi::MigrationCounters migration_{}, migration_global_{};
  BuildProfile profile_{};
  std::size_t max_leaves_ = 0;
  std::uint64_t generation_ = 0;  ///< bumped whenever the tree or the map changes
  double migration_seconds_ = 0;       ///< this rank's time in the last remap (build or rebalance)
  std::uint64_t migration_bytes_ = 0;  ///< the bytes that remap moved (all ranks)
  GhostStore<C, Element> ghosts_;
};

}  // namespace irregular::detail
