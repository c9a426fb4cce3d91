#pragma once
/// \file
/// What one run of a plan gives back, beside its Timelines: the network's
/// output and what it ran on. Every backend (the cpu and cuda executors, the
/// simulator) returns it and every report reads it, so it lives with the
/// Timeline, the contract between them.

#include <cstdint>
#include <optional>
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

/// Which machine device each of the plan's devices ran on, and the bytes
/// that crossed between the machine's nodes: the simulator's `--placement`
/// (src/sim/machine/device_placement.hpp). A measured run runs plan device i on this
/// host's device i, in one node, which the defaults say.
struct PlacementInfo {
  std::string mode = "default";  ///< "default" or "topology"
  std::vector<int> device_map;   ///< the machine device of each plan device; empty: device i on device i
  int64_t cross_node_bytes = 0;  ///< bytes whose sender and receiver sit in different nodes
  /// `topology`: the default mapping's bytes across nodes and makespan, to hold this mapping against.
  std::optional<int64_t> default_cross_node_bytes;
  std::optional<double> default_makespan_us;
  std::string note;  ///< `topology`: why it kept the default mapping, where it did
};

/// A run that streamed its batches through an input pipeline
/// (exec/input_pipeline.hpp): medians over its steps past the first, which
/// fill the pipeline.
struct InputPipelineInfo {
  double cost_us_per_sample = 0;
  int prefetch = 0;
  int steps = 0;              ///< steps summarised
  double prepare_us = 0;      ///< median host preparation of one batch
  double copy_us = 0;         ///< median copy of one batch to the devices
  double compute_us = 0;      ///< median compute of one step (one run of the plan)
  double step_us = 0;         ///< median period between the ends of consecutive steps
  double stall_us = 0;        ///< median wait of a step's compute for its batch, after compute(s-1) ended
  double serial_step_us = 0;  ///< prepare + copy + compute: a step with nothing overlapped (no prefetch)
  bool input_bound = false;   ///< the compute waited for its batch more than 5% of the step
};

/// A parameter-server training run (exec/parameter_server.hpp): how its
/// gradients fared. Counts are of (gradient, shard) pairs: each worker's
/// gradient is pushed to every shard, which takes or drops its part.
struct ParameterServerInfo {
  std::string mode;  ///< "sync", "async", "spare"
  int workers = 0;
  int shards = 0;
  int spare = 0;
  int updates = 0;               ///< updates applied by each shard (the fewest, if they differ)
  int64_t gradients_pushed = 0;  ///< worker steps that pushed a gradient
  int64_t gradients_applied = 0;
  int64_t gradients_dropped = 0;
  /// Applied gradients by staleness: histogram[s] counts those applied s updates after their pull.
  std::vector<int64_t> staleness_histogram;
  double staleness_mean = 0;
  int staleness_max = 0;
  double wall_us = 0;               ///< from the start to the last update
  double applied_samples_per_s = 0; ///< rows of the applied gradients (of shard 0) per second of wall time
  /// The loss against wall time: each step window's end and the mean loss
  /// of the worker steps that finished their forward pass in it.
  std::vector<std::pair<double, double>> loss_curve;
  std::vector<int64_t> shard_bytes;  ///< weights each shard holds
  std::string mitigations;           ///< async's mitigations in force, "none" otherwise
};

/// How far off a simulated run's op times typically are: each compute op
/// priced by an achieved-rate rule carries its family's median error on the
/// GPUs the rule was measured on (AchievedRateRule::median_error), weighted
/// here by the op's predicted time.
struct ModelErrorInfo {
  double relative = 0;       ///< the time-weighted mean of those errors (0.17: 17%)
  double covered_share = 0;  ///< the share of the compute time they cover; the rest has no measured error
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
  /// The simulator on a machine with measured op times: the fraction of the
  /// predicted compute time that comes from them; the rest is priced by rules
  /// and efficiencies fitted on other shapes (report/extrapolation_warning.hpp).
  std::optional<double> calibrated_share;
  /// The simulator on a GPU priced by achieved-rate rules: its own error (report/judgement.hpp turns a
  /// verdict within it `uncertain`).
  std::optional<ModelErrorInfo> model_error;
  PlacementInfo placement;
  /// Set when the run streamed its batches through an input pipeline; its
  /// timelines are then one per step (exec/input_pipeline.hpp).
  std::optional<InputPipelineInfo> input_pipeline;
  /// Set for a parameter-server training run; its timelines are its step windows.
  std::optional<ParameterServerInfo> parameter_server;
  /// A simulated training run without noise: the steps asked for (--steps),
  /// all predicted alike by the one timeline kept; 0 otherwise.
  int steps_alike = 0;
};

struct RunResult {
  HostTensor output;               ///< empty when not wanted, or for the simulator
  std::vector<Timeline> timelines; ///< one per timed repeat (a training run: one per step)
  RunInfo info;
  /// Training: the loss of each timed step, where the backend computes (not the simulator).
  std::vector<double> losses;
};

}  // namespace splitscope
