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

/// The "model name" line of a /proc/cpuinfo text; "" if it has none.
std::string cpu_model_from_cpuinfo(const std::string& cpuinfo);

}  // namespace splitscope
