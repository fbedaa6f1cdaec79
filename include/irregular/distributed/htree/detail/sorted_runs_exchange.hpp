// The exchange and merge step of sample_sort for raw elements. Each run travels with its keys
// straight from the sorted arrays (one message per partner, nothing staged, no key computed
// again), and the arrivals merge with this rank's own run inside the old arrays, whose pages are
// already touched: the own run moves to their tail and a forward merge fills them from the
// front. It never overtakes the own run's unread part (the writes lead its reads by at most the
// arrivals consumed).
#pragma once

#include <irregular/core/detail/headroom.hpp>
#include <irregular/core/error.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/detail/nbx.hpp>
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/mpi/transport.hpp>

#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <queue>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace irregular::detail {

/// Whether sample_sort's runs of E keyed by Index take this path: raw elements laid out after
/// their keys in one message, both aligned where the receive buffer puts them.
template <class E, class Index>
inline constexpr bool sorted_runs_direct = mpi::is_raw_transportable<E> &&
                                           alignof(E) <= alignof(Index) &&
                                           alignof(Index) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__;

/// elements / keys are sorted; destination d gets [offsets[d], offsets[d+1]). Afterwards they
/// hold this rank's runs from every source merged, sorted by key, equal keys in source rank
/// order then in their run's order (as a stable merge of the runs in rank order).
template <class EV, class KV>
requires sorted_runs_direct<typename EV::value_type, typename KV::value_type>
void exchange_sorted_runs(const boost::mpi::communicator& comm, EV& elements, KV& keys,
                          std::span<const std::size_t> offsets, int tag,
                          mpi::ExchangeStats* stats_out) {
  using E = typename EV::value_type;
  using Index = typename KV::value_type;
  const auto P = static_cast<std::size_t>(comm.size()),
             self = static_cast<std::size_t>(comm.rank());
  constexpr std::size_t record = sizeof(Index) + sizeof(E);
  // Outgoing: [keys][elements] of every other destination's run, from where they lie.
  std::vector<ByteRegion> regions;
  regions.reserve(2 * P);  // the spans below point into it
  std::vector<OutgoingGather> sends;
  for (std::size_t d = 0; d < P; ++d) {
    const std::size_t b = offsets[d], n = offsets[d + 1] - b;
    if (d == self || n == 0) continue;
    regions.push_back({reinterpret_cast<const char*>(keys.data() + b), n * sizeof(Index)});
    regions.push_back({reinterpret_cast<const char*>(elements.data() + b), n * sizeof(E)});
    sends.push_back({static_cast<int>(d), std::span<const ByteRegion>(regions).last(2)});
  }
  MessageBuffers sink;
  mpi::detail::check_tag(tag);
  mpi::ExchangeStats stats;
  nbx_exchange(comm, tag, std::span<const OutgoingGather>(sends), sink, stats);
  if (stats_out != nullptr) *stats_out += stats;

  // Runs in source rank order, the own run in its place (it is moved to the tail below).
  struct Run {
    const Index* k;
    const E* e;
    std::size_t n;
  };
  sink.sort_by_source();
  const std::size_t own_b = offsets[self], own_n = offsets[self + 1] - own_b;
  std::size_t total = own_n, own_at = 0;
  std::vector<Run> runs;
  runs.reserve(sink.got.size() + 1);
  for (const auto& [source, msg] : sink.got) {
    if (msg.size() % record != 0)
      throw parse_error("irregular::sample_sort: rank " + std::to_string(self) + " received " +
                        std::to_string(msg.size()) + " bytes from rank " + std::to_string(source) +
                        ", not a whole number of (key, element) records");
    const std::size_t n = msg.size() / record;
    if (static_cast<std::size_t>(source) < self) ++own_at;
    runs.push_back({reinterpret_cast<const Index*>(msg.data()),
                    reinterpret_cast<const E*>(msg.data() + n * sizeof(Index)), n});
    total += n;
  }

  // The own run to the tail of the arrays (grown within their headroom when they can).
  const std::size_t tail = total - own_n;
  if (total > elements.capacity()) reserve_headroom(elements, total);
  if (total > keys.capacity()) reserve_headroom(keys, total);
  if (total > elements.size()) {
    elements.resize(total);
    keys.resize(total);
  }
  if (own_n != 0 && tail != own_b) {
    std::memmove(static_cast<void*>(elements.data() + tail), elements.data() + own_b,
                 own_n * sizeof(E));
    std::memmove(static_cast<void*>(keys.data() + tail), keys.data() + own_b,
                 own_n * sizeof(Index));
  }
  elements.resize(total);
  keys.resize(total);
  if (own_n != 0)
    runs.insert(runs.begin() + static_cast<std::ptrdiff_t>(own_at),
                Run{keys.data() + tail, elements.data() + tail, own_n});

  E* out_e = elements.data();
  Index* out_k = keys.data();
  std::size_t w = 0;
  auto put = [&](Run& r) {
    out_e[w] = *r.e++;
    out_k[w++] = *r.k++;
    --r.n;
  };
  if (runs.size() == 2) {  // two runs (a partner and the own run, at 2 ranks): a direct merge
    Run& a = runs[0];
    Run& b = runs[1];
    while (a.n != 0 && b.n != 0) put(*b.k < *a.k ? b : a);
    for (Run* r : {&a, &b})
      while (r->n != 0) put(*r);
  } else if (runs.size() > 2) {  // the least head first, ties to the lower source
    auto later = [&runs](std::size_t x, std::size_t y) {
      return *runs[y].k < *runs[x].k || (!(*runs[x].k < *runs[y].k) && y < x);
    };
    std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(later)> heads(later);
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (runs[i].n != 0) heads.push(i);
    while (!heads.empty()) {
      const std::size_t i = heads.top();
      heads.pop();
      put(runs[i]);
      if (runs[i].n != 0) heads.push(i);
    }
  } else if (runs.size() == 1 && runs[0].e != elements.data() + tail) {  // one partner's run only
    std::memcpy(static_cast<void*>(out_e), runs[0].e, runs[0].n * sizeof(E));
    std::memcpy(static_cast<void*>(out_k), runs[0].k, runs[0].n * sizeof(Index));
  }
}

}  // namespace irregular::detail
