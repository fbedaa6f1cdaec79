// The options and small records of a cell-data domain (CellDomain, cell_domain.hpp): its
// construction options, the leaves adjacent() reports, and how a datum travels through the
// remap pipeline keyed by its leaf.
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/mpi/detail/index_wire.hpp>
#include <irregular/distributed/partitioners/sfc_blocking.hpp>
#include <irregular/mpi/transport.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace irregular {

/// Options of a cell-data domain, fixed at construction.
template <int D, class Metric, class Partitioner = partitioner::SfcBlocking>
struct CellDomainOptions {
  Periodicity<D> periodic{};  ///< toroidal axes for neighbours, ghosts and balance
  Metric load{};              ///< load metric of the leaves (count = 1 per leaf)
  Partitioner partitioner{};  ///< how the leaves are mapped onto the ranks
  /// Leaf budget per rank (0: derived from memory, as DomainOptions::max_leaves_per_rank).
  std::size_t max_leaves_per_rank = 0;
  /// When >= 0, no cell of this level is ever split between ranks (the partition's cuts fall on
  /// its cell boundaries), so every hnode at this level or finer, with all its descendants, lies
  /// on one rank: a multigrid's restriction and prolongation between those levels stay local.
  /// Needs a map whose parts are curve segments.
  int hold_level = -1;
};

/// A leaf met by adjacent(): which leaf, and where it touches.
template <int D>
struct Adjacent {
  std::size_t id;       ///< local leaf id, or ghost id when `ghost`
  bool ghost;
  int level;
  int dimension;        ///< of the shared boundary: D-1 for a face, 0 for a corner
  std::array<int, D> direction;  ///< per axis: -1 (the neighbour lies below), +1 (above), 0 (overlap)
};

namespace detail_cells {
/// A datum with its leaf's start: how data travel through the remap pipeline, which keys what it
/// moves. 128-bit indices travel as two halves when serialized.
template <class I, class Data>
struct Keyed {
  I start;
  std::uint8_t level;
  Data data;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    auto w = detail::IndexWire::from(start);
    ar & w.lo & w.hi & level & data;
    start = w.template as<I>();
  }
};
}  // namespace detail_cells

namespace mpi {
/// A keyed datum travels as bytes when its datum does.
template <class I, class Data>
struct raw_transport<detail_cells::Keyed<I, Data>> : std::bool_constant<is_raw_transportable<Data>> {};
}  // namespace mpi

}  // namespace irregular
