// An allocator for receive buffers: new elements of trivial types are left uninitialized.
#pragma once

#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace irregular::detail {

/// An allocator that leaves new elements of trivial types uninitialized: receive buffers are
/// overwritten at once, so zeroing them first would be a wasted pass.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() noexcept = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* at) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(at)) U;
  }
  template <class U, class... Args>
  void construct(U* at, Args&&... args) {
    ::new (static_cast<void*>(at)) U(std::forward<Args>(args)...);
  }
  template <class U>
  friend bool operator==(const UninitializedAllocator&, const UninitializedAllocator<U>&) noexcept {
    return true;
  }
};

}  // namespace irregular::detail
