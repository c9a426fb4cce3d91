#include "run/run_driver.hpp"

#include <fmt/format.h>

#include "exec/mode_runtimes.hpp"
#include "exec/training_run.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

InputStreamRuntime& input_stream_runtime(Executor& executor) {
  InputStreamRuntime* runtime = runtime_of<InputStreamRuntime>(executor);
  if (runtime == nullptr) {
    throw UnavailableError(fmt::format(
        "--prefetch and --input-cost-us-per-sample: the {} backend has no input pipeline yet; use --backend cpu "
        "(measured) or --backend sim (predicted)",
        executor.name()));
  }
  return *runtime;
}

ParameterServerRuntime& parameter_server_runtime(Executor& executor) {
  ParameterServerRuntime* runtime = runtime_of<ParameterServerRuntime>(executor);
  if (runtime == nullptr) {
    throw UnavailableError(fmt::format(
        "--strategy ps: the {} backend has no parameter-server runtime yet; use --backend cpu (workers and shards "
        "are real threads) or --backend sim (predicted)",
        executor.name()));
  }
  return *runtime;
}

}  // namespace

RunMode run_mode(const RunRequest& request, const Plan& plan) {
  if (request.input) return RunMode::kInputStream;
  if (!request.train) return RunMode::kForward;
  return plan.traits.parameter_server ? RunMode::kParameterServer : RunMode::kTrainingSteps;
}

RunResult run_plan(Executor& executor, const Plan& plan, const RunRequest& request) {
  switch (run_mode(request, plan)) {
    case RunMode::kInputStream:
      return input_stream_runtime(executor).run_input_stream(plan, request.options, *request.input);
    case RunMode::kForward: return executor.run(plan, request.options);
    case RunMode::kParameterServer:
      return parameter_server_runtime(executor).run_parameter_server(plan, request.options, request.ps);
    case RunMode::kTrainingSteps: return run_training_steps(executor, plan, request.options, request.steps);
  }
  return executor.run(plan, request.options);
}

std::vector<RunResult> run_plans(Executor& executor, const std::vector<std::shared_ptr<const Plan>>& plans,
                                 const RunRequest& request, Progress& progress, RepeatPolicy policy) {
  if (request.input) {
    std::vector<RunResult> results;
    for (const auto& plan : plans) {
      progress.begin_run(fmt::format("{} on {}", plan->strategy, executor.name()));
      results.push_back(run_plan(executor, *plan, request));
      progress.end_run();
    }
    return results;
  }
  RunOptions options = request.options;
  if (request.train) {
    // Each repeat is a training step of that plan: `steps` of them, none untimed.
    options.warmup = 0;
    options.repeats = request.steps;
    policy.adaptive = false;
  }
  return run_interleaved(executor, plans, options, progress, policy);
}

}  // namespace splitscope
