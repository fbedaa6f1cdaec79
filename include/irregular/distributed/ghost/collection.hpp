// What every remote-data collection strategy shares (baiardi-collecting-remote-data §3–4): the
// options, the GhostStrategy concept, the boundary test that lets interior leaves skip all work,
// the phase that ships ghost records and assembles the GhostLayer, and the count of useless ghosts.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/ghost/detail/shipment.hpp>
#include <irregular/distributed/ghost/layer.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/maps/detail/touching_ranks.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/mpi/merged_exchange.hpp>
#include <irregular/tree/contact.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/detail/linear_tree.hpp>
#include <irregular/tree/neighbours.hpp>
#include <irregular/tree/stencil.hpp>

#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace irregular {

/// Options of one collection.
struct GhostOptions {
  LevelRange levels{};                 ///< only ghosts whose level lies here
  Contact contact = Contact::stencil;  ///< keep only ghosts in this contact with a reader
  mpi::MergeOptions merge{};           ///< message merging (b) and termination detection
  /// Only local leaves whose level lies here read (baiardi-2001 §5.2: an operator on the grid
  /// of level l collects I(op, l)); the others ask nothing and are no reader to inform or serve.
  LevelRange readers{};
};

/// The cached outcome of the replicated-H-Tree extension phase of informed fault prevention
/// (§3.3): which boundary leaves this rank told each partner about, and which reader leaves each
/// partner told this rank about. Kept across collections until the tree or the map changes;
/// then only the difference travels (creations and invalidations). It serves one communicator
/// and its numbering of the ranks: forget() it on every rank when the ranks are renumbered.
template <SpaceFillingCurve C>
struct ExtensionCache {
  /// A leaf named by its start and level.
  using Key = detail::HnodeKey<typename C::index_type>;
  /// One stencil offset.
  using Offset = std::array<int, static_cast<std::size_t>(C::dim)>;
  std::map<int, std::vector<Key>> told;   ///< partner -> own leaves sent to it (sorted)
  std::map<int, std::vector<Key>> heard;  ///< source -> its leaves that may read ours (sorted)
  std::uint64_t generation = 0;           ///< the domain generation (tree and map) it was made at
  bool valid = false;           ///< false until an extension fills it, and after an invalidation
  std::vector<Offset> offsets;  ///< the stencil it was made for (sorted)
  LevelRange readers{};         ///< and the reader levels

  /// Whether it serves a collection under S for `levels` at generation g: a stencil whose
  /// offsets it has, readers it has, the same tree (the paper's one extension per V-cycle,
  /// shared by the operators whose stencils the union covers).
  template <Stencil S>
  [[nodiscard]] bool serves(std::uint64_t g, LevelRange levels) const {
    if (!valid || generation != g || levels.min < readers.min || levels.max > readers.max)
      return false;
    for (const auto& o : S::offsets)
      if (!std::binary_search(offsets.begin(), offsets.end(), Offset(o))) return false;
    return true;
  }
  /// Forgets what was told and heard. Partners are named by rank, so a new numbering of the
  /// ranks (a rebalance's chain order) would make them another process's. Every rank of the
  /// communicator forgets together: what one rank told, its partner heard.
  void forget() {
    told.clear();
    heard.clear();
    valid = false;
  }
  /// Records that the cache was just made under S for reader `levels` at generation `g`.
  template <Stencil S>
  void made_for(std::uint64_t g, LevelRange levels) {
    offsets.assign(S::offsets.begin(), S::offsets.end());
    std::sort(offsets.begin(), offsets.end());
    generation = g;
    readers = levels;
    valid = true;
  }
};

/// One tree of an informed-fault-prevention extension and the levels of its leaves that read.
template <SpaceFillingCurve C>
struct ExtensionTree {
  const LocalLeaves<C>& leaves;  ///< the tree's local leaves
  LevelRange readers{};          ///< levels of its leaves that read
};

/// Everything a strategy reads. Tags tag .. tag+2 are the strategy's.
template <SpaceFillingCurve C, OwnershipMap M>
struct CollectionInput {
  const boost::mpi::communicator& comm;  ///< the ranks that collect together
  const LocalLeaves<C>& leaves;          ///< this rank's leaves
  const M& map;                          ///< the ownership map in force
  Periodicity<C::dim> periodic;          ///< which axes wrap around
  GhostOptions options;                  ///< levels, contact and merging of this collection
  std::uint64_t generation;              ///< the domain generation, for the extension cache
  ExtensionCache<C>& extension;          ///< informed fault prevention's cache, updated in place
  int tag;                               ///< first of the three message tags the strategy may use
  const RawPayload* payload = nullptr;   ///< values to ship with the records (none: records only)
};

/// A remote-data collection strategy: `name()` and
/// `collect<Stencil>(const CollectionInput<C, M>&) -> GhostLayer<C>`, collective over the
/// input's communicator (ghost::RequestAnswer, ghost::FaultPrevention,
/// ghost::InformedFaultPrevention, ghost::ByName). One that declares `ships_values = true`
/// receives a payload and sends the values with the records (detail::finish does).
template <class G>
concept GhostStrategy = std::default_initializable<G> && requires(const G& g) {
  { g.name() } -> std::convertible_to<const char*>;
};

namespace detail {

template <class Index>
using Key = detail::HnodeKey<Index>;

/// The largest |offset| of a stencil along any axis: how far from a leaf its reads reach.
template <Stencil S>
constexpr int reach() {
  int r = 0;
  for (const auto& o : S::offsets)
    for (int x : o) r = std::max(r, x < 0 ? -x : x);
  return r;
}

/// Whether a leaf's reach stays inside the rank's own private H-Trees: then every cell it reads
/// and every same-level or finer cell that reads it is local, and it takes no part in a
/// collection. Only maps with contiguous segments know their private roots; under other maps
/// every leaf counts as boundary (correct, slower).
template <SpaceFillingCurve C>
class Boundary {
 public:
  template <OwnershipMap M>
  Boundary(const M& map, int me, const LocalLeaves<C>& leaves, int reach) : reach_(reach) {
    if constexpr (M::contiguous_segments) {
      roots_ = map.private_roots(me);
      root_of_.resize(leaves.size());
      std::vector<IndexInterval<typename C::index_type>> spans;
      spans.reserve(roots_.size());
      for (const auto& r : roots_) spans.push_back(curve::hnode_interval<C>(r));
      std::size_t k = 0;
      known_ = true;
      for (std::size_t i = 0; i < leaves.size(); ++i) {
        while (k < roots_.size() && !spans[k].contains(leaves.starts()[i])) ++k;
        root_of_[i] = k;  // == roots_.size() when not inside (cannot happen after a build)
        if (!interior(i, leaves.cell(i))) boundary_.push_back(i);
      }
    } else {
      boundary_.resize(leaves.size());
      for (std::size_t i = 0; i < leaves.size(); ++i) boundary_[i] = i;
    }
  }
  /// The leaves whose own reach leaves their private root, ascending: the only ones that read
  /// remote leaves (every leaf when the map's parts are not segments).
  [[nodiscard]] std::span<const std::size_t> leaves() const noexcept { return boundary_; }
  /// Whether `cell` (leaf i or one of its ancestors) dilated by the reach lies in leaf i's root.
  [[nodiscard]] bool interior(std::size_t i, const Cell<C::dim>& cell) const {
    if (!known_ || root_of_[i] >= roots_.size()) return false;
    const auto& root = roots_[root_of_[i]];
    if (cell.level < root.level) return false;
    const coord_t scale = detail::axis_cells<C>(cell.level - root.level);
    for (std::size_t d = 0; d < static_cast<std::size_t>(C::dim); ++d) {
      const coord_t lo = root.anchor[d] * scale, hi = lo + scale, r = static_cast<coord_t>(reach_);
      if (cell.anchor[d] < lo + r || cell.anchor[d] + r >= hi) return false;
    }
    return true;
  }
  [[nodiscard]] bool known() const noexcept { return known_; }
  /// Index of leaf i's private root (known() only).
  [[nodiscard]] std::size_t root_of(std::size_t i) const { return root_of_[i]; }
  [[nodiscard]] const Cell<C::dim>& root(std::size_t k) const { return roots_[k]; }

 private:
  std::vector<Cell<C::dim>> roots_;
  std::vector<std::size_t> root_of_;
  std::vector<std::size_t> boundary_;
  int reach_;
  bool known_ = false;
};

/// Whether a leaf at level `ghost` may be read by a leaf at `reader` under S's level flags.
template <Stencil S>
constexpr bool level_reads(int reader, int ghost) noexcept {
  return ghost == reader ? S::same_level : (ghost < reader ? S::coarser : S::finer);
}

/// Leaves of a sorted disjoint sequence that `reader` reads under S (levels and contact),
/// appended to out (sorted, unique).
template <SpaceFillingCurve C, Stencil S>
void read_by(std::span<const typename C::index_type> starts, std::span<const std::uint8_t> levels,
             const Cell<C::dim>& reader, Periodicity<C::dim> per, Contact contact, LevelRange range,
             std::vector<std::size_t>& out) {
  out.clear();
  neighbours_of_cell<C, S>(starts, levels, reader, per, out);
  std::erase_if(out, [&](std::size_t j) {
    return !range.contains(levels[j]) ||
           !in_contact<C>(reader, detail::cell_at<C>(starts[j], levels[j]), contact, per);
  });
}

/// Whether S reads every leaf touching a reader of any level: its offsets hold every neighbour
/// of reach 1 and it reads same-level, coarser and finer leaves.
template <Stencil S>
constexpr bool reads_every_touching_leaf() {
  if (!(S::same_level && S::coarser && S::finer)) return false;
  constexpr auto D = static_cast<std::size_t>(S::dim);
  std::array<int, D> o{};
  for (std::size_t d = 0; d < D; ++d) o[d] = -1;
  while (true) {
    bool zero = true, found = false;
    for (int x : o) zero = zero && x == 0;
    for (const auto& s : S::offsets) {
      bool same = true;
      for (std::size_t d = 0; d < D; ++d) same = same && s[d] == o[d];
      found = found || same;
    }
    if (!zero && !found) return false;
    std::size_t d = 0;
    while (d < D && ++o[d] > 1) o[d] = -1, ++d;
    if (d == D) return true;
  }
}

/// Whether a collection under S in `contact` with leaves of every level reading, under a map of
/// type M, reads exactly the touching leaves of every local leaf: then TouchingRanks decides each
/// owner's sends without an extension.
template <Stencil S, class M>
[[nodiscard]] constexpr bool owner_decides(Contact contact, LevelRange readers) {
  if constexpr (!M::contiguous_segments || !reads_every_touching_leaf<S>()) {
    return false;
  } else {
    return contact != Contact::stencil && readers.min <= 0 &&
           readers.max >= M::curve_type::max_level;
  }
}

/// The sends when the map decides them exactly (owner_decides): every local leaf goes to the
/// ranks holding a leaf it touches, so no ghost is useless. From each private root down, a cell
/// that no remote leaf touches is skipped with all its leaves (a remote leaf touching a leaf
/// inside it touches it too): the work follows the part's boundary, not its volume.
template <SpaceFillingCurve C, OwnershipMap M>
void touching_sends(const CollectionInput<C, M>& in, std::vector<std::vector<std::size_t>>& sends) {
  constexpr int children = ipow<int>(C::arity, C::dim);
  const auto& leaves = in.leaves;
  const auto starts = leaves.starts();
  TouchingRanks<C, M> touching(in.map, in.comm.rank(), in.options.contact, in.periodic);
  std::vector<int> ranks;
  using Directions = typename TouchingRanks<C, M>::Directions;
  // Leaves [lo, hi) lie in cell x; `look` are the directions its parent met other ranks in.
  auto visit = [&](auto&& self, const Cell<C::dim>& x, std::size_t lo, std::size_t hi,
                   Directions look) -> void {
    if (lo == hi || look == 0) return;
    ranks.clear();
    const Directions hot = touching(
        x, [&](int r) { ranks.push_back(r); }, look);
    if (hot == 0) return;
    if (hi - lo == 1 && leaves.levels()[lo] == x.level) {
      if (!in.options.levels.contains(x.level)) return;
      std::sort(ranks.begin(), ranks.end());
      ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
      for (int r : ranks) sends[static_cast<std::size_t>(r)].push_back(lo);
      return;
    }
    std::array<std::pair<typename C::index_type, Cell<C::dim>>, children> kids;
    for (int pos = 0; pos < children; ++pos) {
      const auto child = child_at_position<C>(x, pos);
      kids[static_cast<std::size_t>(pos)] = {curve::hnode_interval<C>(child).start, child};
    }
    std::sort(kids.begin(), kids.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t k = 0; k < kids.size(); ++k) {
      const std::size_t end =
          k + 1 == kids.size()
              ? hi
              : static_cast<std::size_t>(
                    std::lower_bound(starts.begin() + static_cast<std::ptrdiff_t>(lo),
                                     starts.begin() + static_cast<std::ptrdiff_t>(hi),
                                     kids[k + 1].first) -
                    starts.begin());
      self(self, kids[k].second, lo, end, touching.inherit(hot, kids[k].second));
      lo = end;
    }
  };
  if constexpr (M::contiguous_segments)  // owner_decides() holds only then
    for (const auto& root : in.map.private_roots(in.comm.rank())) {
      const auto iv = curve::hnode_interval<C>(root);
      const auto first = std::lower_bound(starts.begin(), starts.end(), iv.start);
      const auto last = std::lower_bound(first, starts.end(), iv.end);
      visit(visit, root, static_cast<std::size_t>(first - starts.begin()),
            static_cast<std::size_t>(last - starts.begin()), TouchingRanks<C, M>::every);
    }
}

/// Calls f(rank) for every rank other than me that may hold data meeting cell c. With
/// `whole_only`, only when c may be a leaf there: under contiguous segments a cell that straddles
/// parts is no leaf (leaves are held whole); other maps cannot tell and report every holder.
/// Contiguous maps answer from the splitters without allocating.
template <OwnershipMap M, class F>
void for_each_remote_holder(const M& map, const Cell<M::curve_type::dim>& c, int me,
                            bool whole_only, F&& f) {
  const auto iv = curve::hnode_interval<typename M::curve_type>(c);
  if constexpr (M::contiguous_segments) {
    const int a = map.owner(iv.start), b = map.owner(iv.end - 1);
    if (whole_only && a != b) return;
    for (int r = a; r <= b; ++r) {
      const auto seg = map.segment(r);
      if (r != me && seg.start < seg.end) f(r);
    }
  } else {
    for (int r : map.holders(iv))
      if (r != me) f(r);
  }
}

/// The last phase of every strategy once the send lists are known: the listed local leaves (with
/// their values when the input carries a payload) travel to their partners in one merged
/// exchange, or arrived already (request/answer); the layer is assembled in the owners' send
/// order, the values put in place, and the ghosts no boundary leaf reads are counted as useless
/// (none when `sent_by_touch`: every owner sent by touching_sends).
template <SpaceFillingCurve C, Stencil S, OwnershipMap M>
GhostLayer<C> finish(const CollectionInput<C, M>& in, std::vector<std::vector<std::size_t>>& sends,
                     Shipment<C>& ship, GhostPhase GhostStats::*record_phase, GhostStats stats,
                     std::chrono::steady_clock::time_point t0,
                     const Boundary<C>* known_boundary = nullptr, bool sent_by_touch = false) {
  using Record = typename GhostLayer<C>::Record;
  const int me = in.comm.rank();
  const auto& leaves = in.leaves;
  if (record_phase != nullptr) {  // owner-driven: send the records now
    mpi::MergedExchange<Record> ex(in.comm, in.tag + 2, in.options.merge);
    auto take = [&](int src, std::span<const Record> got) { ship.take(src, got); };
    std::vector<Record> block;
    for (std::size_t r = 0; r < sends.size(); ++r) {
      auto& s = sends[r];
      if (static_cast<int>(r) == me) continue;
      std::sort(s.begin(), s.end());
      s.erase(std::unique(s.begin(), s.end()), s.end());
      if (!s.empty()) {
        block.clear();
        ship.pack(leaves, s, block);
        ex.send(static_cast<int>(r), std::span<const Record>(block));
      }
      stats.leaves_sent += s.size();
      ex.poll(take);
    }
    ex.finish(take);
    stats.*record_phase += GhostPhase{ex.stats().messages_sent, ex.stats().bytes_sent};
  }
  const auto& arrived = ship.arrivals(me);
  std::vector<int> sources;
  std::vector<std::size_t> offsets{0};
  std::vector<Record> records;
  records.reserve(arrived.size());
  for (const auto& a : arrived) {
    if (sources.empty() || sources.back() != a.source) {
      if (!sources.empty()) offsets.push_back(records.size());
      sources.push_back(a.source);
    }
    records.push_back(a.record);
  }
  if (!sources.empty()) offsets.push_back(records.size());
  auto layer = GhostLayer<C>::assemble(me, sends, sources, offsets, records, in.generation);
  ship.place(layer);

  // Useless ghosts: read by no local leaf. When the owners sent by touching_sends, only leaves
  // a leaf of this rank touches: none (the tests check the sets against brute force).
  // Otherwise only boundary leaves can read a ghost, and each is asked.
  std::vector<char> read(layer.size(), 0);
  if (sent_by_touch) {
    std::fill(read.begin(), read.end(), char{1});
  } else if (layer.size() > 0) {
    std::optional<Boundary<C>> own;
    if (known_boundary == nullptr) own.emplace(in.map, me, leaves, reach<S>());
    const Boundary<C>& boundary = known_boundary ? *known_boundary : *own;
    std::vector<std::size_t> ids;
    for (std::size_t i : boundary.leaves()) {
      if (!in.options.readers.contains(leaves.levels()[i])) continue;
      read_by<C, S>(layer.starts(), layer.levels(), leaves.cell(i), in.periodic, in.options.contact,
                    in.options.levels, ids);
      for (std::size_t g : ids) read[g] = 1;
    }
  }
  for (char r : read) stats.leaves_useless += r == 0;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  layer.stats() = stats;
  return layer;
}

}  // namespace detail
}  // namespace irregular
