#include "sim/device_facts.hpp"

#include <algorithm>
#include <cmath>

namespace splitscope {

int sm_count_of(const DeviceSpec& device) {
  if (device.sm_count > 0) return device.sm_count;
  const auto fp32 = device.peak_tflops.find(std::string(kFp32));
  if (fp32 == device.peak_tflops.end()) return 1;
  const double clock_hz = (device.boost_clock_mhz > 0 ? device.boost_clock_mhz : kDefaultBoostClockMhz) * 1e6;
  const double sms = fp32->second * 1e12 / (2.0 * kFp32LanesPerSm * clock_hz);
  // At least one SM, and no more than a file may give.
  return static_cast<int>(std::clamp(std::round(sms), 1.0, 1048576.0));
}

DeviceFacts device_facts(const DeviceSpec& device) {
  DeviceFacts facts;
  facts.matrix_flops_per_second = device.matrix_flops_per_second();
  const auto fp32 = device.peak_tflops.find(std::string(kFp32));
  facts.vector_flops_per_second =
      fp32 != device.peak_tflops.end() ? fp32->second * 1e12 : facts.matrix_flops_per_second;
  facts.sm_count = sm_count_of(device);
  facts.dram_bytes_per_second = device.memory_bytes_per_second() * kStreamingFraction;
  facts.launch_seconds =
      device.launch_overhead_given ? device.launch_overhead_seconds() : kDefaultLaunchOverheadUs * 1e-6;
  facts.nccl_generation = nccl_generation(device);
  return facts;
}

}  // namespace splitscope
