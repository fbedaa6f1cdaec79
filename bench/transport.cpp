// Benchmark of the L3 transport: 10^6 hnodes (24 bytes each) from rank 0 to rank 1 through
// (a) the serialized path, (b) the raw path of sparse_exchange, (c) plain MPI_Send of the bytes;
// plus Boost binary archives against Boost.MPI packed archives for packing. Run with 2 ranks.
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/mpi/transport.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/mpi/packed_iarchive.hpp>
#include <boost/mpi/packed_oarchive.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace {

struct HNode {  // raw path: trivially copyable, no serialize()
  std::uint64_t start;
  std::int32_t level;
  std::int32_t owner;
  double load;
};
static_assert(sizeof(HNode) == 24);
static_assert(irregular::mpi::is_raw_transportable<HNode>);

struct SerHNode {  // the same fields through Boost.Serialization
  std::uint64_t start = 0;
  std::int32_t level = 0;
  std::int32_t owner = 0;
  double load = 0;
  template <class Archive>
  void serialize(Archive& ar, unsigned) { ar & start & level & owner & load; }
};
static_assert(!irregular::mpi::is_raw_transportable<SerHNode>);

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs op `warmup + repeats` times between barriers; median seconds as seen by rank 0.
double median_time(const boost::mpi::communicator& comm, int warmup, int repeats,
                   const std::function<void()>& op) {
  std::vector<double> t;
  for (int i = 0; i < warmup + repeats; ++i) {
    MPI_Barrier(comm);
    const double t0 = now();
    op();
    MPI_Barrier(comm);
    if (i >= warmup) t.push_back(now() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  boost::mpi::environment env(argc, argv);
  boost::mpi::communicator world;
  bool quick = false;
  bool csv = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--csv") == 0) csv = true;
  }
  if (world.size() < 2) {
    if (world.rank() == 0) std::fprintf(stderr, "bench_transport needs 2 ranks (mpiexec -n 2)\n");
    return 1;
  }
  const std::size_t n = quick ? 10'000 : 1'000'000;
  const int warmup = quick ? 1 : 2;
  const int repeats = quick ? 5 : 11;
  const int me = world.rank();
  const auto p = static_cast<std::size_t>(world.size());
  const double mbytes = static_cast<double>(n * sizeof(HNode)) / 1e6;

  std::vector<HNode> raw(n);
  std::vector<SerHNode> ser(n);
  for (std::size_t i = 0; i < n; ++i) {
    raw[i] = {i * 64, static_cast<std::int32_t>(i % 20), static_cast<std::int32_t>(i % 7), 0.5 * static_cast<double>(i)};
    ser[i] = {raw[i].start, raw[i].level, raw[i].owner, raw[i].load};
  }
  std::vector<std::vector<HNode>> out_raw(p);
  std::vector<std::vector<SerHNode>> out_ser(p);
  if (me == 0) {
    out_raw[1] = raw;
    out_ser[1] = ser;
  }
  bool ok = true;
  auto check_raw = [&](const std::vector<HNode>& v) {
    if (me == 1) ok = ok && v.size() == n && v.back().start == raw.back().start && v[n / 2].load == raw[n / 2].load;
  };

  struct Row {
    std::string what;
    double seconds;
  };
  std::vector<Row> rows;

  rows.push_back({"(a) serialized path: sparse_exchange, Boost binary archive", median_time(world, warmup, repeats, [&] {
    const auto got = irregular::mpi::sparse_exchange(world, out_ser, 1);
    if (me == 1) ok = ok && got.values.size() == n && got.values.back().start == raw.back().start;
  })});
  rows.push_back({"(b) raw path: sparse_exchange (NBX, MPI_Issend of MPI_BYTE)", median_time(world, warmup, repeats, [&] {
    check_raw(irregular::mpi::sparse_exchange(world, out_raw, 1).values);
  })});
  rows.push_back({"(b') raw path: pack() into bytes + sparse_exchange of the bytes + unpack()",
                  median_time(world, warmup, repeats, [&] {
    std::vector<std::vector<char>> bytes(p);
    if (me == 0) irregular::mpi::pack(raw, bytes[1]);
    const auto got = irregular::mpi::sparse_exchange(world, bytes, 1);
    std::vector<HNode> v;
    if (me == 1) irregular::mpi::unpack(std::span<const char>(got.values), v);
    check_raw(v);
  })});
  std::vector<HNode> prealloc(n);
  rows.push_back({"(c) plain MPI_Send/MPI_Recv of the bytes, preallocated buffer", median_time(world, warmup, repeats, [&] {
    const int bytes = static_cast<int>(n * sizeof(HNode));
    if (me == 0) MPI_Send(raw.data(), bytes, MPI_BYTE, 1, 2, world);
    if (me == 1) {
      MPI_Recv(prealloc.data(), bytes, MPI_BYTE, 0, 2, world, MPI_STATUS_IGNORE);
      check_raw(prealloc);
    }
  })});
  rows.push_back({"(c') plain MPI: MPI_Probe + fresh std::vector + MPI_Recv", median_time(world, warmup, repeats, [&] {
    if (me == 0) MPI_Send(raw.data(), static_cast<int>(n * sizeof(HNode)), MPI_BYTE, 1, 3, world);
    if (me == 1) {
      MPI_Status st;
      MPI_Probe(0, 3, world, &st);
      int count = 0;
      MPI_Get_count(&st, MPI_BYTE, &count);
      std::vector<HNode> v(static_cast<std::size_t>(count) / sizeof(HNode));
      MPI_Recv(v.data(), count, MPI_BYTE, 0, 3, world, MPI_STATUS_IGNORE);
      check_raw(v);
    }
  })});

  // Packing alone on rank 0 (rank 1 idles between barriers): which archive serializes faster.
  std::vector<Row> pack_rows;
  pack_rows.push_back({"Boost binary archive (irregular::mpi::pack + unpack)", median_time(world, warmup, repeats, [&] {
    if (me != 0) return;
    std::vector<char> buf;
    irregular::mpi::pack(std::span<const SerHNode>(ser), buf);
    std::vector<SerHNode> back;
    irregular::mpi::unpack(std::span<const char>(buf), back);
    ok = ok && back.size() == n && back.back().start == ser.back().start;
  })});
  pack_rows.push_back({"Boost.MPI packed archive (MPI_Pack), pack + unpack", median_time(world, warmup, repeats, [&] {
    if (me != 0) return;
    boost::mpi::packed_oarchive::buffer_type buf;
    {
      boost::mpi::packed_oarchive oa(world, buf);
      for (const SerHNode& h : ser) oa << h;
    }
    std::vector<SerHNode> back(n);
    boost::mpi::packed_iarchive ia(world, buf);
    for (SerHNode& h : back) ia >> h;
    ok = ok && back.back().start == ser.back().start;
  })});

  int local_ok = ok ? 1 : 0;
  int all_ok = 0;
  MPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_MIN, world);
  if (me == 0) {
    const double plain = rows[3].seconds;
    if (csv) {
      std::printf("case,hnodes,median_s,MB_per_s,fraction_of_plain\n");
      for (const auto& r : rows)
        std::printf("\"%s\",%zu,%.6f,%.1f,%.3f\n", r.what.c_str(), n, r.seconds, mbytes / r.seconds, plain / r.seconds);
      for (const auto& r : pack_rows)
        std::printf("\"pack: %s\",%zu,%.6f,%.1f,\n", r.what.c_str(), n, r.seconds, mbytes / r.seconds);
    } else {
      std::printf("## transport: %zu hnodes (24 bytes) from rank 0 to rank 1, %d ranks\n\n", n, world.size());
      std::printf("CPU: %s; median of %d after %d warm-up; MB/s counts 24 bytes per hnode\n\n",
                  cpu_name().c_str(), repeats, warmup);
      std::printf("| path | median ms | MB/s | vs plain MPI (c) |\n|---|---:|---:|---:|\n");
      for (const auto& r : rows)
        std::printf("| %s | %.3f | %.1f | %.0f%% |\n", r.what.c_str(), 1e3 * r.seconds, mbytes / r.seconds,
                    100.0 * plain / r.seconds);
      std::printf("\n| serialize %zu hnodes (rank 0 only) | median ms | MB/s |\n|---|---:|---:|\n", n);
      for (const auto& r : pack_rows)
        std::printf("| %s | %.3f | %.1f |\n", r.what.c_str(), 1e3 * r.seconds, mbytes / r.seconds);
    }
    if (!all_ok) std::fprintf(stderr, "bench_transport: received data did not match what was sent\n");
  }
  return all_ok ? 0 : 1;
}
