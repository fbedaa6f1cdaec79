// SVG panels of a partitioner comparison (compare_partitioners, doc/guide/advisor.md): the leaves
// of a 2D domain drawn once per candidate map, side by side, each coloured by the part that map
// gives every leaf and captioned with the candidate's figures. The drawing is write_leaves_svg's.
#pragma once

#include <irregular/core/cell.hpp>
#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/advisor/comparison.hpp>
#include <irregular/io/svg.hpp>
#include <irregular/mpi/collective_error.hpp>
#include <irregular/mpi/operations.hpp>
#include <irregular/tree/detail/curve_math.hpp>

#include <boost/mpi/collectives/gather.hpp>
#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace irregular::io {

namespace detail {

// A panel's caption: the candidate (marked when it is the best), then its figures.
inline std::pair<std::string, std::string> comparison_caption(const advisor::CandidateReport& r,
                                                              bool best) {
  char figures[160];
  std::snprintf(figures, sizeof figures, "imbalance %.3f, %llu ghost leaves, %.3f ms/step",
                r.imbalance, static_cast<unsigned long long>(r.ghost_leaves_total),
                1e3 * r.predicted_seconds);
  return {r.name + (best ? " (best)" : ""), figures};
}

}  // namespace detail

/// Writes to `path` one SVG image of `domain`'s leaves (2D) per candidate of `cmp`, side by side
/// in the order compared: panel k fills every leaf with the colour (io::part_colour) of
/// `cmp.maps[k].leaf_owner(cell)` and is captioned with the candidate's name ("(best)" for
/// cmp.best()), imbalance, ghost leaves of all parts and predicted milliseconds per step. `opt`
/// holds for each panel: `width_px` is one panel's width, `draw_curve` and `outline` as in
/// write_leaves_svg; `title`, when not empty, is one caption under all the panels. Rank 0
/// gathers the leaves' cells (O(leaves) words: a picture's gather) and writes the file. A
/// comparison without maps or whose rows and maps differ in number, a map of another number of
/// parts than the domain's ranks, a panel width not finite and positive, or a file that cannot
/// be written make every rank throw the same irregular::collective_error. Collective over
/// domain.comm().
template <class Domain, SpaceFillingCurve C>
void write_comparison_svg(const std::string& path, const Domain& domain,
                          const advisor::PartitionerComparison<C>& cmp, SvgOptions opt = {}) {
  static_assert(Domain::dim == 2, "irregular::io::write_comparison_svg draws 2D domains");
  static_assert(std::is_same_v<typename Domain::curve_type, C>,
                "irregular::io::write_comparison_svg: the comparison is of another curve");
  const auto& comm = domain.comm();
  const std::string where = "irregular::io::write_comparison_svg";
  const auto& leaves = domain.local_tree();
  constexpr std::size_t words = 3;  // anchor[0], anchor[1], level
  std::vector<std::uint64_t> mine;
  mpi::agree(comm, [&] {
    if (cmp.maps.empty() || cmp.maps.size() != cmp.rows.size())
      throw invalid_argument(where + ": the comparison has " + std::to_string(cmp.rows.size()) +
                             " rows and " + std::to_string(cmp.maps.size()) + " maps");
    for (std::size_t k = 0; k < cmp.maps.size(); ++k)
      if (cmp.maps[k].parts() != comm.size())
        throw invalid_argument(where + ": the map of " + cmp.rows[k].name + " has " +
                               std::to_string(cmp.maps[k].parts()) + " parts, the domain " +
                               std::to_string(comm.size()) + " ranks");
    if (!(opt.width_px > 0) || !std::isfinite(opt.width_px))
      throw invalid_argument(where + ": width_px must be finite and > 0");
    if (leaves.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) / words)
      throw limit_exceeded(where + ": too many leaves on one rank for a picture");
    mine.reserve(words * leaves.size());
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      const auto c = leaves.cell(i);
      mine.insert(mine.end(), {c.anchor[0], c.anchor[1], static_cast<std::uint64_t>(c.level)});
    }
  });
  // Rank 0 gathers every rank's cells.
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts;
  boost::mpi::gather(comm, count, counts, 0);
  std::vector<std::uint64_t> all;
  mpi::agree(comm, [&] {
    if (comm.rank() != 0) return;
    const auto total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
    if (total > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw limit_exceeded(where + ": too many leaves for a picture");
    all.resize(total);
  });
  mpi::gatherv_raw(comm, std::span<const std::uint64_t>(mine), std::span<std::uint64_t>(all),
                   std::span<const int>(counts), 0);

  // Rank 0 draws the cells in curve order (the order the polyline visits), one panel per map.
  mpi::agree(comm, [&] {
    if (comm.rank() != 0) return;
    std::vector<Cell<2>> cells(all.size() / words);
    for (std::size_t i = 0; i < cells.size(); ++i) {
      cells[i].anchor = {all[words * i], all[words * i + 1]};
      cells[i].level = static_cast<int>(all[words * i + 2]);
    }
    std::sort(cells.begin(), cells.end(), [](const Cell<2>& a, const Cell<2>& b) {
      return irregular::detail::start_of<C>(a) < irregular::detail::start_of<C>(b);
    });
    const auto& box = domain.box();
    const double W = opt.width_px, H = W * box.extent(1) / box.extent(0), gap = 16;
    const double band = 40, heading = opt.title.empty() ? 0 : 24;
    const std::size_t n = cmp.maps.size();
    const double width = static_cast<double>(n) * W + static_cast<double>(n - 1) * gap;
    std::ofstream f(path, std::ios::trunc);
    if (!f) throw error(where + ": cannot open " + path + " for writing");
    f << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\""
      << H + band + heading << "\" viewBox=\"0 0 " << width << ' ' << H + band + heading
      << "\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    SvgOptions panel = opt;
    panel.title.clear();  // the panels' captions are two lines, written here
    std::vector<int> parts(cells.size());
    const int best = cmp.best();
    for (std::size_t k = 0; k < n; ++k) {
      for (std::size_t i = 0; i < cells.size(); ++i) parts[i] = cmp.maps[k].leaf_owner(cells[i]);
      const double x = static_cast<double>(k) * (W + gap);
      char placement[64];
      std::snprintf(placement, sizeof placement, "x=\"%g\" y=\"0\"", x);
      detail::leaves_svg_element(f, placement, box, C::arity, cells, parts, comm.size(), {}, panel);
      const auto [name, figures] =
          detail::comparison_caption(cmp.rows[k], static_cast<int>(k) == best);
      f << "<text x=\"" << x + 4 << "\" y=\"" << H + 16
        << "\" font-family=\"sans-serif\" font-size=\"13\" font-weight=\"bold\">"
        << xml_escape(name) << "</text>\n<text x=\"" << x + 4 << "\" y=\"" << H + 32
        << "\" font-family=\"sans-serif\" font-size=\"12\">" << xml_escape(figures) << "</text>\n";
    }
    if (!opt.title.empty())
      f << "<text x=\"6\" y=\"" << H + band + 17
        << "\" font-family=\"sans-serif\" font-size=\"13\">" << xml_escape(opt.title)
        << "</text>\n";
    f << "</svg>\n";
    f.close();
    if (!f) throw error(where + ": writing " + path + " failed");
  });
}

}  // namespace irregular::io
