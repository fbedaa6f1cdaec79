// Informed fault prevention (baiardi-collecting-remote-data §3.3): a replicated-H-Tree extension
// phase tells each neighbour the boundary leaves that may read its data (cell and level only),
// then each owner sends exactly the leaves those readers read. The extension is cached until the
// tree or the map changes; afterwards only creations and invalidations travel.
#pragma once

#include <irregular/distributed/ghost_collection.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace irregular::ghost {

namespace detail_ifp {
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
  Told(I s, int level, bool create) : start_(s), level_(static_cast<std::uint8_t>(level)), create_(create) {}
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
      : v((2 * s + static_cast<std::uint64_t>(detail::span_at<C>(level))) | (create ? flag : 0)) {}
  [[nodiscard]] int level() const noexcept {
    const int zeros = std::countr_zero(v & ~flag);  // = dim * (max_level - level)
    return C::max_level - zeros / C::dim;
  }
  [[nodiscard]] std::uint64_t start() const noexcept {
    return ((v & ~flag) - static_cast<std::uint64_t>(detail::span_at<C>(level()))) / 2;
  }
  [[nodiscard]] bool create() const noexcept { return (v & flag) != 0; }
};
}  // namespace detail_ifp

struct InformedFaultPrevention {
  [[nodiscard]] static constexpr const char* name() noexcept { return "informed fault prevention"; }

  /// Collective over in.comm.
  template <Stencil S, SpaceFillingCurve C, OwnershipMap M>
  GhostLayer<C> collect(const CollectionInput<C, M>& in) const {
    using I = typename C::index_type;
    using Key = detail::HnodeKey<I>;
    using Told = detail_ifp::Told<C>;
    const auto t0 = std::chrono::steady_clock::now();
    const int me = in.comm.rank(), p = in.comm.size();
    const auto& leaves = in.leaves;
    GhostStats stats;
    auto& cache = in.extension;
    std::optional<detail_ghost::Boundary<C>> boundary;  // built once, shared with finish()
    if (!cache.valid || cache.generation != in.generation) {
      // 1. Extension: each boundary leaf goes to the ranks that may hold what it reads.
      std::vector<std::vector<Key>> wanted(static_cast<std::size_t>(p));
      boundary.emplace(in.map, me, leaves, detail_ghost::reach<S>());
      std::vector<int> ranks;
      for (std::size_t i : boundary->leaves()) {
        const auto cell = leaves.cell(i);
        ranks.clear();
        stencil_cells<C, S>(cell, in.periodic, [&](const Cell<C::dim>& nb) {
          detail_ghost::for_each_remote_holder(in.map, nb, me, false, [&](int r) { ranks.push_back(r); });
        });
        std::sort(ranks.begin(), ranks.end());
        ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
        for (int r : ranks) wanted[static_cast<std::size_t>(r)].push_back({leaves.levels()[i], leaves.starts()[i]});
      }
      mpi::MergedExchange<Told> ex(in.comm, in.tag, in.options.merge);
      auto heard = [&](int src, std::span<const Told> got) {
        auto& h = cache.heard[src];
        for (const Told& t : got) {
          const Key k{t.level(), t.start()};
          const auto it = std::lower_bound(h.begin(), h.end(), k);
          if (t.create()) h.insert(it, k);
          else if (it != h.end() && *it == k) h.erase(it);
        }
      };
      // Only the difference to what each partner already knows travels.
      for (int r = 0; r < p; ++r) {
        auto& want = wanted[static_cast<std::size_t>(r)];
        std::sort(want.begin(), want.end());
        auto found = cache.told.find(r);
        static const std::vector<Key> none;
        const auto& had = found == cache.told.end() ? none : found->second;
        std::size_t a = 0, b = 0;
        while (a < want.size() || b < had.size()) {
          if (b == had.size() || (a < want.size() && want[a] < had[b])) {
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
        if (want.empty()) {
          if (found != cache.told.end()) cache.told.erase(found);
        } else {
          cache.told[r] = std::move(want);
        }
        ex.poll(heard);
      }
      ex.finish(heard);
      stats.extension = {ex.stats().messages_sent, ex.stats().bytes_sent};
      std::erase_if(cache.heard, [](const auto& kv) { return kv.second.empty(); });
      cache.generation = in.generation;
      cache.valid = true;
    }
    // 2. Prevention: exactly the own leaves each known reader reads.
    std::vector<std::vector<std::size_t>> sends(static_cast<std::size_t>(p));
    std::vector<std::size_t> ids;
    for (const auto& [src, readers] : cache.heard) {
      auto& s = sends[static_cast<std::size_t>(src)];
      for (const Key& k : readers) {
        detail_ghost::read_by<C, S>(leaves.starts(), leaves.levels(), detail::cell_at<C>(k.start, k.level),
                                    in.periodic, in.options.contact, in.options.levels, ids);
        s.insert(s.end(), ids.begin(), ids.end());
      }
    }
    std::vector<std::pair<int, typename GhostLayer<C>::Record>> arrived;
    return detail_ghost::finish<C, S>(in, sends, arrived, &GhostStats::prevention, stats, t0,
                                      boundary ? &*boundary : nullptr);
  }
};

}  // namespace irregular::ghost
