// IrregularDomain: the H-Tree of one irregular problem distributed over the ranks of a
// communicator, with the SFC blocking partition, migration and threshold-driven rebalancing
// (baiardi-2001 §2–3) and stencil neighbourhoods that name remote owners (§4).
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/element_traits.hpp>
#include <irregular/core/error.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/blocking_partitioner.hpp>
#include <irregular/distributed/detail/index_wire.hpp>
#include <irregular/distributed/distributed_sort.hpp>
#include <irregular/distributed/load_metric.hpp>
#include <irregular/distributed/local_leaves.hpp>
#include <irregular/distributed/migration.hpp>
#include <irregular/distributed/rectangle_map.hpp>
#include <irregular/distributed/replicated_htree.hpp>
#include <irregular/distributed/segment_map.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/communicator.hpp>
#include <irregular/mpi/counters.hpp>
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/rect/load_matrix.hpp>
#include <irregular/rect/registry.hpp>
#include <irregular/tree/neighbours.hpp>
#include <irregular/tree/refine.hpp>
#include <irregular/tree/stencil.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <ranges>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace irregular {

/// Which partitioner maps the leaves onto the ranks.
enum class Partitioning {
  sfc_blocking,  ///< segments of the SFC visit (baiardi-2001 §3): the default
  rectangular,   ///< rectangles of a grid of leaf loads (saule-bas-catalyurek), 2D and 3D
};

/// Options of a domain, fixed at construction.
template <int D, class Metric>
struct DomainOptions {
  BlockingCut cut = BlockingCut::optimal;  ///< how build() and rebalance() cut the chain
  Periodicity<D> periodic{};               ///< toroidal axes for neighbour queries
  Metric load{};                           ///< load metric of the leaves
  Partitioning partitioning = Partitioning::sfc_blocking;
  std::string rect_algorithm = "JAG-M-HEUR-PROBE";  ///< a name rect::make_partitioner accepts
  int rect_level = 4;  ///< the grid of the rectangular partitioners: cells of this level
};

namespace detail {
template <class C, bool Rectangular = (C::dim == 2 || C::dim == 3)>
struct RectMapSlot {
  using type = std::monostate;
};
template <class C>
struct RectMapSlot<C, true> {
  using type = std::optional<RectangleMap<C>>;
};
}  // namespace detail

/// Options of one rebalance() call.
struct RebalanceOptions {
  /// Remap only when max_unbalance, the largest |load_r - average| / average over the ranks,
  /// exceeds this (baiardi-2001 §3's user-defined threshold T, relative to the average load).
  double threshold = 0.05;
  BlockingCut cut = BlockingCut::optimal;
};

/// Loads of all ranks (replicated), as a rebalance decision sees them.
struct LoadReport {
  std::vector<double> loads;
  double average = 0;
  double max_unbalance = 0;  ///< max_r |load_r - average| / average (0 for an empty domain)
  double imbalance = 0;      ///< Lmax / Lavg - 1, the metric of the partitioning papers
};

/// Seconds this rank spent in each phase of the last build() (or the remap of rebalance()).
struct BuildProfile {
  double sort = 0;       ///< distributed sort of the elements by curve index
  double leaves = 0;     ///< leaf construction (straddling counts reduced once)
  double partition = 0;  ///< blocking partition of the leaf chain
  double migration = 0;  ///< moving leaves and elements to their owners
  std::uint64_t sort_bytes = 0;  ///< bytes this rank sent during the sort
};

/// The neighbours of one local leaf: local leaf ids and the index ranges owned by other ranks.
template <class Index>
struct Neighbourhood {
  struct Remote {
    IndexInterval<Index> interval;  ///< finest-level curve indices of the remote space
    int owner;                      ///< the rank that owns it
  };
  std::vector<std::size_t> local;
  std::vector<Remote> remote;
};

/// One distributed irregular problem: elements of type Element located in a Box, an H-Tree
/// refined by a count-based condition, ordered by Curve, partitioned into rank segments.
template <class Element, Stencil S, SpaceFillingCurve C, class Metric = load::Constant>
  requires Locatable<Element, C::dim> && LoadMetric<Metric, C::dim> && (S::dim == C::dim)
class IrregularDomain {
 public:
  static constexpr int dim = C::dim;
  using element_type = Element;
  using curve_type = C;
  using stencil_type = S;
  using index_type = typename C::index_type;
  using condition_type = std::function<bool(const Cell<dim>&, std::size_t)>;
  using options_type = DomainOptions<dim, Metric>;

  /// A view of one local leaf.
  struct Leaf {
    std::size_t id;          ///< local leaf index (0 .. local_leaf_count())
    Cell<dim> cell;          ///< its space
    IndexInterval<index_type> interval;
    std::uint64_t count;     ///< elements in it (all local after build/move)
    double load;             ///< its current load estimate or measurement
    std::span<Element> elements;
  };

  /// `condition(cell, count)` says whether a cell must be split (refine::max_elements(k),
  /// refine::max_level(l) or a user predicate). Collective over comm (duplicates it).
  IrregularDomain(const boost::mpi::communicator& comm, Box<dim> box, condition_type condition,
                  options_type options = {})
      : comm_(comm), box_(box), condition_(std::move(condition)), options_(std::move(options)),
        map_(comm.size()) {
    box_.validate();
    if (!condition_) throw invalid_argument("irregular::IrregularDomain: empty refinement condition");
    if (options_.partitioning == Partitioning::rectangular) {
      if constexpr (dim == 2 || dim == 3) {
        (void)rect::make_partitioner<double, dim>(options_.rect_algorithm);  // unknown names throw here
        if (options_.rect_level < 0 || options_.rect_level > C::max_level || options_.rect_level > 12)
          throw invalid_argument("irregular::IrregularDomain: rect_level must lie in [0, min(12, max_level)]");
      } else {
        throw invalid_argument("irregular::IrregularDomain: rectangular partitioning needs 2 or 3 dimensions");
      }
    }
    leaves_.push_back(0, 0, 0);  // the root: one leaf on rank 0 until build()
    if (comm_.rank() != 0) leaves_.clear();
    loads_.assign(leaves_.size(), 0.0);
    measured_.assign(leaves_.size(), 0.0);
    offsets_.assign(leaves_.size() + 1, 0);
  }

  // ---- building -----------------------------------------------------------------------------

  /// Adds elements given on any rank in any distribution; they join the tree at the next
  /// build(). Throws irregular::collective_error on every rank, naming the element index and the
  /// rank, when any rank passes an element outside the box or with a NaN coordinate; nothing is
  /// inserted then. Collective over comm.
  void insert(std::span<const Element> elements) {
    mpi::agree_on(comm_, first_invalid(elements, "insert"));
    pending_.insert(pending_.end(), elements.begin(), elements.end());
  }
  void insert(const std::vector<Element>& elements) { insert(std::span<const Element>(elements)); }

  /// Builds the H-Tree over all elements (inserted and present): distributed sort by curve
  /// index, leaf construction, blocking partition of the leaves, migration. The result (leaves,
  /// their counts, the partition) does not depend on how elements were spread over the ranks.
  /// Collective over comm.
  void build() {
    migration_ = {};
    profile_ = {};
    auto t0 = clock::now();
    std::vector<Element> all = std::move(elements_);
    all.insert(all.end(), std::make_move_iterator(pending_.begin()), std::make_move_iterator(pending_.end()));
    pending_.clear();
    std::vector<index_type> keys(all.size());
    for (std::size_t i = 0; i < all.size(); ++i) keys[i] = key_of(all[i]);
    mpi::ExchangeStats sort_stats;
    const auto bounds = sample_sort(comm_.get(), all, keys, SegmentMap<C>::domain_end(),
                                    key_fn(), tag_sort, &sort_stats);
    elements_ = std::move(all);
    keys_ = std::move(keys);
    profile_.sort = lap(t0);
    leaves_ = construct_leaves<C>(comm_.get(), bounds, keys_, condition_);
    estimate_loads({});
    profile_.leaves = lap(t0);
    // The sorted runs are a valid segment map already; remap from it to the balanced one.
    map_ = SegmentMap<C>(bounds);
    profile_.sort_bytes = sort_stats.bytes_sent;
    if (rectangular()) rect_remap(true);
    else remap(options_.cut);
  }

  /// Applies `update(Element&)` to every local element (new positions), sends the elements that
  /// left the local segment to their owners, and adapts the tree: cells refine and prune so the
  /// leaves equal a fresh build over the moved elements; segment ends move only where a
  /// coarsened leaf straddles them. If any rank's update yields a position outside the box,
  /// every rank throws irregular::collective_error and no element changes. Collective over comm.
  template <class Update>
  void move_elements(Update&& update) {
    std::vector<Element> moved(elements_);
    for (auto& e : moved) update(e);
    mpi::agree_on(comm_, first_invalid(std::span<const Element>(moved), "move_elements"));
    elements_ = std::move(moved);
    migration_ = {};
    if (rectangular()) {  // re-sort by curve index, rebuild the leaves, keep the rectangles
      rebuild_sorted();
      rect_remap(false);
      return;
    }
    // 1. Elements go to the owners of their new keys (one merged message per partner).
    const int p = comm_.size();
    std::vector<index_type> keys(elements_.size());
    std::vector<int> dest(elements_.size());
    std::vector<std::size_t> offsets(static_cast<std::size_t>(p) + 1, 0);
    for (std::size_t i = 0; i < elements_.size(); ++i) {
      keys[i] = key_of(elements_[i]);
      dest[i] = map_.owner(keys[i]);
      ++offsets[static_cast<std::size_t>(dest[i]) + 1];
    }
    for (int r = 0; r < p; ++r) offsets[static_cast<std::size_t>(r) + 1] += offsets[static_cast<std::size_t>(r)];
    std::vector<Element> grouped(elements_.size());
    {
      auto fill = offsets;
      for (std::size_t i = 0; i < elements_.size(); ++i)
        grouped[fill[static_cast<std::size_t>(dest[i])]++] = std::move(elements_[i]);
    }
    for (int r = 0; r < p; ++r)
      if (r != comm_.rank())
        migration_.elements += offsets[static_cast<std::size_t>(r) + 1] - offsets[static_cast<std::size_t>(r)];
    mpi::ExchangeStats stats;
    auto got = mpi::sparse_exchange(comm_.get(), std::span<const Element>(grouped),
                                    std::span<const std::size_t>(offsets), tag_move, &stats);
    migration_.bytes += stats.bytes_sent;
    migration_.messages += stats.messages_sent;
    elements_ = std::move(got.values);
    keys_.resize(elements_.size());
    for (std::size_t i = 0; i < elements_.size(); ++i) keys_[i] = key_of(elements_[i]);
    detail::sort_by_key(elements_, keys_);
    // 2. The tree adapts: leaves of the new distribution, counted globally.
    const auto old_leaves = std::move(leaves_);
    const auto old_measured = std::move(measured_);
    leaves_ = construct_leaves<C>(comm_.get(), map_.splitters(), keys_, condition_);
    estimate_loads(carry_measurements(old_leaves, old_measured));
    // 3. A coarsened leaf may straddle a segment end: the end moves back to the leaf's start.
    snap_to_leaves();
    compute_offsets();
    finish_counters();
  }

  /// Remaps when the load is unbalanced beyond the threshold: each rank's load is broadcast,
  /// max_unbalance computed, and only if it exceeds `threshold` the chain of leaves is cut anew
  /// and segments shift between ranks (the range property holds). Returns whether it remapped.
  /// Collective over comm.
  bool rebalance(RebalanceOptions opt = {}) {
    if (!(opt.threshold >= 0) || !std::isfinite(opt.threshold))
      throw invalid_argument("irregular::IrregularDomain::rebalance: threshold must be finite and >= 0");
    const auto report = load_report();
    if (report.max_unbalance <= opt.threshold) return false;
    migration_ = {};
    profile_ = {};
    if (rectangular()) rect_remap(true);
    else remap(opt.cut);
    return true;
  }

  // ---- queries (local, no communication) ----------------------------------------------------

  [[nodiscard]] const boost::mpi::communicator& comm() const noexcept { return comm_.get(); }
  [[nodiscard]] const Box<dim>& box() const noexcept { return box_; }
  /// The SFC segment map (with Partitioning::sfc_blocking; the sort's segments otherwise).
  [[nodiscard]] const SegmentMap<C>& ownership() const noexcept { return map_; }
  /// The replicated H-Tree of the current segments: every rank's private roots with their
  /// owners and the hnodes above them, O(p · depth), computed from the splitters alone.
  [[nodiscard]] ReplicatedHTree<C> replicated_tree() const { return ReplicatedHTree<C>(map_); }
  /// The rectangle map (with Partitioning::rectangular, after build()); nullptr otherwise.
  [[nodiscard]] const auto* rectangle_map() const noexcept {
    if constexpr (dim == 2 || dim == 3) return rect_map_ ? &*rect_map_ : nullptr;
    else return static_cast<const void*>(nullptr);
  }
  [[nodiscard]] bool rectangular() const noexcept { return options_.partitioning == Partitioning::rectangular; }
  [[nodiscard]] const LocalLeaves<C>& local_tree() const noexcept { return leaves_; }
  [[nodiscard]] std::size_t local_leaf_count() const noexcept { return leaves_.size(); }
  [[nodiscard]] std::size_t local_element_count() const noexcept { return elements_.size(); }
  [[nodiscard]] std::span<Element> local_elements() noexcept { return elements_; }
  [[nodiscard]] std::span<const Element> local_elements() const noexcept { return elements_; }
  [[nodiscard]] std::span<const index_type> local_keys() const noexcept { return keys_; }
  [[nodiscard]] std::span<const double> local_loads() const noexcept { return loads_; }

  [[nodiscard]] Leaf leaf(std::size_t i) {
    IRREGULAR_ASSERT(i < leaves_.size());
    return Leaf{i, leaves_.cell(i), leaves_.interval(i), leaves_.counts_[i], loads_[i],
                std::span<Element>(elements_).subspan(offsets_[i], offsets_[i + 1] - offsets_[i])};
  }
  /// The local leaves in curve order, as Leaf views: `for (auto leaf : domain.local_leaves())`.
  [[nodiscard]] auto local_leaves() {
    return std::views::iota(std::size_t{0}, leaves_.size()) |
           std::views::transform([this](std::size_t i) { return leaf(i); });
  }

  /// Curve key of a position (finest-level index). Precondition: inside the box.
  [[nodiscard]] index_type key_of_position(const std::array<double, dim>& x) const {
    const coord_t n = ipow<coord_t>(static_cast<coord_t>(C::arity), C::max_level);
    return C::index(box_.cell_of(x, C::max_level, n));
  }
  [[nodiscard]] index_type key_of(const Element& e) const {
    return key_of_position(element_traits<Element>::position(e));
  }
  /// Rank owning a position or a cell (-1 for a cell split among ranks); no communication.
  /// Throws irregular::out_of_domain for a position outside the box.
  [[nodiscard]] int owner_of(const std::array<double, dim>& x) const {
    if (!box_.contains(x)) throw out_of_domain("irregular::IrregularDomain::owner_of: position outside the box");
    const auto k = key_of_position(x);
    if constexpr (dim == 2 || dim == 3)
      if (rectangular()) return rect_map_->owner(k);
    return map_.owner(k);
  }
  [[nodiscard]] int owner_of(const Cell<dim>& c) const {
    (void)curve::checked_index<C>(c);
    if constexpr (dim == 2 || dim == 3)
      if (rectangular()) return rect_map_->owner(c);
    return map_.owner(c);
  }
  /// Local leaf containing a position, or local_leaf_count() when another rank owns it.
  [[nodiscard]] std::size_t leaf_containing(const std::array<double, dim>& x) const {
    if (!box_.contains(x)) throw out_of_domain("irregular::IrregularDomain::leaf_containing: position outside the box");
    return leaves_.find(key_of_position(x));
  }

  /// Every leaf whose space meets the stencil cells of local leaf `i` (same, coarser and finer
  /// levels): local ones by id, remote ones as index ranges with their owner rank.
  void neighbours(std::size_t i, Neighbourhood<index_type>& out) const {
    IRREGULAR_ASSERT(i < leaves_.size());
    const auto c = leaves_.cell(i);
    neighbours_of_cell<C, S>(leaves_.starts(), leaves_.levels(), c, options_.periodic, out.local);
    out.remote.clear();
    if (comm_.size() == 1) return;  // nothing is remote
    uncovered_stencil_intervals<C, S>(leaves_.starts(), leaves_.levels(), c, options_.periodic,
                                      [&](IndexInterval<index_type> iv) {
      if constexpr (dim == 2 || dim == 3) {
        if (rectangular()) {  // rectangles are not curve ranges: report the range per holder
          for (int r : rect_map_->holders(iv))
            if (r != comm_.rank()) out.remote.push_back({iv, r});
          return;
        }
      }
      for (int r : map_.owners(iv)) {
        if (r == comm_.rank()) continue;
        const auto seg = map_.segment(r);
        out.remote.push_back({{std::max(iv.start, seg.start), std::min(iv.end, seg.end)}, r});
      }
    });
    std::sort(out.remote.begin(), out.remote.end(), [](const auto& a, const auto& b) {
      return a.interval.start != b.interval.start ? a.interval.start < b.interval.start : a.owner < b.owner;
    });
    out.remote.erase(std::unique(out.remote.begin(), out.remote.end(),
                                 [](const auto& a, const auto& b) {
                                   return a.interval == b.interval && a.owner == b.owner;
                                 }),
                     out.remote.end());
  }
  [[nodiscard]] Neighbourhood<index_type> neighbours(std::size_t i) const {
    Neighbourhood<index_type> out;
    neighbours(i, out);
    return out;
  }

  /// What the last build / move_elements / rebalance moved, summed over all ranks (replicated).
  [[nodiscard]] const mpi::MigrationCounters& last_migration() const noexcept { return migration_global_; }

  /// This rank's phase timings of the last build() or remapping rebalance().
  [[nodiscard]] const BuildProfile& last_profile() const noexcept { return profile_; }

  /// Times the work on a local leaf (load::Measured): the seconds join the leaf's load.
  [[nodiscard]] ScopedTimer time_leaf(std::size_t i) {
    static_assert(detail::MeasuredMetric<Metric>, "irregular::IrregularDomain::time_leaf needs load::Measured");
    IRREGULAR_ASSERT(i < leaves_.size());
    timed_ = true;
    return ScopedTimer(measured_[i]);
  }

  // ---- collective summaries -----------------------------------------------------------------

  /// Every rank's load, the average and the unbalance. Collective over comm.
  [[nodiscard]] LoadReport load_report() {
    refresh_measured_loads();
    double mine = 0;
    for (double l : loads_) mine += l;
    LoadReport r;
    boost::mpi::all_gather(comm_.get(), mine, r.loads);
    double total = 0, lmax = 0;
    for (double l : r.loads) { total += l; lmax = std::max(lmax, l); }
    r.average = total / static_cast<double>(r.loads.size());
    if (r.average > 0) {
      for (double l : r.loads) r.max_unbalance = std::max(r.max_unbalance, std::abs(l - r.average) / r.average);
      r.imbalance = lmax / r.average - 1;
    }
    return r;
  }
  /// Number of elements over all ranks, inserted-but-not-built ones included. Collective over comm.
  [[nodiscard]] std::uint64_t global_element_count() const {
    std::uint64_t n = elements_.size() + pending_.size(), total = 0;
    boost::mpi::all_reduce(comm_.get(), n, total, std::plus<std::uint64_t>());
    return total;
  }
  /// Number of leaves over all ranks. Collective over comm.
  [[nodiscard]] std::uint64_t global_leaf_count() const {
    std::uint64_t n = leaves_.size(), total = 0;
    boost::mpi::all_reduce(comm_.get(), n, total, std::plus<std::uint64_t>());
    return total;
  }

 private:
  using clock = std::chrono::steady_clock;
  static double lap(clock::time_point& t0) {
    const auto t1 = clock::now();
    const double s = std::chrono::duration<double>(t1 - t0).count();
    t0 = t1;
    return s;
  }
  // Each phase has its own tag on the domain's own communicator.
  static constexpr int tag_sort = 11, tag_migrate = 12, tag_move = 13;

  /// key_of as a callable for the sort and migration.
  [[nodiscard]] auto key_fn() const {
    return [this](const Element& e) { return key_of(e); };
  }

  /// Cells of the leaves that reach past the segment end of the rank that emitted them (each
  /// rank's last leaf at most; O(p) values gathered): after a rebuild their elements may sit on
  /// the next ranks. Collective over comm.
  [[nodiscard]] std::vector<Cell<dim>> straddling_leaves() const {
    const auto own = map_.segment(comm_.rank());
    std::pair<detail::IndexWire, int> last{detail::IndexWire::from(index_type{0}), -1};
    if (leaves_.size() && leaves_.interval(leaves_.size() - 1).end > own.end)
      last = {detail::IndexWire::from(leaves_.starts_.back()), leaves_.levels_.back()};
    std::vector<std::pair<detail::IndexWire, int>> all;
    boost::mpi::all_gather(comm_.get(), last, all);
    std::vector<Cell<dim>> out;
    for (const auto& [w, level] : all)
      if (level >= 0) out.push_back(curve::cell_of_finest<C>(w.template as<index_type>(), level));
    return out;
  }

  /// Sends leaf i to leaf_dest[i] and element j to elem_dest[j], then refreshes loads, element
  /// offsets and the global counters (measured seconds travel with their leaves).
  void migrate_to(std::span<const int> leaf_dest, std::span<const int> elem_dest) {
    std::vector<double> payload = loads_;
    if constexpr (detail::MeasuredMetric<Metric>) payload = measured_;
    migration_ += migrate<C>(comm_.get(), leaf_dest, elem_dest, leaves_, payload, elements_, keys_, key_fn(),
                             tag_migrate);
    estimate_loads(detail::MeasuredMetric<Metric> ? payload : std::vector<double>{});
    compute_offsets();
    finish_counters();
  }

  std::optional<std::string> first_invalid(std::span<const Element> elements, const char* who) const {
    for (std::size_t i = 0; i < elements.size(); ++i) {
      const auto x = element_traits<Element>::position(elements[i]);
      if (!box_.contains(x)) {
        std::ostringstream os;
        os << "irregular::IrregularDomain::" << who << ": element " << i << " on rank " << comm_.rank()
           << " has position (";
        for (int d = 0; d < dim; ++d) os << (d ? ", " : "") << x[d];
        os << ")";
        bool nan = false;
        for (double v : x) nan = nan || std::isnan(v);
        os << (nan ? ", which is not a number" : ", outside the domain box");
        return os.str();
      }
    }
    return std::nullopt;
  }

  /// Leaf loads from the metric; measured metrics keep the seconds a surviving leaf had.
  void estimate_loads(std::vector<double> measured) {
    loads_.resize(leaves_.size());
    for (std::size_t i = 0; i < leaves_.size(); ++i)
      loads_[i] = options_.load(leaves_.cell(i), static_cast<std::size_t>(leaves_.counts_[i]));
    measured_ = std::move(measured);
    measured_.resize(leaves_.size(), 0.0);
  }

  /// Measured seconds of leaves that exist before and after an adaptation (same start, level).
  std::vector<double> carry_measurements(const LocalLeaves<C>& old, const std::vector<double>& old_measured) const {
    std::vector<double> m(leaves_.size(), 0.0);
    if constexpr (detail::MeasuredMetric<Metric>) {
      std::size_t j = 0;
      for (std::size_t i = 0; i < leaves_.size(); ++i) {
        while (j < old.size() && old.starts_[j] < leaves_.starts_[i]) ++j;
        if (j < old.size() && old.starts_[j] == leaves_.starts_[i] && old.levels_[j] == leaves_.levels_[i])
          m[i] = old_measured[j];
      }
    }
    return m;
  }

  /// With load::Measured, timed leaves report seconds and untimed ones an estimate scaled by
  /// the rank's seconds per element, so both are in the same unit.
  void refresh_measured_loads() {
    if constexpr (detail::MeasuredMetric<Metric>) {
      if (!timed_) return;
      double secs = 0, elems = 0;
      for (std::size_t i = 0; i < leaves_.size(); ++i)
        if (measured_[i] > 0) { secs += measured_[i]; elems += static_cast<double>(leaves_.counts_[i]); }
      const double rate = elems > 0 ? secs / elems : 0;
      for (std::size_t i = 0; i < leaves_.size(); ++i)
        loads_[i] = measured_[i] > 0 ? measured_[i] : rate * static_cast<double>(leaves_.counts_[i]);
    }
  }

  void compute_offsets() {
    offsets_.assign(leaves_.size() + 1, 0);
    std::size_t e = 0;
    for (std::size_t i = 0; i < leaves_.size(); ++i) {
      offsets_[i] = e;
      const auto iv = leaves_.interval(i);
      while (e < keys_.size() && keys_[e] < iv.end) ++e;
    }
    offsets_[leaves_.size()] = e;
    IRREGULAR_ASSERT(e == keys_.size());
  }

  /// Cuts the chain of leaf loads anew and migrates leaves and elements to the new segments.
  void remap(BlockingCut cut) {
    auto t0 = clock::now();
    refresh_measured_loads();
    const auto chain = blocking_partition(comm_.get(), loads_, cut);
    // Separators are global leaf positions; the rank holding leaf s names its start.
    std::uint64_t first = 0, n = leaves_.size();
    boost::mpi::scan(comm_.get(), n, first, std::plus<std::uint64_t>());
    first -= n;
    std::vector<std::pair<std::uint64_t, detail::IndexWire>> mine;
    for (std::size_t k = 1; k + 1 < chain.separators.size(); ++k) {
      const auto s = chain.separators[k];
      if (s >= first && s < first + n) mine.push_back({k, detail::IndexWire::from(leaves_.starts_[s - first])});
    }
    std::vector<std::vector<std::pair<std::uint64_t, detail::IndexWire>>> all;
    boost::mpi::all_gather(comm_.get(), mine, all);
    std::vector<index_type> spl(chain.separators.size(), SegmentMap<C>::domain_end());
    spl[0] = 0;
    for (const auto& v : all)
      for (const auto& [k, w] : v) spl[k] = w.template as<index_type>();
    profile_.partition = lap(t0);
    apply_map(SegmentMap<C>(std::move(spl)));
    profile_.migration = lap(t0);
  }

  /// Sorts all elements by curve index across the ranks and rebuilds the leaves over the sorted
  /// runs (the first phases of build()).
  void rebuild_sorted() {
    auto t0 = clock::now();
    std::vector<index_type> keys(elements_.size());
    for (std::size_t i = 0; i < elements_.size(); ++i) keys[i] = key_of(elements_[i]);
    mpi::ExchangeStats stats;
    const auto bounds = sample_sort(comm_.get(), elements_, keys, SegmentMap<C>::domain_end(),
                                    key_fn(), tag_sort, &stats);
    keys_ = std::move(keys);
    profile_.sort_bytes = stats.bytes_sent;
    migration_.bytes += stats.bytes_sent;  // in this path the sort is part of the movement
    migration_.messages += stats.messages_sent;
    profile_.sort = lap(t0);
    leaves_ = construct_leaves<C>(comm_.get(), bounds, keys_, condition_);
    map_ = SegmentMap<C>(bounds);
    estimate_loads({});
    profile_.leaves = lap(t0);
  }

  /// Rectangular partitioning: when `repartition`, the leaf loads are projected on the grid of
  /// rect_level (one all_reduce of the grid) and cut by the chosen algorithm; then leaves and
  /// elements move to the rectangle owning the grid cell of each leaf's first index.
  /// Precondition: elements sorted in the segments of map_, leaves built over them.
  void rect_remap(bool repartition) {
    if constexpr (dim == 2 || dim == 3) {
      auto t0 = clock::now();
      refresh_measured_loads();
      if (repartition || !rect_map_) {
        const int g = options_.rect_level;
        const auto n = static_cast<std::size_t>(ipow<coord_t>(static_cast<coord_t>(C::arity), g));
        std::array<std::size_t, dim> ext;
        ext.fill(n);
        std::size_t cells = 1;
        for (int d = 0; d < dim; ++d) cells *= n;
        std::vector<double> grid(cells, 0.0), total(cells, 0.0);
        auto at = [&](const Cell<dim>& c) {
          std::size_t i = 0;
          for (int d = 0; d < dim; ++d) i = i * n + static_cast<std::size_t>(c.anchor[d]);
          return i;
        };
        for (std::size_t i = 0; i < leaves_.size(); ++i) {
          const auto c = leaves_.cell(i);
          if (c.level >= g) {
            grid[at(curve::ancestor_at<C>(c, g))] += loads_[i];
            continue;
          }
          // A leaf coarser than the grid spreads its load evenly over its grid cells.
          const coord_t f = ipow<coord_t>(static_cast<coord_t>(C::arity), g - c.level);
          const std::size_t block = static_cast<std::size_t>(ipow<coord_t>(f, dim));
          for (std::size_t k = 0; k < block; ++k) {
            Cell<dim> sub;
            sub.level = g;
            std::size_t t = k;
            for (int d = 0; d < dim; ++d, t /= f) sub.anchor[d] = c.anchor[d] * f + t % f;
            grid[at(sub)] += loads_[i] / static_cast<double>(block);
          }
        }
        boost::mpi::all_reduce(comm_.get(), grid.data(), static_cast<int>(cells), total.data(), std::plus<double>());
        const rect::LoadGrid<double, dim> matrix(ext, std::move(total));
        auto partitioner = rect::make_partitioner<double, dim>(options_.rect_algorithm);
        rect_map_.emplace(g, partitioner(matrix, matrix.box(), static_cast<std::size_t>(comm_.size())));
      }
      profile_.partition = lap(t0);
      // Elements follow their leaf, which may be held by an earlier rank (straddling).
      const auto straddling = straddling_leaves();
      std::vector<int> leaf_dest(leaves_.size()), elem_dest(elements_.size());
      for (std::size_t i = 0; i < leaves_.size(); ++i) leaf_dest[i] = rect_map_->leaf_owner(leaves_.cell(i));
      for (std::size_t j = 0; j < keys_.size(); ++j) {
        const auto i = leaves_.find(keys_[j]);
        if (i < leaves_.size()) { elem_dest[j] = leaf_dest[i]; continue; }
        elem_dest[j] = -1;
        for (const auto& c : straddling)
          if (curve::hnode_interval<C>(c).contains(keys_[j])) elem_dest[j] = rect_map_->leaf_owner(c);
        IRREGULAR_ASSERT(elem_dest[j] >= 0);
      }
      migrate_to(leaf_dest, elem_dest);
      profile_.migration = lap(t0);
    } else {
      (void)repartition;
    }
  }

  /// Moves every leaf and element to the segment of `to` holding its curve index.
  void apply_map(SegmentMap<C> to) {
    std::vector<int> leaf_dest(leaves_.size()), elem_dest(keys_.size());
    for (std::size_t i = 0; i < leaves_.size(); ++i) leaf_dest[i] = to.owner(leaves_.starts_[i]);
    for (std::size_t j = 0; j < keys_.size(); ++j) elem_dest[j] = to.owner(keys_[j]);
    map_ = std::move(to);
    migrate_to(leaf_dest, elem_dest);
  }

  /// After adaptation a leaf emitted by rank r may reach past r's segment end: the segment ends
  /// inside such leaves move back to their starts.
  void snap_to_leaves() {
    auto spl = map_.splitters();
    bool changed = false;
    for (const auto& c : straddling_leaves()) {
      const auto iv = curve::hnode_interval<C>(c);
      for (std::size_t k = 1; k + 1 < spl.size(); ++k)
        if (spl[k] > iv.start && spl[k] < iv.end) { spl[k] = iv.start; changed = true; }
    }
    if (changed) apply_map(SegmentMap<C>(std::move(spl)));
  }

  void finish_counters() { migration_global_ = mpi::all_reduce_sum(comm_.get(), migration_); }

  mpi::OwnedCommunicator comm_;
  Box<dim> box_;
  condition_type condition_;
  options_type options_;
  SegmentMap<C> map_;
  LocalLeaves<C> leaves_;
  std::vector<double> loads_, measured_;
  std::vector<std::size_t> offsets_;
  std::vector<Element> elements_, pending_;
  std::vector<index_type> keys_;
  mpi::MigrationCounters migration_{}, migration_global_{};
  BuildProfile profile_{};
  typename detail::RectMapSlot<C>::type rect_map_{};
  bool timed_ = false;
};

}  // namespace irregular
