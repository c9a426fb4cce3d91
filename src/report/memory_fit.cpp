#include "report/memory_fit.hpp"

#include <fmt/format.h>

#include "plan/plan_replicas.hpp"
#include "report/text_table.hpp"

namespace splitscope {

MemoryFit check_memory_fit(const Plan& plan, const std::vector<int64_t>& device_memory_bytes) {
  MemoryFit fit;
  int others = 0;
  // Replicas held once: every device's from its replica's (device_memory()).
  const size_t devices = plan.replicas ? static_cast<size_t>(plan.devices) : plan.memory.size();
  for (size_t d = 0; d < devices && d < device_memory_bytes.size(); ++d) {
    fit.checked = true;
    const int64_t needed = device_memory(plan, static_cast<int>(d)).peak;
    const int64_t available = device_memory_bytes[d];
    if (needed <= available) continue;
    if (!fit.fits) ++others;
    if (fit.fits || needed - available > fit.needed_bytes - fit.available_bytes) {
      fit.fits = false;
      fit.device = static_cast<int>(d);
      fit.needed_bytes = needed;
      fit.available_bytes = available;
    }
  }
  if (!fit.fits) {
    fit.problem = fmt::format("device {} needs {} ({} bytes) but has {} ({} bytes)", fit.device,
                              binary_bytes(double(fit.needed_bytes)), fit.needed_bytes,
                              binary_bytes(double(fit.available_bytes)), fit.available_bytes);
    if (others > 0) {
      fit.problem += fmt::format(", and {} more device{} do{} not fit either", others, others == 1 ? "" : "s",
                                 others == 1 ? "es" : "");
    }
  }
  return fit;
}

}  // namespace splitscope
