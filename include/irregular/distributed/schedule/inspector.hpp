// The inspector of kaddoura-ranka-1995 §3.2 (Figure 1, phase B): translation by block boundaries,
// duplicate removal, a ghost region appended after the local data, and the communication schedule
// (per partner a send list and a permutation list) built three ways: simple (requests to the
// owners, two rounds), schedule_sort1 and schedule_sort2 (symmetric patterns, no messages; Figure
// 4).
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/schedule/block_layout.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/merged_exchange.hpp>
#include <irregular/schedule/block_translation.hpp>

#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace irregular {

/// How the send lists are found (kaddoura-ranka §3.2, Table 3).
enum class ScheduleStrategy {
  simple,  ///< requests go to the owners, which answer with their send lists: two rounds, any
           ///< pattern
  sort1,   ///< symmetric patterns: no messages; send lists generated in any order, then sorted
  sort2,   ///< symmetric patterns: no messages; rows traversed in increasing local order, no sort
};

/// The strategies' names, in enum order.
inline constexpr std::array<std::string_view, 3> schedule_strategy_names = {"simple", "sort1",
                                                                            "sort2"};

/// The strategy's name, which parse_schedule_strategy() reads back.
[[nodiscard]] constexpr std::string_view to_string(ScheduleStrategy s) noexcept {
  return schedule_strategy_names[static_cast<std::size_t>(s)];
}
/// "simple", "sort1" or "sort2"; throws irregular::invalid_argument otherwise.
[[nodiscard]] inline ScheduleStrategy parse_schedule_strategy(std::string_view name) {
  for (std::size_t i = 0; i < schedule_strategy_names.size(); ++i)
    if (schedule_strategy_names[i] == name) return static_cast<ScheduleStrategy>(i);
  throw invalid_argument("irregular::parse_schedule_strategy: unknown strategy '" +
                         std::string(name) + "' (expected simple, sort1 or sort2)");
}

/// How build_schedule works.
struct ScheduleOptions {
  ScheduleStrategy strategy = ScheduleStrategy::sort2;  ///< how the send lists are found
  /// sort1 and sort2 trust the pattern to be symmetric (local row i references remote node j iff
  /// j's row references i). With this on, the builder checks it with one extra exchange (counted
  /// apart, in check_messages) and throws on every rank when it fails; on by default in debug
  /// builds.
  bool verify_symmetry = IRREGULAR_ASSERTS_ON != 0;
};

/// What building one schedule cost this rank. Schedule messages exclude the symmetry check.
struct ScheduleStats {
  std::uint64_t messages_sent = 0;      ///< schedule messages this rank sent
  std::uint64_t bytes_sent = 0;         ///< their bytes
  std::uint64_t messages_received = 0;  ///< schedule messages this rank received
  std::uint64_t bytes_received = 0;     ///< their bytes
  std::uint64_t check_messages = 0;     ///< messages of the symmetry check (verify_symmetry)
  double seconds = 0;                   ///< wall time of build_schedule on this rank
};

namespace detail {
struct ScheduleBuilder;
}  // namespace detail

/// A communication schedule and the rewritten indirection array (the inspector's output). Ghost
/// slot s lives at index local_size() + s of every data array the executor moves. Valid until the
/// layout is remapped (stale() then; the executor refuses it). Copies share the communicator.
class CommSchedule {
 public:
  /// An empty schedule, stale until build_schedule makes one.
  CommSchedule() = default;

  /// The strategy that built it.
  [[nodiscard]] ScheduleStrategy strategy() const noexcept { return strategy_; }
  /// The layout's communicator.
  [[nodiscard]] const boost::mpi::communicator& comm() const noexcept { return comm_; }
  /// Number of nodes this rank holds (its block of the layout).
  [[nodiscard]] std::int64_t local_size() const noexcept { return local_size_; }
  /// Number of ghost slots: remote nodes the local rows reference.
  [[nodiscard]] std::int64_t ghost_size() const noexcept {
    return static_cast<std::int64_t>(ghost_globals_.size());
  }
  /// Length of every data array the executor moves: local values, then the ghost region.
  [[nodiscard]] std::int64_t total_size() const noexcept { return local_size_ + ghost_size(); }
  /// The indirection array rewritten to local indices: < local_size() local, otherwise ghost slots.
  [[nodiscard]] std::span<const std::int64_t> local_refs() const noexcept { return local_refs_; }
  /// Global index of each ghost slot.
  [[nodiscard]] std::span<const std::int64_t> ghost_globals() const noexcept {
    return ghost_globals_;
  }

  /// Partners this rank sends to (gather), ascending, and for each its send list: local indices
  /// in message order.
  [[nodiscard]] std::span<const int> send_ranks() const noexcept { return send_ranks_; }
  /// The local indices sent to send_ranks()[partner], in message order.
  [[nodiscard]] std::span<const std::int64_t> send_list(std::size_t partner) const noexcept {
    return span_of(send_list_, send_offsets_, partner);
  }
  /// Partners this rank receives from (gather), ascending, and for each its permutation list:
  /// the ghost slots the message's values go to, in message order.
  [[nodiscard]] std::span<const int> recv_ranks() const noexcept { return recv_ranks_; }
  /// The ghost slots recv_ranks()[partner]'s values go to, in message order.
  [[nodiscard]] std::span<const std::int64_t> recv_slots(std::size_t partner) const noexcept {
    return span_of(recv_slots_, recv_offsets_, partner);
  }
  /// Values this rank sends per gather: the sum of the send lists.
  [[nodiscard]] std::int64_t send_total() const noexcept {
    return static_cast<std::int64_t>(send_list_.size());
  }
  /// True when every partner's slots are consecutive (sort1, sort2): messages land in place.
  [[nodiscard]] bool contiguous_receive() const noexcept { return contiguous_receive_; }

  /// What building it cost this rank.
  [[nodiscard]] const ScheduleStats& stats() const noexcept { return stats_; }
  /// The layout generation it was built in.
  [[nodiscard]] std::uint64_t generation() const noexcept { return generation_; }
  /// The layout was remapped after this schedule was built (or it was never built).
  [[nodiscard]] bool stale() const noexcept { return !token_ || *token_ != generation_; }
  /// The layout's generation now (0 when never built).
  [[nodiscard]] std::uint64_t layout_generation() const noexcept { return token_ ? *token_ : 0; }

 private:
  friend CommSchedule build_schedule(const BlockLayout&, std::span<const std::int64_t>,
                                     std::span<const std::int64_t>, ScheduleOptions);
  friend struct detail::ScheduleBuilder;
  static std::span<const std::int64_t> span_of(const std::vector<std::int64_t>& v,
                                               const std::vector<std::int64_t>& off,
                                               std::size_t j) noexcept {
    return {v.data() + off[j], static_cast<std::size_t>(off[j + 1] - off[j])};
  }

  boost::mpi::communicator comm_;
  ScheduleStrategy strategy_ = ScheduleStrategy::sort2;
  std::int64_t local_size_ = 0;
  std::vector<std::int64_t> local_refs_, ghost_globals_;
  std::vector<int> send_ranks_, recv_ranks_;
  std::vector<std::int64_t> send_offsets_{0}, send_list_, recv_offsets_{0}, recv_slots_;
  bool contiguous_receive_ = true;
  std::shared_ptr<const std::uint64_t> token_;
  std::uint64_t generation_ = 0;
  ScheduleStats stats_;
};

namespace detail {
constexpr int request_tag = 1, answer_tag = 2, check_tag = 3;

inline void add(ScheduleStats& s, const mpi::PhaseStats& p) {
  s.messages_sent += p.messages_sent;
  s.bytes_sent += p.bytes_sent;
  s.messages_received += p.messages_received;
  s.bytes_received += p.bytes_received;
}

// Records received from several sources, kept per source in arrival order.
struct Inbox {
  std::vector<int> source;
  std::vector<std::int64_t> values;
  std::vector<std::size_t> start;
  void add(int src, std::span<const std::int64_t> recs) {
    source.push_back(src);
    start.push_back(values.size());
    values.insert(values.end(), recs.begin(), recs.end());
  }
  // Calls f(source, records) once per source, sources ascending (pieces of one source joined).
  template <class F>
  void for_each_source(F&& f) const {
    std::vector<std::size_t> idx(source.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(),
                     [&](std::size_t a, std::size_t b) { return source[a] < source[b]; });
    std::vector<std::int64_t> joined;
    for (std::size_t i = 0; i < idx.size();) {
      const int src = source[idx[i]];
      joined.clear();
      for (; i < idx.size() && source[idx[i]] == src; ++i) {
        const std::size_t a = start[idx[i]],
                          b = idx[i] + 1 < start.size() ? start[idx[i] + 1] : values.size();
        joined.insert(joined.end(), values.begin() + static_cast<std::ptrdiff_t>(a),
                      values.begin() + static_cast<std::ptrdiff_t>(b));
      }
      f(src, std::span<const std::int64_t>(joined));
    }
  }
};
}  // namespace detail

namespace detail {

/// The inspector's phases over one schedule under construction: phase 1 is local (translation,
/// duplicate removal, ghost slots, permutation lists, the sorting strategies' send lists); the
/// rounds after it talk (simple's requests and answers, or the symmetry check).
struct ScheduleBuilder {
  std::span<const std::int64_t> row_offsets, refs;
  const ScheduleOptions opt;
  CommSchedule& s;
  const schedule::BlockTranslation& T;
  const int me, p;
  const std::int64_t nl, b, e, n;      // local nodes, this rank's block [b, e) of [0, n)
  std::vector<int> ghost_owner;        // per slot
  std::optional<std::string> failure;  // the first problem a round found here

  ScheduleBuilder(const BlockLayout& layout, std::span<const std::int64_t> row_offsets_,
                  std::span<const std::int64_t> refs_, ScheduleOptions opt_, CommSchedule& s_)
      : row_offsets(row_offsets_),
        refs(refs_),
        opt(opt_),
        s(s_),
        T(layout.translation()),
        me(layout.comm().rank()),
        p(layout.comm().size()),
        nl(layout.local_size()),
        b(layout.local_begin()),
        e(b + nl),
        n(T.size()) {}

  [[nodiscard]] bool is_local(std::int64_t g) const { return g >= b && g < e; }

  /// Phase 1, local: throws irregular::invalid_argument for malformed rows or references.
  void inspect() {
    check_rows();
    const std::vector<std::int64_t> remote = remote_references();
    const std::vector<int> owner_sorted = home_ranks(remote);
    assign_ghost_slots(remote, owner_sorted);
    permutation_lists(owner_sorted);
    if (opt.strategy == ScheduleStrategy::sort1)
      send_lists_sort1();
    else if (opt.strategy == ScheduleStrategy::sort2)
      send_lists_sort2();
  }

  [[nodiscard]] std::string who() const {
    return "irregular::build_schedule: rank " + std::to_string(me) + ": ";
  }

  void check_rows() const {
    if (static_cast<std::int64_t>(row_offsets.size()) != nl + 1)
      throw invalid_argument(who() + "row_offsets has " + std::to_string(row_offsets.size()) +
                             " entries, expected " + std::to_string(nl + 1) + " (local nodes + 1)");
    if (row_offsets[0] != 0 ||
        row_offsets[static_cast<std::size_t>(nl)] != static_cast<std::int64_t>(refs.size()))
      throw invalid_argument(
          who() + "row_offsets must run from 0 to refs.size() = " + std::to_string(refs.size()));
    for (std::int64_t i = 0; i < nl; ++i)
      if (row_offsets[static_cast<std::size_t>(i) + 1] < row_offsets[static_cast<std::size_t>(i)])
        throw invalid_argument(who() + "row_offsets decrease at row " + std::to_string(i));
  }

  /// Translation and duplicate removal: the distinct remote references, sorted. Sorting them
  /// also sorts them by (home rank, home local index), since blocks are contiguous in rank order.
  [[nodiscard]] std::vector<std::int64_t> remote_references() const {
    std::vector<std::int64_t> remote;
    for (std::size_t k = 0; k < refs.size(); ++k) {
      const std::int64_t g = refs[k];
      if (g < 0 || g >= n)
        throw invalid_argument(who() + "reference " + std::to_string(k) + " = " +
                               std::to_string(g) + " outside [0, " + std::to_string(n) + ")");
      if (!is_local(g)) remote.push_back(g);
    }
    std::sort(remote.begin(), remote.end());
    remote.erase(std::unique(remote.begin(), remote.end()), remote.end());
    return remote;
  }

  /// Home rank of every (sorted) remote reference, by the replicated block boundaries.
  [[nodiscard]] std::vector<int> home_ranks(const std::vector<std::int64_t>& remote) const {
    std::vector<int> owner_sorted(remote.size());
    for (std::size_t i = 0, r = 0; i < remote.size(); ++i) {
      while (T.end(static_cast<int>(r)) <= remote[i]) ++r;
      owner_sorted[i] = static_cast<int>(r);
    }
    return owner_sorted;
  }

  /// The ghost region: a slot per remote reference, and the indirection array rewritten to
  /// local indices (ghosts at nl + slot).
  void assign_ghost_slots(const std::vector<std::int64_t>& remote,
                          const std::vector<int>& owner_sorted) {
    const std::size_t G = remote.size();
    std::vector<std::int64_t> slot_of(G);
    s.local_refs_.resize(refs.size());
    const auto position = [&](std::int64_t g) {
      return static_cast<std::size_t>(std::lower_bound(remote.begin(), remote.end(), g) -
                                      remote.begin());
    };
    if (opt.strategy == ScheduleStrategy::simple) {
      // Ghost slots in order of first reference, as a hash table hands them out.
      std::fill(slot_of.begin(), slot_of.end(), -1);
      std::int64_t next = 0;
      for (std::size_t k = 0; k < refs.size(); ++k) {
        const std::int64_t g = refs[k];
        if (is_local(g)) {
          s.local_refs_[k] = g - b;
          continue;
        }
        auto& slot = slot_of[position(g)];
        if (slot < 0) slot = next++;
        s.local_refs_[k] = nl + slot;
      }
    } else {
      for (std::size_t i = 0; i < G; ++i) slot_of[i] = static_cast<std::int64_t>(i);
      for (std::size_t k = 0; k < refs.size(); ++k) {
        const std::int64_t g = refs[k];
        s.local_refs_[k] = is_local(g) ? g - b : nl + static_cast<std::int64_t>(position(g));
      }
    }
    s.ghost_globals_.resize(G);
    ghost_owner.resize(G);
    for (std::size_t i = 0; i < G; ++i) {
      s.ghost_globals_[static_cast<std::size_t>(slot_of[i])] = remote[i];
      ghost_owner[static_cast<std::size_t>(slot_of[i])] = owner_sorted[i];
    }
  }

  /// Permutation lists: per home rank, its ghosts in message order (slot order; for the sorting
  /// strategies that is home order, consecutive slots).
  void permutation_lists(const std::vector<int>& owner_sorted) {
    const std::size_t G = owner_sorted.size();
    for (std::size_t i = 0; i < G; ++i)
      if (s.recv_ranks_.empty() || s.recv_ranks_.back() != owner_sorted[i])
        s.recv_ranks_.push_back(owner_sorted[i]);
    std::vector<std::int64_t> fill(s.recv_ranks_.size() + 1, 0);
    const auto partner_of = [&](int r) {
      return static_cast<std::size_t>(
          std::lower_bound(s.recv_ranks_.begin(), s.recv_ranks_.end(), r) - s.recv_ranks_.begin());
    };
    for (std::size_t slot = 0; slot < G; ++slot) ++fill[partner_of(ghost_owner[slot]) + 1];
    for (std::size_t j = 0; j + 1 < fill.size(); ++j) fill[j + 1] += fill[j];
    s.recv_offsets_ = fill;
    s.recv_slots_.resize(G);
    for (std::size_t slot = 0; slot < G; ++slot)
      s.recv_slots_[static_cast<std::size_t>(fill[partner_of(ghost_owner[slot])]++)] =
          static_cast<std::int64_t>(slot);
    for (std::size_t j = 0; j < s.recv_ranks_.size() && s.contiguous_receive_; ++j)
      for (auto k = s.recv_offsets_[j] + 1; k < s.recv_offsets_[j + 1]; ++k)
        if (s.recv_slots_[static_cast<std::size_t>(k)] !=
            s.recv_slots_[static_cast<std::size_t>(k) - 1] + 1) {
          s.contiguous_receive_ = false;
          break;
        }
  }

  /// Calls f(i, r) for every reference of row i to a ghost of home rank r, rows in increasing
  /// local order.
  template <class F>
  void each_ghost_reference(F&& f) const {
    for (std::int64_t i = 0; i < nl; ++i)
      for (auto k = row_offsets[static_cast<std::size_t>(i)];
           k < row_offsets[static_cast<std::size_t>(i) + 1]; ++k) {
        const std::int64_t l = s.local_refs_[static_cast<std::size_t>(k)];
        if (l >= nl) f(i, ghost_owner[static_cast<std::size_t>(l - nl)]);
      }
  }

  /// schedule_sort1: send lists gathered as (rank, local node) pairs in reference order, then
  /// sorted.
  void send_lists_sort1() {
    std::vector<std::pair<int, std::int64_t>> pairs;
    each_ghost_reference([&](std::int64_t i, int r) { pairs.emplace_back(r, i); });
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    for (const auto& [r, i] : pairs) {
      if (s.send_ranks_.empty() || s.send_ranks_.back() != r) {
        s.send_ranks_.push_back(r);
        s.send_offsets_.push_back(static_cast<std::int64_t>(s.send_list_.size()));
      }
      s.send_list_.push_back(i);
      s.send_offsets_.back() = static_cast<std::int64_t>(s.send_list_.size());
    }
  }

  /// schedule_sort2: rows in increasing local order, so each list comes out sorted; O(p)
  /// counters, two passes (count, then fill).
  void send_lists_sort2() {
    const auto up = static_cast<std::size_t>(p);
    std::vector<std::int64_t> count(up, 0), last(up, -1);
    each_ghost_reference([&](std::int64_t i, int owner) {
      const auto r = static_cast<std::size_t>(owner);
      if (last[r] != i) {
        last[r] = i;
        ++count[r];
      }
    });
    std::vector<std::int64_t>& cursor = last;
    for (int r = 0; r < p; ++r)
      if (count[static_cast<std::size_t>(r)] > 0) {
        cursor[static_cast<std::size_t>(r)] = s.send_offsets_.back();
        s.send_ranks_.push_back(r);
        s.send_offsets_.push_back(s.send_offsets_.back() + count[static_cast<std::size_t>(r)]);
      }
    s.send_list_.resize(static_cast<std::size_t>(s.send_offsets_.back()));
    std::fill(count.begin(), count.end(), -1);  // now: the last row appended per rank
    each_ghost_reference([&](std::int64_t i, int owner) {
      const auto r = static_cast<std::size_t>(owner);
      if (count[r] != i) {
        count[r] = i;
        s.send_list_[static_cast<std::size_t>(cursor[r]++)] = i;
      }
    });
  }

  void fail(std::string m) {
    if (!failure) failure = std::move(m);
  }

  /// Every home rank gets the global indices of its ghosts here, in slot order.
  void send_ghost_globals(mpi::MergedExchange<std::int64_t>& x) const {
    std::vector<std::int64_t> message;
    for (std::size_t j = 0; j < s.recv_ranks_.size(); ++j) {
      message.clear();
      for (const auto slot : s.recv_slots(j))
        message.push_back(s.ghost_globals_[static_cast<std::size_t>(slot)]);
      x.send(s.recv_ranks_[j], std::span<const std::int64_t>(message));
    }
  }

  /// schedule simple, round 1: requests (global indices, in the requester's slot order) to their
  /// owners, whose send lists they become.
  void request_send_lists() {
    detail::Inbox requests;
    {
      mpi::MergedExchange<std::int64_t> x(s.comm_, detail::request_tag);
      send_ghost_globals(x);
      x.finish([&](int src, std::span<const std::int64_t> recs) { requests.add(src, recs); });
      detail::add(s.stats_, x.stats());
    }
    requests.for_each_source([&](int src, std::span<const std::int64_t> recs) {
      s.send_ranks_.push_back(src);
      for (const std::int64_t g : recs) {
        if (!is_local(g))
          fail("irregular::build_schedule: rank " + std::to_string(src) + " asked rank " +
               std::to_string(me) + " for index " + std::to_string(g) +
               ", which it does not hold (layouts differ?)");
        s.send_list_.push_back(g - b);
      }
      s.send_offsets_.push_back(static_cast<std::int64_t>(s.send_list_.size()));
    });
  }

  /// schedule simple, round 2: each owner answers with its send list (the local references it
  /// will send in), checked against what was asked.
  void answer_send_lists() {
    mpi::MergedExchange<std::int64_t> x(s.comm_, detail::answer_tag);
    for (std::size_t j = 0; j < s.send_ranks_.size(); ++j) x.send(s.send_ranks_[j], s.send_list(j));
    x.finish([&](int src, std::span<const std::int64_t> recs) {
      const auto j = static_cast<std::size_t>(
          std::lower_bound(s.recv_ranks_.begin(), s.recv_ranks_.end(), src) -
          s.recv_ranks_.begin());
      if (j == s.recv_ranks_.size() || s.recv_ranks_[j] != src ||
          recs.size() != s.recv_slots(j).size()) {
        fail("irregular::build_schedule: rank " + std::to_string(src) + " answered rank " +
             std::to_string(me) + " with a send list it did not ask for");
        return;
      }
      const auto slots = s.recv_slots(j);
      for (std::size_t k = 0; k < recs.size(); ++k)
        if (T.global(src, recs[k]) != s.ghost_globals_[static_cast<std::size_t>(slots[k])])
          fail("irregular::build_schedule: rank " + std::to_string(src) + " answered out of order");
    });
    detail::add(s.stats_, x.stats());
  }

  /// Debug check of the declared symmetry (sort1, sort2): what each rank expects from r must be
  /// r's send list.
  void verify_symmetry() {
    detail::Inbox expected;
    mpi::MergedExchange<std::int64_t> x(s.comm_, detail::check_tag);
    send_ghost_globals(x);
    x.finish([&](int src, std::span<const std::int64_t> recs) { expected.add(src, recs); });
    s.stats_.check_messages = x.stats().messages_sent;
    std::size_t j = 0;
    const auto mismatch = [&](int r, std::size_t wants, std::size_t sends) {
      fail("irregular::build_schedule: the access pattern is not symmetric, which schedule_" +
           std::string(irregular::to_string(opt.strategy)) + " presupposes: rank " +
           std::to_string(r) + " needs " + std::to_string(wants) + " values from rank " +
           std::to_string(me) + ", whose rows reference " + std::to_string(sends) + " of rank " +
           std::to_string(r) + "'s nodes");
    };
    expected.for_each_source([&](int src, std::span<const std::int64_t> recs) {
      for (; j < s.send_ranks_.size() && s.send_ranks_[j] < src; ++j)
        mismatch(s.send_ranks_[j], 0, s.send_list(j).size());
      const bool partner = j < s.send_ranks_.size() && s.send_ranks_[j] == src;
      const auto list = partner ? s.send_list(j) : std::span<const std::int64_t>();
      bool same = list.size() == recs.size();
      for (std::size_t k = 0; same && k < recs.size(); ++k) same = recs[k] == b + list[k];
      if (!same) mismatch(src, recs.size(), list.size());
      if (partner) ++j;
    });
    for (; j < s.send_ranks_.size(); ++j) mismatch(s.send_ranks_[j], 0, s.send_list(j).size());
  }
};

}  // namespace detail

/// The inspector. This rank's rows are the local nodes of `layout` (row_offsets has
/// layout.local_size() + 1 entries, compressed-row offsets into refs); refs are global indices in
/// [0, n), in the order the loop visits them. Translation asks the replicated block boundaries,
/// duplicates are fetched once, and the send lists come from the chosen strategy:
///  - simple: each rank sends its requests (global indices) to their owners, which answer with
///    their send lists: two communication rounds, any access pattern;
///  - sort1 / sort2: the pattern must be symmetric; a rank sends to r exactly the local nodes whose
///    rows reference r's nodes, in increasing local order, and receives r's nodes in increasing
///    home order, so both sides agree on message order without talking. sort1 collects the send
///    lists in any order and sorts them; sort2 traverses rows in increasing order and needs no
///    sort.
/// Throws irregular::collective_error on every rank when some rank passes malformed rows, a
/// reference outside [0, n) (naming rank and position), or (verify_symmetry) an asymmetric
/// pattern under sort1/sort2. Collective over layout.comm().
[[nodiscard]] inline CommSchedule build_schedule(const BlockLayout& layout,
                                                 std::span<const std::int64_t> row_offsets,
                                                 std::span<const std::int64_t> refs,
                                                 ScheduleOptions opt = {}) {
  const auto t0 = std::chrono::steady_clock::now();
  CommSchedule s;
  s.strategy_ = opt.strategy;
  s.local_size_ = layout.local_size();
  detail::ScheduleBuilder builder(layout, row_offsets, refs, opt, s);

  // Phase 1, local: validation, translation, duplicate removal, permutation lists, and for the
  // sorting strategies the send lists. No communication; one agreement at the end.
  mpi::agree(layout.comm(), [&] { builder.inspect(); });

  s.comm_ = boost::mpi::communicator(layout.comm(), boost::mpi::comm_duplicate);
  s.token_ = layout.generation_token();
  s.generation_ = layout.generation();
  if (opt.strategy == ScheduleStrategy::simple) {
    builder.request_send_lists();
    builder.answer_send_lists();
  } else if (opt.verify_symmetry) {
    builder.verify_symmetry();
  }
  mpi::agree_on(s.comm_, builder.failure);
  s.stats_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace irregular
