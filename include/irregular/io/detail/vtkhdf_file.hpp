// The byte-level half of io::write_vtkhdf, free of the element and curve types: this rank's
// cells and arrays, already placed in the file's row order, written by every rank into one
// VTKHDF (version 1) UnstructuredGrid through parallel HDF5 (MPI-IO), under a temporary name
// renamed into place once every rank's slabs are in.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/io/vtk.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/file.hpp>

#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <hdf5.h>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#ifndef H5_HAVE_PARALLEL
#error "irregular/io/vtkhdf.hpp needs the MPI build of HDF5 (Debian: libhdf5-openmpi-dev)"
#endif

namespace irregular::io::detail {

inline constexpr int vtk_vertex = 1;

/// Rows of one section (the leaves, or the elements) that this rank holds: runs of consecutive
/// rows, ascending, in local order.
struct VtkHdfRows {
  std::vector<std::uint64_t> first;  ///< each run's first row in the section
  std::vector<std::uint64_t> count;  ///< rows in each run
  std::uint64_t total = 0;           ///< rows of all ranks
};

/// One cell-data array of this rank: `components` doubles per local leaf (on_leaves) or per
/// local element; the other section's rows hold NaN.
struct VtkHdfArray {
  std::string name;
  int components = 1;
  bool on_leaves = true;
  std::vector<double> values;
};

/// What one rank writes. Cells are the leaves (quads or hexahedra, each with its own corner
/// points) followed by the elements (vertex cells), in that order in every dataset.
struct VtkHdfPart {
  int corners = 4;                                 ///< points per leaf cell: 4 (2D) or 8 (3D)
  int leaf_type = 9;                               ///< VTK_QUAD or VTK_HEXAHEDRON
  VtkHdfRows leaves, elements;                     ///< where this rank's rows go
  std::vector<double> leaf_points;                 ///< corners × 3 per local leaf
  std::vector<double> element_points;              ///< 3 per local element
  std::vector<std::int32_t> level, element_level;  ///< per local leaf / element
  std::vector<VtkHdfArray> arrays;                 ///< the user's arrays and the domain's
  bool with_elements = false;  ///< whether the file has an element section (`kind`)
};

/// A test seam: called on every rank after each step of the write that changed a file (its name:
/// create, sizes, points, topology, cell data, close), inside that step's agreement, so that a
/// test can fail one rank there. Empty by default.
inline std::function<void(std::string_view)>& vtkhdf_fault_hook() {
  static std::function<void(std::string_view)> hook;
  return hook;
}

/// HDF5's automatic error printing off for the lifetime of the guard (library code never prints),
/// the caller's handler back afterwards.
class Hdf5Quiet {
 public:
  Hdf5Quiet() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~Hdf5Quiet() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  Hdf5Quiet(const Hdf5Quiet&) = delete;
  Hdf5Quiet& operator=(const Hdf5Quiet&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

/// An HDF5 identifier closed by its own function when the owner goes.
class Hdf5Id {
 public:
  Hdf5Id() = default;
  Hdf5Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Hdf5Id(Hdf5Id&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Hdf5Id& operator=(Hdf5Id&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(close_, o.close_);
    return *this;
  }
  Hdf5Id(const Hdf5Id&) = delete;
  Hdf5Id& operator=(const Hdf5Id&) = delete;
  ~Hdf5Id() { reset(); }
  /// Closes now; false when HDF5 reports a failure (a file's close flushes its data).
  bool reset() {
    const bool ok = id_ < 0 || close_(id_) >= 0;
    id_ = -1;
    return ok;
  }
  [[nodiscard]] hid_t get() const noexcept { return id_; }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

/// One contiguous piece of a dataset's rows that this rank writes.
struct VtkHdfSlab {
  std::uint64_t first = 0, count = 0;
};

/// This rank's rows of a dataset that has `leaf_rows` rows per leaf and `element_rows` per
/// element (0 when the dataset has no element section), after `head` leading rows.
inline std::vector<VtkHdfSlab> vtkhdf_slabs(const VtkHdfPart& part, std::uint64_t head,
                                            std::uint64_t leaf_rows, std::uint64_t element_rows) {
  std::vector<VtkHdfSlab> s;
  for (std::size_t k = 0; k < part.leaves.first.size(); ++k)
    if (part.leaves.count[k] != 0)
      s.push_back({head + part.leaves.first[k] * leaf_rows, part.leaves.count[k] * leaf_rows});
  if (element_rows != 0) {
    const std::uint64_t base = head + part.leaves.total * leaf_rows;
    for (std::size_t k = 0; k < part.elements.first.size(); ++k)
      if (part.elements.count[k] != 0)
        s.push_back(
            {base + part.elements.first[k] * element_rows, part.elements.count[k] * element_rows});
  }
  return s;
}

/// One file's write, step by step (create, sizes, points, topology, cell data, close, rename),
/// each step ending in one agreement so that every rank holds the same handles when any fails.
class VtkHdfWriter {
 public:
  VtkHdfWriter(const boost::mpi::communicator& comm, const std::string& path,
               const VtkHdfPart& part, const std::string& where)
      : comm_(comm), path_(path), tmp_(path + ".part"), part_(part), where_(where) {}

  /// Writes the whole file. Throws the same irregular::collective_error on every rank when any
  /// rank fails (an HDF5 call, the fault hook); then no file exists under `path` from this call
  /// and the temporary file is gone. Collective over comm.
  void run() {
    const Hdf5Quiet quiet;
    try {
      step("create", [&] { create(); });
      step("sizes", [&] { sizes(); });
      step("points", [&] { points(); });
      step("topology", [&] { topology(); });
      step("cell data", [&] { cell_data(); });
      step("close", [&] {
        cell_group_.reset();
        group_.reset();
        check(file_.reset(), "close the file");
      });
      step(nullptr, [&] { rename(); });  // the only step after which nothing is left to undo
    } catch (...) {
      cell_group_.reset();
      group_.reset();
      file_.reset();  // collective close, so that rank 0 removes a closed file
      if (comm_.rank() == 0) {
        std::error_code ec;
        std::filesystem::remove(tmp_, ec);
      }
      throw;
    }
  }

 private:
  template <class F>
  void step(const char* name, F&& f) {
    mpi::agree(comm_, [&] {
      f();
      if (const auto& hook = vtkhdf_fault_hook(); hook && name) hook(name);
    });
  }
  void check(bool ok, const std::string& what) const {
    if (!ok) throw error(where_ + ": HDF5 failed to " + what + " (" + tmp_ + ")");
  }
  [[nodiscard]] std::uint64_t corners() const noexcept {
    return static_cast<std::uint64_t>(part_.corners);
  }
  [[nodiscard]] std::uint64_t cells() const noexcept {
    return part_.leaves.total + part_.elements.total;
  }
  [[nodiscard]] std::uint64_t points_total() const noexcept {
    return part_.leaves.total * corners() + part_.elements.total;
  }
  [[nodiscard]] std::uint64_t per_element() const noexcept { return part_.with_elements ? 1 : 0; }

  // One dataset: `cols` columns of `type`, rows from `slabs`, this rank's values in `data` (row
  // after row, in slab order). Creation and the write are collective; ranks without rows select
  // nothing and still take part.
  void dataset(hid_t where_id, const char* name, hid_t type, hid_t mem_type, std::uint64_t rows,
               std::uint64_t cols, const std::vector<VtkHdfSlab>& slabs, const void* data) {
    const int rank = cols > 1 ? 2 : 1;
    const std::array<hsize_t, 2> dims{rows, cols};
    Hdf5Id space(H5Screate_simple(rank, dims.data(), nullptr), H5Sclose);
    check(space.get() >= 0, std::string("describe dataset ") + name);
    Hdf5Id set(H5Dcreate2(where_id, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
               H5Dclose);
    check(set.get() >= 0, std::string("create dataset ") + name);
    std::uint64_t mine = 0;
    H5Sselect_none(space.get());
    for (const auto& s : slabs) {
      const std::array<hsize_t, 2> start{s.first, 0}, count{s.count, cols};
      check(H5Sselect_hyperslab(space.get(), H5S_SELECT_OR, start.data(), nullptr, count.data(),
                                nullptr) >= 0,
            std::string("select rows of ") + name);
      mine += s.count;
    }
    const std::array<hsize_t, 1> mem_dims{mine * cols == 0 ? 1 : mine * cols};
    Hdf5Id mem(H5Screate_simple(1, mem_dims.data(), nullptr), H5Sclose);
    check(mem.get() >= 0, std::string("describe memory of ") + name);
    if (mine == 0) H5Sselect_none(mem.get());
    Hdf5Id xfer(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
    check(xfer.get() >= 0 && H5Pset_dxpl_mpio(xfer.get(), H5FD_MPIO_COLLECTIVE) >= 0,
          "set up a collective transfer");
    static const double none = 0;
    check(H5Dwrite(set.get(), mem_type, mem.get(), space.get(), xfer.get(),
                   mine == 0 ? &none : data) >= 0,
          std::string("write dataset ") + name);
  }

  // The file, the group VTKHDF with its attributes Version = {1, 0} and Type = "UnstructuredGrid"
  // (a fixed-length ASCII string), and the group CellData.
  void create() {
    Hdf5Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    check(fapl.get() >= 0 && H5Pset_fapl_mpio(fapl.get(), comm_, mpi::no_file_hints()) >= 0,
          "set up MPI-IO");
    file_ = Hdf5Id(H5Fcreate(tmp_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
    check(file_.get() >= 0, "create the file");
    group_ =
        Hdf5Id(H5Gcreate2(file_.get(), "VTKHDF", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    check(group_.get() >= 0, "create the group VTKHDF");
    const std::array<int, 2> version{1, 0};
    const std::array<hsize_t, 1> two{2};
    Hdf5Id vspace(H5Screate_simple(1, two.data(), nullptr), H5Sclose);
    Hdf5Id vattr(
        H5Acreate2(group_.get(), "Version", H5T_STD_I32LE, vspace.get(), H5P_DEFAULT, H5P_DEFAULT),
        H5Aclose);
    check(vattr.get() >= 0 && H5Awrite(vattr.get(), H5T_NATIVE_INT, version.data()) >= 0,
          "write the attribute Version");
    const std::string_view type = "UnstructuredGrid";
    Hdf5Id stype(H5Tcopy(H5T_C_S1), H5Tclose);
    check(stype.get() >= 0 && H5Tset_size(stype.get(), type.size()) >= 0 &&
              H5Tset_strpad(stype.get(), H5T_STR_NULLPAD) >= 0,
          "describe the attribute Type");
    Hdf5Id sspace(H5Screate(H5S_SCALAR), H5Sclose);
    Hdf5Id tattr(
        H5Acreate2(group_.get(), "Type", stype.get(), sspace.get(), H5P_DEFAULT, H5P_DEFAULT),
        H5Aclose);
    check(tattr.get() >= 0 && H5Awrite(tattr.get(), stype.get(), type.data()) >= 0,
          "write the attribute Type");
    cell_group_ = Hdf5Id(
        H5Gcreate2(group_.get(), "CellData", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    check(cell_group_.get() >= 0, "create the group CellData");
  }

  // One partition holding every cell, so that the datasets are the same at any rank count.
  void sizes() {
    const std::array<std::int64_t, 3> n{static_cast<std::int64_t>(points_total()),
                                        static_cast<std::int64_t>(cells()),
                                        static_cast<std::int64_t>(points_total())};
    const std::vector<VtkHdfSlab> one =
        comm_.rank() == 0 ? std::vector<VtkHdfSlab>{{0, 1}} : std::vector<VtkHdfSlab>{};
    dataset(group_.get(), "NumberOfPoints", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, 1, one, &n[0]);
    dataset(group_.get(), "NumberOfCells", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, 1, one, &n[1]);
    dataset(group_.get(), "NumberOfConnectivityIds", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, 1, one,
            &n[2]);
  }

  void points() {
    // The leaves' corners as they are when there are no elements (most of the file's bytes).
    std::vector<double> xyz;
    if (!part_.element_points.empty()) {
      xyz.reserve(part_.leaf_points.size() + part_.element_points.size());
      xyz = part_.leaf_points;
      xyz.insert(xyz.end(), part_.element_points.begin(), part_.element_points.end());
    }
    dataset(group_.get(), "Points", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, points_total(), 3,
            vtkhdf_slabs(part_, 0, corners(), per_element()),
            xyz.empty() ? part_.leaf_points.data() : xyz.data());
  }

  void topology() {
    const std::uint64_t c = corners(), L = part_.leaves.total;
    // Connectivity: each cell's own points, so point ids follow the cell's row.
    std::vector<std::int64_t> ids;
    ids.reserve(part_.leaf_points.size() / 3 + part_.element_points.size() / 3);
    for (std::size_t k = 0; k < part_.leaves.first.size(); ++k)
      for (std::uint64_t i = part_.leaves.first[k] * c;
           i < (part_.leaves.first[k] + part_.leaves.count[k]) * c; ++i)
        ids.push_back(static_cast<std::int64_t>(i));
    for (std::size_t k = 0; k < part_.elements.first.size(); ++k)
      for (std::uint64_t i = part_.elements.first[k];
           i < part_.elements.first[k] + part_.elements.count[k]; ++i)
        ids.push_back(static_cast<std::int64_t>(L * c + i));
    dataset(group_.get(), "Connectivity", H5T_STD_I64LE, H5T_NATIVE_INT64, points_total(), 1,
            vtkhdf_slabs(part_, 0, c, per_element()), ids.data());
    // Offsets: cells + 1 rows; row 0 (rank 0 writes it) is 0, row g + 1 ends cell g.
    std::vector<std::int64_t> offsets;
    std::vector<VtkHdfSlab> rows = vtkhdf_slabs(part_, 1, 1, per_element());
    if (comm_.rank() == 0) {
      offsets.push_back(0);
      rows.insert(rows.begin(), VtkHdfSlab{0, 1});
    }
    for (std::size_t k = 0; k < part_.leaves.first.size(); ++k)
      for (std::uint64_t g = part_.leaves.first[k];
           g < part_.leaves.first[k] + part_.leaves.count[k]; ++g)
        offsets.push_back(static_cast<std::int64_t>((g + 1) * c));
    for (std::size_t k = 0; k < part_.elements.first.size(); ++k)
      for (std::uint64_t e = part_.elements.first[k];
           e < part_.elements.first[k] + part_.elements.count[k]; ++e)
        offsets.push_back(static_cast<std::int64_t>(L * c + e + 1));
    // Adjacent slabs (row 0 and the first leaf run) stay separate selections: HDF5 merges them.
    dataset(group_.get(), "Offsets", H5T_STD_I64LE, H5T_NATIVE_INT64, cells() + 1, 1, rows,
            offsets.data());
    std::vector<std::uint8_t> types(part_.level.size(), static_cast<std::uint8_t>(part_.leaf_type));
    types.resize(part_.level.size() + part_.element_level.size(), vtk_vertex);
    dataset(group_.get(), "Types", H5T_STD_U8LE, H5T_NATIVE_UINT8, cells(), 1,
            vtkhdf_slabs(part_, 0, 1, per_element()), types.data());
  }

  void cell_data() {
    const auto rows = vtkhdf_slabs(part_, 0, 1, per_element());
    std::vector<std::int32_t> ints(part_.level);
    ints.insert(ints.end(), part_.element_level.begin(), part_.element_level.end());
    dataset(cell_group_.get(), "level", H5T_STD_I32LE, H5T_NATIVE_INT32, cells(), 1, rows,
            ints.data());
    std::fill(ints.begin(), ints.end(), comm_.rank());
    dataset(cell_group_.get(), "rank", H5T_STD_I32LE, H5T_NATIVE_INT32, cells(), 1, rows,
            ints.data());
    if (part_.with_elements) {
      const auto leaves = static_cast<std::ptrdiff_t>(part_.level.size());
      std::fill(ints.begin(), ints.begin() + leaves, 0);
      std::fill(ints.begin() + leaves, ints.end(), 1);
      dataset(cell_group_.get(), "kind", H5T_STD_I32LE, H5T_NATIVE_INT32, cells(), 1, rows,
              ints.data());
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> values;
    for (const auto& a : part_.arrays) {
      const auto comps = static_cast<std::size_t>(a.components);
      values.assign(part_.level.size() * comps, nan);
      if (a.on_leaves) std::copy(a.values.begin(), a.values.end(), values.begin());
      if (part_.with_elements) {
        if (a.on_leaves)
          values.resize(values.size() + part_.element_level.size() * comps, nan);
        else
          values.insert(values.end(), a.values.begin(), a.values.end());
      }
      dataset(cell_group_.get(), a.name.c_str(), H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, cells(), comps,
              rows, values.data());
    }
  }

  void rename() {
    if (comm_.rank() != 0) return;
    std::error_code ec;
    std::filesystem::rename(tmp_, path_, ec);
    if (ec) throw error(where_ + ": cannot rename " + tmp_ + " to " + path_ + ": " + ec.message());
  }

  const boost::mpi::communicator& comm_;
  const std::string& path_;
  std::string tmp_;
  const VtkHdfPart& part_;
  const std::string& where_;
  Hdf5Id file_, group_, cell_group_;
};

/// Writes `part` to `path` (VtkHdfWriter::run). Collective over comm.
inline void write_vtkhdf_part(const boost::mpi::communicator& comm, const std::string& path,
                              const VtkHdfPart& part, const std::string& where) {
  VtkHdfWriter(comm, path, part, where).run();
}

}  // namespace irregular::io::detail
