// The hnodes that travel in a tree walk (distributed/ghost/hnode_walk.hpp): what a walk reads
// (WalkInput), the byte stream of children blocks and leaves' elements, and the prevention
// strategies' common sender (baiardi-collecting-remote-data, fault prevention for tree codes).
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
#include <array>
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
  std::uint64_t reused_sets = 0;    ///< walks that sent kept sets again (informed prevention)
  /// Adds another walk's counts.
  HnodeStats& operator+=(const HnodeStats& o) noexcept {
    messages += o.messages;
    bytes += o.bytes;
    hnodes_sent += o.hnodes_sent;
    elements_sent += o.elements_sent;
    unopened += o.unopened;
    faults += o.faults;
    rounds += o.rounds;
    reused_sets += o.reused_sets;
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

/// What an opening test may read of an hnode: `open(view, reader_box)` sees its box, its cell
/// and its value (reduce_up's), so criteria such as the distance from the reader to the centre
/// of mass, or skipping empty hnodes, can be written. It must stay monotone in the reader box.
template <int D, class V>
struct HnodeView {
  const Box<D>& box;  ///< the hnode's box
  Cell<D> cell;       ///< its cell
  const V& value;     ///< its value
};

/// Whether `open` opens hnode n of `v` (box `hb`) for a reader with box `reader`: open(hb,
/// reader) when open takes two boxes, else open(HnodeView, reader).
template <class Open, SpaceFillingCurve C, class V>
bool opens(Open& open, const HnodeValues<C, V>& v, std::size_t n, const Box<C::dim>& hb,
           const Box<C::dim>& reader) {
  if constexpr (std::is_invocable_r_v<bool, Open&, const Box<C::dim>&, const Box<C::dim>&>) {
    return open(hb, reader);
  } else {
    static_assert(
        std::is_invocable_r_v<bool, Open&, const HnodeView<C::dim, V>&, const Box<C::dim>&>,
        "walk_hnodes: open(hnode_box, reader_box) or open(HnodeView<dim, V>, reader_box), "
        "returning bool");
    return open(HnodeView<C::dim, V>{hb, v.cell(n), v.value(n)}, reader);
  }
}

/// Where the hnodes are: the tree with its values, this rank's leaves and their elements (raw
/// values), the domain's box, the predicate and the communicator with two tags.
template <SpaceFillingCurve C, class V, class E, class Open>
struct WalkInput {
  const boost::mpi::communicator& comm;  ///< the domain's communicator
  HnodeValues<C, V>& values;             ///< the tree walked; remote hnodes join it
  const LocalLeaves<C>& leaves;          ///< this rank's leaves (the readers)
  std::function<std::span<const E>(std::size_t)> elements_of;  ///< elements of a local leaf
  const Box<C::dim>& box;                                      ///< the domain's box
  Open& open;                                                  ///< opens(): box or HnodeView
  int tag;                                                     ///< tag and tag + 1 are used
};

/// The elements of the remote leaves one walk received, and the hnodes it marked present.
template <class E>
struct RemoteElements {
  std::vector<E> elements;                              ///< every remote leaf's, one after another
  std::vector<std::pair<std::size_t, std::size_t>> at;  ///< (first, count) per hnode
  std::vector<std::size_t> present;                     ///< the leaves marked present, in order
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
  /// Attaches what `in` holds; remote leaves' elements go to `got`. A truncated message throws
  /// before its block changes `v`.
  static void absorb(std::span<const std::byte> in, Values& v, RemoteElements<E>& got) {
    std::size_t pos = 0;
    std::array<Record, static_cast<std::size_t>(Values::children)> block;
    while (pos < in.size()) {
      const auto t = static_cast<std::uint8_t>(in[pos++]);
      if (t == children_tag) {
        for (auto& r : block) r = take<Record>(in, pos);
        const int l = block[0].level - 1;
        const std::size_t parent = v.find(detail::ancestor_start<C>(block[0].start, l), l);
        if (parent >= v.size() || v.kind(parent) != HnodeKind::closed) continue;  // known already
        // The children first: they stay unreachable until the parent opens, if an add throws.
        std::array<std::size_t, static_cast<std::size_t>(Values::children)> kids;
        for (std::size_t k = 0; k < block.size(); ++k)
          kids[k] = v.add(block[k].start, block[k].level, HnodeKind::closed, v.owner(parent),
                          block[k].value, block[k].leaf);
        v.open_links(parent);
        for (std::size_t k = 0; k < block.size(); ++k) v.link(parent, static_cast<int>(k), kids[k]);
      } else if (t == elements_tag) {
        const I s = take<I>(in, pos);
        const int l = take<std::uint8_t>(in, pos);
        const auto count = static_cast<std::size_t>(take<std::uint64_t>(in, pos));
        if (count > (in.size() - pos) / sizeof(E))
          throw std::logic_error("irregular::walk_hnodes: a truncated hnode message");
        const std::size_t n = v.find(s, l);
        if (n < v.size() && v.kind(n) == HnodeKind::closed && v.is_leaf(n)) {
          const std::size_t first = got.elements.size();
          if (got.at.size() < v.size()) got.at.resize(v.size(), {0, 0});
          got.present.reserve(got.present.size() + 1);
          got.elements.resize(first + count);
          if (count > 0)
            std::memcpy(static_cast<void*>(got.elements.data() + first), in.data() + pos,
                        count * sizeof(E));
          got.at[n] = {first, count};
          got.present.push_back(n);  // reserved: cannot throw
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
          if (opens(in.open, v, n, hb, b)) opened.push_back(b);
        if (opened.empty()) return;
        if (entries) entries->push_back(n);
        if (v.kind(n) == HnodeKind::leaf) {
          Stream::put_elements(out, v, n, in.elements_of(v.local_leaf(n)), st);
          return;
        }
        Stream::put_children(out, v, n, st);
        // The children fill the next level's slot, never this one: no copy.
        for (int k = 0; k < HnodeValues<C, V>::children; ++k) visit(v.child(n, k), opened);
      };
  for (std::size_t r : v.private_roots()) visit(r, boxes);
}

}  // namespace hnodes
}  // namespace irregular
