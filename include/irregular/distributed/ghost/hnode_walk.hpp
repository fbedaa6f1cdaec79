// Remote hnodes by a traversal predicate (baiardi-collecting-remote-data, for tree codes): every
// local leaf walks the hnode tree from the root, opening the hnodes `open(hnode_box, reader_box)`
// asks for; an opened hnode another rank holds is a fault, served by request/answer rounds. The
// prevention strategies send ahead what the readers will open, so the rounds find nothing to do:
// fault prevention decides by each reader's bounding box (the "locally essential tree"),
// informed fault prevention by the reader's private roots, and reuses its sets while they stay.
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/htree/hnode_values.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/tree/detail/curve_math.hpp>

#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace irregular {

/// What one hnode walk cost this rank.
struct HnodeStats {
  std::uint64_t messages = 0;       ///< messages sent (prevention, requests, answers)
  std::uint64_t bytes = 0;          ///< their bytes
  std::uint64_t hnodes_sent = 0;    ///< hnode records sent
  std::uint64_t elements_sent = 0;  ///< elements of leaves sent
  std::uint64_t unopened = 0;       ///< remote hnodes received that no walk here reached
  std::uint64_t faults = 0;         ///< remote hnodes the walks found closed and asked for
  std::uint64_t rounds = 0;         ///< request/answer rounds that asked anything (any rank)
  /// Adds another walk's counts.
  HnodeStats& operator+=(const HnodeStats& o) noexcept {
    messages += o.messages;
    bytes += o.bytes;
    hnodes_sent += o.hnodes_sent;
    elements_sent += o.elements_sent;
    unopened += o.unopened;
    faults += o.faults;
    rounds += o.rounds;
    return *this;
  }
};

namespace hnodes {

/// The physical box of a cell of the domain `box`.
template <SpaceFillingCurve C>
Box<C::dim> cell_box(const Box<C::dim>& box, const Cell<C::dim>& c) {
  const coord_t n = detail::axis_cells<C>(c.level);
  return {box.lower(c, n), box.upper(c, n)};
}

/// Where the hnodes are: the tree with its values, this rank's leaves and their elements (raw
/// values), the domain's box, the predicate and the communicator with two tags.
template <SpaceFillingCurve C, class V, class E, class Open>
struct WalkInput {
  const boost::mpi::communicator& comm;
  HnodeValues<C, V>& values;
  const LocalLeaves<C>& leaves;
  std::function<std::span<const E>(std::size_t)> elements_of;  ///< elements of a local leaf
  const Box<C::dim>& box;
  Open& open;
  int tag;  ///< tag and tag + 1 are used
};

/// The byte stream of hnodes that travels: blocks of an hnode's children (records), and leaves'
/// elements. A receiver attaches what it does not have yet and ignores the rest.
template <SpaceFillingCurve C, class V, class E>
class HnodeStream {
  using Values = HnodeValues<C, V>;
  using Record = typename Values::record_type;
  using I = typename C::index_type;
  static constexpr std::uint8_t children_tag = 1, elements_tag = 2;

 public:
  /// n's children, as records.
  static void put_children(std::vector<std::byte>& out, const Values& v, std::size_t n,
                           HnodeStats& st) {
    out.push_back(std::byte{children_tag});
    for (int k = 0; k < Values::children; ++k) append(out, v.record(v.child(n, k)));
    st.hnodes_sent += static_cast<std::uint64_t>(Values::children);
  }
  /// Leaf n's elements.
  static void put_elements(std::vector<std::byte>& out, const Values& v, std::size_t n,
                           std::span<const E> es, HnodeStats& st) {
    out.push_back(std::byte{elements_tag});
    append(out, v.start(n));
    append(out, static_cast<std::uint8_t>(v.level(n)));
    append(out, static_cast<std::uint64_t>(es.size()));
    const auto* b = reinterpret_cast<const std::byte*>(es.data());
    out.insert(out.end(), b, b + es.size_bytes());
    st.elements_sent += es.size();
  }
  /// Attaches what `in` holds; remote leaves' elements go to `remote` (first, count per hnode).
  static void absorb(std::span<const std::byte> in, Values& v, std::vector<E>& remote,
                     std::vector<std::pair<std::size_t, std::size_t>>& at) {
    std::size_t pos = 0;
    while (pos < in.size()) {
      const auto t = static_cast<std::uint8_t>(in[pos++]);
      if (t == children_tag) {
        Record first = take<Record>(in, pos);
        pos -= sizeof(Record);
        const int l = first.level - 1;
        const std::size_t parent = v.find(detail::ancestor_start<C>(first.start, l), l);
        const bool fresh = parent < v.size() && v.kind(parent) == HnodeKind::closed;
        if (fresh) v.open_links(parent);
        for (int k = 0; k < Values::children; ++k) {
          const Record r = take<Record>(in, pos);
          if (fresh)
            v.link(parent, k,
                   v.add(r.start, r.level, HnodeKind::closed, v.owner(parent), r.value, r.leaf));
        }
      } else if (t == elements_tag) {
        const I s = take<I>(in, pos);
        const int l = take<std::uint8_t>(in, pos);
        const auto count = static_cast<std::size_t>(take<std::uint64_t>(in, pos));
        const std::size_t n = v.find(s, l);
        if (n < v.size() && v.kind(n) == HnodeKind::closed && v.is_leaf(n)) {
          if (at.size() < v.size()) at.resize(v.size(), {0, 0});
          at[n] = {remote.size(), count};
          remote.resize(remote.size() + count);
          std::memcpy(static_cast<void*>(remote.data() + at[n].first), in.data() + pos,
                      count * sizeof(E));
          v.mark_present(n);
        }
        pos += count * sizeof(E);
      } else {
        throw std::logic_error("irregular::walk_hnodes: a corrupt hnode message");
      }
    }
  }

 private:
  template <class T>
  static void append(std::vector<std::byte>& out, const T& x) {
    const auto* b = reinterpret_cast<const std::byte*>(&x);
    out.insert(out.end(), b, b + sizeof(T));
  }
  template <class T>
  static T take(std::span<const std::byte> in, std::size_t& pos) {
    if (pos + sizeof(T) > in.size())
      throw std::logic_error("irregular::walk_hnodes: a truncated hnode message");
    T x;
    std::memcpy(static_cast<void*>(&x), in.data() + pos, sizeof(T));
    pos += sizeof(T);
    return x;
  }
};

/// Sends, from this rank's private H-Trees, what a reader whose leaves lie in `boxes` will open:
/// the children of every hnode some box opens, and the elements of every leaf some box opens.
/// A box that does not open an hnode cannot open its children for the reader (the reader's leaf
/// lies in a box, and `open` is monotone in the reader's box), so each child tests only the
/// boxes that opened its parent. `entries` records what was sent, in order.
template <SpaceFillingCurve C, class V, class E, class Open>
void send_ahead(const WalkInput<C, V, E, Open>& in, std::span<const Box<C::dim>> boxes,
                std::vector<std::byte>& out, std::vector<std::size_t>* entries, HnodeStats& st) {
  using Stream = HnodeStream<C, V, E>;
  const auto& v = in.values;
  std::vector<std::vector<Box<C::dim>>> levels(C::max_level + 2);
  std::function<void(std::size_t, std::span<const Box<C::dim>>)> visit =
      [&](std::size_t n, std::span<const Box<C::dim>> bs) {
        const auto hb = cell_box<C>(in.box, v.cell(n));
        auto& opened = levels[static_cast<std::size_t>(v.level(n))];
        opened.clear();
        for (const auto& b : bs)
          if (in.open(hb, b)) opened.push_back(b);
        if (opened.empty()) return;
        if (entries) entries->push_back(n);
        if (v.kind(n) == HnodeKind::leaf) {
          Stream::put_elements(out, v, n, in.elements_of(v.local_leaf(n)), st);
          return;
        }
        Stream::put_children(out, v, n, st);
        const std::vector<Box<C::dim>> mine = opened;  // the next level reuses the slot
        for (int k = 0; k < HnodeValues<C, V>::children; ++k) visit(v.child(n, k), mine);
      };
  for (std::size_t r : v.private_roots()) visit(r, boxes);
}

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

/// One walk: from the root, every hnode `open` opens (box of hnode, box of reader) is entered,
/// the others accepted as they are; leaves it opens are accepted with their elements. Records
/// each accepted hnode (near or not) and every closed hnode it must open (a fault).
template <SpaceFillingCurve C, class V, class Open>
class Walker {
 public:
  struct Step {
    std::size_t hnode;
    bool near;
  };
  Walker(const HnodeValues<C, V>& v, const Box<C::dim>& box, Open& open)
      : v_(v), box_(box), open_(open) {}

  /// Walks for a reader with box `reader`; false when it met faults (then `faults` has them).
  bool walk(const Box<C::dim>& reader, std::vector<Step>& steps, std::vector<std::size_t>& faults,
            std::vector<std::uint8_t>& visited) {
    steps.clear();
    stack_.assign(1, v_.root());
    bool complete = true;
    while (!stack_.empty()) {
      const std::size_t n = stack_.back();
      stack_.pop_back();
      if (n >= visited.size()) visited.resize(v_.size(), 0);
      visited[n] = 1;
      const bool opened = open_(cell_box<C>(box_, v_.cell(n)), reader);
      if (!opened) {
        steps.push_back({n, false});
      } else if (v_.kind(n) == HnodeKind::internal) {
        for (int k = HnodeValues<C, V>::children - 1; k >= 0; --k) stack_.push_back(v_.child(n, k));
      } else if (v_.kind(n) == HnodeKind::leaf) {
        steps.push_back({n, true});
      } else {
        faults.push_back(n);
        complete = false;
      }
    }
    return complete;
  }

 private:
  const HnodeValues<C, V>& v_;
  const Box<C::dim>& box_;
  Open& open_;
  std::vector<std::size_t> stack_;
};

/// A request for an hnode's children or a leaf's elements.
template <class I>
struct HnodeKey {
  I start;
  int level;
};

/// Runs every local leaf's walk and calls accept(leaf, hnode, near, elements) for each step, a
/// leaf's steps consecutive and in walk order. Faults are asked for in rounds, merged per
/// holder; the leaves whose walks completed are accepted while the answers travel. Every rank
/// agrees on errors (a throwing open or accept) at the end of each round. Collective.
template <SpaceFillingCurve C, class V, class E, class Open, class Accept, class Strategy>
HnodeStats walk(const WalkInput<C, V, E, Open>& in, Accept& accept, Strategy& strategy) {
  using Stream = HnodeStream<C, V, E>;
  using I = typename C::index_type;
  using Key = HnodeKey<I>;
  auto& v = in.values;
  const auto& comm = in.comm;
  const int p = comm.size(), me = comm.rank();
  const std::size_t known_before = v.size();
  HnodeStats st;
  std::vector<E> remote;
  std::vector<std::pair<std::size_t, std::size_t>> at;
  std::optional<std::string> failure;
  auto guarded = [&](auto&& f) {
    if (failure) return;
    try {
      f();
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "unknown exception (not derived from std::exception)";
    }
  };
  auto count_exchange = [&](const mpi::ExchangeStats& x) {
    st.messages += x.messages_sent;
    st.bytes += x.bytes_sent;
  };

  // Ahead: what the strategy sends before any walk.
  {
    std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(p));
    bool sends = false;
    guarded([&] { sends = strategy.ahead(in, out, st); });
    mpi::agree_on(comm, failure);
    if (sends) {
      mpi::ExchangeStats x;
      const auto got = mpi::sparse_exchange(comm, out, in.tag, &x);
      count_exchange(x);
      guarded([&] {
        for (std::size_t s = 0; s < got.sources.size(); ++s)
          Stream::absorb(got.from_index(s), v, remote, at);
      });
    }
  }

  Walker<C, V, Open> walker(v, in.box, in.open);
  std::vector<std::uint8_t> visited(v.size(), 0), asked;
  std::vector<std::size_t> pending(in.leaves.size());
  for (std::size_t i = 0; i < pending.size(); ++i) pending[i] = i;
  std::vector<typename Walker<C, V, Open>::Step> steps, ready_steps;
  std::vector<std::pair<std::size_t, std::size_t>> ready;  // (leaf, its steps' end)
  std::vector<std::size_t> faults;
  auto elements = [&](std::size_t n) -> std::span<const E> {
    if (v.local_leaf(n) != HnodeValues<C, V>::no_leaf) return in.elements_of(v.local_leaf(n));
    return std::span<const E>(remote.data() + at[n].first, at[n].second);
  };
  auto run_ready = [&] {
    guarded([&] {
      std::size_t b = 0;
      for (const auto& [leaf, end] : ready)
        for (; b < end; ++b) {
          const auto& s = ready_steps[b];
          accept(leaf, s.hnode, s.near, s.near ? elements(s.hnode) : std::span<const E>{});
        }
    });
    ready.clear();
    ready_steps.clear();
  };

  for (int round = 0;; ++round) {
    std::vector<std::vector<Key>> requests(static_cast<std::size_t>(p));
    std::vector<std::size_t> still;
    guarded([&] {
      for (std::size_t leaf : pending) {
        faults.clear();
        const auto reader = cell_box<C>(in.box, in.leaves.cell(leaf));
        if (walker.walk(reader, steps, faults, visited)) {
          ready_steps.insert(ready_steps.end(), steps.begin(), steps.end());
          ready.emplace_back(leaf, ready_steps.size());
          continue;
        }
        still.push_back(leaf);
        if (asked.size() < v.size()) asked.resize(v.size(), 0);
        for (std::size_t n : faults)
          if (!asked[n]) {
            asked[n] = 1;
            ++st.faults;
            requests[static_cast<std::size_t>(v.owner(n))].push_back({v.start(n), v.level(n)});
          }
      }
    });
    const int asks =
        std::any_of(requests.begin(), requests.end(), [](const auto& r) { return !r.empty(); });
    const int flags[2] = {failure ? 1 : 0, asks};
    int any[2] = {0, 0};
    mpi::all_reduce_max(comm, std::span<const int>(flags, 2), std::span<int>(any, 2));
    if (any[0]) mpi::agree_on(comm, failure);
    if (!any[1]) {
      run_ready();
      break;
    }
    ++st.rounds;
    if (round > 2 * (C::max_level + 2)) failure = "irregular::walk_hnodes: faults without end";
    mpi::agree_on(comm, failure);
    // Requests, merged per holder; answers sent without waiting, the ready leaves accepted while
    // they travel.
    mpi::ExchangeStats x;
    const auto asked_of_me = mpi::sparse_exchange(comm, requests, in.tag, &x);
    count_exchange(x);
    std::vector<std::vector<std::uint64_t>> answers(asked_of_me.sources.size());
    mpi::RequestSet sends;
    for (std::size_t s = 0; s < asked_of_me.sources.size(); ++s) {
      std::vector<std::byte> bytes;
      const int reader = asked_of_me.sources[s];
      guarded([&] {
        for (const Key& k : asked_of_me.from_index(s)) {
          strategy.remember(reader, k);
          const std::size_t n = v.find(k.start, k.level);
          if (n >= v.size() || v.owner(n) != me) continue;
          if (v.kind(n) == HnodeKind::internal)
            Stream::put_children(bytes, v, n, st);
          else if (v.kind(n) == HnodeKind::leaf)
            Stream::put_elements(bytes, v, n, in.elements_of(v.local_leaf(n)), st);
        }
      });
      auto& w = answers[s];
      w.assign(1 + (bytes.size() + 7) / 8, 0);
      w[0] = bytes.size();
      if (!bytes.empty()) std::memcpy(w.data() + 1, bytes.data(), bytes.size());
      sends.send_words(comm, w, reader, in.tag + 1);
      ++st.messages;
      st.bytes += w.size() * 8;
    }
    run_ready();
    for (int r = 0; r < p; ++r) {
      if (r == me || requests[static_cast<std::size_t>(r)].empty()) continue;
      const auto w = mpi::receive_words(comm, r, in.tag + 1);
      const auto n = static_cast<std::size_t>(w.empty() ? 0 : w[0]);
      guarded([&] {
        if (w.empty() || n > (w.size() - 1) * 8)
          throw std::logic_error("irregular::walk_hnodes: a truncated answer");
        Stream::absorb(
            std::span<const std::byte>(reinterpret_cast<const std::byte*>(w.data() + 1), n), v,
            remote, at);
      });
    }
    sends.wait_all();
    pending = std::move(still);
  }
  mpi::agree_on(comm, failure);
  if (visited.size() < v.size()) visited.resize(v.size(), 0);
  for (std::size_t n = known_before; n < v.size(); ++n) st.unopened += visited[n] == 0;
  return st;
}

}  // namespace hnodes
}  // namespace irregular
