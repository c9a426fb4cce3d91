// `splitscope validate [--networks a,b,...] [--devices 2,4] [--strategies ...]
// [--predict-on MACHINE] [--report F.json] [--html F.html]` (and run's
// execution options): the simulator's error against measurement, measured
// with the tool itself. For each network and device count it makes the plans
// `compare` would, measures them on the backend (interleaved, as compare
// does), predicts each on the machine, and reports per run measured,
// predicted and error; then the median and max absolute error and, per
// network and device count, whether the predicted ranking of strategies is
// the measured one (and Kendall's tau). docs/validate.md has the format.

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include "cli/command.hpp"
#include "cli/command_outputs.hpp"
#include "cli/execution_options.hpp"
#include "cli/host_machine.hpp"
#include "cli/host_speed.hpp"
#include "cli/network_loading.hpp"
#include "cli/strategy_choice.hpp"
#include "cli/plan_file_options.hpp"
#include "cli/precision_option.hpp"
#include "cli/zoo_samples.hpp"
#include "exec/cuda_backend.hpp"
#include "ir/zoo.hpp"
#include "report/makespan_stats.hpp"
#include "report/noise_warning.hpp"
#include "report/progress.hpp"
#include "report/validation_report.hpp"
#include "run/run_driver.hpp"
#include "sim/machine/machine_file.hpp"
#include "util/errors.hpp"
#include "util/output_batch.hpp"

namespace splitscope::cli {
namespace {

constexpr const char* kDevicesPlaceholder = "{devices}";

struct ValidateOptions {
  std::vector<std::string> networks;  ///< empty: the zoo's small networks
  std::string plan_file;  ///< --plan: a plan file's plan beside compare's, for its network and device count
  std::vector<int> devices{2};
  std::vector<std::string> strategies;
  std::optional<std::string> predict_on;
  ExecutionOptions execution;
  std::string report;
  std::string html;
};

/// `pattern` with every `{devices}` replaced by `devices`: one machine per
/// device count, e.g. the calibrations of 2 and of 4 GPU partitions.
std::string machine_for(std::string pattern, int devices) {
  const std::string count = std::to_string(devices);
  for (size_t at = pattern.find(kDevicesPlaceholder); at != std::string::npos;
       at = pattern.find(kDevicesPlaceholder, at + count.size())) {
    pattern.replace(at, std::string(kDevicesPlaceholder).size(), count);
  }
  return pattern;
}

/// Whether any split strategy (not the baseline) applies to `graph` on `devices`.
bool some_split_applies(const Graph& graph, int devices) {
  for (const std::string& name : strategy_names()) {
    const auto partitioner = make_partitioner(name);
    if (!partitioner->traits().baseline && partitioner->applies(graph, devices)) return true;
  }
  return false;
}

/// InputError naming the first item of `list` given twice: a duplicate would be
/// measured twice and tie with itself in the rankings.
void refuse_duplicates(const std::vector<std::string>& list, const std::string& option) {
  std::set<std::string> seen;
  for (const std::string& item : list) {
    if (!seen.insert(item).second) throw InputError(option, "", fmt::format("{} is given twice", item));
  }
}

int validate_command(const ValidateOptions& options, const std::vector<std::string>& command_line) {
  const ExecutionOptions& execution = options.execution;
  const Backend backend = chosen_backend(execution, cuda_gpu_available() ? Backend::kCuda : Backend::kCpu);
  if (backend == Backend::kSim) {
    throw InputError("--backend", "",
                     "validate scores the simulator against measured runs; measure them with cpu or cuda");
  }
  const Precision precision = precision_option(execution.precision);
  if (backend == Backend::kCpu && precision != Precision::kFp32) {
    // Its bf16, fp16 and amp runs are float32 math with the stored values
    // rounded: right numerics and bytes, but not the times of that precision.
    throw UnavailableError(fmt::format(
        "--precision {}: validate --backend cpu measures fp32 only: the cpu backend runs {} as float32 math with the "
        "stored values rounded, so its times are not {}'s to score a prediction by; check its numerics with `run "
        "NET --strategy S --devices N --check --precision {}`, predict its times with --backend sim, or validate "
        "tf32 on a GPU (--backend cuda --precision tf32)",
        to_string(precision), to_string(precision), to_string(precision), to_string(precision)));
  }
  require_precision_backend(backend, precision);
  if (options.devices.empty()) throw InputError("--devices", "", "give at least one device count");
  std::set<int> counts;
  for (int devices : options.devices) {
    if (devices < 2) {
      throw InputError("--devices", "",
                       fmt::format("must be 2 or more (the splits' device counts; single runs on one), got {}",
                                   devices));
    }
    if (!counts.insert(devices).second) {
      throw InputError("--devices", "", fmt::format("{} is given twice", devices));
    }
  }
  refuse_duplicates(options.networks, "--networks");
  refuse_duplicates(options.strategies, "--strategies");
  const std::string pattern = options.predict_on.value_or(backend == Backend::kCuda ? "h100-nvlink-8" : "cpu-2");
  if (pattern.empty() || pattern == "none") {
    throw InputError("--predict-on", "", "give the machine to score (a name or file; {devices} stands for the count)");
  }
  const std::vector<std::string> networks = options.networks.empty() ? small_zoo_networks() : options.networks;

  // Every machine and network is read, and every output checked, before the
  // first measured run: a typo must not cost minutes.
  std::vector<std::string> inputs;
  std::vector<std::unique_ptr<Executor>> simulators;
  std::vector<RunTarget> predicted_on;  // each machine read once, by its simulator
  for (int devices : options.devices) {
    const std::string machine = machine_for(pattern, devices);
    const ExecutionOptions prediction = execution.for_prediction_on(machine);
    predicted_on.push_back(resolve_target(prediction, Backend::kSim));
    simulators.push_back(make_executor(prediction, predicted_on.back(), devices));
    inputs.push_back(input_file(ZooShelf::kMachines, machine));
  }
  std::vector<std::shared_ptr<const Graph>> graphs;
  for (const std::string& name : networks) {
    graphs.push_back(load_network(name, execution.batch));
    inputs.push_back(input_file(ZooShelf::kNetworks, name));
  }
  std::optional<PlanFile> plan_file;
  if (!options.plan_file.empty()) {
    plan_file = read_plan_file(options.plan_file);
    inputs.push_back(options.plan_file);
    if (plan_file->spec.precision != precision) {
      throw InputError("--plan", options.plan_file,
                       fmt::format("holds a plan at {}, and validate measures at --precision {}; give --precision {} "
                                   "(validate measures fp32 on cpu, fp32 and tf32 on cuda)",
                                   to_string(plan_file->spec.precision), to_string(precision),
                                   to_string(plan_file->spec.precision)));
    }
    const bool network = std::any_of(graphs.begin(), graphs.end(),
                                     [&](const auto& graph) { return graph->name() == plan_file->network.name; });
    const bool devices = std::find(options.devices.begin(), options.devices.end(), plan_file->spec.devices) !=
                         options.devices.end();
    if (!network || !devices) {
      throw InputError("--plan", options.plan_file,
                       fmt::format("is a plan of {} over {} devices; give --networks {} and --devices {} with it",
                                   plan_file->network.name, plan_file->spec.devices, plan_file->network.name,
                                   plan_file->spec.devices));
    }
  }
  check_command_outputs({{"--report", options.report}, {"--html", options.html}}, inputs);

  Progress progress = stderr_progress(execution.quiet);
  RunRequest run;
  run.options = run_options(execution);
  run.options.on_repeat = progress.repeat_callback();
  run.options.want_output = false;
  // A prediction is instant, and its one "repeat" would redraw the progress line after the runs it follows.
  RunRequest predict = run;
  predict.options.on_repeat = nullptr;
  RepeatPolicy policy;
  policy.adaptive = !execution.repeats_given;
  std::vector<ValidationCase> cases;
  std::vector<std::string> skipped;
  ValidationSetup setup;
  setup.backend = std::string(to_string(backend));
  setup.machine_name = pattern;
  setup.cuda_graph = execution.cuda_graph;
  setup.precision = std::string(to_string(precision));
  std::vector<GemmRatePoint> host_grid;  // the predicting machine's cpu grid, to probe the host against
  if (backend == Backend::kCpu) {
    host_grid = predicted_on.front().machine.machine().device.gemm_rates;
  }
  // Every group's plans are made, and checked to fit in memory as they
  // will be run, before the first is timed: a group that cannot run is
  // skipped now (its `skipped:` line says why), not found minutes in.
  struct Group {
    size_t devices_index = 0;
    size_t graph_index = 0;
    std::vector<std::shared_ptr<const Plan>> plans;
  };
  const RunTarget target = resolve_target(execution, backend);
  std::vector<std::unique_ptr<Executor>> executors;
  std::vector<Group> groups;
  for (size_t d = 0; d < options.devices.size(); ++d) {
    const int devices = options.devices[d];
    executors.push_back(make_executor(execution, target, devices));
    for (size_t g = 0; g < graphs.size(); ++g) {
      const auto& graph = graphs[g];
      if (options.strategies.empty() && !some_split_applies(*graph, devices)) {
        skipped.push_back(fmt::format("{} on {}: no strategy splits it that far", networks[g], devices));
        continue;
      }
      const std::vector<std::string> strategies = chosen_strategies(options.strategies, devices, *graph);
      std::vector<std::shared_ptr<const Plan>> plans = comparison_plans(
          graph, strategies, devices, default_microbatches(graph->batch(), devices), execution, target);
      if (plan_file && graph->name() == plan_file->network.name && devices == plan_file->spec.devices) {
        const auto plan = plan_from_file(*plan_file, options.plan_file, graph, devices, execution, target);
        plans.push_back(labelled_plan(*plan, "plan: " + describe(plan_file->spec)));
      }
      try {
        check_interleaved_fit(*executors.back(), plans);
      } catch (const InputError& error) {
        skipped.push_back(fmt::format("{} on {}: {}", networks[g], devices, error.what()));
        continue;
      }
      groups.push_back({d, g, std::move(plans)});
    }
  }
  setup.host_speed_before = host_speed_now(host_grid);
  for (const Group& group : groups) {
    const int devices = options.devices[group.devices_index];
    const auto& plans = group.plans;
    const std::vector<RunResult> measured =
        run_plans(*executors[group.devices_index], plans, run, progress, policy);
    for (size_t p = 0; p < plans.size(); ++p) {
      const RunResult predicted = run_plan(*simulators[group.devices_index], *plans[p], predict);
      if (measured[p].timelines.empty() || predicted.timelines.empty()) {
        skipped.push_back(
            fmt::format("{} {} on {}: no time", networks[group.graph_index], plans[p]->strategy, devices));
        continue;
      }
      if (setup.device_mode.empty()) setup.device_mode = measured[p].info.device_mode;
      const MakespanStats times = makespan_stats(measured[p].timelines);
      cases.push_back({graphs[group.graph_index]->model().name, devices, plans[p]->strategy, times.median_ms,
                       makespan_stats(predicted.timelines).median_ms, predicted.info.calibrated_share,
                       times.repeat_ms});
    }
  }
  if (cases.empty()) {
    throw InputError("--networks", "", "nothing to validate: no network splits over the device counts given");
  }
  if (setup.host_speed_before) setup.host_speed_after = host_speed_now(host_grid);
  std::vector<RepeatTimes> measured_times;
  for (const ValidationCase& c : cases) {
    measured_times.push_back({fmt::format("{} {} on {}", c.network, c.strategy, c.devices), c.repeat_ms});
  }
  const std::optional<std::string> warning = noise_warning(
      measured_times, "the errors measure the machine's load as much as the simulator; close other programs and "
                      "validate again");
  const ValidationSummary summary = summarize_validation(std::move(cases));
  OutputBatch files;
  files.add("--report", options.report,
            validation_json(summary, setup, make_report_context(command_line)).dump(2) + "\n");
  files.add("--html", options.html, validation_html(summary, setup));
  publish_outputs(files, execution.quiet);
  std::cout << validation_text(summary, setup);
  for (const std::string& note : skipped) std::cout << "skipped: " << note << "\n";
  if (warning) fmt::print(stderr, "{}\n", *warning);
  return 0;
}

}  // namespace

Command add_validate_command(CLI::App& app) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* sub = app.add_subcommand(
      "validate", "Measure the plans compare makes, predict them on a machine, and report the simulator's error");
  add_plan_file_option(*sub, options->plan_file);
  sub->add_option("--networks", options->networks, "networks (names or files; default: the zoo's small ones)")
      ->delimiter(',');
  sub->add_option("--devices,-n", options->devices, "device counts of the splits, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--strategies", options->strategies, "comma-separated (default: all that apply)")->delimiter(',');
  sub->add_option("--predict-on", options->predict_on,
                  "the machine that predicts (name or file; {devices} stands for the device count, e.g. "
                  "models/machines/h100-80gb-hbm3-v{devices}.json; default cpu-2 for cpu, h100-nvlink-8 for cuda)");
  add_execution_options(*sub, options->execution, "cuda if a GPU is present, else cpu");
  add_precision_option(*sub, options->execution);
  // validate measures (cpu, cuda) and predicts on --predict-on: the shared --machine and sim do not apply.
  sub->remove_option(sub->get_option("--machine"));
  sub->get_option("--backend")
      ->description("cpu | cuda: what measures the runs (default: cuda if a GPU is present, else cpu); the "
                    "predictions run on --predict-on");
  sub->add_option("--report", options->report, "write the JSON report (docs/validate.md)");
  sub->add_option("--html", options->html, "write a page with the predicted-against-measured scatter");
  return {sub, [options](const std::vector<std::string>& command_line) {
            return validate_command(*options, command_line);
          }};
}

}  // namespace splitscope::cli
