// The segment shift's message and its receiving side (distributed/segment_shift.hpp): keyed
// elements travel as blocks of [keys][elements], so a receiver that knows only a message's
// length scatters every whole block straight into its arrays; the leaf part and a trailer follow.
#pragma once

#include <irregular/core/detail/headroom.hpp>
#include <irregular/core/detail/splice_vector.hpp>
#include <irregular/mpi/detail/nbx.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace irregular::detail {

/// Last bytes of a shift message: [element blocks][starts][counts][payload][levels][trailer].
/// The element part is a sequence of blocks of block_elements elements (the last one shorter),
/// each [its keys][its elements]: a receiver that knows only the message's length can still
/// scatter every whole block straight into its key and element arrays (LandingSink). Keys
/// travel with their elements: copying them is cheaper than computing them again.
inline constexpr std::size_t block_elements = std::size_t{1} << 16;

struct ShiftTrailer {
  std::uint64_t elements;
  std::uint64_t leaves;
  std::uint64_t payload;  // 1 when a payload value travels with each leaf
};

/// One received shift message, parsed in place: where each array's run starts in the buffer.
struct Arrival {
  const char* elements;  // with `blocked`: the message's element part, blocks of [keys][elements]
  const char* keys;      // without `blocked`: the arrival's keys, apart from its elements
  const char* starts;
  const char* counts;
  const char* payload;
  const char* levels;
  ShiftTrailer t;
  bool blocked;
};

/// Copies the arrivals' elements to de and their keys to dk (null: no keys travel), one arrival
/// after another.
template <class E, class I>
void copy_elements(E* de, I* dk, std::span<const Arrival> arrivals) {
  for (const Arrival& r : arrivals) {
    const auto ne = static_cast<std::size_t>(r.t.elements);
    if (ne == 0) continue;
    if (!r.blocked || !dk) {
      std::memcpy(static_cast<void*>(de), r.elements, ne * sizeof(E));
      if (dk) std::memcpy(static_cast<void*>(dk), r.keys, ne * sizeof(I));
    } else {
      const char* at = r.elements;
      for (std::size_t b = 0; b < ne; b += block_elements) {
        const std::size_t k = std::min(block_elements, ne - b);
        std::memcpy(static_cast<void*>(dk + b), at, k * sizeof(I));
        std::memcpy(static_cast<void*>(de + b), at + k * sizeof(I), k * sizeof(E));
        at += k * (sizeof(I) + sizeof(E));
      }
    }
    de += ne;
    if (dk) dk += ne;
  }
}

/// Receives shift messages. With `scatter` (the rank keeps no elements, so its arrivals will be
/// its arrays) they land straight in landing arrays of elements and keys, one message after
/// another in arrival order: a message's length bounds its element count, so the receive map
/// offers whole blocks of key and element slots from the landing end; every whole block lands in
/// place, and the short last block's elements, which land after its keys, are moved into their
/// slots once the trailer tells the counts. Without `scatter` (arrivals will be copied around a
/// kept run anyway) each message is received whole and copied from there once. A message that
/// arrives in pieces (as long as a piece or longer) is received whole too. The leaf parts are
/// copied out. Problems are recorded, never thrown (the exchange loop must not throw).
template <class E, class I, class EV, class KV, bool keyed>
class LandingSink {
 public:
  struct Landed {
    int source;
    bool whole;        // received whole: its bytes are at `at` in messages(), copied by the caller
    std::size_t at;    // else: its first element (and key) in the landing arrays
    std::size_t tail;  // its leaf part in tails()
    ShiftTrailer t;
  };

  LandingSink(int me, EV& elements, KV* keys, bool payload, bool scatter, std::size_t piece_bytes)
      : elements_(elements),
        keys_(keys),
        payload_(payload),
        scatter_(scatter),
        piece_bytes_(piece_bytes),
        me_(me) {}

  std::span<const detail::ByteRegion> regions(int, std::size_t offset, std::size_t bytes) {
    if (offset == 0) {
      message_ = messages_.size();
      // More pieces follow when a piece is full: the length is not known yet.
      whole_ = !scatter_ || bytes >= piece_bytes_;
      if (!whole_) lay_out(bytes);
    }
    if (whole_) {
      messages_.resize_for_overwrite(message_ + offset + bytes);
      piece_ = detail::ByteRegion{messages_.data() + message_ + offset, bytes};
      return {&piece_, 1};
    }
    return map_;
  }

  void finish(int source, std::size_t total) {
    if (whole_) map_.assign(1, detail::ByteRegion{messages_.data() + message_, total});
    ShiftTrailer t{};
    if (total < sizeof t) return fail(source, total);
    gather(total - sizeof t, sizeof t, reinterpret_cast<char*>(&t));
    const std::size_t leaf_bytes =
        sizeof(I) + (keyed ? sizeof(std::uint64_t) : 0) + 1 + (payload_ ? sizeof(double) : 0);
    const bool ok =
        t.payload == (payload_ ? 1u : 0u) && t.leaves <= total && t.elements <= total &&
        (keyed || t.elements == t.leaves) &&
        total - sizeof t == t.elements * (sizeof(E) + key_bytes) + t.leaves * leaf_bytes;
    if (!ok || source == me_) return fail(source, total);
    const auto ne = static_cast<std::size_t>(t.elements);
    const std::size_t element_part = ne * (sizeof(E) + key_bytes);
    const std::size_t tail = tails_.size();
    tails_.resize_for_overwrite(tail + (total - element_part));
    gather(element_part, total - element_part, tails_.data() + tail);
    if (whole_ && !scatter_) {
      landed_.push_back(Landed{source, true, message_, tail, t});
      return;  // copied from the message by the splice
    }
    if (whole_) {  // arrived in pieces: copied into the landing arrays
      grow(end_ + ne);
      Arrival r{};
      r.elements = messages_.data() + message_;
      r.t = t;
      r.blocked = keyed;
      I* dk = nullptr;
      if constexpr (keyed) dk = keys_->data() + end_;
      copy_elements<E, I>(elements_.data() + end_, dk, std::span<const Arrival>(&r, 1));
    } else if constexpr (keyed) {
      // The short last block's elements landed after its keys: the first `spill` bytes in its
      // key slots, the rest at the start of its element slots. Moved up by `spill`, the bytes
      // find their slots, and the spilled ones are copied in front (the tail is out already).
      const std::size_t whole = ne / block_elements, k = ne % block_elements;
      if (k != 0) {
        const std::size_t b = 2 * whole;  // the block's key region in map_, its element region next
        const std::size_t spill = std::min(map_[b].bytes - k * sizeof(I), k * sizeof(E));
        char* slots = const_cast<char*>(map_[b + 1].data);  // landing memory: the receive wrote it
        std::memmove(slots + spill, slots, k * sizeof(E) - spill);
        std::memcpy(slots, map_[b].data + k * sizeof(I), spill);
      }
    }
    if (whole_) messages_.resize_for_overwrite(message_);  // copied: its bytes are free again
    landed_.push_back(Landed{source, false, end_, tail, t});
    end_ += ne;
    detail::resize_for_overwrite(elements_, end_);
    if constexpr (keyed) detail::resize_for_overwrite(*keys_, end_);
  }

  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] std::vector<Landed>& landed() { return landed_; }
  [[nodiscard]] const char* tails() const { return tails_.data(); }
  [[nodiscard]] const char* messages() const { return messages_.data(); }

 private:
  static constexpr std::size_t key_bytes = keyed ? sizeof(I) : 0;

  void grow(std::size_t n) {
    auto fit = [n](auto& v) {
      if (n > v.capacity()) {
        // The first message sizes the arrays this rank will keep: room on both sides, as the
        // element store's (core/detail/headroom.hpp), so that the next remap splices in place.
        if (v.empty())
          detail::reserve_headroom(v, n);
        else
          v.reserve(std::max(n, v.capacity() + v.capacity() / 2));
      }
      detail::resize_for_overwrite(v, n);
    };
    fit(elements_);
    if constexpr (keyed) fit(*keys_);
  }
  // Whole blocks of slots from the landing end, enough for any element count `bytes` allows.
  void lay_out(std::size_t bytes) {
    const std::size_t most = bytes / (sizeof(E) + key_bytes) + 1;
    map_.clear();
    if constexpr (keyed) {
      // A short message gets one short block (its elements are moved after anyway).
      const std::size_t blocks = (most + block_elements - 1) / block_elements;
      const std::size_t slots = std::min(most, block_elements);
      grow(end_ + (blocks - 1) * block_elements + slots);
      for (std::size_t b = 0; b < blocks; ++b) {
        const std::size_t at = end_ + b * block_elements;
        map_.push_back({reinterpret_cast<const char*>(keys_->data() + at), slots * sizeof(I)});
        map_.push_back({reinterpret_cast<const char*>(elements_.data() + at), slots * sizeof(E)});
      }
    } else {
      grow(end_ + most);
      map_.push_back({reinterpret_cast<const char*>(elements_.data() + end_), most * sizeof(E)});
    }
  }
  // Copies the message's bytes [offset, offset + n) out of the receive map.
  void gather(std::size_t offset, std::size_t n, char* out) const {
    detail::for_each_part(map_, offset, n, [out](const char* p, std::size_t at, std::size_t len) {
      std::memcpy(out + at, p, len);
    });
  }
  void fail(int source, std::size_t total) {
    if (error_.empty())
      error_ = "irregular::shift_segments: rank " + std::to_string(me_) + " received " +
               std::to_string(total) + " bytes from rank " + std::to_string(source) +
               " that do not parse as a segment shift";
    detail::resize_for_overwrite(elements_, end_);
    if constexpr (keyed) detail::resize_for_overwrite(*keys_, end_);
    if (whole_) messages_.resize_for_overwrite(message_);
  }

  EV& elements_;
  KV* keys_;
  bool payload_;
  bool scatter_;
  std::size_t piece_bytes_;
  int me_;
  bool whole_ = false;  // the current message is received whole into messages_ (at message_)
  std::size_t message_ = 0;
  std::size_t end_ = 0;
  std::vector<detail::ByteRegion> map_;
  detail::ByteRegion piece_{};
  detail::SpliceVector<char> messages_, tails_;  // pooled blocks: their pages stay mapped
  std::vector<Landed> landed_;
  std::string error_;
};

/// Copies the runs of `arrivals` that `field` locates (`count` values each) to dst, one after
/// another.
template <class T, class Field, class Count>
void copy_runs(T* dst, std::span<const Arrival> arrivals, Field field, Count count) {
  for (const Arrival& r : arrivals) {
    const std::size_t k = count(r);
    if (k) std::memcpy(static_cast<void*>(dst), field(r), k * sizeof(T));
    dst += k;
  }
}

}  // namespace irregular::detail
