// GhostStore: the ghost side of a distributed tree — the layer of the last collection, the
// extension cache of informed fault prevention, and the ghost copies of a per-leaf payload —
// shared by the element domain (payload: a leaf's elements) and the cell-data domain (one datum
// per leaf). baiardi-collecting-remote-data §3; DESIGN.md "The ghost layer".
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/distributed/ghost/collection.hpp>
#include <irregular/distributed/ghost/layer.hpp>
#include <irregular/distributed/ghost/request_answer.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/transport.hpp>
#include <irregular/tree/neighbours.hpp>

#include <boost/mpi/communicator.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace irregular {

/// The neighbours of one local leaf by id: local leaf ids and ghost ids.
struct LeafNeighbours {
  std::vector<std::size_t> local;  ///< neighbouring local leaf ids
  std::vector<std::size_t> ghost;  ///< neighbouring ghost ids
};

/// Local values of a per-leaf payload: leaf i's are values[offsets[i] .. offsets[i+1]).
template <class T>
struct LeafPayload {
  std::span<const T> values;             ///< every local leaf's values, leaf after leaf
  std::span<const std::size_t> offsets;  ///< size() + 1 offsets into values.
};

/// The ghost layer with the ghost copies of a payload of T. `PerLeaf`: one value per leaf (cell
/// data) rather than a leaf's element count of them.
template <SpaceFillingCurve C, class T, bool PerLeaf = false>
class GhostStore {
 public:
  /// Everything a collection reads about the tree, for one call.
  template <OwnershipMap M>
  struct Tree {
    const boost::mpi::communicator& comm;  ///< the ranks that collect together
    const LocalLeaves<C>& leaves;          ///< this rank's leaves
    const M& map;                          ///< the ownership map in force
    Periodicity<C::dim> periodic;          ///< which axes wrap around
    std::uint64_t generation;              ///< 0: not built
    int tag;                               ///< tags tag .. tag+4 are the store's
    const char* who;                       ///< the public entry point, for messages
    /// Another store's extension cache, to share: informed fault prevention on the same tree
    /// under a stencil it covers then sends no extension of its own.
    ExtensionCache<C>* extension = nullptr;
  };

  /// Collects under stencil S with `strategy` and fills the ghost copies of `local`. Throws
  /// irregular::collective_error on every rank for a tree that is not built or an empty level
  /// range, or when a value's serialize() throws on any rank; then the previous layer and its
  /// ghost copies stay. Collective over tree.comm.
  template <Stencil S, class G, OwnershipMap M>
  const GhostStats& collect(const Tree<M>& tree, const GhostOptions& opt, const G& strategy,
                            LeafPayload<T> local) {
    check_options(tree, opt);
    const auto raw = raw_payload<G>(local);
    // The new layer and its values are built aside and replace the old ones only once filled.
    GhostLayer<C> layer = strategy.template collect<S>(input(tree, opt, raw));
    std::vector<T> values;
    std::vector<std::size_t> offsets;
    layer.stats().values = size_and_fill(tree, layer, local, raw, values, offsets);
    layer.template prepare_exchange<T>(layer_, local.offsets, offsets);
    layer_ = std::move(layer);
    values_ = std::move(values);
    offsets_ = std::move(offsets);
    return layer_.stats();
  }

  /// Request/answer with excess parallelism: run(i) for every local leaf i, those that read
  /// nothing remote under S while requests and answers travel, the others once the ghosts are
  /// filled. Collective over tree.comm.
  template <Stencil S, OwnershipMap M, class Run>
  const GhostStats& sweep(const Tree<M>& tree, const GhostOptions& opt, LeafPayload<T> local,
                          Run&& run) {
    check_options(tree, opt);
    clear();
    const auto& leaves = tree.leaves;
    std::vector<std::size_t> deferred;
    std::size_t next = 0;
    auto work = [&] {  // one leaf that needs nothing remote per call
      while (next < leaves.size()) {
        const std::size_t i = next++;
        bool remote = false;
        if (tree.comm.size() > 1)
          uncovered_stencil_intervals<C, S>(
              leaves.starts(), leaves.levels(), leaves.cell(i), tree.periodic,
              [&](IndexInterval<typename C::index_type>) { remote = true; });
        if (remote) {
          deferred.push_back(i);
          continue;
        }
        run(i);
        return true;
      }
      return false;
    };
    const auto raw = raw_payload<ghost::RequestAnswer>(local);
    layer_ = ghost::RequestAnswer{}.template collect<S>(input(tree, opt, raw), work);
    while (work()) {
    }
    try {
      layer_.stats().values = size_and_fill(tree, layer_, local, raw, values_, offsets_);
    } catch (const collective_error&) {
      clear();  // no layer rather than one without its values
      throw;
    }
    for (std::size_t i : deferred) run(i);
    return layer_.stats();
  }

  /// Refreshes the ghost copies along the cached schedule. Throws irregular::collective_error
  /// on every rank when a value's serialize() throws on any rank; then no ghost copy has
  /// changed. Collective over tree.comm.
  template <OwnershipMap M>
  GhostPhase exchange(const Tree<M>& tree, LeafPayload<T> local) {
    check_current(tree);
    return fill(tree, layer_, local, values_, offsets_);
  }

  /// Sends the ghost copies back to their owners, combined into `local` with
  /// op(T& mine, const T& contribution). The local values op may change (those of scheduled
  /// leaves) are restored when it, or a value's serialize(), throws on any rank; every rank then
  /// throws the same irregular::collective_error. Collective over tree.comm.
  template <OwnershipMap M, class Op>
  GhostPhase accumulate(const Tree<M>& tree, std::span<T> local,
                        std::span<const std::size_t> local_offsets, Op&& op) {
    check_current(tree);
    std::vector<T> kept;
    auto for_each_scheduled = [&](auto&& f) {
      for (std::size_t k = 0; k < layer_.send_ranks().size(); ++k)
        for (std::size_t i : layer_.send_leaves(k))
          for (std::size_t j = local_offsets[i]; j < local_offsets[i + 1]; ++j) f(local[j]);
    };
    for_each_scheduled([&](const T& v) { kept.push_back(v); });
    GhostPhase sent;
    auto run = [&] {
      sent = layer_.accumulate(tree.comm, tree.tag + 4, local, local_offsets,
                               std::span<const T>(values_), std::span<const std::size_t>(offsets_),
                               op, tree.who);
    };
    try {
      // Serialized values agree inside the transfer, op included; raw ones only move bytes there.
      if constexpr (mpi::is_raw_transportable<T>)
        mpi::agree(tree.comm, run);
      else
        run();
    } catch (const collective_error&) {
      std::size_t at = 0;
      for_each_scheduled([&](T& v) { v = kept[at++]; });
      throw;
    }
    return sent;
  }

  /// Local leaf ids and ghost ids that a leaf with `cell` reads under S and in `contact`.
  template <Stencil S>
  void neighbours(const LocalLeaves<C>& leaves, const Cell<C::dim>& cell, Periodicity<C::dim> per,
                  Contact contact, LeafNeighbours& out) const {
    detail::read_by<C, S>(leaves.starts(), leaves.levels(), cell, per, contact, LevelRange::all(),
                          out.local);
    out.ghost.clear();
    if (layer_.size() > 0)
      detail::read_by<C, S>(layer_.starts(), layer_.levels(), cell, per, contact, LevelRange::all(),
                            out.ghost);
  }

  /// The ghost leaves and the schedule that fills them.
  [[nodiscard]] const GhostLayer<C>& layer() const noexcept { return layer_; }
  /// What informed fault prevention told and heard, for Tree::extension of another store.
  [[nodiscard]] ExtensionCache<C>& extension() noexcept { return extension_; }
  /// All ghost copies, ghost after ghost.
  [[nodiscard]] std::span<T> values() noexcept { return values_; }
  /// All ghost copies, ghost after ghost.
  [[nodiscard]] std::span<const T> values() const noexcept { return values_; }
  /// Ghost g's copies.
  [[nodiscard]] std::span<const T> of(std::size_t g) const noexcept {
    return std::span<const T>(values_).subspan(offsets_[g], offsets_[g + 1] - offsets_[g]);
  }
  /// Ghost g's copies, writable.
  [[nodiscard]] std::span<T> of(std::size_t g) noexcept {
    return std::span<T>(values_).subspan(offsets_[g], offsets_[g + 1] - offsets_[g]);
  }
  /// True if a collection made the layer for domain generation `generation`.
  [[nodiscard]] bool current(std::uint64_t generation) const noexcept {
    return layer_.collected() && layer_.generation() == generation;
  }
  /// Forgets the layer and the copies.
  void clear() {
    layer_ = GhostLayer<C>{};
    values_.clear();
    offsets_.assign(1, 0);
  }

 private:
  // Values that travel as bytes ride with the records (no values phase) under a strategy that
  // ships them; others follow in a phase of their own.
  template <class G>
  std::optional<RawPayload> raw_payload(LeafPayload<T> local) {
    if constexpr (mpi::is_raw_transportable<T> && requires { requires G::ships_values; })
      return RawPayload{std::as_bytes(local.values), local.offsets, sizeof(T), PerLeaf,
                        &ghost_bytes_};
    else
      return std::nullopt;
  }
  template <OwnershipMap M>
  CollectionInput<C, M> input(const Tree<M>& tree, const GhostOptions& opt,
                              const std::optional<RawPayload>& raw) {
    return {tree.comm,
            tree.leaves,
            tree.map,
            tree.periodic,
            opt,
            tree.generation,
            tree.extension ? *tree.extension : extension_,
            tree.tag,
            raw ? &*raw : nullptr};
  }
  template <OwnershipMap M>
  static void check_options(const Tree<M>& tree, const GhostOptions& opt) {
    mpi::agree(tree.comm, [&] {
      if (tree.generation == 0)
        throw invalid_argument(std::string(tree.who) +
                               ": the domain is not built; call build() first");
      for (const LevelRange& r : {opt.levels, opt.readers})
        if (r.min < 0 || r.min > r.max)
          throw invalid_argument(std::string(tree.who) + ": level range [" + std::to_string(r.min) +
                                 ", " + std::to_string(r.max) + "] on rank " +
                                 std::to_string(tree.comm.rank()) + " is empty or negative");
    });
  }
  // Whether a layer exists and its generation are the same on every rank (both change only in
  // collective calls), so every rank reaches this verdict alone: no reduction on the hot path.
  template <OwnershipMap M>
  void check_current(const Tree<M>& tree) const {
    if (!layer_.collected())
      throw collective_error(std::string(tree.who) + ": no ghost layer; collect the ghosts first",
                             0);
    if (layer_.generation() != tree.generation)
      throw collective_error(
          std::string(tree.who) +
              ": the tree or the map changed since the ghosts were collected; collect again",
          0);
  }
  // The ghost copies of `layer` into values and offsets.
  template <OwnershipMap M>
  GhostPhase size_and_fill(const Tree<M>& tree, const GhostLayer<C>& layer, LeafPayload<T> local,
                           const std::optional<RawPayload>& raw, std::vector<T>& values,
                           std::vector<std::size_t>& offsets) {
    offsets.assign(layer.size() + 1, 0);
    for (std::size_t g = 0; g < layer.size(); ++g)
      offsets[g + 1] = offsets[g] + (PerLeaf ? 1 : static_cast<std::size_t>(layer.counts()[g]));
    values.assign(offsets.back(), T{});
    if (!raw) return fill(tree, layer, local, values, offsets);
    if (ghost_bytes_.size() != values.size() * sizeof(T))
      throw parse_error(std::string(tree.who) + ": rank " + std::to_string(tree.comm.rank()) +
                        " received " + std::to_string(ghost_bytes_.size()) +
                        " ghost value bytes, the layer holds " +
                        std::to_string(values.size() * sizeof(T)));
    if (!values.empty())
      std::memcpy(static_cast<void*>(values.data()), ghost_bytes_.data(), ghost_bytes_.size());
    ghost_bytes_.clear();
    return {};
  }
  template <OwnershipMap M>
  static GhostPhase fill(const Tree<M>& tree, const GhostLayer<C>& layer, LeafPayload<T> local,
                         std::vector<T>& values, const std::vector<std::size_t>& offsets) {
    return layer.exchange(tree.comm, tree.tag + 3, local.values, local.offsets,
                          std::span<T>(values), std::span<const std::size_t>(offsets), tree.who);
  }

  GhostLayer<C> layer_;
  ExtensionCache<C> extension_;
  std::vector<T> values_;
  std::vector<std::size_t> offsets_{0};
  std::vector<std::byte> ghost_bytes_;  // values that arrived with the records
};

}  // namespace irregular
