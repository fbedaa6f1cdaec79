// The wire archive of the serialized path (mpi/detail/wire_archive.hpp): round trips of what
// users write in serialize() against Boost's binary archive as the oracle, the bulk path's size,
// class versions, rejection of short and corrupt buffers, frames, and the packed-archive fallback
// through sparse_exchange at every rank count.
#include <catch2/catch.hpp>

#include <irregular/mpi/detail/packed_frames.hpp>
#include <irregular/mpi/detail/wire_archive.hpp>
#include <irregular/mpi/sparse_exchange.hpp>
#include <irregular/mpi/transport.hpp>

#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/array.hpp>
#include <boost/serialization/base_object.hpp>
#include <boost/serialization/binary_object.hpp>
#include <boost/serialization/list.hpp>
#include <boost/serialization/map.hpp>
#include <boost/serialization/nvp.hpp>
#include <boost/serialization/optional.hpp>
#include <boost/serialization/set.hpp>
#include <boost/serialization/shared_ptr.hpp>
#include <boost/serialization/split_free.hpp>
#include <boost/serialization/split_member.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>
#include <boost/serialization/version.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace wire_test {

enum class Colour : std::uint8_t { red, green, blue };

struct Fields {  // every arithmetic kind and an enum, through ar & and make_nvp
  bool flag = false;
  char c = 0;
  std::int8_t i8 = 0;
  std::uint16_t u16 = 0;
  std::int32_t i32 = 0;
  std::uint64_t u64 = 0;
  float f = 0;
  double d = 0;
  Colour colour = Colour::red;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar & flag & c & BOOST_SERIALIZATION_NVP(i8) & u16;
    ar & boost::serialization::make_nvp("i32", i32) & u64 & f & d & colour;
  }
  friend bool operator==(const Fields&, const Fields&) = default;
};

class SplitMember {  // member save/load: saves a sum, loads it back into the second field
 public:
  SplitMember() = default;
  SplitMember(int a, int b) : a_(a), b_(b) {}
  friend bool operator==(const SplitMember&, const SplitMember&) = default;

 private:
  friend class boost::serialization::access;
  template <class Archive>
  void save(Archive& ar, unsigned) const {
    static_assert(Archive::is_saving::value && !Archive::is_loading::value);
    const long long sum = static_cast<long long>(a_) + b_;
    ar << a_ << sum;
  }
  template <class Archive>
  void load(Archive& ar, unsigned) {
    static_assert(Archive::is_loading::value && !Archive::is_saving::value);
    long long sum = 0;
    ar >> a_ >> sum;
    b_ = static_cast<int>(sum - a_);
  }
  BOOST_SERIALIZATION_SPLIT_MEMBER()
  int a_ = 0, b_ = 0;
};

struct SplitFree {  // free save/load through split_free
  std::string text;
  friend bool operator==(const SplitFree&, const SplitFree&) = default;
};

struct Base {
  std::int64_t id = 0;
  template <class Archive>
  void serialize(Archive& ar, unsigned) { ar & id; }
  friend bool operator==(const Base&, const Base&) = default;
};

struct Versioned {  // BOOST_CLASS_VERSION 3: the loader sees the version the program has
  int kept = 0;
  int added_in_2 = 0;
  unsigned seen = 99;
  template <class Archive>
  void serialize(Archive& ar, unsigned version) {
    ar & kept;
    if (version >= 2) ar & added_in_2;
    if (Archive::is_loading::value) seen = version;
  }
};

struct Everything : Base {  // nested structs, containers, strings, wrappers, a base object
  Fields fields;
  std::vector<int> ints;
  std::vector<double> doubles;
  std::vector<bool> bools;
  std::vector<Colour> colours;
  std::vector<SplitMember> splits;
  std::vector<std::string> words;
  std::array<double, 3> triple{};
  std::int16_t plain[4] = {};
  std::string name;
  std::map<std::string, std::vector<int>> table;
  std::pair<int, std::string> pair;
  boost::optional<std::string> maybe;
  boost::optional<Fields> maybe_fields;
  std::list<SplitFree> frees;
  std::set<std::uint32_t> ids;
  std::uint8_t blob[5] = {};  // through make_binary_object
  double window[3] = {};      // through make_array
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar & boost::serialization::base_object<Base>(*this);
    ar & fields & ints & doubles & bools & colours & splits & words & triple & plain & name;
    ar & table & pair & maybe & maybe_fields & frees & ids;
    ar & boost::serialization::make_binary_object(blob, sizeof blob);
    ar & boost::serialization::make_array(window, 3);
  }
  friend bool operator==(const Everything& a, const Everything& b) {
    return static_cast<const Base&>(a) == static_cast<const Base&>(b) && a.fields == b.fields && a.ints == b.ints &&
           a.doubles == b.doubles && a.bools == b.bools && a.colours == b.colours && a.splits == b.splits &&
           a.words == b.words && a.triple == b.triple && std::equal(a.plain, a.plain + 4, b.plain) &&
           a.name == b.name && a.table == b.table && a.pair == b.pair && a.maybe == b.maybe &&
           a.maybe_fields == b.maybe_fields && a.frees == b.frees && a.ids == b.ids &&
           std::equal(a.blob, a.blob + 5, b.blob) && std::equal(a.window, a.window + 3, b.window);
  }
};

struct Shared {  // a smart pointer: only the packed-archive fallback carries it
  std::shared_ptr<Base> value;
  int src = -1;
  template <class Archive>
  void serialize(Archive& ar, unsigned) { ar & value & src; }
};

}  // namespace wire_test

namespace boost::serialization {
template <class Archive>
void save(Archive& ar, const wire_test::SplitFree& s, unsigned) {
  static_assert(Archive::is_saving::value);
  const std::size_t n = s.text.size();
  ar << make_nvp("n", n);
  for (char ch : s.text) ar << ch;
}
template <class Archive>
void load(Archive& ar, wire_test::SplitFree& s, unsigned) {
  static_assert(Archive::is_loading::value);
  std::size_t n = 0;
  ar >> make_nvp("n", n);
  if (n > 1000) throw std::runtime_error("SplitFree: implausible length");
  s.text.assign(n, ' ');
  for (char& ch : s.text) ar >> ch;
}
template <class Archive>
void serialize(Archive& ar, wire_test::SplitFree& s, unsigned version) {
  split_free(ar, s, version);
}
}  // namespace boost::serialization

BOOST_CLASS_VERSION(wire_test::Versioned, 3)

template <>
struct irregular::mpi::packed_archive_transport<wire_test::Shared> : std::true_type {};

namespace {

using namespace wire_test;
namespace det = irregular::detail;
using Buffer = det::FrameBuffer;

Everything random_everything(std::mt19937_64& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  Everything e;
  e.id = static_cast<std::int64_t>(rng());
  e.fields = {pick(2) == 1, static_cast<char>(pick(256) - 128), static_cast<std::int8_t>(pick(256) - 128),
              static_cast<std::uint16_t>(pick(65536)), static_cast<std::int32_t>(rng()), rng(),
              static_cast<float>(pick(1000)) / 7.0f, static_cast<double>(rng() % 100000) / 3.0,
              static_cast<Colour>(pick(3))};
  for (int k = pick(6); k-- > 0;) e.ints.push_back(static_cast<int>(rng()));
  for (int k = pick(6); k-- > 0;) e.doubles.push_back(static_cast<double>(pick(1000)) * 0.125);
  for (int k = pick(9); k-- > 0;) e.bools.push_back(pick(2) == 1);
  for (int k = pick(4); k-- > 0;) e.colours.push_back(static_cast<Colour>(pick(3)));
  for (int k = pick(4); k-- > 0;) e.splits.emplace_back(pick(100) - 50, pick(100000));
  for (int k = pick(4); k-- > 0;)
    e.words.push_back(std::string(static_cast<std::size_t>(pick(12)), 'a' + static_cast<char>(pick(26))));
  e.triple = {0.5 * pick(9), -1.0 * pick(9), 2.0};
  for (auto& v : e.plain) v = static_cast<std::int16_t>(pick(60000) - 30000);
  e.name = pick(3) == 0 ? std::string() : "name " + std::to_string(rng());
  for (int k = pick(4); k-- > 0;)
    e.table["key" + std::to_string(pick(50))] = std::vector<int>(static_cast<std::size_t>(pick(4)), pick(9));
  e.pair = {pick(1000), std::string(static_cast<std::size_t>(pick(5)), 'p')};
  if (pick(2) == 1) e.maybe = std::string("maybe ") + std::to_string(pick(100));
  if (pick(2) == 1) e.maybe_fields = e.fields;
  for (int k = pick(3); k-- > 0;) e.frees.push_back({std::string(static_cast<std::size_t>(pick(7)), 'f')});
  for (int k = pick(5); k-- > 0;) e.ids.insert(static_cast<std::uint32_t>(rng()));
  for (auto& b : e.blob) b = static_cast<std::uint8_t>(pick(256));
  for (auto& w : e.window) w = pick(1000) / 16.0;
  return e;
}

template <class T>
Buffer wire_bytes(const T& value) {
  Buffer buf;
  det::WireOArchive<Buffer> ar(buf);
  ar << value;
  ar.finish();
  return buf;
}

// Loads one T from all of bytes; the archive must consume them exactly.
template <class T>
T wire_value(const Buffer& bytes) {
  det::WireIArchive ar(bytes.data(), bytes.size());
  T out{};
  ar >> out;
  if (ar.remaining() != 0) throw std::logic_error(std::to_string(ar.remaining()) + " bytes left unread");
  return out;
}

template <class T>
T boost_round_trip(const T& value) {  // the oracle
  std::stringstream ss;
  {
    boost::archive::binary_oarchive ar(ss);
    ar << value;
  }
  T out{};
  boost::archive::binary_iarchive ar(ss);
  ar >> out;
  return out;
}

}  // namespace

TEST_CASE("wire archive round trips equal Boost's binary archive for every construct", "[wire]") {
  std::mt19937_64 rng(2024);
  for (int trial = 0; trial < 300; ++trial) {
    CAPTURE(trial);
    const Everything e = random_everything(rng);
    const Everything oracle = boost_round_trip(e);
    REQUIRE(oracle == e);
    const Everything back = wire_value<Everything>(wire_bytes(e));
    REQUIRE(back == oracle);
  }
  // A batch of values in one archive, as a frame holds them.
  std::vector<Everything> batch;
  for (int k = 0; k < 50; ++k) batch.push_back(random_everything(rng));
  Buffer buf;
  {
    det::WireOArchive<Buffer> ar(buf);
    for (const auto& e : batch) ar << e;
  }
  det::WireIArchive ar(buf.data(), buf.size());
  for (const auto& e : batch) {
    Everything back;
    ar >> back;
    REQUIRE(back == e);
  }
  REQUIRE(ar.remaining() == 0);
}

TEST_CASE("wire archive: vectors of arithmetic types are one count and one bulk copy", "[wire]") {
  for (std::size_t n : {0u, 1u, 7u, 1000u}) {
    std::vector<int> ints(n);
    for (std::size_t i = 0; i < n; ++i) ints[i] = static_cast<int>(i * 2654435761u);
    const Buffer b = wire_bytes(ints);
    REQUIRE(b.size() == 8 + 4 * n);  // no per-item bytes, no item version
    REQUIRE(wire_value<std::vector<int>>(b) == ints);
    std::vector<double> ds(ints.begin(), ints.end());
    REQUIRE(wire_bytes(ds).size() == 8 + 8 * n);
    REQUIRE(wire_value<std::vector<double>>(wire_bytes(ds)) == ds);
    const std::string s(n, 'x');
    REQUIRE(wire_bytes(s).size() == 8 + n);
    REQUIRE(wire_value<std::string>(wire_bytes(s)) == s);
  }
  // The fields of a struct are their bytes, nothing else: no class id, version or tracking.
  REQUIRE(wire_bytes(Fields{}).size() == 1 + 1 + 1 + 2 + 4 + 8 + 4 + 8 + 1);
}

TEST_CASE("wire archive: the loader sees the class version the program was compiled with", "[wire]") {
  STATIC_REQUIRE(boost::serialization::version<Versioned>::value == 3);
  const Versioned v{7, 11, 0};
  const Versioned back = wire_value<Versioned>(wire_bytes(v));
  REQUIRE(back.kept == 7);
  REQUIRE(back.added_in_2 == 11);
  REQUIRE(back.seen == 3);
  REQUIRE(wire_bytes(v).size() == 8);  // the version itself does not travel
  const Versioned oracle = boost_round_trip(v);
  REQUIRE(oracle.seen == back.seen);
  REQUIRE(oracle.added_in_2 == back.added_in_2);
}

TEST_CASE("wire archive rejects short and corrupt buffers with parse_error", "[wire]") {
  std::mt19937_64 rng(99);
  Everything e = random_everything(rng);
  e.ints = {1, 2, 3};
  e.name = "a name of some length";
  const Buffer full = wire_bytes(e);
  // Every proper prefix is too short.
  for (std::size_t cut = 0; cut < full.size(); ++cut) {
    CAPTURE(cut);
    const Buffer part(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut));
    REQUIRE_THROWS_AS(wire_value<Everything>(part), irregular::parse_error);
  }
  // A size beyond the bytes left fails before anything is allocated for it (a resize to 2^60
  // ints would throw std::length_error or bad_alloc instead).
  Buffer huge = wire_bytes(std::vector<int>{1, 2});
  const std::uint64_t absurd = std::uint64_t{1} << 60;
  std::memcpy(huge.data(), &absurd, sizeof absurd);
  REQUIRE_THROWS_AS(wire_value<std::vector<int>>(huge), irregular::parse_error);
  Buffer huge_string = wire_bytes(std::string("abc"));
  std::memcpy(huge_string.data(), &absurd, sizeof absurd);
  REQUIRE_THROWS_AS(wire_value<std::string>(huge_string), irregular::parse_error);
  std::vector<SplitMember> splits{{1, 2}, {3, 4}};
  Buffer huge_collection = wire_bytes(splits);  // through Boost's collection_size_type
  const std::uint64_t more = 25;                // more items than bytes follow
  std::memcpy(huge_collection.data(), &more, sizeof more);
  REQUIRE_THROWS_AS(wire_value<std::vector<SplitMember>>(huge_collection), irregular::parse_error);
  // A bool byte other than 0 or 1.
  Buffer bad_bool = wire_bytes(true);
  bad_bool[0] = 2;
  REQUIRE_THROWS_AS(wire_value<bool>(bad_bool), irregular::parse_error);
  // Random byte flips: the value loads (perhaps wrong) or parse_error (or the user load's own
  // error, SplitFree's); never another failure, never a crash.
  int rejected = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    Buffer bad = full;
    for (int k = 0; k < 3; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    try {
      (void)wire_value<Everything>(bad);
    } catch (const irregular::parse_error&) {
      ++rejected;
    } catch (const std::runtime_error& err) {
      REQUIRE(std::string(err.what()).find("SplitFree") != std::string::npos);
    } catch (const std::logic_error& err) {  // all read but bytes left over
      REQUIRE(std::string(err.what()).find("left unread") != std::string::npos);
    }
  }
  REQUIRE(rejected > 0);
}

TEST_CASE("frames: write_frames and read_frames tile a message and reject what does not parse", "[wire]") {
  std::mt19937_64 rng(5);
  std::vector<Everything> values;
  for (int k = 0; k < 40; ++k) values.push_back(random_everything(rng));
  for (std::size_t frame : {std::size_t{1}, std::size_t{300}, std::size_t{1} << 30}) {
    CAPTURE(frame);
    det::PackedFrames frames;
    det::write_frames<Everything>(
        MPI_COMM_SELF, values.size(), [&](std::size_t i) -> const Everything& { return values[i]; }, frames, frame);
    if (frame == 1) REQUIRE(frames.headers.size() == values.size());  // one value per frame
    else if (frame == 300) REQUIRE(frames.headers.size() > 1);
    else REQUIRE(frames.headers.size() == 1);
    Buffer msg;
    for (std::size_t f = 0; f < frames.headers.size(); ++f) {
      const char* h = reinterpret_cast<const char*>(&frames.headers[f]);
      msg.insert(msg.end(), h, h + sizeof(det::FrameHeader));
      msg.insert(msg.end(), frames.buffers[f].begin(), frames.buffers[f].end());
    }
    REQUIRE(msg.size() == frames.bytes());
    std::vector<Everything> out;
    std::size_t read = 0, seen = 0;
    REQUIRE(det::read_frames(MPI_COMM_SELF, msg, 0, msg.size(), out, values.size(), read,
                             [&](const Everything& e) { seen += e == values[seen]; }).empty());
    REQUIRE(read == values.size());
    REQUIRE(seen == values.size());  // each value handed over once loaded, in order
    REQUIRE(out == values);
    std::size_t announced = 0;
    REQUIRE(det::frames_count(msg, announced).empty());
    REQUIRE(announced == values.size());
    // Fewer values allowed than the frames announce; a cut message; a frame with bytes past its
    // values.
    REQUIRE_FALSE(det::read_frames(MPI_COMM_SELF, msg, 0, msg.size(), out, values.size() - 1, read).empty());
    REQUIRE_FALSE(det::read_frames(MPI_COMM_SELF, msg, 0, msg.size() - 1, out, values.size(), read).empty());
    REQUIRE_FALSE(det::frames_count(Buffer(msg.begin(), msg.end() - 1), announced).empty());
    Buffer padded = msg;
    det::FrameHeader last{};
    std::size_t at = 0;
    for (std::size_t f = 0; f + 1 < frames.headers.size(); ++f)
      at += sizeof(det::FrameHeader) + frames.headers[f].bytes;
    std::memcpy(&last, padded.data() + at, sizeof last);
    last.bytes += 1;
    std::memcpy(padded.data() + at, &last, sizeof last);
    padded.push_back(0);
    const std::string why = det::read_frames(MPI_COMM_SELF, padded, 0, padded.size(), out, values.size(), read);
    REQUIRE(why.find("past its values") != std::string::npos);
  }
}

TEST_CASE("sparse_exchange carries every construct, and smart pointers through the packed fallback", "[wire][mpi]") {
  const boost::mpi::communicator world;
  const int p = world.size(), me = world.rank();
  auto value_of = [](int src, int dst, int i) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(src) * 1000003u + static_cast<std::uint64_t>(dst) * 101u +
                        static_cast<std::uint64_t>(i));
    return random_everything(rng);
  };
  std::vector<std::vector<Everything>> out(static_cast<std::size_t>(p));
  std::vector<std::vector<Shared>> shared_out(static_cast<std::size_t>(p));
  for (int d = 0; d < p; ++d)
    for (int i = 0; i < (me + d) % 4; ++i) {
      out[static_cast<std::size_t>(d)].push_back(value_of(me, d, i));
      shared_out[static_cast<std::size_t>(d)].push_back({std::make_shared<Base>(Base{1000 * me + i}), me});
    }
  const auto got = irregular::mpi::sparse_exchange(world, out, 11);
  const auto shared_got = irregular::mpi::sparse_exchange(world, shared_out, 12);
  int bad = 0;
  std::vector<Everything> expect;
  std::vector<int> expect_shared;
  for (int s = 0; s < p; ++s)
    for (int i = 0; i < (s + me) % 4; ++i) {
      expect.push_back(value_of(s, me, i));
      expect_shared.push_back(1000 * s + i);
    }
  bad += got.values != expect;
  bad += shared_got.values.size() != expect_shared.size();
  for (std::size_t k = 0; k < shared_got.values.size() && k < expect_shared.size(); ++k)
    bad += !shared_got.values[k].value || shared_got.values[k].value->id != expect_shared[k];
  int all = 0;
  boost::mpi::all_reduce(world, bad, all, std::plus<int>());
  REQUIRE(all == 0);
}

TEST_CASE("the buffers kept between serialized exchanges are counted and given back", "[wire][mpi]") {
  // Every rank sends itself nothing and its right neighbour a few thousand serialized values: a
  // rank that sent or received keeps that buffer afterwards; releasing leaves nothing held.
  const boost::mpi::communicator world;
  const int p = world.size(), me = world.rank();
  irregular::mpi::release_transport_buffers();
  REQUIRE(irregular::mpi::transport_buffers_held() == 0);
  std::vector<std::vector<std::string>> out(static_cast<std::size_t>(p));
  if (p > 1) out[static_cast<std::size_t>((me + 1) % p)].assign(3000, std::string(40, 'x'));
  const auto got = irregular::mpi::sparse_exchange(world, out, 13);
  REQUIRE(got.values.size() == (p > 1 ? 3000u : 0u));
  if (p > 1) CHECK(irregular::mpi::transport_buffers_held() >= 3000u * 40u);
  irregular::mpi::release_transport_buffers();
  CHECK(irregular::mpi::transport_buffers_held() == 0);
}
