// Runtime twin of the 1D chain partitioners: pick the algorithm by name (e.g. from an input
// file). saule-bas-catalyurek §2.2 lists them.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/partition/direct_cut.hpp>
#include <irregular/partition/nicol_plus.hpp>
#include <irregular/partition/optimal_dp.hpp>
#include <irregular/partition/prefix_sums.hpp>
#include <irregular/partition/probe.hpp>
#include <irregular/partition/recursive_bisection.hpp>

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace irregular::partition {

/// The 1D chain partitioners (saule-bas-catalyurek §2.2), for a choice made at run time.
enum class ChainAlgorithm {
  direct_cut,
  recursive_bisection,
  nicol_plus,
  probe_bisection,
  optimal_dp
};

/// The algorithms' names, in enum order.
inline constexpr std::array<std::string_view, 5> chain_algorithm_names = {
    "direct_cut", "recursive_bisection", "nicol_plus", "probe_bisection", "optimal_dp"};

/// The algorithm's name, which parse_chain_algorithm() reads back.
[[nodiscard]] constexpr std::string_view to_string(ChainAlgorithm a) noexcept {
  return chain_algorithm_names[static_cast<std::size_t>(a)];
}

/// Parses one of the names above; throws irregular::invalid_argument on anything else.
[[nodiscard]] inline ChainAlgorithm parse_chain_algorithm(std::string_view name) {
  for (std::size_t i = 0; i < chain_algorithm_names.size(); ++i)
    if (chain_algorithm_names[i] == name) return static_cast<ChainAlgorithm>(i);
  throw invalid_argument("irregular::partition: unknown chain algorithm '" + std::string(name) +
                         "' (expected direct_cut, recursive_bisection, nicol_plus, "
                         "probe_bisection or optimal_dp)");
}

/// The chain of prefix sums `ps` cut into p parts by `algo`.
template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> partition_chain(ChainAlgorithm algo,
                                                        const PrefixSums<T>& ps, std::size_t p) {
  switch (algo) {
    case ChainAlgorithm::direct_cut:
      return direct_cut(ps, p);
    case ChainAlgorithm::recursive_bisection:
      return recursive_bisection(ps, p);
    case ChainAlgorithm::nicol_plus:
      return nicol_plus(ps, p);
    case ChainAlgorithm::probe_bisection:
      return probe_bisection(ps, p);
    case ChainAlgorithm::optimal_dp:
      return optimal_dp(ps, p);
  }
  throw invalid_argument("irregular::partition::partition_chain: invalid ChainAlgorithm value");
}

/// `loads` cut into p parts by `algo`. Throws irregular::invalid_argument for p = 0 or a bad load.
template <class T>
[[nodiscard]] ChainPartition<wide_t<T>> partition_chain(ChainAlgorithm algo,
                                                        std::span<const T> loads, std::size_t p) {
  irregular::detail::check_parts(p, "irregular::partition::partition_chain");
  return partition_chain(algo, PrefixSums<T>(loads), p);
}

}  // namespace irregular::partition
