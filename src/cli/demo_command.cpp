// `splitscope demo rnn [--cell lstm|gru] [--layers L] [--hidden H] [--steps T]
// [--batch B] [--devices N] [--microbatches M] [--sweep NAME=V1,...]
// [--report F.json] [--html F.html] [--trace F.json]` plus the shared
// execution options: the pipelined-RNN demo (issue 8). The layer split's
// time-step wavefront, drawn from its timeline, then every way of running the
// stack against one device running it fused.

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "cli/command_outputs.hpp"
#include "cli/execution_options.hpp"
#include "cli/network_loading.hpp"
#include "cli/precision_option.hpp"
#include "cli/training_options.hpp"
#include "demo/demo_report.hpp"
#include "exec/cpu/cpu_executor.hpp"
#include "demo/rnn_demo.hpp"
#include "demo/rnn_sweep.hpp"
#include "exec/cuda_backend.hpp"
#include "report/chrome_trace.hpp"
#include "report/progress.hpp"
#include "report/reporter.hpp"
#include "sim/costs/machine_cost_function.hpp"
#include "sim/machine/machine_file.hpp"
#include "util/json_dump.hpp"
#include "util/output_batch.hpp"
#include "util/errors.hpp"

namespace splitscope::cli {
namespace {

/// The machine `--backend sim` predicts on when none is named.
constexpr const char* kDefaultMachine = "h100-nvlink-8";

/// Defaults that make the lesson visible and finish in seconds: small on
/// the cpu (a 2-core machine runs the four ways in about a second), larger
/// where a GPU or the simulator does the work.
RnnDemoShape default_shape(Backend backend) {
  RnnDemoShape shape;
  shape.layers = 4;
  if (backend == Backend::kCpu) {
    shape.hidden = 256;
    shape.steps = 32;
    shape.batch = 16;
  } else {
    shape.hidden = 1024;
    shape.steps = 64;
    shape.batch = 64;
  }
  return shape;
}

struct DemoOptions {
  std::string cell = "lstm";
  std::optional<int64_t> layers;
  std::optional<int64_t> hidden;
  std::optional<int64_t> steps;
  std::optional<int> devices;
  std::optional<int> microbatches;
  std::optional<std::string> sweep;  ///< given, even as "": a sweep (an empty one is an error)
  ExecutionOptions execution;  ///< --batch is the shared option
  TrainingOptions training;    ///< --train: each timed repeat a training step
  ReportOutputs outputs;
};

RnnDemoSettings settings_from(const DemoOptions& options, Backend backend) {
  RnnDemoSettings settings;
  settings.shape = default_shape(backend);
  settings.shape.cell = options.cell;
  if (options.layers) settings.shape.layers = *options.layers;
  if (options.hidden) settings.shape.hidden = *options.hidden;
  if (options.steps) settings.shape.steps = *options.steps;
  if (options.execution.batch) settings.shape.batch = *options.execution.batch;
  if (options.devices) {
    if (*options.devices < 1) throw InputError("--devices", "", fmt::format("must be at least 1, got {}", *options.devices));
    settings.devices = *options.devices;
  }
  if (options.microbatches) {
    if (*options.microbatches < 1) {
      throw InputError("--microbatches", "", fmt::format("must be at least 1, got {}", *options.microbatches));
    }
    settings.microbatches = *options.microbatches;
  }
  settings.training = training_optimizer(options.training);
  settings.schedule = pipeline_schedule(options.training);
  settings.recompute = options.training.recompute;
  return settings;
}

/// The most devices any run of the demo (or of each point of its sweep) splits over.
int devices_needed(const RnnDemoSettings& settings, const std::optional<std::string>& sweep_text) {
  if (!sweep_text) return resolve_settings(settings).devices;
  const RnnSweep sweep = parse_rnn_sweep(*sweep_text);
  int most = 1;
  for (int64_t value : sweep.values) most = std::max(most, resolve_sweep_point(settings, sweep, value).devices);
  return most;
}

DemoBackend demo_backend(const ExecutionOptions& execution, const RunTarget& target) {
  DemoBackend backend;
  backend.name = target.backend_name();
  backend.executor = [execution, target](int devices) { return make_executor(execution, target, devices); };
  switch (target.backend) {
    case Backend::kCpu:
      backend.fused = [](int) { return make_cpu_fused_baseline(); };
      backend.admit = [](const Plan& plan) { check_fits_in_host_memory(plan); };
      break;
    case Backend::kCuda: {
      const std::string dtype = execution.dtype;
      const bool carve = execution.virtual_devices;
      // Under --virtual the fused stack runs on one partition of the size each split device gets.
      backend.fused = [dtype, carve](int devices) { return make_cuda_fused_baseline(dtype, carve ? devices : 1); };
      break;
    }
    case Backend::kSim: {
      const Machine& machine = target.machine.machine();
      backend.fused = [machine](int) { return make_sim_fused_baseline(machine); };
      backend.cost = std::make_shared<MachineCostFunction>(machine);
      break;
    }
  }
  return backend;
}

std::string run_header(const RnnDemoShape& shape, const RunInfo& info, int repeats, const std::string& swept = "") {
  std::string text = fmt::format("splitscope demo rnn: {}\n", shape_text(shape, swept));
  text += fmt::format("{} on {} ({})", info.measured ? "measured" : "predicted", info.backend, info.device_mode);
  if (!info.machine_name.empty()) text += fmt::format(", machine {}", info.machine_name);
  if (!info.device_name.empty()) text += fmt::format(" ({})", info.device_name);
  text += info.measured ? fmt::format(", {} timed repeat{} each\n", repeats, repeats == 1 ? "" : "s") : "\n";
  return text;
}

RunInfo first_info(const RnnDemoResult& result) {
  if (result.comparison.groups.empty() || result.comparison.primary().runs.empty()) return {};
  return result.comparison.primary().runs.front().summary.info;
}

/// On the cpu backend, devices are threads: more devices than hardware
/// threads cannot all compute at once, which the picture should not hide.
std::string sharing_note(const RunInfo& info, int devices) {
  if (info.backend != to_string(Backend::kCpu)) return "";
  for (const auto& [fact, value] : info.facts) {
    if (fact != "hardware threads") continue;
    const int threads = std::atoi(value.c_str());
    if (threads > 0 && devices > threads) {
      return fmt::format("note: the {} devices are threads sharing {} hardware threads, so at most {} cells compute "
                         "at once here; --devices {} or --backend sim shows the wavefront without that limit\n",
                         devices, threads, threads, threads);
    }
  }
  return "";
}

void print_demo(const RnnDemoResult& result, int repeats, std::ostream& out) {
  const RnnDemoSettings& s = result.settings;
  const bool colour = isatty(STDOUT_FILENO) == 1;
  out << run_header(s.shape, first_info(result), repeats) << sharing_note(first_info(result), s.devices) << "\n";
  if (result.trains()) {
    out << fmt::format("Training steps ({}{}{}), one a timed repeat (their forward and backward waves: --trace or "
                       "--html).\n",
                       s.training->name(), s.microbatches > 1 ? fmt::format(", {} schedule", to_string(s.schedule)) : "",
                       s.recompute ? ", recomputing the forward" : "");
    out << (result.baseline_fused()
                ? fmt::format("Against the fused single device: {} ({}).\n", result.fused.implementation,
                              result.fused.method)
                : std::string("Against the cell-by-cell single device: this backend has no fused training step.\n"));
  } else {
    out << fmt::format("The wavefront of the layer split over {} device{} (horizontal{}):\n", s.devices,
                       s.devices == 1 ? "" : "s",
                       s.devices == s.shape.layers
                           ? ", one layer per device"
                           : fmt::format(", {} layers over {} devices", s.shape.layers, s.devices));
    out << render_wavefront(result.wavefront, colour) << "\n";
    out << fmt::format("Against the fused single device: {} ({}).\n", result.fused.implementation,
                       result.fused.method);
  }
  if (s.microbatches > 1) {
    out << fmt::format("The micro-batched split cuts the batch of {} into {} micro-batches (pipeline).\n",
                       s.shape.batch, s.microbatches);
  }
  out << "\n" << verdict_table_text(result.rows) << "\n";
  out << fmt::format("verdict: {}\n", result.conclusion);
  out << fmt::format("\nmakespan: median over the {}, +- the larger distance to the min or max. {}",
                     result.trains() ? "steps" : "repeats",
                     result.baseline_fused() ? "vs fused: the fused\nsingle device's median over this median;"
                                             : "vs single: the\ncell-by-cell single device's median over this median;")
      << " wins at >= 1.05x, loses at <= 0.95x. compute: compute time\n"
         "summed over devices; transfer: each transfer's time, summed; idle: share of device time.\n"
      << std::flush;
}

int demo_rnn(const DemoOptions& options, const std::vector<std::string>& command_line) {
  if (const Precision precision = precision_option(options.execution.precision); precision != Precision::kFp32) {
    // The layer split could run at it; the fused baseline it is judged against cannot.
    throw UnavailableError(fmt::format(
        "--precision {}: demo rnn judges the layer split against one device running the stack fused (cpu: its own "
        "fused float32 loop; cuda: cuDNN's float32 calls; sim: their prediction), which is built at fp32 only; see "
        "{} change a split with `splitscope compare NET --precision {} --backend sim --machine h100-nvlink-8` "
        "(cpu: --backend cpu)",
        to_string(precision), to_string(precision), to_string(precision)));
  }
  ExecutionOptions execution = options.execution;
  const bool defaulted = execution.backend.empty();
  const Backend backend = chosen_backend(execution, cuda_gpu_available() ? Backend::kCuda : Backend::kCpu);
  if (backend == Backend::kSim && execution.machine.empty()) execution.machine = kDefaultMachine;
  check_command_outputs({{"--report", options.outputs.report}, {"--html", options.outputs.html},
                      {"--trace", options.outputs.trace}},
                     {input_file(ZooShelf::kMachines, execution.machine)});

  const RnnDemoSettings settings = settings_from(options, backend);
  if (defaulted && backend == Backend::kCuda && !execution.virtual_devices) {
    // As `compare` does: one GPU for several devices, carved rather than refused.
    const int devices = devices_needed(settings, options.sweep);
    if (cuda_gpu_count() < devices) {
      execution.virtual_devices = true;
      std::cerr << fmt::format("demo rnn: {} GPU(s) here for {} devices; running them as --virtual devices\n",
                               cuda_gpu_count(), devices);
    }
  }
  const RunOptions run = run_options(execution);
  const RunTarget target = resolve_target(execution, backend);
  Progress progress = stderr_progress(execution.quiet);
  const ReportContext context = make_report_context(command_line);

  if (options.sweep) {
    if (settings.training) {
      throw InputError("--sweep", "", "sweeps forward passes only for now; leave out --train, or train one shape");
    }
    if (!options.outputs.trace.empty()) {
      throw InputError("--trace", "", "a sweep runs many shapes; trace one shape by leaving out --sweep");
    }
    const RnnSweep sweep = parse_rnn_sweep(*options.sweep);
    const SweepResult result = run_rnn_sweep(settings, sweep, demo_backend(execution, target), run, progress);
    std::cout << run_header(settings.shape, result.info, run.repeats, sweep.name);
    std::cout << fmt::format("sweep over {}; against the fused single device: {} ({}).\n\n", sweep.name,
                             result.fused_implementation, result.fused_method);
    std::cout << sweep_table_text(result) << std::flush;
    OutputBatch files;
    files.add("--report", options.outputs.report, dump_json(sweep_json(result, context), 2) + "\n");
    if (!options.outputs.html.empty()) files.add("--html", options.outputs.html, sweep_html(result, context));
    publish_outputs(files, execution.quiet);
    return 0;
  }

  resolve_settings(settings);  // a bad --devices or shape fails before any backend is sought
  if (settings.training && settings.microbatches <= 1 && options.training.schedule_given) {
    throw InputError("--schedule", "", "orders the micro-batched row's steps; it needs --microbatches 2 or more");
  }
  const RnnDemoResult result = run_rnn_demo(settings, demo_backend(execution, target), run, context, progress);
  print_demo(result, run.repeats, std::cout);
  OutputBatch files;
  files.add("--report", options.outputs.report, dump_json(demo_json(result, context), 2) + "\n");
  if (!options.outputs.html.empty()) files.add("--html", options.outputs.html, demo_html(result, context));
  if (!options.outputs.trace.empty()) {
    std::vector<const RunReport*> timed;
    for (const RunReport* report : result.comparison.all_runs()) {
      if (report->summary.timed()) timed.push_back(report);
    }
    files.add("--trace", options.outputs.trace, [&timed](const std::function<void(std::string_view)>& put) {
      write_chrome_trace(timed, put);
      put("\n");
    });
  }
  publish_outputs(files, execution.quiet);
  return 0;
}

}  // namespace

Command add_demo_command(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* demo = app.add_subcommand("demo", "Demos of the classic lessons (rnn: the pipelined-RNN wavefront)");
  demo->require_subcommand(1);
  CLI::App* rnn = demo->add_subcommand(
      "rnn",
      "A stacked LSTM or GRU split by layer: the time-step wavefront, and every way of running the stack against "
      "one device running it fused");
  rnn->add_option("--cell", options->cell, "lstm | gru")->capture_default_str()->check(CLI::IsMember({"lstm", "gru"}));
  rnn->add_option("--layers", options->layers, "stacked layers L (default 4)");
  rnn->add_option("--hidden", options->hidden, "hidden units H, also the input features (default: cpu 256, else 1024)");
  rnn->add_option("--steps", options->steps, "time steps T (default: cpu 32, else 64)");
  rnn->add_option("--devices,-n", options->devices, "devices N of the layer split (default L, at most L)");
  rnn->add_option("--microbatches,-m", options->microbatches,
                  "micro-batches M of the micro-batched split (default min(batch, N); 1: leave that row out)");
  rnn->add_option("--sweep", options->sweep,
                  "NAME=V1,V2,...: the crossover over hidden, layers, steps or batch (e.g. hidden=256,512,1024)");
  add_execution_options(*rnn, options->execution, "cuda if a GPU is present, else cpu; sim defaults to --machine " +
                                                       std::string(kDefaultMachine));
  rnn->get_option("--batch")->description("samples B (default: cpu 16, else 64)");
  // Training: each timed repeat (--repeat) is a step; --steps stays the sequence length.
  add_training_options(*rnn, options->training, false);
  rnn->remove_option(rnn->get_option("--bucket-mib"));  // no data-parallel row to bucket
  rnn->get_option("--train")->description(
      "run training steps (forward, loss, backward, update), each timed repeat one step, judged against the fused "
      "single device's training step (cpu: the fused training loop; cuda: cuDNN's training calls; sim: its "
      "prediction)");
  rnn->add_option("--precision", options->execution.precision,
                  "fp32 only: the fused baselines are float32 (other precisions: compare --precision)");
  rnn->add_option("--report", options->outputs.report, "write the JSON report (schema splitscope.demo-rnn/1)");
  rnn->add_option("--html", options->outputs.html, "write a self-contained HTML page (with --sweep: its charts)");
  rnn->add_option("--trace", options->outputs.trace, "write a Chrome/Perfetto trace of the plan runs");
  return {demo, [options, rnn](const std::vector<std::string>& command_line) -> int {
            if (!rnn->parsed()) throw InputError("demo", "", "name a demo: splitscope demo rnn");
            return demo_rnn(*options, command_line);
          }};
}

}  // namespace splitscope::cli
