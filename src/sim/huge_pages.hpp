#pragma once
/// \file
/// Large arrays that a simulation fills once (a million-op plan's spans and
/// its per-op state: over 100 MB) asked onto transparent huge pages. Every
/// fresh 4 KiB page costs a fault at its first write, and on a virtual
/// machine the faults cost more than the simulation: 80 MB of spans took
/// 208 ms in 4 KiB pages and 9 ms in 2 MiB ones (Linux 6.1 guest, THP in
/// `madvise` mode). Only a hint: where the kernel has no huge pages to give,
/// or outside Linux, nothing changes; the contents are never affected.

#include <cstddef>
#include <vector>

namespace splitscope {

/// Below this, a range is left alone: a small plan should not pay a system call per array.
inline constexpr size_t kHugePageAdviceMinBytes = size_t{4} << 20;

/// Advises the kernel to back the whole 4 KiB pages of [data, data + bytes)
/// with huge pages; call it before they are first written.
void advise_huge_pages(const void* data, size_t bytes);

/// `vec.reserve(n)`, then the advice over its capacity where that is at
/// least kHugePageAdviceMinBytes and newly allocated (an empty vector).
template <class T>
void reserve_on_huge_pages(std::vector<T>& vec, size_t n) {
  const bool fresh = vec.capacity() < n;
  vec.reserve(n);
  if (fresh && vec.capacity() * sizeof(T) >= kHugePageAdviceMinBytes) {
    advise_huge_pages(vec.data(), vec.capacity() * sizeof(T));
  }
}

}  // namespace splitscope
