// Values on hnodes (issue 27): the upward pass against a sequential recursion over the whole
// gathered tree, value by value and bit by bit, for a sum, a max and a non-commutative combine;
// the same bits on one rank alone; every hnode a rank holds present with the right holder; a
// throwing leaf value or combine on exactly one rank agreed everywhere with the domain unchanged.
// Walks over the values (issue 38 too): every strategy against a one-rank run, repeated over one
// values under every ordered pair of strategies and changing criteria, after elements changed and
// after a throwing walk.
#include <irregular/distributed/htree/reduce_up.hpp>

#include "../support/domain_support.hpp"
#include <bit>
#include <cstring>
#include <map>
#include <stdexcept>
#include <utility>

using namespace domain_support;

namespace {

using Curve2 = irr::curve::Hilbert<2>;
using Curve3 = irr::curve::Morton<3>;

// Three combines at once: a sum whose rounding depends on the order, a max, and an
// order-sensitive fold of the children (a different child order gives a different word).
struct Summary {
  double sum = 0;
  double max = 0;
  std::uint64_t fold = 0;
  std::uint64_t count = 0;
};

bool same_bits(const Summary& a, const Summary& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

template <int D>
Summary leaf_summary(const irr::Cell<D>& c, std::span<const double> weights) {
  Summary s;
  for (double w : weights) {
    s.sum += w;
    s.max = std::max(s.max, w);
  }
  s.count = weights.size();
  s.fold = 0x9E3779B97F4A7C15ull ^ (static_cast<std::uint64_t>(c.level) << 56) ^
           static_cast<std::uint64_t>(c.anchor[0]) * 0x100000001B3ull ^ s.count;
  return s;
}

template <int D>
Summary combine(const irr::Cell<D>& c, std::span<const Summary> kids) {
  Summary s;
  s.fold = static_cast<std::uint64_t>(c.level) + 1;
  for (const auto& k : kids) {
    s.sum += k.sum;
    s.max = std::max(s.max, k.max);
    s.count += k.count;
    s.fold = (s.fold * 1000003ull) ^ k.fold;
  }
  return s;
}

// Weights spanning many magnitudes, so a different summation order changes the bits.
double weight(std::uint64_t id) {
  return std::ldexp(1.0 + static_cast<double>(id % 97) / 97.0, static_cast<int>(id % 41) - 20);
}

template <int D>
irr::Box<D> unit_box() {
  irr::Box<D> b;
  b.hi.fill(1.0);
  return b;
}

template <int D>
struct Element {
  std::array<double, D> position;
  std::uint64_t id;
};

// The oracle: every leaf's summary on every rank, then the recursion from the root.
template <class C>
struct Oracle {
  using I = typename C::index_type;
  std::map<std::pair<I, int>, Summary> values;  // (start, level) -> value

  Summary at(const std::vector<I>& starts, const std::vector<int>& levels,
             const std::vector<Summary>& leaf, I s, int l) {
    const auto i = static_cast<std::size_t>(std::lower_bound(starts.begin(), starts.end(), s) -
                                            starts.begin());
    Summary v;
    if (i < starts.size() && starts[i] == s && levels[i] == l) {
      v = leaf[i];
    } else {
      std::vector<Summary> kids;
      for (int k = 0; k < irr::detail::children_of<C>; ++k)
        kids.push_back(at(starts, levels, leaf,
                          s + static_cast<I>(k) * irr::detail::span_at<C>(l + 1), l + 1));
      v = combine<C::dim>(irr::detail::cell_at<C>(s, l), kids);
    }
    values[{s, l}] = v;
    return v;
  }
};

template <class Domain>
auto summaries_of(const Domain& d) {
  return d.reduce_up(
      [](const auto& cell, std::span<const typename Domain::element_type> es) {
        std::vector<double> w;
        for (const auto& e : es) w.push_back(weight(e.id));
        return leaf_summary<Domain::dim>(cell, w);
      },
      [](const auto& cell, std::span<const Summary> kids) {
        return combine<Domain::dim>(cell, kids);
      });
}

// Checks every hnode this rank holds against the oracle over the gathered tree.
template <class Domain, class Values>
void require_oracle(const Domain& d, const Values& got) {
  using C = typename Domain::curve_type;
  using I = typename C::index_type;
  const auto& w = d.comm();
  const auto& t = d.local_tree();
  std::vector<std::uint64_t> mine_starts;
  std::vector<int> mine_levels;
  std::vector<Summary> mine_values;
  for (std::size_t i = 0; i < t.size(); ++i) {
    mine_starts.push_back(static_cast<std::uint64_t>(t.start(i)));
    mine_levels.push_back(t.level(i));
    const std::size_t n = got.find(t.start(i), t.level(i));
    REQUIRE(n < got.size());  // every local leaf is held, as a leaf, pointing back at itself
    REQUIRE(got.kind(n) == irr::HnodeKind::leaf);
    REQUIRE(got.local_leaf(n) == i);
    REQUIRE(got.owner(n) == w.rank());
    mine_values.push_back(got.value(n));
  }
  std::vector<std::vector<std::uint64_t>> s;
  std::vector<std::vector<int>> l;
  std::vector<std::vector<std::uint64_t>> v;
  std::vector<std::uint64_t> words(mine_values.size() * 4);
  std::memcpy(words.data(), mine_values.data(), words.size() * 8);
  mpi::all_gather(w, mine_starts, s);
  mpi::all_gather(w, mine_levels, l);
  mpi::all_gather(w, words, v);
  std::vector<I> starts;
  std::vector<int> levels;
  std::vector<Summary> leaf;
  for (int r = 0; r < w.size(); ++r)
    for (std::size_t i = 0; i < s[r].size(); ++i) {
      starts.push_back(static_cast<I>(s[r][i]));
      levels.push_back(l[r][i]);
      Summary x;
      std::memcpy(static_cast<void*>(&x), v[r].data() + 4 * i, sizeof x);
      leaf.push_back(x);
    }
  REQUIRE(std::is_sorted(starts.begin(), starts.end()));
  Oracle<C> oracle;
  oracle.at(starts, levels, leaf, I{0}, 0);
  std::size_t replicated = 0;
  for (std::size_t n = 0; n < got.size(); ++n) {
    const auto it = oracle.values.find({got.start(n), got.level(n)});
    REQUIRE(it != oracle.values.end());
    REQUIRE(same_bits(got.value(n), it->second));
    if (got.owner(n) == -1) {
      ++replicated;
      REQUIRE(got.kind(n) == irr::HnodeKind::internal);
    }
  }
  REQUIRE(got.root() < got.size());
  REQUIRE(got.level(got.root()) == 0);
  // A private root's leaves are all here; its parent's are not.
  for (std::size_t n : got.private_roots()) {
    REQUIRE(got.owner(n) == w.rank());
    const auto iv = irr::detail::interval_of<C>(got.cell(n));
    std::uint64_t span = 0;
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t.start(i) >= iv.start && t.start(i) < iv.end)
        span += static_cast<std::uint64_t>(t.end(i) - t.start(i));
    REQUIRE(span == static_cast<std::uint64_t>(iv.end - iv.start));
  }
  if (w.size() > 1 && d.global_leaf_count() > 1) REQUIRE(replicated > 0);
}

template <class Domain, class Points>
void check_upward_pass(const Points& pts, std::size_t k) {
  mpi::communicator w;
  for (int split : {0, 1, 2}) {
    Domain d(w, unit_box<Domain::dim>(), irr::refine::max_elements(k));
    insert_and_build(d, pts, split);
    const auto got = summaries_of(d);
    require_oracle(d, got);
    // The same bits on one rank alone.
    Summary alone{};
    if (w.rank() == 0) {
      mpi::communicator self(MPI_COMM_SELF, mpi::comm_attach);
      Domain s(self, unit_box<Domain::dim>(), irr::refine::max_elements(k));
      std::vector<typename Domain::element_type> all;
      for (std::size_t i = 0; i < pts.size(); ++i) all.push_back({pts[i], i});
      s.insert(all);
      s.build();
      const auto one = summaries_of(s);
      alone = one.value(one.root());
    }
    std::array<std::uint64_t, 4> bits{};
    std::memcpy(bits.data(), &alone, sizeof alone);
    mpi::broadcast(w, bits.data(), 4, 0);
    std::memcpy(static_cast<void*>(&alone), bits.data(), sizeof alone);
    REQUIRE(same_bits(got.value(got.root()), alone));
    REQUIRE(got.value(got.root()).count == pts.size());
  }
}

}  // namespace

TEST_CASE("reduce_up equals the sequential recursion, bit for bit, 2D Hilbert and 3D Morton") {
  using D2 = irr::IrregularDomain<Element<2>, irr::stencil::Moore<2>, Curve2>;
  using D3 = irr::IrregularDomain<Element<3>, irr::stencil::Moore<3>, Curve3>;
  check_upward_pass<D2>(clustered<2>(1500, 11), 6);
  check_upward_pass<D3>(clustered<3>(1200, 12), 5);
}

TEST_CASE("reduce_up on the cell domain equals the sequential recursion") {
  mpi::communicator w;
  using CD = irr::CellDomain<double, irr::stencil::Moore<2>, Curve2>;
  CD d(w, unit_box<2>(), 4,
       [](const irr::Cell<2>& c) { return weight(c.anchor[0] * 31 + c.anchor[1]); });
  const auto got = d.reduce_up(
      [](const irr::Cell<2>& c, const double& x) {
        std::vector<double> one{x};
        return leaf_summary<2>(c, one);
      },
      [](const irr::Cell<2>& c, std::span<const Summary> kids) { return combine<2>(c, kids); });
  // The oracle needs the leaves' values: leaf_summary of each leaf, gathered by require_oracle.
  using C = Curve2;
  std::vector<Summary> seq;
  Oracle<C> oracle;
  std::vector<typename C::index_type> starts;
  std::vector<int> levels;
  for (typename C::index_type i = 0; i < 256; ++i) {
    starts.push_back(i * irr::detail::span_at<C>(4));
    levels.push_back(4);
    const auto c = irr::detail::cell_at<C>(starts.back(), 4);
    std::vector<double> one{weight(c.anchor[0] * 31 + c.anchor[1])};
    seq.push_back(leaf_summary<2>(c, one));
  }
  oracle.at(starts, levels, seq, 0, 0);
  for (std::size_t n = 0; n < got.size(); ++n)
    REQUIRE(same_bits(got.value(n), oracle.values.at({got.start(n), got.level(n)})));
  REQUIRE(got.value(got.root()).count == 256);
}

TEST_CASE("a throwing leaf value or combine on one rank is agreed, the domain unchanged") {
  mpi::communicator w;
  using D2 = irr::IrregularDomain<Element<2>, irr::stencil::Moore<2>, Curve2>;
  D2 d(w, unit_box<2>(), irr::refine::max_elements(6));
  insert_and_build(d, clustered<2>(800, 21), 1);
  const auto before = global_checksum(w, checksum(std::as_const(d).local_elements()));
  const auto leaves_before = d.global_leaf_count();
  const int bad = w.size() - 1;
  auto leaf_ok = [](const irr::Cell<2>& c, std::span<const Element<2>> es) {
    std::vector<double> ws;
    for (const auto& e : es) ws.push_back(weight(e.id));
    return leaf_summary<2>(c, ws);
  };
  auto comb_ok = [](const irr::Cell<2>& c, std::span<const Summary> k) { return combine<2>(c, k); };
  // Phase 1: a leaf value; phase 2: a combine in a private H-Tree; phase 3: a combine of the
  // replicated hnodes (the root), which every rank runs.
  for (int phase : {1, 2, 3}) {
    const bool throwing = w.rank() == bad;
    auto leaf = [&](const irr::Cell<2>& c, std::span<const Element<2>> es) {
      if (phase == 1 && throwing) throw std::runtime_error("bad leaf on the last rank");
      return leaf_ok(c, es);
    };
    auto comb = [&](const irr::Cell<2>& c, std::span<const Summary> k) {
      if (phase == 2 && throwing && c.level > 1) throw std::runtime_error("bad private combine");
      if (phase == 3 && throwing && c.level == 0) throw std::runtime_error("bad root combine");
      return comb_ok(c, k);
    };
    bool caught = false;
    try {
      (void)d.reduce_up(leaf, comb);
    } catch (const irr::collective_error& e) {
      caught = true;
      REQUIRE(e.failing_rank() == bad);
      const std::string want = phase == 1   ? "bad leaf on the last rank"
                               : phase == 2 ? "bad private combine"
                                            : "bad root combine";
      REQUIRE(std::string(e.what()).find(want) != std::string::npos);
    }
    REQUIRE(caught);
    REQUIRE(global_checksum(w, checksum(std::as_const(d).local_elements())) == before);
    REQUIRE(d.global_leaf_count() == leaves_before);
  }
}

// ---- remote hnodes by a traversal predicate -------------------------------------------------

namespace {

// Each reader leaf's walk as one word: the accepted hnodes in order, their values' bits, and
// for near leaves their elements' ids; plus how many elements it met near.
struct Trace {
  std::uint64_t start, hash, near_elements;
};

template <class Domain, class Values>
std::vector<Trace> traces_by(const Domain& d, Values& values, auto open, auto&& strategy,
                             irr::HnodeStats* stats = nullptr) {
  std::vector<Trace> t(d.local_leaf_count());
  for (std::size_t i = 0; i < t.size(); ++i)
    t[i] = {static_cast<std::uint64_t>(d.local_tree().start(i)), 0x9E3779B97F4A7C15ull, 0};
  const auto st = d.walk_hnodes(
      values, open,
      [&](std::size_t leaf, std::size_t n, bool near,
          std::span<const typename Domain::element_type> es) {
        auto& h = t[leaf].hash;
        h = (h ^ static_cast<std::uint64_t>(values.start(n))) * 0x100000001B3ull;
        h = (h ^ static_cast<std::uint64_t>(values.level(n) * 2 + near)) * 0x100000001B3ull;
        if (near) {
          for (const auto& e : es) h = (h ^ e.id) * 0x100000001B3ull;
          t[leaf].near_elements += es.size();
        } else {
          h = (h ^ values.value(n).fold) * 0x100000001B3ull;
        }
      },
      strategy);
  if (stats) *stats = st;
  return t;
}

template <class Domain, class Values>
std::vector<Trace> traces(const Domain& d, Values& values, double theta, auto&& strategy,
                          irr::HnodeStats* stats = nullptr) {
  return traces_by(d, values, Mac<Domain::dim>{theta}, strategy, stats);
}

std::vector<Trace> gathered(const mpi::communicator& w, const std::vector<Trace>& mine) {
  std::vector<std::uint64_t> flat;
  for (const auto& t : mine) flat.insert(flat.end(), {t.start, t.hash, t.near_elements});
  std::vector<std::vector<std::uint64_t>> all;
  mpi::all_gather(w, flat, all);
  std::vector<Trace> out;
  for (const auto& v : all)
    for (std::size_t i = 0; i + 2 < v.size(); i += 3) out.push_back({v[i], v[i + 1], v[i + 2]});
  std::sort(out.begin(), out.end(),
            [](const Trace& a, const Trace& b) { return a.start < b.start; });
  return out;
}

bool same(const std::vector<Trace>& a, const std::vector<Trace>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].start != b[i].start || a[i].hash != b[i].hash ||
        a[i].near_elements != b[i].near_elements)
      return false;
  return true;
}

irr::HnodeStats summed(const mpi::communicator& w, const irr::HnodeStats& s) {
  std::array<std::uint64_t, 7> mine{s.messages, s.bytes,  s.hnodes_sent, s.elements_sent,
                                    s.unopened, s.faults, s.reused_sets},
      all{};
  for (std::size_t k = 0; k < mine.size(); ++k)
    mpi::all_reduce(w, mine[k], all[k], std::plus<std::uint64_t>());
  irr::HnodeStats t;
  t.messages = all[0], t.bytes = all[1], t.hnodes_sent = all[2], t.elements_sent = all[3];
  t.unopened = all[4], t.faults = all[5], t.reused_sets = all[6], t.rounds = s.rounds;
  return t;
}

// The oracle: the walks of a one-rank run holding every point (ids i ^ id_mask), on fresh
// values, on every rank.
template <class Domain, class Points, class Open>
std::vector<Trace> alone_traces_by(const mpi::communicator& w, const Points& pts, std::size_t k,
                                   Open open, std::uint64_t id_mask = 0) {
  std::vector<Trace> alone;
  if (w.rank() == 0) {
    mpi::communicator self(MPI_COMM_SELF, mpi::comm_attach);
    Domain s(self, unit_box<Domain::dim>(), irr::refine::max_elements(k));
    std::vector<typename Domain::element_type> all;
    for (std::size_t i = 0; i < pts.size(); ++i) all.push_back({pts[i], i ^ id_mask});
    s.insert(all);
    s.build();
    auto v = summaries_of(s);
    alone = traces_by(s, v, open, irr::hnodes::RequestAnswer{});
  }
  std::vector<std::uint64_t> flat;
  for (const auto& t : alone) flat.insert(flat.end(), {t.start, t.hash, t.near_elements});
  mpi::broadcast(w, flat, 0);
  alone.clear();
  for (std::size_t i = 0; i + 2 < flat.size(); i += 3)
    alone.push_back({flat[i], flat[i + 1], flat[i + 2]});
  return alone;
}
template <class Domain, class Points>
std::vector<Trace> alone_traces(const mpi::communicator& w, const Points& pts, std::size_t k,
                                double theta, std::uint64_t id_mask = 0) {
  return alone_traces_by<Domain>(w, pts, k, Mac<Domain::dim>{theta}, id_mask);
}

template <class Domain, class Points>
void check_walks(const Points& pts, std::size_t k) {
  mpi::communicator w;
  Domain d(w, unit_box<Domain::dim>(), irr::refine::max_elements(k));
  insert_and_build(d, pts, 1);
  for (double theta : {0.0, 0.7}) {
    const auto alone = alone_traces<Domain>(w, pts, k, theta);
    if (theta == 0.0)  // every leaf is near every reader: each walk meets all elements
      for (const auto& t : alone) REQUIRE(t.near_elements == pts.size());

    irr::hnodes::InformedFaultPrevention ifp;
    for (int s = 0; s < 7; ++s) {
      auto values = summaries_of(d);
      irr::HnodeStats st;
      std::vector<Trace> got;
      if (s == 0) got = traces(d, values, theta, irr::hnodes::RequestAnswer{}, &st);
      if (s == 1) got = traces(d, values, theta, irr::hnodes::FaultPrevention{}, &st);
      if (s >= 2 && s <= 3) got = traces(d, values, theta, ifp, &st);  // the second reuses
      if (s == 4) got = traces(d, values, theta, irr::hnodes::ByName("FP"), &st);
      // Naming no strategy: the domain's own, kept across calls (and across theta: one opening
      // test type), so only the domain's first walk computes its sets.
      if (s >= 5) got = traces(d, values, theta, irr::hnodes::Kept{}, &st);
      REQUIRE(same(gathered(w, got), alone));
      const auto all = summed(w, st);
      if (s == 0 && w.size() > 1) {
        REQUIRE(all.faults > 0);
        REQUIRE(all.rounds >= 1);
      }
      if (s >= 1) {
        REQUIRE(all.faults == 0);  // the prevention strategies leave nothing to ask
        REQUIRE(all.rounds == 0);
      }
      if (s == 3) REQUIRE(ifp.reused() == 1);
      if (s == 2 || s == 4) REQUIRE(all.reused_sets == 0);
      if (s == 3) REQUIRE(all.reused_sets == static_cast<std::uint64_t>(w.size()));
      if (s >= 5)
        REQUIRE(all.reused_sets ==
                (s == 5 && theta == 0.0 ? 0u : static_cast<std::uint64_t>(w.size())));
      if (w.size() == 1) REQUIRE(all.messages == 0);
    }
  }
}

}  // namespace

TEST_CASE("walk_hnodes: every strategy gives each leaf the walk of a one-rank run") {
  using D2 = irr::IrregularDomain<Element<2>, irr::stencil::Moore<2>, Curve2>;
  using D3 = irr::IrregularDomain<Element<3>, irr::stencil::Moore<3>, Curve3>;
  check_walks<D2>(clustered<2>(1200, 31), 8);
  check_walks<D3>(clustered<3>(900, 32), 8);
}

// An opening test that reads the hnode's value: empty hnodes stay closed (their value is taken
// as it is), the others open by the box-box criterion. Monotone in the reader box as Mac is.
template <int D>
struct NonEmptyMac {
  double theta;
  bool operator()(const irr::hnodes::HnodeView<D, Summary>& h, const irr::Box<D>& r) const {
    return h.value.count > 0 && Mac<D>{theta}(h.box, r);
  }
};

TEST_CASE("walk_hnodes: an opening test that reads the hnode's value, under every strategy") {
  mpi::communicator w;
  using D2 = irr::IrregularDomain<Element<2>, irr::stencil::Moore<2>, Curve2>;
  const auto pts = clustered<2>(1000, 41);
  D2 d(w, unit_box<2>(), irr::refine::max_elements(6));
  insert_and_build(d, pts, 1);
  // The oracle: one rank holding every point, request/answer. Clustered points leave empty
  // cells, so the value changes what is opened.
  const auto alone = alone_traces_by<D2>(w, pts, 6, NonEmptyMac<2>{0.6});
  REQUIRE(!same(alone, alone_traces<D2>(w, pts, 6, 0.6)));
  irr::hnodes::InformedFaultPrevention ifp;
  for (int s = 0; s < 5; ++s) {
    CAPTURE(s);
    auto values = summaries_of(d);
    irr::HnodeStats st;
    std::vector<Trace> got;
    const NonEmptyMac<2> open{0.6};
    if (s == 0) got = traces_by(d, values, open, irr::hnodes::RequestAnswer{}, &st);
    if (s == 1) got = traces_by(d, values, open, irr::hnodes::FaultPrevention{}, &st);
    if (s == 2 || s == 3) got = traces_by(d, values, open, ifp, &st);
    if (s == 4) got = traces_by(d, values, open, irr::hnodes::Kept{}, &st);
    REQUIRE(same(gathered(w, got), alone));
    if (s >= 1) REQUIRE(summed(w, st).faults == 0);
  }
}

TEST_CASE("walk_hnodes: an opening test that is not monotone is refused in test builds") {
  mpi::communicator w;
  using D2 = irr::IrregularDomain<Element<2>, irr::stencil::Moore<2>, Curve2>;
  D2 d(w, unit_box<2>(), irr::refine::max_elements(6));
  insert_and_build(d, clustered<2>(800, 43), 1);
  auto values = summaries_of(d);
  // A smaller reader opens more: every hnode as small as the reader opens for the reader's
  // lower half, not for the reader.
  const auto open = [](const irr::Box<2>& h, const irr::Box<2>& r) {
    return Mac<2>{0.7}(h, r) || r.extent(0) < 0.6 * h.extent(0);
  };
  const auto accept = [](std::size_t, std::size_t, bool, std::span<const Element<2>>) {};
  std::string message;
  try {
    (void)d.walk_hnodes(values, open, accept, irr::hnodes::RequestAnswer{});
  } catch (const irr::collective_error& e) {
    message = e.what();
  }
  CAPTURE(message);
  REQUIRE(message.find("not monotone") != std::string::npos);
  // A monotone one on the same values walks (the check samples, and finds nothing).
  (void)d.walk_hnodes(values, Mac<2>{0.7}, accept, irr::hnodes::RequestAnswer{});
}

TEST_CASE("walk_hnodes: a throwing open or accept on one rank, or stale values, is agreed") {
  mpi::communicator w;
  using D2 = irr::IrregularDomain<Element<2>, irr::stencil::Moore<2>, Curve2>;
  D2 d(w, unit_box<2>(), irr::refine::max_elements(6));
  insert_and_build(d, clustered<2>(800, 41), 1);
  const auto before = global_checksum(w, checksum(std::as_const(d).local_elements()));
  const int bad = w.size() - 1;
  for (int strategy : {0, 1, 2})
    for (int phase : {0, 1, 2}) {
      auto values = summaries_of(d);
      int calls = 0;
      auto open = [&](const irr::Box<2>& h, const irr::Box<2>& r) {
        // phase 0: the first call (the sender's in prevention, a walk's in request/answer);
        // phase 1: a later call, in the walks or a later round.
        if (w.rank() == bad && ((phase == 0 && calls == 0) || (phase == 1 && calls == 200)))
          throw std::runtime_error("bad open");
        ++calls;
        return Mac<2>{0.7}(h, r);
      };
      auto accept = [&](std::size_t, std::size_t, bool, std::span<const Element<2>>) {
        if (phase == 2 && w.rank() == bad) throw std::runtime_error("bad accept");
      };
      const char* names[] = {"RA", "FP", "IFP"};
      bool caught = false;
      try {
        (void)d.walk_hnodes(values, open, accept, irr::hnodes::ByName(names[strategy]));
      } catch (const irr::collective_error& e) {
        caught = true;
        REQUIRE(e.failing_rank() == bad);
        REQUIRE(std::string(e.what()).find(phase == 2 ? "bad accept" : "bad open") !=
                std::string::npos);
      }
      REQUIRE(caught);
      REQUIRE(global_checksum(w, checksum(std::as_const(d).local_elements())) == before);
    }
  // Values from before the tree changed are refused on every rank.
  auto stale = summaries_of(d);
  d.insert(std::vector<Element<2>>{{{0.5, 0.5}, 1000000u + static_cast<std::uint64_t>(w.rank())}});
  d.build();
  bool refused = false;
  try {
    (void)d.walk_hnodes(stale, Mac<2>{0.5},
                        [](std::size_t, std::size_t, bool, std::span<const Element<2>>) {});
  } catch (const irr::collective_error& e) {
    refused = std::string(e.what()).find("another tree") != std::string::npos;
  }
  REQUIRE(refused);
}

// ---- repeated walks over one values (issue 38) ----------------------------------------------

namespace {

// A walk under strategy `which`: 0 request/answer, 1 fault prevention, 2 the kept informed fault
// prevention object, 3 a fresh one.
template <class Domain, class Values>
std::vector<Trace> walk_by(const Domain& d, Values& values, double theta, int which,
                           irr::hnodes::InformedFaultPrevention& kept) {
  switch (which) {
    case 0:
      return traces(d, values, theta, irr::hnodes::RequestAnswer{});
    case 1:
      return traces(d, values, theta, irr::hnodes::FaultPrevention{});
    case 2:
      return traces(d, values, theta, kept);
    default:
      return traces(d, values, theta, irr::hnodes::InformedFaultPrevention{});
  }
}

// Hnodes that claim elements this rank does not hold (a leaf kind without a local leaf), summed.
template <class Values>
std::uint64_t false_claims(const mpi::communicator& w, const Values& v) {
  std::uint64_t mine = 0, all = 0;
  for (std::size_t n = 0; n < v.size(); ++n)
    mine += v.kind(n) == irr::HnodeKind::leaf && v.local_leaf(n) == Values::no_leaf;
  mpi::all_reduce(w, mine, all, std::plus<std::uint64_t>());
  return all;
}

template <class Domain, class Points>
void check_repeated_walks(const Points& pts, std::size_t k) {
  mpi::communicator w;
  Domain d(w, unit_box<Domain::dim>(), irr::refine::max_elements(k));
  insert_and_build(d, pts, 1);
  const double thetas[] = {0.7, 0.0, 0.4};
  std::vector<std::vector<Trace>> alone;
  for (double theta : thetas) alone.push_back(alone_traces<Domain>(w, pts, k, theta));
  auto values = summaries_of(d);
  irr::hnodes::InformedFaultPrevention kept;
  // Every ordered pair of the four strategies follows once (a de Bruijn sequence), under
  // criteria changing with another period; request/answer then fault prevention first.
  const int order[] = {0, 1, 0, 2, 0, 3, 1, 1, 2, 1, 3, 2, 2, 3, 3, 0, 0};
  for (std::size_t i = 0; i < std::size(order); ++i) {
    INFO("walk " << i << ", strategy " << order[i] << ", theta " << thetas[i % 3]);
    const auto got = walk_by(d, values, thetas[i % 3], order[i], kept);
    REQUIRE(same(gathered(w, got), alone[i % 3]));
    CHECK(false_claims(w, values) == 0);
  }
  // The elements change between walks (not their positions: the values stay valid): each walk
  // reads them as they are then, under every strategy.
  const std::uint64_t mask = 0x5A5A5A5A5ull;
  for (auto& e : d.local_elements()) e.id ^= mask;
  const auto changed = alone_traces<Domain>(w, pts, k, thetas[2], mask);
  for (int which : {0, 1, 2, 3}) {
    INFO("strategy " << which << " after the elements changed");
    REQUIRE(same(gathered(w, walk_by(d, values, thetas[2], which, kept)), changed));
  }
}

}  // namespace

TEST_CASE("walk_hnodes: repeated walks over one values give a first walk's bits", "[repeat]") {
  using D2 = irr::IrregularDomain<Element<2>, irr::stencil::Moore<2>, Curve2>;
  using D3 = irr::IrregularDomain<Element<3>, irr::stencil::Moore<3>, Curve3>;
  check_repeated_walks<D2>(clustered<2>(900, 51), 8);
  check_repeated_walks<D3>(clustered<3>(500, 52), 8);
}

TEST_CASE("walk_hnodes: after a throwing open or accept the same values walk as a first walk",
          "[repeat-throw]") {
  mpi::communicator w;
  using D2 = irr::IrregularDomain<Element<2>, irr::stencil::Moore<2>, Curve2>;
  const auto pts = clustered<2>(800, 41);
  D2 d(w, unit_box<2>(), irr::refine::max_elements(6));
  insert_and_build(d, pts, 1);
  const auto alone = alone_traces<D2>(w, pts, 6, 0.7);
  const int bad = w.size() - 1;
  auto values = summaries_of(d);
  irr::hnodes::InformedFaultPrevention kept;
  for (int strategy : {0, 1, 2, 3})
    for (int phase : {0, 1, 2}) {
      INFO("strategy " << strategy << ", phase " << phase);
      // A good walk first, so that the throwing one meets hnodes an earlier walk fetched.
      REQUIRE(same(gathered(w, walk_by(d, values, 0.7, strategy, kept)), alone));
      int calls = 0;
      auto open = [&](const irr::Box<2>& h, const irr::Box<2>& r) {
        if (w.rank() == bad && ((phase == 0 && calls == 0) || (phase == 1 && calls == 200)))
          throw std::runtime_error("bad open");
        ++calls;
        return Mac<2>{0.7}(h, r);
      };
      auto accept = [&](std::size_t, std::size_t, bool, std::span<const Element<2>>) {
        if (phase == 2 && w.rank() == bad) throw std::runtime_error("bad accept");
      };
      bool caught = false;
      try {
        if (strategy == 0)
          (void)d.walk_hnodes(values, open, accept, irr::hnodes::RequestAnswer{});
        else if (strategy == 1)
          (void)d.walk_hnodes(values, open, accept, irr::hnodes::FaultPrevention{});
        else if (strategy == 2)
          (void)d.walk_hnodes(values, open, accept, kept);
        else
          (void)d.walk_hnodes(values, open, accept, irr::hnodes::InformedFaultPrevention{});
      } catch (const irr::collective_error& e) {
        caught = e.failing_rank() == bad;
      }
      REQUIRE(caught);
      CHECK(false_claims(w, values) == 0);
      // The next walk, under another strategy, gives the same bits.
      REQUIRE(same(gathered(w, walk_by(d, values, 0.7, (strategy + 1 + phase) % 4, kept)), alone));
    }
}
