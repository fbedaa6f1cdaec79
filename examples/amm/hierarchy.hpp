// The grid hierarchy of the adaptive multigrid, seen from a CellDomain whose leaves are the
// composite grid (baiardi-2001 §5). The grid of level l is T_l: the tree cut at level l, whose
// leaves are every hnode of level l plus the coarser leaves. Each rank holds the T_l leaves inside
// its segment; the domain is created with hold_level = Lh, so for l >= Lh no hnode straddles two
// ranks and restriction and prolongation between levels need no communication. Horizontal reads
// go through one ghost layer per level and stencil, collected before each operator by every
// strategy asked for (the first one's ghosts are read, the others are counted side by side).
#pragma once

#include "problem.hpp"

#include <irregular/cell_domain.hpp>
#include <irregular/distributed/ghost/store.hpp>
#include <irregular/distributed/ghost/strategies.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace amm {

namespace irr = irregular;
using Curve = irr::curve::Morton<2>;
using Index = Curve::index_type;

/// One leaf of the composite grid: its value and, before a refinement, its children's values
/// by bilinear interpolation (child k: k = (x & 1) + 2 (y & 1) of the child's anchor).
struct Leaf {
  double u = 0;
  std::array<double, 4> kids{};
};
using Grid = irr::CellDomain<Leaf, irr::stencil::Moore<2>, Curve>;

/// What a ghost carries: the hnode's value and its multigrid correction.
struct NodeVal {
  double u = 0;
  double e = 0;
};
using Store = irr::GhostStore<Curve, NodeVal, true>;

/// What a message served: the collection before an operator, the refreshes between Jacobi
/// sweeps, or informed fault prevention's extension (Figure 1's breakdown).
enum class Part { residual, refine, prolong, smooth, sweeps, extension };
inline constexpr std::array<const char*, 6> part_names{"residual", "refine", "prolong", "smooth", "sweeps", "extension"};

/// Messages and bytes sent, summed over the ranks, and the messages of each part.
struct Traffic {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  std::array<std::uint64_t, part_names.size()> by_part{};
  void add(const irr::GhostPhase& p, Part part) {
    messages += p.messages;
    bytes += p.bytes;
    by_part[static_cast<std::size_t>(part)] += p.messages;
  }
};

constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

/// T_l on this rank.
struct Level {
  int l = 0;
  irr::LocalLeaves<Curve> tree;   ///< the T_l leaves held here, in curve order
  std::vector<NodeVal> val;       ///< value at each entry's own level
  std::vector<double> r;          ///< residual (entries of level l)
  std::vector<std::size_t> leaf;  ///< the domain leaf an entry is, or none (interior hnode)
  std::vector<std::size_t> src;   ///< the entry of T_{l+1} it comes from (first child if interior)
  std::vector<std::size_t> offsets;
  std::vector<Store> near, wide;  ///< one per strategy: faces at level l; Moore radius 2

  [[nodiscard]] bool interior(std::size_t k) const { return leaf[k] == none; }
  [[nodiscard]] bool active(std::size_t k) const { return tree.levels()[k] == l; }
};

/// T_l for l below the top from T_{l+1}, top down (a family of four hnodes of level l+1 becomes
/// their parent, a coarser entry stays as it is), then zero values and residuals everywhere.
/// `levels` holds T_hold .. T_top, T_top already set. Local.
inline void cut_levels(std::vector<Level>& levels) {
  for (std::size_t k = levels.size() - 1; k-- > 0;) {
    const Level& up = levels[k + 1];
    Level& lv = levels[k];
    const int l = up.l - 1;
    lv.l = l;
    lv.tree.clear();
    lv.leaf.clear();
    lv.src.clear();
    for (std::size_t i = 0; i < up.tree.size();) {
      const int ul = up.tree.levels()[i];
      if (ul == l + 1) {  // a family of four hnodes: their parent (all on this rank)
        lv.tree.push_back(up.tree.starts()[i], l, 1);
        lv.leaf.push_back(none);
        lv.src.push_back(i);
        i += 4;
      } else {
        lv.tree.push_back(up.tree.starts()[i], ul, 1);
        lv.leaf.push_back(up.leaf[i]);
        lv.src.push_back(i);
        ++i;
      }
    }
  }
  for (auto& lv : levels) {
    lv.val.assign(lv.tree.size(), NodeVal{});
    lv.r.assign(lv.tree.size(), 0.0);
    lv.offsets.resize(lv.tree.size() + 1);
    for (std::size_t k = 0; k < lv.offsets.size(); ++k) lv.offsets[k] = k;
  }
}

/// A value found at some level: the entry's value and the entry's own level (below the level
/// asked for when a coarser leaf covers the cell).
struct Found {
  const NodeVal* v = nullptr;
  int level = -1;
};

/// The entry of `lv` (local) or of `st`'s ghosts that contains finest index s.
inline Found find(const Level& lv, const Store& st, Index s) {
  const std::size_t k = lv.tree.find(s);
  if (k < lv.tree.size()) return {&lv.val[k], lv.tree.levels()[k]};
  const auto starts = st.layer().starts();
  auto it = std::upper_bound(starts.begin(), starts.end(), s);
  if (it == starts.begin()) return {};
  const auto g = static_cast<std::size_t>(it - starts.begin()) - 1;
  const int level = st.layer().levels()[g];
  if (s - starts[g] >= irr::detail::span_at<Curve>(level)) return {};
  return {&st.of(g)[0], level};
}

inline Index index_of(int x, int y, int level) {
  irr::Cell<2> c;
  c.anchor = {static_cast<irr::coord_t>(x), static_cast<irr::coord_t>(y)};
  c.level = level;
  return irr::curve::finest_index<Curve>(c);
}

}  // namespace amm
