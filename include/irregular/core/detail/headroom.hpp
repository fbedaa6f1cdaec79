// Capacity headroom for the element and leaf arrays: a remap that grows a rank's share by up to
// half then splices in place instead of copying every array to fresh memory, whose first touch
// costs a page fault per 4 KiB. A SpliceVector gets room in front as well, for arrivals from
// lower ranks, so that the run it keeps does not move. The sort allocates its outputs with it
// (untouched capacity costs no page), so the element store rarely has to copy to reach it.
#pragma once

#include <irregular/core/detail/splice_vector.hpp>

#include <cstddef>
#include <type_traits>
#include <vector>

namespace irregular::detail {

/// The capacity to allocate for an array of n that a later remap may grow.
[[nodiscard]] constexpr std::size_t with_headroom(std::size_t n) noexcept { return n + n / 2; }

/// Gives v room to grow by a quarter at least (reallocating, and copying, only when it lacks it).
template <class T>
void reserve_headroom(std::vector<T>& v, std::size_t n) {
  if (v.capacity() < n + n / 4) v.reserve(with_headroom(n));
}
/// The same in front: arrivals from lower ranks may grow the share by as much.
template <class T>
void reserve_headroom(SpliceVector<T>& v, std::size_t n) {
  if (v.capacity() < n + n / 4 || v.front_room() < n / 4) v.reserve_room(n / 2, with_headroom(n));
}

/// The store's array of values of type T: a SpliceVector when T is trivially copyable (remaps
/// splice it in place), else a std::vector.
template <class T>
using store_vector =
    std::conditional_t<std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                       SpliceVector<T>, std::vector<T>>;

}  // namespace irregular::detail
