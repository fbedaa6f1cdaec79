// SpliceVector: a vector of trivially copyable values with room in front as well as behind, so
// that a remap's splice (open_around) costs what arrives, not what stays: the run a rank keeps
// stays where it is while arrivals fill the room on either side (baiardi-2001 §3: a segment shift
// moves only the segments that change owner). Room nobody writes costs address space only: a
// large allocation's pages are mapped on first touch. Large buffers come from and go back to the
// thread's BlockPool (core/block_pool.hpp), so the next array reuses pages already mapped.
#pragma once

#include <irregular/core/assert.hpp>
#include <irregular/core/block_pool.hpp>

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace irregular::detail {

template <class T>
class SpliceVector {
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                "SpliceVector: over-aligned values are not supported");
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "SpliceVector holds trivially copyable values; others live in std::vector");

 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  SpliceVector() noexcept = default;
  explicit SpliceVector(size_type n) { resize(n); }
  SpliceVector(size_type n, const T& v) { assign(n, v); }
  template <std::input_iterator It>
  SpliceVector(It first, It last) {
    assign(first, last);
  }
  SpliceVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  SpliceVector(const SpliceVector& o) { assign(o.begin(), o.end()); }
  SpliceVector(SpliceVector&& o) noexcept { steal(o); }
  SpliceVector& operator=(const SpliceVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SpliceVector& operator=(SpliceVector&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~SpliceVector() { release(); }

  [[nodiscard]] size_type size() const noexcept { return static_cast<size_type>(last_ - first_); }
  [[nodiscard]] bool empty() const noexcept { return last_ == first_; }
  /// Values the data can reach without reallocating, growing at the back (as std::vector's).
  [[nodiscard]] size_type capacity() const noexcept {
    return static_cast<size_type>(end_ - first_);
  }
  /// Free slots before the first value.
  [[nodiscard]] size_type front_room() const noexcept {
    return static_cast<size_type>(first_ - buf_);
  }
  [[nodiscard]] T* data() noexcept { return first_; }
  [[nodiscard]] const T* data() const noexcept { return first_; }
  [[nodiscard]] iterator begin() noexcept { return first_; }
  [[nodiscard]] iterator end() noexcept { return last_; }
  [[nodiscard]] const_iterator begin() const noexcept { return first_; }
  [[nodiscard]] const_iterator end() const noexcept { return last_; }
  [[nodiscard]] const_iterator cbegin() const noexcept { return begin(); }
  [[nodiscard]] const_iterator cend() const noexcept { return end(); }
  [[nodiscard]] reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  [[nodiscard]] reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  [[nodiscard]] const_reverse_iterator rbegin() const noexcept {
    return const_reverse_iterator(end());
  }
  [[nodiscard]] const_reverse_iterator rend() const noexcept {
    return const_reverse_iterator(begin());
  }
  [[nodiscard]] T& operator[](size_type i) noexcept {
    IRREGULAR_ASSERT(i < size());
    return first_[i];
  }
  [[nodiscard]] const T& operator[](size_type i) const noexcept {
    IRREGULAR_ASSERT(i < size());
    return first_[i];
  }
  [[nodiscard]] T& front() noexcept { return (*this)[0]; }
  [[nodiscard]] const T& front() const noexcept { return (*this)[0]; }
  [[nodiscard]] T& back() noexcept { return (*this)[size() - 1]; }
  [[nodiscard]] const T& back() const noexcept { return (*this)[size() - 1]; }

  void reserve(size_type n) {
    if (n > capacity()) relocate(front_room(), n);
  }
  /// At least `front` free slots before the data and a capacity of at least `cap`.
  void reserve_room(size_type front, size_type cap) {
    if (front_room() < front || capacity() < cap) relocate(front, cap);
  }
  /// Writes the free slots on both sides, once per allocation, so that their pages are mapped
  /// now and not by the first remap that fills them (DomainOptions::resident_headroom).
  void touch_room() noexcept {
    if (touched_ || buf_ == nullptr) return;
    std::memset(static_cast<void*>(buf_), 0, front_room() * sizeof(T));
    std::memset(static_cast<void*>(last_), 0, static_cast<size_type>(end_ - last_) * sizeof(T));
    touched_ = true;
  }
  void shrink_to_fit() {
    if (buf_ != first_ || end_ != last_) relocate(0, size());
  }
  void clear() noexcept { last_ = first_; }
  /// New values are value-initialized, as std::vector's.
  void resize(size_type n) { resize(n, T()); }
  void resize(size_type n, const T& v) {
    const size_type old = size();
    if (n > old) {
      grow_to(n);
      std::fill(first_ + old, first_ + n, v);
    }
    last_ = first_ + n;
  }
  /// Grows or shrinks to n values, leaving new ones unspecified for the caller to overwrite:
  /// no fill pass (a receive or a key computation writes them next).
  void resize_for_overwrite(size_type n) {
    if (n > size()) grow_to(n);
    last_ = first_ + n;
  }
  void assign(size_type n, const T& v) {
    clear();
    resize(n, v);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    clear();
    if constexpr (std::forward_iterator<It>) {
      const auto n = static_cast<size_type>(std::distance(first, last));
      if (n > capacity()) relocate(0, n);
      std::copy(first, last, first_);
      last_ = first_ + n;
    } else {
      for (; first != last; ++first) push_back(*first);
    }
  }
  // Members are pointers, as std::vector's: a store of a value (an index is a std::uint64_t)
  // cannot alias them, so a loop that fills several arrays keeps their ends in registers.
  void push_back(const T& v) {
    if (last_ == end_) {
      const T copy = v;  // v may live in this vector
      grow_to(size() + 1);
      *last_++ = copy;
      return;
    }
    *last_++ = v;
  }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    push_back(T(std::forward<Args>(args)...));
    return back();
  }
  void pop_back() noexcept {
    IRREGULAR_ASSERT(!empty());
    --last_;
  }
  iterator insert(const_iterator pos, const T& v) { return insert(pos, size_type{1}, v); }
  iterator insert(const_iterator pos, size_type n, const T& v) {
    const T copy = v;
    const size_type at = open_gap(pos, n);
    std::fill(first_ + at, first_ + at + n, copy);
    return first_ + at;
  }
  template <std::forward_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    const auto n = static_cast<size_type>(std::distance(first, last));
    const size_type at =
        open_gap(pos, n);  // precondition, as std::vector's: [first, last) not in *this
    std::copy(first, last, first_ + at);
    return first_ + at;
  }
  iterator erase(const_iterator first, const_iterator last) {
    const auto at = static_cast<size_type>(first - begin()),
               n = static_cast<size_type>(last - first);
    if (at == 0) {  // leaving the front is free: the room grows
      first_ += n;
      return begin();
    }
    std::memmove(static_cast<void*>(first_ + at), first_ + at + n, (size() - at - n) * sizeof(T));
    last_ -= n;
    return first_ + at;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  void swap(SpliceVector& o) noexcept {
    std::swap(buf_, o.buf_);
    std::swap(first_, o.first_);
    std::swap(last_, o.last_);
    std::swap(end_, o.end_);
    std::swap(touched_, o.touched_);
  }
  friend void swap(SpliceVector& a, SpliceVector& b) noexcept { a.swap(b); }

  /// The splice of a remap: afterwards the values [a, b) sit at [k, k + b - a) and the vector
  /// holds k + (b - a) + h values; the k front and h back slots are unspecified, for the caller
  /// to fill. The kept run does not move when the room on both sides suffices, which the
  /// headroom the store reserves (core/detail/headroom.hpp) makes the usual case; otherwise it
  /// moves once, within the buffer when it fits, else to fresh room on both sides.
  void open_around(size_type a, size_type b, size_type k, size_type h) {
    IRREGULAR_ASSERT(a <= b && b <= size());
    const size_type kept = b - a, n = k + kept + h, front = front_room(),
                    slots = static_cast<size_type>(end_ - buf_);
    if (front + a >= k && front + b + h <= slots) {
      first_ = buf_ + (front + a - k);
      last_ = first_ + n;
      return;
    }
    if (n <= slots) {  // room enough in all, not on the right side: keep the start where it can
      // stay (the pages past the old end may never have been written: each costs a fault)
      const size_type f = std::min(front, slots - n);
      std::memmove(static_cast<void*>(buf_ + f + k), first_ + a, kept * sizeof(T));
      first_ = buf_ + f;
      last_ = first_ + n;
      return;
    }
    const size_type f = n / 2;  // the store's headroom on both sides
    const Fresh fresh = allocate(f + n + n / 2);
    if (kept) std::memcpy(static_cast<void*>(fresh.p + f + k), first_ + a, kept * sizeof(T));
    release();
    adopt_buffer(fresh, f, n);
  }

  friend bool operator==(const SpliceVector& x, const SpliceVector& y) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end());
  }

 private:
  struct Fresh {
    T* p = nullptr;
    size_type slots = 0;  // at least the slots asked for: a reused block may hold more
  };
  static Fresh allocate(size_type n) {
    if (n == 0) return {};
    const BlockPool::Block b = BlockPool::take(n * sizeof(T));
    return {static_cast<T*>(b.p), b.bytes / sizeof(T)};
  }
  void release() noexcept {
    if (buf_) BlockPool::give({buf_, static_cast<size_type>(end_ - buf_) * sizeof(T)});
    buf_ = first_ = last_ = end_ = nullptr;
    touched_ = false;
  }
  void adopt_buffer(Fresh fresh, size_type front, size_type n) noexcept {
    buf_ = fresh.p;
    first_ = fresh.p + front;
    last_ = first_ + n;
    end_ = fresh.p + fresh.slots;
  }
  void steal(SpliceVector& o) noexcept {
    buf_ = std::exchange(o.buf_, nullptr);
    first_ = std::exchange(o.first_, nullptr);
    last_ = std::exchange(o.last_, nullptr);
    end_ = std::exchange(o.end_, nullptr);
    touched_ = std::exchange(o.touched_, false);
  }
  /// Moves the values to a fresh allocation with `front` slots before them and capacity `cap`.
  void relocate(size_type front, size_type cap) {
    const size_type n = size();
    cap = std::max(cap, n);
    const Fresh fresh = allocate(front + cap);
    if (n) std::memcpy(static_cast<void*>(fresh.p + front), first_, n * sizeof(T));
    release();
    adopt_buffer(fresh, front, n);
  }
  void grow_to(size_type n) {
    if (n > capacity()) relocate(front_room(), std::max(n, 2 * capacity()));
  }
  /// Makes n unspecified slots at pos; returns their index.
  size_type open_gap(const_iterator pos, size_type n) {
    const auto at = static_cast<size_type>(pos - begin());
    if (at == 0 && n <= front_room()) {  // arrivals in front take the room
      first_ -= n;
      return 0;
    }
    const size_type old = size();
    grow_to(old + n);
    std::memmove(static_cast<void*>(first_ + at + n), first_ + at, (old - at) * sizeof(T));
    last_ = first_ + old + n;
    return at;
  }

  T* buf_ = nullptr;      // the allocation
  T* first_ = nullptr;    // the first value: [buf_, first_) is the room in front
  T* last_ = nullptr;     // past the last value
  T* end_ = nullptr;      // past the allocation: [last_, end_) is the room behind
  bool touched_ = false;  // touch_room() wrote this allocation's room
};

/// v.resize_for_overwrite(n) where v has it (SpliceVector), else v.resize(n).
template <class V>
void resize_for_overwrite(V& v, std::size_t n) {
  if constexpr (requires { v.resize_for_overwrite(n); })
    v.resize_for_overwrite(n);
  else
    v.resize(n);
}

/// to = from: moved when of one type, else copied.
template <class V, class From>
void adopt(V& to, From&& from) {
  if constexpr (std::is_same_v<V, std::remove_cvref_t<From>>)
    to = std::forward<From>(from);
  else
    to.assign(from.begin(), from.end());
}

}  // namespace irregular::detail
