// A PMPI interposition layer for benchmarks: every MPI call the library, Boost.MPI and the
// benchmark make (point-to-point and collective) is counted with its payload bytes and then
// forwarded to PMPI_*. Include this header in exactly ONE translation unit of an executable:
// it defines the MPI_* entry points, which then take precedence over libmpi's (the executable's
// definitions are exported because libboost_mpi and libmpi reference them, so calls made from
// inside libboost_mpi.so are counted too). Open MPI implements its collectives internally
// (ompi_coll_*), never through the MPI_* entry points, so nothing is counted twice — and the
// point-to-point hops *inside* a collective are not visible here: a collective is one call.
//
// Bytes: point-to-point = count × type size (PMPI_Type_size, so derived datatypes count their
// payload); collectives: `out` = bytes this rank's send buffer contributes, `in` = bytes that
// land in its receive buffer (Allgather: p × recvcount; Bcast: the root counts out, the others
// in; Allreduce/Scan: count × size both ways; Gather(v): the root's in is the gathered total).
#pragma once

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // the C API only (as Boost.MPI)
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace pmpi_counters {

enum Fn : int {
  // point-to-point sends
  Send, Isend, Issend, Ssend, Bsend, Rsend, Sendrecv,
  // receives
  Recv, Irecv, Mrecv,
  // probes and tests (polls, no payload)
  Probe, Iprobe, Mprobe, Improbe, Test, Testall, Wait, Waitall,
  // collectives
  Allreduce, Iallreduce, Reduce, Allgather, Allgatherv, Alltoall, Alltoallv, Bcast, Gather, Gatherv,
  Scatter, Scatterv, Scan, Exscan, Reduce_scatter_block, Barrier, Ibarrier,
  // communicator management (collective in the MPI standard)
  Comm_dup, Comm_split, Comm_split_type,
  count
};

inline constexpr std::array<const char*, Fn::count> names = {
    "Send", "Isend", "Issend", "Ssend", "Bsend", "Rsend", "Sendrecv", "Recv", "Irecv", "Mrecv",
    "Probe", "Iprobe", "Mprobe", "Improbe", "Test", "Testall", "Wait", "Waitall",
    "Allreduce", "Iallreduce", "Reduce", "Allgather", "Allgatherv", "Alltoall", "Alltoallv", "Bcast",
    "Gather", "Gatherv", "Scatter", "Scatterv", "Scan", "Exscan", "Reduce_scatter_block", "Barrier",
    "Ibarrier", "Comm_dup", "Comm_split", "Comm_split_type"};

[[nodiscard]] constexpr bool is_send(int f) noexcept { return f >= Send && f <= Sendrecv; }
[[nodiscard]] constexpr bool is_recv(int f) noexcept { return f >= Recv && f <= Mrecv; }
[[nodiscard]] constexpr bool is_poll(int f) noexcept { return f >= Probe && f <= Waitall; }
[[nodiscard]] constexpr bool is_collective(int f) noexcept { return f >= Allreduce; }

/// Calls and bytes per MPI function since the program started (this rank).
struct Counters {
  std::array<std::uint64_t, Fn::count> calls{}, out{}, in{};

  Counters operator-(const Counters& o) const noexcept {
    Counters d;
    for (int f = 0; f < Fn::count; ++f) {
      d.calls[f] = calls[f] - o.calls[f];
      d.out[f] = out[f] - o.out[f];
      d.in[f] = in[f] - o.in[f];
    }
    return d;
  }
  [[nodiscard]] std::uint64_t sum_calls(bool (*pred)(int) noexcept) const noexcept {
    std::uint64_t s = 0;
    for (int f = 0; f < Fn::count; ++f) s += pred(f) ? calls[f] : 0;
    return s;
  }
  [[nodiscard]] std::uint64_t sum_out(bool (*pred)(int) noexcept) const noexcept {
    std::uint64_t s = 0;
    for (int f = 0; f < Fn::count; ++f) s += pred(f) ? out[f] : 0;
    return s;
  }
  [[nodiscard]] std::uint64_t sum_in(bool (*pred)(int) noexcept) const noexcept {
    std::uint64_t s = 0;
    for (int f = 0; f < Fn::count; ++f) s += pred(f) ? in[f] : 0;
    return s;
  }
};

inline Counters totals;
/// Off while the benchmark gathers its own results (so its bookkeeping is not counted).
inline bool enabled = true;

inline std::uint64_t bytes(int count, MPI_Datatype t) {
  if (count <= 0 || t == MPI_DATATYPE_NULL) return 0;
  int size = 0;
  PMPI_Type_size(t, &size);
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}
inline int comm_size(MPI_Comm c) {
  int p = 1;
  PMPI_Comm_size(c, &p);
  return p;
}
inline int comm_rank(MPI_Comm c) {
  int r = 0;
  PMPI_Comm_rank(c, &r);
  return r;
}
inline std::uint64_t sum_counts(const int* counts, int p, MPI_Datatype t) {
  if (counts == nullptr) return 0;
  std::uint64_t s = 0;
  for (int i = 0; i < p; ++i) s += bytes(counts[i], t);
  return s;
}
inline void add(Fn f, std::uint64_t out, std::uint64_t in) {
  if (!enabled) return;
  ++totals.calls[f];
  totals.out[f] += out;
  totals.in[f] += in;
}

}  // namespace pmpi_counters

// ---- the interposed entry points -------------------------------------------------------------
// Signatures exactly as Open MPI 4.1's mpi.h declares them (MPI-3, const send buffers).

extern "C" {

int MPI_Send(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
  pmpi_counters::add(pmpi_counters::Send, pmpi_counters::bytes(count, t), 0);
  return PMPI_Send(buf, count, t, dest, tag, comm);
}
int MPI_Isend(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  pmpi_counters::add(pmpi_counters::Isend, pmpi_counters::bytes(count, t), 0);
  return PMPI_Isend(buf, count, t, dest, tag, comm, req);
}
int MPI_Issend(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  pmpi_counters::add(pmpi_counters::Issend, pmpi_counters::bytes(count, t), 0);
  return PMPI_Issend(buf, count, t, dest, tag, comm, req);
}
int MPI_Ssend(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
  pmpi_counters::add(pmpi_counters::Ssend, pmpi_counters::bytes(count, t), 0);
  return PMPI_Ssend(buf, count, t, dest, tag, comm);
}
int MPI_Bsend(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
  pmpi_counters::add(pmpi_counters::Bsend, pmpi_counters::bytes(count, t), 0);
  return PMPI_Bsend(buf, count, t, dest, tag, comm);
}
int MPI_Rsend(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
  pmpi_counters::add(pmpi_counters::Rsend, pmpi_counters::bytes(count, t), 0);
  return PMPI_Rsend(buf, count, t, dest, tag, comm);
}
int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype st, int dest, int stag, void* rbuf, int rcount,
                 MPI_Datatype rt, int source, int rtag, MPI_Comm comm, MPI_Status* status) {
  pmpi_counters::add(pmpi_counters::Sendrecv, pmpi_counters::bytes(scount, st), pmpi_counters::bytes(rcount, rt));
  return PMPI_Sendrecv(sbuf, scount, st, dest, stag, rbuf, rcount, rt, source, rtag, comm, status);
}
int MPI_Recv(void* buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  pmpi_counters::add(pmpi_counters::Recv, 0, pmpi_counters::bytes(count, t));  // capacity (Boost.MPI posts exact sizes)
  return PMPI_Recv(buf, count, t, source, tag, comm, status);
}
int MPI_Irecv(void* buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm, MPI_Request* req) {
  pmpi_counters::add(pmpi_counters::Irecv, 0, pmpi_counters::bytes(count, t));
  return PMPI_Irecv(buf, count, t, source, tag, comm, req);
}
int MPI_Mrecv(void* buf, int count, MPI_Datatype t, MPI_Message* msg, MPI_Status* status) {
  pmpi_counters::add(pmpi_counters::Mrecv, 0, pmpi_counters::bytes(count, t));
  return PMPI_Mrecv(buf, count, t, msg, status);
}
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  pmpi_counters::add(pmpi_counters::Probe, 0, 0);
  return PMPI_Probe(source, tag, comm, status);
}
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  pmpi_counters::add(pmpi_counters::Iprobe, 0, 0);
  return PMPI_Iprobe(source, tag, comm, flag, status);
}
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* msg, MPI_Status* status) {
  pmpi_counters::add(pmpi_counters::Mprobe, 0, 0);
  return PMPI_Mprobe(source, tag, comm, msg, status);
}
int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* msg, MPI_Status* status) {
  pmpi_counters::add(pmpi_counters::Improbe, 0, 0);
  return PMPI_Improbe(source, tag, comm, flag, msg, status);
}
int MPI_Test(MPI_Request* req, int* flag, MPI_Status* status) {
  pmpi_counters::add(pmpi_counters::Test, 0, 0);
  return PMPI_Test(req, flag, status);
}
int MPI_Testall(int n, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  pmpi_counters::add(pmpi_counters::Testall, 0, 0);
  return PMPI_Testall(n, reqs, flag, statuses);
}
int MPI_Wait(MPI_Request* req, MPI_Status* status) {
  pmpi_counters::add(pmpi_counters::Wait, 0, 0);
  return PMPI_Wait(req, status);
}
int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
  pmpi_counters::add(pmpi_counters::Waitall, 0, 0);
  return PMPI_Waitall(n, reqs, statuses);
}

int MPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  const auto b = pmpi_counters::bytes(count, t);
  pmpi_counters::add(pmpi_counters::Allreduce, b, b);
  return PMPI_Allreduce(sbuf, rbuf, count, t, op, comm);
}
int MPI_Iallreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                   MPI_Request* req) {
  const auto b = pmpi_counters::bytes(count, t);
  pmpi_counters::add(pmpi_counters::Iallreduce, b, b);
  return PMPI_Iallreduce(sbuf, rbuf, count, t, op, comm, req);
}
int MPI_Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm) {
  const auto b = pmpi_counters::bytes(count, t);
  pmpi_counters::add(pmpi_counters::Reduce, b, pmpi_counters::comm_rank(comm) == root ? b : 0);
  return PMPI_Reduce(sbuf, rbuf, count, t, op, root, comm);
}
int MPI_Allgather(const void* sbuf, int scount, MPI_Datatype st, void* rbuf, int rcount, MPI_Datatype rt,
                  MPI_Comm comm) {
  const int p = pmpi_counters::comm_size(comm);
  const auto in = static_cast<std::uint64_t>(p) * pmpi_counters::bytes(rcount, rt);
  pmpi_counters::add(pmpi_counters::Allgather, sbuf == MPI_IN_PLACE ? in / static_cast<std::uint64_t>(p)
                                                                    : pmpi_counters::bytes(scount, st), in);
  return PMPI_Allgather(sbuf, scount, st, rbuf, rcount, rt, comm);
}
int MPI_Allgatherv(const void* sbuf, int scount, MPI_Datatype st, void* rbuf, const int rcounts[],
                   const int displs[], MPI_Datatype rt, MPI_Comm comm) {
  const int p = pmpi_counters::comm_size(comm);
  const auto out = sbuf == MPI_IN_PLACE ? pmpi_counters::bytes(rcounts[pmpi_counters::comm_rank(comm)], rt)
                                        : pmpi_counters::bytes(scount, st);
  pmpi_counters::add(pmpi_counters::Allgatherv, out, pmpi_counters::sum_counts(rcounts, p, rt));
  return PMPI_Allgatherv(sbuf, scount, st, rbuf, rcounts, displs, rt, comm);
}
int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype st, void* rbuf, int rcount, MPI_Datatype rt,
                 MPI_Comm comm) {
  const auto p = static_cast<std::uint64_t>(pmpi_counters::comm_size(comm));
  pmpi_counters::add(pmpi_counters::Alltoall, p * pmpi_counters::bytes(scount, st), p * pmpi_counters::bytes(rcount, rt));
  return PMPI_Alltoall(sbuf, scount, st, rbuf, rcount, rt, comm);
}
int MPI_Alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype st, void* rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rt, MPI_Comm comm) {
  const int p = pmpi_counters::comm_size(comm);
  pmpi_counters::add(pmpi_counters::Alltoallv, sbuf == MPI_IN_PLACE ? 0 : pmpi_counters::sum_counts(scounts, p, st),
                     pmpi_counters::sum_counts(rcounts, p, rt));
  return PMPI_Alltoallv(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm);
}
int MPI_Bcast(void* buf, int count, MPI_Datatype t, int root, MPI_Comm comm) {
  const auto b = pmpi_counters::bytes(count, t);
  const bool me = pmpi_counters::comm_rank(comm) == root;
  pmpi_counters::add(pmpi_counters::Bcast, me ? b : 0, me ? 0 : b);
  return PMPI_Bcast(buf, count, t, root, comm);
}
int MPI_Gather(const void* sbuf, int scount, MPI_Datatype st, void* rbuf, int rcount, MPI_Datatype rt, int root,
               MPI_Comm comm) {
  const bool me = pmpi_counters::comm_rank(comm) == root;
  const auto p = static_cast<std::uint64_t>(pmpi_counters::comm_size(comm));
  pmpi_counters::add(pmpi_counters::Gather, sbuf == MPI_IN_PLACE ? 0 : pmpi_counters::bytes(scount, st),
                     me ? p * pmpi_counters::bytes(rcount, rt) : 0);
  return PMPI_Gather(sbuf, scount, st, rbuf, rcount, rt, root, comm);
}
int MPI_Gatherv(const void* sbuf, int scount, MPI_Datatype st, void* rbuf, const int rcounts[], const int displs[],
                MPI_Datatype rt, int root, MPI_Comm comm) {
  const bool me = pmpi_counters::comm_rank(comm) == root;
  const int p = pmpi_counters::comm_size(comm);
  pmpi_counters::add(pmpi_counters::Gatherv, sbuf == MPI_IN_PLACE ? 0 : pmpi_counters::bytes(scount, st),
                     me ? pmpi_counters::sum_counts(rcounts, p, rt) : 0);
  return PMPI_Gatherv(sbuf, scount, st, rbuf, rcounts, displs, rt, root, comm);
}
int MPI_Scatter(const void* sbuf, int scount, MPI_Datatype st, void* rbuf, int rcount, MPI_Datatype rt, int root,
                MPI_Comm comm) {
  const bool me = pmpi_counters::comm_rank(comm) == root;
  const auto p = static_cast<std::uint64_t>(pmpi_counters::comm_size(comm));
  pmpi_counters::add(pmpi_counters::Scatter, me ? p * pmpi_counters::bytes(scount, st) : 0,
                     rbuf == MPI_IN_PLACE ? 0 : pmpi_counters::bytes(rcount, rt));
  return PMPI_Scatter(sbuf, scount, st, rbuf, rcount, rt, root, comm);
}
int MPI_Scatterv(const void* sbuf, const int scounts[], const int displs[], MPI_Datatype st, void* rbuf, int rcount,
                 MPI_Datatype rt, int root, MPI_Comm comm) {
  const bool me = pmpi_counters::comm_rank(comm) == root;
  const int p = pmpi_counters::comm_size(comm);
  pmpi_counters::add(pmpi_counters::Scatterv, me ? pmpi_counters::sum_counts(scounts, p, st) : 0,
                     rbuf == MPI_IN_PLACE ? 0 : pmpi_counters::bytes(rcount, rt));
  return PMPI_Scatterv(sbuf, scounts, displs, st, rbuf, rcount, rt, root, comm);
}
int MPI_Scan(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  const auto b = pmpi_counters::bytes(count, t);
  pmpi_counters::add(pmpi_counters::Scan, b, b);
  return PMPI_Scan(sbuf, rbuf, count, t, op, comm);
}
int MPI_Exscan(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  const auto b = pmpi_counters::bytes(count, t);
  pmpi_counters::add(pmpi_counters::Exscan, b, b);
  return PMPI_Exscan(sbuf, rbuf, count, t, op, comm);
}
int MPI_Reduce_scatter_block(const void* sbuf, void* rbuf, int rcount, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  const auto b = pmpi_counters::bytes(rcount, t);
  pmpi_counters::add(pmpi_counters::Reduce_scatter_block,
                     static_cast<std::uint64_t>(pmpi_counters::comm_size(comm)) * b, b);
  return PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, t, op, comm);
}
int MPI_Barrier(MPI_Comm comm) {
  pmpi_counters::add(pmpi_counters::Barrier, 0, 0);
  return PMPI_Barrier(comm);
}
int MPI_Ibarrier(MPI_Comm comm, MPI_Request* req) {
  pmpi_counters::add(pmpi_counters::Ibarrier, 0, 0);
  return PMPI_Ibarrier(comm, req);
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* out) {
  pmpi_counters::add(pmpi_counters::Comm_dup, 0, 0);
  return PMPI_Comm_dup(comm, out);
}
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* out) {
  pmpi_counters::add(pmpi_counters::Comm_split, 0, 0);
  return PMPI_Comm_split(comm, color, key, out);
}
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm* out) {
  pmpi_counters::add(pmpi_counters::Comm_split_type, 0, 0);
  return PMPI_Comm_split_type(comm, type, key, info, out);
}

}  // extern "C"
