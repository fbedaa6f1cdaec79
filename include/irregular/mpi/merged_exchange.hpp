// Merged non-blocking exchange: records are buffered per partner and leave as one message when b
// are buffered, arrivals are delivered by polling while the send sets are still being computed,
// and a phase ends by termination messages or NBX (baiardi-collecting-remote-data §4).
#pragma once

#include <irregular/core/error.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/config.hpp>  // <mpi.h>, without its C++ bindings
#include <boost/mpi/environment.hpp>
#include <boost/mpi/exception.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular::mpi {

/// How a phase learns that nothing more can arrive.
enum class Termination {
  messages,  ///< the papers' scheme: after its data each rank tells every other rank (O(p) per
             ///< rank)
  nbx,  ///< data by MPI_Issend; a rank whose sends all completed joins an MPI_Ibarrier (O(log p))
};

/// Message merging (the buffer size b) and termination detection of a MergedExchange.
struct MergeOptions {
  /// b: a partner's buffer leaves as one message once it holds b records; 0 = unbounded (one
  /// message per partner per phase). The papers found b = 50 best on their Ethernet cluster.
  std::size_t buffer_entries = 0;
  /// NBX by default: termination messages cost every rank p - 1 messages per phase, p^2 in all,
  /// which a library meant for thousands of ranks does not spend. In the ghost collection at 2
  /// and 4 ranks neither b nor the termination scheme moved the time beyond the noise, except
  /// b = 1, 10-40% slower at 4 ranks (bench/results/ghost.md, "Merge buffer b and termination"),
  /// so with NBX keep b = 0 or b >= 15.
  Termination termination = Termination::nbx;
};

/// What this rank did in one phase (self-delivery not counted). A termination merged into the last
/// data message to a partner (Termination::messages) is no extra message: termination_messages
/// counts only messages sent just to terminate, and bytes count record bytes only.
struct PhaseStats {
  std::uint64_t messages_sent = 0;         ///< data messages sent
  std::uint64_t bytes_sent = 0;            ///< record bytes sent
  std::uint64_t messages_received = 0;     ///< data messages received
  std::uint64_t bytes_received = 0;        ///< record bytes received
  std::uint64_t termination_messages = 0;  ///< messages sent only to terminate
  double seconds = 0;                      ///< from construction to the end of finish()

  /// Adds another phase's counts and seconds.
  PhaseStats& operator+=(const PhaseStats& o) noexcept {
    messages_sent += o.messages_sent;
    bytes_sent += o.bytes_sent;
    messages_received += o.messages_received;
    bytes_received += o.bytes_received;
    termination_messages += o.termination_messages;
    seconds += o.seconds;
    return *this;
  }
  friend PhaseStats operator+(PhaseStats a, const PhaseStats& b) noexcept { return a += b; }
  friend bool operator==(const PhaseStats&, const PhaseStats&) = default;
};

/// One phase of a sparse exchange of records of a trivially copyable T whose receivers do not
/// know who sends. Records travel as raw bytes, at most INT_MAX bytes per message (an unbounded
/// buffer that reaches it leaves early).
///
/// Every send is non-blocking; nothing limits the sends in flight, so with NBX prefer b >= 15
/// (OpenMPI slows down superlinearly under ~10^5 outstanding synchronous sends).
///
/// Wire format: a message is its records' bytes. In Termination::messages mode a zero-byte message
/// terminates, and the last data message to a partner carries the termination as one extra
/// trailing byte (when sizeof(T) > 1), so with b = 0 every rank sends exactly p - 1 messages.
///
/// Callbacks: on_receive(source, records) may call send() on any other engine at any time (e.g.
/// answers on engine B to requests arriving on engine A, with B.finish() after A.finish()), and
/// send() on this engine while poll() runs it; once finish() has begun, send() on this engine
/// throws irregular::error (this rank may already have told the others it is done). poll() and
/// finish() are not re-entrant for one engine. An exception from on_receive (or a parse_error)
/// leaves the phase broken: the caller must agree on the error and not reuse (comm, tag) for
/// another phase; sends still in flight are then released to MPI and their buffers kept alive
/// until the program ends rather than freed under MPI.
///
/// Same-tag phases: finish() ends with MPI_Barrier, so a rank that finished cannot start the next
/// phase on the same tag while another still receives this one (their messages would mix).
template <class T>
class MergedExchange {
  static_assert(
      std::is_trivially_copyable_v<T>,
      "irregular::mpi::MergedExchange<T>: T must be trivially copyable (records travel as raw "
      "bytes); use sparse_exchange for types that need Boost.Serialization");

 public:
  /// Posts nothing and communicates nothing; comm is used as given (no duplicate) and the tag
  /// belongs to this phase until finish() returns. Throws irregular::invalid_argument for a bad
  /// tag.
  MergedExchange(const boost::mpi::communicator& comm, int tag, MergeOptions opt = {})
      : comm_(comm),
        tag_(tag),
        me_(comm.rank()),
        p_(comm.size()),
        opt_(opt),
        slots_(static_cast<std::size_t>(p_)),
        start_(std::chrono::steady_clock::now()) {
    if (tag < 0 || tag > boost::mpi::environment::max_tag())
      throw invalid_argument("irregular::mpi::MergedExchange: tag " + std::to_string(tag) +
                             " outside [0, " + std::to_string(boost::mpi::environment::max_tag()) +
                             "]");
    const std::size_t cap = (static_cast<std::size_t>(INT_MAX) - 1) / sizeof(T) * sizeof(T);
    flush_bytes_ = opt.buffer_entries == 0 ? cap : std::min(cap, opt.buffer_entries * sizeof(T));
  }
  MergedExchange(const MergedExchange&) = delete;
  MergedExchange& operator=(const MergedExchange&) = delete;

  ~MergedExchange() {
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (finalized) return;
    for (std::size_t i = head_; i < requests_.size(); ++i) {
      int done = 0;
      MPI_Test(&requests_[i], &done, MPI_STATUS_IGNORE);
      if (done) continue;
      MPI_Request_free(&requests_[i]);
      parked().push_back(std::move(in_flight_[i]));
    }
  }

  /// Appends to dest's buffer; a full buffer leaves at once (non-blocking). Records to this rank
  /// are delivered by the next poll() or finish() and are no message.
  void send(int dest, const T& value) { send(dest, std::span<const T>(&value, 1)); }
  /// Appends several records to dest's buffer, as send(dest, value) for each.
  void send(int dest, std::span<const T> values) {
    if (finishing_)
      throw error("irregular::mpi::MergedExchange::send: finish() has begun on this engine");
    if (dest < 0 || dest >= p_)
      throw invalid_argument("irregular::mpi::MergedExchange::send: destination " +
                             std::to_string(dest) + " outside [0, " + std::to_string(p_) + ")");
    if (dest == me_) {
      self_.insert(self_.end(), values.begin(), values.end());
      return;
    }
    Slot& s = slots_[static_cast<std::size_t>(dest)];
    if (!s.listed) {
      s.listed = true;
      listed_.push_back(dest);
    }
    const auto* from = reinterpret_cast<const std::byte*>(values.data());
    for (std::size_t left = values.size_bytes(); left > 0;) {
      if (s.bytes.capacity() == 0 && !spare_.empty()) {
        s.bytes = std::move(spare_.back());
        spare_.pop_back();
      } else if (s.bytes.capacity() == 0) {  // + 1: room for a merged termination byte
        s.bytes.reserve(opt_.buffer_entries > 0 ? flush_bytes_ + 1
                                                : std::min(left, flush_bytes_) + 1);
      }
      const std::size_t n = std::min(left, flush_bytes_ - s.bytes.size());
      s.bytes.insert(s.bytes.end(), from, from + n);
      from += n;
      left -= n;
      if (s.bytes.size() == flush_bytes_) post(dest, s.bytes);
    }
  }

  /// Non-blocking: delivers every message that has arrived, then this rank's own records, as
  /// on_receive(int source, std::span<const T> records); retires completed sends. When nothing
  /// arrived it costs one MPI_Improbe and one MPI_Test.
  template <class OnReceive>
  void poll(OnReceive&& on_receive) {
    const Guard guard(*this, "poll");
    for (;;) {
      int arrived = 0;
      MPI_Message msg;
      MPI_Status status;
      BOOST_MPI_CHECK_RESULT(MPI_Improbe, (MPI_ANY_SOURCE, tag_, comm_, &arrived, &msg, &status));
      if (!arrived) break;
      receive(msg, status, on_receive);
    }
    retire();
    deliver_self(on_receive);
  }

  /// Flushes every buffer, terminates, and delivers everything until nothing more can arrive;
  /// returns after every own send completed and every rank reached the end of the phase.
  /// Collective over comm.
  template <class OnReceive>
  void finish(OnReceive&& on_receive) {
    const Guard guard(*this, "finish");
    finishing_ = true;
    if (opt_.termination == Termination::messages) {
      // Every other rank, starting after this one so that not all ranks hit rank 0 first.
      for (int k = 1; k < p_; ++k) {
        const int d = (me_ + k) % p_;
        post(d, slots_[static_cast<std::size_t>(d)].bytes, true);
      }
      deliver_self(on_receive);
      while (terminated_ < p_ - 1) {  // some may have come during poll(): a fast rank's finish
        MPI_Message msg;
        MPI_Status status;
        BOOST_MPI_CHECK_RESULT(MPI_Mprobe, (MPI_ANY_SOURCE, tag_, comm_, &msg, &status));
        receive(msg, status, on_receive);
      }
    } else {
      for (const int d : listed_) post(d, slots_[static_cast<std::size_t>(d)].bytes);
      deliver_self(on_receive);
      MPI_Request barrier = MPI_REQUEST_NULL;
      for (bool done = false; !done;) {
        int arrived = 0;
        MPI_Message msg;
        MPI_Status status;
        BOOST_MPI_CHECK_RESULT(MPI_Improbe, (MPI_ANY_SOURCE, tag_, comm_, &arrived, &msg, &status));
        if (arrived) {
          receive(msg, status, on_receive);
        } else if (barrier == MPI_REQUEST_NULL) {
          retire();  // an Issend completes when matched: all completed = all this rank sent was
                     // received
          if (head_ == requests_.size()) {
            BOOST_MPI_CHECK_RESULT(MPI_Ibarrier, (comm_, &barrier));
          }
        } else {
          int flag = 0;
          BOOST_MPI_CHECK_RESULT(MPI_Test, (&barrier, &flag, MPI_STATUS_IGNORE));
          done = flag != 0;
        }
      }
    }
    BOOST_MPI_CHECK_RESULT(MPI_Waitall, (static_cast<int>(requests_.size() - head_),
                                         requests_.data() + head_, MPI_STATUSES_IGNORE));
    requests_.clear();
    in_flight_.clear();
    head_ = 0;
    BOOST_MPI_CHECK_RESULT(MPI_Barrier, (comm_));
    stats_.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  /// What this rank did in the phase (seconds set by finish()).
  [[nodiscard]] const PhaseStats& stats() const noexcept { return stats_; }

 private:
  using Bytes = std::vector<std::byte>;
  struct Slot {
    Bytes bytes;  // no heap until something is sent to this partner
    bool listed = false;
  };
  struct alignas(T) Storage {
    std::byte bytes[sizeof(T)];
  };
  // Marks poll()/finish() as running (not re-entrant: the receive buffer is in use).
  struct Guard {
    MergedExchange& x;
    Guard(MergedExchange& ex, const char* what) : x(ex) {
      if (x.busy_ || x.finishing_)
        throw error(std::string("irregular::mpi::MergedExchange::") + what +
                    (x.busy_ ? ": called from within a callback of the same engine"
                             : ": finish() already ran"));
      x.busy_ = true;
    }
    ~Guard() { x.busy_ = false; }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
  };
  static constexpr bool merge_termination = sizeof(T) > 1;

  static std::vector<Bytes>& parked() {
    static std::vector<Bytes> buffers;
    return buffers;
  }

  // Sends buf (left empty) to dest as one message; with `terminate`, also this rank's termination
  // (merged into the data as a trailing byte, or a zero-byte message of its own).
  void post(int dest, Bytes& buf, bool terminate = false) {
    if (buf.empty() && !terminate) return;
    if (!buf.empty()) {
      ++stats_.messages_sent;
      stats_.bytes_sent += buf.size();
      if (terminate && merge_termination) {
        buf.push_back(std::byte{1});
        terminate = false;
      }
      post_bytes(dest, buf);
    }
    if (terminate) {
      ++stats_.termination_messages;
      Bytes none;
      post_bytes(dest, none);
    }
  }
  void post_bytes(int dest, Bytes& buf) {
    in_flight_.push_back(
        std::move(buf));  // the heap block, and so the address MPI reads, stays put
    requests_.push_back(MPI_REQUEST_NULL);
    Bytes& b = in_flight_.back();
    void* data = b.empty() ? static_cast<void*>(&no_bytes_) : b.data();
    const int n = static_cast<int>(b.size());
    if (opt_.termination == Termination::nbx) {
      BOOST_MPI_CHECK_RESULT(MPI_Issend, (data, n, MPI_BYTE, dest, tag_, comm_, &requests_.back()));
    } else {
      BOOST_MPI_CHECK_RESULT(MPI_Isend, (data, n, MPI_BYTE, dest, tag_, comm_, &requests_.back()));
    }
    buf.clear();
  }

  // Receives a matched message into the reusable buffer, counts a termination it carries, and
  // delivers its records.
  template <class OnReceive>
  void receive(MPI_Message msg, const MPI_Status& status, OnReceive& on_receive) {
    int count = 0;
    BOOST_MPI_CHECK_RESULT(MPI_Get_count, (&status, MPI_BYTE, &count));
    auto bytes = static_cast<std::size_t>(count);
    const std::size_t units = (bytes + sizeof(T) - 1) / sizeof(T);
    if (received_units_ < units) {  // grown, never zero-filled
      received_ = std::make_unique_for_overwrite<Storage[]>(units);
      received_units_ = units;
    }
    BOOST_MPI_CHECK_RESULT(MPI_Mrecv, (received_.get(), count, MPI_BYTE, &msg, MPI_STATUS_IGNORE));
    if (opt_.termination == Termination::messages &&
        (bytes == 0 || (merge_termination && bytes % sizeof(T) == 1))) {
      ++terminated_;
      bytes -= bytes % sizeof(T);
    }
    if (bytes % sizeof(T) != 0)
      throw parse_error("irregular::mpi::MergedExchange: rank " + std::to_string(me_) +
                        " received " + std::to_string(count) + " bytes from rank " +
                        std::to_string(status.MPI_SOURCE) + " on tag " + std::to_string(tag_) +
                        ", not a multiple of sizeof(T) = " + std::to_string(sizeof(T)) +
                        " (sender and receiver disagree on T or on the tag?)");
    if (bytes > 0) {
      ++stats_.messages_received;
      stats_.bytes_received += bytes;
      on_receive(status.MPI_SOURCE, std::span<const T>(reinterpret_cast<const T*>(received_.get()),
                                                       bytes / sizeof(T)));
    }
  }

  // Records sent to this rank; on_receive may send to itself again, into the other buffer.
  template <class OnReceive>
  void deliver_self(OnReceive& on_receive) {
    if (self_.empty()) return;
    self_delivering_.clear();
    std::swap(self_, self_delivering_);
    on_receive(me_, std::span<const T>(self_delivering_));
  }

  // Retires completed sends oldest first: O(1) when the oldest is still in flight (a later one that
  // completed early waits its turn), and its buffer is reused for the next partner that needs one.
  void retire() {
    for (; head_ < requests_.size(); ++head_) {
      int done = 0;
      BOOST_MPI_CHECK_RESULT(MPI_Test, (&requests_[head_], &done, MPI_STATUS_IGNORE));
      if (!done) break;
      if (in_flight_[head_].capacity() > 0) {
        in_flight_[head_].clear();
        spare_.push_back(std::move(in_flight_[head_]));
      }
    }
    if (head_ > 0 && 2 * head_ >= requests_.size()) {
      requests_.erase(requests_.begin(), requests_.begin() + static_cast<std::ptrdiff_t>(head_));
      in_flight_.erase(in_flight_.begin(), in_flight_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

  boost::mpi::communicator comm_;
  int tag_, me_, p_;
  MergeOptions opt_;
  std::size_t flush_bytes_ = 0;  // a buffer leaves when it holds this many bytes
  std::vector<Slot> slots_;      // one per rank: O(p) slots, buffers only for real partners
  std::vector<int> listed_;      // partners whose slot ever held records
  std::vector<T> self_, self_delivering_;
  std::vector<MPI_Request> requests_;  // sends in posting order, [head_, end) possibly in flight
  std::vector<Bytes> in_flight_;       // their buffers, side by side
  std::size_t head_ = 0;
  int terminated_ = 0;                   // termination messages received (Termination::messages)
  std::vector<Bytes> spare_;             // retired buffers, reused
  std::unique_ptr<Storage[]> received_;  // the reusable receive buffer, aligned for T
  std::size_t received_units_ = 0;
  PhaseStats stats_;
  std::chrono::steady_clock::time_point start_;
  bool finishing_ = false, busy_ = false;
  static inline std::byte no_bytes_{};  // address for zero-byte termination messages
};

}  // namespace irregular::mpi
