// Pointer doubling over a chain of ranks, each holding a map of leaf-chain positions (a greedy
// or balancing step from one separator window to the next): after ceil(log2 count) rounds of
// one message per rank, rank t holds h_t o ... o h_0, so every separator of a greedy probe is
// known in O(log p) latency instead of p pipelined hops (Pinar & Aykanat's probe, distributed).
#pragma once

#include <irregular/distributed/detail/cut_support.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/exception.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace irregular::detail_win {

/// No position: the probe left the windows (infeasible), absorbing under composition.
inline constexpr std::uint64_t no_position = ~std::uint64_t{0};

/// A map of chain positions, constant on runs: x in [from[i], from[i+1]) maps to to[i]. When
/// `prev` is kept, prev[i] is the image one map earlier (the separator before), so the last
/// rank of a composition knows both ends of its part.
struct PositionMap {
  std::vector<std::uint64_t> from, to, prev;

  [[nodiscard]] std::size_t run(std::uint64_t x) const {
    const auto it = std::upper_bound(from.begin(), from.end(), x);
    return it == from.begin() ? 0 : static_cast<std::size_t>(it - from.begin()) - 1;
  }
  void push(std::uint64_t x, std::uint64_t y, std::uint64_t before, bool keep_prev) {
    if (!to.empty() && to.back() == y && (!keep_prev || prev.back() == before)) return;
    from.push_back(x);
    to.push_back(y);
    if (keep_prev) prev.push_back(before);
  }
  /// outer o inner (inner applied first; its images lie in outer's domain).
  [[nodiscard]] static PositionMap compose(const PositionMap& outer, const PositionMap& inner) {
    const bool keep = !outer.prev.empty();
    PositionMap r;
    for (std::size_t i = 0; i < inner.from.size(); ++i) {
      const std::uint64_t v = inner.to[i];
      if (v == no_position || outer.from.empty()) {
        r.push(inner.from[i], no_position, no_position, keep);
      } else {
        const std::size_t k = outer.run(v);
        r.push(inner.from[i], outer.to[k], keep ? outer.prev[k] : 0, keep);
      }
    }
    return r;
  }
  /// The wire form [from..., to...] (prev stays local); runs equal in `to` merge.
  [[nodiscard]] std::vector<std::uint64_t> wire() const {
    std::vector<std::uint64_t> f, t;
    for (std::size_t i = 0; i < from.size(); ++i)
      if (t.empty() || t.back() != to[i]) {
        f.push_back(from[i]);
        t.push_back(to[i]);
      }
    f.insert(f.end(), t.begin(), t.end());
    return f;
  }
  [[nodiscard]] static PositionMap from_wire(const std::vector<std::uint64_t>& w) {
    PositionMap m;
    const std::size_t r = w.size() / 2;
    m.from.assign(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(r));
    m.to.assign(w.begin() + static_cast<std::ptrdiff_t>(r), w.end());
    return m;
  }
};

/// Inclusive scan under composition along `count` ranks rank_of(0), ..., rank_of(count - 1):
/// this rank is number t (or not in the chain when t < 0) and holds `mine` = h_t, whose domain
/// is h_{t-1}'s image window; on return it holds h_t o ... o h_0 (Hillis-Steele doubling). Each
/// of the ceil(log2 count) rounds sends one map to rank t + d and receives one from t - d.
/// Messages carry `tag` on comm, which the caller keeps to this exchange.
template <class RankOf>
void scan_maps(const boost::mpi::communicator& comm, int t, int count, RankOf rank_of,
               PositionMap& mine, int tag, const detail::CutCounter& counter) {
  for (int d = 1; d < count; d *= 2) {
    counter.round();
    if (t < 0) continue;
    MPI_Request req = MPI_REQUEST_NULL;
    std::vector<std::uint64_t> out;
    if (t + d < count) {
      out = mine.wire();
      BOOST_MPI_CHECK_RESULT(MPI_Isend, (out.data(), static_cast<int>(out.size()), MPI_UINT64_T,
                                         rank_of(t + d), tag, MPI_Comm(comm), &req));
      counter.hop(out.size() * sizeof(std::uint64_t), true);
    }
    if (t >= d) {
      MPI_Status st;
      BOOST_MPI_CHECK_RESULT(MPI_Probe, (rank_of(t - d), tag, MPI_Comm(comm), &st));
      int len = 0;
      BOOST_MPI_CHECK_RESULT(MPI_Get_count, (&st, MPI_UINT64_T, &len));
      std::vector<std::uint64_t> in(static_cast<std::size_t>(len));
      BOOST_MPI_CHECK_RESULT(MPI_Recv, (in.data(), len, MPI_UINT64_T, rank_of(t - d), tag,
                                        MPI_Comm(comm), MPI_STATUS_IGNORE));
      counter.hop(in.size() * sizeof(std::uint64_t), false);
      mine = PositionMap::compose(mine, PositionMap::from_wire(in));
    }
    BOOST_MPI_CHECK_RESULT(MPI_Wait, (&req, MPI_STATUS_IGNORE));
  }
}

}  // namespace irregular::detail_win
