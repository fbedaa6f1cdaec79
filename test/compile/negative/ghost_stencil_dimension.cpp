// Must not compile: a ghost collection with a 3D stencil on a 2D domain.
#include <irregular/domain.hpp>

#include <array>

struct Particle {
  std::array<double, 2> position;
};

using Domain = irregular::IrregularDomain<Particle, irregular::stencil::Moore<2>, irregular::curve::Morton<2>>;

void collect(Domain& d) { d.collect_ghosts<irregular::stencil::Moore<3>>(); }

int main() { return 0; }
