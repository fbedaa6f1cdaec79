// A named array of a function of each element or datum, for the output writers: a scalar, or a
// vector written with three components as ParaView expects.
#pragma once

#include <irregular/core/error.hpp>

#include <array>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

namespace irregular::io {

/// One output array: `components` doubles computed from each value of type T.
template <class T>
struct Field {
  std::string name;                                        ///< the array's name
  int components = 1;                                      ///< doubles per value, 1 to 9
  std::function<void(const T&, std::span<double>)> value;  ///< fills `components` doubles
};

/// A scalar field: `io::scalar<Data>("u", [](const Data& d) { return d.u; })`.
template <class T, class F>
requires std::is_convertible_v < std::invoke_result_t<F&, const T&>,
double > Field<T> scalar(std::string name, F f) {
  return {std::move(name), 1,
          [f = std::move(f)](const T& t, std::span<double> out) mutable { out[0] = f(t); }};
}

/// A vector field from a function returning std::array<double, N>, N = 1, 2 or 3: written with
/// three components, the missing ones 0 (ParaView shows three-component arrays as vectors).
template <class T, class F>
Field<T> vector(std::string name, F f) {
  using A = std::remove_cvref_t<std::invoke_result_t<F&, const T&>>;
  constexpr std::size_t n = std::tuple_size_v<A>;
  static_assert(n >= 1 && n <= 3, "irregular::io::vector: the function returns 1 to 3 doubles");
  return {std::move(name), 3, [f = std::move(f)](const T& t, std::span<double> out) mutable {
            const A v = f(t);
            for (std::size_t d = 0; d < 3; ++d) out[d] = d < n ? static_cast<double>(v[d]) : 0.0;
          }};
}

namespace detail {
/// Throws irregular::invalid_argument for a field without a name or a function, or with
/// components outside 1..9. `where` prefixes the message.
template <class T>
void check_field_shape(const Field<T>& f, const std::string& where) {
  if (f.name.empty()) throw invalid_argument(where + ": a field has an empty name");
  if (!f.value) throw invalid_argument(where + ": field \"" + f.name + "\" has no function");
  if (f.components < 1 || f.components > 9)
    throw invalid_argument(where + ": field \"" + f.name + "\" has " +
                           std::to_string(f.components) + " components (need 1 to 9)");
}
}  // namespace detail

}  // namespace irregular::io
