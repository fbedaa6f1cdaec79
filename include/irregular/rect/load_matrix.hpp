// LoadGrid: an n1 x n2 (x n3) array of non-negative loads with D-dimensional prefix sums of wide
// sums, so any box's load costs 2^D lookups (saule-bas-catalyurek §2.1, the 2D prefix-sum array).
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/core/index.hpp>
#include <irregular/rect/partition.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace irregular::rect {

/// Wide type for sums of loads of type T: 64-bit integers for integer loads up to 32 bits,
/// 128-bit for 64-bit integer loads, double for floating point loads.
template <class T>
struct load_sum {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>,
                "irregular::rect: loads must be an arithmetic type");
  /// The sum type.
  using type = std::conditional_t<std::is_floating_point_v<T>, double,
                                  std::conditional_t<(sizeof(T) <= 4), std::uint64_t, uint128_t>>;
};
/// The wide sum type of loads of type T.
template <class T>
using load_sum_t = typename load_sum<T>::type;

/// A D-dimensional array of non-negative loads, row-major (the last dimension varies fastest),
/// with its prefix sums built once.
template <class T, int D>
class LoadGrid {
 public:
  static_assert(D >= 1 && D <= 4, "irregular::rect::LoadGrid supports 1 to 4 dimensions");
  /// The load type.
  using value_type = T;
  /// The type of sums of loads.
  using sum_type = load_sum_t<T>;
  /// Number of dimensions.
  static constexpr int dim = D;

  /// An empty array.
  LoadGrid() = default;

  /// Takes `values` (row-major, size = product of extents). Throws irregular::invalid_argument
  /// for a zero extent, a size mismatch, or a negative / NaN / infinite load (naming the cell).
  LoadGrid(const std::array<std::size_t, D>& extents, std::vector<T> values)
      : n_(extents), values_(std::move(values)) {
    std::size_t cells = 1;
    for (int d = 0; d < D; ++d) {
      if (n_[d] == 0)
        throw invalid_argument("irregular::rect::LoadGrid: extent of dimension " +
                               std::to_string(d) + " is zero");
      cells *= n_[d];
    }
    if (values_.size() != cells)
      throw invalid_argument("irregular::rect::LoadGrid: " + std::to_string(values_.size()) +
                             " values given for " + std::to_string(cells) + " cells");
    for (std::size_t i = 0; i < cells; ++i) {
      const T v = values_[i];
      bool bad = false;
      if constexpr (std::is_floating_point_v<T>)
        bad = !std::isfinite(v) || v < 0;
      else if constexpr (std::is_signed_v<T>)
        bad = v < 0;
      if (bad)
        throw invalid_argument("irregular::rect::LoadGrid: load at cell " + cell_name(i) +
                               " is negative, NaN or infinite");
    }
    build_prefix();
  }

  /// Cells along each dimension.
  [[nodiscard]] const std::array<std::size_t, D>& extents() const noexcept { return n_; }
  /// Cells along dimension `d`.
  [[nodiscard]] std::size_t extent(int d) const noexcept { return n_[d]; }
  /// Number of cells.
  [[nodiscard]] std::size_t cells() const noexcept { return values_.size(); }
  /// The loads, row-major.
  [[nodiscard]] const std::vector<T>& values() const noexcept { return values_; }
  /// The whole array as a box: [0, extents).
  [[nodiscard]] Rect<D> box() const noexcept {
    Rect<D> r;
    r.hi = n_;
    return r;
  }

  /// Load of one cell.
  [[nodiscard]] T operator()(const std::array<std::size_t, D>& c) const noexcept {
    std::size_t i = 0;
    for (int d = 0; d < D; ++d) i = i * n_[d] + c[d];
    return values_[i];
  }

  /// Load of a box (O(2^D)). Empty boxes have load 0.
  [[nodiscard]] sum_type load(const Rect<D>& r) const noexcept {
    if (r.empty()) return sum_type{};
    if constexpr (D == 2) {
      const std::size_t s = stride_[0];
      const sum_type* p = prefix_.data();
      return p[r.hi[0] * s + r.hi[1]] - p[r.lo[0] * s + r.hi[1]] - p[r.hi[0] * s + r.lo[1]] +
             p[r.lo[0] * s + r.lo[1]];
    } else {
      sum_type acc{};
      for (unsigned m = 0; m < (1u << D); ++m) {
        std::size_t off = 0;
        int lows = 0;
        for (int d = 0; d < D; ++d) {
          const bool low = (m >> d) & 1u;
          lows += low;
          off += (low ? r.lo[d] : r.hi[d]) * stride_[d];
        }
        // wrapping arithmetic is exact for unsigned sums since the result is non-negative
        if (lows % 2 == 0)
          acc += prefix_[off];
        else
          acc -= prefix_[off];
      }
      return acc;
    }
  }
  /// Load of the whole array.
  [[nodiscard]] sum_type total() const noexcept { return prefix_.back(); }

  /// Loads summed over every dimension but `d`: an array of extent(d) values.
  [[nodiscard]] std::vector<sum_type> projection(int d) const {
    std::vector<sum_type> out(n_[d]);
    Rect<D> r = box();
    for (std::size_t i = 0; i < n_[d]; ++i) {
      r.lo[d] = i;
      r.hi[d] = i + 1;
      out[i] = load(r);
    }
    return out;
  }

  /// Largest single-cell load.
  [[nodiscard]] T max_value() const noexcept {
    T m{};
    for (T v : values_) m = v > m ? v : m;
    return m;
  }

  /// Raw prefix sums: entry sum_d k_d * stride(d) holds the load of [0, k) (extents + 1 each).
  [[nodiscard]] const std::vector<sum_type>& prefix() const noexcept { return prefix_; }
  /// Stride of dimension `d` in prefix().
  [[nodiscard]] std::size_t stride(int d) const noexcept { return stride_[d]; }
  /// 2D only: the prefix sums transposed (entry k1 * (n1 + 1) + k0), so that chains along
  /// dimension 0 are contiguous too; jagged -VER partitioners scan them.
  [[nodiscard]] const std::vector<sum_type>& prefix_transposed() const noexcept {
    return prefix_t_;
  }

 private:
  std::string cell_name(std::size_t i) const {
    std::array<std::size_t, D> c{};
    for (int d = D - 1; d >= 0; --d) {
      c[d] = i % n_[d];
      i /= n_[d];
    }
    std::string s = "(";
    for (int d = 0; d < D; ++d) s += (d ? ", " : "") + std::to_string(c[d]);
    return s + ")";
  }

  void build_prefix() {
    std::size_t size = 1;
    for (int d = D - 1; d >= 0; --d) {
      stride_[d] = size;
      size *= n_[d] + 1;
    }
    prefix_.assign(size, sum_type{});
    // copy values in at offset +1 in every dimension, then run a prefix sum along each axis
    std::array<std::size_t, D> c{};
    for (std::size_t i = 0; i < values_.size(); ++i) {
      std::size_t off = 0;
      for (int d = 0; d < D; ++d) off += (c[d] + 1) * stride_[d];
      prefix_[off] = static_cast<sum_type>(values_[i]);
      for (int d = D - 1; d >= 0; --d) {
        if (++c[d] < n_[d]) break;
        c[d] = 0;
      }
    }
    for (int d = 0; d < D; ++d) {
      const std::size_t st = stride_[d];
      for (std::size_t off = 0; off < size; ++off) {
        const std::size_t k = (off / st) % (n_[d] + 1);
        if (k > 0) prefix_[off] += prefix_[off - st];
      }
    }
    if constexpr (D == 2) {
      const std::size_t r0 = n_[0] + 1, r1 = n_[1] + 1;
      prefix_t_.resize(size);
      for (std::size_t i = 0; i < r0; ++i)
        for (std::size_t j = 0; j < r1; ++j) prefix_t_[j * r0 + i] = prefix_[i * r1 + j];
    }
  }

  std::array<std::size_t, D> n_{};
  std::array<std::size_t, D> stride_{};
  std::vector<T> values_;
  std::vector<sum_type> prefix_;
  std::vector<sum_type> prefix_t_;
};

/// The paper's load matrix: n1 x n2.
template <class T>
using LoadMatrix = LoadGrid<T, 2>;
/// The 3D extension: n1 x n2 x n3.
template <class T>
using LoadVolume = LoadGrid<T, 3>;

}  // namespace irregular::rect
