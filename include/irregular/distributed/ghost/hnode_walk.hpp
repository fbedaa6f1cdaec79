// Remote hnodes by a traversal predicate (baiardi-collecting-remote-data, for tree codes): every
// local leaf walks the hnode tree from the root, opening the hnodes `open(hnode_box, reader_box)`
// asks for; an opened hnode another rank holds is a fault, served by request/answer rounds. The
// prevention strategies send ahead what the readers will open, so the rounds find nothing to do:
// fault prevention decides by each reader's bounding box (the "locally essential tree"),
// informed fault prevention by the reader's private roots, and reuses its sets while they stay.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/box.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/ghost/hnode_strategies.hpp>
#include <irregular/distributed/ghost/hnode_stream.hpp>
#include <irregular/distributed/htree/hnode_values.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/mpi/sparse_exchange.hpp>

#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace irregular::hnodes {

/// One walk: from the root, every hnode `open` opens (box of hnode, box of reader) is entered,
/// the others accepted as they are; leaves it opens are accepted with their elements. Records
/// each accepted hnode (near or not) and every closed hnode it must open (a fault).
template <SpaceFillingCurve C, class V, class Open>
class Walker {
 public:
  /// One accepted hnode of a walk.
  struct Step {
    std::size_t hnode;  ///< the hnode
    bool near;          ///< a leaf opened (its elements are read), else taken as it is
  };
  /// A walker over `v`, hnode boxes in `box`, opening by `open`.
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
      const bool opened = opens(open_, v_, n, box_of(n), reader);
      if constexpr (IRREGULAR_ASSERTS_ON)
        if (!opened) check_monotone(n, reader);
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
  // Checks (debug and test builds) one closed hnode in 64: a reader box inside this one (its
  // lower half on every axis) must not open what this one leaves closed, or the prevention
  // strategies, which test a box around the readers, would miss what the readers open.
  void check_monotone(std::size_t n, const Box<C::dim>& reader) {
    if (++closed_ % 64 != 0) return;
    Box<C::dim> inner = reader;
    for (int d = 0; d < C::dim; ++d)
      inner.hi[d] = reader.lo[d] + 0.5 * (reader.hi[d] - reader.lo[d]);
    if (opens(open_, v_, n, box_of(n), inner))
      throw invalid_argument(
          "irregular::walk_hnodes: open is not monotone in the reader box: a reader box inside "
          "another opens an hnode the larger one leaves closed (hnode at level " +
          std::to_string(v_.level(n)) + ")");
  }

  // Every walk meets the hnodes near the root again: their boxes are computed once.
  const Box<C::dim>& box_of(std::size_t n) {
    if (n >= have_.size()) {
      have_.resize(v_.size(), 0);
      boxes_.resize(v_.size());
    }
    if (!have_[n]) {
      boxes_[n] = cell_box<C>(box_, v_.cell(n));
      have_[n] = 1;
    }
    return boxes_[n];
  }

  const HnodeValues<C, V>& v_;
  const Box<C::dim>& box_;
  Open& open_;
  std::vector<std::size_t> stack_;
  std::vector<Box<C::dim>> boxes_;
  std::vector<std::uint8_t> have_;
  std::uint64_t closed_ = 0;  // closed hnodes met, for check_monotone's sampling
};

/// A request for an hnode's children or a leaf's elements.
template <class I>
struct HnodeKey {
  I start;    ///< the hnode's first finest index
  int level;  ///< its level
};

/// Runs every local leaf's walk and calls accept(leaf, hnode, near, elements) for each step, a
/// leaf's steps consecutive and in walk order. Faults are asked for in rounds, merged per
/// holder; the leaves whose walks completed are accepted while the answers travel. Every rank
/// agrees on errors (a throwing open or accept) at the end of each round.
template <SpaceFillingCurve C, class V, class E, class Open, class Accept, class Strategy>
class WalkRounds {
  using Stream = HnodeStream<C, V, E>;
  using Key = HnodeKey<typename C::index_type>;
  using Step = typename Walker<C, V, Open>::Step;

 public:
  /// The rounds of one walk_hnodes call.
  WalkRounds(const WalkInput<C, V, E, Open>& in, Accept& accept, Strategy& strategy)
      : in_(in),
        v_(in.values),
        accept_(accept),
        strategy_(strategy),
        walker_(v_, in.box, in.open),
        known_before_(v_.size()),
        visited_(v_.size(), 0),
        pending_(in.leaves.size()) {
    for (std::size_t i = 0; i < pending_.size(); ++i) pending_[i] = i;
  }
  // The remote leaves' elements live in this walk only, so it closes the leaves it marked
  // present, whether it returns or throws: `values` never claims elements it does not hold.
  // Cheaper and clearer than keeping them as long as the values: no memory held between walks,
  // and no stale copies when elements change between walks (the values check the tree only).
  // The remote hnodes' records stay: they are values, valid as long as `values` is.
  ~WalkRounds() {
    for (std::size_t n : remote_.present) v_.mark_closed(n);
  }
  WalkRounds(const WalkRounds&) = delete;
  WalkRounds& operator=(const WalkRounds&) = delete;

  /// The whole walk. Collective over in.comm.
  HnodeStats run() {
    ahead();
    for (int round = 0;; ++round) {
      std::vector<std::vector<Key>> requests(static_cast<std::size_t>(in_.comm.size()));
      guarded([&] { walk_pending(requests); });
      const int asks =
          std::any_of(requests.begin(), requests.end(), [](const auto& r) { return !r.empty(); });
      const int flags[2] = {failure_ ? 1 : 0, asks};
      int any[2] = {0, 0};
      mpi::all_reduce_max(in_.comm, std::span<const int>(flags, 2), std::span<int>(any, 2));
      if (any[0]) mpi::agree_on(in_.comm, failure_);
      if (!any[1]) {
        run_ready();
        break;
      }
      ++st_.rounds;
      if (round > 2 * (C::max_level + 2)) failure_ = "irregular::walk_hnodes: faults without end";
      mpi::agree_on(in_.comm, failure_);
      ask_and_answer(requests);
    }
    mpi::agree_on(in_.comm, failure_);
    visited_.resize(v_.size(), 0);
    for (std::size_t n = known_before_; n < v_.size(); ++n) st_.unopened += visited_[n] == 0;
    return st_;
  }

 private:
  template <class F>
  void guarded(F&& f) {
    if (failure_) return;
    try {
      f();
    } catch (const std::exception& e) {
      failure_ = e.what();
    } catch (...) {
      failure_ = "unknown exception (not derived from std::exception)";
    }
  }
  void count(const mpi::ExchangeStats& x) {
    st_.messages += x.messages_sent;
    st_.bytes += x.bytes_sent;
  }

  // What the strategy sends before any walk.
  void ahead() {
    std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(in_.comm.size()));
    bool sends = false;
    guarded([&] { sends = strategy_.ahead(in_, out, st_); });
    mpi::agree_on(in_.comm, failure_);
    if (!sends) return;
    mpi::ExchangeStats x;
    const auto got = mpi::sparse_exchange(in_.comm, out, in_.tag, &x);
    count(x);
    guarded([&] {
      for (std::size_t s = 0; s < got.sources.size(); ++s)
        Stream::absorb(got.from_index(s), v_, remote_);
    });
  }

  // Walks the pending leaves: complete walks wait in ready_, the others ask for their faults.
  void walk_pending(std::vector<std::vector<Key>>& requests) {
    std::vector<std::size_t> still;
    for (std::size_t leaf : pending_) {
      faults_.clear();
      const auto reader = cell_box<C>(in_.box, in_.leaves.cell(leaf));
      if (walker_.walk(reader, steps_, faults_, visited_)) {
        ready_steps_.insert(ready_steps_.end(), steps_.begin(), steps_.end());
        ready_.emplace_back(leaf, ready_steps_.size());
        continue;
      }
      still.push_back(leaf);
      asked_.resize(v_.size(), 0);
      for (std::size_t n : faults_)
        if (!asked_[n]) {
          asked_[n] = 1;
          ++st_.faults;
          requests[static_cast<std::size_t>(v_.owner(n))].push_back({v_.start(n), v_.level(n)});
        }
    }
    pending_ = std::move(still);
  }

  std::span<const E> elements(std::size_t n) const {
    if (v_.local_leaf(n) != HnodeValues<C, V>::no_leaf) return in_.elements_of(v_.local_leaf(n));
    const auto [first, count] = remote_.at[n];
    return std::span<const E>(remote_.elements.data() + first, count);
  }
  void run_ready() {
    guarded([&] {
      std::size_t b = 0;
      for (const auto& [leaf, end] : ready_)
        for (; b < end; ++b) {
          const auto& s = ready_steps_[b];
          accept_(leaf, s.hnode, s.near, s.near ? elements(s.hnode) : std::span<const E>{});
        }
    });
    ready_.clear();
    ready_steps_.clear();
  }

  // Requests, merged per holder; answers sent without waiting, the ready leaves accepted while
  // they travel, then the answers taken in.
  void ask_and_answer(const std::vector<std::vector<Key>>& requests) {
    mpi::ExchangeStats x;
    const auto asked_of_me = mpi::sparse_exchange(in_.comm, requests, in_.tag, &x);
    count(x);
    std::vector<std::vector<std::uint64_t>> answers(asked_of_me.sources.size());
    mpi::RequestSet sends;
    for (std::size_t s = 0; s < asked_of_me.sources.size(); ++s) {
      answers[s] = answer(asked_of_me.sources[s], asked_of_me.from_index(s));
      sends.send_words(in_.comm, answers[s], asked_of_me.sources[s], in_.tag + 1);
      ++st_.messages;
      st_.bytes += answers[s].size() * 8;
    }
    run_ready();
    for (int r = 0; r < in_.comm.size(); ++r) {
      if (r == in_.comm.rank() || requests[static_cast<std::size_t>(r)].empty()) continue;
      const auto w = mpi::receive_words(in_.comm, r, in_.tag + 1);
      guarded([&] {
        const auto n = static_cast<std::size_t>(w.empty() ? 0 : w[0]);
        if (w.empty() || n > (w.size() - 1) * 8)
          throw std::logic_error("irregular::walk_hnodes: a truncated answer");
        Stream::absorb(
            std::span<const std::byte>(reinterpret_cast<const std::byte*>(w.data() + 1), n), v_,
            remote_);
      });
    }
    sends.wait_all();
  }

  // The children or elements `reader` asked for, as words (the first: their byte count).
  std::vector<std::uint64_t> answer(int reader, std::span<const Key> keys) {
    std::vector<std::byte> bytes;
    guarded([&] {
      for (const Key& k : keys) {
        strategy_.remember(reader, k);
        const std::size_t n = v_.find(k.start, k.level);
        if (n >= v_.size() || v_.owner(n) != in_.comm.rank()) continue;
        if (v_.kind(n) == HnodeKind::internal)
          Stream::put_children(bytes, v_, n, st_);
        else if (v_.kind(n) == HnodeKind::leaf)
          Stream::put_elements(bytes, v_, n, in_.elements_of(v_.local_leaf(n)), st_);
      }
    });
    std::vector<std::uint64_t> w(1 + (bytes.size() + 7) / 8, 0);
    w[0] = bytes.size();
    if (!bytes.empty()) std::memcpy(w.data() + 1, bytes.data(), bytes.size());
    return w;
  }

  const WalkInput<C, V, E, Open>& in_;
  HnodeValues<C, V>& v_;
  Accept& accept_;
  Strategy& strategy_;
  Walker<C, V, Open> walker_;
  std::size_t known_before_;
  HnodeStats st_;
  std::optional<std::string> failure_;
  RemoteElements<E> remote_;  // this walk's remote leaves' elements
  std::vector<std::uint8_t> visited_, asked_;
  std::vector<std::size_t> pending_, faults_;
  std::vector<Step> steps_, ready_steps_;
  std::vector<std::pair<std::size_t, std::size_t>> ready_;  // (leaf, its steps' end)
};

/// The walk of every local leaf (WalkRounds). Collective over in.comm.
template <SpaceFillingCurve C, class V, class E, class Open, class Accept, class Strategy>
HnodeStats walk(const WalkInput<C, V, E, Open>& in, Accept& accept, Strategy& strategy) {
  return WalkRounds<C, V, E, Open, Accept, Strategy>(in, accept, strategy).run();
}

}  // namespace irregular::hnodes
