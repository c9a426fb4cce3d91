#include "lessons/ps_experiment.hpp"

#include <algorithm>
#include <numeric>
#include <string_view>

#include "exec/cpu/cpu_executor.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/training.hpp"
#include "ir/zoo.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "sim/engine/simulator.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

Plan parameter_server_plan(const PsSetup& setup) {
  Model model = load_model_file(resolve_zoo_file(ZooShelf::kNetworks, setup.network));
  model.batch = setup.batch;
  const Graph forward = lower(model);
  Optimizer optimizer;
  optimizer.learning_rate = setup.learning_rate;
  const auto graph = std::make_shared<const Graph>(training_graph(forward, optimizer));
  PartitionOptions options;
  options.devices = setup.workers;
  options.parameter_servers = 1;
  Plan plan = make_plan(*make_partitioner("ps"), graph, options);
  check(plan);
  return plan;
}

RunOptions parameter_server_run(const PsSetup& setup) {
  RunOptions run;
  run.warmup = 0;
  run.repeats = 1;
  run.seed = 1;
  run.straggler = setup.straggler;
  return run;
}

PsTrial ps_trial_of_run(const RunResult& result) {
  PsTrial trial;
  const ParameterServerInfo& info = result.info.parameter_server.value();
  trial.staleness_mean = info.staleness_mean;
  trial.staleness_histogram = info.staleness_histogram;
  trial.wall_ms = info.wall_us / 1e3;
  trial.updates = info.updates;
  trial.gradients_dropped = info.gradients_dropped;
  if (!result.losses.empty()) {
    for (const auto& [end_us, loss] : info.loss_curve) trial.loss_curve.emplace_back(end_us / 1e3, loss);
  }
  if (!result.losses.empty()) {
    const size_t last = std::min<size_t>(kPsFinalWindows, result.losses.size());
    trial.final_loss = std::accumulate(result.losses.end() - static_cast<std::ptrdiff_t>(last), result.losses.end(), 0.0) /
                       static_cast<double>(last);
  }
  return trial;
}

}  // namespace

PsTrial train_ps_on_cpu(const PsSetup& setup) {
  const Plan plan = parameter_server_plan(setup);
  CpuExecutor executor;
  try {
    return ps_trial_of_run(executor.run_parameter_server(plan, parameter_server_run(setup), setup.ps));
  } catch (const RunError& error) {
    // Divergence (training_divergence.hpp) is an outcome here, not a failure.
    if (std::string_view(error.what()).rfind("training diverged", 0) != 0) throw;
    PsTrial trial;
    trial.diverged = true;
    return trial;
  }
}

PsTrial simulate_ps(const PsSetup& setup, const Machine& machine) {
  const Plan plan = parameter_server_plan(setup);
  Simulator simulator(machine);
  RunOptions run = parameter_server_run(setup);
  run.straggler.reset();
  run.jitter_sigma = setup.jitter_sigma;
  return ps_trial_of_run(simulator.run_parameter_server(plan, run, setup.ps));
}

}  // namespace splitscope
