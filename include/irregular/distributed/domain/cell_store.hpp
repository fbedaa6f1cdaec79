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
#include <irregular/mpi/detail/nbx.hpp>
#include <irregular/mpi/transport.hpp>
#include <irregular/tree/detail/adapt.hpp>
#include <irregular/tree/detail/curve_math.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
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

/// One rank's part of a family that a part boundary cuts: the parent (its first finest index and
/// level) and how many of its children this rank holds. Sent only when every leaf of the family
/// held here is a child marked coarsen, so the parts add up to all the children exactly when
/// the family will merge.
struct FamilyPart {
  IndexWire parent;
  std::int32_t level;
  std::uint32_t children;
};

/// The families cut between ranks that an adapt with `marks` merges: all 2^D (3^D) children
/// leaves, all marked coarsen (adapt applies no 2:1 balance), and gathered to one rank when the
/// map holds the parent whole. Each holder sends its part to the family's leaf_owner, which
/// decides: one message per partner, between ranks that share a cut family only. The leaf owners
/// then publish what merges, so every rank returns the same list, sorted along the curve (empty
/// when nothing merges across ranks, at the cost of one allreduce). Collective over comm.
template <SpaceFillingCurve C, OwnershipMap M>
std::vector<Cell<C::dim>> merged_cut_families(const boost::mpi::communicator& comm, const M& map,
                                              std::span<const typename C::index_type> s,
                                              std::span<const std::uint8_t> l,
                                              std::span<const Mark> marks, int tag) {
  using I = typename C::index_type;
  const std::size_t n = s.size();
  std::vector<std::pair<int, FamilyPart>> parts;  // (leaf owner of the parent, part)
  // Records the family of leaf a (its first member here) when it is a part; returns where the
  // next family may start.
  const auto part_at = [&](std::size_t a) {
    const int lv = l[a];
    if (lv == 0) return a + 1;
    const I start = ancestor_start<C>(s[a], lv - 1), end = start + span_at<C>(lv - 1);
    std::size_t b = a;
    for (; b < n && s[b] < end; ++b)  // a child (level lv) or a deeper leaf
      if (l[b] != lv || marks[b] != Mark::coarsen) return std::max(b, a + 1);
    const auto parent = cell_at<C>(start, lv - 1);
    if (map.splits(parent))
      parts.push_back({map.leaf_owner(parent), FamilyPart{IndexWire::from(start), lv - 1,
                                                          static_cast<std::uint32_t>(b - a)}});
    return b;
  };
  if constexpr (M::contiguous_segments) {  // only the runs at the segment's ends can be cut
    if (n > 0) part_at(0);
    if (n > 1 && l[n - 1] > 0) {
      const I start = ancestor_start<C>(s[n - 1], l[n - 1] - 1);
      const auto a =
          static_cast<std::size_t>(std::lower_bound(s.begin(), s.end(), start) - s.begin());
      if (a > 0) part_at(a);  // a == 0: the family of leaf 0, done
    }
  } else {  // a part is no curve interval: any family may be cut
    for (std::size_t i = 0; i < n;)
      if (l[i] > 0 && (i == 0 || s[i - 1] < ancestor_start<C>(s[i], l[i] - 1)))
        i = part_at(i);
      else
        ++i;
  }
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<FamilyPart> flat, got;
  for (const auto& [owner, part] : parts) (owner == comm.rank() ? got : flat).push_back(part);
  std::vector<OutgoingBytes> sends;  // one message per leaf owner, its parts side by side
  std::size_t at = 0;
  for (std::size_t k = 0; k < parts.size();) {
    const int owner = parts[k].first;
    std::size_t count = 0;
    for (; k < parts.size() && parts[k].first == owner; ++k) ++count;
    if (owner == comm.rank()) continue;
    sends.push_back(
        {owner, reinterpret_cast<const char*>(flat.data() + at), count * sizeof(FamilyPart)});
    at += count;
  }
  MessageBuffers sink;
  irregular::mpi::ExchangeStats stats;
  nbx_exchange(comm, tag, std::span<const OutgoingBytes>(sends), sink, stats);
  for (const auto& [source, bytes] : sink.got) {
    const std::size_t first = got.size();
    got.resize(first + bytes.size() / sizeof(FamilyPart));
    std::memcpy(static_cast<void*>(got.data() + first), bytes.data(),
                (got.size() - first) * sizeof(FamilyPart));
  }
  // The leaf owner's verdict: the parts of a family hold all its children.
  const auto key = [](const FamilyPart& f) { return std::pair(f.parent.as<I>(), f.level); };
  std::sort(got.begin(), got.end(), [&](const auto& x, const auto& y) { return key(x) < key(y); });
  std::vector<Cell<C::dim>> whole;
  for (std::size_t k = 0; k < got.size();) {
    const std::size_t first = k;
    std::uint64_t children = 0;
    for (; k < got.size() && key(got[k]) == key(got[first]); ++k) children += got[k].children;
    if (children == static_cast<std::uint64_t>(children_of<C>))
      whole.push_back(cell_at<C>(got[first].parent.as<I>(), got[first].level));
  }
  // ... and the map can gather it: holding the parent whole must bring its children to one
  // rank. Segment maps do; grid maps (rectangles, rows) place each leaf by its own first grid
  // cell, so a family they cut cannot merge and its marks are ignored.
  std::vector<std::pair<IndexWire, int>> mine;
  if (!whole.empty()) {
    const M held = map.hold_whole(std::span<const Cell<C::dim>>(whole));
    for (const auto& c : whole) {
      const I start = curve::finest_index<C>(c), child = span_at<C>(c.level + 1);
      const int owner = held.leaf_owner(c);
      bool one_rank = true;
      for (int k = 0; k < children_of<C> && one_rank; ++k)
        one_rank =
            held.leaf_owner(cell_at<C>(start + static_cast<I>(k) * child, c.level + 1)) == owner;
      if (one_rank) mine.push_back({IndexWire::from(start), c.level});
    }
  }
  std::uint64_t here = mine.size(), merging = 0;
  boost::mpi::all_reduce(comm, here, merging, std::plus<std::uint64_t>());
  std::vector<Cell<C::dim>> cells;
  if (merging == 0) return cells;
  std::vector<std::vector<std::pair<IndexWire, int>>> all;
  boost::mpi::all_gather(comm, mine, all);
  for (const auto& v : all)
    for (const auto& [w, lv] : v) cells.push_back(cell_at<C>(w.template as<I>(), lv));
  std::sort(cells.begin(), cells.end(), [](const auto& x, const auto& y) {
    return curve::finest_index<C>(x) < curve::finest_index<C>(y);
  });
  return cells;
}

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
