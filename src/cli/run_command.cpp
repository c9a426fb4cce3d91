// `splitscope run MODEL --strategy S --devices N --backend cpu|cuda|sim ...`:
// one strategy, run (or simulated) and reported against the single-device run.

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/run_command.hpp"

#include "cli/degrees_option.hpp"
#include "cli/sequence_parallel_option.hpp"
#include "cli/command.hpp"
#include "cli/command_outputs.hpp"
#include "cli/execution_options.hpp"
#include "cli/input_pipeline_options.hpp"
#include "cli/launch_scope.hpp"
#include "cli/network_loading.hpp"
#include "cli/plan_file_options.hpp"
#include "cli/parameter_server_options.hpp"
#include "cli/training_options.hpp"
#include "exec/cpu/cpu_executor.hpp"
#include "exec/cuda_backend.hpp"
#include "exec/output_compare.hpp"
#include "plan/plan_check.hpp"
#include "plan/plan_replicas.hpp"
#include "report/extrapolation_warning.hpp"
#include "report/noise_warning.hpp"
#include "report/progress.hpp"
#include "report/reporter.hpp"
#include "run/run_driver.hpp"
#include "util/errors.hpp"
#include "util/npy.hpp"
#include "util/output_batch.hpp"

namespace splitscope::cli {
namespace {

std::shared_ptr<const Plan> make_checked_plan(const std::shared_ptr<const Graph>& graph, const std::string& strategy,
                                              const PartitionOptions& options, int replicas = 1) {
  auto plan = std::make_shared<const Plan>(make_plan(*make_partitioner(strategy, replicas), graph, options));
  check(*plan);
  return plan;
}

/// The output `run --check` holds this run to: `single` on the same backend
/// for cpu, on the cpu backend for cuda (the reference implementation).
HostTensor reference_output(Backend backend, const std::shared_ptr<const Plan>& single,
                            const RunResult& single_result, const RunOptions& options) {
  if (backend == Backend::kCpu) return single_result.output;
  RunOptions once = options;
  once.warmup = 0;
  once.repeats = 1;
  once.want_output = true;
  once.on_repeat = nullptr;
  return CpuExecutor().run(*single, once).output;
}

Comparison run_command(const RunCommandOptions& options, const std::vector<std::string>& command_line,
                       Backend backend, const LaunchScope& launch, std::ostream& out) {
  if (!computes(backend) && (options.check || !options.save_output.empty())) {
    throw InputError(options.check ? "--check" : "--save-output", "",
                     "the simulator predicts times and computes no outputs; use --backend cpu or cuda");
  }
  if (computes(backend) && options.execution.placement != "default") {
    throw InputError("--placement", "",
                     "places a plan's devices on a simulated machine's nodes; --backend " +
                         std::string(to_string(backend)) +
                         " runs plan device i on this host's device i (use --backend sim --machine M)");
  }
  check_input_pipeline_options(options.input, options.training);
  check_training_repeats(options.training, options.execution.repeats_given);
  check_command_outputs({{"--report", options.outputs.report}, {"--trace", options.outputs.trace},
                      {"--html", options.outputs.html}, {"--save-output", options.save_output}},
                     {input_file(ZooShelf::kNetworks, options.model),
                      input_file(ZooShelf::kMachines, options.execution.machine), options.plan_file});
  OutputBatch files(launch.writes());
  auto reporters = make_reporters(ReportKind::kRun, out, options.outputs, files);

  // The strategy and its parameters: from the command line, or from --plan's file.
  std::optional<PlanFile> file;
  if (!options.plan_file.empty()) {
    std::vector<std::string> given = options.strategy_options_given;
    if (options.training.schedule_given) given.push_back("--schedule");
    if (options.training.recompute) given.push_back("--recompute");
    if (options.training.bucket_given) given.push_back("--bucket-mib");
    if (options.training.zero_given) given.push_back("--zero");
    refuse_with_plan_file(given);
    file = read_plan_file(options.plan_file);
  } else if (options.strategy.empty() || !options.devices_given) {
    throw InputError("command line", "",
                     std::string(options.strategy.empty() ? "--strategy" : "--devices") +
                         " is required (or --plan FILE, a plan file that holds both)");
  }
  const std::string strategy = file ? file->spec.strategy : options.strategy;
  const int devices = file ? file->spec.devices : options.devices;
  const auto batch = file ? std::optional<int64_t>(plan_file_batch(*file, options.execution.batch)) : options.execution.batch;
  const auto graph = graph_to_run(load_network(options.model, batch), options.training);
  if (options.training.schedule_given && !make_partitioner(strategy)->traits().microbatched) {
    throw InputError("--schedule", "", "orders a pipeline's micro-batches; use it with --strategy pipeline");
  }
  check_stages_option(options.stages, strategy);
  const RunTarget target = resolve_target(options.execution, backend);
  check_backend_options(options.execution, backend, devices);
  const std::unique_ptr<Executor> executor =
      launch.launched() ? launch.make_executor() : make_executor(options.execution, target, devices);
  PartitionOptions partitioning = partition_options(options.execution, target, devices, options.microbatches);
  set_training_plan_options(options.training, partitioning);
  check_zero_backend(options.training, backend);
  partitioning.parameter_servers = options.parameter_server.shards;
  partitioning.stage_starts = options.stages;
  if (!file) partitioning.degrees = degrees_option(options.degrees, strategy);
  partitioning.sequence_parallel = options.sequence_parallel;
  // The simulator may play data-parallel replicas once (plan_replicas.hpp).
  partitioning.compact_replicas = backend == Backend::kSim && !options.input.enabled && !launch.launched();
  const ParameterServerOptions ps = parameter_server_options(options.parameter_server, strategy, options.training.steps);
  auto plan =
      file ? plan_from_file(*file, options.plan_file, graph, options.devices_given ? options.devices : 0,
                            options.execution, target)
           : make_checked_plan(graph, strategy, partitioning, options.replicas);

  Progress progress = stderr_progress(options.execution.quiet || !launch.writes());
  // A training run's repeats are its steps; a forward run's, timed repeats after warm-up.
  // Behind an input pipeline, the repeats are steps of a stream of batches (run_request.hpp).
  RunRequest request;
  request.options = run_options(options.execution);
  request.options.on_repeat = progress.repeat_callback();
  request.options.want_output = options.check || !options.save_output.empty();
  request.train = options.training.train;
  request.steps = options.training.steps;
  request.ps = ps;
  if (options.input.enabled) request.input = options.input;
  const RunOptions& run = request.options;
  // A backend that runs every op gets every replica's (the op limit checked first).
  if (plan->replicas && !executor->runs_replicas_once(*plan, run)) {
    plan = std::make_shared<const Plan>(expand_replicas(*plan));
  }
  ComparisonBuilder builder(make_report_context(command_line));

  progress.begin_run(fmt::format("{} on {}", plan->strategy, to_string(backend)));
  const RunResult result = run_plan(*executor, *plan, request);
  progress.end_run();
  builder.add(plan, result);

  // The baseline every speedup is against: `single` on the same backend.
  std::shared_ptr<const Plan> single = plan;
  RunResult single_result = result;
  if (!plan->traits.baseline) {
    const std::string baseline = baseline_strategy();
    single = make_checked_plan(graph, baseline, partition_options(options.execution, target, 1, 1));
    progress.begin_run(fmt::format("{} on {} (baseline)", baseline, to_string(backend)));
    single_result = run_plan(*executor, *single, request);
    progress.end_run();
    builder.add(single, single_result, false);
  }

  std::optional<OutputComparison> checked;
  double tolerance = precision_check_tolerance(plan->precision);
  if (options.check) {
    if (backend == Backend::kCuda) {
      tolerance = std::max(tolerance, check_tolerance(parse_dtype(options.execution.dtype)));
    }
    checked = compare_outputs(result.output, reference_output(backend, single, single_result, run));
  }
  if (!options.save_output.empty()) {
    files.add("--save-output", options.save_output, encode_npy(result.output.shape, result.output.data));
  }
  Comparison comparison = std::move(builder).build();
  for (auto& reporter : reporters) reporter->report(comparison);

  if (checked) {
    const std::string against = backend == Backend::kCpu ? "single on cpu" : "single on the cpu backend";
    out << fmt::format("check: {} against {} (tolerance {:.0e})\n", checked->describe(), against, tolerance);
    if (!checked->within(tolerance)) {
      // A failed run writes no files (README): the batch is dropped unpublished.
      throw RunError(fmt::format("--check failed: {} exceeds the tolerance {:.0e}", checked->describe(), tolerance));
    }
  }
  if (!launch.writes()) return comparison;
  publish_outputs(files, options.execution.quiet);
  if (const auto warning = noise_warning(comparison)) fmt::print(stderr, "{}\n", *warning);
  if (const auto warning = extrapolation_warning(comparison)) fmt::print(stderr, "{}\n", *warning);
  return comparison;
}

}  // namespace

int run_command(const RunCommandOptions& given, const std::vector<std::string>& command_line, std::ostream& out,
                std::optional<Comparison>& ran) {
  RunCommandOptions options = given;
  if (!given.plan_file.empty()) {
    adopt_plan_file_precision(read_plan_file(given.plan_file), given.plan_file, options.execution.precision);
  }
  const Backend backend = chosen_backend(options.execution, Backend::kCpu);
  LaunchScope launch(options.launcher, backend);
  return launch.run([&] {
    ran = run_command(options, command_line, backend, launch, out);
    return 0;
  });
}

CLI::App* add_run_subcommand(CLI::App& app, const std::shared_ptr<RunCommandOptions>& options) {
  CLI::App* sub = app.add_subcommand("run", "Run (or simulate) one strategy and report its timeline");
  sub->add_option("MODEL", options->model, "network file, or a name from models/networks")->required();
  // Required unless --plan gives them (checked once parsed).
  const auto note = [options](const std::string& name) {
    return [options, name](const std::string&) { options->strategy_options_given.push_back(name); };
  };
  sub->add_option("--strategy,-s", options->strategy, "single | data | ps | horizontal | pipeline | vertical | tensor | branches | hybrid (required unless --plan)")
      ->each(note("--strategy"));
  sub->add_option("--devices,-n", options->devices, "number of devices (required unless --plan)")
      ->each([options](const std::string&) { options->devices_given = true; });
  sub->add_option("--microbatches,-m", options->microbatches, "micro-batches (pipeline only)")
      ->capture_default_str()
      ->each(note("--microbatches"));
  sub->add_option("--replicas", options->replicas,
                  "run the strategy as R data-parallel copies over N/R devices each (hybrid parallelism)")
      ->capture_default_str()
      ->each(note("--replicas"));
  add_stages_option(*sub, options->stages)->each(note("--stages"));
  add_degrees_option(*sub, options->degrees)->each(note("--degrees"));
  add_sequence_parallel_option(*sub, options->sequence_parallel)->each(note("--sequence-parallel"));
  add_plan_file_option(*sub, options->plan_file);
  add_execution_options(*sub, options->execution, "cpu");
  add_placement_option(*sub, options->execution);
  add_precision_option(*sub, options->execution);
  add_noise_options(*sub, options->execution);
  add_training_options(*sub, options->training, true);
  add_zero_option(*sub, options->training);
  add_parameter_server_options(*sub, options->parameter_server);
  add_input_pipeline_options(*sub, options->input);
  add_launcher_option(*sub, options->launcher);
  sub->add_flag("--check", options->check,
                "also compare the output with the single-device run's (cpu: relative error <= 1e-4)");
  sub->add_option("--save-output", options->save_output, "write the network's output as a float32 .npy file");
  sub->add_option("--report", options->outputs.report, "write the JSON run report (splitscope.report/1, docs/reports.md)");
  sub->add_option("--trace", options->outputs.trace, "write a Chrome/Perfetto trace of the run");
  sub->add_option("--html", options->outputs.html, "write a self-contained HTML page of the run");
  return sub;
}

Command add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunCommandOptions>();
  CLI::App* sub = add_run_subcommand(app, options);
  return {sub, [options](const std::vector<std::string>& command_line) {
            std::optional<Comparison> ran;
            return run_command(*options, command_line, std::cout, ran);
          }};
}

}  // namespace splitscope::cli
