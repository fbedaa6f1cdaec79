// SpliceVector: a vector of trivially copyable values with room in front as well as behind, so
// that a remap's splice (open_around) costs what arrives, not what stays: the run a rank keeps
// stays where it is while arrivals fill the room on either side (baiardi-2001 §3: a segment shift
// moves only the segments that change owner). Room nobody writes costs address space only: a
// large allocation's pages are mapped on first touch.
#pragma once

#include <irregular/core/assert.hpp>

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

  [[nodiscard]] size_type size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  /// Values the data can reach without reallocating, growing at the back (as std::vector's).
  [[nodiscard]] size_type capacity() const noexcept { return slots_ - front_; }
  /// Free slots before the first value.
  [[nodiscard]] size_type front_room() const noexcept { return front_; }
  [[nodiscard]] T* data() noexcept { return buf_ + front_; }
  [[nodiscard]] const T* data() const noexcept { return buf_ + front_; }
  [[nodiscard]] iterator begin() noexcept { return data(); }
  [[nodiscard]] iterator end() noexcept { return data() + size_; }
  [[nodiscard]] const_iterator begin() const noexcept { return data(); }
  [[nodiscard]] const_iterator end() const noexcept { return data() + size_; }
  [[nodiscard]] const_iterator cbegin() const noexcept { return begin(); }
  [[nodiscard]] const_iterator cend() const noexcept { return end(); }
  [[nodiscard]] reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  [[nodiscard]] reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  [[nodiscard]] const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  [[nodiscard]] const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }
  [[nodiscard]] T& operator[](size_type i) noexcept {
    IRREGULAR_ASSERT(i < size_);
    return data()[i];
  }
  [[nodiscard]] const T& operator[](size_type i) const noexcept {
    IRREGULAR_ASSERT(i < size_);
    return data()[i];
  }
  [[nodiscard]] T& front() noexcept { return (*this)[0]; }
  [[nodiscard]] const T& front() const noexcept { return (*this)[0]; }
  [[nodiscard]] T& back() noexcept { return (*this)[size_ - 1]; }
  [[nodiscard]] const T& back() const noexcept { return (*this)[size_ - 1]; }

  void reserve(size_type n) {
    if (n > capacity()) relocate(front_, n);
  }
  /// At least `front` free slots before the data and a capacity of at least `cap`.
  void reserve_room(size_type front, size_type cap) {
    if (front_ < front || capacity() < cap) relocate(front, cap);
  }
  /// Writes the free slots on both sides, once per allocation, so that their pages are mapped
  /// now and not by the first remap that fills them (DomainOptions::resident_headroom).
  void touch_room() noexcept {
    if (touched_ || buf_ == nullptr) return;
    std::memset(static_cast<void*>(buf_), 0, front_ * sizeof(T));
    std::memset(static_cast<void*>(buf_ + front_ + size_), 0, (slots_ - front_ - size_) * sizeof(T));
    touched_ = true;
  }
  void shrink_to_fit() {
    if (slots_ != size_) relocate(0, size_);
  }
  void clear() noexcept { size_ = 0; }
  /// New values are value-initialized, as std::vector's.
  void resize(size_type n) { resize(n, T()); }
  void resize(size_type n, const T& v) {
    if (n > size_) {
      grow_to(n);
      std::fill(data() + size_, data() + n, v);
    }
    size_ = n;
  }
  /// Grows or shrinks to n values, leaving new ones unspecified for the caller to overwrite:
  /// no fill pass (a receive or a key computation writes them next).
  void resize_for_overwrite(size_type n) {
    if (n > size_) grow_to(n);
    size_ = n;
  }
  void assign(size_type n, const T& v) {
    size_ = 0;
    resize(n, v);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    size_ = 0;
    if constexpr (std::forward_iterator<It>) {
      const auto n = static_cast<size_type>(std::distance(first, last));
      if (n > capacity()) relocate(0, n);
      std::copy(first, last, data());
      size_ = n;
    } else {
      for (; first != last; ++first) push_back(*first);
    }
  }
  void push_back(const T& v) {
    if (size_ == capacity()) {
      const T copy = v;  // v may live in this vector
      grow_to(size_ + 1);
      data()[size_++] = copy;
      return;
    }
    data()[size_++] = v;
  }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    push_back(T(std::forward<Args>(args)...));
    return back();
  }
  void pop_back() noexcept {
    IRREGULAR_ASSERT(size_ > 0);
    --size_;
  }
  iterator insert(const_iterator pos, const T& v) { return insert(pos, size_type{1}, v); }
  iterator insert(const_iterator pos, size_type n, const T& v) {
    const T copy = v;
    const size_type at = open_gap(pos, n);
    std::fill(data() + at, data() + at + n, copy);
    return data() + at;
  }
  template <std::forward_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    const auto n = static_cast<size_type>(std::distance(first, last));
    const size_type at = open_gap(pos, n);  // precondition, as std::vector's: [first, last) not in *this
    std::copy(first, last, data() + at);
    return data() + at;
  }
  iterator erase(const_iterator first, const_iterator last) {
    const auto at = static_cast<size_type>(first - begin()), n = static_cast<size_type>(last - first);
    if (at == 0) {  // leaving the front is free: the room grows
      front_ += n;
      size_ -= n;
      return begin();
    }
    std::memmove(static_cast<void*>(data() + at), data() + at + n, (size_ - at - n) * sizeof(T));
    size_ -= n;
    return data() + at;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  void swap(SpliceVector& o) noexcept {
    std::swap(buf_, o.buf_);
    std::swap(front_, o.front_);
    std::swap(size_, o.size_);
    std::swap(slots_, o.slots_);
    std::swap(touched_, o.touched_);
  }
  friend void swap(SpliceVector& a, SpliceVector& b) noexcept { a.swap(b); }

  /// The splice of a remap: afterwards the values [a, b) sit at [k, k + b - a) and the vector
  /// holds k + (b - a) + h values; the k front and h back slots are unspecified, for the caller
  /// to fill. The kept run does not move when the room on both sides suffices, which the
  /// headroom the store reserves (core/detail/headroom.hpp) makes the usual case; otherwise it
  /// moves once, within the buffer when it fits, else to fresh room on both sides.
  void open_around(size_type a, size_type b, size_type k, size_type h) {
    IRREGULAR_ASSERT(a <= b && b <= size_);
    const size_type kept = b - a, n = k + kept + h;
    if (front_ + a >= k && front_ + b + h <= slots_) {
      front_ = front_ + a - k;
      size_ = n;
      return;
    }
    if (n <= slots_) {  // room enough in all, not on the right side: keep the start where it can
      // stay (the pages past the old end may never have been written: each costs a fault)
      const size_type f = std::min(front_, slots_ - n);
      std::memmove(static_cast<void*>(buf_ + f + k), data() + a, kept * sizeof(T));
      front_ = f;
      size_ = n;
      return;
    }
    const size_type f = n / 2, slots = f + n + n / 2;  // the store's headroom on both sides
    T* fresh = allocate(slots);
    if (kept) std::memcpy(static_cast<void*>(fresh + f + k), data() + a, kept * sizeof(T));
    release();
    buf_ = fresh;
    front_ = f;
    size_ = n;
    slots_ = slots;
  }

  friend bool operator==(const SpliceVector& x, const SpliceVector& y) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end());
  }

 private:
  static T* allocate(size_type n) { return n == 0 ? nullptr : std::allocator<T>().allocate(n); }
  void release() noexcept {
    if (buf_) std::allocator<T>().deallocate(buf_, slots_);
    buf_ = nullptr;
    front_ = size_ = slots_ = 0;
    touched_ = false;
  }
  void steal(SpliceVector& o) noexcept {
    buf_ = std::exchange(o.buf_, nullptr);
    front_ = std::exchange(o.front_, 0);
    size_ = std::exchange(o.size_, 0);
    slots_ = std::exchange(o.slots_, 0);
    touched_ = std::exchange(o.touched_, false);
  }
  /// Moves the values to a fresh allocation with `front` slots before them and capacity `cap`.
  void relocate(size_type front, size_type cap) {
    cap = std::max(cap, size_);
    T* fresh = allocate(front + cap);
    if (size_) std::memcpy(static_cast<void*>(fresh + front), data(), size_ * sizeof(T));
    const size_type n = size_;
    release();
    buf_ = fresh;
    front_ = front;
    size_ = n;
    slots_ = front + cap;
  }
  void grow_to(size_type n) {
    if (n > capacity()) relocate(front_, std::max(n, 2 * capacity()));
  }
  /// Makes n unspecified slots at pos; returns their index.
  size_type open_gap(const_iterator pos, size_type n) {
    const auto at = static_cast<size_type>(pos - begin());
    if (at == 0 && n <= front_) {  // arrivals in front take the room
      front_ -= n;
      size_ += n;
      return 0;
    }
    grow_to(size_ + n);
    std::memmove(static_cast<void*>(data() + at + n), data() + at, (size_ - at) * sizeof(T));
    size_ += n;
    return at;
  }

  T* buf_ = nullptr;
  size_type front_ = 0;  // free slots before the data
  size_type size_ = 0;
  size_type slots_ = 0;  // allocated slots
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
