// The strategies of a tree walk's remote hnodes (baiardi-collecting-remote-data): request/answer
// sends nothing ahead; fault prevention sends what each reader's bounding box opens (the
// locally essential tree); informed fault prevention what the reader's private roots open,
// reusing its sets while they stay. Each plugs into hnodes::walk through ahead() and remember().
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/ghost/hnode_stream.hpp>
#include <irregular/distributed/htree/hnode_values.hpp>
#include <irregular/mpi/operations.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <typeindex>
#include <typeinfo>
#include <variant>
#include <vector>

namespace irregular::hnodes {

/// Request/answer only: nothing is sent ahead, every opened remote hnode is a fault.
struct RequestAnswer {
  /// The strategy's name in reports.
  static constexpr const char* name() noexcept { return "request/answer"; }
  /// Sends nothing ahead. Collective over in.comm (trivially).
  template <SpaceFillingCurve C, class V, class E, class Open>
  bool ahead(const WalkInput<C, V, E, Open>&, std::vector<std::vector<std::byte>>&, HnodeStats&) {
    return false;
  }
  /// Nothing to remember.
  template <class Key>
  void remember(int, const Key&) {}
};

/// Fault prevention (the locally essential tree): every rank's bounding box of its leaves is
/// gathered (O(p) values), and each rank sends every other what that box opens in its private
/// H-Trees.
struct FaultPrevention {
  /// The strategy's name in reports.
  static constexpr const char* name() noexcept { return "fault prevention"; }
  /// Fills out[r] with what rank r will open. Collective over in.comm.
  template <SpaceFillingCurve C, class V, class E, class Open>
  bool ahead(const WalkInput<C, V, E, Open>& in, std::vector<std::vector<std::byte>>& out,
             HnodeStats& st) {
    constexpr int D = C::dim;
    std::array<double, 2 * D> mine;
    for (int d = 0; d < D; ++d) {
      mine[static_cast<std::size_t>(d)] = in.box.hi[static_cast<std::size_t>(d)];
      mine[static_cast<std::size_t>(D + d)] = in.box.lo[static_cast<std::size_t>(d)];
    }
    for (std::size_t i = 0; i < in.leaves.size(); ++i) {
      const auto b = cell_box<C>(in.box, in.leaves.cell(i));
      for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d) {
        mine[d] = std::min(mine[d], b.lo[d]);
        mine[D + d] = std::max(mine[D + d], b.hi[d]);
      }
    }
    std::vector<int> counts;
    const auto all =
        mpi::all_gather_raw(in.comm, std::span<const std::array<double, 2 * D>>(&mine, 1), counts);
    for (int r = 0; r < in.comm.size(); ++r) {
      const auto& a = all[static_cast<std::size_t>(r)];
      if (r == in.comm.rank() || a[0] > a[D]) continue;  // itself, or a rank with no leaves
      Box<D> b;
      for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d)
        b.lo[d] = a[d], b.hi[d] = a[D + d];
      send_ahead(in, std::span<const Box<D>>(&b, 1), out[static_cast<std::size_t>(r)], nullptr, st);
    }
    return true;
  }
  /// Nothing to remember.
  template <class Key>
  void remember(int, const Key&) {}
};

/// Informed fault prevention: the reader's private roots, known to every rank from the
/// replicated hnodes, decide what is sent, without gathering anything. The sets are kept and
/// sent again while the private roots stay the same (the partition did not change), the
/// hnodes readers asked for since added: a tree that changed a little costs a few faults.
class InformedFaultPrevention {
 public:
  /// The strategy's name in reports.
  static constexpr const char* name() noexcept { return "informed fault prevention"; }
  /// Fills out[r] with what rank r will open. Collective over in.comm (sends nothing itself).
  template <SpaceFillingCurve C, class V, class E, class Open>
  bool ahead(const WalkInput<C, V, E, Open>& in, std::vector<std::vector<std::byte>>& out,
             HnodeStats& st) {
    using Stream = HnodeStream<C, V, E>;
    const auto& v = in.values;
    const int p = in.comm.size(), me = in.comm.rank();
    const std::uint64_t layout = layout_of(v);
    const bool reuse = layout == layout_ && sets_.size() == static_cast<std::size_t>(p);
    if (!reuse) {
      layout_ = layout;
      sets_.assign(static_cast<std::size_t>(p), {});
      std::vector<std::vector<Box<C::dim>>> boxes(static_cast<std::size_t>(p));
      for (std::size_t n : v.all_private_roots())
        if (v.owner(n) != me)
          boxes[static_cast<std::size_t>(v.owner(n))].push_back(cell_box<C>(in.box, v.cell(n)));
      for (int r = 0; r < p; ++r) {
        if (r == me || boxes[static_cast<std::size_t>(r)].empty()) continue;
        std::vector<std::size_t> entries;
        send_ahead(in, std::span<const Box<C::dim>>(boxes[static_cast<std::size_t>(r)]),
                   out[static_cast<std::size_t>(r)], &entries, st);
        for (std::size_t n : entries)
          sets_[static_cast<std::size_t>(r)].push_back(
              {static_cast<std::uint64_t>(v.start(n)),
               static_cast<std::uint64_t>(v.start(n) >> (sizeof(v.start(n)) > 8 ? 64 : 0)),
               v.level(n)});
      }
      return true;
    }
    ++reused_;
    ++st.reused_sets;
    for (int r = 0; r < p; ++r)
      for (const auto& e : sets_[static_cast<std::size_t>(r)]) {
        const std::size_t n = v.find(key_start<C>(e), e.level);
        if (n >= v.size() || v.owner(n) != me) continue;
        if (v.kind(n) == HnodeKind::internal)
          Stream::put_children(out[static_cast<std::size_t>(r)], v, n, st);
        else if (v.kind(n) == HnodeKind::leaf)
          Stream::put_elements(out[static_cast<std::size_t>(r)], v, n,
                               in.elements_of(v.local_leaf(n)), st);
      }
    return true;
  }
  /// Adds an hnode that `reader` asked for to its set (sent ahead from the next walk on).
  template <class Key>
  void remember(int reader, const Key& k) {
    if (static_cast<std::size_t>(reader) < sets_.size())
      sets_[static_cast<std::size_t>(reader)].push_back(
          {static_cast<std::uint64_t>(k.start),
           static_cast<std::uint64_t>(k.start >> (sizeof(k.start) > 8 ? 64 : 0)), k.level});
  }
  /// How many walks sent the kept sets again.
  [[nodiscard]] std::uint64_t reused() const noexcept { return reused_; }

 private:
  struct Entry {
    std::uint64_t lo, hi;
    int level;
  };
  template <SpaceFillingCurve C>
  static typename C::index_type key_start(const Entry& e) {
    using I = typename C::index_type;
    if constexpr (sizeof(I) > 8)
      return (static_cast<I>(e.hi) << 64) | static_cast<I>(e.lo);
    else
      return static_cast<I>(e.lo);
  }
  template <class Values>
  static std::uint64_t layout_of(const Values& v) {
    std::uint64_t h = 0x9E3779B97F4A7C15ull;
    for (std::size_t n : v.all_private_roots()) {
      h = (h ^ static_cast<std::uint64_t>(v.start(n))) * 0x100000001B3ull;
      h = (h ^ static_cast<std::uint64_t>(v.level(n) + 256 * (v.owner(n) + 1))) * 0x100000001B3ull;
    }
    return h ^ v.all_private_roots().size();
  }
  std::uint64_t layout_ = 0;
  std::uint64_t reused_ = 0;
  std::vector<std::vector<Entry>> sets_;
};

/// The domain's own informed fault prevention, kept across calls: the strategy a walk uses when
/// it names none. The domain keeps one state per kind of walk (hnode value type and opening
/// test), so that repeated walks send their kept sets again instead of recomputing them.
struct Kept {
  /// The strategy's name in reports.
  static constexpr const char* name() noexcept { return InformedFaultPrevention::name(); }
};

/// The states behind Kept: one InformedFaultPrevention per kind of walk, found by type.
class KeptStates {
 public:
  /// The state of walks over values of type V opened by an Open.
  template <class V, class Open>
  InformedFaultPrevention& of() {
    const std::type_index key(typeid(std::pair<V, Open>));
    for (auto& [k, s] : states_)
      if (k == key) return s;
    return states_.emplace_back(key, InformedFaultPrevention{}).second;
  }

 private:
  std::vector<std::pair<std::type_index, InformedFaultPrevention>> states_;  // a few kinds
};

/// A strategy chosen at run time: "RA", "FP" or "IFP" (or the long names).
class ByName {
 public:
  ByName() = default;
  /// Throws irregular::invalid_argument for an unknown name, listing the known ones.
  explicit ByName(std::string_view name) {
    if (name == "RA" || name == RequestAnswer::name())
      s_ = RequestAnswer{};
    else if (name == "FP" || name == FaultPrevention::name())
      s_ = FaultPrevention{};
    else if (name == "IFP" || name == InformedFaultPrevention::name())
      s_ = InformedFaultPrevention{};
    else
      throw invalid_argument("irregular::hnodes::ByName: unknown strategy \"" + std::string(name) +
                             "\"; known: RA, FP, IFP");
  }
  /// The chosen strategy's name.
  [[nodiscard]] const char* name() const noexcept {
    return std::visit([](const auto& s) { return s.name(); }, s_);
  }
  /// The chosen strategy's ahead().
  template <SpaceFillingCurve C, class V, class E, class Open>
  bool ahead(const WalkInput<C, V, E, Open>& in, std::vector<std::vector<std::byte>>& out,
             HnodeStats& st) {
    return std::visit([&](auto& s) { return s.ahead(in, out, st); }, s_);
  }
  /// The chosen strategy's remember().
  template <class Key>
  void remember(int reader, const Key& k) {
    std::visit([&](auto& s) { s.remember(reader, k); }, s_);
  }

 private:
  std::variant<InformedFaultPrevention, FaultPrevention, RequestAnswer> s_{};
};

}  // namespace irregular::hnodes
