#include "sim/memory_fit.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace splitscope {

std::string MemoryFit::reason() const {
  if (overflows.empty()) return "";
  const MemoryOverflow& first = overflows.front();
  std::string text = fmt::format("device {} needs {:.2f} GiB but has {:.2f} GiB", first.device,
                                 static_cast<double>(first.needed_bytes) / kBytesPerGib,
                                 static_cast<double>(first.available_bytes) / kBytesPerGib);
  if (overflows.size() > 1) {
    text += fmt::format(" (and {} more device{})", overflows.size() - 1, overflows.size() > 2 ? "s" : "");
  }
  return text;
}

MemoryFit check_memory_fit(const Plan& plan, const std::vector<int64_t>& device_memory_bytes) {
  MemoryFit fit;
  const size_t devices = std::min(plan.memory.size(), device_memory_bytes.size());
  for (size_t d = 0; d < devices; ++d) {
    const int64_t needed = plan.memory[d].peak;
    if (needed > device_memory_bytes[d]) {
      fit.overflows.push_back({static_cast<int>(d), needed, device_memory_bytes[d]});
    }
  }
  return fit;
}

MemoryFit check_memory_fit(const Plan& plan, const Machine& machine) {
  return check_memory_fit(
      plan, std::vector<int64_t>(static_cast<size_t>(machine.devices), machine.device.memory_bytes()));
}

}  // namespace splitscope
