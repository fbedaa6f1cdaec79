// Counters of what the MPI layer moved: per-exchange message/byte statistics and migration totals.
// baiardi-collecting-remote-data (message merging) and baiardi-2001 §4 (migration cost) count
// these.
#pragma once

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/config.hpp>  // <mpi.h>, without its C++ bindings
#include <boost/mpi/exception.hpp>

#include <array>
#include <cstdint>

namespace irregular::mpi {

/// Messages and bytes one rank sent and received in sparse exchanges (self-delivery not counted;
/// a message is one merged message to one partner, however many MPI pieces it took).
struct ExchangeStats {
  std::uint64_t messages_sent = 0;      ///< merged messages sent
  std::uint64_t bytes_sent = 0;         ///< their bytes
  std::uint64_t messages_received = 0;  ///< merged messages received
  std::uint64_t bytes_received = 0;     ///< their bytes

  /// Adds another exchange's counts.
  ExchangeStats& operator+=(const ExchangeStats& o) noexcept {
    messages_sent += o.messages_sent;
    bytes_sent += o.bytes_sent;
    messages_received += o.messages_received;
    bytes_received += o.bytes_received;
    return *this;
  }
  friend ExchangeStats operator+(ExchangeStats a, const ExchangeStats& b) noexcept {
    return a += b;
  }
  friend bool operator==(const ExchangeStats&, const ExchangeStats&) = default;
};

/// What a migration moved from this rank: hnodes, elements, payload bytes and messages.
struct MigrationCounters {
  std::uint64_t hnodes = 0;    ///< leaves sent
  std::uint64_t elements = 0;  ///< elements sent
  std::uint64_t bytes = 0;     ///< payload bytes sent
  std::uint64_t messages = 0;  ///< messages sent

  /// Adds another migration's counts.
  MigrationCounters& operator+=(const MigrationCounters& o) noexcept {
    hnodes += o.hnodes;
    elements += o.elements;
    bytes += o.bytes;
    messages += o.messages;
    return *this;
  }
  friend MigrationCounters operator+(MigrationCounters a, const MigrationCounters& b) noexcept {
    return a += b;
  }
  friend bool operator==(const MigrationCounters&, const MigrationCounters&) = default;
};

namespace detail {
template <std::size_t N>
std::array<std::uint64_t, N> all_reduce_sum(const boost::mpi::communicator& comm,
                                            const std::array<std::uint64_t, N>& local) {
  std::array<std::uint64_t, N> global{};
  BOOST_MPI_CHECK_RESULT(MPI_Allreduce, (local.data(), global.data(), static_cast<int>(N),
                                         MPI_UINT64_T, MPI_SUM, MPI_Comm(comm)));
  return global;
}
}  // namespace detail

/// Sum of every rank's statistics, returned on every rank. Collective over comm.
inline ExchangeStats all_reduce_sum(const boost::mpi::communicator& comm, const ExchangeStats& s) {
  const auto g = detail::all_reduce_sum<4>(
      comm, {s.messages_sent, s.bytes_sent, s.messages_received, s.bytes_received});
  return {g[0], g[1], g[2], g[3]};
}

/// Sum of every rank's migration counters, returned on every rank. Collective over comm.
inline MigrationCounters all_reduce_sum(const boost::mpi::communicator& comm,
                                        const MigrationCounters& c) {
  const auto g = detail::all_reduce_sum<4>(comm, {c.hnodes, c.elements, c.bytes, c.messages});
  return {g[0], g[1], g[2], g[3]};
}

}  // namespace irregular::mpi
