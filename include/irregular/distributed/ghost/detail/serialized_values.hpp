// Ghost values of a type that needs Boost.Serialization along a cached schedule (the exchange and
// accumulate of GhostLayer, and so the values of every collection): serialize() is user code, and
// a throw while saving or loading must not leave partners waiting, nor let one rank change its
// values while another throws. DESIGN.md "Errors": every collective call agrees on errors.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/detail/nbx.hpp>
#include <irregular/mpi/detail/packed_frames.hpp>

#include <boost/mpi/communicator.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace irregular::detail {

/// What this rank sent in one transfer.
struct ValueTraffic {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
};

/// Keeps each partner's message in a frame buffer of its own, in the order the sources are read.
struct ValueMessages {
  std::vector<detail::FrameBuffer> got;

  char* reserve(int, std::size_t offset, std::size_t bytes) {
    if (offset == 0) got.push_back(detail::take_frame_buffer(bytes));
    auto& buf = got.back();
    buf.resize(offset + bytes);
    return buf.data() + offset;
  }
  void finish(int, std::size_t) {}
  ~ValueMessages() {
    for (auto& b : got) detail::recycle_frame_buffer(b);
  }
};

/// How many values the leaves `ids` hold; leaf i holds offsets[i+1] - offsets[i].
template <class Ids>
std::size_t value_count(const Ids& ids, std::span<const std::size_t> offsets) {
  std::size_t n = 0;
  for (std::size_t id : ids) n += offsets[id + 1] - offsets[id];
  return n;
}

/// The text of a caught exception, worded as mpi::agree words it.
inline std::string describe(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown exception (not derived from std::exception)";
  }
}

/// One transfer of serialized values along a schedule: out_ranks[k] gets the values of the leaves
/// out_ids(k) of `from`, in_ranks[k] sends those of to's leaves in_ids(k); forward they replace
/// to's values, otherwise combine(mine, contribution) folds them in, partners in rank order.
///
/// Each partner with values gets exactly one message, and every message is well formed whatever
/// happens: a rank whose serialize() throws while saving sends zero bytes to each partner (a
/// message with values always holds a frame header) and still receives; a receiver reads no
/// message from such a sender, and catches a throw while loading. Then one agreement: if saving,
/// loading or (backward) combine failed on any rank, every rank throws the same
/// irregular::collective_error, and forward no value of `to` has changed (backward the caller
/// restores what combine changed). Forward the staged values are moved in only once every rank
/// agreed. `who` names the public call in messages. Collective over comm: one allreduce besides
/// the partners' messages.
/// Every sending partner's values written into frames (user serialize code); the reason when
/// it throws, nothing sent yet.
template <class T, class OutIds>
std::optional<std::string> save_values(const boost::mpi::communicator& comm,
                                       std::span<const std::size_t> sending, OutIds& out_ids,
                                       std::span<const T> from,
                                       std::span<const std::size_t> from_offsets,
                                       std::vector<detail::PackedFrames>& packed) {
  try {
    for (const std::size_t k : sending) {
      const auto ids = out_ids(k);
      auto id = ids.begin();
      std::size_t j = id == ids.end() ? 0 : from_offsets[*id];
      auto next = [&](std::size_t) -> const T& {  // write_frames reads the values once, in order
        while (j == from_offsets[*id + 1]) j = from_offsets[*++id];
        return from[j++];
      };
      detail::write_frames<T>(comm, value_count(ids, from_offsets), next, packed[k]);
    }
  } catch (...) {
    return describe(std::current_exception());
  }
  return std::nullopt;
}

template <class T, class OutIds, class InIds, class Combine>
ValueTraffic transfer_serialized(const boost::mpi::communicator& comm, int tag, const char* who,
                                 bool forward, std::span<const int> out_ranks, OutIds&& out_ids,
                                 std::span<const T> from, std::span<const std::size_t> from_offsets,
                                 std::span<const int> in_ranks, InIds&& in_ids, std::span<T> to,
                                 std::span<const std::size_t> to_offsets, Combine&& combine) {
  const int me = comm.rank();
  const std::string on_me = std::string(who) + ": serialize threw on rank " + std::to_string(me);
  std::optional<std::string> failure;

  // Saving: every partner's values into frames before anything leaves.
  std::vector<detail::PackedFrames> packed(out_ranks.size());
  std::vector<std::size_t> sending;  // partners with values, each gets one message
  for (std::size_t k = 0; k < out_ranks.size(); ++k)
    if (value_count(out_ids(k), from_offsets) > 0) sending.push_back(k);
  if (auto why = save_values<T>(comm, sending, out_ids, from, from_offsets, packed)) {
    failure = on_me + ": " + *why;
    packed.clear();  // a failed sender sends zero bytes to everybody it owes a message
    packed.resize(out_ranks.size());
  }
  std::size_t regions_needed = 0;
  for (const auto& f : packed) regions_needed += 2 * f.headers.size();
  std::vector<detail::ByteRegion> regions;
  regions.reserve(regions_needed);  // the spans below point into it
  std::vector<detail::OutgoingGather> sends;
  sends.reserve(sending.size());
  for (const std::size_t k : sending) {
    const std::size_t at = regions.size();
    packed[k].append_regions(regions);
    sends.push_back({out_ranks[k], std::span<const detail::ByteRegion>(regions).subspan(at)});
  }

  // One message from each partner that owes values, in partner order.
  std::vector<int> sources;
  std::vector<std::size_t> receiving, expected;
  for (std::size_t k = 0; k < in_ranks.size(); ++k) {
    const std::size_t n = value_count(in_ids(k), to_offsets);
    if (n == 0) continue;
    sources.push_back(in_ranks[k]);
    receiving.push_back(k);
    expected.push_back(n);
  }
  ValueMessages messages;
  mpi::ExchangeStats stats;
  detail::partner_exchange(comm, tag, std::span<const detail::OutgoingGather>(sends),
                           std::span<const int>(sources), messages, stats);
  packed.clear();

  // Loading: nothing of `to` changes yet.
  std::vector<std::vector<T>> staged(receiving.size());
  for (std::size_t m = 0; m < receiving.size() && !failure; ++m) {
    const auto& msg = messages.got[m];
    if (msg.empty()) continue;  // its sender failed and reports it
    const std::string from_rank = std::to_string(sources[m]);
    std::size_t read = 0;
    std::string why;
    try {
      staged[m].reserve(expected[m]);
      why = detail::read_frames(comm, msg, 0, msg.size(), staged[m], expected[m], read);
    } catch (...) {
      failure = on_me + " loading values from rank " + from_rank + ": " +
                describe(std::current_exception());
      break;
    }
    if (why.empty() && read != expected[m])
      why = "it holds " + std::to_string(read) + " values, the schedule expects " +
            std::to_string(expected[m]);
    if (!why.empty())
      failure = std::string(who) + ": rank " + std::to_string(me) + " received " +
                std::to_string(msg.size()) + " bytes of values from rank " + from_rank +
                " that do not parse: " + why;
  }

  auto place = [&] {
    for (std::size_t m = 0; m < receiving.size(); ++m) {
      if (staged[m].empty()) continue;
      std::size_t pos = 0;
      for (std::size_t id : in_ids(receiving[m]))
        for (std::size_t j = to_offsets[id]; j < to_offsets[id + 1]; ++j, ++pos) {
          if (forward)
            to[j] = std::move(staged[m][pos]);
          else
            combine(to[j], std::as_const(staged[m][pos]));
        }
    }
  };
  // Backward, combine is user code too: it runs before the one agreement, its message as is.
  if (!forward && !failure) {
    try {
      place();
    } catch (...) {
      failure = describe(std::current_exception());
    }
  }
  mpi::agree_on(comm, failure);
  if (forward) place();
  return {stats.messages_sent, stats.bytes_sent};
}

}  // namespace irregular::detail
