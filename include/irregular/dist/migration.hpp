// Migration: moves leaves (hnodes with their load) and their elements to the owners a new
// ownership map gives them, one merged message per partner (baiardi-2001 §3: remapping by
// segment shifts). Nothing is lost or duplicated: the sender keeps nothing it sent.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/dist/local_leaves.hpp>
#include <irregular/dist/segment_map.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/mpi/transport.hpp>

#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
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

/// Sends every local leaf and every element to the rank that `to` assigns its curve index.
/// `keys` are the sorted keys of `elements`; `loads` one per leaf. On return the three arrays
/// hold this rank's new segment, still sorted. Returns what this rank sent to others.
/// Collective over comm.
template <SpaceFillingCurve C, class E, class KeyOf>
mpi::MigrationCounters migrate(const boost::mpi::communicator& comm, const SegmentMap<C>& to,
                               LocalLeaves<C>& leaves, std::vector<double>& loads,
                               std::vector<E>& elements, std::vector<typename C::index_type>& keys,
                               KeyOf&& key_of, int tag) {
  using I = typename C::index_type;
  using Record = detail::LeafRecord<I>;
  const int p = comm.size();
  const auto& spl = to.splitters();
  // Leaves and elements are sorted, so each destination takes one contiguous run of each.
  std::vector<std::size_t> leaf_cut(static_cast<std::size_t>(p) + 1), elem_cut(static_cast<std::size_t>(p) + 1);
  leaf_cut[0] = elem_cut[0] = 0;
  for (int r = 1; r < p; ++r) {
    const I s = spl[static_cast<std::size_t>(r)];
    leaf_cut[static_cast<std::size_t>(r)] = static_cast<std::size_t>(
        std::lower_bound(leaves.starts_.begin(), leaves.starts_.end(), s) - leaves.starts_.begin());
    elem_cut[static_cast<std::size_t>(r)] =
        static_cast<std::size_t>(std::lower_bound(keys.begin(), keys.end(), s) - keys.begin());
  }
  leaf_cut[static_cast<std::size_t>(p)] = leaves.size();
  elem_cut[static_cast<std::size_t>(p)] = elements.size();

  std::vector<Record> records(leaves.size());
  for (std::size_t i = 0; i < leaves.size(); ++i)
    records[i] = Record{leaves.starts_[i], leaves.counts_[i], loads[i], leaves.levels_[i]};

  // One byte message per partner: [leaf records][elements], both through mpi::pack.
  mpi::MigrationCounters sent;
  std::vector<char> bytes;
  std::vector<std::size_t> offsets(static_cast<std::size_t>(p) + 1, 0);
  for (int r = 0; r < p; ++r) {
    const auto ri = static_cast<std::size_t>(r);
    const std::size_t nl = leaf_cut[ri + 1] - leaf_cut[ri], ne = elem_cut[ri + 1] - elem_cut[ri];
    if (nl + ne > 0) {
      mpi::pack(std::span<const Record>(records).subspan(leaf_cut[ri], nl), bytes);
      mpi::pack(std::span<const E>(elements).subspan(elem_cut[ri], ne), bytes);
    }
    offsets[ri + 1] = bytes.size();
    if (r != comm.rank() && nl + ne > 0) {
      sent.hnodes += nl;
      sent.elements += ne;
      sent.bytes += offsets[ri + 1] - offsets[ri];
      sent.messages += 1;
    }
  }
  records.clear();
  records.shrink_to_fit();
  std::vector<E>().swap(elements);
  auto got = mpi::sparse_exchange(comm, std::span<const char>(bytes), std::span<const std::size_t>(offsets), tag);
  std::vector<char>().swap(bytes);

  // Sources arrive in rank order and segments are in rank order: concatenation stays sorted.
  std::vector<Record> in;
  leaves.clear();
  loads.clear();
  for (std::size_t i = 0; i < got.sources.size(); ++i) {
    const auto msg = got.from_index(i);
    in.clear();
    const std::size_t used = mpi::unpack(msg, in);
    mpi::unpack(msg.subspan(used), elements);
    for (const auto& rec : in) {
      leaves.push_back(rec.start, rec.level, rec.count);
      loads.push_back(rec.load);
    }
  }
  keys.resize(elements.size());
  for (std::size_t i = 0; i < elements.size(); ++i) keys[i] = key_of(elements[i]);
  return sent;
}

}  // namespace irregular
