// Must not compile: a curve without the traversal state machine is not a SpaceFillingCurve.
#include <irregular/core/concepts.hpp>

#include <cstdint>

struct CurveWithoutStates {
  static constexpr int dim = 2;
  static constexpr int arity = 2;
  static constexpr int max_level = 10;
  using index_type = std::uint64_t;
  static index_type index(const irregular::Cell<2>&) { return 0; }
  static irregular::Cell<2> cell(index_type, int) { return {}; }
};

template <irregular::SpaceFillingCurve C>
int use_curve() { return C::dim; }

int main() { return use_curve<CurveWithoutStates>(); }
