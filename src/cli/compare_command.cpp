// `splitscope compare [MODEL] [--strategies a,b,...] [--devices N] [--backend ...]`:
// every strategy that applies, measured (or simulated), best first, each
// against the single-device run, with a prediction on a named machine beside it.

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "cli/command_outputs.hpp"
#include "cli/execution_options.hpp"
#include "cli/input_pipeline_options.hpp"
#include "cli/strategy_choice.hpp"
#include "cli/network_loading.hpp"
#include "cli/training_options.hpp"
#include "cli/host_machine.hpp"
#include "cli/plan_file_options.hpp"
#include "cli/sequence_parallel_option.hpp"
#include "search/plan_search.hpp"
#include "sim/costs/machine_cost_function.hpp"
#include "sim/machine/machine_file.hpp"
#include "exec/cuda_backend.hpp"
#include "report/extrapolation_warning.hpp"
#include "report/noise_warning.hpp"
#include "cli/launch_scope.hpp"
#include "report/progress.hpp"
#include "report/reporter.hpp"
#include "run/run_driver.hpp"
#include "util/errors.hpp"
#include "util/output_batch.hpp"
#include "util/strings.hpp"

namespace splitscope::cli {
namespace {

constexpr const char* kDefaultNetwork = "mlp";
constexpr const char* kDefaultPredictionMachine = "h100-nvlink-8";
/// `--with-search`'s budget (search --budget-s): the named strategies are priced whatever it is.
constexpr double kSearchBudgetSeconds = 30;

struct CompareOptions {
  std::string model = kDefaultNetwork;
  std::vector<std::string> strategies;
  int devices = 2;
  std::optional<int> microbatches;
  int replicas = 1;
  std::optional<std::string> predict_on;  ///< unset: kDefaultPredictionMachine beside measured runs
  ExecutionOptions execution;
  TrainingOptions training;
  InputPipelineOptions input;
  ReportOutputs outputs;
  std::string launcher;
  std::string plan_file;     ///< --plan: a plan file's plan beside the named strategies
  bool with_search = false;  ///< --with-search: the searched plan beside them
  bool sequence_parallel = false;  ///< --sequence-parallel: for the strategies that take it
  bool devices_given = false;
};

/// `--with-search`: the best plan `search` finds over the comparison's devices on `machine`.
std::shared_ptr<const Plan> searched_plan(const std::shared_ptr<const Graph>& graph, const CompareOptions& options,
                                          const NamedMachine& machine, int microbatches) {
  SearchProblem problem;
  problem.graph = graph;
  problem.devices = options.devices;
  problem.machine = machine.machine();
  problem.memory_limit_bytes = problem.machine.device.memory_bytes();
  problem.budget_s = kSearchBudgetSeconds;
  problem.named_microbatches = microbatches;
  problem.bucket_bytes = bucket_bytes(options.training);
  const SearchResult result = search_plans(problem);
  const PricedPlan* best = result.best();
  if (best == nullptr) {
    throw RunError(fmt::format("--with-search: no plan of {} over {} fits in the memory of {}",
                               graph->name(), counted(options.devices, "device"), problem.machine.name));
  }
  const Plan plan = build_plan(best->spec, graph, std::make_shared<MachineCostFunction>(problem.machine));
  return labelled_plan(plan, "search: " + describe(best->spec));
}

int compare_command(const CompareOptions& options, const std::vector<std::string>& command_line, Backend backend,
                    const LaunchScope& launch) {
  if (options.devices < 1) throw InputError("--devices", "", "must be at least 1");
  ExecutionOptions execution = options.execution;
  const bool defaulted = execution.backend.empty();
  const bool simulated = backend == Backend::kSim;
  if (defaulted && backend == Backend::kCuda && !execution.virtual_devices && cuda_gpu_count() < options.devices) {
    // One GPU for several devices: carve them out of it rather than fail.
    execution.virtual_devices = true;
    std::cerr << fmt::format("compare: {} GPU(s) here for {} devices; running them as --virtual devices\n",
                             cuda_gpu_count(), options.devices);
  }
  if (options.predict_on && *options.predict_on != "none" && simulated) {
    throw InputError("--predict-on", "",
                     "adds a prediction beside measured runs; with --backend sim every run is a prediction already "
                     "(on --machine)");
  }
  const std::string predict_on = simulated ? "none" : options.predict_on.value_or(kDefaultPredictionMachine);
  if (predict_on.empty()) throw InputError("--predict-on", "", "give a machine name or file, or 'none'");
  if (!simulated && predict_on == "none" && execution.placement != "default") {
    throw InputError("--placement", "",
                     "places the simulated runs' devices on a machine's nodes, and --predict-on none simulates "
                     "none; give --predict-on MACHINE or --backend sim --machine MACHINE");
  }
  // Made now, so that a wrong machine fails before minutes of measured runs.
  const ExecutionOptions prediction = execution.for_prediction_on(predict_on);
  const RunTarget predicted = resolve_target(prediction, Backend::kSim);
  const std::unique_ptr<Executor> simulator =
      predict_on == "none" ? nullptr : make_executor(prediction, predicted, options.devices);
  check_input_pipeline_options(options.input, options.training);
  check_training_repeats(options.training, execution.repeats_given);
  check_command_outputs({{"--report", options.outputs.report}, {"--trace", options.outputs.trace},
                      {"--html", options.outputs.html}},
                     {input_file(ZooShelf::kNetworks, options.model),
                      input_file(ZooShelf::kMachines, execution.machine),
                      predict_on == "none" ? "" : input_file(ZooShelf::kMachines, predict_on), options.plan_file});
  OutputBatch files(launch.writes());
  auto reporters = make_reporters(ReportKind::kCompare, std::cout, options.outputs, files);
  std::optional<PlanFile> plan_file;
  if (!options.plan_file.empty()) {
    plan_file = read_plan_file(options.plan_file);
    if (options.training.schedule_given || options.training.recompute) {
      throw InputError(options.training.recompute ? "--recompute" : "--schedule", "",
                       "applies to the named strategies; the --plan file's plan keeps its own");
    }
  }
  const auto graph = graph_to_run(
      load_network(options.model, plan_file ? std::optional<int64_t>(plan_file_batch(*plan_file, execution.batch))
                                            : execution.batch),
      options.training);
  if (options.replicas < 1) throw InputError("--replicas", "", "must be 1 or more");
  const auto strategies = chosen_strategies(options.strategies, options.devices, *graph, "--strategies", options.replicas);
  // A replicated pipeline's micro-batches split its replica's rows over its devices.
  const int microbatches = options.microbatches.value_or(
      default_microbatches(std::max<int64_t>(1, graph->batch() / options.replicas), options.devices / options.replicas));
  const auto microbatched = [](const std::string& name) { return make_partitioner(name)->traits().microbatched; };
  if (options.microbatches && std::none_of(strategies.begin(), strategies.end(), microbatched)) {
    // As `plan` and `run` refuse it: the number would be silently ignored.
    throw InputError("--microbatches", "",
                     "applies to the pipeline strategy only, which this comparison does not run; drop "
                     "--microbatches or add pipeline to --strategies");
  }

  const RunTarget target = resolve_target(execution, backend);
  const auto sequence_parallel = [](const std::string& name) { return make_partitioner(name)->traits().sequence_parallel; };
  if (options.sequence_parallel && std::none_of(strategies.begin(), strategies.end(), sequence_parallel)) {
    throw InputError("--sequence-parallel", "",
                     "applies to the tensor strategy (and hybrid), which this comparison does not run; drop it or add "
                     "tensor to --strategies");
  }
  std::vector<std::shared_ptr<const Plan>> plans =
      comparison_plans(graph, strategies, options.devices, microbatches, execution, target,
                       options.training, options.replicas, options.sequence_parallel);
  if (plan_file) {
    const auto plan = plan_from_file(*plan_file, options.plan_file, graph, options.devices, execution, target);
    plans.push_back(labelled_plan(*plan, "plan: " + describe(plan_file->spec)));
  }
  if (options.with_search) {
    if (!simulated && predict_on == "none") {
      throw InputError("--with-search", "",
                       "prices plans on a simulated machine; give --backend sim --machine M or --predict-on M");
    }
    plans.push_back(searched_plan(graph, options, simulated ? target.machine : predicted.machine, microbatches));
  }

  Progress progress = stderr_progress(execution.quiet || !launch.writes());
  RunRequest request;
  request.options = run_options(execution);
  request.options.on_repeat = progress.repeat_callback();
  request.options.want_output = false;
  request.train = options.training.train;
  request.steps = options.training.steps;
  if (options.input.enabled) request.input = options.input;
  ComparisonBuilder builder(make_report_context(command_line));
  check_backend_options(execution, backend, options.devices);
  const std::unique_ptr<Executor> executor =
      launch.launched() ? launch.make_executor() : make_executor(execution, target, options.devices);
  // Unless --repeat fixes the count, runs go on while a verdict is uncertain
  // (not across MPI ranks: each would judge by its own clock, and they must run alike).
  RepeatPolicy policy;
  policy.adaptive = !execution.repeats_given && !launch.launched();
  const std::vector<RunResult> results = run_plans(*executor, plans, request, progress, policy);
  for (size_t i = 0; i < plans.size(); ++i) builder.add(plans[i], results[i]);

  // The same plans predicted on a named machine, beside the measured numbers.
  if (simulator != nullptr) {
    // Without progress: a prediction's one "repeat" would redraw the line after the measured runs ended.
    RunRequest predict = request;
    predict.options.on_repeat = nullptr;
    Progress silent(std::cerr, false);
    const std::vector<RunResult> predictions = run_plans(*simulator, plans, predict, silent);
    for (size_t i = 0; i < plans.size(); ++i) builder.add(plans[i], predictions[i]);
  }

  const Comparison comparison = std::move(builder).build();
  for (auto& reporter : reporters) reporter->report(comparison);
  if (!launch.writes()) return 0;
  publish_outputs(files, execution.quiet);
  if (const auto warning = noise_warning(comparison)) fmt::print(stderr, "{}\n", *warning);
  if (const auto warning = extrapolation_warning(comparison)) fmt::print(stderr, "{}\n", *warning);
  return 0;
}

int compare_command(const CompareOptions& given, const std::vector<std::string>& command_line) {
  // With --plan, the comparison is over the plan's devices unless --devices says otherwise (and then must agree).
  CompareOptions options = given;
  if (!given.plan_file.empty()) {
    const PlanFile file = read_plan_file(given.plan_file);
    if (!given.devices_given) options.devices = file.spec.devices;
    adopt_plan_file_precision(file, given.plan_file, options.execution.precision);  // every plan at the file's
  }
  const Backend backend = measuring_backend(options.execution.backend, options.launcher);
  LaunchScope launch(options.launcher, backend);
  return launch.run([&] { return compare_command(options, command_line, backend, launch); });
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* sub = app.add_subcommand("compare", "Run every strategy and compare them, best first");
  sub->add_option("MODEL", options->model, "network file, or a name from models/networks")->capture_default_str();
  sub->add_option("--strategies", options->strategies, "comma-separated (default: all that apply)")
      ->delimiter(',');
  sub->add_option("--devices,-n", options->devices, "devices for the split strategies (with --plan: the plan's)")
      ->capture_default_str()
      ->each([options](const std::string&) { options->devices_given = true; });
  sub->add_option("--microbatches,-m", options->microbatches, "pipeline micro-batches (default: 4N, but at least 8 rows each)");
  sub->add_option("--replicas", options->replicas,
                  "run every model split as R data-parallel copies over N/R devices each (data and single as they are)")
      ->capture_default_str();
  sub->add_option("--predict-on", options->predict_on,
                  std::string("also simulate the plans on this machine (name or file; 'none' to skip; default ") +
                      kDefaultPredictionMachine + ")");
  add_execution_options(*sub, options->execution, "cuda if a GPU is present, else cpu");
  add_placement_option(*sub, options->execution);
  add_precision_option(*sub, options->execution);
  add_noise_options(*sub, options->execution);
  add_training_options(*sub, options->training, true);
  add_input_pipeline_options(*sub, options->input);
  add_launcher_option(*sub, options->launcher);
  add_plan_file_option(*sub, options->plan_file);
  add_sequence_parallel_option(*sub, options->sequence_parallel);
  sub->add_flag("--with-search", options->with_search,
                "also run the plan `search` finds over --devices on the simulated machine (--machine with --backend "
                "sim, else --predict-on), beside the named strategies");
  sub->add_option("--report", options->outputs.report, "write the JSON compare report (splitscope.compare/1, docs/reports.md)");
  sub->add_option("--trace", options->outputs.trace, "write a Chrome/Perfetto trace of every run");
  sub->add_option("--html", options->outputs.html, "write a self-contained HTML page");
  return {sub, [options](const std::vector<std::string>& command_line) {
            return compare_command(*options, command_line);
          }};
}

}  // namespace splitscope::cli
