// 1D chain partitioning: DirectCut, recursive bisection, exact bisection over probes and
// NicolPlus side by side on the same chains (time and imbalance), plus the DP on small chains.
// Usage: bench_partition1d [--quick] [--csv]
#include <irregular/partition/chain_algorithm.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace ip = irregular::partition;

namespace {

bool csv = false;

double median_ms(int repeats, const std::function<void()>& f) {
  f();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto a = std::chrono::steady_clock::now();
    f();
    const auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::milli>(b - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::vector<double> make_chain(const std::string& dist, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(n);
  if (dist == "uniform") {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (auto& x : v) x = u(rng);
  } else {  // skewed: lognormal(0, 2), a heavy tail of rare expensive tasks
    std::lognormal_distribution<double> ln(0.0, 2.0);
    for (auto& x : v) x = ln(rng);
  }
  return v;
}

volatile double sink = 0;

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--csv") == 0) csv = true;
  }
  const std::size_t n = quick ? 10'000 : 1'000'000;
  const int repeats = quick ? 3 : 11;
  const std::vector<std::size_t> ps = {16, 256, 4096, 65536};
  const std::vector<std::pair<ip::ChainAlgorithm, const char*>> algos = {
      {ip::ChainAlgorithm::direct_cut, "DirectCut"},
      {ip::ChainAlgorithm::recursive_bisection, "RB"},
      {ip::ChainAlgorithm::probe_bisection, "ExactBisection"},
      {ip::ChainAlgorithm::nicol_plus, "NicolPlus"}};

  if (csv)
    std::printf("dist,n,p,algorithm,ms,imbalance\n");
  for (const std::string dist : {"uniform", "skewed"}) {
    const auto loads = make_chain(dist, n, 2024);
    const std::span<const double> s(loads);
    const double prefix_ms = median_ms(repeats, [&] { sink = ip::PrefixSums<double>(s).total(); });
    const ip::PrefixSums<double> ps_sums(s);
    if (!csv) {
      std::printf("\n### %s loads, n = %zu (prefix sums: %.3f ms, not included below)\n\n", dist.c_str(), n,
                  prefix_ms);
      std::printf("| p |");
      for (auto& a : algos) std::printf(" %s ms | %s imbalance |", a.second, a.second);
      std::printf(" NicolPlus / DirectCut time |\n|---|");
      for (std::size_t i = 0; i < algos.size(); ++i) std::printf("---:|---:|");
      std::printf("---:|\n");
    } else {
      std::printf("%s,%zu,0,prefix_sums,%.4f,\n", dist.c_str(), n, prefix_ms);
    }
    for (std::size_t p : ps) {
      if (!csv) std::printf("| %zu |", p);
      double dc_ms = 0, np_ms = 0;
      double opt = 0;
      for (auto& [algo, name] : algos) {
        ip::ChainPartition<double> r;
        const double ms = median_ms(repeats, [&] { r = ip::partition_chain(algo, ps_sums, p); });
        if (algo == ip::ChainAlgorithm::direct_cut) dc_ms = ms;
        if (algo == ip::ChainAlgorithm::nicol_plus) {
          np_ms = ms;
          if (r.bottleneck != opt) {
            std::fprintf(stderr, "NicolPlus and exact bisection disagree at p = %zu\n", p);
            return 1;
          }
        }
        if (algo == ip::ChainAlgorithm::probe_bisection) opt = r.bottleneck;
        if (csv)
          std::printf("%s,%zu,%zu,%s,%.4f,%.6g\n", dist.c_str(), n, p, name, ms, r.imbalance);
        else
          std::printf(" %.3f | %.3e |", ms, r.imbalance);
      }
      if (!csv) std::printf(" %.2f |\n", np_ms / dc_ms);
    }
  }

  // The O(p n) DP oracle only at small n.
  const std::size_t dn = quick ? 2'000 : 20'000;
  const auto small = make_chain("skewed", dn, 7);
  const ip::PrefixSums<double> sps{std::span<const double>(small)};
  if (!csv)
    std::printf("\n### DP oracle, skewed loads, n = %zu\n\n| p | DP ms | NicolPlus ms | same bottleneck |\n|---|---:|---:|---|\n",
                dn);
  for (std::size_t p : {16, 256}) {
    ip::ChainPartition<double> a, b;
    const double dp_ms = median_ms(quick ? 1 : 3, [&] { a = ip::optimal_dp(sps, p); });
    const double np_ms = median_ms(repeats, [&] { b = ip::nicol_plus(sps, p); });
    if (a.bottleneck != b.bottleneck) {
      std::fprintf(stderr, "NicolPlus and DP disagree at p = %zu\n", p);
      return 1;
    }
    if (csv)
      std::printf("skewed,%zu,%zu,optimal_dp,%.4f,%.6g\nskewed,%zu,%zu,NicolPlus,%.4f,%.6g\n", dn, p, dp_ms,
                  a.imbalance, dn, p, np_ms, b.imbalance);
    else
      std::printf("| %zu | %.3f | %.3f | yes |\n", p, dp_ms, np_ms);
  }
  return 0;
}
