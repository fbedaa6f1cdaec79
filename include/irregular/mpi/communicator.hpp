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
  OwnedCommunicator(OwnedCommunicator&&) noexcept = default;
  OwnedCommunicator& operator=(OwnedCommunicator&&) noexcept = default;
  ~OwnedCommunicator() = default;

  [[nodiscard]] const boost::mpi::communicator& get() const noexcept { return comm_; }
  operator const boost::mpi::communicator&() const noexcept { return comm_; }  // NOLINT: by design
  [[nodiscard]] int rank() const { return comm_.rank(); }
  [[nodiscard]] int size() const { return comm_.size(); }

 private:
  boost::mpi::communicator comm_;
};

}  // namespace irregular::mpi
