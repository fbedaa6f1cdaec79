// ElementStore: a rank's elements with their curve keys (finest-level indices), sorted by key,
// and each local leaf's run of them. The element side of IrregularDomain (baiardi-2001 §2: the
// elements an hnode covers are a contiguous run of the sorted keys).
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/box.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/detail/headroom.hpp>
#include <irregular/core/element_traits.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/ghost/store.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/partitioners/leaf_traffic.hpp>
#include <irregular/distributed/remap/detail/shift_wire.hpp>
#include <irregular/distributed/remap/migration.hpp>
#include <irregular/distributed/remap/remap.hpp>
#include <irregular/mpi/counters.hpp>

#include <boost/mpi/communicator.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace irregular {

/// What lives on the leaves of an IrregularDomain on one rank: the elements sorted by curve key,
/// their keys, each local leaf's run of them, and the inserted elements waiting to join.
template <class Element, SpaceFillingCurve C>
requires Locatable<Element, C::dim>
class ElementStore {
 public:
  static constexpr int dim = C::dim;          ///< dimension of the box and of the cells
  static constexpr bool per_leaf = false;     ///< a leaf holds a run of elements, not one value
  using value_type = Element;                 ///< the values stored: the elements
  using index_type = typename C::index_type;  ///< the curve's index (finest-level keys)
  /// Bytes that travel per element (it and its key), for the estimate of a remap's cost.
  static constexpr std::size_t item_bytes = sizeof(Element) + sizeof(index_type);
  /// The bytes of a remap message (segment shift: [keys][elements] blocks, then starts, counts,
  /// payload and levels; general migration: elements, leaf records), for the advisor's counts.
  static constexpr RemapWire remap_wire() {
    constexpr bool raw = mpi::is_raw_transportable<Element>;
    return RemapWire{raw,
                     sizeof(index_type) + sizeof(std::uint64_t) + 1,
                     sizeof(double),
                     sizeof(index_type) + sizeof(Element),
                     sizeof(detail::ShiftTrailer),
                     sizeof(detail::LeafRecord<index_type>),
                     sizeof(Element),
                     sizeof(detail::MigrationTrailer),
                     raw};
  }
  /// Finest cells per axis (computed once: keys are computed for every element of a build or load).
  static constexpr coord_t cells_per_axis =
      ipow<coord_t>(static_cast<coord_t>(C::arity), C::max_level);

  /// An empty store over `box`.
  explicit ElementStore(const Box<dim>& box) : box_(box) {}

  /// The box the elements lie in.
  [[nodiscard]] const Box<dim>& box() const noexcept { return box_; }
  /// Curve key of a position (finest-level index). Precondition: inside the box.
  [[nodiscard]] index_type key_of_position(const std::array<double, dim>& x) const {
    return C::index(box_.cell_of(x, C::max_level, cells_per_axis));
  }
  /// Curve key of an element: the key of its position. Precondition: inside the box.
  [[nodiscard]] index_type key_of(const Element& e) const {
    return key_of_position(element_traits<Element>::position(e));
  }
  /// key_of as a callable for the sort and the migration.
  [[nodiscard]] auto key_fn() const {
    return [this](const Element& e) { return key_of(e); };
  }

  /// The first element outside the box (or with a NaN coordinate), described for an error
  /// message that names the call, the element index and the rank; nullopt when all are inside.
  [[nodiscard]] std::optional<std::string> first_invalid(std::span<const Element> elements,
                                                         const char* who, int rank) const {
    for (std::size_t i = 0; i < elements.size(); ++i) {
      const auto x = element_traits<Element>::position(elements[i]);
      if (box_.contains(x)) continue;
      std::ostringstream os;
      os << "irregular::IrregularDomain::" << who << ": element " << i << " on rank " << rank
         << " has position (";
      bool nan = false;
      for (int d = 0; d < dim; ++d) {
        os << (d ? ", " : "") << x[d];
        nan = nan || std::isnan(x[d]);
      }
      os << (nan ? "), which is not a number" : "), outside the domain box");
      return os.str();
    }
    return std::nullopt;
  }

  /// Keys of every element, in element order (after the elements changed).
  void rekey() {
    detail::resize_for_overwrite(keys, elements.size());  // every key is written next
    for (std::size_t i = 0; i < elements.size(); ++i) keys[i] = key_of(elements[i]);
  }

  /// Each local leaf's run of elements. Precondition: every element lies in a local leaf.
  void index_leaves(const LocalLeaves<C>& leaves) {
    // Headroom for later remaps (core/detail/headroom.hpp); the sort usually allocated it.
    detail::reserve_headroom(offsets, leaves.size() + 1);
    detail::reserve_headroom(elements, elements.size());
    detail::reserve_headroom(keys, keys.size());
    offsets.assign(leaves.size() + 1, 0);
    std::size_t e = 0;
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      offsets[i] = e;
      const auto iv = leaves.interval(i);
      while (e < keys.size() && keys[e] < iv.end) ++e;
    }
    offsets[leaves.size()] = e;
    IRREGULAR_ASSERT(e == keys.size());
  }
  /// Takes the elements of `leaves` read from a checkpoint (in curve order). Throws
  /// irregular::checkpoint_error when an element lies outside the leaf that held it.
  void adopt(detail::store_vector<Element>&& values, const LocalLeaves<C>& leaves) {
    elements = std::move(values);
    detail::reserve_headroom(keys, elements.size());  // before the keys: no copy when indexing
    detail::resize_for_overwrite(keys, elements.size());
    std::size_t e = 0;  // the counts sum to the elements (checked by the reader)
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      const auto iv = leaves.interval(i);
      for (std::uint64_t k = 0; k < leaves.counts()[i]; ++k, ++e)
        if (keys[e] = key_of(elements[e]); keys[e] < iv.start || !(keys[e] < iv.end))
          throw checkpoint_error("irregular checkpoint: element " + std::to_string(e) +
                                     " of this rank's share lies outside its leaf",
                                 0, "records");
    }
    index_leaves(leaves);
  }
  /// Maps the headroom's pages now (DomainOptions::resident_headroom).
  void touch_headroom() noexcept {
    if constexpr (requires { elements.touch_room(); }) elements.touch_room();
    keys.touch_room();
    offsets.touch_room();
  }
  /// Local leaf i's run of elements.
  [[nodiscard]] std::span<Element> of_leaf(std::size_t i) noexcept {
    return std::span<Element>(elements).subspan(offsets[i], offsets[i + 1] - offsets[i]);
  }
  /// Local leaf i's run of elements (read-only).
  [[nodiscard]] std::span<const Element> of_leaf(std::size_t i) const noexcept {
    return std::span<const Element>(elements).subspan(offsets[i], offsets[i + 1] - offsets[i]);
  }

  /// Number of elements held, not counting the pending ones.
  [[nodiscard]] std::size_t size() const noexcept { return elements.size(); }
  /// The curve keys of what travels: the elements' keys.
  [[nodiscard]] std::span<const index_type> keys_of(const LocalLeaves<C>&) const noexcept {
    return keys;
  }
  /// The elements leaf by leaf, as the ghost layer and a checkpoint read them.
  [[nodiscard]] LeafPayload<Element> payload() const {
    return {std::span<const Element>(elements), std::span<const std::size_t>(offsets)};
  }

  /// Leaves (with `payload`, one value each) and elements go to the holders `map` names; returns
  /// the settled map. `runs_current`: the leaf runs match the leaves now, so the remap keeps them
  /// up to date instead of indexing anew. Collective over comm.
  template <OwnershipMap M>
  M move(const boost::mpi::communicator& comm, const M& map, LocalLeaves<C>& leaves,
         std::vector<double>& payload, int tag, mpi::MigrationCounters& sent, bool runs_current,
         ShiftLayout* layout) {
    M settled = settle_on_map(comm, map, leaves, payload, elements, keys, key_fn(), tag, sent,
                              runs_current ? &offsets : nullptr, layout);
    if (!runs_current) {
      leaves.reserve_headroom();
      index_leaves(leaves);
    }
    return settled;
  }

  // Remaps splice these in place (core/detail/splice_vector.hpp; elements that are not
  // trivially copyable live in a std::vector).
  detail::store_vector<Element> elements;  ///< sorted by key
  detail::SpliceVector<index_type> keys;   ///< keys[i] = key_of(elements[i])
  std::vector<Element> pending;            ///< inserted, joining at the next build
  detail::SpliceVector<std::size_t> offsets{
      0};  ///< leaf i holds elements [offsets[i], offsets[i+1])

 private:
  Box<dim> box_;
};

}  // namespace irregular
