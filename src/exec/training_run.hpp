#pragma once
/// \file
/// Training steps: a training plan (graph.is_training()) run K times, one
/// optimizer step per run, on any backend. Where the backend computes (cpu,
/// cuda), the loss of each step is read off that step's network output
/// (ir/training.hpp: step_loss); the simulator gives times only.

#include "exec/executor.hpp"

namespace splitscope {

/// Runs `steps` training steps of `plan` on `executor`, each timed (a
/// warm-up run would be a step too, so there is none): one Timeline and,
/// where computed, one loss per step. The weights start from `options.seed`
/// and are the backend's own between steps.
RunResult run_training_steps(Executor& executor, const Plan& plan, const RunOptions& options, int steps);

}  // namespace splitscope
