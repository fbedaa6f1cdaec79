// Checkpoint and restart ("Benchmarks"): save() and load() of both domains against
// plain MPI-IO of the same bytes and against p4est_save_ext / p4est_load_ext, and the cost of the
// checksums. Runs at whatever rank count it is given (the tables record p).
//   1. Bandwidth: an IrregularDomain of 10^7 16-byte elements (uniform random points in the unit
//      square, refine::max_elements(32), Hilbert curve) and a CellDomain of 2^20 leaves (uniform
//      level 10, 16-byte datum, Hilbert curve). save() against each rank writing its share of
//      the same total bytes (the checkpoint's file size) at a prefix-sum offset with
//      MPI_File_write_at_all, then MPI_File_sync and MPI_File_close; load() against
//      MPI_File_read_at_all of the same bytes. Same directory, same run, alternating repeats.
//      GB/s = file bytes / time (both sides move the same number of bytes).
//      Target: ours >= 80% of plain MPI-IO for save and for load, checksums included.
//   2. Beside p4est (when installed): the p4est anchor mesh (circle, levels 6..14, FULL 2:1
//      balance, 244,054 leaves; Morton curve, p4est's z-order) with 16 bytes per leaf: our
//      CellDomain::save / load against p4est_save_ext(save_data=1, save_partition=0) /
//      p4est_load_ext(load_data=1, autopartition=1), the rank-count-independent variants.
//      Target: ours <= 1.0x p4est's time.
//   3. The checksum (XXH3-64, irregular::checkpoint::checksum) over one 256 MiB buffer, one core
//      (rank 0; the other ranks wait). Target: >= 5 GB/s.
// Times: the slowest rank, barrier before, median of the repeats after warm-up. Write targets
// are removed before each timed write (outside the timing), so no write replaces an existing
// file. Exit 1 when a load does not give back the saved counts and contents (order-independent
// sum of per-record XXH3 hashes), or plain MPI-IO does not read back its bytes.
// Usage: mpiexec -n P bench_checkpoint [--quick] [--dir DIR] [--reps N]
//   --dir: where the files go (default: a fresh directory under /tmp, removed at the end).
#include <irregular/irregular.hpp>
#include <irregular/checkpoint/checksum.hpp>
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>

#include "detail/circle_mesh.hpp"
#include "detail/timing.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#ifdef IRREGULAR_HAVE_P4EST
#include <p4est_extended.h>
#endif

#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace {

namespace irr = irregular;
namespace mpi = boost::mpi;
namespace cm = bench::circle_mesh;
namespace fs = std::filesystem;
using bench::max_over;
using bench::median;
using bench::now_s;

struct Config {
  bool quick = false;
  std::string dir;
  int warmups = 1, reps = 5;
  std::uint64_t elements = 10'000'000;
  int grid_level = 10;          // 4^10 = 1,048,576 leaves
  int circle_level = 14;        // the anchor: 244,054 leaves
  std::size_t checksum_mib = 256;
};

bool g_failed = false;
void fail(const mpi::communicator& comm, const std::string& what) {
  g_failed = true;
  if (comm.rank() == 0) std::fprintf(stderr, "bench_checkpoint: FAILED: %s\n", what.c_str());
}

std::string fmt(double x, int prec = 2) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, x);
  return b;
}
unsigned long long ull(std::uint64_t x) { return static_cast<unsigned long long>(x); }
// "min..max" of repeated times, in ms.
std::string spread(const std::vector<double>& t) {
  if (t.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(t.begin(), t.end());
  return fmt(*lo * 1e3, 1) + ".." + fmt(*hi * 1e3, 1);
}

// The slowest rank's seconds of one collective call, barrier before.
// Its thread CPU seconds (the slowest rank's, CLOCK_THREAD_CPUTIME_ID: user + system time of the
// calling thread, MPI's polling included, time spent waiting for the device or the scheduler not)
// go to *cpu when given.
template <class F>
double timed(const mpi::communicator& comm, F&& f, double* cpu = nullptr) {
  comm.barrier();
  const double t0 = now_s(), c0 = bench::cpu_now_s();
  f();
  const double c1 = bench::cpu_now_s(), t1 = now_s();
  if (cpu) *cpu = max_over(comm, c1 - c0);
  return max_over(comm, t1 - t0);
}

void remove_file(const mpi::communicator& comm, const std::string& path) {
  if (comm.rank() == 0) {
    std::error_code ec;
    fs::remove(path, ec);
  }
  comm.barrier();
}

std::uint64_t file_size(const mpi::communicator& comm, const std::string& path) {
  std::uint64_t s = 0;
  if (comm.rank() == 0) s = fs::file_size(path);
  mpi::broadcast(comm, s, 0);
  return s;
}

// An order-independent digest of records: the sum of their XXH3 hashes, over all ranks.
template <class T>
std::uint64_t digest(const mpi::communicator& comm, std::span<const T> v) {
  std::uint64_t s = 0, all = 0;
  for (const T& x : v) s += irr::checkpoint::checksum(std::as_bytes(std::span<const T>(&x, 1)));
  mpi::all_reduce(comm, s, all, std::plus<std::uint64_t>());
  return all;
}

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
// Bytes that are not all zero (a file system could store zeros sparsely).
void fill(std::span<std::byte> b, std::uint64_t seed) {
  std::size_t i = 0;
  for (; i + 8 <= b.size(); i += 8) {
    const std::uint64_t w = splitmix(seed + i);
    std::memcpy(b.data() + i, &w, 8);
  }
  for (; i < b.size(); ++i) b[i] = static_cast<std::byte>(splitmix(seed + i));
}

// ---- plain MPI-IO: the reference ---------------------------------------------------------------

void check(const mpi::communicator& comm, int rc, const char* what, const std::string& path) {
  if (rc == MPI_SUCCESS) return;
  char reason[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, reason, &len);
  std::fprintf(stderr, "bench_checkpoint: rank %d: %s '%s': %.*s\n", comm.rank(), what, path.c_str(), len, reason);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

// Each rank's share of `total` bytes: [r * total / p, (r + 1) * total / p).
std::uint64_t share_begin(std::uint64_t total, int r, int p) {
  return total / static_cast<std::uint64_t>(p) * static_cast<std::uint64_t>(r) +
         total % static_cast<std::uint64_t>(p) * static_cast<std::uint64_t>(r) / static_cast<std::uint64_t>(p);
}

struct Plain {
  std::string path;
  std::uint64_t offset = 0;
  std::vector<std::byte> out, in;

  Plain(const mpi::communicator& comm, std::string file, std::uint64_t total) : path(std::move(file)) {
    const int me = comm.rank(), p = comm.size();
    offset = share_begin(total, me, p);
    const std::uint64_t n = share_begin(total, me + 1, p) - offset;
    if (n > static_cast<std::uint64_t>(INT_MAX)) {
      std::fprintf(stderr, "bench_checkpoint: a rank's share (%llu bytes) exceeds one MPI call\n", ull(n));
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    out.resize(n);
    in.resize(n);
    fill(out, 0x5eed0000ull + offset);
  }
  void write(const mpi::communicator& comm) {
    MPI_File fh;
    check(comm, MPI_File_open(MPI_Comm(comm), path.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
          "MPI_File_open", path);
    MPI_Status st;
    check(comm, MPI_File_write_at_all(fh, static_cast<MPI_Offset>(offset), out.data(), static_cast<int>(out.size()),
                                      MPI_BYTE, &st),
          "MPI_File_write_at_all", path);
    check(comm, MPI_File_sync(fh), "MPI_File_sync", path);
    check(comm, MPI_File_close(&fh), "MPI_File_close", path);
  }
  void read(const mpi::communicator& comm) {
    MPI_File fh;
    check(comm, MPI_File_open(MPI_Comm(comm), path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), "MPI_File_open",
          path);
    MPI_Status st;
    check(comm, MPI_File_read_at_all(fh, static_cast<MPI_Offset>(offset), in.data(), static_cast<int>(in.size()),
                                     MPI_BYTE, &st),
          "MPI_File_read_at_all", path);
    check(comm, MPI_File_close(&fh), "MPI_File_close", path);
  }
  // Whether every rank read back what it wrote. Collective.
  bool verified(const mpi::communicator& comm) {
    int bad = in != out, any = 0;
    mpi::all_reduce(comm, bad, any, mpi::maximum<int>());
    std::fill(in.begin(), in.end(), std::byte{0});
    return any == 0;
  }
};

// ---- 1. bandwidth against plain MPI-IO -----------------------------------------------------------

struct Row {
  std::string data;
  std::uint64_t count = 0, file_bytes = 0, payload_bytes = 0;
  std::vector<double> save, load, write, read;
  std::vector<double> save_cpu, load_cpu, write_cpu, read_cpu;
};

// Repeats: remove, save | remove, plain write | load | plain read. `save()` and `load()` are
// ours; `load()` returns whether the loaded domain has the saved counts and contents.
template <class Save, class Load>
void measure_io(const mpi::communicator& comm, const Config& cfg, const std::string& ours_path,
                const std::string& plain_path, Row& row, Save&& save, Load&& load) {
  // A first save gives the file size the plain side writes.
  remove_file(comm, ours_path);
  save();
  row.file_bytes = file_size(comm, ours_path);
  Plain plain(comm, plain_path, row.file_bytes);
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    const bool keep = rep >= cfg.warmups;
    double sc = 0, wc = 0, lc = 0, rc = 0;
    remove_file(comm, ours_path);
    const double s = timed(comm, save, &sc);
    remove_file(comm, plain_path);
    const double w = timed(comm, [&] { plain.write(comm); }, &wc);
    bool ok = true;
    const double l = timed(comm, [&] { ok = load(); }, &lc);
    if (!ok) fail(comm, row.data + ": load did not give back the saved counts and contents");
    const double r = timed(comm, [&] { plain.read(comm); }, &rc);
    if (!plain.verified(comm)) fail(comm, row.data + ": plain MPI-IO did not read back its bytes");
    if (keep) {
      row.save.push_back(s);
      row.write.push_back(w);
      row.load.push_back(l);
      row.read.push_back(r);
      row.save_cpu.push_back(sc);
      row.write_cpu.push_back(wc);
      row.load_cpu.push_back(lc);
      row.read_cpu.push_back(rc);
    }
  }
  remove_file(comm, ours_path);
  remove_file(comm, plain_path);
}

struct Point {
  std::array<double, 2> position;
};
static_assert(sizeof(Point) == 16);
struct Datum {
  std::array<double, 2> centre;
};
static_assert(sizeof(Datum) == 16);

Row elements_row(const mpi::communicator& comm, const Config& cfg) {
  using Domain = irr::IrregularDomain<Point, irr::stencil::Moore<2, 1>, irr::curve::Hilbert<2>>;
  const irr::Box<2> box{{0.0, 0.0}, {1.0, 1.0}};
  const int me = comm.rank(), p = comm.size();
  const std::uint64_t n = cfg.elements;
  const std::uint64_t mine = share_begin(n, me + 1, p) - share_begin(n, me, p);
  std::optional<Domain> dom;
  dom.emplace(comm, box, irr::refine::max_elements(32));
  {
    std::mt19937_64 rng(0xc0ffee + static_cast<std::uint64_t>(me));
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<Point> pts(mine);
    for (auto& x : pts) x.position = {u(rng), u(rng)};
    dom->insert(pts);
  }
  dom->build();
  Row row;
  row.data = "IrregularDomain, 16-byte elements";
  row.count = dom->global_element_count();
  row.payload_bytes = row.count * sizeof(Point);
  const std::uint64_t leaves = dom->global_leaf_count();
  const std::uint64_t sum = digest<Point>(comm, dom->local_elements());
  const std::string path = cfg.dir + "/elements.ckp", plain = cfg.dir + "/elements.plain";
  measure_io(
      comm, cfg, path, plain, row, [&] { dom->save(path, {.type_tag = "point16"}); },
      [&] {
        auto d = Domain::load(comm, path, irr::refine::max_elements(32), {}, {.type_tag = "point16"});
        return d.global_element_count() == n && d.global_leaf_count() == leaves &&
               digest<Point>(comm, d.local_elements()) == sum;
      });
  row.data += " (" + std::to_string(leaves) + " leaves)";
  return row;
}

Row cells_row(const mpi::communicator& comm, const Config& cfg) {
  using Grid = irr::CellDomain<Datum, irr::stencil::Moore<2>, irr::curve::Hilbert<2>>;
  const irr::Box<2> box{{0.0, 0.0}, {1.0, 1.0}};
  const int level = cfg.grid_level;
  const double h = 1.0 / static_cast<double>(std::uint64_t{1} << level);
  Grid grid(comm, box, level, [h](const irr::Cell<2>& c) {
    return Datum{{(static_cast<double>(c.anchor[0]) + 0.5) * h, (static_cast<double>(c.anchor[1]) + 0.5) * h}};
  });
  Row row;
  row.data = "CellDomain, uniform level " + std::to_string(level) + ", 16-byte datum";
  row.count = grid.global_leaf_count();
  row.payload_bytes = row.count * sizeof(Datum);
  const std::uint64_t sum = digest<Datum>(comm, grid.local_data());
  const std::string path = cfg.dir + "/cells.ckp", plain = cfg.dir + "/cells.plain";
  measure_io(
      comm, cfg, path, plain, row, [&] { grid.save(path, {.type_tag = "datum16"}); },
      [&] {
        auto g = Grid::load(comm, path, {}, {.type_tag = "datum16"});
        return g.global_leaf_count() == row.count && digest<Datum>(comm, g.local_data()) == sum;
      });
  return row;
}

void print_io(const mpi::communicator& comm, const Config& cfg, const std::vector<Row>& rows) {
  if (comm.rank() != 0) return;
  std::printf("\n### 1. Save and load bandwidth against plain MPI-IO of the same bytes, %d rank%s\n\n", comm.size(),
              comm.size() == 1 ? "" : "s");
  std::printf("Times: slowest rank, barrier before, median of %d after %d warm-up. GB/s = the checkpoint's file "
              "bytes / time (plain MPI-IO moves exactly as many bytes); the target is on wall time; CPU = "
              "CLOCK_THREAD_CPUTIME_ID of the slowest rank (user + system, MPI polling included; not the time "
              "spent waiting for the device or for a core on a shared machine). Plain write = MPI_File_open + "
              "MPI_File_write_at_all at a prefix-sum offset + MPI_File_sync + MPI_File_close; plain read = "
              "MPI_File_open + MPI_File_read_at_all + MPI_File_close. Ours: save() (records in curve order, "
              "XXH3 block checksums, temporary file, sync, rename, directory sync); load() (header, checksum "
              "tables, even share read, every block verified, partition by loads). Reads may come from the page "
              "cache (the files were just written; it is not dropped).\n\n",
              cfg.reps, cfg.warmups);
  std::printf("| data | p | records | file MB | payload MB | operation | ours ms | ours min..max ms | ours CPU ms | "
              "ours GB/s | plain MPI-IO ms | plain min..max ms | plain CPU ms | plain GB/s | ours / plain (GB/s) | "
              "target | met |\n"
              "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
  for (const auto& r : rows) {
    const double mb = static_cast<double>(r.file_bytes) / 1e6;
    auto line = [&](const char* op, const std::vector<double>& ours, const std::vector<double>& ours_cpu,
                    const std::vector<double>& plain, const std::vector<double>& plain_cpu) {
      const double o = median(ours), q = median(plain);
      const double ratio = o > 0 ? q / o : 0;
      std::printf("| %s | %d | %llu | %.1f | %.1f | %s | %.1f | %s | %.1f | %.2f | %.1f | %s | %.1f | %.2f | %.0f%% | "
                  ">= 80%% | %s |\n",
                  r.data.c_str(), comm.size(), ull(r.count), mb, static_cast<double>(r.payload_bytes) / 1e6, op,
                  o * 1e3, spread(ours).c_str(), median(ours_cpu) * 1e3, mb / 1e3 / o, q * 1e3,
                  spread(plain).c_str(), median(plain_cpu) * 1e3, mb / 1e3 / q, ratio * 100,
                  ratio >= 0.8 ? "yes" : "NO");
    };
    line("save vs plain write", r.save, r.save_cpu, r.write, r.write_cpu);
    line("load vs plain read", r.load, r.load_cpu, r.read, r.read_cpu);
  }
  std::fflush(stdout);
}

// ---- 2. beside p4est on the anchor mesh ----------------------------------------------------------

double side(int level) { return 1.0 / static_cast<double>(std::uint64_t{1} << level); }
Datum centre_of(const irr::Cell<2>& c) {
  const double h = side(c.level);
  return {{(static_cast<double>(c.anchor[0]) + 0.5) * h, (static_cast<double>(c.anchor[1]) + 0.5) * h}};
}

struct AnchorRow {
  std::uint64_t ours_leaves = 0, p4est_leaves = 0, ours_bytes = 0, p4est_bytes = 0;
  std::vector<double> ours_save, ours_load, p4_save, p4_load;
  std::vector<double> ours_save_cpu, ours_load_cpu, p4_save_cpu, p4_load_cpu;
};

// Our circle mesh as bench/cells.cpp builds it: uniform level 6, one round of mark + adapt per
// level, FULL 2:1 balance, rebalance.
using CircleGrid = irr::CellDomain<Datum, irr::stencil::Moore<2>, irr::curve::Morton<2>>;
CircleGrid circle_grid(const mpi::communicator& comm, int level) {
  auto split = [](const Datum&, const irr::Cell<2>& c) { return centre_of(c); };
  auto merge = [](std::span<const Datum> kids) { return kids.front(); };
  CircleGrid d(comm, irr::Box<2>{{0.0, 0.0}, {1.0, 1.0}}, cm::min_level, [](const irr::Cell<2>& c) { return centre_of(c); });
  for (int lv = cm::min_level; lv < level; ++lv) {
    for (std::size_t i = 0; i < d.local_leaf_count(); ++i) {
      const auto c = d.cell(i);
      if (c.level >= level) continue;
      const double h = side(c.level);
      if (cm::splits(static_cast<double>(c.anchor[0]) * h, static_cast<double>(c.anchor[1]) * h, h))
        d.mark(i, irr::Mark::refine);
    }
    d.adapt(split, merge);
  }
  d.balance(irr::BalanceKind::full, split);
  d.rebalance();
  return d;
}

#ifdef IRREGULAR_HAVE_P4EST
int g_max_level = 14;
int p4_refine(p4est_t*, p4est_topidx_t, p4est_quadrant_t* q) {
  if (q->level >= g_max_level) return 0;
  const double h = static_cast<double>(P4EST_QUADRANT_LEN(q->level)) / P4EST_ROOT_LEN;
  return cm::splits(static_cast<double>(q->x) / P4EST_ROOT_LEN, static_cast<double>(q->y) / P4EST_ROOT_LEN, h);
}
Datum p4_centre(const p4est_quadrant_t* q) {
  const double h = static_cast<double>(P4EST_QUADRANT_LEN(q->level)) / P4EST_ROOT_LEN;
  return {{static_cast<double>(q->x) / P4EST_ROOT_LEN + h / 2, static_cast<double>(q->y) / P4EST_ROOT_LEN + h / 2}};
}
void p4_init(p4est_t*, p4est_topidx_t, p4est_quadrant_t* q) {
  const Datum x = p4_centre(q);
  std::memcpy(q->p.user_data, &x, sizeof x);
}
// The local quadrants' data, in order.
std::vector<Datum> p4_data(p4est_t* p4) {
  std::vector<Datum> out;
  out.reserve(static_cast<std::size_t>(p4->local_num_quadrants));
  for (p4est_topidx_t t = p4->first_local_tree; t <= p4->last_local_tree && t >= 0; ++t) {
    auto* tree = p4est_tree_array_index(p4->trees, t);
    for (std::size_t i = 0; i < tree->quadrants.elem_count; ++i) {
      const auto* q = p4est_quadrant_array_index(&tree->quadrants, i);
      Datum d;
      std::memcpy(&d, q->p.user_data, sizeof d);
      out.push_back(d);
    }
  }
  return out;
}
#endif

AnchorRow anchor_row(const mpi::communicator& comm, const Config& cfg, bool have_p4est) {
  AnchorRow row;
  const int level = cfg.circle_level;
  CircleGrid grid = circle_grid(comm, level);
  row.ours_leaves = grid.global_leaf_count();
  const std::uint64_t sum = digest<Datum>(comm, grid.local_data());
  const std::string ours_path = cfg.dir + "/circle.ckp", p4_path = cfg.dir + "/circle.p4est";
#ifdef IRREGULAR_HAVE_P4EST
  g_max_level = level;
  p4est_connectivity_t* conn = p4est_connectivity_new_unitsquare();
  p4est_t* p4 = p4est_new_ext(MPI_Comm(comm), conn, 0, cm::min_level, 1, sizeof(Datum), p4_init, nullptr);
  p4est_refine(p4, 1, p4_refine, p4_init);
  p4est_balance(p4, P4EST_CONNECT_FULL, p4_init);
  p4est_partition(p4, 0, nullptr);
  row.p4est_leaves = static_cast<std::uint64_t>(p4->global_num_quadrants);
  const std::uint64_t p4_sum = digest<Datum>(comm, p4_data(p4));
#endif
  (void)have_p4est;
  for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
    const bool keep = rep >= cfg.warmups;
    remove_file(comm, ours_path);
    double osc = 0, olc = 0;
    const double os = timed(comm, [&] { grid.save(ours_path, {.type_tag = "datum16"}); }, &osc);
    row.ours_bytes = file_size(comm, ours_path);
    std::optional<CircleGrid> loaded;
    const double ol = timed(
        comm, [&] { loaded.emplace(CircleGrid::load(comm, ours_path, {}, {.type_tag = "datum16"})); }, &olc);
    if (loaded->global_leaf_count() != row.ours_leaves || digest<Datum>(comm, loaded->local_data()) != sum)
      fail(comm, "circle mesh: our load did not give back the saved leaves and data");
    loaded.reset();
    if (keep) {
      row.ours_save.push_back(os);
      row.ours_load.push_back(ol);
      row.ours_save_cpu.push_back(osc);
      row.ours_load_cpu.push_back(olc);
    }
#ifdef IRREGULAR_HAVE_P4EST
    remove_file(comm, p4_path);
    double psc = 0, plc = 0;
    const double ps = timed(comm, [&] { p4est_save_ext(p4_path.c_str(), p4, 1, 0); }, &psc);
    row.p4est_bytes = file_size(comm, p4_path);
    p4est_t* back = nullptr;
    p4est_connectivity_t* back_conn = nullptr;
    const double pl = timed(comm, [&] {
      back = p4est_load_ext(p4_path.c_str(), MPI_Comm(comm), sizeof(Datum), 1, 1, 0, nullptr, &back_conn);
    }, &plc);
    if (static_cast<std::uint64_t>(back->global_num_quadrants) != row.p4est_leaves ||
        digest<Datum>(comm, p4_data(back)) != p4_sum)
      fail(comm, "circle mesh: p4est_load_ext did not give back the saved quadrants and data");
    p4est_destroy(back);
    p4est_connectivity_destroy(back_conn);
    if (keep) {
      row.p4_save.push_back(ps);
      row.p4_load.push_back(pl);
      row.p4_save_cpu.push_back(psc);
      row.p4_load_cpu.push_back(plc);
    }
#endif
  }
  remove_file(comm, ours_path);
  remove_file(comm, p4_path);
#ifdef IRREGULAR_HAVE_P4EST
  p4est_destroy(p4);
  p4est_connectivity_destroy(conn);
  if (row.p4est_leaves != row.ours_leaves) fail(comm, "circle mesh: our leaf count differs from p4est's");
#endif
  if (level == 14 && row.ours_leaves != 244054) fail(comm, "circle mesh: not the anchor's 244,054 leaves");
  return row;
}

void print_anchor(const mpi::communicator& comm, const Config& cfg, const AnchorRow& r, bool have_p4est) {
  if (comm.rank() != 0) return;
  std::printf("\n### 2. Beside p4est_save_ext / p4est_load_ext: circle mesh, levels %d..%d, FULL 2:1 balance, 16 "
              "bytes per leaf, %d rank%s\n\n",
              cm::min_level, cfg.circle_level, comm.size(), comm.size() == 1 ? "" : "s");
  if (!have_p4est) {
    std::printf("p4est not installed (install libp4est-dev and reconfigure): our side only, no ratio.\n\n");
  }
  std::printf("Leaves: ours %llu, p4est %s. Files: ours %llu bytes, p4est %s bytes. Times: slowest rank, barrier "
              "before, median of %d after %d warm-up. p4est: p4est_save_ext(save_data=1, save_partition=0), "
              "p4est_load_ext(load_data=1, autopartition=1) (the variants whose file does not depend on the "
              "rank count). Our save writes a temporary file, syncs it (MPI_File_sync), renames it and syncs the "
              "directory; p4est_save_ext fsyncs only the connectivity and header rank 0 writes first, not the "
              "quadrants it then writes through MPI-IO (seen with strace on libp4est 2.2): each time is what "
              "the call takes.\n\n",
              ull(r.ours_leaves), have_p4est ? std::to_string(r.p4est_leaves).c_str() : "-", ull(r.ours_bytes),
              have_p4est ? std::to_string(r.p4est_bytes).c_str() : "-", cfg.reps, cfg.warmups);
  std::printf("| operation | p | ours ms | ours min..max ms | ours CPU ms | p4est ms | p4est min..max ms | p4est CPU "
              "ms | ours / p4est (wall) | ours / p4est (CPU) | target (wall) | met |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
  auto line = [&](const char* op, const std::vector<double>& ours, const std::vector<double>& ours_cpu,
                  const std::vector<double>& p4, const std::vector<double>& p4_cpu) {
    const double o = median(ours) * 1e3, q = median(p4) * 1e3;
    const double oc = median(ours_cpu) * 1e3, qc = median(p4_cpu) * 1e3;
    if (have_p4est)
      std::printf("| %s | %d | %.1f | %s | %.1f | %.1f | %s | %.1f | %.2fx | %.2fx | <= 1.0x | %s |\n", op,
                  comm.size(), o, spread(ours).c_str(), oc, q, spread(p4).c_str(), qc, o / q, oc / qc,
                  o <= q ? "yes" : "NO");
    else
      std::printf("| %s | %d | %.1f | %s | %.1f | - | - | - | - | - | <= 1.0x | - |\n", op, comm.size(), o,
                  spread(ours).c_str(), oc);
  };
  line("save vs p4est_save_ext", r.ours_save, r.ours_save_cpu, r.p4_save, r.p4_save_cpu);
  line("load vs p4est_load_ext", r.ours_load, r.ours_load_cpu, r.p4_load, r.p4_load_cpu);
  std::fflush(stdout);
}

// ---- 3. the checksum -------------------------------------------------------------------------

void checksum_table(const mpi::communicator& comm, const Config& cfg) {
  double t = 0;
  const std::size_t bytes = cfg.checksum_mib << 20;
  if (comm.rank() == 0) {
    std::vector<std::byte> buf(bytes);
    fill(buf, 42);
    std::vector<double> ts;
    volatile std::uint64_t sink = 0;
    for (int rep = 0; rep < cfg.warmups + cfg.reps; ++rep) {
      const double t0 = now_s();
      sink = sink + irr::checkpoint::checksum(buf);
      const double t1 = now_s();
      if (rep >= cfg.warmups) ts.push_back(t1 - t0);
    }
    t = median(ts);
    const double gbs = static_cast<double>(bytes) / 1e9 / t;
    std::printf("\n### 3. Checksum cost: irregular::checkpoint::checksum (XXH3-64) over %zu MiB, one core\n\n"
                "Median of %d after %d warm-up, rank 0 alone (the others wait).\n\n"
                "| buffer | ms | GB/s | target | met |\n|---|---:|---:|---|---|\n"
                "| %zu MiB | %.1f | %.2f | >= 5 GB/s | %s |\n",
                cfg.checksum_mib, cfg.reps, cfg.warmups, cfg.checksum_mib, t * 1e3, gbs, gbs >= 5 ? "yes" : "NO");
    std::fflush(stdout);
  }
  comm.barrier();
}

// ---- where the files go ----------------------------------------------------------------------

std::string fs_name(long type) {
  switch (static_cast<unsigned long>(type)) {
    case 0xEF53: return "ext2/3/4";
    case 0x01021994: return "tmpfs";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x794C7630: return "overlayfs";
    case 0x6969: return "nfs";
    case 0x0BD00BD0: return "lustre";
    case 0x47504653: return "gpfs";
    case 0x65735546: return "fuse";
    case 0x2FC12FC1: return "zfs";
    default: {
      char b[32];
      std::snprintf(b, sizeof b, "unknown (0x%lx)", static_cast<unsigned long>(type));
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
    if (std::strcmp(argv[i], "--quick") == 0) cfg.quick = true;
    else if (std::strcmp(argv[i], "--dir") == 0 && i + 1 < argc) cfg.dir = argv[++i], dir_given = true;
    else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) cfg.reps = std::atoi(argv[++i]);
    else {
      if (world.rank() == 0) std::fprintf(stderr, "usage: bench_checkpoint [--quick] [--dir DIR] [--reps N]\n");
      return 2;
    }
  }
  if (cfg.reps < 1) {
    if (world.rank() == 0) std::fprintf(stderr, "bench_checkpoint: --reps >= 1\n");
    return 2;
  }
  if (cfg.quick) {
    cfg.elements = 100'000;
    cfg.grid_level = 6;
    cfg.circle_level = 9;
    cfg.checksum_mib = 16;
    cfg.warmups = 0;
    cfg.reps = 1;
  }
  // The directory: given, or a fresh one under /tmp (rank 0 makes it; removed at the end).
  int ok_dir = 1;
  if (world.rank() == 0) {
    if (!dir_given) {
      char tmpl[] = "/tmp/irregular-bench-checkpoint-XXXXXX";
      if (::mkdtemp(tmpl)) cfg.dir = tmpl;
      else ok_dir = 0;
    } else {
      std::error_code ec;
      fs::create_directories(cfg.dir, ec);
      ok_dir = fs::is_directory(cfg.dir, ec) ? 1 : 0;
    }
  }
  mpi::broadcast(world, ok_dir, 0);
  mpi::broadcast(world, cfg.dir, 0);
  if (!ok_dir) {
    if (world.rank() == 0) std::fprintf(stderr, "bench_checkpoint: cannot make the directory '%s'\n", cfg.dir.c_str());
    return 2;
  }
  bool have_p4est = false;
#ifdef IRREGULAR_HAVE_P4EST
  have_p4est = true;
  sc_init(MPI_Comm(world), 0, 0, nullptr, SC_LP_ERROR);
  p4est_init(nullptr, SC_LP_ERROR);
#endif
  if (world.rank() == 0) {
    struct statfs st {};
    std::string where = "statfs failed";
    if (::statfs(cfg.dir.c_str(), &st) == 0)
      where = fs_name(st.f_type) + ", " + fmt(static_cast<double>(st.f_bavail) * static_cast<double>(st.f_bsize) / 1e9, 1) +
              " GB free";
    std::printf("## Checkpoint benchmark (%s), %d rank%s\n\n", cfg.quick ? "--quick sizes" : "full sizes", world.size(),
                world.size() == 1 ? "" : "s");
    std::printf("Files in %s (%s). The page cache cannot be dropped here: loads and plain reads of files just "
                "written may come from memory, not the device. p4est: %s.\n",
                cfg.dir.c_str(), where.c_str(),
                have_p4est ? "installed (section 2 side by side)" : "not installed (section 2 without p4est)");
    std::fflush(stdout);
  }

  std::vector<Row> rows;
  rows.push_back(elements_row(world, cfg));
  rows.push_back(cells_row(world, cfg));
  print_io(world, cfg, rows);
  print_anchor(world, cfg, anchor_row(world, cfg, have_p4est), have_p4est);
  checksum_table(world, cfg);

#ifdef IRREGULAR_HAVE_P4EST
  sc_finalize();
#endif
  if (world.rank() == 0 && !dir_given) {
    std::error_code ec;
    fs::remove_all(cfg.dir, ec);
  }
  int f = g_failed ? 1 : 0, any = 0;
  MPI_Allreduce(&f, &any, 1, MPI_INT, MPI_MAX, world);
  return any;
}
