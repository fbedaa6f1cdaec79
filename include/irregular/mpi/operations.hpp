// Named MPI operations: the raw MPI idioms of the distributed layer, each behind one name, so
// that no room above mpi/ calls MPI directly (doc/architecture.md). Each is the same single MPI
// call it replaces: the same messages and bytes. Errors throw boost::mpi::exception.
#pragma once

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/config.hpp>  // <mpi.h>, without its C++ bindings
#include <boost/mpi/exception.hpp>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace irregular::mpi {

namespace detail {
template <class T>
MPI_Datatype datatype() {
  if constexpr (std::is_same_v<T, std::uint64_t>)
    return MPI_UINT64_T;
  else if constexpr (std::is_same_v<T, int>)
    return MPI_INT;
  else if constexpr (std::is_same_v<T, double>)
    return MPI_DOUBLE;
  else
    static_assert(sizeof(T) == 0, "irregular::mpi: reductions take std::uint64_t, int or double");
}
template <class T>
void all_reduce(const boost::mpi::communicator& comm, std::span<const T> mine, std::span<T> all,
                MPI_Op op) {
  BOOST_MPI_CHECK_RESULT(MPI_Allreduce, (mine.data(), all.data(), static_cast<int>(mine.size()),
                                         datatype<T>(), op, MPI_Comm(comm)));
}
inline int bytes_as_int(std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw std::length_error("irregular::mpi: a message over INT_MAX bytes");
  return static_cast<int>(n);
}
}  // namespace detail

/// Element-wise sum of `mine` over the ranks, into `all` (same length). Collective over comm.
template <class T>
void all_reduce_sum(const boost::mpi::communicator& comm, std::span<const T> mine,
                    std::span<T> all) {
  detail::all_reduce(comm, mine, all, MPI_SUM);
}
/// Element-wise maximum. Collective over comm.
template <class T>
void all_reduce_max(const boost::mpi::communicator& comm, std::span<const T> mine,
                    std::span<T> all) {
  detail::all_reduce(comm, mine, all, MPI_MAX);
}
/// The maximum of one value over the ranks. Collective over comm.
template <class T>
T all_reduce_max(const boost::mpi::communicator& comm, T mine) {
  T all{};
  all_reduce_max(comm, std::span<const T>(&mine, 1), std::span<T>(&all, 1));
  return all;
}
/// Bitwise or of words: slots that at most one rank writes (a splitter it decides) are
/// replicated in one reduction. Collective over comm.
inline void all_reduce_bitwise_or(const boost::mpi::communicator& comm,
                                  std::span<const std::uint64_t> mine,
                                  std::span<std::uint64_t> all) {
  detail::all_reduce(comm, mine, all, MPI_BOR);
}

/// All-to-all of 64-bit words: the `scount[r]` words at `send` + `sdispl[r]` go to rank r, and
/// rank r's `rcount[r]` words land at `recv` + `rdispl[r]`. Collective over comm.
inline void all_to_all_words(const boost::mpi::communicator& comm,
                             std::span<const std::uint64_t> send, std::span<const int> scount,
                             std::span<const int> sdispl, std::span<std::uint64_t> recv,
                             std::span<const int> rcount, std::span<const int> rdispl) {
  BOOST_MPI_CHECK_RESULT(MPI_Alltoallv,
                         (send.data(), scount.data(), sdispl.data(), MPI_UINT64_T, recv.data(),
                          rcount.data(), rdispl.data(), MPI_UINT64_T, MPI_Comm(comm)));
}

/// Every rank's `mine` (trivially copyable values), concatenated in rank order; `counts[r]`
/// gets rank r's number of values. One all_gather of byte counts, one all_gatherv of bytes.
/// Collective over comm.
template <class T>
std::vector<T> all_gather_raw(const boost::mpi::communicator& comm, std::span<const T> mine,
                              std::vector<int>& counts) {
  static_assert(std::is_trivially_copyable_v<T>, "irregular::mpi::all_gather_raw: raw values");
  const int p = comm.size();
  const int my_bytes = detail::bytes_as_int(mine.size_bytes());
  std::vector<int> bytes(static_cast<std::size_t>(p)), displ(static_cast<std::size_t>(p) + 1, 0);
  BOOST_MPI_CHECK_RESULT(MPI_Allgather,
                         (&my_bytes, 1, MPI_INT, bytes.data(), 1, MPI_INT, MPI_Comm(comm)));
  for (std::size_t r = 0; r < bytes.size(); ++r) {
    if (static_cast<std::size_t>(displ[r]) + static_cast<std::size_t>(bytes[r]) > INT_MAX)
      throw std::length_error("irregular::mpi::all_gather_raw: over INT_MAX bytes in all");
    displ[r + 1] = displ[r] + bytes[r];
  }
  std::vector<T> all(static_cast<std::size_t>(displ.back()) / sizeof(T));
  BOOST_MPI_CHECK_RESULT(MPI_Allgatherv, (mine.data(), my_bytes, MPI_BYTE, all.data(), bytes.data(),
                                          displ.data(), MPI_BYTE, MPI_Comm(comm)));
  counts.resize(bytes.size());
  for (std::size_t r = 0; r < bytes.size(); ++r) counts[r] = bytes[r] / static_cast<int>(sizeof(T));
  return all;
}

namespace detail {
/// Byte counts and displacements of `counts` values of sizeof(T) bytes each.
template <class T>
void byte_layout(std::span<const int> counts, std::vector<int>& bytes, std::vector<int>& displ) {
  bytes.resize(counts.size());
  displ.assign(counts.size(), 0);
  std::size_t at = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displ[r] = bytes_as_int(at);
    bytes[r] = bytes_as_int(static_cast<std::size_t>(counts[r]) * sizeof(T));
    at += static_cast<std::size_t>(bytes[r]);
  }
  (void)bytes_as_int(at);
}
}  // namespace detail

/// Rank `root` receives every rank's `mine` (trivially copyable values) into `all`, in rank
/// order; `counts` (read at the root only) holds each rank's number of values. One MPI_Gatherv:
/// empty arrays are fine (Boost.MPI's gatherv reads a value of each buffer for its type, so an
/// empty one would be read past its end). Collective over comm.
template <class T>
void gatherv_raw(const boost::mpi::communicator& comm, std::span<const T> mine, std::span<T> all,
                 std::span<const int> counts, int root) {
  static_assert(std::is_trivially_copyable_v<T>, "irregular::mpi::gatherv_raw: raw values");
  std::vector<int> bytes, displ;
  if (comm.rank() == root) detail::byte_layout<T>(counts, bytes, displ);
  BOOST_MPI_CHECK_RESULT(
      MPI_Gatherv, (mine.data(), detail::bytes_as_int(mine.size_bytes()), MPI_BYTE, all.data(),
                    bytes.data(), displ.data(), MPI_BYTE, root, MPI_Comm(comm)));
}

/// gatherv_raw when the root does not know the counts: one gather of counts first. Returns
/// the values at the root (`counts` gets each rank's number), an empty vector elsewhere.
template <class T>
std::vector<T> gather_raw(const boost::mpi::communicator& comm, std::span<const T> mine, int root,
                          std::vector<int>& counts) {
  const int n = detail::bytes_as_int(mine.size());
  counts.assign(comm.rank() == root ? static_cast<std::size_t>(comm.size()) : 0, 0);
  BOOST_MPI_CHECK_RESULT(MPI_Gather,
                         (&n, 1, MPI_INT, counts.data(), 1, MPI_INT, root, MPI_Comm(comm)));
  std::size_t total = 0;
  for (int c : counts) total += static_cast<std::size_t>(c);
  std::vector<T> all(total);
  gatherv_raw(comm, mine, std::span<T>(all), std::span<const int>(counts), root);
  return all;
}

/// Every rank receives every rank's `mine` into `all`, in rank order, `counts[r]` values from
/// rank r (known everywhere). One MPI_Allgatherv; empty arrays are fine. Collective over comm.
template <class T>
void all_gatherv_raw(const boost::mpi::communicator& comm, std::span<const T> mine,
                     std::span<T> all, std::span<const int> counts) {
  static_assert(std::is_trivially_copyable_v<T>, "irregular::mpi::all_gatherv_raw: raw values");
  std::vector<int> bytes, displ;
  detail::byte_layout<T>(counts, bytes, displ);
  BOOST_MPI_CHECK_RESULT(
      MPI_Allgatherv, (mine.data(), detail::bytes_as_int(mine.size_bytes()), MPI_BYTE, all.data(),
                       bytes.data(), displ.data(), MPI_BYTE, MPI_Comm(comm)));
}

/// One trivially copyable value sent as its bytes: one message and no archive, where Boost.MPI
/// would serialize a struct (and every translation unit would instantiate the archive code).
template <class T>
void send_value(const boost::mpi::communicator& comm, int dest, int tag, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>, "irregular::mpi::send_value: raw values");
  BOOST_MPI_CHECK_RESULT(
      MPI_Send, (&value, static_cast<int>(sizeof(T)), MPI_BYTE, dest, tag, MPI_Comm(comm)));
}
/// Receives a value sent by send_value.
template <class T>
void recv_value(const boost::mpi::communicator& comm, int source, int tag, T& value) {
  static_assert(std::is_trivially_copyable_v<T>, "irregular::mpi::recv_value: raw values");
  BOOST_MPI_CHECK_RESULT(MPI_Recv, (&value, static_cast<int>(sizeof(T)), MPI_BYTE, source, tag,
                                    MPI_Comm(comm), MPI_STATUS_IGNORE));
}
/// Root's value on every rank, as its bytes. Collective over comm.
template <class T>
void broadcast_value(const boost::mpi::communicator& comm, T& value, int root) {
  static_assert(std::is_trivially_copyable_v<T>, "irregular::mpi::broadcast_value: raw values");
  BOOST_MPI_CHECK_RESULT(MPI_Bcast,
                         (&value, static_cast<int>(sizeof(T)), MPI_BYTE, root, MPI_Comm(comm)));
}

/// The number of ranks of comm that share this rank's node (shared memory). Collective over comm.
inline int node_rank_count(const boost::mpi::communicator& comm) {
  MPI_Comm node;
  BOOST_MPI_CHECK_RESULT(MPI_Comm_split_type,
                         (MPI_Comm(comm), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int ranks = 1;
  MPI_Comm_size(node, &ranks);
  MPI_Comm_free(&node);
  return ranks;
}

/// 64-bit words from `source` whose count the receiver does not know (probe, then receive).
inline std::vector<std::uint64_t> receive_words(const boost::mpi::communicator& comm, int source,
                                                int tag) {
  MPI_Status st;
  BOOST_MPI_CHECK_RESULT(MPI_Probe, (source, tag, MPI_Comm(comm), &st));
  int len = 0;
  BOOST_MPI_CHECK_RESULT(MPI_Get_count, (&st, MPI_UINT64_T, &len));
  std::vector<std::uint64_t> in(static_cast<std::size_t>(len));
  BOOST_MPI_CHECK_RESULT(
      MPI_Recv, (in.data(), len, MPI_UINT64_T, source, tag, MPI_Comm(comm), MPI_STATUS_IGNORE));
  return in;
}

/// Non-blocking transfers of raw bytes that complete together. Buffers must outlive wait_all();
/// a set destroyed with transfers pending completes them first (unless MPI is finalized), so MPI
/// never writes into freed memory. A copy is an empty set: pending transfers stay with the
/// original (an object that keeps a set between calls stays copyable).
class RequestSet {
 public:
  RequestSet() = default;
  /// An empty set: the pending transfers stay with the original.
  RequestSet(const RequestSet&) noexcept {}
  /// Keeps this set's own transfers: the pending ones stay with the original.
  RequestSet& operator=(const RequestSet&) noexcept { return *this; }
  /// Takes over `o`'s pending transfers.
  RequestSet(RequestSet&& o) noexcept
      : requests_(std::move(o.requests_)), pending_min_(o.pending_min_) {
    o.requests_.clear();
    o.pending_min_ = MPI_REQUEST_NULL;
  }
  ~RequestSet() { finish(); }
  /// Completes whatever is pending, ignoring errors (for destructors: an abandoned operation must
  /// not write into freed buffers), unless MPI is finalized.
  void finish() noexcept {
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (!requests_.empty())
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    requests_.clear();
    if (pending_min_ != MPI_REQUEST_NULL) MPI_Wait(&pending_min_, MPI_STATUS_IGNORE);
  }

  /// Room for `n` transfers.
  void reserve(std::size_t n) { requests_.reserve(n); }
  /// Number of transfers posted and not yet completed by wait_all().
  [[nodiscard]] std::size_t size() const noexcept { return requests_.size(); }
  /// Receives `bytes` bytes from `source` into `dst`.
  void receive(const boost::mpi::communicator& comm, void* dst, std::size_t bytes, int source,
               int tag) {
    requests_.push_back(MPI_REQUEST_NULL);
    BOOST_MPI_CHECK_RESULT(MPI_Irecv, (dst, detail::bytes_as_int(bytes), MPI_BYTE, source, tag,
                                       MPI_Comm(comm), &requests_.back()));
  }
  /// Sends `bytes` bytes of `src` to `dest`.
  void send(const boost::mpi::communicator& comm, const void* src, std::size_t bytes, int dest,
            int tag) {
    requests_.push_back(MPI_REQUEST_NULL);
    BOOST_MPI_CHECK_RESULT(MPI_Isend, (const_cast<void*>(src), detail::bytes_as_int(bytes),
                                       MPI_BYTE, dest, tag, MPI_Comm(comm), &requests_.back()));
  }
  /// Sends 64-bit words to `dest` (receive_words() takes them without knowing their count).
  void send_words(const boost::mpi::communicator& comm, std::span<const std::uint64_t> words,
                  int dest, int tag) {
    requests_.push_back(MPI_REQUEST_NULL);
    BOOST_MPI_CHECK_RESULT(
        MPI_Isend, (const_cast<std::uint64_t*>(words.data()), static_cast<int>(words.size()),
                    MPI_UINT64_T, dest, tag, MPI_Comm(comm), &requests_.back()));
  }
  /// Starts the minimum of `*value` over the ranks into `*result`, completed by wait_min().
  /// Collective over comm (every rank starts one).
  void start_min(const boost::mpi::communicator& comm, const int* value, int* result) {
    BOOST_MPI_CHECK_RESULT(MPI_Iallreduce,
                           (value, result, 1, MPI_INT, MPI_MIN, MPI_Comm(comm), &pending_min_));
  }
  /// Completes every transfer; the set is empty again.
  void wait_all() {
    BOOST_MPI_CHECK_RESULT(
        MPI_Waitall, (static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
    requests_.clear();
  }
  /// Completes the minimum started by start_min().
  void wait_min() { BOOST_MPI_CHECK_RESULT(MPI_Wait, (&pending_min_, MPI_STATUS_IGNORE)); }

 private:
  std::vector<MPI_Request> requests_;
  MPI_Request pending_min_ = MPI_REQUEST_NULL;
};

}  // namespace irregular::mpi
