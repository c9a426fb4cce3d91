#pragma once
/// \file
/// What the CPU backend runs on, for reports: processor model, memory, threads.

#include <cstdint>
#include <string>

namespace splitscope {

struct HostInfo {
  std::string cpu_model;      ///< "model name" of /proc/cpuinfo, or "unknown CPU"
  std::string host_name;      ///< gethostname(), or "" if unknown
  int64_t memory_bytes = 0;   ///< physical memory, 0 if unknown
  /// Memory a new allocation can have now without swapping (MemAvailable of
  /// /proc/meminfo: free memory plus caches the kernel can drop); 0 if unknown.
  int64_t memory_available_bytes = 0;
  int hardware_threads = 1;   ///< std::thread::hardware_concurrency(), at least 1
  /// The largest-level cache cpu 0 sees (sysfs), bytes; 0 if unknown. Not
  /// sysconf(_SC_LEVEL3_CACHE_SIZE): on the build VM that reports the host
  /// package's 384 MiB where the VM's vCPUs share one 32 MiB L3.
  int64_t last_level_cache_bytes = 0;
};

/// Reads /proc/cpuinfo and sysconf(); never throws.
HostInfo read_host_info();

/// A sysfs cache size ("32768K", "1M", "512"), in bytes; 0 if it is none.
int64_t cache_size_bytes(const std::string& text);

/// The MemAvailable line of a /proc/meminfo text, in bytes; 0 if it has none.
int64_t available_from_meminfo(const std::string& meminfo);

/// The "model name" line of a /proc/cpuinfo text; "" if it has none.
std::string cpu_model_from_cpuinfo(const std::string& cpuinfo);

}  // namespace splitscope
