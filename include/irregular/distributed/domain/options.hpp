// DomainOptions: what an IrregularDomain is given at construction and keeps (periodic axes,
// load metric, partitioner policy, leaf budget).
#pragma once

#include <irregular/distributed/partitioners/sfc_blocking.hpp>
#include <irregular/tree/stencil.hpp>

#include <cstddef>

namespace irregular {

/// Options of a domain, fixed at construction.
template <int D, class Metric, class Partitioner = partitioner::SfcBlocking>
struct DomainOptions {
  Periodicity<D> periodic{};  ///< toroidal axes for neighbour queries
  Metric load{};              ///< load metric of the leaves
  Partitioner partitioner{};  ///< how build() and rebalance() map the leaves onto the ranks
  /// Leaf budget per rank: a refinement that asks for more leaves on one rank fails with
  /// irregular::collective_error (limit_exceeded) instead of exhausting memory. 0 derives it
  /// from the node's physical memory: a quarter of it, shared by the ranks of the node, at
  /// 64 bytes per leaf.
  std::size_t max_leaves_per_rank = 0;
  /// Keep the headroom of the element and leaf arrays in memory: it is written once when it is
  /// reserved (after build() and move_elements()), so that a remap's arrivals land on mapped
  /// pages instead of faulting them in one by one. Costs up to twice the resident memory of
  /// those arrays, and one write of the headroom per build or move.
  bool resident_headroom = false;
};

}  // namespace irregular
