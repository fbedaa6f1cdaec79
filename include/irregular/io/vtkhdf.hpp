// One ParaView file per output step at any rank count: io::write_vtkhdf writes a domain's leaves
// (and an element domain's elements) as a VTKHDF UnstructuredGrid, every rank writing its own
// rows of each dataset through parallel HDF5. Rows follow the global curve order, so the datasets
// are the same at every rank count; needs the MPI build of HDF5 (the `hdf5` Meson option).
#pragma once

#include <irregular/cell_domain.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/element_traits.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/domain/checkpoint_order.hpp>
#include <irregular/domain.hpp>
#include <irregular/io/detail/vtkhdf_file.hpp>
#include <irregular/io/field.hpp>
#include <irregular/mpi/collective_error.hpp>

#include <boost/mpi/collectives/broadcast.hpp>
#include <boost/mpi/communicator.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <system_error>
#include <vector>

namespace irregular::io {

namespace detail {

// The tag of the placement's exchanges on the domain's communicator: the checkpoint's, since a
// write, like a save, puts the leaves into curve order and no other phase runs meanwhile.
inline constexpr int tag_vtkhdf = 16;

/// Where this rank's leaves and elements go among all ranks' in curve order: one prefix sum when
/// rank order is curve order, else each run of curve-consecutive leaves placed by key
/// (checkpoint_order.hpp). `elements[i]`: leaf i's element count (empty: no elements).
/// Collective over comm.
template <class C, class Leaves>
void place_rows(const boost::mpi::communicator& comm, const Leaves& leaves,
                std::span<const std::uint64_t> elements, VtkHdfPart& part) {
  using I = typename C::index_type;
  namespace ck = checkpoint;
  const auto runs = ck::curve_runs<I>(leaves);
  const std::size_t n = runs.start.size();
  std::vector<std::uint64_t> leaf_counts(n), element_counts(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    leaf_counts[k] = runs.first_leaf[k + 1] - runs.first_leaf[k];
    if (!elements.empty())
      for (std::size_t i = runs.first_leaf[k]; i < runs.first_leaf[k + 1]; ++i)
        element_counts[k] += elements[i];
  }
  const bool any = leaves.size() != 0;
  const bool in_rank_order =
      ck::rank_order_is_curve_order(comm, any, ck::key_words(any ? leaves.start(0) : I{}),
                                    ck::key_words(any ? leaves.start(leaves.size() - 1) : I{}));
  part.leaves = {};
  part.elements = {};
  if (in_rank_order) {
    std::uint64_t l = 0, e = 0;
    for (std::size_t k = 0; k < n; ++k) {
      l += leaf_counts[k];
      e += element_counts[k];
    }
    const std::array<std::uint64_t, 2> mine{l, e};
    std::array<std::uint64_t, 2> upto{}, total{};
    boost::mpi::scan(comm, mine.data(), 2, upto.data(), std::plus<std::uint64_t>());
    mpi::all_reduce_sum(comm, std::span<const std::uint64_t>(mine),
                        std::span<std::uint64_t>(total));
    part.leaves = {{upto[0] - l}, {l}, total[0]};
    part.elements = {{upto[1] - e}, {e}, total[1]};
    return;
  }
  std::vector<ck::KeyWords> keys(n);
  for (std::size_t k = 0; k < n; ++k) keys[k] = ck::key_words(runs.start[k]);
  const auto buckets = ck::run_buckets<I>(comm, runs.start, irregular::detail::index_end<C>());
  const auto places = ck::place_runs(comm, keys, leaf_counts, element_counts, buckets, tag_vtkhdf);
  part.leaves = {places.leaf, leaf_counts, places.leaves};
  part.elements = {places.byte, element_counts, places.bytes};
}

/// Each local leaf's corners (VTK order: the quad counter-clockwise, the hexahedron as the quad at
/// z = lo then at z = hi) and level.
template <class C, class Leaves, int D>
void leaf_geometry(const Leaves& leaves, const Box<D>& box, VtkHdfPart& part) {
  static_assert(D == 2 || D == 3, "irregular::io::write_vtkhdf: cells exist for 2D and 3D");
  part.corners = D == 2 ? 4 : 8;
  part.leaf_type = D == 2 ? vtk_quad : vtk_hexahedron;
  part.leaf_points.clear();
  part.leaf_points.reserve(leaves.size() * static_cast<std::size_t>(part.corners) * 3);
  part.level.resize(leaves.size());
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const auto cell = leaves.cell(i);
    const coord_t n = ipow<coord_t>(static_cast<coord_t>(C::arity), cell.level);
    const auto lo = box.lower(cell, n), hi = box.upper(cell, n);
    for (int k = 0; k < part.corners; ++k) {
      const int bx = (k ^ (k >> 1)) & 1, by = (k >> 1) & 1, bz = (k >> 2) & 1;
      part.leaf_points.push_back(bx ? hi[0] : lo[0]);
      part.leaf_points.push_back(by ? hi[1] : lo[1]);
      if constexpr (D == 3)
        part.leaf_points.push_back(bz ? hi[2] : lo[2]);
      else
        part.leaf_points.push_back(0.0 * bz);  // 2D: z = 0
    }
    part.level[i] = cell.level;
  }
}

/// Applies `fields` to `items`: one array each, on the leaves or the elements. Throws
/// irregular::invalid_argument for an unusable field, and whatever a field's function throws.
template <class T>
void evaluate(std::span<const T> items, const std::vector<Field<T>>& fields, bool on_leaves,
              const std::string& where, std::vector<VtkHdfArray>& out) {
  for (const auto& f : fields) {
    check_field_shape(f, where);
    VtkHdfArray a{f.name, f.components, on_leaves, {}};
    a.values.resize(items.size() * static_cast<std::size_t>(f.components));
    for (std::size_t i = 0; i < items.size(); ++i)
      f.value(items[i],
              std::span<double>(a.values).subspan(i * static_cast<std::size_t>(f.components),
                                                  static_cast<std::size_t>(f.components)));
    out.push_back(std::move(a));
  }
}

/// The names of the user's `arrays` (from `first` on; those before are the domain's own) checked,
/// and the same on every rank as on rank 0; the path checked on rank 0: a plain file whose
/// directory exists. Every rank takes part in the broadcast before anything can throw.
inline void check_names(const boost::mpi::communicator& comm, const std::string& path,
                        const std::vector<VtkHdfArray>& arrays, std::size_t first,
                        const std::string& where) {
  std::string signature;
  for (std::size_t k = first; k < arrays.size(); ++k)
    signature += arrays[k].name + ":" + std::to_string(arrays[k].components) +
                 (arrays[k].on_leaves ? "L" : "E") + ";";
  std::string expected = signature;
  boost::mpi::broadcast(comm, expected, 0);
  for (std::size_t k = first; k < arrays.size(); ++k) {
    const auto& name = arrays[k].name;
    bool reserved = name == "level" || name == "rank" || name == "kind";
    for (std::size_t j = 0; j < first; ++j) reserved = reserved || arrays[j].name == name;
    if (reserved)
      throw invalid_argument(where + ": field name \"" + name +
                             "\" is reserved (written automatically)");
    for (std::size_t j = first; j < k; ++j)
      if (arrays[j].name == name)
        throw invalid_argument(where + ": field \"" + name + "\" appears twice");
  }
  if (signature != expected)
    throw invalid_argument(where + ": fields (" + signature + ") differ from rank 0's (" +
                           expected + ")");
  if (comm.rank() != 0) return;
  const std::filesystem::path p(path);
  std::error_code ec;
  if (path.empty() || !p.has_filename())
    throw invalid_argument(where + ": \"" + path + "\" is not a file name");
  const auto dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(dir, ec))
    throw error(where + ": the directory " + dir.string() + " does not exist");
  if (std::filesystem::is_directory(p, ec)) throw error(where + ": " + path + " is a directory");
}

template <class Domain>
std::string where_of(const Domain& domain) {
  return "irregular::io::write_vtkhdf (rank " + std::to_string(domain.comm().rank()) + ")";
}

}  // namespace detail

/// Writes the leaves of a cell-data domain to `path`, one VTKHDF file (open it in ParaView, or
/// list it in a VtkHdfSeries): a quad (2D) or hexahedron (3D) per leaf, in global curve order,
/// with cell data `level`, `rank` and one array per field (field.value applied to every local
/// datum). The file is written under `path` + ".part" and renamed when complete. Throws the same
/// irregular::collective_error on every rank when any rank fails: a field without a function or
/// with components outside 1..9, a reserved (level, rank, kind) or repeated name, fields that
/// differ from rank 0's, a missing directory, a field's function that throws, an HDF5 failure;
/// then no file under `path` comes from this call and the domain is unchanged. Collective.
template <class Data, class S, class C, class M, class P>
void write_vtkhdf(const CellDomain<Data, S, C, M, P>& domain, const std::string& path,
                  const std::vector<Field<Data>>& fields = {}) {
  const auto& comm = domain.comm();
  const std::string where = detail::where_of(domain);
  detail::VtkHdfPart part;
  mpi::agree(
      comm, [&] { detail::evaluate<Data>(domain.local_data(), fields, true, where, part.arrays); });
  mpi::agree(comm, [&] { detail::check_names(comm, path, part.arrays, 0, where); });
  detail::place_rows<C>(comm, domain.local_tree(), {}, part);
  detail::leaf_geometry<C>(domain.local_tree(), domain.box(), part);
  detail::write_vtkhdf_part(comm, path, part, where);
}

/// Writes an element domain to `path`, one VTKHDF file: its leaves as quads or hexahedra (rows
/// 0 .. L-1, in global curve order) followed by its elements as vertex cells at their positions
/// (rows L .., leaf after leaf in that order, each leaf's by curve key; elements of equal key in
/// an order that may vary with the rank count). Cell data: `kind` (0 leaf, 1 element), `level`
/// (an element's: its leaf's), `rank`, `elements` (a leaf's element count; NaN on elements) and
/// one array per field of the elements (NaN on leaves). In ParaView, Threshold on `kind`
/// separates the two. Errors as for the cell-data domain. Collective.
template <class E, class S, class C, class M, class P>
void write_vtkhdf(const IrregularDomain<E, S, C, M, P>& domain, const std::string& path,
                  const std::vector<Field<E>>& fields = {}) {
  const auto& comm = domain.comm();
  const std::string where = detail::where_of(domain);
  const auto& leaves = domain.local_tree();
  const auto counts = leaves.counts();
  const auto elements = domain.local_elements();
  detail::VtkHdfPart part;
  part.with_elements = true;
  mpi::agree(comm, [&] {
    std::uint64_t sum = 0;
    for (const auto c : counts) sum += c;
    if (sum != elements.size())
      throw invalid_argument(where +
                             ": elements inserted since the last build() are not "
                             "placed yet: call build() first");
    part.arrays.push_back({"elements", 1, true, std::vector<double>(counts.begin(), counts.end())});
    detail::evaluate<E>(elements, fields, false, where, part.arrays);
  });
  mpi::agree(comm, [&] { detail::check_names(comm, path, part.arrays, 1, where); });
  detail::place_rows<C>(comm, leaves, counts, part);
  detail::leaf_geometry<C>(leaves, domain.box(), part);
  part.element_points.reserve(elements.size() * 3);
  part.element_level.reserve(elements.size());
  for (std::size_t i = 0, at = 0; i < leaves.size(); ++i)
    for (std::uint64_t k = 0; k < counts[i]; ++k, ++at) {
      const auto x = element_traits<E>::position(elements[at]);
      for (int d = 0; d < 3; ++d)
        part.element_points.push_back(
            d < static_cast<int>(x.size()) ? x[static_cast<std::size_t>(d)] : 0.0);
      part.element_level.push_back(part.level[i]);
    }
  detail::write_vtkhdf_part(comm, path, part, where);
}

}  // namespace irregular::io
