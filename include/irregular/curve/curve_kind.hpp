// CurveKind: the runtime twin of the curve policies (Morton, Hilbert, Peano), for curves chosen
// from an input file. DESIGN.md "Policies".
#pragma once

#include <irregular/core/error.hpp>

#include <string>
#include <string_view>

namespace irregular::curve {

/// Which curve policy: Morton, Hilbert or Peano.
enum class CurveKind { morton, hilbert, peano };

/// "morton", "hilbert" or "peano" (lower case); throws irregular::invalid_argument otherwise.
[[nodiscard]] inline CurveKind parse_curve_kind(std::string_view name) {
  if (name == "morton") return CurveKind::morton;
  if (name == "hilbert") return CurveKind::hilbert;
  if (name == "peano") return CurveKind::peano;
  throw invalid_argument("irregular::curve::parse_curve_kind: unknown curve '" + std::string(name) +
                         "' (expected morton, hilbert or peano)");
}

/// The lower-case name that parse_curve_kind() reads back.
[[nodiscard]] constexpr std::string_view to_string(CurveKind k) noexcept {
  switch (k) {
    case CurveKind::morton:
      return "morton";
    case CurveKind::hilbert:
      return "hilbert";
    case CurveKind::peano:
      return "peano";
  }
  return "unknown";
}

}  // namespace irregular::curve
