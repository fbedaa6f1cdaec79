// File: one MPI-IO file shared by the ranks of a communicator — collective writes and reads at
// explicit byte offsets, sync and size — so that no room above mpi/ calls MPI-IO directly
// (doc/architecture.md). Checkpoints write and read through it.
#pragma once

#include <irregular/core/error.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/config.hpp>  // <mpi.h>, without its C++ bindings

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>

namespace irregular::mpi {

/// An open MPI file. Every call but the independent ones (`*_at`) is collective over the
/// communicator the file was opened on. Failures throw irregular::error naming the operation,
/// the path and MPI's reason; the file is closed by the destructor.
class File {
 public:
  /// How a file is opened.
  enum class Mode {
    create,  ///< a new file for writing (an existing one is truncated)
    read     ///< an existing file, for reading
  };

  /// Opens `path` on every rank of comm: `create` makes a new file (an existing one is
  /// truncated) for writing, `read` opens an existing one. Collective over comm.
  File(const boost::mpi::communicator& comm, const std::string& path, Mode mode)
      : comm_(comm), path_(path) {
    const int amode = mode == Mode::create ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    check(MPI_File_open(MPI_Comm(comm_), path_.c_str(), amode, MPI_INFO_NULL, &fh_), "open");
    if (mode == Mode::create) check(MPI_File_set_size(fh_, 0), "truncate");
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  /// Takes over o's open file; o holds none after.
  File(File&& o) noexcept : comm_(o.comm_), path_(std::move(o.path_)), fh_(o.fh_) {
    o.fh_ = MPI_FILE_NULL;
  }
  ~File() {
    if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
  }

  /// The path the file was opened at.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  /// Every rank writes its bytes at its own offset. Collective.
  void write_at_all(std::uint64_t offset, std::span<const std::byte> bytes) {
    chunked(offset, bytes.size(), [&](std::uint64_t at, std::size_t from, int n) {
      MPI_Status st;
      return MPI_File_write_at_all(fh_, static_cast<MPI_Offset>(at),
                                   n ? bytes.data() + from : nullptr, n, MPI_BYTE, &st);
    });
  }
  /// Every rank reads its bytes from its own offset. Collective. With Open MPI 4.1's OMPIO,
  /// ranges of different ranks must not overlap (open-mpi/ompi#10546): use read_at then.
  void read_at_all(std::uint64_t offset, std::span<std::byte> bytes) {
    chunked(offset, bytes.size(), [&](std::uint64_t at, std::size_t from, int n) {
      MPI_Status st;
      return MPI_File_read_at_all(fh_, static_cast<MPI_Offset>(at),
                                  n ? bytes.data() + from : nullptr, n, MPI_BYTE, &st);
    });
  }
  /// One rank writes (independent).
  void write_at(std::uint64_t offset, std::span<const std::byte> bytes) {
    for (std::size_t done = 0; done < bytes.size();) {
      const int n = static_cast<int>(std::min<std::size_t>(bytes.size() - done, chunk_bytes));
      MPI_Status st;
      check(MPI_File_write_at(fh_, static_cast<MPI_Offset>(offset + done), bytes.data() + done, n,
                              MPI_BYTE, &st),
            "write");
      done += static_cast<std::size_t>(n);
    }
  }
  /// One rank reads (independent).
  void read_at(std::uint64_t offset, std::span<std::byte> bytes) {
    for (std::size_t done = 0; done < bytes.size();) {
      const int n = static_cast<int>(std::min<std::size_t>(bytes.size() - done, chunk_bytes));
      MPI_Status st;
      check(MPI_File_read_at(fh_, static_cast<MPI_Offset>(offset + done), bytes.data() + done, n,
                             MPI_BYTE, &st),
            "read");
      done += static_cast<std::size_t>(n);
    }
  }
  /// The file's size in bytes (local).
  [[nodiscard]] std::uint64_t size() const {
    MPI_Offset s = 0;
    check(MPI_File_get_size(fh_, &s), "size");
    return static_cast<std::uint64_t>(s);
  }
  /// Writes every rank's data through to the storage device. Collective.
  void sync() { check(MPI_File_sync(fh_), "sync"); }
  /// Closes the file. Collective.
  void close() {
    if (fh_ != MPI_FILE_NULL) check(MPI_File_close(&fh_), "close");
  }

 private:
  // MPI counts are int: large transfers go in chunks, and collective ones in the same number
  // of rounds on every rank.
  static constexpr std::size_t chunk_bytes = std::size_t{1} << 30;

  template <class Op>
  void chunked(std::uint64_t offset, std::size_t bytes, Op&& op) {
    const std::uint64_t mine = (bytes + chunk_bytes - 1) / chunk_bytes;
    std::uint64_t rounds = 0;
    boost::mpi::all_reduce(comm_, mine, rounds, boost::mpi::maximum<std::uint64_t>());
    for (std::uint64_t r = 0; r < rounds; ++r) {
      const std::size_t from = std::min(bytes, static_cast<std::size_t>(r) * chunk_bytes);
      const int n = static_cast<int>(std::min(bytes - from, chunk_bytes));
      check(op(offset + from, from, n), "transfer");
    }
  }
  void check(int rc, const char* what) const {
    if (rc == MPI_SUCCESS) return;
    char reason[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, reason, &len);
    throw error("irregular::mpi::File: " + std::string(what) + " '" + path_ +
                "': " + std::string(reason, static_cast<std::size_t>(len)));
  }

  boost::mpi::communicator comm_;
  std::string path_;
  MPI_File fh_ = MPI_FILE_NULL;
};

/// MPI's "no hints" value for libraries that open files through MPI-IO themselves (HDF5's MPI-IO
/// driver in io/vtkhdf.hpp), so that the rooms above mpi/ name no MPI object.
inline auto no_file_hints() noexcept { return MPI_INFO_NULL; }

}  // namespace irregular::mpi
