// GhostLayer: read-only copies of the remote leaves that the local leaves read under a stencil,
// with the cached schedule that refreshes their values (exchange) and sends contributions back
// (accumulate). baiardi-collecting-remote-data §3: what every collection strategy produces.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/core/index.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/ghost/detail/serialized_values.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/mpi/transport.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/linear_leaves.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/nonblocking.hpp>
#include <boost/serialization/vector.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace irregular {

/// The leaf levels a collection gathers: ghosts whose level lies in [min, max]
/// (a multigrid operator on one level collects that level only).
struct LevelRange {
  int min = 0;        ///< lowest level gathered
  int max = INT_MAX;  ///< highest level gathered
  /// True if `level` lies in [min, max].
  [[nodiscard]] constexpr bool contains(int level) const noexcept {
    return level >= min && level <= max;
  }
  /// Every level.
  [[nodiscard]] static constexpr LevelRange all() noexcept { return {}; }
  /// One level.
  [[nodiscard]] static constexpr LevelRange only(int level) noexcept { return {level, level}; }
  /// Same bounds.
  friend constexpr bool operator==(const LevelRange&, const LevelRange&) = default;
};

/// Messages and bytes this rank sent in one phase of a collection (self-delivery not counted).
struct GhostPhase {
  std::uint64_t messages = 0;  ///< messages sent
  std::uint64_t bytes = 0;     ///< bytes sent
  /// Adds another phase's messages and bytes.
  GhostPhase& operator+=(const GhostPhase& o) noexcept {
    messages += o.messages;
    bytes += o.bytes;
    return *this;
  }
  /// Same messages and bytes.
  friend bool operator==(const GhostPhase&, const GhostPhase&) = default;
};

/// What one collection cost, per rank (all_reduce_sum gives the totals): the numbers the
/// papers' comparison of the strategies is made of.
struct GhostStats {
  GhostPhase extension;   ///< informed fault prevention: boundary leaves told to the neighbours
  GhostPhase prevention;  ///< fault prevention: leaves sent unasked
  GhostPhase request;     ///< request/answer: the requests
  GhostPhase answer;      ///< request/answer: the answers
  GhostPhase
      values;  ///< the first fill of the ghost values, when they do not ride with the records
  std::uint64_t extension_records = 0;  ///< boundary-leaf creations and invalidations sent
  std::uint64_t leaves_sent = 0;        ///< ghost leaves this rank sent to others
  std::uint64_t leaves_useless = 0;     ///< ghosts this rank received that no local leaf reads
  double seconds = 0;                   ///< wall time of the collection on this rank

  /// Collection messages (extension, prevention, request, answer), values excluded.
  [[nodiscard]] std::uint64_t messages() const noexcept {
    return extension.messages + prevention.messages + request.messages + answer.messages;
  }
  /// Collection bytes (extension, prevention, request, answer), values excluded.
  [[nodiscard]] std::uint64_t bytes() const noexcept {
    return extension.bytes + prevention.bytes + request.bytes + answer.bytes;
  }
  /// Every counter equal.
  friend bool operator==(const GhostStats&, const GhostStats&) = default;
};

/// Sum over the ranks (seconds: the slowest rank), on every rank. Collective over comm.
inline GhostStats all_reduce_sum(const boost::mpi::communicator& comm, const GhostStats& s) {
  std::uint64_t v[13] = {s.extension.messages, s.extension.bytes,   s.prevention.messages,
                         s.prevention.bytes,   s.request.messages,  s.request.bytes,
                         s.answer.messages,    s.answer.bytes,      s.values.messages,
                         s.values.bytes,       s.extension_records, s.leaves_sent,
                         s.leaves_useless};
  std::uint64_t g[13];
  mpi::all_reduce_sum(comm, std::span<const std::uint64_t>(v), std::span<std::uint64_t>(g));
  GhostStats r;
  r.extension = {g[0], g[1]};
  r.prevention = {g[2], g[3]};
  r.request = {g[4], g[5]};
  r.answer = {g[6], g[7]};
  r.values = {g[8], g[9]};
  r.extension_records = g[10];
  r.leaves_sent = g[11];
  r.leaves_useless = g[12];
  r.seconds = mpi::all_reduce_max(comm, s.seconds);
  return r;
}

/// The ghost leaves of one rank (sorted by start, disjoint from the local leaves) and the
/// schedule that moves their values: which local leaves go to which partner, and which ghosts
/// come from which owner, in the order the owner sends them.
template <SpaceFillingCurve C>
class GhostLayer : public LinearLeaves<C> {
 public:
  /// The curve that orders the ghost leaves.
  using curve_type = C;
  /// The curve's index type.
  using index_type = typename C::index_type;

  /// One ghost leaf as an owner announces it: its space and its element count, in 16 bytes
  /// for 64-bit indices (the level rides in the top byte of the count).
  struct Record {
    index_type start;           ///< the ghost leaf's first finest index
    std::uint64_t count_level;  ///< element count in the low 56 bits, level in the top byte
    /// An empty record (for receive buffers).
    Record() = default;
    /// The record of a leaf starting at `s`, of `level`, holding `count` (< 2^56) elements.
    Record(index_type s, std::uint64_t count, int level)
        : start(s), count_level(count | (static_cast<std::uint64_t>(level) << 56)) {
      IRREGULAR_ASSERT(count < (std::uint64_t{1} << 56));
    }
    /// The leaf's element count.
    [[nodiscard]] std::uint64_t count() const noexcept {
      return count_level & ((std::uint64_t{1} << 56) - 1);
    }
    /// The leaf's level.
    [[nodiscard]] int level() const noexcept { return static_cast<int>(count_level >> 56); }
  };

  // ---- the ghost leaves: LinearLeaves (size, starts, levels, cell, interval, find), and -------
  /// The element count of each ghost leaf, aligned with starts().
  [[nodiscard]] std::span<const std::uint64_t> counts() const noexcept { return counts_; }
  /// The rank that owns ghost g.
  [[nodiscard]] std::span<const int> owners() const noexcept { return owners_; }

  /// Whether a collection made this layer; `generation()` is the domain generation it is valid for.
  [[nodiscard]] bool collected() const noexcept { return collected_; }
  /// The domain generation this layer is valid for.
  [[nodiscard]] std::uint64_t generation() const noexcept { return generation_; }
  /// What the collection that made this layer cost on this rank.
  [[nodiscard]] const GhostStats& stats() const noexcept { return stats_; }
  /// The same, writable (later fills add their value messages).
  GhostStats& stats() noexcept { return stats_; }

  // ---- the schedule --------------------------------------------------------------------------
  /// Partners this rank sends to, and the local leaves each gets (ascending).
  [[nodiscard]] std::span<const int> send_ranks() const noexcept { return send_ranks_; }
  /// The local leaves sent to send_ranks()[k], ascending.
  [[nodiscard]] std::span<const std::size_t> send_leaves(std::size_t k) const noexcept {
    return std::span<const std::size_t>(send_leaves_)
        .subspan(send_offsets_[k], send_offsets_[k + 1] - send_offsets_[k]);
  }
  /// Owners this rank receives from, and the ghosts each fills, in the owner's send order.
  [[nodiscard]] std::span<const int> recv_ranks() const noexcept { return recv_ranks_; }
  /// The ghosts recv_ranks()[k] fills, in that owner's send order.
  [[nodiscard]] std::span<const std::size_t> recv_ghosts(std::size_t k) const noexcept {
    return std::span<const std::size_t>(recv_ghosts_)
        .subspan(recv_offsets_[k], recv_offsets_[k + 1] - recv_offsets_[k]);
  }

  /// Assembles a layer from what a collection decided: `sends[r]` the local leaves for rank r
  /// (any order, duplicates allowed), and the records received from each source (sources
  /// ascending, records of one source in the order that source's send list has, i.e. by start).
  static GhostLayer assemble(int me, std::vector<std::vector<std::size_t>>& sends,
                             std::span<const int> sources,
                             std::span<const std::size_t> source_offsets,
                             std::span<const Record> records, std::uint64_t generation) {
    GhostLayer g;
    g.collected_ = true;
    g.generation_ = generation;
    for (std::size_t r = 0; r < sends.size(); ++r) {
      auto& s = sends[r];
      if (static_cast<int>(r) == me || s.empty()) continue;
      std::sort(s.begin(), s.end());
      s.erase(std::unique(s.begin(), s.end()), s.end());
      g.send_ranks_.push_back(static_cast<int>(r));
      g.send_leaves_.insert(g.send_leaves_.end(), s.begin(), s.end());
      g.send_offsets_.push_back(g.send_leaves_.size());
    }
    // Ghosts in curve order; each source's records keep their arrival order in the schedule.
    std::vector<std::size_t> order(records.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return records[a].start < records[b].start; });
    std::vector<std::size_t> ghost_of(records.size());
    std::vector<int> owner_of_record(records.size());
    for (std::size_t k = 0; k < sources.size(); ++k)
      for (std::size_t i = source_offsets[k]; i < source_offsets[k + 1]; ++i)
        owner_of_record[i] = sources[k];
    for (std::size_t i = 0; i < order.size(); ++i) {
      const Record& r = records[order[i]];
      IRREGULAR_ASSERT(i == 0 || records[order[i - 1]].start +
                                         detail::span_at<C>(records[order[i - 1]].level()) <=
                                     r.start);
      ghost_of[order[i]] = i;
      g.push_back(r.start, r.level());
      g.counts_.push_back(r.count());
      g.owners_.push_back(owner_of_record[order[i]]);
    }
    for (std::size_t k = 0; k < sources.size(); ++k) {
      if (source_offsets[k] == source_offsets[k + 1]) continue;
      g.recv_ranks_.push_back(sources[k]);
      for (std::size_t i = source_offsets[k]; i < source_offsets[k + 1]; ++i)
        g.recv_ghosts_.push_back(ghost_of[i]);
      g.recv_offsets_.push_back(g.recv_ghosts_.size());
    }
    for (std::size_t k = 0; k < g.send_ranks_.size(); ++k)
      g.send_runs_.push_back(consecutive(g.send_leaves(k)));
    for (std::size_t k = 0; k < g.recv_ranks_.size(); ++k)
      g.recv_runs_.push_back(consecutive(g.recv_ghosts(k)));
    return g;
  }

  // ---- moving values along the schedule ------------------------------------------------------

  /// Readies exchange() for values of T with these offsets: the buffers of `old` (the layer this
  /// one replaces) are taken over and sized for this schedule, so the first exchange after a
  /// collection allocates and faults in nothing more than later ones (raw types). The buffers
  /// never exceed the largest exchange served.
  template <class T>
  void prepare_exchange(GhostLayer& old, std::span<const std::size_t> local_offsets,
                        std::span<const std::size_t> ghost_offsets) {
    std::swap(send_bytes_, old.send_bytes_);
    std::swap(recv_bytes_, old.recv_bytes_);
    std::swap(recv_at_, old.recv_at_);
    if constexpr (mpi::is_raw_transportable<T>) {
      std::size_t packing = 0, staged = 0;
      for (std::size_t k = 0; k < send_ranks_.size(); ++k)
        if (!send_runs_[k]) packing += volume(send_leaves(k), local_offsets) * sizeof(T);
      for (std::size_t k = 0; k < recv_ranks_.size(); ++k)
        if (!recv_runs_[k]) staged += volume(recv_ghosts(k), ghost_offsets) * sizeof(T);
      if (send_bytes_.size() < packing) send_bytes_.resize(packing);
      if (recv_bytes_.size() < staged) recv_bytes_.resize(staged);
      recv_at_.reserve(recv_ranks_.size());
      requests_.reserve(send_ranks_.size() + recv_ranks_.size());
    }
  }

  /// Sends the values of the scheduled local leaves to their partners and receives the values of
  /// every ghost: local leaf i's values are local[local_offsets[i] .. local_offsets[i+1]), ghost
  /// g's land in ghost[ghost_offsets[g] ..). One message per partner, receives straight into
  /// place when an owner's ghosts are consecutive (contiguous maps). Raw types travel as bytes,
  /// others serialized. Returns what this rank sent. Raw types: collective over comm among
  /// partners. Serialized types: collective over all of comm, which agrees (one allreduce) on a
  /// serialize() that threw while saving or loading: every rank then throws the same
  /// irregular::collective_error naming `who`, and no ghost value has changed.
  template <class T>
  GhostPhase exchange(const boost::mpi::communicator& comm, int tag, std::span<const T> local,
                      std::span<const std::size_t> local_offsets, std::span<T> ghost,
                      std::span<const std::size_t> ghost_offsets,
                      const char* who = "irregular::GhostLayer::exchange") const {
    return transfer<T>(
        comm, tag, Direction::forward, local, local_offsets, ghost, ghost_offsets,
        [](T&, const T&) {}, who);
  }

  /// The reverse: each ghost's values go back to its owner, which combines them into its own
  /// with op(mine, contribution), partners in rank order, values in schedule order (so the
  /// result does not depend on arrival order). Raw types: collective over comm among partners,
  /// and a throwing op leaves the error to the caller. Serialized types: collective over all of
  /// comm, which agrees on a serialize() or an op that threw on any rank (every rank throws the
  /// same irregular::collective_error; the caller restores what op changed).
  template <class T, class Op>
  GhostPhase accumulate(const boost::mpi::communicator& comm, int tag, std::span<T> local,
                        std::span<const std::size_t> local_offsets, std::span<const T> ghost,
                        std::span<const std::size_t> ghost_offsets, Op&& op,
                        const char* who = "irregular::GhostLayer::accumulate") const {
    return transfer<T>(comm, tag, Direction::reverse, std::span<const T>(ghost), ghost_offsets,
                       local, local_offsets, op, who);
  }

 private:
  enum class Direction { forward, reverse };

  // Values of a list of leaves: O(1) for a consecutive run (most partners under segment maps).
  static std::size_t volume(std::span<const std::size_t> ids, std::span<const std::size_t> offsets,
                            bool run) {
    if (ids.empty()) return 0;
    return run ? offsets[ids.back() + 1] - offsets[ids.front()] : volume(ids, offsets);
  }
  static std::size_t volume(std::span<const std::size_t> ids,
                            std::span<const std::size_t> offsets) {
    std::size_t n = 0;
    for (std::size_t id : ids) n += offsets[id + 1] - offsets[id];
    return n;
  }
  // Whether ids are consecutive ascending: their values are one contiguous run.
  static bool consecutive(std::span<const std::size_t> ids) {
    for (std::size_t i = 1; i < ids.size(); ++i)
      if (ids[i] != ids[i - 1] + 1) return false;
    return true;
  }

  // Forward: senders are the owners (send lists over local leaves), receivers fill ghosts.
  // Reverse: senders are the ghost holders (recv lists over ghosts), receivers combine.
  template <class T, class Combine>
  GhostPhase transfer(const boost::mpi::communicator& comm, int tag, Direction dir,
                      std::span<const T> from, std::span<const std::size_t> from_offsets,
                      std::span<T> to, std::span<const std::size_t> to_offsets, Combine&& combine,
                      [[maybe_unused]] const char* who) const {
    const bool fwd = dir == Direction::forward;
    const auto& out_ranks = fwd ? send_ranks_ : recv_ranks_;
    const auto& in_ranks = fwd ? recv_ranks_ : send_ranks_;
    auto out_ids = [&](std::size_t k) { return fwd ? send_leaves(k) : recv_ghosts(k); };
    auto in_ids = [&](std::size_t k) { return fwd ? recv_ghosts(k) : send_leaves(k); };
    // Whether a partner's leaves are one consecutive run: fixed by the schedule, found once.
    auto out_run = [&](std::size_t k) { return (fwd ? send_runs_ : recv_runs_)[k] != 0; };
    auto in_run = [&](std::size_t k) { return (fwd ? recv_runs_ : send_runs_)[k] != 0; };
    GhostPhase sent;
    if constexpr (mpi::is_raw_transportable<T>) {
      // Raw bytes through buffers kept between calls: a steady exchange allocates nothing.
      constexpr std::size_t w = sizeof(T);
      recv_at_.assign(in_ranks.size(), SIZE_MAX);
      std::size_t staged = 0;
      for (std::size_t k = 0; k < in_ranks.size(); ++k)
        if (!(fwd && in_run(k)))
          recv_at_[k] = staged, staged += volume(in_ids(k), to_offsets, in_run(k)) * w;
      if (recv_bytes_.size() < staged) recv_bytes_.resize(staged);
      // Receives first: in place when the run is contiguous and nothing is combined.
      for (std::size_t k = 0; k < in_ranks.size(); ++k) {
        const auto ids = in_ids(k);
        const std::size_t n = volume(ids, to_offsets, in_run(k)) * w;
        if (n == 0) continue;
        void* dst = recv_at_[k] == SIZE_MAX
                        ? static_cast<void*>(to.data() + to_offsets[ids.front()])
                        : static_cast<void*>(recv_bytes_.data() + recv_at_[k]);
        requests_.receive(comm, dst, n, in_ranks[k], tag);
      }
      std::size_t packing = 0;
      for (std::size_t k = 0; k < out_ranks.size(); ++k)
        if (!out_run(k)) packing += volume(out_ids(k), from_offsets) * w;
      if (send_bytes_.size() < packing)
        send_bytes_.resize(packing);  // sized before any send is posted
      std::size_t at = 0;
      for (std::size_t k = 0; k < out_ranks.size(); ++k) {
        const auto ids = out_ids(k);
        const std::size_t n = volume(ids, from_offsets, out_run(k)) * w;
        if (n == 0) continue;
        const void* src;
        if (out_run(k)) {
          src = from.data() + from_offsets[ids.front()];
        } else {
          src = send_bytes_.data() + at;
          for (std::size_t id : ids) {
            const std::size_t first = from_offsets[id], count = from_offsets[id + 1] - first;
            if (count == 1)  // one value (cell data): a copy of constant size, inlined
              std::memcpy(send_bytes_.data() + at, from.data() + first, w);
            else
              std::memcpy(send_bytes_.data() + at, from.data() + first, count * w);
            at += count * w;
          }
        }
        requests_.send(comm, src, n, out_ranks[k], tag);
        sent.messages += 1;
        sent.bytes += n;
      }
      requests_.wait_all();
      // Staged values go to their slots: copied (forward) or combined into the owner's (reverse).
      for (std::size_t k = 0; k < in_ranks.size(); ++k) {
        if (recv_at_[k] == SIZE_MAX) continue;
        const std::byte* from_bytes = recv_bytes_.data() + recv_at_[k];
        for (std::size_t id : in_ids(k))
          for (std::size_t j = to_offsets[id]; j < to_offsets[id + 1]; ++j, from_bytes += w) {
            if (fwd) {
              std::memcpy(static_cast<void*>(&to[j]), from_bytes, w);
            } else {
              T contribution;
              std::memcpy(static_cast<void*>(&contribution), from_bytes, w);
              combine(to[j], std::as_const(contribution));
            }
          }
      }
    } else {
      // serialize() is user code: a throw while saving or loading on one rank must reach every
      // rank as one agreed error, with no value changed (detail/serialized_values.hpp).
      const auto t = detail::transfer_serialized<T>(
          comm, tag, who, fwd, std::span<const int>(out_ranks), out_ids, from, from_offsets,
          std::span<const int>(in_ranks), in_ids, to, to_offsets, combine);
      sent.messages += t.messages;
      sent.bytes += t.bytes;
    }
    return sent;
  }

  // Scratch of the raw exchange, kept between calls.
  mutable mpi::RequestSet requests_;
  mutable std::vector<std::byte> send_bytes_, recv_bytes_;
  mutable std::vector<std::size_t> recv_at_;

  std::vector<std::uint64_t> counts_;
  std::vector<int> owners_;
  std::vector<int> send_ranks_;
  std::vector<std::size_t> send_offsets_{0}, send_leaves_;
  std::vector<int> recv_ranks_;
  std::vector<std::size_t> recv_offsets_{0}, recv_ghosts_;
  std::vector<char> send_runs_, recv_runs_;  // per partner: its leaves form one consecutive run
  GhostStats stats_{};
  std::uint64_t generation_ = 0;
  bool collected_ = false;
};

}  // namespace irregular
