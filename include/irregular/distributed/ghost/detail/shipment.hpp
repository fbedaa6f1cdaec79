// The ghost records of one collection on the wire, with the leaves' values when the caller gives
// a raw payload: baiardi-collecting-remote-data §3.2 ships the data in the one communication of
// fault prevention, and the reply of request/answer carries it, so no values phase follows.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/distributed/ghost/layer.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace irregular {

/// The local leaves' values as bytes, for a collection that ships them with the records. Leaf
/// i's values are bytes[offsets[i] * width, offsets[i + 1] * width).
struct RawPayload {
  std::span<const std::byte> bytes;
  std::span<const std::size_t> offsets;
  std::size_t width = 1;
  bool per_leaf = false;  ///< a ghost holds one value, else its record's count
  std::vector<std::byte>* ghost_bytes = nullptr;  ///< out: the ghosts' values, ghost after ghost
};

namespace detail {

/// Records travel as GhostLayer records. Without a payload a partner's share is its records;
/// with one it is a block: a header unit (record count, value bytes), the records, the values
/// padded to whole units. A b-limited exchange may cut a block anywhere, so blocks are read
/// back from each source's messages concatenated (MPI keeps one source's order).
template <SpaceFillingCurve C>
class Shipment {
 public:
  using Record = typename GhostLayer<C>::Record;
  struct Arrival {
    int source;
    Record record;
    std::size_t at;  ///< where its values start in values()
  };

  explicit Shipment(const RawPayload* payload) : payload_(payload) {}

  /// Appends local leaves `ids` (ascending) to `out`, one block.
  void pack(const LocalLeaves<C>& leaves, std::span<const std::size_t> ids,
            std::vector<Record>& out) const {
    const std::size_t head = out.size();
    if (payload_ != nullptr) out.emplace_back();
    for (std::size_t i : ids)
      out.emplace_back(leaves.starts()[i], leaves.counts()[i], leaves.levels()[i]);
    if (payload_ == nullptr) return;
    const RawPayload& p = *payload_;
    std::size_t bytes = 0;
    for (std::size_t i : ids) bytes += (p.offsets[i + 1] - p.offsets[i]) * p.width;
    out[head].start = static_cast<typename C::index_type>(ids.size());
    out[head].count_level = bytes;
    const std::size_t at = out.size();
    out.resize(at + (bytes + sizeof(Record) - 1) / sizeof(Record));  // zero padding
    auto* dst = reinterpret_cast<std::byte*>(out.data() + at);
    for (std::size_t i : ids) {
      const std::size_t n = (p.offsets[i + 1] - p.offsets[i]) * p.width;
      if (n > 0) std::memcpy(dst, p.bytes.data() + p.offsets[i] * p.width, n);
      dst += n;
    }
  }

  /// What a message from src brought.
  void take(int src, std::span<const Record> got) {
    if (payload_ == nullptr) {
      for (const Record& r : got) arrived_.push_back({src, r, 0});
    } else {
      auto& s = streams_[src];
      s.insert(s.end(), got.begin(), got.end());
    }
  }

  /// Reads the blocks back once nothing more can arrive; the arrivals sorted by source and start,
  /// one per leaf. Throws irregular::parse_error for a malformed block.
  std::vector<Arrival>& arrivals(int me) {
    for (const auto& [src, units] : streams_) {
      for (std::size_t k = 0; k < units.size();) {
        const auto n = static_cast<std::size_t>(units[k].start);
        const auto bytes = static_cast<std::size_t>(units[k].count_level);
        const std::size_t end = k + 1 + n + (bytes + sizeof(Record) - 1) / sizeof(Record);
        std::size_t want = 0;
        for (std::size_t j = 0; j < n && k + 1 + j < units.size(); ++j)
          want += (payload_->per_leaf ? 1 : units[k + 1 + j].count()) * payload_->width;
        if (end > units.size() || want != bytes)
          throw parse_error("irregular: rank " + std::to_string(me) +
                            " got a malformed ghost block from rank " + std::to_string(src) + " (" +
                            std::to_string(n) + " records, " + std::to_string(bytes) +
                            " value bytes)");
        const auto* v = reinterpret_cast<const std::byte*>(units.data() + k + 1 + n);
        for (std::size_t j = 0, at = values_.size(); j < n; ++j) {
          const Record& r = units[k + 1 + j];
          arrived_.push_back({src, r, at});
          at += (payload_->per_leaf ? 1 : r.count()) * payload_->width;
        }
        values_.insert(values_.end(), v, v + bytes);
        k = end;
      }
    }
    streams_.clear();
    std::sort(arrived_.begin(), arrived_.end(), [](const Arrival& a, const Arrival& b) {
      return a.source != b.source ? a.source < b.source : a.record.start < b.record.start;
    });
    arrived_.erase(std::unique(arrived_.begin(), arrived_.end(),
                               [](const Arrival& a, const Arrival& b) {
                                 return a.source == b.source && a.record.start == b.record.start;
                               }),
                   arrived_.end());
    return arrived_;
  }

  /// The arrived values in the layer's ghost order, into the payload's ghost_bytes.
  void place(const GhostLayer<C>& layer) const {
    if (payload_ == nullptr || payload_->ghost_bytes == nullptr) return;
    const RawPayload& p = *payload_;
    std::vector<std::size_t> at(layer.size() + 1, 0);
    for (std::size_t g = 0; g < layer.size(); ++g)
      at[g + 1] = at[g] + (p.per_leaf ? 1 : layer.counts()[g]) * p.width;
    p.ghost_bytes->assign(at.back(), std::byte{0});
    for (const Arrival& a : arrived_) {
      const auto g = static_cast<std::size_t>(
          std::lower_bound(layer.starts().begin(), layer.starts().end(), a.record.start) -
          layer.starts().begin());
      if (at[g + 1] > at[g])
        std::memcpy(p.ghost_bytes->data() + at[g], values_.data() + a.at, at[g + 1] - at[g]);
    }
  }

  [[nodiscard]] bool carries_values() const noexcept { return payload_ != nullptr; }

 private:
  const RawPayload* payload_;
  std::map<int, std::vector<Record>> streams_;  // per source, its units in arrival order
  std::vector<Arrival> arrived_;
  std::vector<std::byte> values_;
};

}  // namespace detail
}  // namespace irregular
