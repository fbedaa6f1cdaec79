// DomainOptions: what a domain (IrregularDomain or CellDomain) is given at construction and keeps
// (periodic axes, load metric, partitioner policy, leaf budget, held cells, resident headroom).
#pragma once

#include <irregular/distributed/partitioners/sfc_blocking.hpp>
#include <irregular/tree/stencil.hpp>

#include <cstddef>

namespace irregular {

/// Options of a domain, fixed at construction; the same for both domains.
template <int D, class Metric, class Partitioner = partitioner::SfcBlocking>
struct DomainOptions {
  Periodicity<D> periodic{};  ///< toroidal axes for neighbours, ghosts and balance
  Metric load{};              ///< load metric of the leaves
  Partitioner partitioner{};  ///< how the leaves are mapped onto the ranks
  /// Leaf budget per rank: a refinement that asks for more leaves on one rank fails with
  /// irregular::collective_error (limit_exceeded) instead of exhausting memory. 0 derives it
  /// from the node's physical memory: a quarter of it, shared by the ranks of the node, at
  /// 64 bytes per leaf.
  std::size_t max_leaves_per_rank = 0;
  /// When >= 0, no cell of this level is ever split between ranks (the partition's cuts fall on
  /// its cell boundaries), so every hnode at this level or finer, with all its descendants, lies
  /// on one rank: a multigrid's restriction and prolongation between those levels stay local.
  /// Needs a map whose parts are curve segments, and the direct remap strategy.
  int hold_level = -1;
  /// Keep the headroom of the leaf and store arrays in memory: it is written once when it is
  /// reserved, so that a remap's arrivals land on mapped pages instead of faulting them in one
  /// by one. Costs up to twice the resident memory of those arrays.
  bool resident_headroom = false;
};

/// The cell-data domain's options are the domain's options.
template <int D, class Metric, class Partitioner = partitioner::SfcBlocking>
using CellDomainOptions = DomainOptions<D, Metric, Partitioner>;

}  // namespace irregular
