// Informed fault prevention (baiardi-collecting-remote-data §3.3): a replicated-H-Tree extension
// phase tells each neighbour the boundary leaves that may read its data (cell and level only),
// then each owner sends exactly the leaves those readers read, with their values. When every
// leaf reads what it touches, the map alone decides exactly (§3.2) and no extension is needed. The
// extension is cached for the tree, the stencil and the reader levels; when they change only
// creations and invalidations travel, and extend() tells several trees' readers in one phase (Fig.
// 2: one extension per V-cycle).
#pragma once

#include <irregular/distributed/ghost/collection.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <climits>
#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

namespace irregular::ghost {

namespace detail {
/// One extension record: a reader leaf (start, level), created or invalidated. When the index
/// space leaves two bits spare (2D curves), 8 bytes: v = 2·start + span(level), whose lowest set
/// bit gives the level, and the top bit the flag; otherwise start, level and flag apart.
template <SpaceFillingCurve C, bool Packed = (sizeof(typename C::index_type) == 8 &&
                                              C::arity == 2 && C::dim * C::max_level + 2 <= 64)>
struct Told {
  using I = typename C::index_type;
  I start_;
  std::uint8_t level_, create_;
  Told() = default;
  Told(I s, int level, bool create)
      : start_(s), level_(static_cast<std::uint8_t>(level)), create_(create) {}
  [[nodiscard]] I start() const noexcept { return start_; }
  [[nodiscard]] int level() const noexcept { return level_; }
  [[nodiscard]] bool create() const noexcept { return create_ != 0; }
};
template <SpaceFillingCurve C>
struct Told<C, true> {
  static constexpr std::uint64_t flag = std::uint64_t{1} << 63;
  std::uint64_t v;
  Told() = default;
  Told(std::uint64_t s, int level, bool create)
      : v((2 * s + static_cast<std::uint64_t>(irregular::detail::span_at<C>(level))) |
          (create ? flag : 0)) {}
  [[nodiscard]] int level() const noexcept {
    const int zeros = std::countr_zero(v & ~flag);  // = dim * (max_level - level)
    return C::max_level - zeros / C::dim;
  }
  [[nodiscard]] std::uint64_t start() const noexcept {
    return ((v & ~flag) - static_cast<std::uint64_t>(irregular::detail::span_at<C>(level()))) / 2;
  }
  [[nodiscard]] bool create() const noexcept { return (v & flag) != 0; }
};
}  // namespace detail

/// Informed fault prevention (baiardi-collecting-remote-data §3.3): an extension phase tells each
/// neighbour the boundary leaves that may read its data, then each owner sends exactly the leaves
/// those readers read. The extension is cached until the tree, the stencil or the readers change.
struct InformedFaultPrevention {
  /// The strategy's name in reports.
  [[nodiscard]] static constexpr const char* name() noexcept { return "informed fault prevention"; }
  static constexpr bool ships_values = true;  ///< takes CollectionInput::payload

  /// The replicated-H-Tree extension alone, for several trees of one domain read by disjoint
  /// levels (the grids of a multigrid hierarchy): one message per partner for all of them, the
  /// papers' one extension per V-cycle for the union of the stencils. Collections on these trees
  /// at `generation` under S, or a stencil S covers, with this cache then send none. Returns
  /// the extension phase and records; nothing travels when the cache serves already.
  /// Collective over comm.
  template <Stencil S, SpaceFillingCurve C, OwnershipMap M>
  static GhostStats extend(const boost::mpi::communicator& comm,
                           std::span<const ExtensionTree<C>> trees, const M& map,
                           Periodicity<C::dim> periodic, std::uint64_t generation,
                           ExtensionCache<C>& cache, int tag, const mpi::MergeOptions& merge = {}) {
    using Key = irregular::detail::HnodeKey<typename C::index_type>;
    using Told = detail::Told<C>;
    GhostStats stats;
    LevelRange hull{INT_MAX, 0};  // the levels this extension speaks for
    for (const auto& t : trees)
      hull = {std::min(hull.min, t.readers.min), std::max(hull.max, t.readers.max)};
    if (trees.empty() || cache.template serves<S>(generation, hull)) return stats;
    // Each boundary reader goes to the ranks that may hold what it reads.
    const int me = comm.rank(), p = comm.size();
    std::vector<std::vector<Key>> wanted(static_cast<std::size_t>(p));
    std::vector<int> ranks;
    for (const auto& t : trees) {
      const irregular::detail::Boundary<C> boundary(map, me, t.leaves,
                                                    irregular::detail::reach<S>());
      for (std::size_t i : boundary.leaves()) {
        if (!t.readers.contains(t.leaves.levels()[i])) continue;
        ranks.clear();
        stencil_cells<C, S>(t.leaves.cell(i), periodic, [&](const Cell<C::dim>& nb) {
          irregular::detail::for_each_remote_holder(map, nb, me, false,
                                                    [&](int r) { ranks.push_back(r); });
        });
        std::sort(ranks.begin(), ranks.end());
        ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
        for (int r : ranks)
          wanted[static_cast<std::size_t>(r)].push_back(
              {t.leaves.levels()[i], t.leaves.starts()[i]});
      }
    }
    mpi::MergedExchange<Told> ex(comm, tag, merge);
    auto heard = [&](int src, std::span<const Told> got) {
      auto& h = cache.heard[src];
      for (const Told& t : got) {
        const Key k{t.level(), t.start()};
        const auto it = std::lower_bound(h.begin(), h.end(), k);
        if (t.create())
          h.insert(it, k);
        else if (it != h.end() && *it == k)
          h.erase(it);
      }
    };
    // Only the difference to what each partner already knows of these levels travels (keys sort
    // by level first, so those of the hull are one run).
    auto in_hull = [&](const std::vector<Key>& v) {
      const auto lo = std::lower_bound(v.begin(), v.end(), Key{hull.min, 0});
      const auto hi =
          std::partition_point(lo, v.end(), [&](const Key& k) { return k.level <= hull.max; });
      return std::pair{lo - v.begin(), hi - v.begin()};
    };
    static const std::vector<Key> none;
    for (int r = 0; r < p; ++r) {
      auto& want = wanted[static_cast<std::size_t>(r)];
      std::sort(want.begin(), want.end());
      want.erase(std::unique(want.begin(), want.end()), want.end());
      auto found = cache.told.find(r);
      const auto& had = found == cache.told.end() ? none : found->second;
      const auto [from, to] = in_hull(had);
      std::size_t a = 0, b = static_cast<std::size_t>(from);
      while (a < want.size() || b < static_cast<std::size_t>(to)) {
        if (b == static_cast<std::size_t>(to) || (a < want.size() && want[a] < had[b])) {
          ex.send(r, Told(want[a].start, want[a].level, true));
          ++a;
        } else if (a == want.size() || had[b] < want[a]) {
          ex.send(r, Told(had[b].start, had[b].level, false));
          ++b;
        } else {
          ++a, ++b;
          continue;
        }
        ++stats.extension_records;
      }
      std::vector<Key> now(had.begin(), had.begin() + from);
      now.insert(now.end(), want.begin(), want.end());
      now.insert(now.end(), had.begin() + to, had.end());
      if (now.empty()) {
        if (found != cache.told.end()) cache.told.erase(found);
      } else {
        cache.told[r] = std::move(now);
      }
      ex.poll(heard);
    }
    ex.finish(heard);
    stats.extension = {ex.stats().messages_sent, ex.stats().bytes_sent};
    std::erase_if(cache.heard, [](const auto& kv) { return kv.second.empty(); });
    cache.template made_for<S>(generation, hull);
    return stats;
  }

  /// Collective over in.comm.
  template <Stencil S, SpaceFillingCurve C, OwnershipMap M>
  GhostLayer<C> collect(const CollectionInput<C, M>& in) const {
    const auto t0 = std::chrono::steady_clock::now();
    const int p = in.comm.size();
    const auto& leaves = in.leaves;
    const LevelRange readers = in.options.readers;
    std::vector<std::vector<std::size_t>> sends(static_cast<std::size_t>(p));
    irregular::detail::Shipment<C> ship(in.payload);
    // 0. When every leaf reads exactly what it touches, the map tells each owner who reads its
    // leaves: the extension would carry nothing new, and each ghost travels once, unasked.
    if (irregular::detail::owner_decides<S, M>(in.options.contact, readers)) {
      irregular::detail::touching_sends(in, sends);
      return irregular::detail::finish<C, S>(in, sends, ship, &GhostStats::prevention, GhostStats{},
                                             t0, nullptr, true);
    }
    // 1. Extension, unless the cache knows these readers under a stencil covering S.
    const ExtensionTree<C> tree{leaves, readers};
    GhostStats stats =
        extend<S>(in.comm, std::span<const ExtensionTree<C>>(&tree, 1), in.map, in.periodic,
                  in.generation, in.extension, in.tag, in.options.merge);
    // 2. Prevention: exactly the own leaves each known reader reads.
    std::vector<std::size_t> ids;
    for (const auto& [src, heard] : in.extension.heard) {
      auto& s = sends[static_cast<std::size_t>(src)];
      for (const auto& k : heard) {
        if (!readers.contains(k.level)) continue;  // told for another collection
        irregular::detail::read_by<C, S>(leaves.starts(), leaves.levels(),
                                         irregular::detail::cell_at<C>(k.start, k.level),
                                         in.periodic, in.options.contact, in.options.levels, ids);
        s.insert(s.end(), ids.begin(), ids.end());
      }
    }
    return irregular::detail::finish<C, S>(in, sends, ship, &GhostStats::prevention, stats, t0);
  }
};

}  // namespace irregular::ghost
