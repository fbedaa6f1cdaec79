// Space-filling curve throughput: encode (cell -> index) and decode (index -> cell) for Morton,
// Hilbert and Peano in several dimensions, next to a naive per-level/bit-loop reference.
// Usage: bench_curves [--quick] [--csv]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>
#include <random>
#include <string>
#include <vector>

namespace {

using irregular::Cell;
using irregular::coord_t;
namespace det = irregular::detail;

bool g_csv = false;
volatile std::uint64_t g_sink = 0;  // keeps results alive

// ---- naive references -------------------------------------------------------------------

template <int D>
std::uint64_t naive_morton_encode(const Cell<D>& c) {
  std::uint64_t r = 0;
  for (int j = 0; j < c.level; ++j)
    for (int d = 0; d < D; ++d) r |= ((c.anchor[d] >> j) & 1U) << (j * D + d);
  return r;
}
template <int D>
Cell<D> naive_morton_decode(std::uint64_t h, int level) {
  Cell<D> c;
  c.level = level;
  for (int j = 0; j < level; ++j)
    for (int d = 0; d < D; ++d) c.anchor[d] |= ((h >> (j * D + d)) & 1U) << j;
  return c;
}

// Hilbert one level at a time through the Skilling state machine (bit loops per level).
template <int D>
std::uint64_t naive_hilbert_encode(const Cell<D>& c) {
  auto s = det::skilling_root<D>();
  std::uint64_t h = 0;
  for (int j = c.level - 1; j >= 0; --j) {
    unsigned pos = 0;
    for (int d = 0; d < D; ++d) pos |= static_cast<unsigned>((c.anchor[d] >> j) & 1U) << d;
    h = (h << D) | det::skilling_digit<D>(s, pos);
    s = det::skilling_next<D>(s, det::skilling_transformed<D>(s, pos));
  }
  return h;
}
template <int D>
Cell<D> naive_hilbert_decode(std::uint64_t h, int level) {
  auto s = det::skilling_root<D>();
  Cell<D> c;
  c.level = level;
  for (int j = level - 1; j >= 0; --j) {
    const auto digit = static_cast<unsigned>((h >> (j * D)) & ((1U << D) - 1));
    const unsigned pos = det::skilling_position<D>(s, digit);
    for (int d = 0; d < D; ++d) c.anchor[d] |= static_cast<coord_t>((pos >> d) & 1U) << j;
    s = det::skilling_next<D>(s, det::skilling_y_of_digit<D>(s, digit));
  }
  return c;
}

template <int D>
std::uint64_t naive_peano_encode(const Cell<D>& c) {
  return det::peano_index_generic<D, std::uint64_t>(c.anchor, c.level);
}
template <int D>
Cell<D> naive_peano_decode(std::uint64_t h, int level) {
  Cell<D> c;
  c.level = level;
  c.anchor = det::peano_axes_generic<D, std::uint64_t>(h, level);
  return c;
}

// ---- timing -----------------------------------------------------------------------------

int g_passes = 1;  // passes over the key set per timed run

template <class F>
double median_ns_per_key(F&& run, std::size_t n, int repeats) {
  run();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto a = std::chrono::steady_clock::now();
    for (int p = 0; p < g_passes; ++p) run();
    const auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::nano>(b - a).count() /
                (static_cast<double>(n) * g_passes));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void row(const char* curve, int dim, int level, const char* op, double fast, double naive) {
  if (g_csv) {
    std::printf("%s,%d,%d,%s,library,%.3f,%.1f\n", curve, dim, level, op, fast, 1e3 / fast);
    std::printf("%s,%d,%d,%s,naive,%.3f,%.1f\n", curve, dim, level, op, naive, 1e3 / naive);
  } else {
    std::printf("| %s | %d | %d | %s | %.2f | %.1f | %.2f | %.1f | %.1fx |\n", curve, dim, level,
                op, fast, 1e3 / fast, naive, 1e3 / naive, naive / fast);
  }
}

template <class C, class NaiveEnc, class NaiveDec>
void bench_curve(const char* name, NaiveEnc naive_enc, NaiveDec naive_dec, std::size_t n,
                 int repeats) {
  constexpr int D = C::dim;
  const int level = C::max_level;
  std::mt19937_64 rng(42);
  const coord_t cells = irregular::ipow<coord_t>(static_cast<coord_t>(C::arity), level);
  std::vector<Cell<D>> cells_in(n);
  for (auto& c : cells_in) {
    c.level = level;
    for (int d = 0; d < D; ++d) c.anchor[d] = rng() % cells;
  }
  std::vector<std::uint64_t> idx(n);
  for (std::size_t i = 0; i < n; ++i) {
    idx[i] = C::index(cells_in[i]);
    if (idx[i] != naive_enc(cells_in[i]) || C::cell(idx[i], level) != naive_dec(idx[i], level)) {
      std::fprintf(stderr, "bench_curves: %s %dD disagrees with the naive reference\n", name, D);
      throw 1;
    }
  }
  const double enc = median_ns_per_key(
      [&] {
        std::uint64_t acc = 0;
        for (const auto& c : cells_in) acc ^= C::index(c);
        g_sink = g_sink ^ acc;
      },
      n, repeats);
  const double enc_naive = median_ns_per_key(
      [&] {
        std::uint64_t acc = 0;
        for (const auto& c : cells_in) acc ^= naive_enc(c);
        g_sink = g_sink ^ acc;
      },
      n, repeats);
  const double dec = median_ns_per_key(
      [&] {
        std::uint64_t acc = 0;
        for (const auto h : idx) {
          const auto c = C::cell(h, level);
          for (int d = 0; d < D; ++d) acc += c.anchor[d] << d;
        }
        g_sink = g_sink ^ acc;
      },
      n, repeats);
  const double dec_naive = median_ns_per_key(
      [&] {
        std::uint64_t acc = 0;
        for (const auto h : idx) {
          const auto c = naive_dec(h, level);
          for (int d = 0; d < D; ++d) acc += c.anchor[d] << d;
        }
        g_sink = g_sink ^ acc;
      },
      n, repeats);
  row(name, D, level, "encode", enc, enc_naive);
  row(name, D, level, "decode", dec, dec_naive);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (std::strcmp(argv[i], "--csv") == 0)
      g_csv = true;
    else {
      std::fprintf(stderr, "usage: %s [--quick] [--csv]\n", argv[0]);
      return 2;
    }
  }
  // The key set stays cache resident (8192 cells, <= 256 KiB), so the curve is measured rather
  // than memory bandwidth; full runs make many passes over it.
  const std::size_t n = std::size_t{1} << 13;
  g_passes = quick ? 1 : 64;
  const int repeats = quick ? 3 : 11;
  using namespace irregular::curve;
  try {
    if (g_csv) {
      std::printf("curve,dim,level,op,impl,ns_per_key,mkeys_per_s\n");
    } else {
      std::printf(
          "Curve encode/decode of %zu random finest-level cells (uint64 index), %d passes per "
          "run, median of %d runs; BMI2 %s.\n\n",
          n, g_passes, repeats, det::morton_has_bmi2 ? "on" : "off");
      std::printf(
          "| curve | D | level | op | library ns/key | library Mkeys/s | naive ns/key | "
          "naive Mkeys/s | speedup |\n|---|---|---|---|---|---|---|---|---|\n");
    }
    bench_curve<Morton<2>>("morton", naive_morton_encode<2>, naive_morton_decode<2>, n, repeats);
    bench_curve<Morton<3>>("morton", naive_morton_encode<3>, naive_morton_decode<3>, n, repeats);
    bench_curve<Morton<4>>("morton", naive_morton_encode<4>, naive_morton_decode<4>, n, repeats);
    bench_curve<Hilbert<2>>("hilbert", naive_hilbert_encode<2>, naive_hilbert_decode<2>, n,
                            repeats);
    bench_curve<Hilbert<3>>("hilbert", naive_hilbert_encode<3>, naive_hilbert_decode<3>, n,
                            repeats);
    bench_curve<Hilbert<4>>("hilbert", naive_hilbert_encode<4>, naive_hilbert_decode<4>, n,
                            repeats);
    bench_curve<Peano<2>>("peano", naive_peano_encode<2>, naive_peano_decode<2>, n, repeats);
    bench_curve<Peano<3>>("peano", naive_peano_encode<3>, naive_peano_decode<3>, n, repeats);
  } catch (...) {
    return 1;
  }
  return 0;
}
