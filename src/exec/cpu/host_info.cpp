#include "exec/cpu/host_info.hpp"

#include <algorithm>
#include <fstream>
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
  info.hardware_threads = std::max(1u, std::thread::hardware_concurrency());
  return info;
}

}  // namespace splitscope
