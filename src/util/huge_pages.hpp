#pragma once
/// \file
/// Large arrays filled once and then read through (a million-op plan's ops
/// and values, and a simulation's spans and per-op state: over 100 MB each)
/// asked onto transparent huge pages. Every fresh 4 KiB page costs a fault
/// at its first write, and on a virtual machine the faults cost more than
/// the simulation: 80 MB of spans took 208 ms in 4 KiB pages and 9 ms in
/// 2 MiB ones (Linux 6.1 guest, THP in `madvise` mode). Reading them back
/// costs a TLB miss per 4 KiB page, which the guest's nested page walks make
/// slow and erratic. Only a hint: where the kernel has no huge pages to give,
/// or outside Linux, nothing changes; the contents are never affected.

#include <cstddef>
#include <iterator>
#include <utility>
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

/// Moves the elements of `vec` into a buffer advised onto huge pages where
/// it holds at least kHugePageAdviceMinBytes, for a vector that outgrew the
/// buffer reserve_on_huge_pages() gave it.
template <class T>
void move_onto_huge_pages(std::vector<T>& vec) {
  if (vec.size() * sizeof(T) < kHugePageAdviceMinBytes) return;
  std::vector<T> moved;
  reserve_on_huge_pages(moved, vec.size());
  std::move(vec.begin(), vec.end(), std::back_inserter(moved));
  vec.swap(moved);
}

}  // namespace splitscope
