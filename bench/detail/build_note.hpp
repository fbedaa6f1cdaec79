// Included into every benchmark by bench/meson.build: a build below -O3 (scripts/test builds the
// benches at -Og, level 0 here, for their --quick runs) says so before any table, so no figure of
// it is quoted.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#if defined(IRREGULAR_BENCH_OPTIMIZATION) && IRREGULAR_BENCH_OPTIMIZATION < 3
namespace irregular_bench_detail {
// Runs before main; MPI is not up yet, so the launcher's rank variables pick one writer.
inline const bool build_noted = [] {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK"})
    if (const char* r = std::getenv(v); r != nullptr && std::strcmp(r, "0") != 0) return true;
  std::fprintf(stderr,
               "note: this benchmark is built at -O%s (-Dbench_optimization); its timings are not "
               "measurements: meson configure BUILD -Dbench_optimization=3\n",
               IRREGULAR_BENCH_OPTIMIZATION == 0 ? "g" : IRREGULAR_BENCH_OPTIMIZATION == 1 ? "1" : "2");
  return true;
}();
}  // namespace irregular_bench_detail
#endif
