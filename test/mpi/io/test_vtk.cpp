// VTK output: write_vtu's geometry and arrays on hand-checked cells, write_pvtu of a CellDomain
// (2D and 3D) and of an IrregularDomain parsed back (cells, levels, ranks, fields, the pvtu's
// piece list and declarations), and failures agreed on every rank.
// With IRREGULAR_VTK_OUT=<dir>, the [files] cases keep their output there for
// test/io/read_with_vtk.py (VTK's own reader).
#include <catch2/catch.hpp>

#include "output_dir.hpp"

#include <irregular/cell_domain.hpp>
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>
#include <irregular/domain.hpp>
#include <irregular/io/vtk.hpp>
#include <irregular/io/vtk_domain.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace irr = irregular;
namespace mpi = boost::mpi;
namespace fs = std::filesystem;

namespace {

using test_support::failures;
using test_support::root_says;
// The files go to IRREGULAR_VTK_OUT (kept) or to a temporary directory.
struct OutputDir : test_support::OutputDir {
  OutputDir() : test_support::OutputDir("IRREGULAR_VTK_OUT", "irregular_vtk_") {}
};

// ---- a minimal reader of the files we write -------------------------------------------------

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}
// Every value of attribute `key` in tags named `tag`, in file order.
std::vector<std::string> attributes(const std::string& text, const std::string& tag, const std::string& key) {
  std::vector<std::string> out;
  for (std::size_t at = text.find("<" + tag); at != std::string::npos; at = text.find("<" + tag, at + 1)) {
    const auto close = text.find('>', at);
    const auto k = text.find(" " + key + "=\"", at);
    if (k == std::string::npos || k > close) continue;
    const auto b = k + key.size() + 3;
    out.push_back(text.substr(b, text.find('"', b) - b));
  }
  return out;
}
std::string section(const std::string& text, const std::string& open, const std::string& close) {
  const auto b = text.find(open);
  if (b == std::string::npos) return {};
  return text.substr(b, text.find(close, b) - b);
}
// The numbers of the DataArray called `name`.
std::vector<double> array(const std::string& text, const std::string& name) {
  const auto at = text.find("Name=\"" + name + "\"");
  if (at == std::string::npos) return {};
  const auto b = text.find('>', at) + 1;
  std::istringstream in(text.substr(b, text.find("</DataArray>", b) - b));
  std::vector<double> v;
  for (double x; in >> x;) v.push_back(x);
  return v;
}

// The coordinates of the (unnamed) Points array.
std::vector<double> point_coordinates(const std::string& text) {
  const auto sec = section(text, "<Points>", "</Points>");
  std::istringstream in(sec.substr(sec.find('>', sec.find("<DataArray")) + 1));
  std::vector<double> v;
  for (double x; in >> x;) v.push_back(x);
  return v;
}

// ---- the cell-data domains ------------------------------------------------------------------

struct Datum {
  double u = 0;
};
// u at a cell's centre in the unit box: x + 2y (+ 3z); read_with_vtk.py checks the same formula.
template <int D>
double u_at(const std::array<double, D>& x) {
  double u = 0;
  for (int d = 0; d < D; ++d) u += (d + 1) * x[static_cast<std::size_t>(d)];
  return u;
}
template <int D>
Datum init(const irr::Cell<D>& c) {
  std::array<double, D> x{};
  const double h = 1.0 / static_cast<double>(std::uint64_t{1} << c.level);
  for (int d = 0; d < D; ++d) x[static_cast<std::size_t>(d)] = (static_cast<double>(c.anchor[static_cast<std::size_t>(d)]) + 0.5) * h;
  return {u_at<D>(x)};
}

// A uniform grid refined once in the lower corner: leaves of two levels.
template <class Curve>
auto make_grid(const mpi::communicator& w, int level) {
  constexpr int D = Curve::dim;
  using Domain = irr::CellDomain<Datum, irr::stencil::Moore<D>, Curve>;
  irr::Box<D> box;
  box.hi.fill(1.0);
  Domain d(w, box, level, init<D>);
  for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
    const auto x = d.centre(i);
    if (x[0] < 0.5 && x[1] < 0.5) d.mark(i, irr::Mark::refine);
  }
  d.adapt([](const Datum&, const irr::Cell<D>& c) { return init<D>(c); },
          [](std::span<const Datum> kids) { return kids.front(); });
  return d;
}

// Checks this rank's piece against the domain, and on rank 0 the pvtu, for every rank.
template <class Domain>
void check_written(const Domain& d, const fs::path& dir, const std::string& name,
                   const std::vector<std::string>& user_fields) {
  constexpr int D = Domain::dim;
  constexpr int corners = D == 2 ? 4 : 8;
  const auto& w = d.comm();
  const auto total = d.global_leaf_count();
  const auto piece_path = dir / (name + "_" + std::to_string(w.rank()) + ".vtu");
  const std::string piece = slurp(piece_path);
  const std::size_t n = d.local_leaf_count();

  const auto counts = attributes(piece, "Piece", "NumberOfCells");
  const auto points = attributes(piece, "Piece", "NumberOfPoints");
  REQUIRE(failures(w, counts.size() == 1 && counts[0] == std::to_string(n)) == 0);
  REQUIRE(failures(w, points.size() == 1 && points[0] == std::to_string(n * corners)) == 0);

  const auto level = array(piece, "level"), rank = array(piece, "rank"), types = array(piece, "types");
  const auto conn = array(piece, "connectivity"), offsets = array(piece, "offsets");
  bool levels_ok = level.size() == n, ranks_ok = rank.size() == n, types_ok = types.size() == n;
  for (std::size_t i = 0; levels_ok && i < n; ++i) levels_ok = level[i] == d.local_tree().levels()[i];
  for (std::size_t i = 0; ranks_ok && i < n; ++i) ranks_ok = rank[i] == w.rank();
  for (std::size_t i = 0; types_ok && i < n; ++i) types_ok = types[i] == (D == 2 ? 9 : 12);
  REQUIRE(failures(w, levels_ok) == 0);
  REQUIRE(failures(w, ranks_ok) == 0);
  REQUIRE(failures(w, types_ok) == 0);
  REQUIRE(failures(w, conn.size() == n * corners && offsets.size() == n &&
                          (n == 0 || offsets.back() == static_cast<double>(n * corners))) == 0);

  // The corners of cell i average to its centre; its side is the box's / 2^level.
  const auto pts = point_coordinates(piece);
  bool geometry_ok = pts.size() == n * corners * 3;
  for (std::size_t i = 0; geometry_ok && i < n; ++i) {
    const auto cell = d.local_tree().cell(i);
    const double side = 1.0 / static_cast<double>(std::uint64_t{1} << cell.level);
    std::array<double, D> c{};
    for (int a = 0; a < D; ++a) c[static_cast<std::size_t>(a)] = (static_cast<double>(cell.anchor[static_cast<std::size_t>(a)]) + 0.5) * side;
    for (int a = 0; a < 3; ++a) {
      double sum = 0, lo = 1e300, hi = -1e300;
      for (int k = 0; k < corners; ++k) {
        const double v = pts[(i * corners + static_cast<std::size_t>(k)) * 3 + static_cast<std::size_t>(a)];
        sum += v;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      const double want = a < D ? c[static_cast<std::size_t>(a)] : 0.0;
      geometry_ok = geometry_ok && std::abs(sum / corners - want) < 1e-12 &&
                    std::abs((hi - lo) - (a < D ? side : 0.0)) < 1e-12;
    }
  }
  REQUIRE(failures(w, geometry_ok) == 0);

  // The piece's cell arrays are the ones the pvtu declares.
  std::vector<std::string> expected{"level", "rank"};
  expected.insert(expected.end(), user_fields.begin(), user_fields.end());
  REQUIRE(failures(w, attributes(section(piece, "<CellData", "</CellData>"), "DataArray", "Name") == expected) == 0);

  w.barrier();  // every piece is on disk (write_pvtu returned everywhere)
  bool index_ok = true;
  if (w.rank() == 0) {
    const std::string pvtu = slurp(dir / (name + ".pvtu"));
    std::vector<std::string> sources;
    for (int r = 0; r < w.size(); ++r) sources.push_back(name + "_" + std::to_string(r) + ".vtu");
    index_ok = attributes(pvtu, "Piece", "Source") == sources &&
               attributes(section(pvtu, "<PCellData", "</PCellData>"), "PDataArray", "Name") == expected &&
               attributes(pvtu, "PDataArray", "NumberOfComponents").size() >= 1;
    std::uint64_t cells = 0;
    for (const auto& s : sources) {
      const auto c = attributes(slurp(dir / s), "Piece", "NumberOfCells");
      index_ok = index_ok && c.size() == 1;
      if (index_ok) cells += std::stoull(c[0]);
    }
    index_ok = index_ok && cells == total;
  }
  REQUIRE(root_says(w, index_ok));
}

template <class Curve>
void write_and_check(int level, const std::string& name) {
  mpi::communicator w;
  OutputDir out;
  const auto d = make_grid<Curve>(w, level);
  irr::io::write_pvtu(d, out.str(), name, {{"u", [](const Datum& x) { return x.u; }}});
  check_written(d, out.path, name, {"u"});
  const auto piece = slurp(out.path / (name + "_" + std::to_string(w.rank()) + ".vtu"));
  const auto u = array(piece, "u");
  bool u_ok = u.size() == d.local_leaf_count();
  for (std::size_t i = 0; u_ok && i < u.size(); ++i) u_ok = u[i] == d.data(i).u;  // exact round trip
  REQUIRE(failures(w, u_ok) == 0);
}

std::vector<irr::Cell<2>> one_cell_per_rank(const mpi::communicator& w) {
  return {irr::Cell<2>{{static_cast<irr::coord_t>(w.rank() % 8), static_cast<irr::coord_t>(w.rank() / 8)}, 3}};
}

}  // namespace

TEST_CASE("write_vtu: corners in VTK order, cell types, levels, ranks and field components", "[vtk]") {
  const irr::Box<2> box2{{0, 0}, {2, 1}};
  const std::vector<irr::Cell<2>> cells2{{{1, 0}, 1}, {{0, 0}, 0}};
  const std::vector<double> vec{1, 2, 3, 4};
  std::ostringstream os;
  irr::io::write_vtu(os, box2, 2, cells2, {{"v", vec, 2}}, 5);
  const auto s = os.str();
  REQUIRE(attributes(s, "Piece", "NumberOfCells") == std::vector<std::string>{"2"});
  auto pts = point_coordinates(s);
  REQUIRE(pts == std::vector<double>{1, 0, 0, 2, 0, 0, 2, 0.5, 0, 1, 0.5, 0, 0, 0, 0, 2, 0, 0, 2, 1, 0, 0, 1, 0});
  REQUIRE(array(s, "types") == std::vector<double>{9, 9});
  REQUIRE(array(s, "offsets") == std::vector<double>{4, 8});
  REQUIRE(array(s, "level") == std::vector<double>{1, 0});
  REQUIRE(array(s, "rank") == std::vector<double>{5, 5});
  REQUIRE(array(s, "v") == vec);
  REQUIRE(attributes(s, "DataArray", "NumberOfComponents") == std::vector<std::string>{"3", "2"});

  // A Peano (arity 3) hexahedron: level 1, anchor (2, 0, 1) in the unit cube.
  std::ostringstream os3;
  irr::io::write_vtu(os3, irr::Box<3>{{0, 0, 0}, {3, 3, 3}}, 3, std::vector<irr::Cell<3>>{{{2, 0, 1}, 1}});
  const auto s3 = os3.str();
  pts = point_coordinates(s3);
  REQUIRE(pts == std::vector<double>{2, 0, 1, 3, 0, 1, 3, 1, 1, 2, 1, 1, 2, 0, 2, 3, 0, 2, 3, 1, 2, 2, 1, 2});
  REQUIRE(array(s3, "types") == std::vector<double>{12});
  REQUIRE(array(s3, "connectivity") == std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7});

  // Bad input: nothing written, irregular::invalid_argument naming the field.
  std::ostringstream bad;
  const std::vector<double> three{1, 2, 3};
  REQUIRE_THROWS_AS(irr::io::write_vtu(bad, box2, 2, cells2, {{"u", three}}), irr::invalid_argument);
  REQUIRE_THROWS_WITH(irr::io::write_vtu(bad, box2, 2, cells2, {{"u", three}}), Catch::Contains("\"u\""));
  REQUIRE_THROWS_AS(irr::io::write_vtu(bad, box2, 2, cells2, {{"level", vec, 2}}), irr::invalid_argument);
  REQUIRE_THROWS_AS(irr::io::write_vtu(bad, box2, 2, std::vector<irr::Cell<2>>{{{2, 0}, 1}}), irr::invalid_argument);
  REQUIRE(bad.str().empty());

  // An empty piece is a valid file too (a rank may hold no leaves).
  std::ostringstream empty;
  irr::io::write_vtu(empty, box2, 2, std::span<const irr::Cell<2>>{});
  REQUIRE(attributes(empty.str(), "Piece", "NumberOfCells") == std::vector<std::string>{"0"});
}

TEST_CASE("write_pvtu of a 2D CellDomain: one piece per rank, the pvtu lists them all", "[vtk][files]") {
  write_and_check<irr::curve::Morton<2>>(3, "grid2d");
}

TEST_CASE("write_pvtu of a 3D CellDomain (Hilbert): hexahedra, levels and fields read back", "[vtk][files]") {
  write_and_check<irr::curve::Hilbert<3>>(2, "grid3d");
}

TEST_CASE("write_pvtu of an IrregularDomain: an elements count per leaf and the user's fields", "[vtk][files]") {
  struct Particle {
    std::array<double, 2> position;
  };
  using Domain = irr::IrregularDomain<Particle, irr::stencil::Moore<2>, irr::curve::Hilbert<2>>;
  mpi::communicator w;
  OutputDir out;
  Domain d(w, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(8));
  // The same seeded points on every rank count; each rank inserts its share.
  std::mt19937_64 rng(20240610);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Particle> mine;
  const int n = 500;
  for (int k = 0; k < n; ++k) {
    const double x = u(rng), y = u(rng);
    if (k % w.size() == w.rank()) mine.push_back({{x * x, y}});  // crowded near x = 0
  }
  d.insert(mine);
  d.build();
  std::vector<double> ids(d.local_leaf_count());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<double>(i);
  irr::io::write_pvtu(d, out.str(), "particles", {{"local_id", ids}});
  check_written(d, out.path, "particles", {"elements", "local_id"});

  const auto piece = slurp(out.path / ("particles_" + std::to_string(w.rank()) + ".vtu"));
  double sum = 0, all = 0;
  for (double c : array(piece, "elements")) sum += c;
  mpi::all_reduce(w, sum, all, std::plus<double>());
  REQUIRE(all == n);
  REQUIRE(failures(w, array(piece, "local_id") == ids) == 0);
}

TEST_CASE("write_pvtu failures are agreed on every rank", "[vtk][errors]") {
  mpi::communicator w;
  OutputDir out;
  const int bad = w.size() - 1;
  const irr::Box<2> box{{0, 0}, {1, 1}};
  const auto cells = one_cell_per_rank(w);
  const std::vector<double> one{1.0}, two{1.0, 2.0};

  auto agreed = [&](auto&& call, const std::string& needle) {
    int failing = -1;
    std::string what;
    try {
      call();
    } catch (const irr::collective_error& e) {
      failing = e.failing_rank();
      what = e.what();
    }
    REQUIRE(failures(w, failing == bad) == 0);
    REQUIRE(failures(w, what.find(needle) != std::string::npos) == 0);
  };

  SECTION("a field with the wrong size on one rank names the field and the rank") {
    agreed([&] {
      irr::io::write_pvtu(w, out.str(), "sizes", box, 2, cells, {{"pressure", w.rank() == bad ? two : one}});
    }, "field \"pressure\"");
    agreed([&] {
      irr::io::write_pvtu(w, out.str(), "sizes", box, 2, cells, {{"pressure", w.rank() == bad ? two : one}});
    }, "rank " + std::to_string(bad));
    // Nothing was indexed.
    REQUIRE(root_says(w, !fs::exists(out.path / "sizes.pvtu")));
  }
  SECTION("fields that differ from rank 0's") {
    if (w.size() > 1)
      agreed([&] {
        irr::io::write_pvtu(w, out.str(), "names", box, 2, cells, {{w.rank() == bad ? "q" : "p", one}});
      }, "differ from rank 0");
  }
  SECTION("a piece that cannot be opened on one rank") {
    if (w.rank() == bad) fs::create_directories(out.path / ("blocked_" + std::to_string(bad) + ".vtu"));
    w.barrier();
    agreed([&] { irr::io::write_pvtu(w, out.str(), "blocked", box, 2, cells, {{"p", one}}); }, "cannot open");
    REQUIRE(root_says(w, !fs::exists(out.path / "blocked.pvtu")));
  }
  SECTION("a directory that cannot be created fails on every rank, rank 0's message") {
    if (w.rank() == 0) std::ofstream(out.path / "plain_file") << "x";
    w.barrier();
    int failing = -1;
    try {
      irr::io::write_pvtu(w, (out.path / "plain_file" / "sub").string(), "x", box, 2, cells);
    } catch (const irr::collective_error& e) {
      failing = e.failing_rank();
    }
    REQUIRE(failures(w, failing == 0) == 0);
  }
  SECTION("a CellDomain field function that throws on one rank") {
    const auto d = make_grid<irr::curve::Morton<2>>(w, 3);
    const int holder = [&] {  // the last rank that holds leaves throws
      int me = d.local_leaf_count() > 0 ? w.rank() : -1, last = -1;
      mpi::all_reduce(w, me, last, mpi::maximum<int>());
      return last;
    }();
    int failing = -1;
    try {
      irr::io::write_pvtu(d, out.str(), "throws", {{"u", [&](const Datum& x) {
                                                      if (w.rank() == holder) throw std::runtime_error("field failed");
                                                      return x.u;
                                                    }}});
    } catch (const irr::collective_error& e) {
      failing = e.failing_rank();
    }
    REQUIRE(failures(w, failing == holder) == 0);
  }
}
