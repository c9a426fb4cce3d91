#pragma once
/// \file
/// `splitscope calibrate --backend cpu`: what this host measurably does, in
/// the calibration contract (src/calibration), as the cpu backend runs plans.
/// The machine it describes is pooled: one device per hardware thread, a plan
/// on d devices giving each cores / d threads (thread_config.hpp). So every op
/// sample is timed once per share count s = cores / d of the device counts d
/// = 1, 2, 4, ... up to the cores, with d copies of it running at once
/// (replicated_op_plan): a device of s shares while every device is busy,
/// which is how the split strategies run. Besides the op times:
/// - gemm: one-thread sgemm rates (square 256, 512, 1024), the device's peak;
/// - copies: memcpy between two buffers over sizes ("device_to_device", line fit);
/// - launch: the hand-off of work from one thread to another through a
///   condition variable (the scheduler's), median one-way latency.

#include <cstdint>
#include <vector>

#include "calibration/calibration_result.hpp"
#include "partitioners/op_samples.hpp"

namespace splitscope {

struct CpuCalibrationOptions {
  int warmup = 1;
  int repeats = 5;
  uint64_t seed = 0;
  bool quick = false;          ///< fewer sizes (tests, smoke runs)
  std::vector<OpSample> ops;
};

/// The share counts a host of `cores` hardware threads is timed at: cores / d
/// for d = 1, 2, 4, ... < cores, and 1; largest first.
std::vector<int> cpu_share_counts(int cores);

calibration::CalibrationResult calibrate_cpu(const CpuCalibrationOptions& options);

}  // namespace splitscope
