// Migration: moves leaves (hnodes with their load) and their elements to the owners a new
// ownership map gives them, one merged message per partner (baiardi-2001 §3: remapping by
// segment shifts). Nothing is lost or duplicated: the sender keeps nothing it sent.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/distributed/distributed_sort.hpp>
#include <irregular/distributed/local_leaves.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/mpi/transport.hpp>

#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <utility>
#include <vector>

namespace irregular {

namespace detail {
/// A leaf on the wire (trivially copyable: travels raw).
template <class Index>
struct LeafRecord {
  Index start;
  std::uint64_t count;
  double load;
  std::uint8_t level;
};
}  // namespace detail

/// Sends local leaf i to rank leaf_dest[i] and element j to rank elem_dest[j], one merged message
/// per partner ([leaf records][elements], both through mpi::pack). `keys` are the sorted keys
/// of `elements`, `loads` one value per leaf. On return the arrays hold what this rank owns,
/// leaves sorted by start and elements by key. Returns what this rank sent to others.
/// Collective over comm.
template <SpaceFillingCurve C, class E, class KeyOf>
mpi::MigrationCounters migrate(const boost::mpi::communicator& comm, std::span<const int> leaf_dest,
                               std::span<const int> elem_dest, LocalLeaves<C>& leaves,
                               std::vector<double>& loads, std::vector<E>& elements,
                               std::vector<typename C::index_type>& keys, KeyOf&& key_of, int tag) {
  using I = typename C::index_type;
  using Record = detail::LeafRecord<I>;
  const int p = comm.size();
  const auto P = static_cast<std::size_t>(p);
  if (p == 1) return {};  // everything stays: nothing to stage, pack or re-sort
  // Counting sort by destination keeps each group in its input (sorted) order.
  auto group = [P](std::span<const int> dest, std::vector<std::size_t>& order, std::vector<std::size_t>& first) {
    first.assign(P + 1, 0);
    for (int d : dest) ++first[static_cast<std::size_t>(d) + 1];
    for (std::size_t r = 0; r < P; ++r) first[r + 1] += first[r];
    order.resize(dest.size());
    auto fill = first;
    for (std::size_t i = 0; i < dest.size(); ++i) order[fill[static_cast<std::size_t>(dest[i])]++] = i;
  };
  std::vector<std::size_t> leaf_order, leaf_first, elem_order, elem_first;
  group(leaf_dest, leaf_order, leaf_first);
  group(elem_dest, elem_order, elem_first);

  std::vector<Record> records(leaves.size());
  std::vector<E> staged;
  staged.reserve(elements.size());
  for (std::size_t k = 0; k < leaf_order.size(); ++k) {
    const std::size_t i = leaf_order[k];
    records[k] = Record{leaves.starts_[i], leaves.counts_[i], loads[i], leaves.levels_[i]};
  }
  const auto self = static_cast<std::size_t>(comm.rank());
  // The part that stays keeps its keys; only received elements are keyed again.
  std::vector<I> self_keys;
  self_keys.reserve(elem_first[self + 1] - elem_first[self]);
  for (std::size_t k = elem_first[self]; k < elem_first[self + 1]; ++k) self_keys.push_back(keys[elem_order[k]]);
  for (std::size_t j : elem_order) staged.push_back(std::move(elements[j]));
  std::vector<E>().swap(elements);
  keys.clear();

  mpi::MigrationCounters sent;
  std::vector<char> bytes;
  std::vector<std::size_t> offsets(P + 1, 0);
  if constexpr (mpi::is_raw_transportable<E>) {  // exact size: no regrowth while packing
    std::size_t total = 0;
    for (std::size_t r = 0; r < P; ++r)
      if (r != self)
        total += 2 * mpi::pack_header_bytes + (leaf_first[r + 1] - leaf_first[r]) * sizeof(Record) +
                 (elem_first[r + 1] - elem_first[r]) * sizeof(E);
    bytes.reserve(total);
  }
  for (std::size_t r = 0; r < P; ++r) {
    const std::size_t nl = leaf_first[r + 1] - leaf_first[r], ne = elem_first[r + 1] - elem_first[r];
    if (nl + ne > 0 && r != self) {  // what stays is handed over below, never packed
      mpi::pack(std::span<const Record>(records).subspan(leaf_first[r], nl), bytes);
      mpi::pack(std::span<const E>(staged).subspan(elem_first[r], ne), bytes);
    }
    offsets[r + 1] = bytes.size();
    if (static_cast<int>(r) != comm.rank() && nl + ne > 0) {
      sent.hnodes += nl;
      sent.elements += ne;
      sent.bytes += offsets[r + 1] - offsets[r];
      sent.messages += 1;
    }
  }
  auto got = mpi::sparse_exchange(comm, std::span<const char>(bytes), std::span<const std::size_t>(offsets), tag);
  std::vector<char>().swap(bytes);

  // Sources in rank order, with this rank's own part in its place: contiguous segments stay sorted.
  std::vector<Record> in, all_in;
  bool self_done = false;
  auto take_self = [&] {
    all_in.insert(all_in.end(), records.begin() + static_cast<std::ptrdiff_t>(leaf_first[self]),
                  records.begin() + static_cast<std::ptrdiff_t>(leaf_first[self + 1]));
    elements.insert(elements.end(), std::make_move_iterator(staged.begin() + static_cast<std::ptrdiff_t>(elem_first[self])),
                    std::make_move_iterator(staged.begin() + static_cast<std::ptrdiff_t>(elem_first[self + 1])));
    keys.insert(keys.end(), self_keys.begin(), self_keys.end());
    self_done = true;
  };
  for (std::size_t i = 0; i < got.sources.size(); ++i) {
    if (!self_done && static_cast<std::size_t>(got.sources[i]) > self) take_self();
    const auto msg = got.from_index(i);
    in.clear();
    const std::size_t used = mpi::unpack(msg, in);
    mpi::unpack(msg.subspan(used), elements);
    for (std::size_t j = keys.size(); j < elements.size(); ++j) keys.push_back(key_of(elements[j]));
    all_in.insert(all_in.end(), in.begin(), in.end());
  }
  if (!self_done) take_self();
  std::vector<Record>().swap(records);
  std::vector<E>().swap(staged);
  // Contiguous segments arrive in rank order, already sorted; other maps need a sort.
  if (!std::is_sorted(all_in.begin(), all_in.end(), [](const Record& a, const Record& b) { return a.start < b.start; }))
    std::sort(all_in.begin(), all_in.end(), [](const Record& a, const Record& b) { return a.start < b.start; });
  leaves.clear();
  loads.clear();
  for (const auto& rec : all_in) {
    leaves.push_back(rec.start, rec.level, rec.count);
    loads.push_back(rec.load);
  }
  IRREGULAR_ASSERT(keys.size() == elements.size());
  detail::sort_by_key(elements, keys);  // returns at once when already sorted
  return sent;
}

}  // namespace irregular
