// Rank 0 draws a domain's leaves coloured by owner rank: a diagnostic gather of all leaves
// (O(N), fine for pictures). Shared by the particles walkthrough and the hotspot story.
#pragma once

#include <irregular/io/svg.hpp>

#include <boost/mpi/collectives.hpp>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

template <class D>
void draw_owners(const D& d, const std::string& file, const std::string& title) {
  namespace mpi = boost::mpi;
  using Curve = typename D::curve_type;
  const auto& t = d.local_tree();
  std::vector<typename Curve::index_type> starts(t.starts().begin(), t.starts().end());
  std::vector<int> levels(t.levels().begin(), t.levels().end());
  std::vector<std::vector<typename Curve::index_type>> all_s;
  std::vector<std::vector<int>> all_l;
  mpi::gather(d.comm(), starts, all_s, 0);
  mpi::gather(d.comm(), levels, all_l, 0);
  if (d.comm().rank() != 0) return;
  std::vector<irregular::Cell<Curve::dim>> cells;
  std::vector<int> owners;
  for (std::size_t r = 0; r < all_s.size(); ++r)
    for (std::size_t i = 0; i < all_s[r].size(); ++i) {
      cells.push_back(irregular::curve::cell_of_finest<Curve>(all_s[r][i], all_l[r][i]));
      owners.push_back(static_cast<int>(r));
    }
  std::ofstream f(file);
  irregular::io::SvgOptions opt;
  opt.title = title;
  irregular::io::write_leaves_svg(f, d.box(), Curve::arity, cells, owners, d.comm().size(), {}, opt);
}
