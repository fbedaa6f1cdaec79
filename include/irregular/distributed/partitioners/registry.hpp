// The runtime twin of the Partitioner policies: a partitioner picked by name, as Zoltan's
// LB_METHOD, for codes that read it from an input file. Its map is AnyOwnershipMap, which holds
// whichever map the chosen partitioner produces. To add a partitioner: its header, its policy in
// `Policies`, its map in `Maps`, and one line in `ByName::resolve` — the domain does not change.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/maps/ownership_map.hpp>
#include <irregular/distributed/maps/segment_map.hpp>
#include <irregular/distributed/partitioners/bounded_neighbours.hpp>
#include <irregular/distributed/partitioners/detail/ordered_chain.hpp>
#include <irregular/distributed/partitioners/partitioner.hpp>
#include <irregular/distributed/partitioners/rectangular.hpp>
#include <irregular/distributed/partitioners/sfc_blocking.hpp>
#include <irregular/rect/registry.hpp>

#include <boost/serialization/split_member.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace irregular {

namespace detail {
template <SpaceFillingCurve C, bool Rect = (C::dim == 2 || C::dim == 3), bool Rows = (C::dim == 2)>
struct Kinds {
  using Policies = std::variant<partitioner::SfcBlocking>;
  using Maps = std::variant<SegmentMap<C>>;
};
template <SpaceFillingCurve C>
struct Kinds<C, true, false> {
  using Policies = std::variant<partitioner::SfcBlocking, partitioner::Rectangular>;
  using Maps = std::variant<SegmentMap<C>, RectangleMap<C>>;
};
template <SpaceFillingCurve C>  // 2D: the bounded-neighbours row maps too
struct Kinds<C, true, true> {
  using Policies = std::variant<partitioner::SfcBlocking, partitioner::Rectangular,
                                partitioner::BoundedNeighbours>;
  using Maps = std::variant<SegmentMap<C>, RectangleMap<C>, RowMap<C>>;
};

// "BN-<NS>[-8][-T]": Bounded Neighbours with bound NS, the 8-neighbour stencil, a toroidal
// domain; false when the name is not of that form.
inline bool parse_bounded_neighbours(const std::string& n, partitioner::BoundedNeighbours& bn) {
  if (n.rfind("BN-", 0) != 0) return false;
  std::size_t i = 3, digits = 0;
  int ns = 0;
  for (; i < n.size() && std::isdigit(static_cast<unsigned char>(n[i])) && digits < 6;
       ++i, ++digits)
    ns = ns * 10 + (n[i] - '0');
  if (digits == 0) return false;
  bn.ns = ns;
  if (n.compare(i, 2, "-8") == 0) {
    bn.stencil = rows::Stencil::eight;
    i += 2;
  }
  if (n.compare(i, 2, "-T") == 0) {
    bn.toroidal = true;
    i += 2;
  }
  return i == n.size();
}

inline std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The canonical spelling of `n`, an upper-case name rect::make_partitioner<double, D> accepted:
// without the default suffix it implies (-BEST of the jagged families, -LOAD of the hierarchical
// ones), a hybrid's parts canonical and its MIN= the number the registry reads (none when it is
// HybridOptions' default). Follows make_partitioner's parse (rect/registry.hpp).
template <int D>
std::string canonical_rectangular(const std::string& n) {
  if (n.rfind("HYBRID(", 0) == 0 && n.back() == ')') {
    const std::string inner = n.substr(7, n.size() - 8);
    const auto slash = inner.find('/');
    std::string second = inner.substr(slash + 1), min;
    if (const auto comma = second.find(','); comma != std::string::npos) {
      const std::size_t parts = std::stoul(second.substr(comma + 5));  // after ",MIN="
      second.resize(comma);
      if (parts != rect::HybridOptions{}.min_parts) min = ",MIN=" + std::to_string(parts);
    }
    return "HYBRID(" + canonical_rectangular<D>(inner.substr(0, slash)) + "/" +
           canonical_rectangular<D>(second) + min + ")";
  }
  const auto names = rect::partitioner_names<D>();
  for (const std::string implied : {"-BEST", "-LOAD"})
    if (ends_with(n, implied)) {
      const std::string base = n.substr(0, n.size() - implied.size());
      if (std::find(names.begin(), names.end(), base) != names.end()) return base;
    }
  return n;
}
}  // namespace detail

/// An OwnershipMap holding one of the registry's maps (the runtime twin's map type).
template <SpaceFillingCurve C>
class AnyOwnershipMap {
 public:
  /// The curve whose indices the map answers for.
  using curve_type = C;
  /// The curve's index type.
  using index_type = typename C::index_type;
  /// Dimension of the cells.
  static constexpr int dim = C::dim;
  /// False: which kind it holds is not known at compile time.
  static constexpr bool contiguous_segments = false;  // not known at compile time
  /// The variant over the registry's maps (SegmentMap, RowMap in 2D, RectangleMap in 2D/3D).
  using variant_type = typename detail::Kinds<C>::Maps;

  AnyOwnershipMap() = default;
  /// Everything on rank 0 of `parts` ranks, as a SegmentMap.
  explicit AnyOwnershipMap(int parts) : map_(SegmentMap<C>(parts)) {}
  /// Holds `map`, one of the registry's maps.
  template <class M>
  requires std::is_constructible_v<variant_type, M> AnyOwnershipMap(M map)
      : map_(std::move(map)) {}  // NOLINT: a map is an AnyOwnershipMap

  /// The concrete map, or nullptr when it holds another kind.
  template <class M>
  [[nodiscard]] const M* get_if() const noexcept {
    return std::get_if<M>(&map_);
  }
  /// The variant itself, for std::visit.
  [[nodiscard]] const variant_type& variant() const noexcept { return map_; }

  /// The held map's parts() (see OwnershipMap for these answers).
  [[nodiscard]] int parts() const {
    return visit([](const auto& m) { return m.parts(); });
  }
  /// The held map's owner(i).
  [[nodiscard]] int owner(index_type i) const {
    return visit([&](const auto& m) { return m.owner(i); });
  }
  /// The held map's leaf_owner(c).
  [[nodiscard]] int leaf_owner(const Cell<dim>& c) const {
    return visit([&](const auto& m) { return m.leaf_owner(c); });
  }
  /// The held map's holders(iv).
  [[nodiscard]] std::vector<int> holders(IndexInterval<index_type> iv) const {
    return visit([&](const auto& m) { return m.holders(iv); });
  }
  /// The held map's neighbour_ranks(rank, per).
  [[nodiscard]] std::vector<int> neighbour_ranks(int rank, Periodicity<dim> per = {}) const {
    return visit([&](const auto& m) { return m.neighbour_ranks(rank, per); });
  }
  /// The held map's splits(c).
  [[nodiscard]] bool splits(const Cell<dim>& c) const {
    return visit([&](const auto& m) { return m.splits(c); });
  }
  /// The held map's hold_whole(cells), held again.
  [[nodiscard]] AnyOwnershipMap hold_whole(std::span<const Cell<dim>> cells) const {
    return std::visit([&](const auto& m) { return AnyOwnershipMap(m.hold_whole(cells)); }, map_);
  }

  /// Boost.Serialization: the kind, then the held map.
  template <class Archive>
  void save(Archive& ar, unsigned) const {
    std::uint32_t kind = static_cast<std::uint32_t>(map_.index());
    ar& kind;
    std::visit([&](const auto& m) { ar& m; }, map_);
  }
  /// Boost.Serialization: reads the kind, then that map. Throws irregular::invalid_argument for
  /// an unknown kind.
  template <class Archive>
  void load(Archive& ar, unsigned) {
    std::uint32_t kind = 0;
    ar& kind;
    if (kind >= std::variant_size_v<variant_type>)
      throw invalid_argument("irregular::AnyOwnershipMap: unknown map kind in the archive");
    map_ = make(kind);
    std::visit([&](auto& m) { ar& m; }, map_);
  }
  /// Boost.Serialization: save() or load(), as the archive does.
  template <class Archive>
  void serialize(Archive& ar, unsigned version) {
    if constexpr (Archive::is_saving::value)
      save(ar, version);
    else
      load(ar, version);
  }

 private:
  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit(std::forward<F>(f), map_);
  }
  template <std::size_t K = 0>
  static variant_type make(std::uint32_t kind) {
    if constexpr (K + 1 < std::variant_size_v<variant_type>)
      if (kind != K) return make<K + 1>(kind);
    return variant_type(std::in_place_index<K>);
  }

  variant_type map_{};
};

namespace partitioner {

/// A partitioner chosen by name at run time (case-insensitive):
///  - "SFC": SfcBlocking with the optimal cut; "SFC-GREEDY": the one-pass threshold cut;
///  - any rectangular algorithm rect::make_partitioner accepts (2D and 3D), e.g.
///    "JAG-M-HEUR-PROBE", "HIER-RB", "HYBRID(HIER-RELAXED/JAG-M-OPT)": Rectangular with the
///    automatic grid level (`level` sets it; -1 automatic);
///  - 2D: "BN-<NS>" (e.g. "BN-2", "BN-4"): BoundedNeighbours with the bound NS, the paper's
///    4-neighbour stencil and protocol, the grid at `level` (-1 automatic); "-8" after NS for
///    the 8-neighbour stencil, then "-T" for a toroidal domain (e.g. "BN-4-8-T").
struct ByName {
  std::string name = "SFC";  ///< the partitioner's name (case-insensitive)
  int level = -1;            ///< grid level of the rectangular and BN partitioners; -1: automatic

  /// The map it produces: whichever the named partitioner makes.
  template <SpaceFillingCurve C>
  using map_type = AnyOwnershipMap<C>;

  /// The policy the name stands for. Throws irregular::invalid_argument for an unknown name.
  template <SpaceFillingCurve C>
  typename detail::Kinds<C>::Policies by_name() const {
    return resolve<C>().second;
  }

  /// The name as the registry resolves it: upper case, a BN bound without leading zeros, a
  /// rectangular name without the suffix it implies (-BEST, -LOAD), a hybrid's parts likewise.
  /// Two names stand for the same partitioner exactly when their canonical names are equal.
  /// Throws irregular::invalid_argument for an unknown name.
  template <SpaceFillingCurve C>
  [[nodiscard]] std::string canonical_name() const {
    return resolve<C>().first;
  }

  /// The named partitioner's check(); throws irregular::invalid_argument for an unknown name.
  template <SpaceFillingCurve C>
  void check(int parts) const {
    std::visit([&](const auto& p) { p.template check<C>(parts); }, by_name<C>());
  }

  /// The SFC family cuts the chain in curve order: under a map whose parts are not curve
  /// segments (rectangles, rows) it cuts a sorted copy of (start, level, load) instead, so its
  /// map is the one the same leaves give from an SFC start. Collective over comm.
  template <SpaceFillingCurve C>
  AnyOwnershipMap<C> partition(const boost::mpi::communicator& comm, const LeafChain<C>& chain,
                               const AnyOwnershipMap<C>* current) const {
    return std::visit(
        [&](const auto& p) -> AnyOwnershipMap<C> {
          using P = std::remove_cvref_t<decltype(p)>;
          using M = typename P::template map_type<C>;
          // The kind of the replicated map decides: every rank takes the same path.
          if constexpr (std::is_same_v<P, SfcBlocking>)
            if (!irregular::detail::in_rank_order(current)) {
              const irregular::detail::OrderedChain<C> sorted(comm, chain.leaves, chain.loads,
                                                              irregular::detail::ordered_chain_tag);
              return AnyOwnershipMap<C>(p.template partition<C>(
                  comm, LeafChain<C>{sorted.leaves, sorted.loads, chain.capacities, chain.traffic},
                  nullptr));
            }
          const M* cur = current ? current->template get_if<M>() : nullptr;
          return AnyOwnershipMap<C>(p.template partition<C>(comm, chain, cur));
        },
        by_name<C>());
  }

 private:
  // The canonical name and the policy built from it: by_name and canonical_name (which the
  // advisor compares across ranks) cannot disagree.
  template <SpaceFillingCurve C>
  std::pair<std::string, typename detail::Kinds<C>::Policies> resolve() const {
    const auto n = detail::upper(name);
    if (n == "SFC") return {n, SfcBlocking{BlockingCut::optimal}};
    if (n == "SFC-GREEDY") return {n, SfcBlocking{BlockingCut::greedy}};
    if constexpr (C::dim == 2) {
      BoundedNeighbours bn{.level = level};
      if (detail::parse_bounded_neighbours(n, bn))
        return {"BN-" + std::to_string(bn.ns) + (bn.stencil == rows::Stencil::eight ? "-8" : "") +
                    (bn.toroidal ? "-T" : ""),
                bn};
    }
    if constexpr (C::dim == 2 || C::dim == 3) {
      bool known = true;
      try {
        (void)rect::make_partitioner<double, C::dim>(n);
      } catch (const invalid_argument&) {
        known = false;
      }
      if (known) {
        auto canonical = detail::canonical_rectangular<C::dim>(n);
        return {canonical, Rectangular{.algorithm = canonical, .level = level}};
      }
    }
    throw invalid_argument("irregular::partitioner::ByName: unknown partitioner '" + name +
                           "' (known: SFC, SFC-GREEDY" +
                           ((C::dim == 2 || C::dim == 3)
                                ? ", the rectangular algorithms of rect::partitioner_names"
                                : "") +
                           (C::dim == 2 ? ", BN-<NS>[-8][-T])" : ")"));
  }
};

}  // namespace partitioner
}  // namespace irregular
