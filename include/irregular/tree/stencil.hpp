// Stencils: the neighbourhood an element's computation reads, as constexpr cell offsets at the
// same level plus the levels it reaches (baiardi-collecting-remote-data §2, baiardi-2001 §3).
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdlib>
#include <type_traits>

namespace irregular {

/// Per axis: true if the domain wraps around (toroidal) along that axis.
template <int D>
using Periodicity = std::array<bool, D>;

namespace detail {
template <class T>
struct is_offset_array : std::false_type {};
template <std::size_t M, std::size_t N>
struct is_offset_array<std::array<std::array<int, M>, N>> : std::true_type {};
template <class T>
inline constexpr bool is_offset_array_v = is_offset_array<std::remove_cvref_t<T>>::value;

template <int D, std::size_t N>
constexpr auto negate(const std::array<std::array<int, static_cast<std::size_t>(D)>, N>& a) {
  auto r = a;
  for (auto& o : r)
    for (auto& x : o) x = -x;
  return r;
}
}  // namespace detail

// The parts of a Stencil, one concept each, so a compiler error names what is missing.
/// A Stencil's part: an integral `dim`.
template <class S>
concept StencilHasDim = requires {
  { S::dim } -> std::convertible_to<int>;
};
/// A Stencil's part: `offsets` and `inverse_offsets`, arrays of the same type of dim-vectors.
template <class S>
concept StencilHasOffsets = StencilHasDim<S> && requires {
  S::offsets;
  S::inverse_offsets;
  requires detail::is_offset_array_v<decltype(S::offsets)>;
  requires std::same_as<std::remove_cvref_t<decltype(S::offsets)>,
                        std::remove_cvref_t<decltype(S::inverse_offsets)>>;
  requires std::tuple_size_v<std::remove_cvref_t<decltype(S::offsets[0])>>
  == static_cast<std::size_t>(S::dim);
};
/// A Stencil's part: the booleans `same_level`, `coarser` and `finer`.
template <class S>
concept StencilHasLevels = requires {
  { S::same_level } -> std::convertible_to<bool>;
  { S::coarser } -> std::convertible_to<bool>;
  { S::finer } -> std::convertible_to<bool>;
};

/// A stencil policy (stateless type, static constexpr members):
///  - `dim`;
///  - `offsets`: std::array<std::array<int, dim>, N>, the cells (at the element's level) it reads;
///  - `inverse_offsets`: the same type, the negated offsets (who reads me);
///  - `same_level`, `coarser`, `finer`: which leaf levels, relative to the reading leaf, the
///    computation needs (neighbours() reports only those).
template <class S>
concept Stencil = StencilHasDim<S> && StencilHasOffsets<S> && StencilHasLevels<S>;

namespace stencil {

namespace detail {
/// Calls f(offset) for every offset in [-R, R]^D whose norm (L-infinity or L1) lies in [1, R].
template <int D, int R, bool Linf, class F>
constexpr void for_each_offset(F&& f) {
  std::array<int, static_cast<std::size_t>(D)> o{};
  for (auto& x : o) x = -R;
  while (true) {
    int l1 = 0, linf = 0;
    for (int x : o) {
      l1 += x < 0 ? -x : x;
      linf = std::max(linf, x < 0 ? -x : x);
    }
    const int norm = Linf ? linf : l1;
    if (norm >= 1 && norm <= R) f(o);
    int d = 0;
    while (d < D && ++o[static_cast<std::size_t>(d)] > R) o[static_cast<std::size_t>(d++)] = -R;
    if (d == D) break;
  }
}
template <int D, int R, bool Linf>
constexpr std::size_t count_offsets() {
  std::size_t n = 0;
  for_each_offset<D, R, Linf>([&n](const auto&) { ++n; });
  return n;
}
template <int D, int R, bool Linf>
constexpr auto make_offsets() {
  std::array<std::array<int, static_cast<std::size_t>(D)>, count_offsets<D, R, Linf>()> r{};
  std::size_t n = 0;
  for_each_offset<D, R, Linf>([&](const auto& o) { r[n++] = o; });
  return r;
}
}  // namespace detail

/// Von Neumann neighbourhood of radius R: offsets with 1 <= L1 norm <= R.
/// Reaches leaves of any level (the tree need not be 2:1 balanced).
template <int D, int R = 1>
struct VonNeumann {
  static_assert(D >= 1 && R >= 1, "irregular::stencil::VonNeumann needs D >= 1 and R >= 1");
  static constexpr int dim = D;  ///< dimension of the cells it reads
  /// The cells read, relative to the element's cell at its level.
  static constexpr auto offsets = detail::make_offsets<D, R, false>();
  /// The negated offsets: the cells that read this one.
  static constexpr auto inverse_offsets = irregular::detail::negate<D>(offsets);
  static constexpr bool same_level = true;  ///< reads leaves of its own level
  static constexpr bool coarser = true;     ///< reads coarser leaves
  static constexpr bool finer = true;       ///< reads finer leaves
};

/// Moore neighbourhood of radius R: offsets with 1 <= Linf norm <= R ((2R+1)^D - 1 cells).
template <int D, int R = 1>
struct Moore {
  static_assert(D >= 1 && R >= 1, "irregular::stencil::Moore needs D >= 1 and R >= 1");
  static constexpr int dim = D;  ///< dimension of the cells it reads
  /// The cells read, relative to the element's cell at its level.
  static constexpr auto offsets = detail::make_offsets<D, R, true>();
  /// The negated offsets: the cells that read this one.
  static constexpr auto inverse_offsets = irregular::detail::negate<D>(offsets);
  static constexpr bool same_level = true;  ///< reads leaves of its own level
  static constexpr bool coarser = true;     ///< reads coarser leaves
  static constexpr bool finer = true;       ///< reads finer leaves
};

/// A user's compile-time offset list, e.g.
/// Offsets<2, std::array{1, 0}, std::array{0, 1}> (an upwind stencil).
template <int D, std::array<int, static_cast<std::size_t>(D)>... Offs>
struct Offsets {
  static_assert(sizeof...(Offs) >= 1, "irregular::stencil::Offsets needs at least one offset");
  static constexpr int dim = D;  ///< dimension of the cells it reads
  /// The user's offsets, in the order given.
  static constexpr std::array<std::array<int, static_cast<std::size_t>(D)>, sizeof...(Offs)>
      offsets{Offs...};
  /// The negated offsets: the cells that read this one.
  static constexpr auto inverse_offsets = irregular::detail::negate<D>(offsets);
  static constexpr bool same_level = true;  ///< reads leaves of its own level
  static constexpr bool coarser = true;     ///< reads coarser leaves
  static constexpr bool finer = true;       ///< reads finer leaves
};

/// The inverse stencil: who needs me. Inverse<Inverse<S>> has the offsets of S.
template <Stencil S>
struct Inverse {
  static constexpr int dim = S::dim;                   ///< the dimension of S
  static constexpr auto offsets = S::inverse_offsets;  ///< S's inverse offsets.
  static constexpr auto inverse_offsets = S::offsets;  ///< S's offsets.
  static constexpr bool same_level = S::same_level;    ///< as S
  // Reading a coarser leaf means being read by a finer one, and vice versa.
  static constexpr bool coarser = S::finer;  ///< S reads finer leaves: they read this one, coarser.
  static constexpr bool finer = S::coarser;  ///< S reads coarser leaves: they read this one, finer.
};

}  // namespace stencil

static_assert(Stencil<stencil::VonNeumann<2>> && Stencil<stencil::Moore<3, 2>>);
static_assert(stencil::Moore<2>::offsets.size() == 8 &&
              stencil::VonNeumann<3>::offsets.size() == 6);
static_assert(stencil::VonNeumann<2, 2>::offsets.size() == 12);

}  // namespace irregular
