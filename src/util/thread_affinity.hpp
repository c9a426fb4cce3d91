#pragma once
/// \file
/// Pinning threads to CPUs (Linux affinity masks). A measured cpu run pins
/// its compute threads so that a device is always the same core: on the
/// build VM the two vCPUs ran a small network 1.55x apart (74 against 115 us,
/// the same binary pinned with taskset), so an unpinned run measured
/// whichever one the kernel's scheduler happened to place it on, and kept
/// that for the life of its threads.

#include <thread>
#include <vector>

namespace splitscope {

/// The CPUs this process may run on (its affinity mask), ascending; the
/// first hardware_concurrency() CPUs where the system cannot say.
std::vector<int> allowed_cpus();

/// Pins `thread` to `cpu`; false where the system refuses (the thread then
/// runs where the kernel puts it, as before).
bool pin_thread(std::thread& thread, int cpu);

}  // namespace splitscope
