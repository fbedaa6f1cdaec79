// The executor of kaddoura-ranka-1995 §3.3 (Figure 1, phase C): gather fetches the ghost values a
// CommSchedule names, scatter sends ghost contributions back to their owners and combines them
// with a user operation. Non-blocking begin/end pairs (computation overlaps), one message per
// partner, and a schedule made stale by a remap is refused on every rank.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/schedule/inspector.hpp>
#include <irregular/mpi/operations.hpp>

#include <boost/mpi/collectives/broadcast.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/string.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace irregular {

/// How a ScheduleExecutor reports bad calls.
struct ExecutorOptions {
  /// Agree on bad calls (a wrong array length, a stale schedule) so that every rank throws the
  /// same irregular::collective_error from *_end: one non-blocking all-reduce of one int per call,
  /// overlapped with the data messages. Off: no extra collective; a bad call throws
  /// irregular::error on the rank that made it only (its partners receive no values).
  bool agree = true;
};

/// Moves arrays of trivially copyable T along one CommSchedule. Arrays hold
/// schedule.total_size() values: the local ones, then the ghost region. The schedule must outlive
/// the executor. Several executors of one schedule may be in flight together when every rank
/// begins and ends them in the same order.
template <class T>
class ScheduleExecutor {
  static_assert(
      std::is_trivially_copyable_v<T>,
      "irregular::ScheduleExecutor<T>: T must be trivially copyable (values travel as raw bytes)");

 public:
  /// An executor of `schedule`, which must outlive it; allocates the message buffers once.
  explicit ScheduleExecutor(const CommSchedule& schedule, ExecutorOptions opt = {})
      : s_(&schedule),
        opt_(opt),
        send_buf_(static_cast<std::size_t>(schedule.send_total())),
        recv_buf_(static_cast<std::size_t>(schedule.ghost_size())) {
    requests_.reserve(schedule.send_ranks().size() + schedule.recv_ranks().size());
  }
  ScheduleExecutor(const ScheduleExecutor&) = delete;
  ScheduleExecutor& operator=(const ScheduleExecutor&) = delete;
  ~ScheduleExecutor() {
    // Never leave MPI writing into freed buffers: an abandoned operation is completed here.
    if (pending_ != Pending::none) requests_.finish();
  }

  /// Starts fetching the ghost values: posts the receives, packs the send lists and sends one
  /// message per partner. values must stay alive until gather_end. Collective over schedule.comm().
  void gather_begin(std::span<T> values) {
    begin(values, Pending::gather, "gather");
    const std::int64_t nl = s_->local_size();
    const auto ranks = s_->recv_ranks();
    for (std::size_t j = 0; j < ranks.size(); ++j) {
      const auto slots = s_->recv_slots(j);
      T* dest = ok_ && s_->contiguous_receive() && !slots.empty()
                    ? values.data() + nl + slots[0]
                    : recv_buf_.data() + offset(slots);
      post_recv(dest, slots.size(), ranks[j], gather_tag);
    }
    const auto to = s_->send_ranks();
    std::size_t at = 0;
    for (std::size_t j = 0; j < to.size(); ++j) {
      const auto list = s_->send_list(j);
      T* packed = send_buf_.data() + at;
      if (ok_)
        for (std::size_t k = 0; k < list.size(); ++k)
          packed[k] = values[static_cast<std::size_t>(list[k])];
      post_send(packed, ok_ ? list.size() : 0, to[j], gather_tag);
      at += list.size();
    }
  }
  /// Completes the gather: the ghost region holds the owners' values. Throws
  /// irregular::collective_error on every rank when some rank's call was bad (then the local
  /// values are unchanged; ghost entries may be partly refreshed). Collective over schedule.comm().
  void gather_end() {
    complete(Pending::gather, "gather_end");
    if (s_->contiguous_receive()) return;
    const std::int64_t nl = s_->local_size();
    const auto slots_all = s_->recv_ranks();
    for (std::size_t j = 0; j < slots_all.size(); ++j) {
      const auto slots = s_->recv_slots(j);
      const T* src = recv_buf_.data() + offset(slots);
      for (std::size_t k = 0; k < slots.size(); ++k)
        values_[static_cast<std::size_t>(nl + slots[k])] = src[k];
    }
  }
  /// gather_begin then gather_end: the ghost region of `values` receives the owners' values.
  /// Collective over schedule.comm().
  void gather(std::span<T> values) {
    gather_begin(values);
    gather_end();
  }

  /// Starts sending the ghost region's contributions to their owners (the reverse of gather).
  /// values must stay alive until scatter_end. Collective over schedule.comm().
  void scatter_begin(std::span<T> values) {
    begin(values, Pending::scatter, "scatter");
    const std::int64_t nl = s_->local_size();
    const auto from = s_->send_ranks();
    std::size_t at = 0;
    for (std::size_t j = 0; j < from.size(); ++j) {
      const auto n = s_->send_list(j).size();
      post_recv(send_buf_.data() + at, n, from[j], scatter_tag);
      at += n;
    }
    const auto to = s_->recv_ranks();
    for (std::size_t j = 0; j < to.size(); ++j) {
      const auto slots = s_->recv_slots(j);
      const T* src = nullptr;
      if (ok_ && s_->contiguous_receive() && !slots.empty()) {
        src = values.data() + nl + slots[0];
      } else {
        T* packed = recv_buf_.data() + offset(slots);
        if (ok_)
          for (std::size_t k = 0; k < slots.size(); ++k)
            packed[k] = values[static_cast<std::size_t>(nl + slots[k])];
        src = packed;
      }
      post_send(src, ok_ ? slots.size() : 0, to[j], scatter_tag);
    }
  }
  /// Completes the scatter: every owner combines each contribution into its value,
  /// values[i] = op(values[i], contribution), partners in increasing rank order and each message
  /// in list order (so results do not depend on arrival order). The ghost region is left as it
  /// was. Throws irregular::collective_error on every rank when some rank's call was bad, with no
  /// value changed. Collective over schedule.comm().
  template <class Op = std::plus<>>
  void scatter_end(Op op = {}) {
    complete(Pending::scatter, "scatter_end");
    const auto from = s_->send_ranks();
    std::size_t at = 0;
    for (std::size_t j = 0; j < from.size(); ++j) {
      const auto list = s_->send_list(j);
      for (std::size_t k = 0; k < list.size(); ++k) {
        T& v = values_[static_cast<std::size_t>(list[k])];
        v = op(v, send_buf_[at + k]);
      }
      at += list.size();
    }
  }
  /// scatter_begin then scatter_end: each owner combines the ghost contributions into its
  /// values with `op`. Collective over schedule.comm().
  template <class Op = std::plus<>>
  void scatter(std::span<T> values, Op op = {}) {
    scatter_begin(values);
    scatter_end(op);
  }

  /// The schedule it executes.
  [[nodiscard]] const CommSchedule& schedule() const noexcept { return *s_; }

 private:
  enum class Pending { none, gather, scatter };
  static constexpr int gather_tag = 10, scatter_tag = 11;

  // Offset of a partner's slots in the packed ghost buffer (slots are numbered per partner run
  // when the receive is not contiguous, so use the position in the permutation list instead).
  std::size_t offset(std::span<const std::int64_t> slots) const noexcept {
    return static_cast<std::size_t>(slots.data() - s_->recv_slots(0).data());
  }

  void begin(std::span<T> values, Pending what, const char* name) {
    if (pending_ != Pending::none)
      throw error(std::string("irregular::ScheduleExecutor::") + name +
                  "_begin: another operation is still pending");
    std::optional<std::string> bad;
    const int me = s_->comm().rank();
    if (s_->stale())
      bad = std::string("irregular::ScheduleExecutor::") + name + ": rank " + std::to_string(me) +
            ": the schedule is stale (built in layout generation " +
            std::to_string(s_->generation()) + ", the layout is now in generation " +
            std::to_string(s_->layout_generation()) + "); rebuild it after a remap";
    else if (static_cast<std::int64_t>(values.size()) != s_->total_size())
      bad = std::string("irregular::ScheduleExecutor::") + name + ": rank " + std::to_string(me) +
            " passed " + std::to_string(values.size()) + " values, the schedule needs " +
            std::to_string(s_->total_size()) + " (" + std::to_string(s_->local_size()) +
            " local + " + std::to_string(s_->ghost_size()) + " ghosts)";
    ok_ = !bad;
    failure_ = std::move(bad);
    values_ = ok_ ? values : std::span<T>();
    pending_ = what;
    if (opt_.agree) {
      key_ = ok_ ? s_->comm().size() : me;
      requests_.start_min(s_->comm(), &key_, &min_key_);
    }
  }

  void complete(Pending what, const char* name) {
    if (pending_ != what)
      throw error(std::string("irregular::ScheduleExecutor::") + name +
                  ": no matching begin is pending");
    requests_.wait_all();
    pending_ = Pending::none;
    if (opt_.agree) {
      requests_.wait_min();
      if (min_key_ < s_->comm().size()) {
        std::string message = failure_ ? *failure_ : std::string();
        boost::mpi::broadcast(s_->comm(), message, min_key_);
        throw collective_error(message, min_key_);
      }
    } else if (failure_) {
      throw error(*failure_);
    }
  }

  void post_recv(T* dest, std::size_t n, int source, int tag) {
    requests_.receive(s_->comm(), dest, n * sizeof(T), source, tag);
  }
  void post_send(const T* src, std::size_t n, int dest, int tag) {
    requests_.send(s_->comm(), src, n * sizeof(T), dest, tag);
  }

  const CommSchedule* s_;
  ExecutorOptions opt_;
  std::vector<T> send_buf_;  // gather: packed send lists; scatter: contributions received
  // Ghost values in permutation-list order when not received in place (and, on a rank whose call
  // was bad, where its partners' messages land).
  std::vector<T> recv_buf_;
  mpi::RequestSet requests_;  // the transfers of the pending phase, and its agreement
  std::span<T> values_;
  std::optional<std::string> failure_;
  Pending pending_ = Pending::none;
  bool ok_ = true;
  int key_ = 0, min_key_ = 0;
};

}  // namespace irregular
