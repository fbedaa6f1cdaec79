// Runtime registry of the rectangular partitioners by the names of saule-bas-catalyurek (Table 1,
// §4.1 variants), so an application can pick one from an input file.
#pragma once

#include <array>
#include <cctype>
#include <cstddef>
#include <initializer_list>
#include <irregular/core/error.hpp>
#include <irregular/rect/hierarchical.hpp>
#include <irregular/rect/hybrid.hpp>
#include <irregular/rect/jagged.hpp>
#include <irregular/rect/jagged3d.hpp>
#include <irregular/rect/load_matrix.hpp>
#include <irregular/rect/partition.hpp>
#include <irregular/rect/rectilinear.hpp>
#include <string>
#include <utility>
#include <vector>

namespace irregular::detail {
inline bool ends_with(const std::string& s, const std::string& t) {
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}
}  // namespace irregular::detail

namespace irregular::rect {

/// Every name make_partitioner<T, D> accepts (besides HYBRID(A/B[,min=N])).
/// Jagged names without a suffix mean -BEST, hierarchical ones without a suffix -LOAD.
template <int D>
std::vector<std::string> partitioner_names() {
  std::vector<std::string> out;
  auto with = [&out](const std::string& base, std::initializer_list<const char*> sfx) {
    for (const char* s : sfx) out.push_back(base + s);
  };
  if constexpr (D == 2) {
    out.push_back("RECT-UNIFORM");
    out.push_back("RECT-NICOL");
    for (const char* b : {"JAG-PQ-HEUR", "JAG-PQ-OPT-NICOL", "JAG-PQ-OPT-DP", "JAG-M-HEUR",
                          "JAG-M-HEUR-PROBE", "JAG-M-OPT", "JAG-M-OPT-DP"})
      with(b, {"", "-HOR", "-VER", "-BEST"});
  } else {
    for (const char* b : {"JAG-M-HEUR", "JAG-M-HEUR-PROBE"}) with(b, {"", "-HOR", "-VER", "-BEST"});
  }
  for (const char* b : {"HIER-RB", "HIER-RELAXED"}) with(b, {"", "-LOAD", "-DIST", "-HOR", "-VER"});
  out.push_back("HIER-OPT");
  return out;
}

/// The partitioner called `name` (case-insensitive), e.g. "JAG-M-HEUR-PROBE-BEST", "HIER-RB-DIST",
/// "HYBRID(HIER-RELAXED/JAG-M-OPT,min=64)". Throws irregular::invalid_argument for an unknown name.
template <class T, int D>
Partitioner<T, D> make_partitioner(std::string name) {
  static_assert(D == 2 || D == 3, "irregular::rect::make_partitioner: 2D or 3D load arrays");
  for (auto& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string original = name;
  auto unknown = [&original]() {
    return invalid_argument("irregular::rect::make_partitioner: unknown algorithm '" + original +
                            "'");
  };
  using G = LoadGrid<T, D>;
  using R = Rect<D>;

  if (name.rfind("HYBRID(", 0) == 0 && name.back() == ')') {
    const std::string inner = name.substr(7, name.size() - 8);
    const auto slash = inner.find('/');
    if (slash == std::string::npos) throw unknown();
    std::string second = inner.substr(slash + 1);
    HybridOptions opt;
    if (const auto comma = second.find(','); comma != std::string::npos) {
      const std::string arg = second.substr(comma + 1);
      second = second.substr(0, comma);
      if (arg.rfind("MIN=", 0) != 0) throw unknown();
      try {
        opt.min_parts = std::stoul(arg.substr(4));
      } catch (...) {
        throw unknown();
      }
    }
    auto p1 = make_partitioner<T, D>(inner.substr(0, slash));
    auto p2 = make_partitioner<T, D>(second);
    auto fast = make_partitioner<T, D>("JAG-M-HEUR-PROBE");
    return [p1, p2, fast, opt](const G& g, const R& box, std::size_t P) {
      return hybrid(g, box, P, p1, p2, fast, opt);
    };
  }

  if (name == "HIER-OPT")
    return [](const G& g, const R& box, std::size_t P) { return hier_opt(g, box, P); };
  for (const bool relaxed : {false, true}) {
    const std::string base = relaxed ? "HIER-RELAXED" : "HIER-RB";
    if (name.rfind(base, 0) != 0) continue;
    const std::string sfx = name.substr(base.size());
    CutRule rule;
    if (sfx.empty() || sfx == "-LOAD")
      rule = CutRule::load;
    else if (sfx == "-DIST")
      rule = CutRule::dist;
    else if (sfx == "-HOR")
      rule = CutRule::hor;
    else if (sfx == "-VER")
      rule = CutRule::ver;
    else
      continue;
    if (relaxed)
      return
          [rule](const G& g, const R& box, std::size_t P) { return hier_relaxed(g, box, P, rule); };
    return [rule](const G& g, const R& box, std::size_t P) { return hier_rb(g, box, P, rule); };
  }

  // jagged families: strip the orientation suffix
  int orient = 2;  // 0 hor, 1 ver, 2 best
  std::string base = name;
  for (const auto& [s, o] : {std::pair<const char*, int>{"-HOR", 0}, {"-VER", 1}, {"-BEST", 2}})
    if (detail::ends_with(name, s)) {
      base = name.substr(0, name.size() - std::string(s).size());
      orient = o;
      break;
    }
  if constexpr (D == 2) {
    const Orientation o = orient == 0   ? Orientation::hor
                          : orient == 1 ? Orientation::ver
                                        : Orientation::best;
    if (name == "RECT-UNIFORM")
      return [](const G& g, const R& box, std::size_t P) {
        const auto [p1, p2] = grid_shape(P);
        return rect_uniform(g, box, p1, p2);
      };
    if (name == "RECT-NICOL")
      return [](const G& g, const R& box, std::size_t P) {
        const auto [p1, p2] = grid_shape(P);
        return rect_nicol(g, box, p1, p2);
      };
    if (base == "JAG-PQ-HEUR")
      return [o](const G& g, const R& box, std::size_t P) {
        const auto [p1, p2] = grid_shape(P);
        return jag_pq_heur(g, box, p1, p2, o);
      };
    if (base == "JAG-PQ-OPT-NICOL")
      return [o](const G& g, const R& box, std::size_t P) {
        const auto [p1, p2] = grid_shape(P);
        return jag_pq_opt_nicol(g, box, p1, p2, o);
      };
    if (base == "JAG-PQ-OPT-DP")
      return [o](const G& g, const R& box, std::size_t P) {
        const auto [p1, p2] = grid_shape(P);
        return jag_pq_opt_dp(g, box, p1, p2, o);
      };
    if (base == "JAG-M-HEUR")
      return [o](const G& g, const R& box, std::size_t P) { return jag_m_heur(g, box, P, o); };
    if (base == "JAG-M-HEUR-PROBE")
      return
          [o](const G& g, const R& box, std::size_t P) { return jag_m_heur_probe(g, box, P, o); };
    if (base == "JAG-M-OPT")
      return [o](const G& g, const R& box, std::size_t P) { return jag_m_opt(g, box, P, o); };
    if (base == "JAG-M-OPT-DP")
      return [o](const G& g, const R& box, std::size_t P) { return jag_m_opt_dp(g, box, P, o); };
  } else {
    const std::array<int, 3> order =
        orient == 0 ? std::array<int, 3>{0, 1, 2} : std::array<int, 3>{1, 0, 2};
    const bool best = orient == 2;
    for (const bool probe : {false, true}) {
      if (base != (probe ? "JAG-M-HEUR-PROBE" : "JAG-M-HEUR")) continue;
      return [order, best, probe](const G& g, const R& box, std::size_t P) {
        if (best) return probe ? jag_m_heur_probe(g, box, P) : jag_m_heur(g, box, P);
        return probe ? jag_m_heur_probe(g, box, P, order) : jag_m_heur(g, box, P, order);
      };
    }
  }
  throw unknown();
}

}  // namespace irregular::rect
