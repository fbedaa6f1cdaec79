// Random programs (test_sequences.cpp) on 2D Morton with a partitioner chosen by name: segments,
// rectangles or bounded-neighbours rows, and apply_map of any candidate's map.
#include <irregular/curve/morton.hpp>

#include "sequences_program.hpp"

namespace sequences {

std::string run_morton2_by_name(const mpi::communicator& world, std::uint64_t seed,
                                std::string& calls) {
  static const char* names[] = {"SFC",    "HIER-RB",    "JAG-M-HEUR-PROBE", "BN-2",
                                "BN-4-8", "SFC-GREEDY", "HIER-RELAXED"};
  const std::string name = names[mix64(seed ^ 7) % 7];
  return run_one<irr::curve::Morton<2>>(world, seed, irr::partitioner::ByName{.name = name},
                                        "Morton2/ByName(" + name + ")", calls);
}

}  // namespace sequences
