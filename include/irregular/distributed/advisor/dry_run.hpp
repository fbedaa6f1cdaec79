// The dry run behind compare_partitioners: each candidate partitioner maps the live leaves and
// loads, and its map is measured without moving any element or datum. The ghost counts are
// exact: one collection of leaf records (no values) under the map in force gives every reader
// leaf's neighbours once; for each candidate, a read across two parts makes the leaf read a
// ghost of the reader's part, and each (part, leaf) pair is counted once, at the leaf's holder.
// The remap counts follow the leaves to their new holders, message by message, with the bytes
// of the transport that would carry them (RemapWire).
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/curve/interval.hpp>
#include <irregular/distributed/advisor/comparison.hpp>
#include <irregular/distributed/advisor/cost_model.hpp>
#include <irregular/distributed/advisor/detail/agreement.hpp>
#include <irregular/distributed/advisor/detail/boundary.hpp>
#include <irregular/distributed/advisor/detail/dry_run_support.hpp>
#include <irregular/distributed/ghost/collection.hpp>
#include <irregular/distributed/ghost/request_answer.hpp>
#include <irregular/distributed/htree/local_leaves.hpp>
#include <irregular/distributed/htree/sample_sort.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/distributed/partitioners/leaf_traffic.hpp>
#include <irregular/distributed/partitioners/registry.hpp>
#include <irregular/distributed/remap/remap.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/partition/chain_partition.hpp>
#include <irregular/tree/detail/curve_math.hpp>
#include <irregular/tree/stencil.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace irregular::advisor {

/// Options of one comparison.
struct AdvisorOptions {
  GhostOptions ghosts{};  ///< contact, ghost levels and reader levels the ghost counts are for
  CostModel model{};      ///< figures of the prediction (CostModel::calibrate measures them)
  double steps = 100;     ///< steps a remap is amortized over (> 0)
  int level = -1;         ///< grid level of the rectangular and BN candidates; -1: automatic
};

/// What a comparison reads about the live tree; tags tag .. tag+4 are its own on comm.
template <SpaceFillingCurve C, OwnershipMap M>
struct LiveTree {
  const boost::mpi::communicator& comm;  ///< the domain's ranks
  const LocalLeaves<C>& leaves;          ///< this rank's leaves, sorted by start
  std::span<const double> loads;         ///< one load per leaf
  /// The map in force; nullptr: the ranks' leaves lie in rank order (a build before its map).
  const M* current;
  LeafTraffic<C::dim> traffic;  ///< what the leaves carry (value_bytes > 0)
  int tag;                      ///< first of the five tags
};

/// The dry run over a live tree under stencil S: its ghost records and read lists are made once,
/// then each candidate is measured (Comparer::measure).
template <Stencil S, SpaceFillingCurve C, OwnershipMap M>
class Comparer {
 public:
  using I = typename C::index_type;  ///< the curve's index type

  /// Collects the leaf records and read lists of `live` under S. Collective over live.comm.
  Comparer(const LiveTree<C, M>& live, const AdvisorOptions& opt) : live_(live), opt_(opt) {
    collect_reads();
  }

  /// The report and the map of one candidate. A partitioner that throws on any rank makes every
  /// rank throw the same irregular::collective_error. Collective over live.comm.
  std::pair<CandidateReport, AnyOwnershipMap<C>> measure(const std::string& name) {
    const auto& comm = live_.comm;
    const partitioner::ByName by{name, opt_.level};
    CandidateReport r;
    r.name = name;
    const auto t0 = std::chrono::steady_clock::now();
    AnyOwnershipMap<C> map = mpi::agree(comm, [&] {
      r.family = detail::family_of<C>(by);
      return propose(by);
    });
    r.partition_seconds = mpi::all_reduce_max(
        comm, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    // Hold every leaf whole, as the remap would (remap.hpp, settle_on_map).
    const auto split = splitting_leaves(comm, map, live_.leaves);
    map = map.hold_whole(std::span<const Cell<C::dim>>(split));
    evaluate(map, r);
    if (r.family == "SFC") r.optimal_bottleneck = sfc_optimum();
    return {std::move(r), std::move(map)};
  }

 private:
  const LiveTree<C, M>& live_;
  AdvisorOptions opt_;
  GhostLayer<C> layer_;
  // Reader leaf i's reads, found the first time a candidate needs them and kept: local leaf ids
  // below n and ghost ids n + g, reads_[at_[i] .. at_[i] + count_[i]).
  std::vector<std::uint32_t> reads_;
  std::vector<std::size_t> at_;
  std::vector<std::uint32_t> count_;
  std::vector<std::size_t> ids_, boundary_;
  double heaviest_ = 0, total_ = 0;
  std::optional<double> sfc_optimum_;
  std::optional<detail::OrderedChain<C>> ordered_;

  [[nodiscard]] std::uint64_t values_of_leaf(std::size_t i) const {
    return live_.traffic.per_leaf ? 1 : live_.leaves.counts()[i];
  }
  [[nodiscard]] std::uint64_t values_of_ghost(std::size_t g) const {
    return live_.traffic.per_leaf ? 1 : layer_.counts()[g];
  }

  // Records of the remote leaves the readers read, under the map in force; then every reader's
  // local and ghost reads under S.
  void collect_reads() {
    const auto& leaves = live_.leaves;
    auto collect = [&](const auto& map) {
      ExtensionCache<C> unused;
      CollectionInput<C, std::remove_cvref_t<decltype(map)>> in{
          live_.comm, leaves,    map,    live_.traffic.periodic, opt_.ghosts, 0,
          unused,     live_.tag, nullptr};
      layer_ = ghost::RequestAnswer{}.template collect<S>(in);
    };
    if constexpr (std::is_same_v<M, AnyOwnershipMap<C>>) {
      // The held map itself: a segment map knows its private roots, so interior leaves skip.
      if (live_.current) std::visit(collect, live_.current->variant());
    } else {
      if (live_.current) collect(*live_.current);
    }
    if (!live_.current) collect(detail::shares_map<C>(live_.comm, leaves));
    const std::size_t n = leaves.size();
    if (n + layer_.size() >= std::numeric_limits<std::uint32_t>::max())
      throw limit_exceeded("irregular::compare_partitioners: more than 2^32 leaves on one rank");
    at_.assign(n, unread);
    count_.assign(n, 0);
    double mine[2] = {0, 0}, all[2] = {0, 0};
    for (double l : live_.loads) {
      mine[0] = std::max(mine[0], l);
      mine[1] += l;
    }
    boost::mpi::all_reduce(live_.comm, mine[0], all[0], boost::mpi::maximum<double>());
    boost::mpi::all_reduce(live_.comm, mine[1], all[1], std::plus<double>());
    heaviest_ = all[0];
    total_ = all[1];
  }

  static constexpr std::size_t unread = std::numeric_limits<std::size_t>::max();

  // Reader leaf i's reads under S (local, then ghosts), found once.
  std::span<const std::uint32_t> reads_of(std::size_t i) {
    if (at_[i] == unread) {
      const auto& leaves = live_.leaves;
      const auto& g = opt_.ghosts;
      const auto cell = leaves.cell(i);
      at_[i] = reads_.size();
      irregular::detail::read_by<C, S>(leaves.starts(), leaves.levels(), cell,
                                       live_.traffic.periodic, g.contact, g.levels, ids_);
      for (std::size_t j : ids_)
        if (j != i) reads_.push_back(static_cast<std::uint32_t>(j));
      if (layer_.size() > 0) {
        irregular::detail::read_by<C, S>(layer_.starts(), layer_.levels(), cell,
                                         live_.traffic.periodic, g.contact, g.levels, ids_);
        for (std::size_t j : ids_) reads_.push_back(static_cast<std::uint32_t>(leaves.size() + j));
      }
      count_[i] = static_cast<std::uint32_t>(reads_.size() - at_[i]);
    }
    return std::span<const std::uint32_t>(reads_).subspan(at_[i], count_[i]);
  }

  // The reader leaves that may read across parts under `map` (detail/boundary.hpp).
  void find_boundary(const AnyOwnershipMap<C>& map) {
    detail::boundary_leaves<S, C>(map, live_.leaves, live_.traffic.periodic, opt_.ghosts.readers,
                                  boundary_);
  }

  // The candidate's map from the live chain (in curve order for the SFC family).
  AnyOwnershipMap<C> propose(const partitioner::ByName& by) {
    std::optional<AnyOwnershipMap<C>> cur;
    if constexpr (std::is_same_v<M, AnyOwnershipMap<C>>) {
      if (live_.current) cur = *live_.current;
    } else if constexpr (std::is_constructible_v<AnyOwnershipMap<C>, M>) {
      if (live_.current) cur = AnyOwnershipMap<C>(*live_.current);
    }
    const AnyOwnershipMap<C>* current = cur ? &*cur : nullptr;
    const bool sfc = by.template by_name<C>().index() == 0;
    if (sfc && !detail::in_rank_order(live_.current)) {
      if (!ordered_) ordered_.emplace(live_.comm, live_.leaves, live_.loads, live_.tag + 4);
      return by.template partition<C>(live_.comm, LeafChain<C>{ordered_->leaves, ordered_->loads},
                                      nullptr);
    }
    return by.template partition<C>(live_.comm, LeafChain<C>{live_.leaves, live_.loads},
                                    sfc ? nullptr : current);
  }

  double sfc_optimum() {
    if (!sfc_optimum_) {
      const auto map = propose(partitioner::ByName{"SFC", opt_.level});
      std::vector<int> own;
      detail::leaf_owners(map, live_.leaves, own);
      std::vector<double> mine(static_cast<std::size_t>(live_.comm.size()), 0.0), all(mine.size());
      for (std::size_t i = 0; i < own.size(); ++i)
        mine[static_cast<std::size_t>(own[i])] += live_.loads[i];
      mpi::all_reduce_sum(live_.comm, std::span<const double>(mine), std::span<double>(all));
      sfc_optimum_ = *std::max_element(all.begin(), all.end());
    }
    return *sfc_optimum_;
  }

  // Per part, summed over the ranks.
  enum Column {
    ghost_leaves,
    ghost_in,
    ghost_out,
    remap_sent,
    remap_messages_sent,
    remap_received,
    remap_messages_received,
    remap_leaves,
    remap_values,
    columns
  };
  struct Tally {
    std::vector<std::uint64_t> counts;    // columns x p, column after column
    std::vector<detail::PartPair> edges;  // (owner, reader): the owner sends to the reader
    std::size_t p = 0;
    std::uint64_t& operator()(Column c, std::size_t part) { return counts[c * p + part]; }
  };

  // Everything the report says about a settled map.
  void evaluate(const AnyOwnershipMap<C>& map, CandidateReport& r) {
    const auto& comm = live_.comm;
    const std::size_t p = static_cast<std::size_t>(comm.size());
    std::vector<int> own, ghost_own;
    detail::leaf_owners(map, live_.leaves, own);
    detail::leaf_owners(map, layer_, ghost_own);
    Tally mine{std::vector<std::uint64_t>(columns * p, 0), {}, p};
    count_ghosts(cross_reads(map, own, ghost_own), mine);
    count_remap(map, own, mine);
    Tally all{std::vector<std::uint64_t>(columns * p, 0), {}, p};
    mpi::all_reduce_sum(comm, std::span<const std::uint64_t>(mine.counts),
                        std::span<std::uint64_t>(all.counts));
    std::vector<double> loads(p, 0.0);
    r.part_loads.assign(p, 0.0);
    for (std::size_t i = 0; i < own.size(); ++i)
      loads[static_cast<std::size_t>(own[i])] += live_.loads[i];
    mpi::all_reduce_sum(comm, std::span<const double>(loads), std::span<double>(r.part_loads));
    price(all, messages_and_neighbours(mine.edges, r), r);
  }

  // Reads across parts under the map, each counted once at the holder of the leaf read.
  std::vector<detail::CrossRead<I>> cross_reads(const AnyOwnershipMap<C>& map,
                                                const std::vector<int>& own,
                                                const std::vector<int>& ghost_own) {
    const auto& leaves = live_.leaves;
    const std::size_t n = leaves.size();
    const auto me = static_cast<std::size_t>(live_.comm.rank());
    std::vector<std::vector<detail::CrossRead<I>>> out(static_cast<std::size_t>(live_.comm.size()));
    find_boundary(map);
    for (std::size_t i : boundary_) {
      const int reader = own[i];
      for (const std::size_t j : reads_of(i)) {
        if (j < n) {
          if (own[j] != reader)
            out[me].push_back({leaves.starts()[j], values_of_leaf(j), reader, own[j]});
        } else {
          const std::size_t g = j - n;
          if (ghost_own[g] != reader)
            out[static_cast<std::size_t>(layer_.owners()[g])].push_back(
                {layer_.starts()[g], values_of_ghost(g), reader, ghost_own[g]});
        }
      }
    }
    auto reads = std::move(mpi::sparse_exchange(live_.comm, out, live_.tag + 3).values);
    std::sort(reads.begin(), reads.end(), [](const auto& a, const auto& b) {
      return a.reader != b.reader ? a.reader < b.reader : a.start < b.start;
    });
    reads.erase(std::unique(reads.begin(), reads.end(),
                            [](const auto& a, const auto& b) {
                              return a.reader == b.reader && a.start == b.start;
                            }),
                reads.end());
    return reads;
  }

  // Ghost leaves and values per part, and the (owner, reader) pairs, from this rank's reads.
  static void count_ghosts(const std::vector<detail::CrossRead<I>>& reads, Tally& t) {
    for (const auto& x : reads) {
      const auto reader = static_cast<std::size_t>(x.reader),
                 owner = static_cast<std::size_t>(x.owner);
      t(ghost_leaves, reader) += 1;
      t(ghost_in, reader) += x.values;
      t(ghost_out, owner) += x.values;
      t.edges.push_back({x.owner, x.reader});
    }
    std::sort(t.edges.begin(), t.edges.end());
    t.edges.erase(std::unique(t.edges.begin(), t.edges.end()), t.edges.end());
  }

  // The remap: leaves (and their values) whose part is not this rank's, one message per part.
  void count_remap(const AnyOwnershipMap<C>& map, const std::vector<int>& own, Tally& t) const {
    const std::size_t p = t.p;
    const int me = live_.comm.rank();
    std::vector<std::uint64_t> nl(p, 0), nv(p, 0);
    for (std::size_t i = 0; i < own.size(); ++i)
      if (own[i] != me) {
        nl[static_cast<std::size_t>(own[i])] += 1;
        nv[static_cast<std::size_t>(own[i])] += values_of_leaf(i);
      }
    const bool segments = map.template get_if<SegmentMap<C>>() != nullptr;
    for (std::size_t d = 0; d < p; ++d) {
      if (nl[d] + nv[d] == 0) continue;
      const std::uint64_t b =
          live_.traffic.wire.bytes(segments, live_.traffic.measured, nl[d], nv[d]);
      t(remap_sent, static_cast<std::size_t>(me)) += b;
      t(remap_messages_sent, static_cast<std::size_t>(me)) += 1;
      t(remap_received, d) += b;
      t(remap_messages_received, d) += 1;
      t(remap_leaves, d) += nl[d];
      t(remap_values, d) += nv[d];
    }
  }

  // Messages of an exchange per part: one per (owner, reader) pair of all ranks; neighbour parts
  // (into r): the pairs either way.
  std::vector<std::uint64_t> messages_and_neighbours(const std::vector<detail::PartPair>& edges,
                                                     CandidateReport& r) const {
    const auto p = static_cast<std::size_t>(live_.comm.size());
    std::vector<int> counts;
    auto every = mpi::all_gather_raw(live_.comm, std::span<const detail::PartPair>(edges), counts);
    std::sort(every.begin(), every.end());
    every.erase(std::unique(every.begin(), every.end()), every.end());
    std::vector<std::uint64_t> messages(p, 0);  // sent and received by each part
    for (auto& [a, b] : every) {
      ++messages[static_cast<std::size_t>(a)];
      ++messages[static_cast<std::size_t>(b)];
      if (a > b) std::swap(a, b);
    }
    std::sort(every.begin(), every.end());
    every.erase(std::unique(every.begin(), every.end()), every.end());
    r.part_neighbours.assign(p, 0);
    for (const auto& [a, b] : every) {
      ++r.part_neighbours[static_cast<std::size_t>(a)];
      ++r.part_neighbours[static_cast<std::size_t>(b)];
    }
    return messages;
  }

  // The report's totals and maxima, and the cost model's prediction.
  void price(Tally& all, const std::vector<std::uint64_t>& messages, CandidateReport& r) const {
    const std::size_t p = all.p;
    const auto& model = opt_.model;
    const std::uint64_t vb = live_.traffic.value_bytes;
    r.part_ghost_leaves.assign(p, 0);
    r.part_ghost_bytes.assign(p, 0);
    double slowest = 0, remap = 0, nb_sum = 0;
    for (std::size_t q = 0; q < p; ++q) {
      r.part_ghost_leaves[q] = all(ghost_leaves, q);
      r.part_ghost_bytes[q] = all(ghost_in, q) * vb;
      r.ghost_leaves_total += all(ghost_leaves, q);
      r.ghost_bytes_total += r.part_ghost_bytes[q];
      r.ghost_leaves_max = std::max(r.ghost_leaves_max, all(ghost_leaves, q));
      r.ghost_bytes_max = std::max(r.ghost_bytes_max, r.part_ghost_bytes[q]);
      r.neighbours_max = std::max(r.neighbours_max, r.part_neighbours[q]);
      nb_sum += r.part_neighbours[q];
      r.remap_bytes += all(remap_sent, q);
      r.remap_messages += all(remap_messages_sent, q);
      r.remap_leaves += all(remap_leaves, q);
      r.remap_values += all(remap_values, q);
      // A part's step: its compute, then its exchange (its messages, the bytes in and out).
      const double compute = r.part_loads[q] * model.load_seconds(live_.traffic.measured);
      const double bytes = static_cast<double>((all(ghost_in, q) + all(ghost_out, q)) * vb);
      const double exchange = model.message_seconds(static_cast<double>(messages[q]), bytes);
      if (q == 0 || compute + exchange > slowest) {
        slowest = compute + exchange;
        r.compute_seconds = compute;
        r.exchange_seconds = exchange;
      }
      remap = std::max(
          remap,
          model.message_seconds(
              static_cast<double>(all(remap_messages_sent, q) + all(remap_messages_received, q)),
              static_cast<double>(all(remap_sent, q) + all(remap_received, q))));
    }
    r.neighbours_mean = nb_sum / static_cast<double>(p);
    r.remap_bytes_exact = live_.traffic.wire.exact;
    r.bottleneck = *std::max_element(r.part_loads.begin(), r.part_loads.end());
    const double mean = total_ / static_cast<double>(p);
    r.imbalance = partition::load_imbalance<double>(r.part_loads);
    r.lower_bound = std::max(mean, heaviest_);
    r.remap_seconds = remap;
    r.predicted_seconds = slowest + remap / opt_.steps;
  }
};

/// Measures every candidate named in `names` on the live tree (see Comparer), in the order
/// given; each row is named by the registry's canonical name (ByName::canonical_name). Every rank
/// must ask for the same partitioners, as the registry resolves their names, and the same
/// options: an unknown name, bad options, lists or options that differ between ranks (the error
/// names the ranks that differ from the majority) or a candidate that throws on any rank make
/// every rank throw the same irregular::collective_error. Moves no element or datum. Collective
/// over live.comm.
template <Stencil S, SpaceFillingCurve C, OwnershipMap M>
PartitionerComparison<C> compare(const LiveTree<C, M>& live, std::span<const std::string> names,
                                 const AdvisorOptions& opt) {
  std::vector<std::string> canonical;
  mpi::agree(live.comm, [&] {
    opt.model.validate();
    if (!(opt.steps > 0) || !std::isfinite(opt.steps))
      throw invalid_argument("irregular::compare_partitioners: steps must be finite and > 0");
    if (names.empty()) throw invalid_argument("irregular::compare_partitioners: no candidates");
    for (const auto& n : names) {
      const partitioner::ByName by{n, opt.level};
      by.template check<C>(live.comm.size());
      canonical.push_back(by.template canonical_name<C>());
    }
  });
  // The same candidates and figures on every rank, or the choice would differ between ranks.
  detail::Fingerprint f;
  for (const auto& n : canonical) f.mix(n.c_str(), n.size() + 1);
  const double figures[4] = {opt.steps, opt.model.latency, opt.model.seconds_per_byte,
                             opt.model.seconds_per_load.value_or(-1.0)};
  f.mix(figures, sizeof figures);
  const int ints[6] = {opt.level,
                       static_cast<int>(opt.ghosts.contact),
                       opt.ghosts.levels.min,
                       opt.ghosts.levels.max,
                       opt.ghosts.readers.min,
                       opt.ghosts.readers.max};
  f.mix(ints, sizeof ints);
  detail::agree_on_fingerprint(live.comm, f.value);
  PartitionerComparison<C> out;
  out.steps = opt.steps;
  Comparer<S, C, M> comparer(live, opt);
  for (const auto& n : canonical) {
    auto [row, map] = comparer.measure(n);
    out.rows.push_back(std::move(row));
    out.maps.push_back(std::move(map));
  }
  return out;
}

}  // namespace irregular::advisor
