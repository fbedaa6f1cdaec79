// Smoke test of the MPI wiring: Boost.MPI all-gather of a struct serialized with
// Boost.Serialization, checked against what each rank independently knows it should receive.
#include <catch2/catch.hpp>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>

#include <string>
#include <vector>

namespace {
struct Probe {
  int rank = -1;
  std::string name;
  std::vector<double> values;  // variable length: forces the serialized path
  template <class Archive>
  void serialize(Archive& ar, unsigned) { ar & rank & name & values; }
};
}  // namespace

TEST_CASE("all_gather of a serialized struct delivers every rank's value in rank order", "[mpi][smoke]") {
  boost::mpi::communicator world;
  Probe mine{world.rank(), "rank-" + std::to_string(world.rank()), {}};
  for (int i = 0; i <= world.rank(); ++i) mine.values.push_back(0.5 * i + world.rank());
  std::vector<Probe> all;
  boost::mpi::all_gather(world, mine, all);
  REQUIRE(static_cast<int>(all.size()) == world.size());
  for (int r = 0; r < world.size(); ++r) {
    CHECK(all[r].rank == r);
    CHECK(all[r].name == "rank-" + std::to_string(r));
    REQUIRE(static_cast<int>(all[r].values.size()) == r + 1);
    for (int i = 0; i <= r; ++i) CHECK(all[r].values[i] == 0.5 * i + r);
  }
}
