#pragma once
/// \file
/// `splitscope calibrate --backend cpu`: what this host measurably does, in
/// the calibration contract (src/calibration), as the cpu backend runs plans.
/// The machine it describes is pooled: one device per hardware thread, a plan
/// on d devices giving each cores / d threads (thread_config.hpp). So every op
/// sample is timed once per share count s = cores / d of the device counts d
/// = 1, 2, 4, ... up to the cores, with d copies of it running at once
/// (replicated_op_plan): a device of s shares while every device is busy,
/// which is how the split strategies run; and, for d > 1, once more on one
/// device beside d − 1 idle ones (OpTime::running = 1): the same op alone,
/// as a layer split runs one device at a time. Besides the op times:
/// - gemm: sgemm rates over a grid of shapes (every n and k of 1, 4, 16, ...,
///   1024 and 2048, every m a power of two to 2048; 4, 64, 1024 when quick)
///   on each share count's threads, split as the kernels split a product
///   (GemmRate::threads), alone and beside the other devices busy
///   (GemmRate::running): the one-thread peak, and the rates by shape that
///   price the dense, conv2d and cell ops the table lacks
///   (DeviceSpec::gemm_rates);
/// - cell_pointwise_seconds_per_unit: each recurrent cell's gate arithmetic
///   on one thread, per (row, unit), which with the gemm grid prices the
///   cells the table lacks (DeviceSpec::cell_pointwise_ns);
/// - copies: memcpy between two buffers over sizes ("device_to_device", line fit);
/// - launch: host_seconds_per_launch the hand-off of work from one thread to
///   another through a condition variable (the scheduler's), median one-way
///   latency; device_seconds_per_kernel the median gap between consecutive
///   ops of one device in a run of a small chain (its worker taking the next
///   task), which the machine charges per op as its launch overhead;
/// - lane_handoff: a copy's hand-offs, off a pipelined run's timeline.

#include <cstdint>
#include <functional>
#include <string>
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
  /// Called as each of the `stages` measurements starts (index from 0), for
  /// progress: a calibration takes from half a minute to several.
  std::function<void(const std::string& stage, int index, int stages)> on_stage;
};

/// The share counts a host of `cores` hardware threads is timed at: cores / d
/// for d = 1, 2, 4, ... < cores, and 1; largest first.
std::vector<int> cpu_share_counts(int cores);

calibration::CalibrationResult calibrate_cpu(const CpuCalibrationOptions& options);

}  // namespace splitscope
