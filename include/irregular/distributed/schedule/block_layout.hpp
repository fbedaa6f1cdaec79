// BlockLayout: the replicated block boundaries of a renumbered 1D list over a communicator
// (kaddoura-ranka-1995 §3.1–3.2), with a generation counter that every remap advances so that
// schedules built before it are detected as stale (§3, Figure 1: phase B reruns after phase D).
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/schedule/block_translation.hpp>

#include <boost/mpi/collectives/broadcast.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/vector.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular {

/// Rank r of the communicator holds the contiguous block [begin(r), end(r)) of the renumbered
/// index space; every rank holds the same p + 1 boundaries (O(p) replicated state).
class BlockLayout {
 public:
  /// Duplicates comm. Throws irregular::collective_error on every rank when the translation's
  /// parts differ from comm.size() or the ranks pass different boundaries. Collective over comm.
  BlockLayout(const boost::mpi::communicator& comm, schedule::BlockTranslation t)
      : comm_(comm, boost::mpi::comm_duplicate),
        t_(std::move(t)),
        generation_(std::make_shared<std::uint64_t>(0)) {
    check_agreed(t_, "irregular::BlockLayout");
  }
  BlockLayout(const BlockLayout&) = delete;
  BlockLayout& operator=(const BlockLayout&) = delete;
  /// Moves the layout; schedules keep their generation token.
  BlockLayout(BlockLayout&&) noexcept = default;
  /// Moves the layout; schedules keep their generation token.
  BlockLayout& operator=(BlockLayout&&) noexcept = default;

  /// The layout's own (duplicated) communicator.
  [[nodiscard]] const boost::mpi::communicator& comm() const noexcept { return comm_; }
  /// The p + 1 block boundaries.
  [[nodiscard]] const schedule::BlockTranslation& translation() const noexcept { return t_; }
  /// First renumbered index this rank holds.
  [[nodiscard]] std::int64_t local_begin() const noexcept { return t_.begin(comm_.rank()); }
  /// Number of indices this rank holds.
  [[nodiscard]] std::int64_t local_size() const noexcept { return t_.count(comm_.rank()); }
  /// Advanced by every remap; schedules remember the generation they were built in.
  [[nodiscard]] std::uint64_t generation() const noexcept { return *generation_; }
  /// Shared with the schedules, so a schedule can tell it is stale even after the layout is gone.
  [[nodiscard]] std::shared_ptr<const std::uint64_t> generation_token() const noexcept {
    return generation_;
  }

  /// Phase D of Figure 1: new boundaries (same n, same p), agreed as in the constructor. Every
  /// schedule built before becomes stale; move data arrays with redistribute(). A rejected call
  /// changes nothing. Collective over comm().
  void remap(schedule::BlockTranslation next) {
    check_agreed(next, "irregular::BlockLayout::remap");
    mpi::agree_on(comm_, next.size() == t_.size()
                             ? std::nullopt
                             : std::optional<std::string>("irregular::BlockLayout::remap: new "
                                                          "boundaries cover " +
                                                          std::to_string(next.size()) +
                                                          " indices, the layout " +
                                                          std::to_string(t_.size())));
    t_ = std::move(next);
    ++*generation_;
  }

  /// Moves a data array laid out by the blocks of `from` (this rank's block, from.count(rank)
  /// values) to the current blocks: the result holds local_size() values. One message per rank
  /// pair whose old and new blocks overlap. Throws irregular::collective_error on every rank when
  /// some rank passes a wrong length or `from` does not match. Collective over comm().
  template <class T>
  [[nodiscard]] std::vector<T> redistribute(const schedule::BlockTranslation& from,
                                            std::span<const T> values) const {
    static_assert(std::is_trivially_copyable_v<T>,
                  "irregular::BlockLayout::redistribute: T must be trivially copyable");
    const int me = comm_.rank(), p = comm_.size();
    std::optional<std::string> bad;
    if (from.parts() != p || from.size() != t_.size())
      bad =
          "irregular::BlockLayout::redistribute: the old blocks do not match the layout (parts or "
          "size)";
    else if (static_cast<std::int64_t>(values.size()) != from.count(me))
      bad = "irregular::BlockLayout::redistribute: rank " + std::to_string(me) + " passed " +
            std::to_string(values.size()) + " values, its old block holds " +
            std::to_string(from.count(me));
    mpi::agree_on(comm_, bad);
    std::vector<T> out(static_cast<std::size_t>(local_size()));
    mpi::RequestSet req;
    const auto overlap_ranks = [](const schedule::BlockTranslation& blocks, std::int64_t b,
                                  std::int64_t e, auto&& f) {
      if (b >= e) return;
      for (int r = blocks.owner(b); r < blocks.parts() && blocks.begin(r) < e; ++r) {
        const std::int64_t lo = std::max(b, blocks.begin(r)), hi = std::min(e, blocks.end(r));
        if (lo < hi) f(r, lo, hi);
      }
    };
    // Receives: the parts of my new block that old owners hold.
    overlap_ranks(from, local_begin(), local_begin() + local_size(),
                  [&](int r, std::int64_t lo, std::int64_t hi) {
                    if (r == me) return;
                    req.receive(comm_, out.data() + (lo - local_begin()),
                                static_cast<std::size_t>(hi - lo) * sizeof(T), r, redistribute_tag);
                  });
    overlap_ranks(t_, from.begin(me), from.end(me), [&](int r, std::int64_t lo, std::int64_t hi) {
      const T* src = values.data() + (lo - from.begin(me));
      if (r == me) {
        std::copy(src, src + (hi - lo), out.begin() + (lo - local_begin()));
        return;
      }
      req.send(comm_, src, static_cast<std::size_t>(hi - lo) * sizeof(T), r, redistribute_tag);
    });
    req.wait_all();
    return out;
  }

 private:
  static constexpr int redistribute_tag = 1;

  void check_agreed(const schedule::BlockTranslation& t, const char* who) const {
    std::optional<std::string> bad;
    if (t.parts() != comm_.size())
      bad = std::string(who) + ": rank " + std::to_string(comm_.rank()) + " passed " +
            std::to_string(t.parts()) + " blocks for " + std::to_string(comm_.size()) + " ranks";
    mpi::agree_on(comm_, bad);
    // Every rank holds parts + 1 = size + 1 boundaries now: a plain array broadcast (no archive).
    std::vector<std::int64_t> root = t.boundaries();
    boost::mpi::broadcast(comm_, root.data(), static_cast<int>(root.size()), 0);
    mpi::agree_on(comm_, root == t.boundaries()
                             ? std::nullopt
                             : std::optional<std::string>(
                                   std::string(who) + ": rank " + std::to_string(comm_.rank()) +
                                   " passed boundaries that differ from rank 0's"));
  }

  boost::mpi::communicator comm_;
  schedule::BlockTranslation t_;
  std::shared_ptr<std::uint64_t> generation_;
};

}  // namespace irregular
