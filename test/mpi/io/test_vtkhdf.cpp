// VTKHDF output (io::write_vtkhdf, io::VtkHdfSeries): the file a run writes at p ranks holds the
// same datasets as one rank's file of the same problem (under a map without the range property
// too), its geometry and fields match brute-force oracles (leaf areas tile the box, element
// points are the inserted positions), and every failure on one rank (bad input, a throwing field,
// HDF5 failing after any step) is the same error on every rank with the earlier file, the series
// index and the domain unchanged.
// With IRREGULAR_VTKHDF_OUT=<dir>, the [files] case keeps its files there, with expected.txt (the
// counts, bounds and field sums) for test/io/read_vtkhdf.py (VTK's own reader).
#include <irregular/cell_domain.hpp>
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/domain.hpp>
#include <irregular/io/vtkhdf.hpp>
#include <irregular/io/vtkhdf_series.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include "output_dir.hpp"
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <hdf5.h>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;
namespace fs = std::filesystem;

namespace {

using test_support::failures;
using test_support::root_says;
// The files go to IRREGULAR_VTKHDF_OUT (kept) or to a temporary directory.
struct OutputDir : test_support::OutputDir {
  OutputDir() : test_support::OutputDir("IRREGULAR_VTKHDF_OUT", "irregular_vtkhdf_") {}
};

// ---- reading a file back (serial HDF5, any rank) ------------------------------------------------
struct Dataset {
  std::vector<hsize_t> dims;
  std::vector<double> values;  // converted by HDF5 from the stored type
};
using Datasets = std::map<std::string, Dataset>;

herr_t collect(hid_t loc, const char* name, const H5L_info_t*, void* out) {
  auto& sets = *static_cast<std::vector<std::string>*>(out);
  sets.emplace_back(name);
  (void)loc;
  return 0;
}

// Every dataset of /VTKHDF and /VTKHDF/CellData ("CellData/<name>"), and the attributes' text.
Datasets read_file(const std::string& path, std::string* type = nullptr,
                   std::array<int, 2>* version = nullptr) {
  Datasets out;
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return out;
  for (const std::string group : {"/VTKHDF", "/VTKHDF/CellData"}) {
    const hid_t g = H5Gopen2(f, group.c_str(), H5P_DEFAULT);
    std::vector<std::string> names;
    H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &names);
    for (const auto& n : names) {
      H5O_info_t info;
      H5Oget_info_by_name(g, n.c_str(), &info, H5P_DEFAULT);
      if (info.type != H5O_TYPE_DATASET) continue;
      const hid_t d = H5Dopen2(g, n.c_str(), H5P_DEFAULT);
      const hid_t s = H5Dget_space(d);
      Dataset ds;
      ds.dims.resize(static_cast<std::size_t>(H5Sget_simple_extent_ndims(s)));
      H5Sget_simple_extent_dims(s, ds.dims.data(), nullptr);
      hsize_t total = 1;
      for (auto x : ds.dims) total *= x;
      ds.values.resize(total);
      if (total != 0)
        H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, ds.values.data());
      H5Sclose(s);
      H5Dclose(d);
      out[(group == "/VTKHDF" ? "" : "CellData/") + n] = std::move(ds);
    }
    if (group == "/VTKHDF") {
      if (type) {
        const hid_t a = H5Aopen(g, "Type", H5P_DEFAULT);
        const hid_t t = H5Aget_type(a);
        type->assign(H5Tget_size(t), '\0');
        H5Aread(a, t, type->data());
        H5Tclose(t);
        H5Aclose(a);
      }
      if (version) {
        const hid_t a = H5Aopen(g, "Version", H5P_DEFAULT);
        H5Aread(a, H5T_NATIVE_INT, version->data());
        H5Aclose(a);
      }
    }
    H5Gclose(g);
  }
  H5Fclose(f);
  return out;
}

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// NaN equals NaN here: the element rows of leaf arrays hold NaN.
bool same_values(const Dataset& a, const Dataset& b) {
  if (a.dims != b.dims || a.values.size() != b.values.size()) return false;
  for (std::size_t i = 0; i < a.values.size(); ++i)
    if (!(a.values[i] == b.values[i] || (std::isnan(a.values[i]) && std::isnan(b.values[i]))))
      return false;
  return true;
}

// Every dataset but `rank` (which says who wrote the row) the same in both files.
std::string compare_files(const Datasets& got, const Datasets& want) {
  if (want.empty()) return "reference unreadable";
  if (got.size() != want.size()) return "dataset count " + std::to_string(got.size());
  for (const auto& [name, ds] : want) {
    if (name == "CellData/rank") continue;
    const auto it = got.find(name);
    if (it == got.end()) return "missing " + name;
    if (!same_values(it->second, ds)) return "differs: " + name;
  }
  return "";
}

// ---- the problems -------------------------------------------------------------------------------
struct Datum {
  double u = 0;
};
template <int D>
Datum init(const irr::Cell<D>& c) {
  double u = c.level;
  for (int d = 0; d < D; ++d) u += 0.1 * (d + 1) * c.anchor[static_cast<std::size_t>(d)];
  return {u};
}

// A uniform grid refined in the lower corner, on any map: leaves of two levels.
template <class Domain>
void refine_corner(Domain& d) {
  constexpr int D = Domain::dim;
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
    const auto x = d.centre(i);
    if (x[0] < 0.5 && x[1] < 0.5) d.mark(i, irr::Mark::refine);
  }
  d.adapt([](const Datum&, const irr::Cell<D>& c) { return init<D>(c); },
          [](std::span<const Datum> kids) { return kids.front(); });
}

template <int D>
using Grid = irr::CellDomain<Datum, irr::stencil::Moore<D>, irr::curve::Hilbert<D>>;
using RectGrid = irr::CellDomain<Datum, irr::stencil::Moore<2>, irr::curve::Hilbert<2>,
                                 irr::load::Constant, irr::partitioner::Rectangular>;

struct Body {
  std::array<double, 3> position;
  double mass;
  std::array<double, 3> velocity;
};
using Bodies = irr::IrregularDomain<Body, irr::stencil::Moore<3>, irr::curve::Morton<3>>;

constexpr std::size_t body_count = 300;
Body body(std::size_t i) {
  // Distinct positions (so distinct keys) from a fixed sequence.
  const double a = static_cast<double>((i * 7919) % 1000) / 1000.0 + 0.0004;
  const double b = static_cast<double>((i * 104729) % 997) / 997.0 + 0.0003;
  const double c = static_cast<double>((i * 1299709) % 991) / 991.0 * 0.5 + 0.0002;
  return {{a, b, c}, 1.0 + static_cast<double>(i % 17), {a - 0.5, b, -c}};
}
Bodies make_bodies(const mpi::communicator& comm) {
  Bodies d(comm, irr::Box<3>{{0, 0, 0}, {1, 1, 1}}, irr::refine::max_elements(6));
  std::vector<Body> mine;
  for (std::size_t i = static_cast<std::size_t>(comm.rank()); i < body_count;
       i += static_cast<std::size_t>(comm.size()))
    mine.push_back(body(i));
  d.insert(mine);
  d.build();
  return d;
}
std::vector<irr::io::Field<Body>> body_fields() {
  return {irr::io::scalar<Body>("mass", [](const Body& b) { return b.mass; }),
          irr::io::vector<Body>("velocity", [](const Body& b) { return b.velocity; })};
}
std::vector<irr::io::Field<Datum>> grid_fields() {
  return {irr::io::scalar<Datum>("u", [](const Datum& x) { return x.u; }),
          irr::io::vector<Datum>("grad", [](const Datum& x) {
            return std::array<double, 2>{x.u, -x.u};
          })};
}

// A checksum of a domain's whole state on every rank: leaves, levels and values.
template <class Domain, class Values>
double state_sum(const Domain& d, const Values& values) {
  double s = 0;
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i)
    s += static_cast<double>(d.local_tree().starts()[i] % 1000003) * (i + 1) +
         d.local_tree().levels()[i];
  for (std::size_t i = 0; i < values.size(); ++i) s += values[i] * static_cast<double>(i + 7);
  double total = 0;
  mpi::all_reduce(d.comm(), s, total, std::plus<double>());
  return total;
}
template <int D, class Map>
double grid_state(const irr::CellDomain<Datum, irr::stencil::Moore<D>, irr::curve::Hilbert<D>,
                                        irr::load::Constant, Map>& d) {
  std::vector<double> v;
  for (const auto& x : d.local_data()) v.push_back(x.u);
  return state_sum(d, v);
}
double bodies_state(const Bodies& d) {
  std::vector<double> v;
  for (const auto& b : d.local_elements())
    v.insert(v.end(), {b.position[0], b.position[1], b.mass});
  return state_sum(d, v);
}

// Oracles on one file of a 2D grid: leaf quads tile the unit box (areas sum to 1, corners
// counter-clockwise with the side of their level), offsets and connectivity as VTK reads them.
std::string check_grid_file(const Datasets& f, std::uint64_t leaves) {
  const auto n = [&](const char* k) { return f.at(k).values.at(0); };
  if (n("NumberOfCells") != static_cast<double>(leaves)) return "NumberOfCells";
  if (n("NumberOfPoints") != static_cast<double>(4 * leaves)) return "NumberOfPoints";
  const auto& pts = f.at("Points").values;
  const auto& level = f.at("CellData/level").values;
  const auto& off = f.at("Offsets").values;
  const auto& conn = f.at("Connectivity").values;
  const auto& types = f.at("Types").values;
  if (off.size() != leaves + 1 || off[0] != 0) return "Offsets";
  double area = 0;
  for (std::size_t g = 0; g < leaves; ++g) {
    if (off[g + 1] != static_cast<double>(4 * (g + 1)) || types[g] != 9)
      return "cell " + std::to_string(g);
    const double side = 1.0 / static_cast<double>(std::uint64_t{1} << static_cast<int>(level[g]));
    const double* p = &pts[12 * g];
    for (int k = 0; k < 4; ++k)
      if (conn[4 * g + static_cast<std::size_t>(k)] !=
          static_cast<double>(4 * g + static_cast<std::size_t>(k)))
        return "connectivity";
    // (lo,lo) (hi,lo) (hi,hi) (lo,hi), z = 0
    if (p[3] - p[0] != side || p[7] - p[4] != side || p[6] != p[3] || p[9] != p[0] ||
        p[10] != p[7] || p[2] != 0)
      return "corners of cell " + std::to_string(g);
    area += side * side;
  }
  if (std::abs(area - 1.0) > 1e-12) return "areas sum to " + std::to_string(area);
  return "";
}

}  // namespace

TEST_CASE("write_vtkhdf of a 2D grid: the same datasets at every rank count, a quad per leaf",
          "[vtkhdf][files]") {
  mpi::communicator w;
  OutputDir out;
  Grid<2> d(w, irr::Box<2>{{0, 0}, {1, 1}}, 4, init<2>);
  refine_corner(d);
  const std::string path = (out.path / "grid2d.vtkhdf").string();
  irr::io::write_vtkhdf(d, path, grid_fields());

  // The reference: one rank, the same problem.
  std::string verdict;
  if (w.rank() == 0) {
    mpi::communicator self(MPI_COMM_SELF, mpi::comm_duplicate);
    Grid<2> one(self, irr::Box<2>{{0, 0}, {1, 1}}, 4, init<2>);
    refine_corner(one);
    const std::string ref = (out.path / "grid2d_ref.vtkhdf").string();
    irr::io::write_vtkhdf(one, ref, grid_fields());
    std::string type;
    std::array<int, 2> version{};
    const auto got = read_file(path, &type, &version);
    verdict = compare_files(got, read_file(ref));
    if (verdict.empty()) verdict = check_grid_file(got, one.global_leaf_count());
    if (verdict.empty() && (type != "UnstructuredGrid" || version != std::array<int, 2>{1, 0}))
      verdict = "attributes " + type;
    // The field: u of the datum of each leaf, in curve order as the one-rank domain holds them.
    for (std::size_t g = 0; verdict.empty() && g < one.local_leaf_count(); ++g)
      if (got.at("CellData/u").values[g] != one.local_data()[g].u ||
          got.at("CellData/grad").values[3 * g + 1] != -one.local_data()[g].u)
        verdict = "u of leaf " + std::to_string(g);
    if (fs::exists(path + ".part")) verdict = "temporary file left";
  }
  mpi::broadcast(w, verdict, 0);
  CAPTURE(verdict);
  REQUIRE(verdict.empty());

  // Each rank's rows hold its own rank.
  if (w.rank() == 0) {
    const auto got = read_file(path);
    const auto& rank = got.at("CellData/rank").values;
    std::vector<std::size_t> per(static_cast<std::size_t>(w.size()), 0);
    for (double r : rank) ++per.at(static_cast<std::size_t>(r));
    verdict = "";
    std::vector<std::size_t> want;
    mpi::gather(w, d.local_leaf_count(), want, 0);
    if (per != want) verdict = "rank rows";
  } else {
    mpi::gather(w, d.local_leaf_count(), 0);
  }
  REQUIRE(root_says(w, verdict.empty()));

  const auto leaves = d.global_leaf_count();
  if (out.keep && w.rank() == 0) {
    std::ofstream e(out.path / "expected.txt", std::ios::app);
    double u = 0;
    const auto got = read_file(path);
    for (double x : got.at("CellData/u").values) u += x;
    e.precision(17);
    e << "grid2d.vtkhdf cells " << leaves << " points " << 4 * leaves
      << " bounds 0 1 0 1 0 0 sum u " << u << "\n";
  }
}

TEST_CASE("write_vtkhdf under a rectangle map: rows in curve order, as one rank writes them",
          "[vtkhdf]") {
  mpi::communicator w;
  OutputDir out;
  RectGrid d(w, irr::Box<2>{{0, 0}, {1, 1}}, 4, init<2>, {.partitioner = {.level = 3}});
  refine_corner(d);
  const std::string path = (out.path / "rect.vtkhdf").string();
  irr::io::write_vtkhdf(d, path, grid_fields());
  std::string verdict;
  if (w.rank() == 0) {
    mpi::communicator self(MPI_COMM_SELF, mpi::comm_duplicate);
    Grid<2> one(self, irr::Box<2>{{0, 0}, {1, 1}}, 4, init<2>);
    refine_corner(one);
    const std::string ref = (out.path / "rect_ref.vtkhdf").string();
    irr::io::write_vtkhdf(one, ref, grid_fields());
    verdict = compare_files(read_file(path), read_file(ref));
  }
  mpi::broadcast(w, verdict, 0);
  CAPTURE(verdict);
  REQUIRE(verdict.empty());
}

TEST_CASE("write_vtkhdf of a 3D element domain: hexahedra then the bodies as vertices",
          "[vtkhdf][files]") {
  mpi::communicator w;
  OutputDir out;
  const Bodies d = make_bodies(w);
  const std::string path = (out.path / "bodies.vtkhdf").string();
  irr::io::write_vtkhdf(d, path, body_fields());
  std::string verdict;
  if (w.rank() == 0) {
    mpi::communicator self(MPI_COMM_SELF, mpi::comm_duplicate);
    const Bodies one = make_bodies(self);
    const std::string ref = (out.path / "bodies_ref.vtkhdf").string();
    irr::io::write_vtkhdf(one, ref, body_fields());
    const auto got = read_file(path);
    verdict = compare_files(got, read_file(ref));
    const std::size_t L = one.global_leaf_count();
    // The element rows: vertex cells whose points are exactly the inserted bodies, each with its
    // own mass and velocity; leaves carry their element counts, summing to the bodies.
    if (verdict.empty()) {
      const auto& pts = got.at("Points").values;
      const auto& mass = got.at("CellData/mass").values;
      const auto& vel = got.at("CellData/velocity").values;
      const auto& kind = got.at("CellData/kind").values;
      const auto& types = got.at("Types").values;
      const auto& count = got.at("CellData/elements").values;
      std::vector<std::array<double, 3>> seen, want;
      double counted = 0;
      for (std::size_t g = 0; g < L; ++g) {
        if (kind[g] != 0 || types[g] != 12 || !std::isnan(mass[g])) verdict = "leaf row";
        counted += count[g];
      }
      for (std::size_t e = 0; e < body_count; ++e) {
        const std::size_t row = L + e;
        const std::array<double, 3> x{pts[3 * (8 * L + e)], pts[3 * (8 * L + e) + 1],
                                      pts[3 * (8 * L + e) + 2]};
        if (kind[row] != 1 || types[row] != 1 || !std::isnan(count[row])) verdict = "element row";
        if (vel[3 * row] != x[0] - 0.5 || vel[3 * row + 1] != x[1] || vel[3 * row + 2] != -x[2])
          verdict = "velocity of element " + std::to_string(e);
        seen.push_back(x);
        (void)mass;
      }
      double mass_sum = 0, want_mass = 0;
      for (std::size_t i = 0; i < body_count; ++i) {
        want.push_back(body(i).position);
        want_mass += body(i).mass;
        mass_sum += mass[L + i];
      }
      std::sort(seen.begin(), seen.end());
      std::sort(want.begin(), want.end());
      if (seen != want) verdict = "element points are not the bodies";
      if (counted != static_cast<double>(body_count)) verdict = "element counts";
      if (mass_sum != want_mass) verdict = "mass sum";
      if (got.at("NumberOfCells").values[0] != static_cast<double>(L + body_count) ||
          got.at("NumberOfPoints").values[0] != static_cast<double>(8 * L + body_count) ||
          got.at("Offsets").values.back() != static_cast<double>(8 * L + body_count))
        verdict = "sizes";
      if (verdict.empty() && out.keep) {
        std::ofstream e(out.path / "expected.txt", std::ios::app);
        e.precision(17);
        e << "bodies.vtkhdf cells " << L + body_count << " points " << 8 * L + body_count
          << " bounds 0 1 0 1 0 1 sum mass " << want_mass << "\n";
      }
    }
  }
  mpi::broadcast(w, verdict, 0);
  CAPTURE(verdict);
  REQUIRE(verdict.empty());

  // A field of the elements that throws on the last rank holding bodies: the same error on every
  // rank, the file and the domain as they were.
  const double before = bodies_state(d);
  const std::string kept = w.rank() == 0 ? bytes_of(path) : "";
  int last = d.local_element_count() > 0 ? w.rank() : -1;
  last = mpi::all_reduce(w, last, mpi::maximum<int>());
  auto fields = body_fields();
  fields.push_back(irr::io::scalar<Body>("bad", [&](const Body& b) {
    if (w.rank() == last) throw std::runtime_error("no such body");
    return b.mass;
  }));
  std::string message;
  try {
    irr::io::write_vtkhdf(d, path, fields);
  } catch (const irr::collective_error& e) {
    message = e.what();
  }
  REQUIRE(failures(w, message.find("no such body") != std::string::npos) == 0);
  REQUIRE(bodies_state(d) == before);
  REQUIRE(root_says(w, w.rank() != 0 || bytes_of(path) == kept));
}

TEST_CASE("a VtkHdfSeries: one file per step and an index that lists the finished ones",
          "[vtkhdf][files]") {
  mpi::communicator w;
  OutputDir out;
  Grid<3> d(w, irr::Box<3>{{0, 0, 0}, {1, 1, 1}}, 2, init<3>);
  irr::io::VtkHdfSeries series((out.path / "series").string(), "grid3d");
  const std::vector<irr::io::Field<Datum>> fields{
      irr::io::scalar<Datum>("u", [](const Datum& x) { return x.u; })};
  for (int step = 0; step < 3; ++step) {
    series.write(d, 0.5 * step, fields);
    for (auto& x : d.local_data()) x.u += 1;
  }
  REQUIRE(series.files().size() == 3);
  const std::string index = series.index_path();
  const std::string text = w.rank() == 0 ? bytes_of(index) : "";
  // A step that fails (a throwing field on the last rank) leaves the index as it was.
  const double before = grid_state(d);
  const std::vector<irr::io::Field<Datum>> bad{irr::io::scalar<Datum>("u", [&](const Datum& x) {
    if (w.rank() == w.size() - 1) throw std::runtime_error("field failed");
    return x.u;
  })};
  REQUIRE_THROWS_AS(series.write(d, 2.0, bad),
                    irr::collective_error);  // 64 leaves: 7 ranks hold some
  REQUIRE(series.files().size() == 3);
  REQUIRE(grid_state(d) == before);
  // A time that does not advance is refused.
  REQUIRE_THROWS_AS(series.write(d, 1.0, fields), irr::collective_error);
  const auto leaves = d.global_leaf_count();
  bool ok = true;
  if (w.rank() == 0) {
    ok = bytes_of(index) == text && text.find("grid3d_2.vtkhdf") != std::string::npos &&
         text.find("\"time\" : 1 }") != std::string::npos &&
         text.find("grid3d_3") == std::string::npos;
    for (int s = 0; s < 3; ++s) {
      const auto f =
          read_file((out.path / "series" / ("grid3d_" + std::to_string(s) + ".vtkhdf")).string());
      ok = ok && f.count("CellData/u") == 1 &&
           f.at("NumberOfCells").values[0] == static_cast<double>(leaves);
    }
  }
  REQUIRE(root_says(w, ok));
  if (out.keep && w.rank() == 0) {
    std::ofstream e(out.path / "expected.txt", std::ios::app);
    e << "series/grid3d.vtkhdf.series steps 3 cells " << leaves << "\n";
  }
}

TEST_CASE("write_vtkhdf failures: the same error on every rank, the earlier file unchanged",
          "[vtkhdf][errors]") {
  mpi::communicator w;
  OutputDir out;
  Grid<2> d(w, irr::Box<2>{{0, 0}, {1, 1}}, 3, init<2>);
  const std::string path = (out.path / "kept.vtkhdf").string();
  irr::io::write_vtkhdf(d, path, grid_fields());
  const std::string kept = w.rank() == 0 ? bytes_of(path) : "";
  const double state = grid_state(d);
  // The last rank that holds leaves fails; every rank must see the same message.
  int last = d.local_leaf_count() > 0 ? w.rank() : -1;
  last = mpi::all_reduce(w, last, mpi::maximum<int>());
  const bool me = w.rank() == last;

  const auto expect_failure = [&](auto&& call, const std::string& fragment) {
    std::string message;
    try {
      call();
    } catch (const irr::collective_error& e) {
      message = e.what();
    }
    std::string first = message;
    mpi::broadcast(w, first, 0);
    CAPTURE(fragment, message);
    REQUIRE(failures(w, !message.empty() && message == first &&
                            message.find(fragment) != std::string::npos) == 0);
    REQUIRE(grid_state(d) == state);
    REQUIRE(root_says(w, w.rank() != 0 || (bytes_of(path) == kept && !fs::exists(path + ".part"))));
  };

  SECTION("a field's function throws on one rank") {
    auto fields = grid_fields();
    fields.push_back(irr::io::scalar<Datum>("bad", [&](const Datum& x) {
      if (me) throw std::runtime_error("the field failed here");
      return x.u;
    }));
    expect_failure([&] { irr::io::write_vtkhdf(d, path, fields); }, "the field failed here");
  }
  SECTION("one rank passes other fields") {
    if (w.size() == 1) return;  // rank 0's are the reference
    auto fields = grid_fields();
    if (me) fields.pop_back();
    expect_failure([&] { irr::io::write_vtkhdf(d, path, fields); }, "differ from rank 0's");
  }
  SECTION("a reserved or repeated name on one rank, a field without a function") {
    auto fields = grid_fields();
    if (me) fields[0].name = "level";
    expect_failure([&] { irr::io::write_vtkhdf(d, path, fields); }, "reserved");
    fields = grid_fields();
    if (me) fields[1].name = "u";
    expect_failure([&] { irr::io::write_vtkhdf(d, path, fields); }, "appears twice");
    fields = grid_fields();
    if (me) fields[1].value = nullptr;
    expect_failure([&] { irr::io::write_vtkhdf(d, path, fields); }, "has no function");
  }
  SECTION("a missing directory, a path that is a directory") {
    expect_failure([&] { irr::io::write_vtkhdf(d, (out.path / "nowhere" / "x.vtkhdf").string()); },
                   "does not exist");
    expect_failure([&] { irr::io::write_vtkhdf(d, out.path.string()); }, "is a directory");
  }
  SECTION("HDF5 fails on one rank after each step") {
    for (const std::string step : {"create", "sizes", "points", "topology", "cell data", "close"}) {
      irr::io::detail::vtkhdf_fault_hook() = [&](std::string_view at) {
        if (me && at == step) throw irr::error("injected failure after " + step);
      };
      expect_failure([&] { irr::io::write_vtkhdf(d, path, grid_fields()); },
                     "injected failure after " + step);
      irr::io::detail::vtkhdf_fault_hook() = nullptr;
    }
    // And the next write works.
    irr::io::write_vtkhdf(d, path, grid_fields());
    REQUIRE(root_says(w, w.rank() != 0 || bytes_of(path).size() > 0));
  }
}
