// The consumer program: the same source is built by each outside project (Meson subproject,
// pkg-config with mpicxx, CMake find_package). It builds a domain of 64 points refined to at most
// 4 per leaf and checks that every rank counts the same leaves and all the points.
#include <irregular/irregular.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <array>
#include <cstdio>
#include <vector>

namespace irr = irregular;

struct Point {
  std::array<double, 2> position;
};

int main(int argc, char** argv) {
  boost::mpi::environment env(argc, argv);
  boost::mpi::communicator world;
  irr::IrregularDomain<Point, irr::stencil::Moore<2>, irr::curve::Hilbert<2>> domain(
      world, irr::Box<2>{{0, 0}, {1, 1}}, irr::refine::max_elements(4));
  std::vector<Point> mine;
  for (int k = world.rank(); k < 64; k += world.size()) mine.push_back({{(k % 8 + 0.5) / 8, (k / 8 + 0.5) / 8}});
  domain.insert(mine);
  domain.build();
  const auto leaves = domain.global_leaf_count();
  const auto elements = domain.global_element_count();
  if (world.rank() == 0)
    std::printf("consumer: %d ranks, %llu leaves, %llu elements\n", world.size(),
                static_cast<unsigned long long>(leaves), static_cast<unsigned long long>(elements));
  // 64 points on an 8 x 8 lattice, at most 4 per leaf: the 16 leaves of level 2.
  return leaves == 16 && elements == 64 ? 0 : 1;
}
