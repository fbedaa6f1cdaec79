// Random programs (test_sequences.cpp) on 3D Morton with a partitioner chosen by name (segments or
// rectangles).
#include <irregular/curve/morton.hpp>

#include "sequences_program.hpp"

namespace sequences {

std::string run_morton3_by_name(const mpi::communicator& world, std::uint64_t seed,
                                std::string& calls) {
  static const char* names[] = {"SFC", "HIER-RB", "JAG-M-HEUR-PROBE"};
  const std::string name = names[mix64(seed ^ 9) % 3];
  return run_one<irr::curve::Morton<3>>(world, seed, irr::partitioner::ByName{.name = name},
                                        "Morton3/ByName(" + name + ")", calls);
}

}  // namespace sequences
