// Runtime registry of the rectangular partitioners by the names of saule-bas-catalyurek (Table 1,
// §4.1 variants), so an application can pick one from an input file.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/rect/hierarchical.hpp>
#include <irregular/rect/hybrid.hpp>
#include <irregular/rect/jagged.hpp>
#include <irregular/rect/jagged3d.hpp>
#include <irregular/rect/load_matrix.hpp>
#include <irregular/rect/partition.hpp>
#include <irregular/rect/rectilinear.hpp>

#include <array>
#include <cctype>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace irregular::rect {
template <class T, int D>
Partitioner<T, D> make_partitioner(std::string name);
}  // namespace irregular::rect

namespace irregular::detail {
inline bool ends_with(const std::string& s, const std::string& t) {
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

inline invalid_argument unknown_partitioner(const std::string& name) {
  return invalid_argument("irregular::rect::make_partitioner: unknown algorithm '" + name + "'");
}

/// HYBRID(A/B[,min=N]) (saule-bas-catalyurek §4.1): phase-1 partitioner A, then B on each part;
/// `name` is upper case and has the HYBRID( ) form. Throws for a malformed argument.
template <class T, int D>
rect::Partitioner<T, D> hybrid_partitioner(const std::string& name) {
  using G = rect::LoadGrid<T, D>;
  using R = rect::Rect<D>;
  const std::string inner = name.substr(7, name.size() - 8);
  const auto slash = inner.find('/');
  if (slash == std::string::npos) throw unknown_partitioner(name);
  std::string second = inner.substr(slash + 1);
  rect::HybridOptions opt;
  if (const auto comma = second.find(','); comma != std::string::npos) {
    const std::string arg = second.substr(comma + 1);
    second = second.substr(0, comma);
    if (arg.rfind("MIN=", 0) != 0) throw unknown_partitioner(name);
    try {
      opt.min_parts = std::stoul(arg.substr(4));
    } catch (...) {
      throw unknown_partitioner(name);
    }
  }
  auto p1 = rect::make_partitioner<T, D>(inner.substr(0, slash));
  auto p2 = rect::make_partitioner<T, D>(second);
  auto fast = rect::make_partitioner<T, D>("JAG-M-HEUR-PROBE");
  return [p1, p2, fast, opt](const G& g, const R& box, std::size_t P) {
    return rect::hybrid(g, box, P, p1, p2, fast, opt);
  };
}

/// HIER-OPT, HIER-RB and HIER-RELAXED with their cut rule suffix; empty for any other name.
template <class T, int D>
rect::Partitioner<T, D> hierarchical_partitioner(const std::string& name) {
  using G = rect::LoadGrid<T, D>;
  using R = rect::Rect<D>;
  using rect::CutRule;
  if (name == "HIER-OPT")
    return [](const G& g, const R& box, std::size_t P) { return rect::hier_opt(g, box, P); };
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
      return [rule](const G& g, const R& box, std::size_t P) {
        return rect::hier_relaxed(g, box, P, rule);
      };
    return
        [rule](const G& g, const R& box, std::size_t P) { return rect::hier_rb(g, box, P, rule); };
  }
  return {};
}

/// The 2D rectilinear and jagged families; `base` is `name` without its orientation suffix,
/// `orient` that suffix (0 hor, 1 ver, 2 best). Empty for any other name.
template <class T>
rect::Partitioner<T, 2> jagged_partitioner_2d(const std::string& name, const std::string& base,
                                              int orient) {
  using G = rect::LoadGrid<T, 2>;
  using R = rect::Rect<2>;
  using rect::grid_shape;
  const rect::Orientation o = orient == 0   ? rect::Orientation::hor
                              : orient == 1 ? rect::Orientation::ver
                                            : rect::Orientation::best;
  if (name == "RECT-UNIFORM")
    return [](const G& g, const R& box, std::size_t P) {
      const auto [p1, p2] = grid_shape(P);
      return rect::rect_uniform(g, box, p1, p2);
    };
  if (name == "RECT-NICOL")
    return [](const G& g, const R& box, std::size_t P) {
      const auto [p1, p2] = grid_shape(P);
      return rect::rect_nicol(g, box, p1, p2);
    };
  if (base == "JAG-PQ-HEUR")
    return [o](const G& g, const R& box, std::size_t P) {
      const auto [p1, p2] = grid_shape(P);
      return rect::jag_pq_heur(g, box, p1, p2, o);
    };
  if (base == "JAG-PQ-OPT-NICOL")
    return [o](const G& g, const R& box, std::size_t P) {
      const auto [p1, p2] = grid_shape(P);
      return rect::jag_pq_opt_nicol(g, box, p1, p2, o);
    };
  if (base == "JAG-PQ-OPT-DP")
    return [o](const G& g, const R& box, std::size_t P) {
      const auto [p1, p2] = grid_shape(P);
      return rect::jag_pq_opt_dp(g, box, p1, p2, o);
    };
  if (base == "JAG-M-HEUR")
    return [o](const G& g, const R& box, std::size_t P) { return rect::jag_m_heur(g, box, P, o); };
  if (base == "JAG-M-HEUR-PROBE")
    return [o](const G& g, const R& box, std::size_t P) {
      return rect::jag_m_heur_probe(g, box, P, o);
    };
  if (base == "JAG-M-OPT")
    return [o](const G& g, const R& box, std::size_t P) { return rect::jag_m_opt(g, box, P, o); };
  if (base == "JAG-M-OPT-DP")
    return
        [o](const G& g, const R& box, std::size_t P) { return rect::jag_m_opt_dp(g, box, P, o); };
  return {};
}

/// The 3D jagged families (JAG-M-HEUR, JAG-M-HEUR-PROBE); arguments as jagged_partitioner_2d.
template <class T>
rect::Partitioner<T, 3> jagged_partitioner_3d(const std::string& base, int orient) {
  using G = rect::LoadGrid<T, 3>;
  using R = rect::Rect<3>;
  const std::array<int, 3> order =
      orient == 0 ? std::array<int, 3>{0, 1, 2} : std::array<int, 3>{1, 0, 2};
  const bool best = orient == 2;
  for (const bool probe : {false, true}) {
    if (base != (probe ? "JAG-M-HEUR-PROBE" : "JAG-M-HEUR")) continue;
    return [order, best, probe](const G& g, const R& box, std::size_t P) {
      if (best) return probe ? rect::jag_m_heur_probe(g, box, P) : rect::jag_m_heur(g, box, P);
      return probe ? rect::jag_m_heur_probe(g, box, P, order) : rect::jag_m_heur(g, box, P, order);
    };
  }
  return {};
}

/// The jagged families: strips the orientation suffix and asks the family of dimension D.
template <class T, int D>
rect::Partitioner<T, D> jagged_partitioner(const std::string& name) {
  int orient = 2;  // 0 hor, 1 ver, 2 best
  std::string base = name;
  for (const auto& [s, o] : {std::pair<const char*, int>{"-HOR", 0}, {"-VER", 1}, {"-BEST", 2}})
    if (ends_with(name, s)) {
      base = name.substr(0, name.size() - std::string(s).size());
      orient = o;
      break;
    }
  if constexpr (D == 2)
    return jagged_partitioner_2d<T>(name, base, orient);
  else
    return jagged_partitioner_3d<T>(base, orient);
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
  // A hybrid names two partitioners; every other name is a family with an optional suffix.
  if (name.rfind("HYBRID(", 0) == 0 && name.back() == ')')
    return irregular::detail::hybrid_partitioner<T, D>(name);
  if (auto hierarchical = irregular::detail::hierarchical_partitioner<T, D>(name))
    return hierarchical;
  if (auto jagged = irregular::detail::jagged_partitioner<T, D>(name)) return jagged;
  throw irregular::detail::unknown_partitioner(name);
}

}  // namespace irregular::rect
