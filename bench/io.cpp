// VTKHDF output (issue 42): io::write_vtkhdf of a CellDomain (2D, uniform level 10: 2^20 leaves,
// one scalar field) against (a) plain MPI-IO of the same bytes (each rank its share, by its
// leaves, at a prefix-sum offset: MPI_File_open + MPI_File_write_at_all + MPI_File_close through
// irregular::mpi::File; no sync on either side, as HDF5's close does not sync) and (b)
// io::write_pvtu of the same leaves and field (ASCII .vtu per rank + .pvtu). An IrregularDomain
// row (10^6 points, leaves of <= 32) sets write_vtkhdf (leaves and points) against MPI-IO only:
// write_pvtu writes no elements. The three writes alternate call by call, their order rotating
// each repeat; each target is removed before its write, outside the timing.
//   Targets: write_vtkhdf <= 1.5x plain MPI-IO of the same bytes at 2 ranks, and below the .pvtu
//   writer at every rank count.
// A profile splits write_vtkhdf into its preparation (fields, placement in curve order, corner
// geometry; each timed apart) and the HDF5 steps (create, sizes, points, topology, cell data,
// close: stamped through the writer's step hook, rank 0). Times: the slowest rank, barrier before;
// the first call (cold) beside the median and spread of the rest. Exit 1 when a file is missing or
// MPI-IO's file is not the VTKHDF file's size. Usage: mpiexec -n P bench_io [--quick] [--dir DIR]
// [--reps N] [--csv]
#include <irregular/io/vtk_domain.hpp>
#include <irregular/io/vtkhdf.hpp>
#include <irregular/irregular.hpp>
#include <irregular/mpi/file.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include "detail/timing.hpp"
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <sys/statfs.h>
#include <unistd.h>
#include <vector>

namespace {

namespace irr = irregular;
namespace mpi = boost::mpi;
namespace fs = std::filesystem;
using bench::max_over;
using bench::median;
using bench::now_s;

struct Config {
  bool quick = false, csv = false;
  std::string dir;
  int reps = 7;         // after the cold call
  int grid_level = 10;  // 4^10 = 1,048,576 leaves
  std::uint64_t points = 1'000'000;
};

bool g_failed = false;
void fail(const mpi::communicator& comm, const std::string& what) {
  g_failed = true;
  if (comm.rank() == 0) std::fprintf(stderr, "bench_io: FAILED: %s\n", what.c_str());
}

std::string fmt(double x, int prec = 1) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, x);
  return b;
}
// "min..max" of repeated times, in ms.
std::string spread(const std::vector<double>& t) {
  if (t.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(t.begin(), t.end());
  return fmt(*lo * 1e3) + ".." + fmt(*hi * 1e3);
}

template <class F>
double timed(const mpi::communicator& comm, F&& f) {
  comm.barrier();
  const double t0 = now_s();
  f();
  return max_over(comm, now_s() - t0);
}

void remove_paths(const mpi::communicator& comm, const std::vector<std::string>& paths) {
  if (comm.rank() == 0)
    for (const auto& p : paths) {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  comm.barrier();
}

std::uint64_t size_of(const mpi::communicator& comm, const std::string& path) {
  std::uint64_t s = 0;
  if (comm.rank() == 0) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      for (const auto& e : fs::directory_iterator(path)) s += e.file_size();
    } else {
      const auto n = fs::file_size(path, ec);
      s = ec ? 0 : n;
    }
  }
  mpi::broadcast(comm, s, 0);
  return s;
}

// ---- plain MPI-IO: the reference ---------------------------------------------------------------

/// This rank's share of `total` bytes in proportion to its `mine` of `all` leaves, at the
/// prefix-sum offset: the bytes of its rows, had the file no header.
struct Plain {
  std::uint64_t offset = 0;
  std::vector<std::byte> out;
  Plain(const mpi::communicator& comm, std::uint64_t total, std::uint64_t mine) {
    std::uint64_t before = 0, all = 0;
    MPI_Exscan(&mine, &before, 1, MPI_UINT64_T, MPI_SUM, comm);
    if (comm.rank() == 0) before = 0;
    mpi::all_reduce(comm, mine, all, std::plus<std::uint64_t>());
    const auto at = [&](std::uint64_t leaves) {
      return all == 0 ? 0
                      : static_cast<std::uint64_t>(static_cast<long double>(total) * leaves / all);
    };
    offset = at(before);
    out.resize(at(before + mine) - offset);
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = static_cast<std::byte>((offset + i) * 0x9e37u >> 7);
  }
  void write(const mpi::communicator& comm, const std::string& path) const {
    irr::mpi::File f(comm, path, irr::mpi::File::Mode::create);
    f.write_at_all(offset, out);
    f.close();
  }
};

// ---- the three writers, alternating ------------------------------------------------------------

/// Seconds of each repeat (the first is the cold call) and, for write_vtkhdf, its steps' seconds.
struct Row {
  std::string data;
  std::uint64_t cells = 0, vtkhdf_bytes = 0, pvtu_bytes = 0;
  std::vector<double> vtkhdf, plain, pvtu;
  std::map<std::string, std::vector<double>> steps;  // per HDF5 step, warm repeats, rank 0
  std::array<std::vector<double>, 3> prepare;        // fields, placement, geometry (timed apart)
};

/// The writer's steps on this rank: the hook fires at the end of each (create ... close).
struct StepClock {
  double start = 0;
  std::vector<std::pair<std::string, double>> marks;
  void arm() {
    marks.clear();
    start = now_s();
    irr::io::detail::vtkhdf_fault_hook() = [this](std::string_view name) {
      marks.emplace_back(std::string(name), now_s());
    };
  }
  void disarm() { irr::io::detail::vtkhdf_fault_hook() = nullptr; }
};

template <class WriteVtkhdf, class WritePvtu, class Prepare>
void measure(const mpi::communicator& comm, const Config& cfg, Row& row, std::uint64_t local_leaves,
             WriteVtkhdf&& write_vtkhdf, WritePvtu&& write_pvtu, Prepare&& prepare) {
  const std::string h5 = cfg.dir + "/bench.vtkhdf", plain_path = cfg.dir + "/bench.plain",
                    pvtu_dir = cfg.dir + "/pvtu";
  std::optional<Plain> plain;
  StepClock clock;
  for (int rep = 0; rep <= cfg.reps; ++rep) {
    // The cold call writes VTKHDF first (it gives the byte count); then the order rotates.
    for (int k = 0; k < 3; ++k) {
      const int which = (rep + k) % 3;
      if (which == 0) {
        remove_paths(comm, {h5});
        clock.arm();
        row.vtkhdf.push_back(timed(comm, write_vtkhdf));
        const double end = now_s();
        clock.disarm();
        if (rep == 0) {
          row.vtkhdf_bytes = size_of(comm, h5);
          if (row.vtkhdf_bytes == 0) fail(comm, row.data + ": write_vtkhdf wrote no file");
          plain.emplace(comm, row.vtkhdf_bytes, local_leaves);
        } else if (comm.rank() == 0) {
          double at = clock.start;
          for (const auto& [name, t] : clock.marks) {
            row.steps[name].push_back(t - at);
            at = t;
          }
          row.steps["rename"].push_back(end - at);
        }
      } else if (which == 1) {
        remove_paths(comm, {plain_path});
        row.plain.push_back(timed(comm, [&] { plain->write(comm, plain_path); }));
        if (rep == 0 && size_of(comm, plain_path) != row.vtkhdf_bytes)
          fail(comm, row.data + ": the MPI-IO file is not the VTKHDF file's size");
      } else {
        remove_paths(comm, {pvtu_dir});
        if (comm.rank() == 0) fs::create_directories(pvtu_dir);
        comm.barrier();
        row.pvtu.push_back(timed(comm, [&] { write_pvtu(pvtu_dir); }));
        if (rep == 0) row.pvtu_bytes = size_of(comm, pvtu_dir);
      }
    }
    if (rep > 0) {
      const auto t = prepare();
      for (std::size_t k = 0; k < t.size(); ++k) row.prepare[k].push_back(t[k]);
    }
  }
  remove_paths(comm, {h5, plain_path, pvtu_dir});
}

// ---- the rows ----------------------------------------------------------------------------------

struct Datum {
  double u = 0;
};
struct Point {
  std::array<double, 2> position;
};

Row cells_row(const mpi::communicator& comm, const Config& cfg) {
  using Curve = irr::curve::Hilbert<2>;
  using Grid = irr::CellDomain<Datum, irr::stencil::Moore<2>, Curve>;
  const irr::Box<2> box{{0.0, 0.0}, {1.0, 1.0}};
  const int level = cfg.grid_level;
  const double h = 1.0 / static_cast<double>(std::uint64_t{1} << level);
  Grid grid(comm, box, level, [h](const irr::Cell<2>& c) {
    const double x = (static_cast<double>(c.anchor[0]) + 0.5) * h,
                 y = (static_cast<double>(c.anchor[1]) + 0.5) * h;
    return Datum{std::sin(6 * x) * std::cos(4 * y)};
  });
  Row row;
  row.data = "CellDomain 2D, uniform level " + std::to_string(level) + ", field u";
  row.cells = grid.global_leaf_count();
  const std::vector<irr::io::Field<Datum>> fields{
      irr::io::scalar<Datum>("u", [](const Datum& d) { return d.u; })};
  const std::vector<irr::io::CellField<Datum>> cell_fields{
      {"u", [](const Datum& d) { return d.u; }}};
  measure(
      comm, cfg, row, grid.local_leaf_count(),
      [&] { irr::io::write_vtkhdf(grid, cfg.dir + "/bench.vtkhdf", fields); },
      [&](const std::string& dir) { irr::io::write_pvtu(grid, dir, "bench", cell_fields); },
      [&] {  // what write_vtkhdf does before its first HDF5 call, phase by phase
        irr::io::detail::VtkHdfPart part;
        return std::array<double, 3>{
            timed(comm,
                  [&] {
                    irr::io::detail::evaluate<Datum>(grid.local_data(), fields, true, "bench",
                                                     part.arrays);
                  }),
            timed(comm,
                  [&] { irr::io::detail::place_rows<Curve>(comm, grid.local_tree(), {}, part); }),
            timed(comm, [&] {
              irr::io::detail::leaf_geometry<Curve>(grid.local_tree(), grid.box(), part);
            })};
      });
  return row;
}

Row elements_row(const mpi::communicator& comm, const Config& cfg) {
  using Curve = irr::curve::Hilbert<2>;
  using Domain = irr::IrregularDomain<Point, irr::stencil::Moore<2>, Curve>;
  Domain d(comm, irr::Box<2>{{0.0, 0.0}, {1.0, 1.0}}, irr::refine::max_elements(32));
  {
    const auto p = static_cast<std::uint64_t>(comm.size()),
               r = static_cast<std::uint64_t>(comm.rank());
    std::mt19937_64 rng(2026 + r);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<Point> pts(cfg.points / p + (r < cfg.points % p ? 1 : 0));
    for (auto& q : pts) q.position = {u(rng), u(rng)};
    d.insert(pts);
    d.build();
  }
  Row row;
  row.data = "IrregularDomain 2D, " + std::to_string(cfg.points) + " points, leaves <= 32, field r";
  row.cells = d.global_leaf_count() + d.global_element_count();
  const std::vector<irr::io::Field<Point>> fields{irr::io::scalar<Point>(
      "r", [](const Point& q) { return std::hypot(q.position[0] - 0.5, q.position[1] - 0.5); })};
  measure(
      comm, cfg, row, d.local_leaf_count() + d.local_element_count(),
      [&] { irr::io::write_vtkhdf(d, cfg.dir + "/bench.vtkhdf", fields); },
      [&](const std::string& dir) { irr::io::write_pvtu(d, dir, "bench"); },  // its leaves only
      [&] {
        irr::io::detail::VtkHdfPart part;
        const auto counts = d.local_tree().counts();
        return std::array<double, 3>{
            timed(comm,
                  [&] {
                    irr::io::detail::evaluate<Point>(d.local_elements(), fields, false, "bench",
                                                     part.arrays);
                  }),
            timed(comm,
                  [&] { irr::io::detail::place_rows<Curve>(comm, d.local_tree(), counts, part); }),
            timed(comm,
                  [&] { irr::io::detail::leaf_geometry<Curve>(d.local_tree(), d.box(), part); })};
      });
  return row;
}

// ---- tables ------------------------------------------------------------------------------------

std::vector<double> warm(const std::vector<double>& t) { return {t.begin() + 1, t.end()}; }

void print(const mpi::communicator& comm, const Config& cfg, const std::vector<Row>& rows) {
  if (comm.rank() != 0) return;
  const int p = comm.size();
  if (cfg.csv) {
    std::printf(
        "data,p,cells,vtkhdf_bytes,pvtu_bytes,vtkhdf_cold_ms,vtkhdf_ms,plain_cold_ms,plain_ms,pvtu_"
        "cold_ms,"
        "pvtu_ms,vtkhdf_over_plain,vtkhdf_over_pvtu\n");
    for (const auto& r : rows) {
      const double v = median(warm(r.vtkhdf)), m = median(warm(r.plain)), x = median(warm(r.pvtu));
      std::printf("\"%s\",%d,%llu,%llu,%llu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n",
                  r.data.c_str(), p, static_cast<unsigned long long>(r.cells),
                  static_cast<unsigned long long>(r.vtkhdf_bytes),
                  static_cast<unsigned long long>(r.pvtu_bytes), r.vtkhdf[0] * 1e3, v * 1e3,
                  r.plain[0] * 1e3, m * 1e3, r.pvtu[0] * 1e3, x * 1e3, v / m, v / x);
    }
    return;
  }
  std::printf(
      "\n### write_vtkhdf against plain MPI-IO of the same bytes and write_pvtu, %d rank%s\n\n", p,
      p == 1 ? "" : "s");
  std::printf(
      "Slowest rank, barrier before; cold = the first call; median and min..max of the %d calls "
      "after it, "
      "the three writers alternating. MPI-IO writes the VTKHDF file's byte count; the element "
      "domain's "
      ".pvtu holds its leaves only (write_pvtu writes no elements), so it has no ratio.\n\n",
      cfg.reps);
  std::printf(
      "| data | p | cells | VTKHDF MB | .pvtu MB | VTKHDF ms cold | VTKHDF ms | min..max | MPI-IO "
      "ms cold | "
      "MPI-IO ms | min..max | .pvtu ms cold | .pvtu ms | min..max | VTKHDF / MPI-IO | VTKHDF / "
      ".pvtu |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& r : rows) {
    const bool same = r.data.starts_with("CellDomain");
    const double v = median(warm(r.vtkhdf)), m = median(warm(r.plain)), x = median(warm(r.pvtu));
    std::printf(
        "| %s | %d | %llu | %.1f | %.1f | %.1f | %.1f | %s | %.1f | %.1f | %s | %.1f | %.1f | %s | "
        "%.2f | %s |\n",
        r.data.c_str(), p, static_cast<unsigned long long>(r.cells),
        static_cast<double>(r.vtkhdf_bytes) / 1e6, static_cast<double>(r.pvtu_bytes) / 1e6,
        r.vtkhdf[0] * 1e3, v * 1e3, spread(warm(r.vtkhdf)).c_str(), r.plain[0] * 1e3, m * 1e3,
        spread(warm(r.plain)).c_str(), r.pvtu[0] * 1e3, x * 1e3, spread(warm(r.pvtu)).c_str(),
        v / m, same ? fmt(v / x, 3).c_str() : "-");
  }
  const Row& c = rows.front();
  const double v = median(warm(c.vtkhdf)), m = median(warm(c.plain)), x = median(warm(c.pvtu));
  std::printf("\n| target (CellDomain row) | figure | met |\n|---|---:|---|\n");
  if (p == 2)
    std::printf("| VTKHDF <= 1.5x MPI-IO of the same bytes at 2 ranks | %.2fx | %s |\n", v / m,
                v / m <= 1.5 ? "yes" : "NO");
  else
    std::printf(
        "| VTKHDF <= 1.5x MPI-IO of the same bytes at 2 ranks | %.2fx at %d rank%s (the target is "
        "at 2) | - |\n",
        v / m, p, p == 1 ? "" : "s");
  std::printf("| VTKHDF below .pvtu at every rank count | %.3fx | %s |\n", v / x,
              v < x ? "yes" : "NO");

  std::printf(
      "\nWhere write_vtkhdf's time goes (median of the warm calls, ms): its preparation, timed "
      "apart "
      "(slowest rank): the fields evaluated, the rows placed in curve order, each leaf's corners "
      "(its cell decoded from the curve); then its steps on rank 0 (create holds the preparation "
      "and the file's creation; each step ends in one agreement).\n\n| data | fields | placement "
      "| corners |");
  const std::array<const char*, 7> names{"create",    "sizes", "points", "topology",
                                         "cell data", "close", "rename"};
  for (const char* n : names) std::printf(" %s |", n);
  std::printf(" sum |\n|---|---:|---:|---:|");
  for (std::size_t i = 0; i < names.size(); ++i) std::printf("---:|");
  std::printf("---:|\n");
  for (const auto& r : rows) {
    std::printf("| %s | %.1f | %.1f | %.1f |", r.data.c_str(), median(r.prepare[0]) * 1e3,
                median(r.prepare[1]) * 1e3, median(r.prepare[2]) * 1e3);
    double sum = 0;
    for (const char* n : names) {
      const auto it = r.steps.find(n);
      const double t = it == r.steps.end() ? 0.0 : median(it->second);
      sum += t;
      std::printf(" %.1f |", t * 1e3);
    }
    std::printf(" %.1f |\n", sum * 1e3);
  }
  std::fflush(stdout);
}

std::string fs_name(long type) {
  switch (static_cast<unsigned long>(type)) {
    case 0xEF53:
      return "ext2/3/4";
    case 0x01021994:
      return "tmpfs";
    case 0x58465342:
      return "xfs";
    case 0x9123683E:
      return "btrfs";
    case 0x794C7630:
      return "overlayfs";
    default: {
      char b[32];
      std::snprintf(b, sizeof b, "0x%lx", static_cast<unsigned long>(type));
      return b;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  mpi::communicator world;
  Config cfg;
  bool dir_given = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      cfg.quick = true;
    else if (std::strcmp(argv[i], "--csv") == 0)
      cfg.csv = true;
    else if (std::strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
      cfg.dir = argv[++i], dir_given = true;
    else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      cfg.reps = std::atoi(argv[++i]);
    else {
      if (world.rank() == 0)
        std::fprintf(stderr, "usage: bench_io [--quick] [--dir DIR] [--reps N] [--csv]\n");
      return 2;
    }
  }
  if (cfg.reps < 1) {
    if (world.rank() == 0) std::fprintf(stderr, "bench_io: --reps >= 1\n");
    return 2;
  }
  if (cfg.quick) {
    cfg.grid_level = 5;
    cfg.points = 10'000;
    cfg.reps = 2;
  }
  int ok_dir = 1;
  if (world.rank() == 0) {
    if (!dir_given) {
      char tmpl[] = "/tmp/irregular-bench-io-XXXXXX";
      if (::mkdtemp(tmpl))
        cfg.dir = tmpl;
      else
        ok_dir = 0;
    } else {
      std::error_code ec;
      fs::create_directories(cfg.dir, ec);
      ok_dir = fs::is_directory(cfg.dir, ec) ? 1 : 0;
    }
  }
  mpi::broadcast(world, ok_dir, 0);
  mpi::broadcast(world, cfg.dir, 0);
  if (!ok_dir) {
    if (world.rank() == 0)
      std::fprintf(stderr, "bench_io: cannot make the directory '%s'\n", cfg.dir.c_str());
    return 2;
  }
  if (world.rank() == 0 && !cfg.csv) {
    struct statfs st {};
    const std::string where =
        ::statfs(cfg.dir.c_str(), &st) == 0 ? fs_name(st.f_type) : "statfs failed";
    std::printf(
        "## VTKHDF output benchmark (%s), %d rank%s\n\nFiles in %s (%s); nothing is synced to the "
        "device "
        "by any writer (HDF5's close does not sync), so the page cache absorbs the writes.\n",
        cfg.quick ? "--quick sizes" : "full sizes", world.size(), world.size() == 1 ? "" : "s",
        cfg.dir.c_str(), where.c_str());
    std::fflush(stdout);
  }
  std::vector<Row> rows;
  rows.push_back(cells_row(world, cfg));
  rows.push_back(elements_row(world, cfg));
  print(world, cfg, rows);
  if (world.rank() == 0 && !dir_given) {
    std::error_code ec;
    fs::remove_all(cfg.dir, ec);
  }
  int f = g_failed ? 1 : 0, any = 0;
  MPI_Allreduce(&f, &any, 1, MPI_INT, MPI_MAX, world);
  return any;
}
