// Concept checks: the library's policies satisfy their concepts, malformed ones do not.
#include <irregular/irregular.hpp>

#include <cstdint>

namespace {
struct NoStates {
  static constexpr int dim = 2;
  static constexpr int arity = 2;
  static constexpr int max_level = 10;
  using index_type = std::uint64_t;
  static index_type index(const irregular::Cell<2>&) { return 0; }
  static irregular::Cell<2> cell(index_type, int) { return {}; }
};
struct WrongIndex {
  static constexpr int dim = 2;
  static constexpr int arity = 2;
  static constexpr int max_level = 10;
  using index_type = double;  // not an unsigned curve index
  using state_type = int;
  static index_type index(const irregular::Cell<2>&) { return 0; }
  static irregular::Cell<2> cell(index_type, int) { return {}; }
  static state_type root_state() { return 0; }
  static int child_position(state_type, int k) { return k; }
  static state_type child_state(state_type s, int) { return s; }
};
static_assert(!irregular::SpaceFillingCurve<NoStates>);
static_assert(!irregular::SpaceFillingCurve<WrongIndex>);
static_assert(!irregular::SpaceFillingCurve<int>);
}  // namespace

// The library's own policies are checked where they are declared (static_assert after each
// curve); this program links every header check to prove there are no ODR clashes.
int main() { return 0; }
