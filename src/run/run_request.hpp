#pragma once
/// \file
/// What a command asks of a plan's run, typed once: how often (warm-up,
/// repeats) and in which mode. The modes are
/// - forward: `options.warmup` untimed runs, then `options.repeats` timed;
/// - training steps (`train`): `steps` optimizer steps, each timed, the loss
///   of each read where the backend computes (exec/training_run.hpp);
/// - parameter server (`train` and a `ps` plan): workers and shards by the
///   rules of `ps` (exec/parameter_server.hpp);
/// - input stream (`input`): forward steps fed by an input pipeline
///   (exec/input_pipeline.hpp).
/// run_mode() tells them apart, in one place, and the drivers
/// (run_driver.hpp) run each.

#include <optional>
#include <string_view>

#include "exec/executor.hpp"
#include "exec/input_pipeline.hpp"
#include "exec/parameter_server.hpp"
#include "plan/plan.hpp"

namespace splitscope {

enum class RunMode { kForward, kTrainingSteps, kParameterServer, kInputStream };

struct RunRequest {
  RunOptions options;
  /// --train: each run an optimizer step of the plan's training graph.
  bool train = false;
  /// Training steps (forward runs ignore it; a parameter-server run takes `ps.steps`).
  int steps = 0;
  ParameterServerOptions ps;
  /// Behind an input pipeline: each repeat a step of a stream of batches.
  std::optional<InputPipelineOptions> input;
};

/// The mode `request` runs `plan` in: behind an input pipeline where it
/// asks for one, else forward without --train, else the parameter server
/// for a `ps` plan and training steps for any other (a baseline beside a
/// `ps` plan trains by steps).
RunMode run_mode(const RunRequest& request, const Plan& plan);

}  // namespace splitscope
