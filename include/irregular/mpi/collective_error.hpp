// Collective error agreement: a failure on any rank makes every rank throw the same
// irregular::collective_error (DESIGN.md "Errors": reduce a flag before committing).
#pragma once

#include <irregular/core/error.hpp>

#include <boost/mpi/collectives/broadcast.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/config.hpp>  // <mpi.h>, without its C++ bindings
#include <boost/mpi/exception.hpp>
#include <boost/serialization/string.hpp>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace irregular::mpi {

namespace detail {
// One allreduce picks the lowest reported failing rank, and among the ranks that report it the
// lowest one holds the message to broadcast; both live in one int64 key = reported*p + own.
inline void agree_on(const boost::mpi::communicator& comm, int reported_rank,
                     const std::optional<std::string>& local_failure) {
  const std::int64_t p = comm.size();
  const std::int64_t none = p * p;  // larger than any real key
  const std::int64_t key =
      local_failure ? static_cast<std::int64_t>(reported_rank) * p + comm.rank() : none;
  std::int64_t min_key = none;
  BOOST_MPI_CHECK_RESULT(MPI_Allreduce, (&key, &min_key, 1, MPI_INT64_T, MPI_MIN, MPI_Comm(comm)));
  if (min_key == none) return;
  const int failing_rank = static_cast<int>(min_key / p);
  const int root = static_cast<int>(min_key % p);
  std::string message = comm.rank() == root ? *local_failure : std::string();
  boost::mpi::broadcast(comm, message, root);
  throw collective_error(message, failing_rank);
}
}  // namespace detail

/// Agrees on a local outcome: if local_failure holds a message on any rank, every rank throws
/// irregular::collective_error with the message and number of the lowest failing rank;
/// otherwise returns. One allreduce, plus a broadcast of the message only on failure.
/// Collective over comm.
inline void agree_on(const boost::mpi::communicator& comm,
                     const std::optional<std::string>& local_failure) {
  detail::agree_on(comm, comm.rank(), local_failure);
}

/// Runs f() on every rank. If it throws (an irregular::error or any std::exception) on any rank,
/// every rank throws irregular::collective_error carrying the lowest failing rank's message and
/// number; otherwise returns f's result. A collective_error thrown by f (a nested agreement)
/// keeps the failing rank it already names. Collective over comm.
template <class F>
auto agree(const boost::mpi::communicator& comm, F&& f) -> decltype(f()) {
  using Result = decltype(f());
  static_assert(!std::is_reference_v<Result>, "irregular::mpi::agree: f must return by value");
  std::optional<std::string> failure;
  int reported = comm.rank();
  // Holds the result without requiring it to be default-constructible.
  std::conditional_t<std::is_void_v<Result>, bool, std::optional<Result>> result{};
  try {
    if constexpr (std::is_void_v<Result>) {
      std::forward<F>(f)();
    } else {
      result.emplace(std::forward<F>(f)());
    }
  } catch (const collective_error& e) {
    failure = e.what();
    reported = e.failing_rank();
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "unknown exception (not derived from std::exception)";
  }
  detail::agree_on(comm, reported, failure);
  if constexpr (!std::is_void_v<Result>) return std::move(*result);
}

}  // namespace irregular::mpi
