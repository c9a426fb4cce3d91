#include "sim/machine/device_facts.hpp"

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

int fp32_lanes_per_sm(const DeviceSpec& device) {
  const auto fp32 = device.peak_tflops.find(std::string(kFp32));
  if (device.sm_count <= 0 || device.boost_clock_mhz <= 0 || fp32 == device.peak_tflops.end()) {
    return kFp32LanesPerSm;
  }
  const double lanes = fp32->second * 1e12 / (2.0 * device.sm_count * device.boost_clock_mhz * 1e6);
  return static_cast<int>(std::clamp(std::round(lanes), 1.0, 1048576.0));
}

double fp32_issue_fraction(int lanes_per_sm) {
  if (lanes_per_sm < kFullWidthFp32LanesPerSm) return 1.0;
  return kSgemmLoopFfmas / (kSgemmLoopFfmas + kSgemmLoopOtherInstructions);
}

DeviceFacts device_facts(const DeviceSpec& device) {
  DeviceFacts facts;
  facts.matrix_flops_per_second = device.matrix_flops_per_second();
  // Products on the CUDA cores lose the issue slots their loop's other instructions take.
  if (device.matrix_math == kFp32) facts.matrix_flops_per_second *= fp32_issue_fraction(fp32_lanes_per_sm(device));
  const auto fp32 = device.peak_tflops.find(std::string(kFp32));
  facts.vector_flops_per_second =
      fp32 != device.peak_tflops.end() ? fp32->second * 1e12 : facts.matrix_flops_per_second;
  facts.sm_count = sm_count_of(device);
  facts.memory_bytes_per_second = device.memory_bytes_per_second();
  facts.dram_bytes_per_second = facts.memory_bytes_per_second * kStreamingFraction;
  facts.launch_seconds =
      device.launch_overhead_given ? device.launch_overhead_seconds() : kDefaultLaunchOverheadUs * 1e-6;
  facts.nccl_generation = nccl_generation(device);
  return facts;
}

}  // namespace splitscope
