// The irregular loop of kaddoura-ranka-1995 Figure 8, sequentially: each iteration sets
// t[i] = sum of y over i's neighbours, then y[i] = t[i] / degree(i) (isolated vertices keep
// their value). The reference the distributed loop equals bit for bit; shared by the example,
// its benchmark and the tests.
#pragma once

#include <irregular/schedule/graph.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace meshloop {

inline void figure8_sweeps(const irregular::schedule::Graph& g, std::vector<double>& y, int iterations) {
  std::vector<double> t(y.size());
  for (int it = 0; it < iterations; ++it) {
    for (std::int64_t v = 0; v < g.vertices(); ++v) {
      double acc = 0;
      for (const auto u : g.neighbours(v)) acc += y[static_cast<std::size_t>(u)];
      t[static_cast<std::size_t>(v)] = acc;
    }
    for (std::int64_t v = 0; v < g.vertices(); ++v)
      if (g.degree(v) > 0) y[static_cast<std::size_t>(v)] = t[static_cast<std::size_t>(v)] / static_cast<double>(g.degree(v));
  }
}

}  // namespace meshloop
