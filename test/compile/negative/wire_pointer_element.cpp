// Must not compile: an element whose serialize() saves a pointer, sent without opting it into the
// packed-archive fallback; the diagnostic names the trait that does.
#include <irregular/mpi/sparse_exchange.hpp>

#include <vector>

struct Node {
  int value = 0;
  Node* next = nullptr;
  template <class Archive>
  void serialize(Archive& ar, unsigned) { ar & value & next; }
};

int main() {
  boost::mpi::communicator world;
  std::vector<std::vector<Node>> out(static_cast<std::size_t>(world.size()));
  return static_cast<int>(irregular::mpi::sparse_exchange(world, out, 1).values.size());
}
