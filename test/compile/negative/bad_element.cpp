// Must not compile: a domain over an element type the library cannot locate (no position).
#include <irregular/domain.hpp>
#include <irregular/curve/morton.hpp>

struct NoPosition {
  double x, y;
};

int main() {
  using D = irregular::IrregularDomain<NoPosition, irregular::stencil::Moore<2>, irregular::curve::Morton<2>>;
  return sizeof(D) > 0 ? 0 : 1;
}
