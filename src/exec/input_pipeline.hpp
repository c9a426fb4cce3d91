#pragma once
/// \file
/// The input pipeline in front of a plan: each step's batch is prepared on
/// the host (decode, augment: a cost per sample the user gives), copied to
/// the devices that read the network inputs, and only then computed on.
/// `--prefetch K` lets the preparation and copy of the next K batches run
/// while the current step computes (tf.data's prefetch, PyTorch's
/// DataLoader workers with pinned memory).
///
/// The rules every backend follows, so that a measured stream of steps and a
/// simulated one give the same kind of Timeline:
/// - prepare(s) runs on the host, after prepare(s-1); with K = 0 only after
///   compute(s-1) has ended (nothing overlaps); with K >= 1 once compute(s-K)
///   has started (it has taken its batch, so at most K prepared batches wait).
/// - copy(s) runs after prepare(s) and copy(s-1): its own resource (PCIe, or
///   a memory copy on the cpu backend).
/// - compute(s) runs after copy(s) and compute(s-1).
/// So without prefetch a step takes prepare + copy + compute; with K = 1 the
/// steady state is max(compute, prepare + copy) (the next batch's preparation
/// and copy hide behind this step's compute); with K >= 2 it is
/// max(compute, prepare, copy), as preparation runs ahead of the copy too.

#include <cstdint>
#include <vector>

#include "plan/plan.hpp"
#include "timeline/run_result.hpp"
#include "timeline/timeline.hpp"

namespace splitscope {

/// What `--input-cost-us-per-sample` and `--prefetch` ask for.
/// Bounds of the input pipeline's options (check_input_pipeline_options).
inline constexpr double kMaxInputCostUsPerSample = 1e6;
inline constexpr int kMaxPrefetch = 64;

struct InputPipelineOptions {
  double cost_us_per_sample = 0;  ///< host preparation time per sample
  int prefetch = 0;               ///< batches prepared and copied ahead of the step computing
  bool enabled = false;           ///< either option was given: runs stream batches through the pipeline
};

/// How long each stage of one step takes.
struct InputStageTimes {
  double prepare_us = 0;
  double copy_us = 0;
  double compute_us = 0;
};

/// When each stage of one step ran, in µs since the stream started.
struct InputStepTimes {
  double prepare_start = 0, prepare_end = 0;
  double copy_start = 0, copy_end = 0;
  double compute_start = 0, compute_end = 0;
};

/// InputError (exit 2) for a negative cost or prefetch.
void check_input_pipeline_options(const InputPipelineOptions& input);

/// The schedule of the rules above for steps of the given durations.
std::vector<InputStepTimes> schedule_input_pipeline(const std::vector<InputStageTimes>& steps, int prefetch);

/// One device's share of a step's copy (the network inputs it reads).
struct InputCopy {
  int device = 0;
  int64_t bytes = 0;
  double us = 0;  ///< from the copy stage's start
};

/// Step `step`'s Timeline: what ran between the end of compute(step-1) (0 for
/// the first step) and the end of compute(step), shifted to start at 0 and
/// clipped to that window: the plan's spans (`compute`, one run of the plan,
/// starting at 0), the host's preparation of whatever batch it prepared
/// meanwhile ("prepare batch s", host lane of device 0), and the copies
/// ("copy batch s", copy-in lane of each device `copies[s]` names). Its makespan
/// is the step's period, so the median over steps is the steady-state time
/// per batch, input stalls included.
Timeline input_step_window(const std::vector<InputStepTimes>& schedule, int step, const Timeline& compute,
                           const std::vector<std::vector<InputCopy>>& copies);

/// The bytes of network input each device of `plan` reads (Plan::inputs),
/// one entry per device that reads any, in device order (InputCopy::us 0).
std::vector<InputCopy> network_input_copies(const Plan& plan);

/// The most spans input_step_window adds to a step's window beside the
/// plan's: the preparation and copies of up to prefetch + 1 batches, and the
/// step-end marker (for check_recorded_runs).
int64_t input_stream_spans_per_step(const Plan& plan, const InputPipelineOptions& input);

/// The report's summary of a stream of steps, past the first `skip` (which fill the pipeline).
InputPipelineInfo summarize_input_pipeline(const std::vector<InputStepTimes>& schedule, int skip,
                                              const InputPipelineOptions& options);

}  // namespace splitscope
