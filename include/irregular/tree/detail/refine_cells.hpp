// The kernels of CellTree::refine: a linear tree's leaves split toward a predicate in one
// recursive sweep, as HTree::build and p4est_refine do, each new cell's datum made by
// init(parent datum, child cell). Three ways to write the result, chosen by what the callbacks
// need and what the data cost to move (bench_tree_anchors, results/tree_anchors.md):
//   one_pass: one descent writes levels and data (init, then split) into growing arrays; the
//     starts follow from the levels. For trivially copyable data of at most 8 bytes (no wider
//     than a start: the growth of the data array costs less than a second descent).
//   exact: split(cell) alone decides, so a first descent writes only the levels (one byte per
//     leaf) and a second makes the data into arrays of the final size: wide data are written
//     once, into pages touched once, instead of being copied by each growth (with 16-byte data
//     those faults and copies were most of the refine).
//   moving: split(cell, data) with data that must move: new data apart, moved in at the end.
// Every kernel calls the callbacks before it changes anything the caller holds: if one throws,
// the input is untouched.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/tree/detail/curve_math.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular::detail {

/// The refined leaves: columns in curve order, and the number of cells split (0: nothing
/// changed and the columns are empty).
template <class Index, class Data>
struct RefinedLeaves {
  std::vector<Index> starts;
  std::vector<std::uint8_t> levels;
  std::vector<Data> data;
  std::size_t n_split = 0;
};

/// Which kernel refine_cells uses (see the top of this file): 0 one_pass, 1 exact, 2 moving.
template <class Data, bool WithData>
inline constexpr int refine_kernel = !std::is_trivially_copyable_v<Data> ? (WithData ? 2 : 1)
                                     : (WithData || sizeof(Data) <= 8)   ? 0
                                                                         : 1;

/// The curve state of the cell at (start, lv): follows its digits down from the root.
template <SpaceFillingCurve C>
typename C::state_type state_at(typename C::index_type start, int lv) noexcept {
  using I = typename C::index_type;
  auto st = C::root_state();
  for (int l = 1; l <= lv; ++l)
    st = C::child_state(st,
                        static_cast<int>((start / span_at<C>(l)) % static_cast<I>(children_of<C>)));
  return st;
}

/// Calls split(cell) or split(cell, data), whichever the kernel was given.
template <bool WithData, class Split, class Cell, class Data>
bool call_split(Split& split, const Cell& c, const Data& d) {
  if constexpr (WithData)
    return split(c, d);
  else
    return split(c);
}

/// Starts of a tiling from its levels: each leaf begins where the previous one ends.
template <SpaceFillingCurve C>
std::vector<typename C::index_type> starts_from_levels(std::span<const std::uint8_t> levels) {
  std::vector<typename C::index_type> s;
  s.reserve(levels.size());
  typename C::index_type at = 0;
  for (const auto l : levels) {
    s.push_back(at);
    at += span_at<C>(l);
  }
  return s;
}

// ---- one_pass --------------------------------------------------------------------------------

template <SpaceFillingCurve C, bool WithData, class Data, class Split, class Init>
std::size_t one_pass_rec(const Cell<C::dim>& cell, typename C::state_type state, const Data& d,
                         Split& split, int max_level, Init& init, std::vector<std::uint8_t>& nl,
                         std::vector<Data>& nd) {
  std::size_t n = 0;
  const auto child_level = static_cast<std::uint8_t>(cell.level + 1);
  for (int k = 0; k < children_of<C>; ++k) {
    const Cell<C::dim> ch =
        child_at_position<C>(cell, static_cast<int>(C::child_position(state, k)));
    Data cd = init(d, ch);
    if (ch.level < max_level && call_split<WithData>(split, ch, std::as_const(cd))) {
      n += 1 + one_pass_rec<C, WithData>(ch, C::child_state(state, k), cd, split, max_level, init,
                                         nl, nd);
    } else {
      nl.push_back(child_level);
      nd.push_back(std::move(cd));  // moved: data that cannot simply be copied use this too
    }
  }
  return n;
}

template <SpaceFillingCurve C, bool WithData, class Data, class Split, class Init>
RefinedLeaves<typename C::index_type, Data> refine_one_pass(
    std::span<const typename C::index_type> s, std::span<const std::uint8_t> l,
    std::span<const Data> data, Split& split, int max_level, Init& init) {
  static_assert(std::is_trivially_copyable_v<Data>);
  RefinedLeaves<typename C::index_type, Data> r;
  r.levels.reserve(4 * s.size());
  r.data.reserve(4 * s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const int lv = l[i];
    if (lv < max_level) {
      const Cell<C::dim> c = cell_at<C>(s[i], lv);
      if (call_split<WithData>(split, c, data[i])) {
        r.n_split += 1 + one_pass_rec<C, WithData>(c, state_at<C>(s[i], lv), data[i], split,
                                                   max_level, init, r.levels, r.data);
        continue;
      }
    }
    r.levels.push_back(static_cast<std::uint8_t>(lv));
    r.data.push_back(data[i]);
  }
  if (r.n_split == 0) return {};
  r.starts = starts_from_levels<C>(r.levels);
  return r;
}

// ---- exact -----------------------------------------------------------------------------------

// Below a split cell: its leaves' levels in curve order; returns the cells split below.
template <SpaceFillingCurve C, class Split>
std::size_t exact_levels(const Cell<C::dim>& cell, typename C::state_type state, Split& split,
                         int max_level, std::vector<std::uint8_t>& nl) {
  std::size_t n = 0;
  const auto child_level = static_cast<std::uint8_t>(cell.level + 1);
  for (int k = 0; k < children_of<C>; ++k) {
    const Cell<C::dim> ch =
        child_at_position<C>(cell, static_cast<int>(C::child_position(state, k)));
    if (ch.level < max_level && split(ch))
      n += 1 + exact_levels<C>(ch, C::child_state(state, k), split, max_level, nl);
    else
      nl.push_back(child_level);
  }
  return n;
}

// Below a split cell whose first leaf is nl[j]: the children's data from d, a leaf's appended,
// a split child's passed down (nl says which is which).
template <SpaceFillingCurve C, class Data, class Init>
void exact_data(const Cell<C::dim>& cell, typename C::state_type state, const Data& d, Init& init,
                const std::vector<std::uint8_t>& nl, std::size_t& j, std::vector<Data>& nd) {
  for (int k = 0; k < children_of<C>; ++k) {
    const Cell<C::dim> ch =
        child_at_position<C>(cell, static_cast<int>(C::child_position(state, k)));
    if (nl[j] == ch.level) {
      nd.push_back(init(d, ch));
      ++j;
    } else {
      const Data cd = init(d, ch);
      exact_data<C>(ch, C::child_state(state, k), cd, init, nl, j, nd);
    }
  }
}

/// split(cell) only. `data` is mutable for data that are not trivially copyable: the kept ones
/// are moved out once every callback has returned.
template <SpaceFillingCurve C, class Data, class Split, class Init>
RefinedLeaves<typename C::index_type, Data> refine_exact(std::span<const typename C::index_type> s,
                                                         std::span<const std::uint8_t> l,
                                                         std::span<Data> data, Split& split,
                                                         int max_level, Init& init) {
  constexpr bool copy_kept = std::is_trivially_copyable_v<Data>;
  RefinedLeaves<typename C::index_type, Data> r;
  // Phase 1 (split): the new leaves' levels.
  r.levels.reserve(4 * s.size());
  std::size_t n_kept = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const int lv = l[i];
    if (lv < max_level) {
      const Cell<C::dim> c = cell_at<C>(s[i], lv);
      if (split(c)) {
        r.n_split += 1 + exact_levels<C>(c, state_at<C>(s[i], lv), split, max_level, r.levels);
        continue;
      }
    }
    r.levels.push_back(static_cast<std::uint8_t>(lv));
    ++n_kept;
  }
  if (r.n_split == 0) return {};
  // Phase 2 (init): the data in final order (trivially copyable), or the new ones only.
  const std::vector<std::uint8_t>& nl = r.levels;
  r.data.reserve(copy_kept ? nl.size() : nl.size() - n_kept);
  std::size_t j = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const int lv = l[i];
    if (nl[j] == lv) {
      if constexpr (copy_kept) r.data.push_back(data[i]);
      ++j;
      continue;
    }
    exact_data<C>(cell_at<C>(s[i], lv), state_at<C>(s[i], lv), std::as_const(data[i]), init, nl, j,
                  r.data);
  }
  r.starts = starts_from_levels<C>(nl);
  // Phase 3 (nothing throws past here): the kept data move in between the new ones.
  if constexpr (!copy_kept) {
    std::vector<Data> out;
    out.reserve(nl.size());
    std::size_t f = 0;
    j = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (nl[j] == l[i]) {
        out.push_back(std::move(data[i]));
        ++j;
        continue;
      }
      for (const auto e = s[i] + span_at<C>(l[i]); j < nl.size() && r.starts[j] < e; ++j)
        out.push_back(std::move(r.data[f++]));
    }
    r.data = std::move(out);
  }
  return r;
}

// ---- moving ----------------------------------------------------------------------------------

/// split(cell, data), data that are not trivially copyable: the new data are made apart, the
/// kept ones moved in once every callback has returned.
template <SpaceFillingCurve C, class Data, class Split, class Init>
RefinedLeaves<typename C::index_type, Data> refine_moving(std::span<const typename C::index_type> s,
                                                          std::span<const std::uint8_t> l,
                                                          std::span<Data> data, Split& split,
                                                          int max_level, Init& init) {
  RefinedLeaves<typename C::index_type, Data> r;
  std::vector<Data> fresh;
  r.levels.reserve(4 * s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const int lv = l[i];
    if (lv < max_level) {
      const Cell<C::dim> c = cell_at<C>(s[i], lv);
      if (split(c, std::as_const(data[i]))) {
        r.n_split += 1 + one_pass_rec<C, true>(c, state_at<C>(s[i], lv), std::as_const(data[i]),
                                               split, max_level, init, r.levels, fresh);
        continue;
      }
    }
    r.levels.push_back(static_cast<std::uint8_t>(lv));
  }
  if (r.n_split == 0) return {};
  r.starts = starts_from_levels<C>(r.levels);
  r.data.reserve(r.levels.size());
  std::size_t f = 0, j = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (r.levels[j] == l[i]) {
      r.data.push_back(std::move(data[i]));
      ++j;
      continue;
    }
    for (const auto e = s[i] + span_at<C>(l[i]); j < r.levels.size() && r.starts[j] < e; ++j)
      r.data.push_back(std::move(fresh[f++]));
  }
  return r;
}

/// The leaves (s, l) with data `data` refined toward split (split(cell) or, WithData,
/// split(cell, data)) up to max_level, new data from init(parent datum, child cell); the kernel
/// is refine_kernel's. The input is unchanged unless the kernel moves kept data, and then only
/// after every callback has returned.
template <SpaceFillingCurve C, bool WithData, class Data, class Split, class Init>
RefinedLeaves<typename C::index_type, Data> refine_cells(std::span<const typename C::index_type> s,
                                                         std::span<const std::uint8_t> l,
                                                         std::span<Data> data, Split& split,
                                                         int max_level, Init& init) {
  constexpr int kernel = refine_kernel<Data, WithData>;
  if constexpr (kernel == 0)
    return refine_one_pass<C, WithData>(s, l, std::span<const Data>(data), split, max_level, init);
  else if constexpr (kernel == 1)
    return refine_exact<C>(s, l, data, split, max_level, init);
  else
    return refine_moving<C>(s, l, data, split, max_level, init);
}

}  // namespace irregular::detail
