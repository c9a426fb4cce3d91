#include "exec/cpu/host_info.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace splitscope {

std::string cpu_model_from_cpuinfo(const std::string& cpuinfo) {
  std::istringstream lines(cpuinfo);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t first = line.find_first_not_of(" \t", colon + 1);
    return first == std::string::npos ? std::string() : line.substr(first);
  }
  return "";
}

int64_t cache_size_bytes(const std::string& text) {
  size_t end = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &end);
  } catch (const std::exception&) {
    return 0;
  }
  if (value <= 0) return 0;
  const std::string unit = text.substr(end, text.find_first_of(" \n", end) - end);
  if (unit.empty()) return value;
  if (unit == "K") return value << 10;
  if (unit == "M") return value << 20;
  if (unit == "G") return value << 30;
  return 0;
}

int64_t available_from_meminfo(const std::string& meminfo) {
  std::istringstream lines(meminfo);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    int64_t kib = 0;
    std::string unit;
    if (fields >> kib >> unit && unit == "kB" && kib > 0) return kib * 1024;
  }
  return 0;
}

namespace {

/// The size of the highest-level cache under /sys/devices/system/cpu/cpu0/cache.
int64_t read_last_level_cache() {
  int best_level = 0;
  int64_t best = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level");
    std::ifstream size_file(dir + "size");
    int level = 0;
    std::string size;
    if (!(level_file >> level) || !(size_file >> size)) continue;
    const int64_t bytes = cache_size_bytes(size);
    if (level > best_level && bytes > 0) {
      best_level = level;
      best = bytes;
    }
  }
  return best;
}

}  // namespace

HostInfo read_host_info() {
  HostInfo info;
  std::ifstream file("/proc/cpuinfo");
  std::stringstream text;
  text << file.rdbuf();
  info.cpu_model = cpu_model_from_cpuinfo(text.str());
  if (info.cpu_model.empty()) info.cpu_model = "unknown CPU";
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) == 0) info.host_name = name;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) info.memory_bytes = static_cast<int64_t>(pages) * page_size;
  std::ifstream meminfo("/proc/meminfo");
  std::stringstream meminfo_text;
  meminfo_text << meminfo.rdbuf();
  info.memory_available_bytes = available_from_meminfo(meminfo_text.str());
  info.hardware_threads = std::max(1u, std::thread::hardware_concurrency());
  info.last_level_cache_bytes = read_last_level_cache();
  return info;
}

}  // namespace splitscope
