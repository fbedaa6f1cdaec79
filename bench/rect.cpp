// bench/rect: the experiments of saule-bas-catalyurek §4-5 on this machine: load imbalance
// against P on the synthetic classes, run times on 512 x 512 uniform instances up to P = 10,000
// next to the paper's figures and the targets in bench/README.md, HYBRID against its parts, HIER-OPT on
// 32 x 32, the 3D extension, and SVG plots (imbalance against P, a partition over its heat map).
//
// usage: bench_rect [--quick] [--csv] [--svg DIR]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <irregular/rect/generators.hpp>
#include <irregular/rect/hierarchical.hpp>
#include <irregular/rect/hybrid.hpp>
#include <irregular/rect/jagged3d.hpp>
#include <irregular/rect/metrics.hpp>
#include <irregular/rect/registry.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace rect = irregular::rect;
using Matrix = rect::LoadMatrix<std::uint32_t>;

namespace {

bool g_csv = false;

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

/// Median wall time (ms) of `reps` runs after one warm-up run.
template <class F>
double time_ms(F&& f, int reps) {
  f();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_ms();
    f();
    t.push_back(now_ms() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// One timed run, for runs of seconds (no warm-up).
template <class F>
double once_ms(F&& f) {
  const double t0 = now_ms();
  f();
  return now_ms() - t0;
}

std::string cpu_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

void table_header(const std::string& title, const std::vector<std::string>& cols) {
  if (g_csv) {
    std::printf("\n# %s\n", title.c_str());
    for (std::size_t i = 0; i < cols.size(); ++i)
      std::printf("%s%s", i ? "," : "", cols[i].c_str());
    std::printf("\n");
    return;
  }
  std::printf("\n### %s\n\n|", title.c_str());
  for (const auto& c : cols) std::printf(" %s |", c.c_str());
  std::printf("\n|");
  for (std::size_t i = 0; i < cols.size(); ++i) std::printf("%s|", i == 0 ? "---" : "---:");
  std::printf("\n");
}

void table_row(const std::vector<std::string>& cells) {
  if (g_csv) {
    for (std::size_t i = 0; i < cells.size(); ++i)
      std::printf("%s%s", i ? "," : "", cells[i].c_str());
    std::printf("\n");
    return;
  }
  std::printf("|");
  for (const auto& c : cells) std::printf(" %s |", c.c_str());
  std::printf("\n");
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
std::string pct(double v) { return fmt("%.2f%%", 100 * v); }
std::string ms_str(double v) {
  return v < 10 ? fmt("%.3f", v) : v < 1000 ? fmt("%.1f", v) : fmt("%.0f", v);
}

const char* class_name(rect::Instance k) {
  switch (k) {
    case rect::Instance::uniform:
      return "uniform";
    case rect::Instance::diagonal:
      return "diagonal";
    case rect::Instance::peak:
      return "peak";
    case rect::Instance::multi_peak:
      return "multi-peak";
  }
  return "?";
}

// ---------------------------------------------------------------------------------- SVG output

const char* palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                         "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

/// Imbalance against P, log-log, one polyline per algorithm.
void svg_plot(const std::string& path, const std::string& title, const std::vector<std::size_t>& Ps,
              const std::vector<std::string>& algos,
              const std::map<std::string, std::map<std::size_t, double>>& data) {
  std::ofstream f(path);
  const double W = 760, H = 480, x0 = 70, y0 = 30, pw = 480, ph = 400;
  double ymin = 1e9, ymax = 1e-9;
  for (const auto& [a, row] : data)
    for (const auto& [p, v] : row)
      if (v > 0) ymin = std::min(ymin, v), ymax = std::max(ymax, v);
  ymin = std::pow(10.0, std::floor(std::log10(std::max(ymin, 1e-5))));
  ymax = std::pow(10.0, std::ceil(std::log10(std::max(ymax, ymin * 10))));
  const double xmin = std::log10(static_cast<double>(Ps.front())),
               xmax = std::log10(static_cast<double>(Ps.back()));
  auto X = [&](double p) { return x0 + pw * (std::log10(p) - xmin) / std::max(1e-9, xmax - xmin); };
  auto Y = [&](double v) {
    v = std::max(v, ymin);
    return y0 +
           ph * (1 - (std::log10(v) - std::log10(ymin)) / (std::log10(ymax) - std::log10(ymin)));
  };
  f << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H
    << "' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' "
       "fill='white'/>\n";
  f << "<text x='" << x0 << "' y='18' font-size='14'>" << title << "</text>\n";
  f << "<rect x='" << x0 << "' y='" << y0 << "' width='" << pw << "' height='" << ph
    << "' fill='none' stroke='black'/>\n";
  for (double v = ymin; v <= ymax * 1.0001; v *= 10) {
    f << "<line x1='" << x0 << "' x2='" << x0 + pw << "' y1='" << Y(v) << "' y2='" << Y(v)
      << "' stroke='#ddd'/><text x='" << x0 - 6 << "' y='" << Y(v) + 4 << "' text-anchor='end'>"
      << v * 100 << "%</text>\n";
  }
  for (std::size_t p : Ps)
    f << "<text x='" << X(static_cast<double>(p)) << "' y='" << y0 + ph + 16
      << "' text-anchor='middle' font-size='10'>" << p << "</text>\n";
  f << "<text x='" << x0 + pw / 2 << "' y='" << H - 6 << "' text-anchor='middle'>P (log)</text>\n";
  for (std::size_t i = 0; i < algos.size(); ++i) {
    const auto it = data.find(algos[i]);
    if (it == data.end()) continue;
    const char* c = palette[i % 10];
    f << "<polyline fill='none' stroke='" << c << "' stroke-width='1.5' points='";
    for (const auto& [p, v] : it->second) f << X(static_cast<double>(p)) << ',' << Y(v) << ' ';
    f << "'/>\n";
    for (const auto& [p, v] : it->second)
      f << "<circle cx='" << X(static_cast<double>(p)) << "' cy='" << Y(v) << "' r='2.5' fill='"
        << c << "'/>\n";
    f << "<line x1='" << x0 + pw + 15 << "' x2='" << x0 + pw + 35 << "' y1='" << y0 + 10 + 18 * i
      << "' y2='" << y0 + 10 + 18 * i << "' stroke='" << c << "' stroke-width='2'/><text x='"
      << x0 + pw + 40 << "' y='" << y0 + 14 + 18 * i << "'>" << algos[i] << "</text>\n";
  }
  f << "</svg>\n";
}

/// A partition's rectangles over the heat map of its matrix (the heat map averaged on blocks).
void svg_partition(const std::string& path, const std::string& title, const Matrix& g,
                   const rect::Partition<2>& p) {
  std::ofstream f(path);
  const std::size_t n0 = g.extent(0), n1 = g.extent(1), blocks = 64;
  const double S = 512.0, sx = S / static_cast<double>(n1), sy = S / static_cast<double>(n0);
  f << "<svg xmlns='http://www.w3.org/2000/svg' width='" << S + 20 << "' height='" << S + 40
    << "' font-family='sans-serif' font-size='13'>\n<rect width='100%' height='100%' "
       "fill='white'/>\n";
  f << "<text x='10' y='18'>" << title << "</text>\n<g transform='translate(10,30)'>\n";
  const std::size_t b0 = std::max<std::size_t>(1, n0 / blocks),
                    b1 = std::max<std::size_t>(1, n1 / blocks);
  double mx = 0;
  std::vector<double> heat;
  for (std::size_t i = 0; i < n0; i += b0)
    for (std::size_t j = 0; j < n1; j += b1) {
      const auto l =
          static_cast<double>(g.load({{i, j}, {std::min(n0, i + b0), std::min(n1, j + b1)}}));
      heat.push_back(l);
      mx = std::max(mx, l);
    }
  std::size_t k = 0;
  for (std::size_t i = 0; i < n0; i += b0)
    for (std::size_t j = 0; j < n1; j += b1) {
      // square-root scale so peaks do not wash out the rest
      const int v = static_cast<int>(255 * std::sqrt(mx > 0 ? heat[k++] / mx : 0));
      f << "<rect x='" << static_cast<double>(j) * sx << "' y='" << static_cast<double>(i) * sy
        << "' width='" << static_cast<double>(b1) * sx + 0.5 << "' height='"
        << static_cast<double>(b0) * sy + 0.5 << "' fill='rgb(" << v << ',' << v / 3 << ','
        << 255 - v << ")'/>\n";
    }
  for (const auto& r : p.parts)
    if (!r.empty())
      f << "<rect x='" << static_cast<double>(r.lo[1]) * sx << "' y='"
        << static_cast<double>(r.lo[0]) * sy << "' width='" << static_cast<double>(r.extent(1)) * sx
        << "' height='" << static_cast<double>(r.extent(0)) * sy
        << "' fill='none' stroke='white' stroke-width='0.8'/>\n";
  f << "</g>\n</svg>\n";
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string svg_dir;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--csv"))
      g_csv = true;
    else if (!std::strcmp(argv[i], "--svg") && i + 1 < argc)
      svg_dir = argv[++i];
  }
  const std::size_t n = quick ? 128 : 512;
  const int instances = quick ? 1 : 10;
  const std::vector<std::size_t> Ps =
      quick ? std::vector<std::size_t>{16, 256}
            : std::vector<std::size_t>{16, 64, 256, 576, 1024, 2500, 4096, 6400, 10000};
  {
    char date[64];
    const std::time_t t = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
    if (!g_csv)
      std::printf(
          "# bench/rect (%s)\n\nDate: %s. CPU: %s. Matrices %zux%zu, %d instance(s) per class.\n",
          quick ? "quick" : "full", date, cpu_name().c_str(), n, n, instances);
  }

  // ------------------------------------------------------------ imbalance against P per class
  const std::vector<std::string> algos{"RECT-UNIFORM",     "RECT-NICOL", "JAG-PQ-HEUR",
                                       "JAG-PQ-OPT-NICOL", "JAG-M-HEUR", "JAG-M-HEUR-PROBE",
                                       "JAG-M-OPT",        "HIER-RB",    "HIER-RELAXED"};
  const std::size_t mopt_max_p = quick ? 256 : 1024;  // JAG-M-OPT beyond: minutes per run
  const int mopt_instances = instances;
  for (auto kind : {rect::Instance::uniform, rect::Instance::diagonal, rect::Instance::peak,
                    rect::Instance::multi_peak}) {
    std::vector<Matrix> ms;
    for (int s = 0; s < instances; ++s)
      ms.push_back(rect::make_instance(kind, n, n, 1000 + s, 1.2));
    std::map<std::string, std::map<std::size_t, double>> data;
    std::vector<std::string> cols{"P", "lower bound"};
    for (const auto& a : algos) cols.push_back(a);
    table_header(std::string("Load imbalance (Lmax/Lavg - 1, mean over instances), ") +
                     class_name(kind) + (kind == rect::Instance::uniform ? " (Delta = 1.2)" : "") +
                     ", " + std::to_string(n) + "x" + std::to_string(n),
                 cols);
    for (std::size_t P : Ps) {
      // no partition beats max(largest cell, L / P): the floor of every column
      double lbsum = 0;
      for (const auto& m : ms) {
        const double L = static_cast<double>(m.total()), avg = L / static_cast<double>(P);
        lbsum += std::max(avg, static_cast<double>(m.max_value())) / avg - 1;
      }
      std::vector<std::string> row{std::to_string(P), pct(lbsum / instances)};
      for (const auto& a : algos) {
        const bool mopt = a == "JAG-M-OPT";
        if (mopt && P > mopt_max_p) {
          row.push_back("-");
          continue;
        }
        const auto f = rect::make_partitioner<std::uint32_t, 2>(a);
        double sum = 0;
        const int cnt = mopt ? std::min(instances, mopt_instances) : instances;
        for (int s = 0; s < cnt; ++s) sum += rect::imbalance(ms[s], f(ms[s], ms[s].box(), P));
        data[a][P] = sum / cnt;
        row.push_back(pct(sum / cnt));
      }
      table_row(row);
    }
    if (!svg_dir.empty()) {
      svg_plot(svg_dir + "/rect_imbalance_" + class_name(kind) + ".svg",
               std::string("Load imbalance against P, ") + class_name(kind) + " " +
                   std::to_string(n) + "x" + std::to_string(n),
               Ps, algos, data);
      for (const char* a : {"JAG-M-HEUR-PROBE", "HIER-RELAXED"}) {
        if (kind != rect::Instance::multi_peak) break;  // two drawings are enough
        const auto p = rect::make_partitioner<std::uint32_t, 2>(a)(ms[0], ms[0].box(), 256);
        svg_partition(svg_dir + "/rect_partition_" + class_name(kind) + "_" + a + ".svg",
                      std::string(a) + ", P = 256, " + class_name(kind) + ", imbalance " +
                          pct(rect::imbalance(ms[0], p)),
                      ms[0], p);
      }
    }
  }

  // ------------------------------------------------------------ variants (paper Fig. 6, §4.2)
  {
    const std::vector<std::string> vars{
        "HIER-RB-LOAD",         "HIER-RB-DIST",         "HIER-RB-HOR",          "HIER-RB-VER",
        "HIER-RELAXED-LOAD",    "HIER-RELAXED-DIST",    "HIER-RELAXED-HOR",     "HIER-RELAXED-VER",
        "JAG-M-HEUR-PROBE-HOR", "JAG-M-HEUR-PROBE-VER", "JAG-M-HEUR-PROBE-BEST"};
    std::vector<Matrix> ms;
    for (int s = 0; s < instances; ++s)
      ms.push_back(rect::make_instance(rect::Instance::multi_peak, n, n, 1000 + s));
    std::vector<std::string> cols{"P"};
    for (const auto& a : vars) cols.push_back(a);
    table_header("Variants on multi-peak " + std::to_string(n) + "x" + std::to_string(n) +
                     " (load imbalance, mean over instances)",
                 cols);
    std::map<std::string, std::map<std::size_t, double>> data;
    for (std::size_t P : Ps) {
      std::vector<std::string> row{std::to_string(P)};
      for (const auto& a : vars) {
        const auto f = rect::make_partitioner<std::uint32_t, 2>(a);
        double sum = 0;
        for (const auto& m : ms) sum += rect::imbalance(m, f(m, m.box(), P));
        data[a][P] = sum / instances;
        row.push_back(pct(sum / instances));
      }
      table_row(row);
    }
    if (!svg_dir.empty())
      svg_plot(svg_dir + "/rect_imbalance_hier_variants.svg",
               "HIER-RB and HIER-RELAXED variants, multi-peak " + std::to_string(n) + "x" +
                   std::to_string(n),
               Ps,
               {"HIER-RB-LOAD", "HIER-RB-DIST", "HIER-RB-HOR", "HIER-RELAXED-LOAD",
                "HIER-RELAXED-DIST", "HIER-RELAXED-HOR"},
               data);
  }

  // ------------------------------------------------------------ run times, 512 x 512 uniform
  const Matrix u = rect::uniform_matrix(n, n, 1.2, 7);
  struct TimedAlgo {
    std::string name;
    std::size_t max_p;
  };
  const std::vector<TimedAlgo> timed{{"RECT-UNIFORM", 10000},
                                     {"RECT-NICOL", 10000},
                                     {"JAG-PQ-HEUR", 10000},
                                     {"JAG-PQ-OPT-NICOL", 10000},
                                     {"JAG-PQ-OPT-DP", quick ? 256u : 10000u},
                                     {"JAG-M-HEUR", 10000},
                                     {"JAG-M-HEUR-PROBE", 10000},
                                     {"JAG-M-OPT", quick ? 256u : 2500u},
                                     {"HIER-RB", 10000},
                                     {"HIER-RELAXED", 10000}};
  std::map<std::string, std::map<std::size_t, double>> times;
  {
    std::vector<std::string> cols{"algorithm (-BEST / -LOAD)"};
    for (std::size_t P : Ps) cols.push_back("P=" + std::to_string(P));
    table_header("Run time (ms, median) on " + std::to_string(n) + "x" + std::to_string(n) +
                     " uniform (Delta = 1.2); prefix sums excluded as in the paper",
                 cols);
    for (const auto& a : timed) {
      std::vector<std::string> row{a.name};
      const auto f = rect::make_partitioner<std::uint32_t, 2>(a.name);
      for (std::size_t P : Ps) {
        if (P > a.max_p) {
          row.push_back("-");
          continue;
        }
        // repeats: many for fast runs, few for slow ones
        const double one = time_ms([&] { (void)f(u, u.box(), P); }, 1);
        const int reps = one < 5 ? 15 : one < 100 ? 5 : one < 2000 ? 3 : 1;
        const double t = reps == 1 ? one : time_ms([&] { (void)f(u, u.box(), P); }, reps);
        times[a.name][P] = t;
        row.push_back(ms_str(t));
      }
      table_row(row);
    }
  }

  // ------------------------------------------------------------ targets
  {
    table_header("Targets (" + std::to_string(n) + "x" + std::to_string(n) +
                     " uniform): paper (2.4 GHz Opteron, 2010) against this machine",
                 {"algorithm", "P", "paper", "target", "measured (ms)", "met"});
    const std::size_t PT = quick ? 256 : 10000;
    struct Target {
      const char* name;
      const char* paper;
      double target_ms;
    };
    for (const Target& t :
         {Target{"HIER-RB", "18 ms", 2}, Target{"JAG-M-HEUR", "106 ms", 10},
          Target{"JAG-M-HEUR-PROBE", "~212 ms", 20}, Target{"RECT-NICOL", "448 ms", 45},
          Target{"HIER-RELAXED", "950 ms", 95}, Target{"JAG-PQ-OPT-NICOL", "9.6 s", 1000}}) {
      const double m = times[t.name][PT];
      table_row({t.name, std::to_string(PT), t.paper, fmt("<= %.0f ms", t.target_ms), ms_str(m),
                 m <= t.target_ms ? "yes" : "NO"});
    }
    // JAG-M-OPT at P = 961 and HIER-OPT on 32 x 32: full run only
    if (!quick) {
      const auto f = rect::make_partitioner<std::uint32_t, 2>("JAG-M-OPT");
      double imb = 0;
      const double t = once_ms([&] { imb = rect::imbalance(u, f(u, u.box(), 961)); });
      table_row({"JAG-M-OPT", "961", "31 min", "<= 60 s", ms_str(t), t <= 60000 ? "yes" : "NO"});
      const Matrix small = rect::make_instance(rect::Instance::multi_peak, 32, 32, 5);
      double worst = 0;
      for (std::size_t P = 2; P <= 16; ++P)
        worst = std::max(worst, time_ms([&] { (void)rect::hier_opt(small, P); }, 1));
      table_row({"HIER-OPT (32x32 multi-peak, slowest P <= 16)", "2..16", "not run", "<= 60 s",
                 ms_str(worst), worst <= 60000 ? "yes" : "NO"});
      std::printf("%sJAG-M-OPT at P = 961 reached imbalance %s.\n", g_csv ? "# " : "\n",
                  pct(imb).c_str());
    }
  }

  // ------------------------------------------------------------ JAG-M-OPT: paper's DP vs decision
  // DP
  {
    table_header(
        "JAG-M-OPT-HOR: the paper's DP F(j, p) with its engineering against the "
        "decision-form DP with parametric search (uniform, ms)",
        {"matrix", "P", "imbalance", "paper's DP (jag_m_opt_dp)", "decision DP (jag_m_opt)",
         "speed-up"});
    const std::vector<std::pair<std::size_t, std::size_t>> cases =
        quick ? std::vector<std::pair<std::size_t, std::size_t>>{{32, 16}}
              : std::vector<std::pair<std::size_t, std::size_t>>{{64, 64}, {128, 256}, {512, 100}};
    for (const auto& [m, P] : cases) {
      const Matrix g = rect::uniform_matrix(m, m, 1.2, 3);
      rect::Partition<2> a, b;
      const double tb =
          time_ms([&] { b = rect::jag_m_opt(g, g.box(), P, rect::Orientation::hor); }, 3);
      const double ta =
          once_ms([&] { a = rect::jag_m_opt_dp(g, g.box(), P, rect::Orientation::hor); });
      table_row(
          {std::to_string(m) + "x" + std::to_string(m), std::to_string(P),
           rect::max_load(g, a) == rect::max_load(g, b) ? pct(rect::imbalance(g, a)) : "MISMATCH",
           ms_str(ta), ms_str(tb), fmt("%.0fx", ta / tb)});
    }
  }

  // ------------------------------------------------------------ HIER-OPT against heuristics
  {
    const Matrix small = rect::make_instance(rect::Instance::multi_peak, 32, 32, 5);
    table_header("Hierarchical bipartitions on 32x32 multi-peak: HIER-OPT against the heuristics",
                 {"P", "HIER-RB", "HIER-RELAXED", "HIER-OPT", "JAG-M-OPT", "HIER-OPT time (ms)"});
    for (std::size_t P :
         quick ? std::vector<std::size_t>{4, 9} : std::vector<std::size_t>{2, 4, 7, 9, 12, 16}) {
      rect::Partition<2> opt;
      const double t = time_ms([&] { opt = rect::hier_opt(small, P); }, quick ? 1 : 3);
      table_row({std::to_string(P), pct(rect::imbalance(small, rect::hier_rb(small, P))),
                 pct(rect::imbalance(small, rect::hier_relaxed(small, P))),
                 pct(rect::imbalance(small, opt)),
                 pct(rect::imbalance(small, rect::jag_m_opt(small, P))), ms_str(t)});
    }
  }

  // ------------------------------------------------------------ HYBRID against its parts
  {
    table_header(
        "HYBRID against its parts (" + std::to_string(n) + "x" + std::to_string(n) +
            ", imbalance / time ms; P' chosen by expected imbalance, min P' = 16)",
        {"class", "P", "JAG-M-HEUR-PROBE", "HIER-RELAXED", "JAG-M-OPT",
         "HYBRID(HIER-RELAXED/JAG-M-OPT)", "HYBRID(JAG-M-HEUR/JAG-M-OPT)", "P' (relaxed / heur)"});
    const auto probe = rect::make_partitioner<std::uint32_t, 2>("JAG-M-HEUR-PROBE");
    const auto relaxed = rect::make_partitioner<std::uint32_t, 2>("HIER-RELAXED");
    const auto heur = rect::make_partitioner<std::uint32_t, 2>("JAG-M-HEUR");
    const auto mopt = rect::make_partitioner<std::uint32_t, 2>("JAG-M-OPT");
    for (auto kind : {rect::Instance::multi_peak, rect::Instance::uniform}) {
      const Matrix g = rect::make_instance(kind, n, n, 42, 1.2);
      for (std::size_t P : quick ? std::vector<std::size_t>{100}
                                 : std::vector<std::size_t>{400, 1024, 2500, 6400}) {
        auto cell = [&](const rect::Partitioner<std::uint32_t, 2>& f) {
          rect::Partition<2> p;
          const double t = time_ms([&] { p = f(g, g.box(), P); }, 1);
          return pct(rect::imbalance(g, p)) + " / " + ms_str(t);
        };
        rect::HybridReport r1, r2;
        auto hyb = [&](const rect::Partitioner<std::uint32_t, 2>& p1, rect::HybridReport& rep) {
          rect::Partition<2> p;
          const double t =
              time_ms([&] { p = rect::hybrid(g, g.box(), P, p1, mopt, probe, {}, &rep); }, 1);
          return pct(rect::imbalance(g, p)) + " / " + ms_str(t);
        };
        const std::string a = cell(probe), b = cell(relaxed);
        const std::string c = P <= (quick ? 256u : 1024u) ? cell(mopt) : "-";
        const std::string h1 = hyb(relaxed, r1), h2 = hyb(heur, r2);
        table_row({class_name(kind), std::to_string(P), a, b, c, h1, h2,
                   std::to_string(r1.parts) + " / " + std::to_string(r2.parts)});
      }
    }
  }

  // ------------------------------------------------------------ 3D extension
  {
    const std::size_t m = quick ? 24 : 96;
    std::vector<std::uint32_t> v(m * m * m);
    std::mt19937_64 rng(9);
    const double cx = 0.3 * static_cast<double>(m), cy = 0.6 * static_cast<double>(m),
                 cz = 0.5 * static_cast<double>(m);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < m; ++j)
        for (std::size_t k = 0; k < m; ++k) {
          const double d = std::sqrt((static_cast<double>(i) - cx) * (static_cast<double>(i) - cx) +
                                     (static_cast<double>(j) - cy) * (static_cast<double>(j) - cy) +
                                     (static_cast<double>(k) - cz) * (static_cast<double>(k) - cz));
          v[(i * m + j) * m + k] =
              static_cast<std::uint32_t>(static_cast<double>(rng() % (m * m * m)) / (d + 0.1));
        }
    const rect::LoadVolume<std::uint32_t> vol({m, m, m}, std::move(v));
    table_header("3D extension: " + std::to_string(m) + "^3 peak volume, imbalance / time ms",
                 {"P", "JAG-M-HEUR (best order)", "JAG-M-HEUR-PROBE", "HIER-RB", "HIER-RELAXED"});
    for (std::size_t P :
         quick ? std::vector<std::size_t>{64} : std::vector<std::size_t>{64, 512, 4096}) {
      std::vector<std::string> row{std::to_string(P)};
      for (const char* a : {"JAG-M-HEUR", "JAG-M-HEUR-PROBE", "HIER-RB", "HIER-RELAXED"}) {
        const auto f = rect::make_partitioner<std::uint32_t, 3>(a);
        rect::Partition<3> p;
        const double t = time_ms([&] { p = f(vol, vol.box(), P); }, quick ? 1 : 3);
        row.push_back(pct(rect::imbalance(vol, p)) + " / " + ms_str(t));
      }
      table_row(row);
    }
  }
  return 0;
}
