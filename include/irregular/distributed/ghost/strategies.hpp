// The remote-data collection strategies and their runtime twin: ghost::ByName picks request/answer,
// fault prevention or informed fault prevention from a string (an input file, a command line).
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/distributed/ghost/collection.hpp>
#include <irregular/distributed/ghost/fault_prevention.hpp>
#include <irregular/distributed/ghost/informed_fault_prevention.hpp>
#include <irregular/distributed/ghost/request_answer.hpp>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace irregular::ghost {

/// A strategy chosen at run time: "RA" (request/answer), "FP" (fault prevention) or "IFP"
/// (informed fault prevention); the long names from each strategy's name() work too.
class ByName {
 public:
  ByName() = default;
  /// Throws irregular::invalid_argument for an unknown name, listing the known ones.
  explicit ByName(std::string_view name) {
    static constexpr std::array<std::string_view, 3> shorts{"RA", "FP", "IFP"};
    for (std::size_t k = 0; k < shorts.size(); ++k)
      if (name == shorts[k] || name == long_name(k)) {
        set(k);
        return;
      }
    throw invalid_argument(
        "irregular::ghost::ByName: unknown strategy \"" + std::string(name) +
        "\"; known: RA (request/answer), FP (fault prevention), IFP (informed fault prevention)");
  }
  static constexpr bool ships_values = true;  ///< every alternative takes CollectionInput::payload
  /// The chosen strategy's name in reports.
  [[nodiscard]] const char* name() const noexcept {
    return std::visit([](const auto& s) { return s.name(); }, strategy_);
  }
  /// Collective over in.comm.
  template <Stencil S, SpaceFillingCurve C, OwnershipMap M>
  GhostLayer<C> collect(const CollectionInput<C, M>& in) const {
    return std::visit([&](const auto& s) { return s.template collect<S>(in); }, strategy_);
  }
  /// Informed fault prevention's extension for several trees at once
  /// (InformedFaultPrevention::extend); the other strategies have none and send nothing.
  /// Collective over comm.
  template <Stencil S, SpaceFillingCurve C, OwnershipMap M>
  GhostStats extend(const boost::mpi::communicator& comm, std::span<const ExtensionTree<C>> trees,
                    const M& map, Periodicity<C::dim> periodic, std::uint64_t generation,
                    ExtensionCache<C>& cache, int tag, const mpi::MergeOptions& merge = {}) const {
    if (!std::holds_alternative<InformedFaultPrevention>(strategy_)) return {};
    return InformedFaultPrevention::extend<S>(comm, trees, map, periodic, generation, cache, tag,
                                              merge);
  }

 private:
  using Variant = std::variant<InformedFaultPrevention, FaultPrevention, RequestAnswer>;
  static std::string_view long_name(std::size_t k) {
    return k == 0   ? RequestAnswer::name()
           : k == 1 ? FaultPrevention::name()
                    : InformedFaultPrevention::name();
  }
  void set(std::size_t k) {
    if (k == 0)
      strategy_ = RequestAnswer{};
    else if (k == 1)
      strategy_ = FaultPrevention{};
    else
      strategy_ = InformedFaultPrevention{};
  }
  Variant strategy_{};
};

static_assert(GhostStrategy<RequestAnswer> && GhostStrategy<FaultPrevention> &&
              GhostStrategy<InformedFaultPrevention> && GhostStrategy<ByName>);

}  // namespace irregular::ghost
