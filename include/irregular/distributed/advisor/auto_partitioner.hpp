// partitioner::Auto: the partitioner that, at every partition, compares its candidates on the
// live leaves (compare_partitioners' dry run) and applies the map of least predicted step time;
// hysteresis keeps the family in force unless another is clearly cheaper.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/advisor/cost_model.hpp>
#include <irregular/distributed/advisor/dry_run.hpp>
#include <irregular/distributed/partitioners/partitioner.hpp>
#include <irregular/distributed/partitioners/registry.hpp>
#include <irregular/distributed/remap/remap_plan.hpp>
#include <irregular/tree/stencil.hpp>

#include <boost/mpi/communicator.hpp>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace irregular::partitioner {

/// The Partitioner that picks the fastest candidate at each partition, for stencil S (the
/// domain's): every candidate's map is measured by the dry run of compare_partitioners and
/// priced by the cost model (advisor::CostModel); the cheapest applies. A candidate of another
/// family replaces the family of the map in force only when it is cheaper by more than
/// `hysteresis`. The choice joins RebalanceDecision::choice (applied only when the decision says
/// remapped: a remap that does not pay for itself is declined after the choice), and
/// last_choice() keeps it. Copies share that record
/// and the calibrated model. Capacities and hold_level are not supported (the maps need not be
/// curve segments).
template <Stencil S>
struct Auto {
  /// Registry names (partitioner::ByName); empty: default_candidates().
  std::vector<std::string> candidates{};
  /// Ghost options, cost model, amortization steps and grid level of the comparison.
  advisor::AdvisorOptions advice{};
  /// Measure latency and bandwidth once, at the first partition (CostModel::calibrate); the
  /// model's seconds_per_load is kept. False: advice.model as given.
  bool calibrate = true;
  /// Another family must be predicted cheaper than the best of the family in force by more than
  /// this fraction.
  double hysteresis = 0.05;

  /// The map it produces: whichever the chosen candidate makes.
  template <SpaceFillingCurve C>
  using map_type = AnyOwnershipMap<C>;

  /// SFC on the domain's curve; the two fastest rectangular heuristics (HIER-RB,
  /// JAG-M-HEUR-PROBE) in 2D and 3D; in 2D bounded neighbours with NS = 2 and 4, their stencil
  /// the 8-neighbour one when S reads across corners, toroidal when both axes wrap around.
  template <SpaceFillingCurve C>
  [[nodiscard]] static std::vector<std::string> default_candidates(Periodicity<C::dim> per = {}) {
    std::vector<std::string> v{"SFC"};
    if constexpr (C::dim == 2 || C::dim == 3) {
      v.push_back("HIER-RB");
      v.push_back("JAG-M-HEUR-PROBE");
    }
    if constexpr (C::dim == 2) {
      bool corners = false;
      for (const auto& o : S::offsets) corners |= o[0] != 0 && o[1] != 0;
      const std::string tail = std::string(corners ? "-8" : "") + (per[0] && per[1] ? "-T" : "");
      v.push_back("BN-2" + tail);
      v.push_back("BN-4" + tail);
    }
    return v;
  }

  /// Throws irregular::invalid_argument for an unknown candidate, a bad model or hysteresis.
  template <SpaceFillingCurve C>
  void check(int parts) const {
    for (const auto& n : names<C>({})) ByName{n, advice.level}.template check<C>(parts);
    advice.model.validate();
    if (!(hysteresis >= 0) || !std::isfinite(hysteresis))
      throw invalid_argument("irregular::partitioner::Auto: hysteresis must be finite and >= 0");
    if (!(advice.steps > 0) || !std::isfinite(advice.steps))
      throw invalid_argument("irregular::partitioner::Auto: advice.steps must be finite and > 0");
  }

  /// Compares the candidates and returns the chosen map. Collective over comm.
  template <SpaceFillingCurve C>
  AnyOwnershipMap<C> partition(const boost::mpi::communicator& comm, const LeafChain<C>& chain,
                               const AnyOwnershipMap<C>* current) const {
    auto opt = advice;
    if (calibrate) {
      if (!state_->model) state_->model = advisor::CostModel::calibrate(comm, {}, advice.model);
      opt.model = *state_->model;
    }
    const auto list = names<C>(chain.traffic.periodic);
    const advisor::LiveTree<C, AnyOwnershipMap<C>> live{comm,    chain.leaves,  chain.loads,
                                                        current, chain.traffic, tag};
    auto cmp = advisor::compare<S>(live, list, opt);
    auto pick = static_cast<std::size_t>(cmp.best());
    PartitionerChoice choice;
    // The family in force is the map in force's (none before the first map of a build).
    const std::string family =
        current ? advisor::detail::family_name(current->variant().index()) : std::string();
    if (!family.empty() && cmp.rows[pick].family != family) {
      // The best of the family in force, kept unless the other is clearly cheaper.
      std::optional<std::size_t> same;
      for (std::size_t k = 0; k < cmp.rows.size(); ++k)
        if (cmp.rows[k].family == family &&
            (!same || cmp.rows[k].predicted_seconds < cmp.rows[*same].predicted_seconds))
          same = k;
      if (same && cmp.rows[pick].predicted_seconds >=
                      (1 - hysteresis) * cmp.rows[*same].predicted_seconds) {
        pick = *same;
        choice.kept_family = true;
      }
    }
    for (const auto& r : cmp.rows) {
      choice.candidates.push_back(r.name);
      choice.predicted_seconds.push_back(r.predicted_seconds);
    }
    choice.chosen = cmp.rows[pick].name;
    state_->last = std::move(choice);
    return std::move(cmp.maps[pick]);
  }

  /// The last choice (nullptr before the first partition).
  [[nodiscard]] const PartitionerChoice* last_choice() const noexcept {
    return state_->last ? &*state_->last : nullptr;
  }
  /// The calibrated model (nullptr before the first partition, or without calibration).
  [[nodiscard]] const advisor::CostModel* calibrated_model() const noexcept {
    return state_->model ? &*state_->model : nullptr;
  }

  static constexpr int tag =
      31;  ///< tags tag .. tag+4 of the comparison (the domain's advisor tags)

 private:
  struct State {
    std::optional<advisor::CostModel> model;
    std::optional<PartitionerChoice> last;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();

  template <SpaceFillingCurve C>
  std::vector<std::string> names(Periodicity<C::dim> per) const {
    return candidates.empty() ? default_candidates<C>(per) : candidates;
  }
};

}  // namespace irregular::partitioner
