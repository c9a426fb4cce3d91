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
};

/// Reads /proc/cpuinfo and sysconf(); never throws.
HostInfo read_host_info();

/// The "model name" line of a /proc/cpuinfo text; "" if it has none.
std::string cpu_model_from_cpuinfo(const std::string& cpuinfo);

}  // namespace splitscope
