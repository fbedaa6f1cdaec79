// Umbrella header: everything the library offers. Serial layers first, then the MPI layers.
#pragma once

// L0 core
#include <irregular/core/assert.hpp>
#include <irregular/core/box.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/core/index.hpp>

// L1 curve
#include <irregular/curve/curve_kind.hpp>
#include <irregular/curve/hilbert.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/curve/morton.hpp>
#include <irregular/curve/peano.hpp>

// L1 partition
#include <irregular/partition/balanced.hpp>
#include <irregular/partition/chain_algorithm.hpp>
#include <irregular/partition/chain_partition.hpp>
#include <irregular/partition/direct_cut.hpp>
#include <irregular/partition/efficiency.hpp>
#include <irregular/partition/heterogeneous.hpp>
#include <irregular/partition/minimize_cost_redistribution.hpp>
#include <irregular/partition/nicol_plus.hpp>
#include <irregular/partition/optimal_arrangement.hpp>
#include <irregular/partition/optimal_dp.hpp>
#include <irregular/partition/overlap_matching.hpp>
#include <irregular/partition/prefix_sums.hpp>
#include <irregular/partition/probe.hpp>
#include <irregular/partition/recursive_bisection.hpp>
#include <irregular/partition/redistribution.hpp>

// L1 checkpoint (the file format)
#include <irregular/checkpoint/checksum.hpp>
#include <irregular/checkpoint/format.hpp>
#include <irregular/checkpoint/verify.hpp>

// L1 schedule (graphs, the 1D locality transform, block translation)
#include <irregular/schedule/block_translation.hpp>
#include <irregular/schedule/graph.hpp>
#include <irregular/schedule/locality_transform.hpp>

// L1 rect
#include <irregular/rect/generators.hpp>
#include <irregular/rect/hierarchical.hpp>
#include <irregular/rect/hybrid.hpp>
#include <irregular/rect/jagged.hpp>
#include <irregular/rect/jagged3d.hpp>
#include <irregular/rect/load_matrix.hpp>
#include <irregular/rect/matrix_io.hpp>
#include <irregular/rect/metrics.hpp>
#include <irregular/rect/partition.hpp>
#include <irregular/rect/rectilinear.hpp>
#include <irregular/rect/registry.hpp>

// L1 rows
#include <irregular/rows/bound.hpp>
#include <irregular/rows/cuts.hpp>
#include <irregular/rows/cuts_check.hpp>
#include <irregular/rows/grid.hpp>
#include <irregular/rows/neighbour_count.hpp>
#include <irregular/rows/tradeoff.hpp>

// L2 tree
#include <irregular/tree/balance.hpp>
#include <irregular/tree/cell_tree.hpp>
#include <irregular/tree/contact.hpp>
#include <irregular/tree/htree.hpp>
#include <irregular/tree/linear_leaves.hpp>
#include <irregular/tree/neighbours.hpp>
#include <irregular/tree/partition_points.hpp>
#include <irregular/tree/refine.hpp>
#include <irregular/tree/refine_leaves.hpp>
#include <irregular/tree/sort.hpp>
#include <irregular/tree/stencil.hpp>

// L3 mpi
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/communicator.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/file.hpp>
#include <irregular/mpi/merged_exchange.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/mpi/transport.hpp>

// L4 dist
#include <irregular/distributed/checkpoint/sections.hpp>
#include <irregular/distributed/domain/build_profile.hpp>
#include <irregular/distributed/domain/cell_store.hpp>
#include <irregular/distributed/domain/checkpoint.hpp>
#include <irregular/distributed/domain/core.hpp>
#include <irregular/distributed/domain/element_store.hpp>
#include <irregular/distributed/domain/neighbourhood.hpp>
#include <irregular/distributed/domain/options.hpp>
#include <irregular/distributed/ghost/layer.hpp>
#include <irregular/distributed/ghost/store.hpp>
#include <irregular/distributed/ghost/strategies.hpp>
#include <irregular/distributed/htree/load_metric.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/htree/replicated_htree.hpp>
#include <irregular/distributed/htree/sample_sort.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/maps/rectangle_map.hpp>
#include <irregular/distributed/maps/row_map.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/distributed/partitioners/blocking_cut.hpp>
#include <irregular/distributed/partitioners/bounded_neighbours.hpp>
#include <irregular/distributed/partitioners/capacity_cut.hpp>
#include <irregular/distributed/partitioners/partition_points.hpp>
#include <irregular/distributed/partitioners/partitioner.hpp>
#include <irregular/distributed/partitioners/rectangular.hpp>
#include <irregular/distributed/partitioners/registry.hpp>
#include <irregular/distributed/partitioners/sfc_blocking.hpp>
#include <irregular/distributed/remap/migration.hpp>
#include <irregular/distributed/remap/neighbour_shift.hpp>
#include <irregular/distributed/remap/remap.hpp>
#include <irregular/distributed/remap/remap_plan.hpp>
#include <irregular/distributed/schedule/block_layout.hpp>
#include <irregular/distributed/schedule/executor.hpp>
#include <irregular/distributed/schedule/inspector.hpp>

// L5 domain, io
#include <irregular/cell_domain.hpp>
#include <irregular/domain.hpp>
#include <irregular/io/svg.hpp>
#include <irregular/io/svg_comparison.hpp>
#include <irregular/io/vtk.hpp>
#include <irregular/io/vtk_domain.hpp>
