#pragma once
/// \file
/// RunSummary: the numbers of one run of one strategy, from its Plan and its
/// RunResult (a Timeline per timed repeat). Every report (JSON, table, HTML)
/// prints these numbers; none computes its own.
///
/// Definitions (per device, on the representative repeat, see MakespanStats):
/// - compute: time at least one compute span (compute lane: compute and
///   epilogue ops) runs on the device; overlapping spans count once.
/// - transfer: time at least one transfer or collective span runs on the
///   device (its copy lanes: data arriving there).
/// - overlap: time both run at once (copies hidden behind compute).
/// - idle: the makespan minus the time anything runs on the device.
/// So for every device compute + transfer - overlap + idle = makespan.
/// Shares divide device time summed over devices by devices × makespan:
/// compute, exposed transfer (transfer - overlap) and idle add up to 1.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/group_traffic.hpp"
#include "plan/plan.hpp"
#include "report/critical_path.hpp"
#include "report/makespan_stats.hpp"
#include "report/memory_fit.hpp"
#include "timeline/run_result.hpp"

namespace splitscope {

struct DeviceSummary {
  int id = 0;
  double compute_ms = 0;
  double transfer_ms = 0;
  double overlap_ms = 0;
  double idle_ms = 0;
  int64_t ops = 0;                     ///< compute and epilogue ops placed on it
  int64_t flops = 0;                   ///< of those ops
  int64_t memory_peak_bytes = 0;       ///< Plan::memory[id].peak
  int64_t param_bytes = 0;             ///< Plan::memory[id].params
  int64_t activations_peak_bytes = 0;  ///< Plan::memory[id].activations_peak
  std::optional<int64_t> memory_available_bytes;  ///< from RunInfo, when known
  // Training: compute time by part of the step, and the memory training adds.
  double forward_ms = 0;
  double backward_ms = 0;               ///< the loss and every gradient op
  double update_ms = 0;                 ///< the optimizer's updates
  int64_t gradient_bytes = 0;           ///< Plan::memory[id].gradients
  int64_t optimizer_state_bytes = 0;    ///< Plan::memory[id].optimizer_state

  /// Time the device only moves data: transfer not hidden behind compute.
  double exposed_transfer_ms() const { return transfer_ms - overlap_ms; }
};

/// One kind of data movement: point-to-point "transfer", or a collective
/// ("all-gather", "all-reduce", "concat"), with nccl-tests' bandwidths.
struct MovementSummary {
  std::string kind;
  int64_t count = 0;
  int64_t bytes_moved = 0;    ///< PlanOp::bytes_moved summed: bytes that crossed devices
  int64_t payload_bytes = 0;  ///< transfer: the value; collective: the whole tensor (nccl-tests' size)
  double time_ms = 0;         ///< each op's time (first span start to last span end), summed
  double algbw_gbps = 0;      ///< payload / time
  double busbw_gbps = 0;      ///< payload · bus factor / time (bandwidth.hpp); = algbw for transfers
  /// The communication of this kind the compute did not hide: per device,
  /// the time it spends moving data of this kind while not computing (the
  /// union of those spans outside its compute spans); the mean over the
  /// devices that move data of this kind (a data-parallel step's exposed
  /// gradient all-reduce, say).
  double exposed_ms = 0;
};

/// All data movement: transfers and collectives together.
struct TransferTotals {
  int64_t count = 0;
  int64_t bytes = 0;   ///< bytes that crossed devices
  double time_ms = 0;  ///< each op's time, summed (ops on different links overlap in wall time)
};

/// Device time divided among compute, exposed transfer and idle (adds up to 1).
struct TimeShares {
  double compute = 0;
  double transfer = 0;
  double idle = 0;
};

/// A training run: what it optimised, and how it went.
struct TrainingSummary {
  int steps = 0;
  /// A simulation without noise: the steps are alike, and one was simulated for all of them.
  bool steps_alike = false;
  std::vector<double> losses;  ///< one per step; empty where the backend computes nothing (sim)
  std::string schedule;        ///< "gpipe" or "1f1b" (pipelines), else "none"
  std::string optimizer;       ///< "sgd", "sgd+momentum"
  std::string loss;            ///< "softmax_cross_entropy", "mean_squared_error"
  double learning_rate = 0;
  double momentum = 0;
  std::optional<double> samples_per_s;  ///< batch / median step time
};

struct RunSummary {
  // What ran.
  std::string model;
  int64_t params = 0;
  int64_t flops = 0;  ///< the network's forward FLOPs for the whole batch
  int64_t batch = 0;
  std::string strategy;
  bool baseline = false;  ///< the strategy is the baseline the others are judged against (StrategyTraits)
  int devices = 1;
  int microbatches = 1;
  std::string precision = "fp32";  ///< what the plan stored its tensors in (Plan::precision, `--precision`)
  RunInfo info;
  std::vector<std::string> plan_notes;

  MemoryFit memory;
  bool fits() const { return memory.fits; }
  /// Whether there are timing numbers: the plan fits and was run.
  bool timed() const { return makespan.has_value(); }

  // Timing: left empty when the plan does not fit (it was not, or cannot be, run).
  std::optional<MakespanStats> makespan;
  std::vector<DeviceSummary> per_device;  ///< always one per device; times are 0 when untimed
  TransferTotals transfers;               ///< count and bytes from the plan; time when timed
  std::vector<MovementSummary> movement;  ///< per kind, in order transfer, all-gather, all-reduce, concat
  CriticalPath critical_path;
  TimeShares shares;
  /// Pipelines: the idle share measured, next to (N-1)/(M+N-1).
  std::optional<double> bubble_measured;
  std::optional<double> bubble_ideal;
  /// Pipelines: their stages (the devices, or a hybrid's pipeline degree).
  int stages = 1;
  /// `hybrid`: the bytes its traffic sends inside tensor groups, between
  /// pipeline stages and between data replicas (group_traffic.hpp).
  std::optional<GroupTraffic> group_traffic;
  std::optional<TrainingSummary> training;  ///< set for training plans

  /// The busiest device by FLOPs, and its share of all FLOPs.
  int busiest_device() const;
  double busiest_flop_share() const;
  /// The device with the most compute time, and its share of all compute time.
  int busiest_compute_device() const;
  double busiest_compute_share() const;
  /// Compute time summed over devices (ms).
  double total_compute_ms() const;
  /// The largest per-device memory peak (bytes).
  int64_t max_memory_peak_bytes() const;
};

/// Summarizes one run. `result.timelines` may be empty only when the plan
/// does not fit the memory that `result.info.device_memory_bytes` gives.
RunSummary summarize(const Plan& plan, const RunResult& result);

}  // namespace splitscope
