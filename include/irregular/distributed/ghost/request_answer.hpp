// Request/answer, the papers' fault handling (baiardi-collecting-remote-data §3.1): a rank asks
// the holders the map names for every part of a stencil cell its own leaves do not cover, one
// request per space and partner (duplicates suppressed), and each holder answers with its leaves
// there and their values. Two messages per round and partner; the baseline the prevention
// strategies beat.
#pragma once

#include <irregular/distributed/ghost/collection.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace irregular::ghost {

namespace detail {
/// A space: the part of a stencil cell that another rank holds, and the reader's level (the
/// holder answers with the levels the stencil reaches from there; any level when it reaches all).
template <class I>
struct Request {
  I start, end;
  std::uint8_t level;
  friend bool operator<(const Request& a, const Request& b) {
    return a.start != b.start ? a.start < b.start
                              : (a.end != b.end ? a.end < b.end : a.level < b.level);
  }
  friend bool operator==(const Request&, const Request&) = default;
};
}  // namespace detail

/// Request/answer, the papers' fault handling (baiardi-collecting-remote-data §3.1): a rank asks
/// the holders the map names for every stencil space its leaves do not cover; each holder answers
/// with its leaves there. Two messages per round and partner: the baseline.
struct RequestAnswer {
  /// The strategy's name in reports.
  [[nodiscard]] static constexpr const char* name() noexcept { return "request/answer"; }
  static constexpr bool ships_values = true;  ///< takes CollectionInput::payload

  /// Collective over in.comm. `work()` is called between polls while requests and answers
  /// travel, until it returns false (excess parallelism: the caller computes leaves that need
  /// nothing remote meanwhile).
  template <Stencil S, SpaceFillingCurve C, OwnershipMap M, class Work = bool (*)()>
  GhostLayer<C> collect(
      const CollectionInput<C, M>& in, Work&& work = [] { return false; }) const {
    using I = typename C::index_type;
    using Record = typename GhostLayer<C>::Record;
    using Request = detail::Request<I>;
    constexpr std::uint8_t any_level = 0xff;
    constexpr bool all_levels = S::same_level && S::coarser && S::finer;
    const auto t0 = std::chrono::steady_clock::now();
    const int me = in.comm.rank(), p = in.comm.size();
    const auto& leaves = in.leaves;
    GhostStats stats;
    std::vector<std::vector<Request>> asks(static_cast<std::size_t>(p));
    const irregular::detail::Boundary<C> boundary(in.map, me, leaves,
                                                  irregular::detail::reach<S>());
    for (std::size_t i : boundary.leaves()) {
      if (!in.options.readers.contains(leaves.levels()[i])) continue;
      const auto cell = leaves.cell(i);
      const auto level = all_levels ? any_level : static_cast<std::uint8_t>(cell.level);
      uncovered_stencil_intervals<C, S>(
          leaves.starts(), leaves.levels(), cell, in.periodic, [&](IndexInterval<I> iv) {
            for_each_holder(in.map, iv, [&](int r, IndexInterval<I> part) {
              if (r != me && part.start < part.end)
                asks[static_cast<std::size_t>(r)].push_back({part.start, part.end, level});
            });
          });
    }
    mpi::MergedExchange<Request> requests(in.comm, in.tag, in.options.merge);
    mpi::MergedExchange<Record> answers(in.comm, in.tag + 1, in.options.merge);
    std::vector<std::vector<std::size_t>> sends(static_cast<std::size_t>(p));
    irregular::detail::Shipment<C> ship(
        in.payload);  // the answers carry the values when there is a payload
    std::vector<std::size_t> ids;
    std::vector<Record> block;
    auto answer = [&](int src, std::span<const Request> got) {
      ids.clear();
      for (const Request& q : got) {
        const auto [f, l] = irregular::detail::leaves_meeting_sparse<C>(
            leaves.starts(), leaves.levels(), {q.start, q.end});
        for (std::size_t j = f; j < l; ++j) {
          const int lv = leaves.levels()[j];
          if (!in.options.levels.contains(lv)) continue;
          if (q.level != any_level && !irregular::detail::level_reads<S>(q.level, lv)) continue;
          ids.push_back(j);
        }
      }
      std::sort(ids.begin(), ids.end());  // a leaf that meets several spaces goes once
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      if (ids.empty()) return;
      auto& s = sends[static_cast<std::size_t>(src)];
      s.insert(s.end(), ids.begin(), ids.end());
      stats.leaves_sent += ids.size();
      block.clear();
      ship.pack(leaves, ids, block);
      answers.send(src, std::span<const Record>(block));
    };
    auto take = [&](int src, std::span<const Record> got) { ship.take(src, got); };
    for (int r = 0; r < p; ++r) {  // one request per space and partner
      auto& a = asks[static_cast<std::size_t>(r)];
      std::sort(a.begin(), a.end());
      a.erase(std::unique(a.begin(), a.end()), a.end());
      requests.send(r, std::span<const Request>(a));
      requests.poll(answer);
      answers.poll(take);
    }
    while (work()) {
      requests.poll(answer);
      answers.poll(take);
    }
    requests.finish(answer);
    answers.finish(take);
    stats.request = {requests.stats().messages_sent, requests.stats().bytes_sent};
    stats.answer = {answers.stats().messages_sent, answers.stats().bytes_sent};
    return irregular::detail::finish<C, S>(in, sends, ship, nullptr, stats, t0, &boundary);
  }
};

}  // namespace irregular::ghost
