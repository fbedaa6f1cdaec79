// Distributed sort of elements by curve index (sample sort with weighted regular sampling):
// the first step of building the H-Tree from elements given on any rank in any distribution.
// baiardi-2001 §3: the SFC visit orders the elements before the blocking partition.
#pragma once

#include <irregular/core/index.hpp>
#include <irregular/distributed/detail/index_wire.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/sparse_exchange.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace irregular {

namespace detail {

/// Sorts elements (and their keys) locally by key; equal keys keep their input order.
/// (key, position) pairs sort contiguously, far faster than an indirect stable sort.
template <class E, class Index>
void sort_by_key(std::vector<E>& elements, std::vector<Index>& keys) {
  const std::size_t n = elements.size();
  if (std::is_sorted(keys.begin(), keys.end())) return;
  std::vector<std::pair<Index, std::size_t>> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = {keys[i], i};
  std::sort(order.begin(), order.end());
  std::vector<E> e2;
  e2.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    e2.push_back(std::move(elements[order[i].second]));
    keys[i] = order[i].first;
  }
  elements.swap(e2);
}

/// A key with the number of elements it stands for.
struct WeightedSample {
  IndexWire key;
  double weight = 0;
  template <class Archive>
  void serialize(Archive& ar, unsigned) { ar & key & weight; }
};

}  // namespace detail

/// Sorts the elements of all ranks by key. On return every rank holds a contiguous run of the
/// global order, sorted, and the returned p+1 boundaries (replicated, O(p)) say which keys each
/// rank holds: rank r's keys lie in [bounds[r], bounds[r+1]); bounds[0] = 0 and bounds[p] =
/// `domain_end`. Equal keys always land on one rank. `key_of(e)` recomputes a key after transport.
/// Collective over comm.
template <class E, class Index, class KeyOf>
std::vector<Index> sample_sort(const boost::mpi::communicator& comm, std::vector<E>& elements,
                               std::vector<Index>& keys, Index domain_end, KeyOf&& key_of,
                               int tag, mpi::ExchangeStats* stats = nullptr) {
  const int p = comm.size();
  detail::sort_by_key(elements, keys);
  std::vector<Index> bounds(static_cast<std::size_t>(p) + 1, domain_end);
  bounds[0] = 0;
  if (p == 1) return bounds;

  // Weighted regular samples: each stands for n_local / s elements, so skewed inputs (all on
  // one rank) still give balanced splitters. O(p) samples per rank, gathered on rank 0.
  const std::size_t n = keys.size();
  // 4p samples but at least 64, so small rank counts still split within a few per mille.
  const std::size_t s = std::min<std::size_t>(n, std::max<std::size_t>(64, 4 * static_cast<std::size_t>(p)));
  std::vector<detail::WeightedSample> mine;
  mine.reserve(s);
  for (std::size_t i = 0; i < s; ++i)
    mine.push_back(detail::WeightedSample{detail::IndexWire::from(keys[(2 * i + 1) * n / (2 * s)]), double(n) / double(s)});
  std::vector<std::vector<detail::WeightedSample>> all;
  boost::mpi::gather(comm, mine, all, 0);
  std::vector<detail::WeightedSample> cut_samples(static_cast<std::size_t>(p) - 1);
  if (comm.rank() == 0) {
    std::vector<detail::WeightedSample> flat;
    for (auto& v : all) flat.insert(flat.end(), v.begin(), v.end());
    std::sort(flat.begin(), flat.end(), [](const auto& a, const auto& b) {
      return a.key.hi != b.key.hi ? a.key.hi < b.key.hi : a.key.lo < b.key.lo;
    });
    double total = 0;
    for (const auto& f : flat) total += f.weight;
    double acc = 0;
    std::size_t j = 0;
    for (int r = 1; r < p; ++r) {
      const double target = total * r / p;
      while (j < flat.size() && acc + flat[j].weight <= target) acc += flat[j++].weight;
      cut_samples[static_cast<std::size_t>(r) - 1] =
          j < flat.size() ? flat[j] : detail::WeightedSample{detail::IndexWire::from(domain_end), 0};
    }
  }
  boost::mpi::broadcast(comm, cut_samples, 0);
  for (int r = 1; r < p; ++r)
    bounds[static_cast<std::size_t>(r)] = cut_samples[static_cast<std::size_t>(r) - 1].key.template as<Index>();
  // Rank r receives keys in [bounds[r], bounds[r+1]); keys are sorted, so groups are contiguous.
  std::vector<std::size_t> offsets(static_cast<std::size_t>(p) + 1);
  offsets[0] = 0;
  for (int r = 1; r < p; ++r)
    offsets[static_cast<std::size_t>(r)] = static_cast<std::size_t>(
        std::lower_bound(keys.begin(), keys.end(), bounds[static_cast<std::size_t>(r)]) - keys.begin());
  offsets[static_cast<std::size_t>(p)] = n;
  auto got = mpi::sparse_exchange(comm, std::span<const E>(elements), std::span<const std::size_t>(offsets),
                                  tag, stats);
  elements = std::move(got.values);
  keys.resize(elements.size());
  for (std::size_t i = 0; i < elements.size(); ++i) keys[i] = key_of(elements[i]);
  // Runs arrive sorted and grouped by source in rank order; a stable merge keeps determinism.
  detail::sort_by_key(elements, keys);
  return bounds;
}

}  // namespace irregular
