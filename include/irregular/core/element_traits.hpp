// element_traits<E>: how the library reads an element's position (DESIGN.md "Policies").
// The default accepts a `position` data member or a `position()` member function returning
// something indexable with D doubles (std::array<double, D>, double[D]).
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace irregular {

namespace detail {
template <class E>
concept HasPositionMember = requires(const E& e) {
  e.position[0];
}
&&!requires(const E& e) { e.position(); };
template <class E>
concept HasPositionFunction = requires(const E& e) {
  e.position()[0];
};

template <class P>
struct position_dim : std::integral_constant<int, static_cast<int>(std::tuple_size_v<P>)> {};
template <class T, std::size_t N>
struct position_dim<T[N]> : std::integral_constant<int, static_cast<int>(N)> {};
}  // namespace detail

/// Specialise for element types that keep their position elsewhere; provide
/// `static constexpr int dim` and `static std::array<double, dim> position(const E&)`.
template <class E>
struct element_traits {
  static_assert(detail::HasPositionMember<E> || detail::HasPositionFunction<E>,
                "irregular::element_traits<E>: E needs a `position` member or a `position()` "
                "function returning std::array<double, D>, or a specialisation of "
                "irregular::element_traits<E>");
};

/// For elements with a `position` member: an array, or anything indexable with a tuple size.
template <detail::HasPositionMember E>
struct element_traits<E> {
  /// The type of the `position` member.
  using position_type = std::remove_cvref_t<decltype(std::declval<const E&>().position)>;
  /// Dimension: the number of coordinates of the position.
  static constexpr int dim = detail::position_dim<position_type>::value;
  /// The position as doubles.
  static std::array<double, dim> position(const E& e) noexcept {
    std::array<double, dim> x;
    for (int d = 0; d < dim; ++d) x[d] = static_cast<double>(e.position[d]);
    return x;
  }
};

/// For elements with a `position()` member function.
template <detail::HasPositionFunction E>
struct element_traits<E> {
  /// The type `position()` returns.
  using position_type = std::remove_cvref_t<decltype(std::declval<const E&>().position())>;
  /// Dimension: the number of coordinates of the position.
  static constexpr int dim = detail::position_dim<position_type>::value;
  /// The position as doubles.
  static std::array<double, dim> position(const E& e) noexcept {
    const auto& p = e.position();
    std::array<double, dim> x;
    for (int d = 0; d < dim; ++d) x[d] = static_cast<double>(p[d]);
    return x;
  }
};

/// An element type the library can place: element_traits<E> yields a D-dimensional position.
template <class E, int D>
concept Locatable = requires(const E& e) {
  { element_traits<E>::dim } -> std::convertible_to<int>;
  { element_traits<E>::position(e) } -> std::same_as<std::array<double, D>>;
}
&&element_traits<E>::dim == D;

}  // namespace irregular
