#include "run/run_driver.hpp"

#include <fmt/format.h>

#include <string_view>

#include "exec/mode_runtimes.hpp"
#include "exec/training_run.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

/// `executor`'s runtime for a mode, or UnavailableError (exit 3): "`what`: the
/// NAME backend has no `lacks` yet; `instead`".
template <typename Runtime>
Runtime& mode_runtime(Executor& executor, std::string_view what, std::string_view lacks, std::string_view instead) {
  Runtime* runtime = runtime_of<Runtime>(executor);
  if (runtime == nullptr) {
    throw UnavailableError(fmt::format("{}: the {} backend has no {} yet; {}", what, executor.name(), lacks, instead));
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
      return mode_runtime<InputStreamRuntime>(executor, "--prefetch and --input-cost-us-per-sample", "input pipeline",
                                              "use --backend cpu (measured) or --backend sim (predicted)")
          .run_input_stream(plan, request.options, *request.input);
    case RunMode::kForward: return executor.run(plan, request.options);
    case RunMode::kParameterServer:
      return mode_runtime<ParameterServerRuntime>(executor, "--strategy ps", "parameter-server runtime",
                                                  "use --backend cpu (workers and shards are real threads) or "
                                                  "--backend sim (predicted)")
          .run_parameter_server(plan, request.options, request.ps);
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
