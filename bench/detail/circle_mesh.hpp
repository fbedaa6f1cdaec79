// The circle mesh of the p4est anchor, built without p4est: unit square, uniform level 6, refined
// toward the circle of radius 0.3 centred (0.4, 0.4) up to max_level, 2:1 balanced across faces
// and corners (P4EST_CONNECT_FULL); 244,054 leaves at level 14, about 3.9 million at level 18.
// Also what puts the same leaves into an IrregularDomain: one element per leaf at its centre and
// the refinement condition "the cell is an internal node of the mesh".
#pragma once

#include <irregular/irregular.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_set>
#include <vector>

namespace bench::circle_mesh {

namespace irr = irregular;

/// The rule: split a quadrant of side h whose centre lies within h of the circle
/// (| |centre - (0.4, 0.4)| - 0.3 | < h). With P4EST_CONNECT_FULL balance it gives exactly the
/// reference 244,054 leaves at level 14. (Splitting when the circle passes through the quadrant
/// gives 199,357 with FULL and 176,554 with FACE; the centre within h with FACE 221,512; within
/// half a diagonal 207,925 with FULL.) p4est and the mesh evaluate it on the same doubles
/// (x0, y0, h are exact dyadic numbers).
inline bool splits(double x0, double y0, double h) {
  const double mx = x0 + h / 2 - 0.4, my = y0 + h / 2 - 0.4;
  return std::abs(std::sqrt(mx * mx + my * my) - 0.3) < h;
}

/// The same rule in D dimensions (the sphere of radius 0.3 centred (0.4, ...) in 3D), for a
/// cell with lower corner x0 and side h; equal to splits() in 2D.
template <int D>
bool sphere_splits(const std::array<double, D>& x0, double h) {
  double r2 = 0;
  for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d) {
    const double m = x0[d] + h / 2 - 0.4;
    r2 += m * m;
  }
  return std::abs(std::sqrt(r2) - 0.3) < h;
}

inline constexpr int min_level = 6;
using MeshCurve = irr::curve::Morton<2>;  // p4est's z-order: x is the low bit
using Mesh = irr::CellTree<MeshCurve, char>;

/// The mesh: CellTree from uniform level 6, refined by the rule until nothing splits, then the
/// coarsest FULL 2:1 balanced tree.
inline Mesh make_mesh(int max_level) {
  Mesh m = Mesh::uniform(min_level, char{0});
  auto keep = [](const char&, const irr::Cell<2>&) { return char{0}; };
  auto merge = [](std::span<const char>) { return char{0}; };
  for (;;) {
    bool any = false;
    for (std::size_t i = 0; i < m.size(); ++i) {
      const auto c = m.cell(i);
      const double h = std::ldexp(1.0, -c.level);
      if (c.level < max_level &&
          splits(static_cast<double>(c.anchor[0]) * h, static_cast<double>(c.anchor[1]) * h, h)) {
        m.mark(i, irr::Mark::refine);
        any = true;
      }
    }
    if (!any) break;
    m.adapt(keep, merge);
  }
  m.balance(irr::BalanceKind::full, keep);
  return m;
}

/// A cell as one integer (level, y, x): levels up to 28.
inline std::uint64_t cell_key(const irr::Cell<2>& c) {
  return (static_cast<std::uint64_t>(c.level) << 56) | (static_cast<std::uint64_t>(c.anchor[1]) << 28) |
         static_cast<std::uint64_t>(c.anchor[0]);
}

/// Every strict ancestor of a leaf of the mesh.
inline std::unordered_set<std::uint64_t> internal_cells(const Mesh& m) {
  std::unordered_set<std::uint64_t> in;
  in.reserve(m.size() / 2);
  for (std::size_t i = 0; i < m.size(); ++i) {
    auto c = m.cell(i);
    while (c.level > 0) {
      c = {{c.anchor[0] / 2, c.anchor[1] / 2}, c.level - 1};
      if (!in.insert(cell_key(c)).second) break;  // its ancestors are in already
    }
  }
  return in;
}

/// 16 bytes per leaf: one element at the leaf centre (p4est's anchor data is 16 bytes too).
struct Element {
  std::array<double, 2> position;
};
static_assert(sizeof(Element) == 16);

/// The domain's refinement condition that reproduces the mesh (whatever the domain's curve):
/// split exactly the internal cells. Copyable (the set is shared).
struct Condition {
  std::shared_ptr<const std::unordered_set<std::uint64_t>> internal;
  explicit Condition(const Mesh& m)
      : internal(std::make_shared<const std::unordered_set<std::uint64_t>>(internal_cells(m))) {}
  bool operator()(const irr::Cell<2>& c, std::size_t) const { return internal->contains(cell_key(c)); }
};

/// The centre of a mesh leaf.
inline Element centre(const Mesh& m, std::size_t i) {
  const auto c = m.cell(i);
  const double h = std::ldexp(1.0, -c.level);
  return {{(static_cast<double>(c.anchor[0]) + 0.5) * h, (static_cast<double>(c.anchor[1]) + 0.5) * h}};
}

/// This rank's round-robin share of the leaf centres (insert() accepts any distribution).
inline std::vector<Element> share(const Mesh& m, int rank, int ranks) {
  std::vector<Element> out;
  out.reserve(m.size() / static_cast<std::size_t>(ranks) + 1);
  for (std::size_t i = static_cast<std::size_t>(rank); i < m.size(); i += static_cast<std::size_t>(ranks))
    out.push_back(centre(m, i));
  return out;
}

/// Builds `domain` (constructed with Condition(mesh) on the unit box) over the mesh: one element
/// per leaf; afterwards its leaves are the mesh's leaves. Collective over the domain's comm.
template <class Domain>
void fill(Domain& domain, const Mesh& m) {
  const auto& comm = domain.comm();
  domain.insert(share(m, comm.rank(), comm.size()));
  domain.build();
}

}  // namespace bench::circle_mesh
