// Must not compile: a stencil without its inverse offsets is not a Stencil.
#include <irregular/tree/stencil.hpp>

#include <array>

struct StencilWithoutInverse {
  static constexpr int dim = 2;
  static constexpr std::array<std::array<int, 2>, 1> offsets{{{1, 0}}};
  static constexpr bool same_level = true, coarser = true, finer = true;
};

template <irregular::Stencil S>
int use_stencil() { return S::dim; }

int main() { return use_stencil<StencilWithoutInverse>(); }
