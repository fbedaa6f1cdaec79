// CellStore: one user datum per leaf, in leaf order — the store of a cell-data domain (the grids
// of adaptive multigrid, finite volumes and cellular automata; baiardi-2001 §5). A datum is keyed
// by its leaf's start, so it travels as its leaf's payload through the remap pipeline.
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/detail/headroom.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/ghost/store.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/partitioners/leaf_traffic.hpp>
#include <irregular/distributed/remap/detail/shift_wire.hpp>
#include <irregular/distributed/remap/migration.hpp>
#include <irregular/distributed/remap/remap.hpp>
#include <irregular/distributed/remap/segment_shift.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/detail/index_wire.hpp>
#include <irregular/mpi/transport.hpp>

#include <boost/mpi/communicator.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

namespace irregular {

namespace detail {
/// A datum with its leaf's start: how data travel through the general remap, which keys what it
/// moves. 128-bit indices travel as two halves when serialized.
template <class I, class Data>
struct Keyed {
  I start;
  std::uint8_t level;
  Data data;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    auto w = detail::IndexWire::from(start);
    ar& w.lo& w.hi& level& data;
    start = w.template as<I>();
  }
};
}  // namespace detail

namespace mpi {
/// A keyed datum travels as bytes when its datum does.
template <class I, class Data>
struct raw_transport<irregular::detail::Keyed<I, Data>>
    : std::bool_constant<is_raw_transportable<Data>> {};
}  // namespace mpi

/// What lives on the leaves of a CellDomain on one rank: one datum per local leaf, in leaf order.
template <class Data, SpaceFillingCurve C>
class CellStore {
 public:
  static constexpr int dim = C::dim;          ///< dimension of the box and of the cells
  static constexpr bool per_leaf = true;      ///< one value per leaf
  using value_type = Data;                    ///< the values stored: one datum per leaf
  using index_type = typename C::index_type;  ///< the curve's index (finest-level keys)
  /// A datum with its leaf's start and level, as it travels through the general remap.
  using Keyed = detail::Keyed<index_type, Data>;

  /// An empty store over `box`.
  explicit CellStore(const Box<dim>& box) : box_(box) {}

  /// The box the leaves tile.
  [[nodiscard]] const Box<dim>& box() const noexcept { return box_; }
  /// Number of data held: one per local leaf.
  [[nodiscard]] std::size_t size() const noexcept { return data.size(); }
  /// A leaf holds no elements: per-element metrics are refused by CellDomain.
  [[nodiscard]] std::span<const Data> of_leaf(std::size_t) const noexcept { return {}; }
  /// The curve keys of what travels: the leaves' starts.
  [[nodiscard]] std::span<const index_type> keys_of(const LocalLeaves<C>& leaves) const noexcept {
    return leaves.starts();
  }
  /// Bytes that travel per leaf (its datum, start and level), for the estimate of a remap's cost.
  static constexpr std::size_t item_bytes = sizeof(Data) + sizeof(index_type) + 1;
  /// The bytes of a remap message (segment shift: the data, then starts, payload and levels;
  /// general migration: Keyed records, leaf records), for the advisor's counts.
  static constexpr RemapWire remap_wire() {
    constexpr bool raw = mpi::is_raw_transportable<Data>;
    return RemapWire{
        raw,           sizeof(index_type) + 1,           sizeof(double),
        sizeof(Data),  sizeof(detail::ShiftTrailer),     sizeof(detail::LeafRecord<index_type>),
        sizeof(Keyed), sizeof(detail::MigrationTrailer), mpi::is_raw_transportable<Keyed>};
  }

  /// Leaf i's datum is values[i]: offsets 0, 1, ..., n (kept for the ghost layer's interface).
  [[nodiscard]] std::span<const std::size_t> offsets() const {
    if (offsets_.size() != data.size() + 1) {
      offsets_.resize(data.size() + 1);
      for (std::size_t i = 0; i < offsets_.size(); ++i) offsets_[i] = i;
    }
    return offsets_;
  }
  /// The data leaf by leaf (one each), as the ghost layer and a checkpoint read them.
  [[nodiscard]] LeafPayload<Data> payload() const {
    return {std::span<const Data>(data), offsets()};
  }

  /// Leaves and data go to the holders `map` names (`payload` travels with the leaves); returns
  /// the settled map. Raw data under a segment map are the elements of a segment shift keyed by
  /// their leaves' starts; otherwise Keyed records take the general remap. Collective over comm.
  template <OwnershipMap M>
  M move(const boost::mpi::communicator& comm, const M& map, LocalLeaves<C>& leaves,
         std::vector<double>& payload, int tag, mpi::MigrationCounters& sent, bool /*runs_current*/,
         ShiftLayout* layout) {
    if constexpr (M::contiguous_segments && mpi::is_raw_transportable<Data>) {
      LeafKeyed by_start;  // a datum's key is its leaf's start
      if (auto s =
              shift_segments(comm, map, leaves, payload, data, by_start, no_offsets, tag, layout)) {
        sent += *s;
        return map;  // no leaf is cut: holding leaves whole changes nothing
      }
    }
    std::vector<index_type> keys(leaves.starts().begin(), leaves.starts().end());
    std::vector<Keyed> keyed;
    keyed.reserve(leaves.size());
    for (std::size_t i = 0; i < leaves.size(); ++i)
      keyed.push_back({leaves.starts()[i], leaves.levels()[i], std::move(data[i])});
    M settled = settle_on_map(
        comm, map, leaves, payload, keyed, keys, [](const Keyed& k) { return k.start; }, tag, sent,
        no_offsets, layout);
    data.clear();
    for (auto& k : keyed) data.push_back(std::move(k.data));
    return settled;
  }
  /// Maps the headroom's pages now (DomainOptions::resident_headroom).
  void touch_headroom() noexcept {
    if constexpr (requires { data.touch_room(); }) data.touch_room();
  }
  /// Takes the data of the leaves read from a checkpoint (one per leaf, in leaf order).
  void adopt(detail::store_vector<Data>&& values, const LocalLeaves<C>&) {
    data = std::move(values);
  }

  detail::store_vector<Data> data;  ///< one datum per leaf, in leaf order

 private:
  Box<dim> box_;
  mutable std::vector<std::size_t> offsets_;
};

}  // namespace irregular
