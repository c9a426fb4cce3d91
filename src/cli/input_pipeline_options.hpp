#pragma once
/// \file
/// `--input-cost-us-per-sample C` and `--prefetch K` on `run` and `compare`:
/// stream the batches through an input pipeline (exec/input_pipeline.hpp,
/// docs/input-pipeline.md) instead of timing the plan alone.

#include <CLI/CLI.hpp>

#include "cli/training_options.hpp"
#include "exec/input_pipeline.hpp"

namespace splitscope::cli {

/// Registers the two options on `command`.
void add_input_pipeline_options(CLI::App& command, InputPipelineOptions& options);

/// InputError (exit 2) for a negative cost or prefetch, or with --train
/// (training steps read their batches from the plan's seeded inputs; an
/// input pipeline in front of them is not built).
void check_input_pipeline_options(const InputPipelineOptions& options, const TrainingOptions& training);

}  // namespace splitscope::cli
