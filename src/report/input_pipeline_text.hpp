#pragma once
/// \file
/// What `run` and `compare` print of a run that streamed its batches
/// through an input pipeline (exec/input_pipeline.hpp): whether the steps
/// waited on their input, and what prefetch bought against a step with
/// nothing overlapped. Nothing for runs without one.

#include <optional>
#include <string>

#include "report/comparison.hpp"
#include "timeline/run_result.hpp"

namespace splitscope {

/// serial_step_us / step_us: what prefetch bought; nullopt when no step was timed.
std::optional<double> prefetch_speedup(const InputPipelineInfo& info);

/// "input-bound: the compute waits 1.200 ms a step for its batch (...)" or
/// "not input-bound (...)".
std::string describe_input_pipeline(const InputPipelineInfo& info);

/// `run`'s line; empty without an input pipeline.
std::string input_pipeline_lines(const RunInfo& info);

/// `compare`'s lines for a group, one per run that had an input pipeline.
std::string input_pipeline_table(const RunGroup& group);

}  // namespace splitscope
