// OwnedCommunicator: a long-lived object's private duplicate of a communicator.
// DESIGN.md "MPI hygiene": each long-lived object duplicates its communicator, so tags never clash.
#pragma once

#include <boost/mpi/communicator.hpp>

#include <utility>

namespace irregular::mpi {

/// Owns an MPI_Comm_dup of the communicator it is built from; freed when the last owner goes.
/// Move-only: a copy would silently share the duplicate (and its tag space) between two objects.
class OwnedCommunicator {
 public:
  /// Duplicates comm. Collective over comm.
  explicit OwnedCommunicator(const boost::mpi::communicator& comm)
      : comm_(comm, boost::mpi::comm_duplicate) {}

  OwnedCommunicator(const OwnedCommunicator&) = delete;
  OwnedCommunicator& operator=(const OwnedCommunicator&) = delete;
  /// Takes over the duplicate.
  OwnedCommunicator(OwnedCommunicator&&) noexcept = default;
  /// Takes over the duplicate, freeing the one held.
  OwnedCommunicator& operator=(OwnedCommunicator&&) noexcept = default;
  ~OwnedCommunicator() = default;

  /// The duplicate.
  [[nodiscard]] const boost::mpi::communicator& get() const noexcept { return comm_; }
  /// The duplicate, where a boost::mpi::communicator is expected.
  operator const boost::mpi::communicator&() const noexcept { return comm_; }  // NOLINT: by design
  /// This process's rank in it.
  [[nodiscard]] int rank() const { return comm_.rank(); }
  /// Number of ranks.
  [[nodiscard]] int size() const { return comm_.size(); }

 private:
  boost::mpi::communicator comm_;
};

}  // namespace irregular::mpi
