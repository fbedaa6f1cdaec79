// The state of a cell-data domain and its remap steps (CellDomain, cell_domain.hpp): the leaves,
// their data, marks, loads and ghosts, and how leaves and data move to a new map (families held
// whole for coarsening, cells of hold_level kept on one rank). baiardi-2001 §5.
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/detail/headroom.hpp>  // detail::store_vector
#include <irregular/core/error.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/htree/balance.hpp>
#include <irregular/distributed/domain/cell_domain_options.hpp>
#include <irregular/mpi/detail/index_wire.hpp>
#include <irregular/distributed/htree/sample_sort.hpp>
#include <irregular/distributed/ghost/store.hpp>
#include <irregular/distributed/ghost/strategies.hpp>
#include <irregular/distributed/htree/leaf_loads.hpp>
#include <irregular/distributed/htree/load_metric.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/partitioners/partitioner.hpp>
#include <irregular/distributed/remap/rebalance_decision.hpp>
#include <irregular/distributed/remap/remap.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/distributed/partitioners/sfc_blocking.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/communicator.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/tree/balance.hpp>
#include <irregular/tree/cell_tree.hpp>
#include <irregular/tree/contact.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/stencil.hpp>
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular::detail {

template <class Data, Stencil S, SpaceFillingCurve C, class Metric, class P>
class CellDomainCore {
 protected:
  static constexpr int dim = C::dim;
  using index_type = typename C::index_type;
  using map_type = typename P::template map_type<C>;
  using options_type = CellDomainOptions<dim, Metric, P>;

  CellDomainCore(const boost::mpi::communicator& comm, Box<dim> box, options_type options)
      : comm_(comm), box_(box), options_(std::move(options)) {}

  using Keyed = detail_cells::Keyed<index_type, Data>;
  static index_type end_of(const Keyed& k) { return k.start + detail::span_at<C>(k.level); }
  static constexpr int tag_migrate = 31, tag_families = 32, tag_ghost = 41, tag_balance = 51;

  map_type initial_map() const {
    if constexpr (std::constructible_from<map_type, int>) return map_type(comm_.size());
    else return map_type{};
  }
  typename GhostStore<C, Data, true>::template Tree<map_type> tree(const char* who) const {
    return {comm_.get(), leaves_, map_, options_.periodic, generation_, tag_ghost, who};
  }
  const std::vector<std::size_t>& identity_offsets() const {
    if (offsets_.size() != leaves_.size() + 1) {
      offsets_.resize(leaves_.size() + 1);
      for (std::size_t i = 0; i < offsets_.size(); ++i) offsets_[i] = i;
    }
    return offsets_;
  }
  LeafPayload<Data> payload() const {
    return {std::span<const Data>(data_), std::span<const std::size_t>(identity_offsets())};
  }
  void bad_mark(std::string what) {
    if (!mark_error_) mark_error_ = std::move(what);
  }

  // Whether leaves i .. i+children-1 are one complete sibling family (i the first child).
  bool family_at(std::size_t i) const {
    constexpr auto kids = static_cast<std::size_t>(detail::children_of<C>);
    const int lv = leaves_.levels()[i];
    const index_type parent = leaves_.starts()[i] - leaves_.starts()[i] % detail::span_at<C>(lv - 1);
    if (leaves_.starts()[i] != parent || i + kids > leaves_.size()) return false;
    for (std::size_t k = 0; k < kids; ++k)
      if (leaves_.levels()[i + k] != lv ||
          leaves_.starts()[i + k] != parent + static_cast<index_type>(k) * detail::span_at<C>(lv))
        return false;
    return true;
  }

  void check_hold_level() const {
    const int h = options_.hold_level;
    if (h > C::max_level)
      throw invalid_argument("irregular::CellDomain: hold_level " + std::to_string(h) + " beyond max_level " +
                             std::to_string(C::max_level));
    if (h >= 0 && !map_type::contiguous_segments)
      throw invalid_argument("irregular::CellDomain: hold_level needs a partitioner whose parts are curve segments");
  }

  static std::string anchor_text(const Cell<dim>& c) {
    std::string t = "(";
    for (int d = 0; d < dim; ++d) t += (d ? ", " : "") + std::to_string(c.anchor[d]);
    return t + ")";
  }
  // Whether leaf i belongs to a complete sibling family held here.
  bool in_family(std::size_t i) const {
    const int lv = leaves_.levels()[i];
    const index_type parent = leaves_.starts()[i] - leaves_.starts()[i] % detail::span_at<C>(lv - 1);
    const auto k = static_cast<std::size_t>((leaves_.starts()[i] - parent) / detail::span_at<C>(lv));
    return k <= i && family_at(i - k);
  }

  /// Families that a part boundary cuts and that are marked for coarsening move whole to one
  /// rank (the map holds their parents whole), so adapt can merge them locally.
  void hold_families() {
    std::vector<std::pair<detail::IndexWire, int>> mine;
    for (std::size_t i : {std::size_t{0}, leaves_.size() - 1}) {
      if (leaves_.size() == 0 || leaves_.levels()[i] == 0) continue;
      const int lv = leaves_.levels()[i] - 1;
      const auto parent = detail::cell_at<C>(detail::ancestor_start<C>(leaves_.starts()[i], lv), lv);
      if (!map_.splits(parent)) continue;
      // The family's members held here: a run from this end of the segment.
      const auto iv = curve::hnode_interval<C>(parent);
      bool marked = false;
      if (i == 0) {
        for (std::size_t j = 0; j < leaves_.size() && iv.contains(leaves_.starts()[j]); ++j)
          marked = marked || marks_[j] == Mark::coarsen;
      } else {
        for (std::size_t j = i + 1; j-- > 0 && iv.contains(leaves_.starts()[j]);)
          marked = marked || marks_[j] == Mark::coarsen;
      }
      if (marked) mine.push_back({detail::IndexWire::from(curve::finest_index<C>(parent)), lv});
    }
    std::vector<std::vector<std::pair<detail::IndexWire, int>>> all;
    boost::mpi::all_gather(comm_.get(), mine, all);
    std::vector<Cell<dim>> cells;
    for (const auto& v : all)
      for (const auto& [w, lv] : v) cells.push_back(curve::cell_of_finest<C>(w.template as<index_type>(), lv));
    if (cells.empty()) return;
    std::sort(cells.begin(), cells.end(), [](const auto& a, const auto& b) {
      return curve::finest_index<C>(a) < curve::finest_index<C>(b);
    });
    cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
    // Keep marks with their leaves: they travel as the leaves' payload.
    std::vector<double> marks(leaves_.size());
    for (std::size_t i = 0; i < leaves_.size(); ++i) marks[i] = static_cast<double>(marks_[i]);
    map_ = move_to(map_.hold_whole(std::span<const Cell<dim>>(cells)), marks);
    marks_.resize(leaves_.size());
    for (std::size_t i = 0; i < leaves_.size(); ++i) marks_[i] = static_cast<Mark>(static_cast<int>(marks[i]));
  }

  /// Leaves and data go to the holders `map` names (`payload` travels with the leaves), the loads
  /// follow; returns the settled map. Raw data under a segment map are the elements of a segment
  /// shift keyed by their leaves' starts; otherwise Keyed records take the general remap.
  template <OwnershipMap M>
  M move_to(const M& map, std::vector<double>& payload) {
    migration_ = {};
    ShiftLayout layout;
    std::optional<M> settled;
    if constexpr (M::contiguous_segments && mpi::is_raw_transportable<Data>) {
      LeafKeyed by_start;  // a datum's key is its leaf's start
      if (auto sent = shift_segments(comm_.get(), map, leaves_, payload, data_, by_start, no_offsets, tag_migrate, &layout))
        migration_ += *sent, settled = map;  // no leaf is cut: holding leaves whole changes nothing
    }
    if (!settled) {
      std::vector<index_type> keys(leaves_.starts().begin(), leaves_.starts().end());
      std::vector<Keyed> keyed;
      for (std::size_t i = 0; i < leaves_.size(); ++i)
        keyed.push_back({leaves_.starts()[i], leaves_.levels()[i], std::move(data_[i])});
      settled = settle_on_map(comm_.get(), map, leaves_, payload, keyed, keys, [](const Keyed& k) { return k.start; },
                              tag_migrate, migration_, no_offsets, &layout);
      data_.clear();
      for (auto& k : keyed) data_.push_back(std::move(k.data));
    }
    migration_global_ = mpi::all_reduce_sum(comm_.get(), migration_);
    ++generation_;
    mpi::agree(comm_.get(), [&] {  // the metric may be user code; after a splice only arrivals are new
      const auto none = [](std::size_t) { return std::span<const Data>(); };
      bool shifted = false;
      if constexpr (!LeafLoads<C, Metric>::is_measured)
        if ((shifted = layout.spliced)) loads_.shift(layout, options_.load, leaves_, none, comm_.rank());
      if (!shifted) loads_.estimate(options_.load, leaves_, none, comm_.rank());
    });
    return std::move(*settled);
  }

  /// The partitioner maps the leaves, leaves and data move to their holders. Without `current`
  /// (at construction) the loads are estimated first; otherwise they are current.
  void repartition(const map_type* current) {
    if (!current) estimate_loads();
    loads_.agree_unit(comm_.get(), leaves_);
    // hold_cells: options_.hold_level (the AMM example needs it; keep this call)
    auto next = hold_cells(
        options_.partitioner.template partition<C>(comm_.get(), LeafChain<C>{leaves_, loads_.values()}, current));
    loads_.new_window(leaves_.size());
    std::vector<double> none;
    map_ = move_to(next, none);
    loads_.new_window(leaves_.size());
  }

  /// The map with its cuts moved out of the cells of options_.hold_level (replicated: computed
  /// from the segments alone, no communication).
  map_type hold_cells(map_type next) const {
    if constexpr (map_type::contiguous_segments) {
      const int h = options_.hold_level;
      if (h < 0) return next;
      std::vector<Cell<dim>> cut;
      for (int r = 1; r < next.parts(); ++r) {
        const index_type b = next.segment(r).start;
        if (b == detail::index_end<C>() || b % detail::span_at<C>(h) == 0) continue;
        const auto c = detail::cell_at<C>(detail::ancestor_start<C>(b, h), h);
        if (cut.empty() || !(cut.back() == c)) cut.push_back(c);
      }
      return cut.empty() ? next : next.hold_whole(std::span<const Cell<dim>>(cut));
    } else {
      return next;
    }
  }

  void estimate_loads() {
    mpi::agree(comm_.get(), [&] {
      loads_.estimate(options_.load, leaves_, [](std::size_t) { return std::span<const Data>(); }, comm_.rank());
    });
  }

  /// The tree after adapt: new leaves and data in curve order; the map still holds them.
  template <class Starts, class Levels>
  void replace_leaves(Starts starts, Levels levels, detail::store_vector<Data> data) {
    leaves_.counts_.clear();
    leaves_.counts_.reserve(starts.capacity());  // the starts' room: a remap splices arrivals in place
    leaves_.counts_.assign(starts.size(), 1);
    detail::adopt(leaves_.starts_, std::move(starts));
    detail::adopt(leaves_.levels_, std::move(levels));
    data_ = std::move(data);
    marks_.clear();  // they named the old leaves
    ++generation_;
    loads_.new_window(leaves_.size());
    estimate_loads();
  }

  mpi::OwnedCommunicator comm_;
  Box<dim> box_;
  options_type options_;
  map_type map_{};
  LocalLeaves<C> leaves_;
  detail::store_vector<Data> data_;  // one datum per leaf, in leaf order
  std::vector<Mark> marks_;
  std::optional<std::string> mark_error_;
  LeafLoads<C, Metric> loads_;
  GhostStore<C, Data, true> ghosts_;
  mutable std::vector<std::size_t> offsets_;
  mpi::MigrationCounters migration_{}, migration_global_{};
  std::uint64_t generation_ = 0;
  std::size_t max_leaves_ = 0;
};

}  // namespace irregular::detail
