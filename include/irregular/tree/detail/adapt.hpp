// The one adapt kernel of CellTree and CellDomain: marked leaves of a linear tree refine into
// their children and complete marked families coarsen into their parent, with the data made by
// the user's refine and coarsen callbacks (baiardi-2001 §2: the tree follows the problem).
//
// Incomplete families: a coarsen mark takes effect only when every sibling is a leaf held here
// and marked coarsen; otherwise it is ignored (as p4est and deal.II do), so codes may mark by an
// error indicator without checking families.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/tree/detail/curve_math.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular {

/// What adapt() should do with a leaf.
enum class Mark : std::int8_t { keep = 0, refine = 1, coarsen = -1 };

/// What adapt() did: leaves split into children, and sibling families merged into their parent.
struct AdaptStats {
  std::size_t refined = 0;
  std::size_t coarsened = 0;
};

namespace detail {

/// Where the data of adapted leaves come from, for data that are not trivially copyable: they
/// move only once the whole adaptation is agreed (assemble_adapted).
template <class Data>
struct AdaptSources {
  std::vector<std::ptrdiff_t> src;  ///< >= 0: an old leaf's datum, < 0: fresh[-(k+1)]
  std::vector<Data> fresh;
};

/// Whether leaves i .. i+children-1 are one complete sibling family, all marked coarsen (i the
/// first child). Starts are checked one by one: a rank's leaves need not be contiguous.
template <SpaceFillingCurve C>
bool coarsen_family_at(std::span<const typename C::index_type> s, std::span<const std::uint8_t> l,
                       std::span<const Mark> marks, std::size_t i) noexcept {
  using I = typename C::index_type;
  constexpr auto kids = static_cast<std::size_t>(children_of<C>);
  const int lv = l[i];
  if (lv == 0 || s[i] % span_at<C>(lv - 1) != 0 || i + kids > s.size()) return false;
  for (std::size_t k = 0; k < kids; ++k)
    if (l[i + k] != lv || marks[i + k] != Mark::coarsen ||
        s[i + k] != s[i] + static_cast<I>(k) * span_at<C>(lv))
      return false;
  return true;
}

/// Applies `marks` to the leaves (s, l) with data `data`: appends the new leaves to ns, nl and
/// their data to nd, in curve order. refine(const Data& parent, const Cell& child) and
/// coarsen(std::span<const Data> children) make new data. `where(i)` names leaf i for errors:
/// invalid_argument when a leaf at max_level is marked refine; `budget(n)` is called with the
/// new leaf count. The input is unchanged: trivially copyable data are copied into nd (one
/// pass); other data are recorded in `sources` and moved by assemble_adapted() once the caller
/// has agreed on the outcome.
template <SpaceFillingCurve C, class Data, class Refine, class Coarsen, class Starts, class Levels,
          class Datas, class Where, class Budget>
AdaptStats adapt_leaves(std::span<const typename C::index_type> s, std::span<const std::uint8_t> l,
                        std::span<const Data> data, std::span<const Mark> marks, Refine& refine,
                        Coarsen& coarsen, Starts& ns, Levels& nl, Datas& nd,
                        AdaptSources<Data>& sources, Where&& where, Budget&& budget) {
  using I = typename C::index_type;
  constexpr int kids = children_of<C>;
  constexpr bool copy_kept = std::is_trivially_copyable_v<Data>;
  auto& [src, fresh] = sources;
  auto made = [&](Data&& d) {
    if constexpr (copy_kept) {
      nd.push_back(std::move(d));
    } else {
      fresh.push_back(std::move(d));
      src.push_back(-static_cast<std::ptrdiff_t>(fresh.size()));
    }
  };
  AdaptStats st;
  for (std::size_t i = 0; i < s.size();) {
    const int lv = l[i];
    if (marks[i] == Mark::coarsen && coarsen_family_at<C>(s, l, marks, i)) {
      ns.push_back(s[i]);
      nl.push_back(static_cast<std::uint8_t>(lv - 1));
      made(coarsen(data.subspan(i, kids)));
      ++st.coarsened;
      i += kids;
      continue;
    }
    if (marks[i] == Mark::refine) {
      if (lv >= C::max_level)
        throw invalid_argument(where(i) + " is at the curve's max_level " +
                               std::to_string(C::max_level) + " and cannot be refined");
      for (int k = 0; k < kids; ++k) {
        const I cs = s[i] + static_cast<I>(k) * span_at<C>(lv + 1);
        ns.push_back(cs);
        nl.push_back(static_cast<std::uint8_t>(lv + 1));
        made(refine(data[i], cell_at<C>(cs, lv + 1)));
      }
      ++st.refined;
    } else {
      ns.push_back(s[i]);
      nl.push_back(static_cast<std::uint8_t>(lv));
      if constexpr (copy_kept)
        nd.push_back(data[i]);
      else
        src.push_back(static_cast<std::ptrdiff_t>(i));
    }
    ++i;
  }
  budget(ns.size());
  return st;
}

/// The data of the adapted leaves, moved from the old data and the fresh ones (a no-op for
/// trivially copyable data, which adapt_leaves copied already).
template <class Data, class Datas>
void assemble_adapted(std::span<Data> data, AdaptSources<Data>& sources, Datas& nd) {
  if constexpr (!std::is_trivially_copyable_v<Data>) {
    nd.reserve(sources.src.size());
    for (const auto k : sources.src)
      nd.push_back(k >= 0 ? std::move(data[static_cast<std::size_t>(k)])
                          : std::move(sources.fresh[static_cast<std::size_t>(-k - 1)]));
  }
}

}  // namespace detail
}  // namespace irregular
