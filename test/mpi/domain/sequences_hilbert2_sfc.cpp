// Random programs (test_sequences.cpp) on 2D Hilbert with SFC blocking: segment maps, so every
// rebalance option (capacities, orders, neighbour shift) and hold_level are drawn.
#include <irregular/curve/hilbert.hpp>

#include "sequences_program.hpp"

namespace sequences {

std::string run_hilbert2_sfc(const mpi::communicator& world, std::uint64_t seed,
                             std::string& calls) {
  const auto cut = mix64(seed) % 2 ? irr::BlockingCut::optimal : irr::BlockingCut::greedy;
  return run_one<irr::curve::Hilbert<2>>(
      world, seed, irr::partitioner::SfcBlocking{.cut = cut},
      cut == irr::BlockingCut::optimal ? "Hilbert2/SFC" : "Hilbert2/SFC-GREEDY", calls);
}

}  // namespace sequences
