#pragma once
/// \file
/// What one run of a plan gives back, beside its Timelines: the network's
/// output and what it ran on. Every backend (the cpu and cuda executors, the
/// simulator) returns it and every report reads it, so it lives with the
/// Timeline, the contract between them.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "timeline/timeline.hpp"

namespace splitscope {

/// A float32 tensor in host memory, [batch, ...per-sample shape].
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// What a run was run on, for reports.
struct RunInfo {
  std::string backend;       ///< "cpu", "cuda", "sim"
  bool measured = true;      ///< false for the simulator
  std::string device_mode;   ///< "cpu threads", "physical", "virtual (green contexts, 33 SMs each)", "simulated"
  std::string machine_name;
  std::string device_name;
  std::string driver;
  /// Memory each device may use (bytes), for the "fits" check; empty if unknown.
  std::vector<int64_t> device_memory_bytes;
  /// Backend facts worth reporting: ("p2p", "yes"), ("link", "host"), ("dtype", "fp32"), ...
  std::vector<std::pair<std::string, std::string>> facts;
};

struct RunResult {
  HostTensor output;               ///< empty when not wanted, or for the simulator
  std::vector<Timeline> timelines; ///< one per timed repeat (a training run: one per step)
  RunInfo info;
  /// Training: the loss of each timed step, where the backend computes (not the simulator).
  std::vector<double> losses;
};

}  // namespace splitscope
