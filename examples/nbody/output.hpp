// Gathering bodies (for energies, digests, pictures and the direct sum) and writing them: an SVG
// projection onto the x-y plane coloured by rank, VTK XML point data (.vtu per rank, .pvtu), and
// with HDF5 (IRREGULAR_HAVE_VTKHDF) a VTKHDF time series of the domain.
#pragma once

#include "physics.hpp"

#include <irregular/core/error.hpp>
#include <irregular/io/svg.hpp>

#include <boost/mpi/communicator.hpp>
#include <mpi.h>

#include "../common/vtkhdf_option.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace nbody {

/// Every rank's `mine` on rank 0 (all of them, rank after rank; `from[k]` = the rank of out[k]),
/// or on every rank when `everywhere`. T is trivially copyable and travels as bytes.
template <class T>
std::vector<T> gather_raw(const boost::mpi::communicator& comm, std::span<const T> mine, bool everywhere,
                          std::vector<int>* from = nullptr) {
  static_assert(std::is_trivially_copyable_v<T>);
  const int p = comm.size();
  int bytes = static_cast<int>(mine.size() * sizeof(T));
  std::vector<int> counts(static_cast<std::size_t>(p)), displs(static_cast<std::size_t>(p));
  if (everywhere)
    MPI_Allgather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  else
    MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  std::size_t total = 0;
  for (int r = 0; r < p; ++r) {
    displs[static_cast<std::size_t>(r)] = static_cast<int>(total);
    total += static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]);
  }
  std::vector<T> all(everywhere || comm.rank() == 0 ? total / sizeof(T) : 0);
  if (everywhere)
    MPI_Allgatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, comm);
  else
    MPI_Gatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0, comm);
  if (from && (everywhere || comm.rank() == 0)) {
    from->clear();
    for (int r = 0; r < p; ++r)
      from->insert(from->end(), static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]) / sizeof(T), r);
  }
  return all;
}

/// A digest of the bits of every position and velocity, in id order (FNV-1a over 64-bit words,
/// each word mixed). `bodies` sorted by id.
template <int D>
std::uint64_t digest(std::span<const Body<D>> bodies) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](std::uint64_t w) {
    w ^= w >> 33;
    w *= 0xff51afd7ed558ccdull;
    w ^= w >> 33;
    h = (h ^ w) * 0x100000001b3ull;
  };
  for (const auto& b : bodies) {
    mix(b.id);
    for (int a = 0; a < D; ++a) {
      std::uint64_t x, v;
      std::memcpy(&x, &b.position[a], sizeof x);
      std::memcpy(&v, &b.velocity[a], sizeof v);
      mix(x);
      mix(v);
    }
  }
  return h;
}

/// Rank 0 draws the bodies (gathered with their ranks) projected onto x-y, coloured by rank. The
/// view is the square around the 1 %..99 % quantiles of x and of y (padded by 5 %): a few
/// escapers, or a Plummer sphere's long tail, would otherwise shrink the picture to a dot. Bodies
/// outside the view are not drawn; the caption gives the view.
template <int D>
void write_svg(const std::string& file, std::span<const Body<D>> bodies, std::span<const int> ranks, int parts,
               const std::string& title) {
  if (bodies.empty()) return;
  std::array<double, 2> mid{}, side{};
  for (int a = 0; a < 2; ++a) {
    std::vector<double> x;
    x.reserve(bodies.size());
    for (const auto& b : bodies) x.push_back(b.position[a]);
    std::sort(x.begin(), x.end());
    const auto n = static_cast<double>(x.size() - 1);
    const double lo = x[static_cast<std::size_t>(0.01 * n)], hi = x[static_cast<std::size_t>(0.99 * n)];
    mid[a] = 0.5 * (lo + hi);
    side[a] = hi - lo;
  }
  const double half = 0.5 * 1.05 * std::max(side[0], side[1]) + 1e-12;
  const double W = 720, caption = 24;
  std::ofstream f(file);
  if (!f) throw irregular::error("nbody: cannot write " + file);
  f << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << W + caption
    << "\" viewBox=\"0 0 " << W << ' ' << W + caption << "\">\n<rect width=\"" << W << "\" height=\"" << W << "\" fill=\"#111\"/>\n<rect y=\"" << W << "\" width=\""
    << W << "\" height=\"" << caption << "\" fill=\"white\"/>\n";
  const double radius = bodies.size() > 50000 ? 0.6 : bodies.size() > 5000 ? 0.9 : 1.6;
  // One group per rank: the colour once per group keeps the file small.
  for (int r = 0; r < parts; ++r) {
    f << "<g fill=\"" << irregular::io::part_colour(r, parts) << "\" fill-opacity=\"0.8\">\n";
    char buf[96];
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      if (ranks[i] != r) continue;
      const double x = bodies[i].position[0] - mid[0], y = bodies[i].position[1] - mid[1];
      if (std::abs(x) > half || std::abs(y) > half) continue;
      std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"/>\n", (x + half) / (2 * half) * W,
                    (half - y) / (2 * half) * W, radius);
      f << buf;
    }
    f << "</g>\n";
  }
  f << "<text x=\"6\" y=\"" << W + 17 << "\" font-family=\"sans-serif\" font-size=\"13\" fill=\"black\">"
    << irregular::io::xml_escape(title) << " (view x " << mid[0] - half << " .. " << mid[0] + half << ", y " << mid[1] - half << " .. "
    << mid[1] + half << ")</text>\n</svg>\n";
  if (!f) throw irregular::error("nbody: writing " + file + " failed");
}

/// This rank's bodies as `<dir>/<name>_<rank>.vtu` (VTK_VERTEX cells, point data mass, velocity,
/// acceleration, potential, id, interactions, rank) and, on rank 0, `<dir>/<name>.pvtu`. Collective.
template <int D>
void write_bodies_pvtu(const boost::mpi::communicator& comm, const std::string& dir, const std::string& name,
                       std::span<const Body<D>> bodies) {
  std::filesystem::create_directories(dir);
  const std::size_t n = bodies.size();
  auto vec3 = [&](auto get) {
    std::string s;
    for (const auto& b : bodies) {
      const auto& v = get(b);
      for (int a = 0; a < 3; ++a) {
        s += a < D ? std::to_string(v[a]) : std::string("0");
        s += a < 2 ? ' ' : '\n';
      }
    }
    return s;
  };
  std::string out =
      "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
      "header_type=\"UInt64\">\n<UnstructuredGrid>\n<Piece NumberOfPoints=\"" +
      std::to_string(n) + "\" NumberOfCells=\"" + std::to_string(n) +
      "\">\n<Points>\n<DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n";
  char buf[64];
  for (const auto& b : bodies) {
    for (int a = 0; a < 3; ++a) {
      std::snprintf(buf, sizeof buf, "%.17g%c", a < D ? b.position[a] : 0.0, a < 2 ? ' ' : '\n');
      out += buf;
    }
  }
  out += "</DataArray>\n</Points>\n<Cells>\n<DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n";
  for (std::size_t i = 0; i < n; ++i) out += std::to_string(i) + '\n';
  out += "</DataArray>\n<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n";
  for (std::size_t i = 0; i < n; ++i) out += std::to_string(i + 1) + '\n';
  out += "</DataArray>\n<DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n";
  for (std::size_t i = 0; i < n; ++i) out += "1\n";
  out += "</DataArray>\n</Cells>\n<PointData Scalars=\"mass\" Vectors=\"velocity\">\n";
  auto scalar = [&](const char* type, const char* field, auto get) {
    out += std::string("<DataArray type=\"") + type + "\" Name=\"" + field + "\" format=\"ascii\">\n";
    for (const auto& b : bodies) out += get(b) + '\n';
    out += "</DataArray>\n";
  };
  scalar("Float64", "mass", [](const Body<D>& b) { return std::to_string(b.mass); });
  scalar("Float64", "potential", [](const Body<D>& b) { return std::to_string(b.potential); });
  scalar("UInt64", "id", [](const Body<D>& b) { return std::to_string(b.id); });
  scalar("UInt64", "interactions", [](const Body<D>& b) { return std::to_string(b.interactions); });
  scalar("Int32", "rank", [&](const Body<D>&) { return std::to_string(comm.rank()); });
  out += "<DataArray type=\"Float64\" Name=\"velocity\" NumberOfComponents=\"3\" format=\"ascii\">\n" +
         vec3([](const Body<D>& b) -> const auto& { return b.velocity; }) + "</DataArray>\n";
  out += "<DataArray type=\"Float64\" Name=\"acceleration\" NumberOfComponents=\"3\" format=\"ascii\">\n" +
         vec3([](const Body<D>& b) -> const auto& { return b.acceleration; }) + "</DataArray>\n";
  out += "</PointData>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n";
  const std::string piece = name + "_" + std::to_string(comm.rank()) + ".vtu";
  {
    std::ofstream f(std::filesystem::path(dir) / piece);
    f << out;
    if (!f) throw irregular::error("nbody: writing " + dir + "/" + piece + " failed");
  }
  comm.barrier();
  if (comm.rank() != 0) return;
  std::ofstream f(std::filesystem::path(dir) / (name + ".pvtu"));
  f << "<?xml version=\"1.0\"?>\n<VTKFile type=\"PUnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
       "header_type=\"UInt64\">\n<PUnstructuredGrid GhostLevel=\"0\">\n"
       "<PPoints>\n<PDataArray type=\"Float64\" NumberOfComponents=\"3\"/>\n</PPoints>\n"
       "<PPointData Scalars=\"mass\" Vectors=\"velocity\">\n"
       "<PDataArray type=\"Float64\" Name=\"mass\"/>\n<PDataArray type=\"Float64\" Name=\"potential\"/>\n"
       "<PDataArray type=\"UInt64\" Name=\"id\"/>\n<PDataArray type=\"UInt64\" Name=\"interactions\"/>\n"
       "<PDataArray type=\"Int32\" Name=\"rank\"/>\n"
       "<PDataArray type=\"Float64\" Name=\"velocity\" NumberOfComponents=\"3\"/>\n"
       "<PDataArray type=\"Float64\" Name=\"acceleration\" NumberOfComponents=\"3\"/>\n"
       "</PPointData>\n";
  for (int r = 0; r < comm.size(); ++r) f << "<Piece Source=\"" << name << "_" << r << ".vtu\"/>\n";
  f << "</PUnstructuredGrid>\n</VTKFile>\n";
  if (!f) throw irregular::error("nbody: writing " + dir + "/" + name + ".pvtu failed");
}

/// The --vtkhdf series `<dir>/nbody.vtkhdf.series`: the domain's leaves and bodies, with each
/// body's mass, velocity, acceleration and potential, one step per call when a directory was
/// given (nothing otherwise).
template <class Domain, int D>
class BodySeries : public examples::OptionalSeries {
 public:
  explicit BodySeries(const std::string& dir) : OptionalSeries(dir, "nbody") {}
  /// Writes the domain at `time`. Collective.
  void write(const Domain& d, double time) {
    namespace io = irregular::io;
    OptionalSeries::write(d, time, [] {
      return std::vector<io::Field<Body<D>>>{
          io::scalar<Body<D>>("mass", [](const Body<D>& b) { return b.mass; }),
          io::vector<Body<D>>("velocity", [](const Body<D>& b) { return b.velocity; }),
          io::vector<Body<D>>("acceleration", [](const Body<D>& b) { return b.acceleration; }),
          io::scalar<Body<D>>("potential", [](const Body<D>& b) { return b.potential; })};
    });
  }
};

}  // namespace nbody
