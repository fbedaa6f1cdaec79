// Capacity headroom for the element arrays: a remap that grows a rank's share by up to half then
// splices in place instead of copying every array to fresh memory, whose first touch costs a page
// fault per 4 KiB. The sort allocates its outputs with it (untouched capacity costs no page), so
// the element store rarely has to copy to reach it.
#pragma once

#include <cstddef>
#include <vector>

namespace irregular::detail {

/// The capacity to allocate for an array of n that a later remap may grow.
[[nodiscard]] constexpr std::size_t with_headroom(std::size_t n) noexcept { return n + n / 2; }

/// Gives v room to grow by a quarter at least (reallocating, and copying, only when it lacks it).
template <class T>
void reserve_headroom(std::vector<T>& v, std::size_t n) {
  if (v.capacity() < n + n / 4) v.reserve(with_headroom(n));
}

}  // namespace irregular::detail
