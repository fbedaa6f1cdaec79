// SVG drawing of 2D leaves coloured by owner with the space-filling curve drawn through them:
// the picture of baiardi-2001 §3's mapping (segments of the SFC visit Sq(v(sf)) on ranks).
#pragma once

#include <irregular/core/box.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/core/error.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <ostream>
#include <span>
#include <string>

namespace irregular::io {

/// How write_svg draws the leaves.
struct SvgOptions {
  double width_px = 640;         ///< drawing width; the height follows the box's aspect ratio
  bool draw_curve = true;        ///< polyline through the leaf centres in the given order
  bool outline = true;           ///< thin leaf borders
  double point_radius_px = 0.8;  ///< radius of the optional points
  std::string title;             ///< caption under the drawing
};

/// A distinct colour for part k of n (evenly spaced hues), as "hsl(h,s%,l%)".
inline std::string part_colour(int k, int n) {
  if (k < 0) return "#dddddd";
  const double h = n > 0 ? 360.0 * k / n : 0;
  return "hsl(" + std::to_string(static_cast<int>(h)) + "," + (k % 2 ? "55%" : "70%") + "," +
         (k % 2 ? "62%" : "72%") + ")";
}

/// The text with &, < and > escaped for XML.
inline std::string xml_escape(const std::string& s) {
  std::string r;
  for (char ch : s) {
    if (ch == '&')
      r += "&amp;";
    else if (ch == '<')
      r += "&lt;";
    else if (ch == '>')
      r += "&gt;";
    else
      r += ch;
  }
  return r;
}

namespace detail {

// The drawing of write_leaves_svg as one <svg> element whose opening tag starts with
// `placement`: the xmlns of a whole document, or the x and y of a panel inside another picture
// (svg_comparison.hpp). The spans' sizes are checked by the caller.
inline void leaves_svg_element(std::ostream& os, const std::string& placement, const Box<2>& box,
                               int arity, std::span<const Cell<2>> cells,
                               std::span<const int> parts, int part_count,
                               std::span<const std::array<double, 2>> points,
                               const SvgOptions& opt) {
  const double W = opt.width_px, H = W * box.extent(1) / box.extent(0);
  const double caption = opt.title.empty() ? 0 : 24;
  auto px = [&](double x) { return (x - box.lo[0]) / box.extent(0) * W; };
  auto py = [&](double y) { return H - (y - box.lo[1]) / box.extent(1) * H; };  // y up
  os << "<svg " << placement << " width=\"" << W << "\" height=\"" << H + caption
     << "\" viewBox=\"0 0 " << W << ' ' << H + caption
     << "\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  std::string polyline;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto& c = cells[i];
    const coord_t n = [&] {
      coord_t r = 1;
      for (int l = 0; l < c.level; ++l) r *= static_cast<coord_t>(arity);
      return r;
    }();
    const auto lo = box.lower(c, n), hi = box.upper(c, n);
    os << "<rect x=\"" << px(lo[0]) << "\" y=\"" << py(hi[1]) << "\" width=\""
       << px(hi[0]) - px(lo[0]) << "\" height=\"" << py(lo[1]) - py(hi[1]) << "\" fill=\""
       << part_colour(parts[i], part_count) << '"';
    if (opt.outline) os << " stroke=\"#555\" stroke-width=\"0.3\"";
    os << "/>\n";
    if (opt.draw_curve)
      polyline += std::to_string(0.5 * (px(lo[0]) + px(hi[0]))) + "," +
                  std::to_string(0.5 * (py(lo[1]) + py(hi[1]))) + " ";
  }
  for (const auto& p : points)
    os << "<circle cx=\"" << px(p[0]) << "\" cy=\"" << py(p[1]) << "\" r=\"" << opt.point_radius_px
       << "\" fill=\"#222\" fill-opacity=\"0.6\"/>\n";
  if (opt.draw_curve && !polyline.empty())
    os << "<polyline points=\"" << polyline
       << "\" fill=\"none\" stroke=\"#111\" stroke-width=\"0.8\" stroke-opacity=\"0.7\"/>\n";
  if (!opt.title.empty())
    os << "<text x=\"6\" y=\"" << H + 17 << "\" font-family=\"sans-serif\" font-size=\"13\">"
       << xml_escape(opt.title) << "</text>\n";
  os << "</svg>\n";
}

}  // namespace detail

/// Writes an SVG image of `cells` (2D leaves, in curve order, arity `arity`) inside `box`, each
/// filled with the colour of `parts[i]` out of `part_count`, optionally with points on top.
/// Throws irregular::invalid_argument when the spans' sizes differ.
inline void write_leaves_svg(std::ostream& os, const Box<2>& box, int arity,
                             std::span<const Cell<2>> cells, std::span<const int> parts,
                             int part_count, std::span<const std::array<double, 2>> points = {},
                             const SvgOptions& opt = {}) {
  if (cells.size() != parts.size())
    throw invalid_argument("irregular::io::write_leaves_svg: " + std::to_string(cells.size()) +
                           " cells but " + std::to_string(parts.size()) + " part numbers");
  detail::leaves_svg_element(os, "xmlns=\"http://www.w3.org/2000/svg\"", box, arity, cells, parts,
                             part_count, points, opt);
}

}  // namespace irregular::io
