// VTK XML output of distributed leaves: one UnstructuredGrid piece (.vtu) per rank and one
// parallel index (.pvtu) that ParaView opens as a whole (the pictures of baiardi-2001 §5's grids).
// ASCII data inline, so the files need nothing beyond the standard library to write or to read.
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/error.hpp>
#include <irregular/mpi/collective_error.hpp>

#include <boost/mpi/collectives/broadcast.hpp>
#include <boost/mpi/communicator.hpp>

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <span>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

namespace irregular::io {

/// One user array of cell data: `components` doubles per cell, cell after cell (written as a
/// VTK Float64 array; 3 components show as a vector in ParaView).
struct VtkField {
  std::string name;                ///< array name
  std::span<const double> values;  ///< components values per cell, cell after cell
  int components = 1;              ///< values per cell
};

namespace detail {

inline constexpr int vtk_quad = 9, vtk_hexahedron = 12;

inline std::string attribute_escape(const std::string& s) {
  std::string r;
  for (char ch : s) {
    if (ch == '&')
      r += "&amp;";
    else if (ch == '<')
      r += "&lt;";
    else if (ch == '>')
      r += "&gt;";
    else if (ch == '"')
      r += "&quot;";
    else
      r += ch;
  }
  return r;
}

// Locale-independent, shortest round-trip text of a number.
template <class T>
void put(std::string& out, T v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  // Pointer and length: g++ 12 at -O3 sees a false overlap in the iterator-pair append.
  out.append(buf, static_cast<std::size_t>(r.ptr - buf));
}

/// Throws irregular::invalid_argument for a field that does not fit `cells` cells, a reserved,
/// empty or repeated name. `where` prefixes the message (function and, if known, rank).
inline void check_fields(const std::vector<VtkField>& fields, std::size_t cells,
                         const std::string& where) {
  for (std::size_t k = 0; k < fields.size(); ++k) {
    const auto& f = fields[k];
    if (f.name.empty())
      throw invalid_argument(where + ": field " + std::to_string(k) + " has an empty name");
    if (f.name == "level" || f.name == "rank")
      throw invalid_argument(where + ": field name \"" + f.name +
                             "\" is reserved (written automatically)");
    for (std::size_t j = 0; j < k; ++j)
      if (fields[j].name == f.name)
        throw invalid_argument(where + ": field \"" + f.name + "\" appears twice");
    if (f.components < 1)
      throw invalid_argument(where + ": field \"" + f.name + "\" has " +
                             std::to_string(f.components) + " components (need at least 1)");
    const std::size_t need = cells * static_cast<std::size_t>(f.components);
    if (f.values.size() != need)
      throw invalid_argument(where + ": field \"" + f.name + "\" has " +
                             std::to_string(f.values.size()) + " values; " + std::to_string(cells) +
                             " cells x " + std::to_string(f.components) + " components need " +
                             std::to_string(need));
  }
}

/// Name and components of every field, the same text on every rank that agrees.
inline std::string signature(const std::vector<VtkField>& fields) {
  std::string s;
  for (const auto& f : fields)
    s += (s.empty() ? "" : ", ") + f.name + ":" + std::to_string(f.components);
  return "(" + s + ")";
}

template <int D>
std::string vtu_text(const Box<D>& box, int arity, std::span<const Cell<D>> cells,
                     const std::vector<VtkField>& fields, int rank, const std::string& where) {
  static_assert(D == 2 || D == 3,
                "irregular::io::write_vtu: VTK cells exist for 2D (quads) and 3D (hexahedra)");
  if (arity != 2 && arity != 3)
    throw invalid_argument(where + ": arity " + std::to_string(arity) + " (need 2 or 3)");
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto& c = cells[i];
    const bool level_ok = c.level >= 0 && c.level <= (arity == 2 ? 63 : 40);
    bool inside = level_ok;
    if (level_ok) {
      const coord_t n = ipow<coord_t>(static_cast<coord_t>(arity), c.level);
      for (int d = 0; d < D; ++d) inside = inside && c.anchor[static_cast<std::size_t>(d)] < n;
    }
    if (!inside)
      throw invalid_argument(where + ": cell " + std::to_string(i) + " (level " +
                             std::to_string(c.level) + ") lies outside the box");
  }
  check_fields(fields, cells.size(), where);

  constexpr int corners = D == 2 ? 4 : 8;
  const std::size_t n_cells = cells.size(), n_points = n_cells * corners;
  std::string out;
  out.reserve(200 + n_cells * (corners * 40 + 64));
  out +=
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
      "header_type=\"UInt64\">\n"
      "<UnstructuredGrid>\n<Piece NumberOfPoints=\"";
  put(out, n_points);
  out += "\" NumberOfCells=\"";
  put(out, n_cells);
  out += "\">\n<Points>\n<DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n";
  // Corners in VTK order: the quad counter-clockwise (x fastest, then y), the hexahedron as the
  // quad at z = lo followed by the same quad at z = hi.
  for (const auto& c : cells) {
    const coord_t n = ipow<coord_t>(static_cast<coord_t>(arity), c.level);
    const auto lo = box.lower(c, n), hi = box.upper(c, n);
    for (int k = 0; k < corners; ++k) {
      const int bx = (k ^ (k >> 1)) & 1, by = (k >> 1) & 1, bz = (k >> 2) & 1;
      put(out, bx ? hi[0] : lo[0]);
      out += ' ';
      put(out, by ? hi[1] : lo[1]);
      out += ' ';
      if constexpr (D == 3)
        put(out, bz ? hi[2] : lo[2]);
      else {
        (void)bz;
        out += '0';
      }
      out += '\n';
    }
  }
  out +=
      "</DataArray>\n</Points>\n<Cells>\n<DataArray type=\"Int64\" Name=\"connectivity\" "
      "format=\"ascii\">\n";
  for (std::size_t i = 0; i < n_cells; ++i) {
    for (int k = 0; k < corners; ++k) {
      put(out, i * corners + static_cast<std::size_t>(k));
      out += k + 1 < corners ? ' ' : '\n';
    }
  }
  out += "</DataArray>\n<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n";
  for (std::size_t i = 0; i < n_cells; ++i) {
    put(out, (i + 1) * corners);
    out += '\n';
  }
  out += "</DataArray>\n<DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n";
  for (std::size_t i = 0; i < n_cells; ++i) {
    put(out, D == 2 ? vtk_quad : vtk_hexahedron);
    out += '\n';
  }
  out +=
      "</DataArray>\n</Cells>\n<CellData Scalars=\"level\">\n"
      "<DataArray type=\"Int32\" Name=\"level\" format=\"ascii\">\n";
  for (const auto& c : cells) {
    put(out, c.level);
    out += '\n';
  }
  out += "</DataArray>\n<DataArray type=\"Int32\" Name=\"rank\" format=\"ascii\">\n";
  for (std::size_t i = 0; i < n_cells; ++i) {
    put(out, rank);
    out += '\n';
  }
  out += "</DataArray>\n";
  for (const auto& f : fields) {
    out += "<DataArray type=\"Float64\" Name=\"" + attribute_escape(f.name) +
           "\" NumberOfComponents=\"";
    put(out, f.components);
    out += "\" format=\"ascii\">\n";
    for (std::size_t i = 0; i < f.values.size(); ++i) {
      put(out, f.values[i]);
      out += (i + 1) % static_cast<std::size_t>(f.components) == 0 ? '\n' : ' ';
    }
    out += "</DataArray>\n";
  }
  out += "</CellData>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n";
  return out;
}

inline std::string pvtu_text(const std::string& name, int pieces,
                             const std::vector<VtkField>& fields) {
  std::string out =
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"PUnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
      "header_type=\"UInt64\">\n"
      "<PUnstructuredGrid GhostLevel=\"0\">\n"
      "<PPoints>\n<PDataArray type=\"Float64\" NumberOfComponents=\"3\"/>\n</PPoints>\n"
      "<PCellData Scalars=\"level\">\n"
      "<PDataArray type=\"Int32\" Name=\"level\"/>\n"
      "<PDataArray type=\"Int32\" Name=\"rank\"/>\n";
  for (const auto& f : fields)
    out += "<PDataArray type=\"Float64\" Name=\"" + attribute_escape(f.name) +
           "\" NumberOfComponents=\"" + std::to_string(f.components) + "\"/>\n";
  out += "</PCellData>\n";
  for (int r = 0; r < pieces; ++r)
    out +=
        "<Piece Source=\"" + attribute_escape(name + "_" + std::to_string(r) + ".vtu") + "\"/>\n";
  out += "</PUnstructuredGrid>\n</VTKFile>\n";
  return out;
}

inline void write_file(const std::filesystem::path& path, const std::string& text,
                       const std::string& where) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw error(where + ": cannot open " + path.string() + " for writing");
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  f.close();
  if (!f) throw error(where + ": writing " + path.string() + " failed");
}

}  // namespace detail

/// Writes one VTK XML UnstructuredGrid (.vtu, ASCII) of `cells` (leaves of a curve of arity 2
/// or 3, in any order) inside `box`: one VTK_QUAD (2D) or VTK_HEXAHEDRON (3D) per cell with its
/// own corner points, and cell data `level` (Int32), `rank` (Int32, every cell `rank`) and the
/// Float64 `fields`. Throws irregular::invalid_argument, writing nothing, for a field whose size
/// is not cells.size() × components, a reserved (`level`, `rank`), empty or repeated field name,
/// or a cell outside the box. Local.
template <int D>
void write_vtu(std::ostream& os, const Box<D>& box, int arity,
               std::type_identity_t<std::span<const Cell<D>>> cells,
               const std::vector<VtkField>& fields = {}, int rank = 0) {
  const std::string text =
      detail::vtu_text<D>(box, arity, cells, fields, rank, "irregular::io::write_vtu");
  os.write(text.data(), static_cast<std::streamsize>(text.size()));
}

/// Writes this rank's cells to `<directory>/<name>_<rank>.vtu` (as write_vtu, with `rank` the
/// rank in comm) and, on rank 0, `<directory>/<name>.pvtu`, the index that references every
/// piece by a relative path (open it in ParaView). Creates `directory` if missing. Every rank
/// passes the same field names and components, each with its own local values. Throws the same
/// irregular::collective_error on every rank when any rank fails: a field size that does not
/// match its cells (the message names the field and the rank), fields that differ from rank 0's,
/// a file that cannot be written; then no `<name>.pvtu` exists (pieces may). Collective over comm.
template <int D>
void write_pvtu(const boost::mpi::communicator& comm, const std::string& directory,
                const std::string& name, const Box<D>& box, int arity,
                std::type_identity_t<std::span<const Cell<D>>> cells,
                const std::vector<VtkField>& fields = {}) {
  const std::string where = "irregular::io::write_pvtu (rank " + std::to_string(comm.rank()) + ")";
  std::string expected = detail::signature(fields);
  boost::mpi::broadcast(comm, expected, 0);
  const std::filesystem::path dir(directory);
  mpi::agree(comm, [&] {
    if (name.empty() || name.find('/') != std::string::npos)
      throw invalid_argument(where + ": name \"" + name + "\" must be a plain file name");
    if (detail::signature(fields) != expected)
      throw invalid_argument(where + ": fields " + detail::signature(fields) +
                             " differ from rank 0's " + expected);
    // Bad input is rejected before the file system is touched.
    const std::string piece = detail::vtu_text<D>(box, arity, cells, fields, comm.rank(), where);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);  // racing ranks: fine if it exists afterwards
    if (!std::filesystem::is_directory(dir, ec))
      throw error(where + ": cannot create the directory " + directory);
    // An index left from an earlier write must not outlive a failure of this one.
    if (comm.rank() == 0) std::filesystem::remove(dir / (name + ".pvtu"), ec);
    detail::write_file(dir / (name + "_" + std::to_string(comm.rank()) + ".vtu"), piece, where);
  });
  // The index only once every piece exists.
  mpi::agree(comm, [&] {
    if (comm.rank() == 0)
      detail::write_file(dir / (name + ".pvtu"), detail::pvtu_text(name, comm.size(), fields),
                         where);
  });
}

}  // namespace irregular::io
