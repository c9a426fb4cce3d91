#include "exec/training_run.hpp"

#include <cmath>

#include "exec/run_limits.hpp"
#include "exec/training_divergence.hpp"
#include "ir/training.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope {

RunResult run_training_steps(Executor& executor, const Plan& plan, const RunOptions& options, int steps) {
  SPLITSCOPE_CHECK(plan.graph->is_training(), "run_training_steps() of a plan that does not train");
  // Its plan has no update op: the shards apply the gradients (ParameterServerRuntime, exec/mode_runtimes.hpp).
  SPLITSCOPE_CHECK(!plan.traits.parameter_server, "run_training_steps() of a parameter-server plan");
  if (steps < 1) throw InputError("--steps", "", "must be at least 1, got " + std::to_string(steps));
  check_recorded_runs(plan, steps, "--steps");  // a timeline and a loss a step
  RunOptions each = options;
  each.warmup = 0;
  each.repeats = 1;
  const bool computes = executor.name() != "sim";
  each.want_output = computes;
  std::unique_ptr<PreparedRun> prepared = executor.prepare(plan, each);
  RunResult result;
  if (prepared == nullptr) {
    // No state to keep between runs (the simulator): the steps are alike.
    RunOptions all = each;
    all.repeats = steps;
    return executor.run(plan, all);
  }
  for (int step = 0; step < steps; ++step) {
    if (options.on_repeat) options.on_repeat(step, steps);
    prepared->run(0, 1, result);
    if (computes) {
      result.output = prepared->output();
      result.losses.push_back(step_loss(*plan.graph, result.output.data, options.seed));
      // Stopped at once: every later step would be NaN too.
      if (!std::isfinite(result.losses.back())) check_losses_finite(result.losses, plan.graph->training()->optimizer);
    }
  }
  return result;
}

}  // namespace splitscope
