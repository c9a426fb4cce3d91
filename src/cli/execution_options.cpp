#include "cli/execution_options.hpp"

#include <fmt/format.h>

#include <charconv>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/cuda_backend.hpp"
#include "cli/host_machine.hpp"
#include "cli/precision_option.hpp"
#include "sim/costs/machine_cost_function.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"
#include "util/errors.hpp"

namespace splitscope::cli {

void add_execution_options(CLI::App& command, ExecutionOptions& options, const std::string& default_backend) {
  command.add_option("--backend,-b", options.backend, "cpu | cuda | sim (default: " + default_backend + ")")
      ->check(CLI::IsMember({"cpu", "cuda", "sim"}));
  command.add_option("--machine", options.machine,
                     "sim: a machine file, or a name from models/machines (e.g. h100-nvlink-8)");
  command.add_flag("--virtual", options.virtual_devices,
                   "cuda: carve the devices out of one GPU with green contexts (disjoint SM shares)");
  command.add_option("--link", options.link, "cuda --virtual: device (device-to-device copies) | host "
                                             "(staged through pinned host memory)")
      ->capture_default_str();
  command.add_option("--dtype", options.dtype, "cuda: fp32 | tf32 | bf16 (math of products; storage is fp32)")
      ->capture_default_str();
  command.add_flag("--graph", options.cuda_graph, "cuda: capture the plan in a CUDA graph, replay it when timed");
  command.add_option("--repeat,-r", options.repeats,
                     "timed runs (median, min, max are reported); compare on cpu: at least this many, more while "
                     "a verdict is uncertain, unless given")
      ->capture_default_str()
      ->each([&options](const std::string&) { options.repeats_given = true; });
  command.add_option("--warmup", options.warmup, "untimed runs first")->capture_default_str();
  command.add_option("--seed", options.seed, "fixes weights and inputs")
      ->check(unsigned_integer())
      ->capture_default_str();
  command.add_option("--timeout-ms", options.timeout_ms, "fail a run that takes longer (cpu, cuda)");
  command.add_option("--inter-op-threads", options.inter_op_threads,
                     "cpu: ops running at once, across devices (0: one worker per device)")
      ->capture_default_str();
  command.add_option("--intra-op-threads", options.intra_op_threads,
                     "cpu: threads inside one op's kernel (0: cores / devices)")
      ->capture_default_str();
  command.add_option("--batch", options.batch, "override the network file's batch");
  command.add_flag("--quiet,-q", options.quiet, "no progress on stderr");
}

void add_placement_option(CLI::App& command, ExecutionOptions& options) {
  command
      .add_option("--placement", options.placement,
                  "sim: default (plan device i on machine device i) | topology (the devices that exchange the most "
                  "bytes share a node of a multi-node machine)")
      ->check(CLI::IsMember({"default", "topology"}))
      ->capture_default_str();
}

void add_noise_options(CLI::App& command, ExecutionOptions& options) {
  command.add_option("--jitter", options.jitter,
                     "sim: lognormal:SIGMA, each op's time x a lognormal factor of mean 1 drawn per op and repeat "
                     "(e.g. lognormal:0.2)");
  command.add_option("--straggler", options.straggler,
                     "cpu: D:MS, device D's work starts MS milliseconds late in every run (a slow worker)");
}

namespace {

double parse_jitter(const std::string& text) {
  const std::string prefix = "lognormal:";
  double sigma = -1;
  if (text.rfind(prefix, 0) == 0) {
    const std::string number = text.substr(prefix.size());
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), sigma);
    if (error != std::errc() || end != number.data() + number.size()) sigma = -1;
  }
  if (!(sigma >= 0 && sigma <= 10)) {
    throw InputError("--jitter", text, "give lognormal:SIGMA with SIGMA from 0 to 10, e.g. lognormal:0.2");
  }
  return sigma;
}

StragglerDelay parse_straggler(const std::string& text) {
  StragglerDelay straggler{-1, -1};
  const size_t colon = text.find(':');
  if (colon != std::string::npos) {
    const char* first = text.data();
    const auto device = std::from_chars(first, first + colon, straggler.device);
    const auto ms = std::from_chars(first + colon + 1, first + text.size(), straggler.ms);
    if (device.ec != std::errc() || device.ptr != first + colon || ms.ec != std::errc() ||
        ms.ptr != first + text.size()) {
      straggler = {-1, -1};
    }
  }
  if (straggler.device < 0 || !(straggler.ms >= 0 && straggler.ms <= 3.6e6)) {
    throw InputError("--straggler", text, "give D:MS, a device from 0 and a delay from 0 to 3600000 ms, e.g. 1:20");
  }
  return straggler;
}

}  // namespace

void add_precision_option(CLI::App& command, ExecutionOptions& options) {
  add_precision_option(command, options.precision);
}

Backend chosen_backend(const ExecutionOptions& options, Backend fallback) {
  return options.backend.empty() ? fallback : parse_backend(options.backend);
}

RunTarget resolve_target(const ExecutionOptions& options, Backend backend) {
  return {backend, NamedMachine(backend == Backend::kSim ? options.machine : std::string(),
                                [](const std::string& name) { return load_machine(resolve_machine(name)); })};
}

void check_backend_options(const ExecutionOptions& options, Backend backend, int devices) {
  const std::string name(to_string(backend));
  const Precision precision = precision_option(options.precision);
  require_precision_backend(backend, precision);
  if (backend == Backend::kCuda && precision == Precision::kTf32 && options.dtype != "fp32" &&
      options.dtype != "tf32") {
    throw InputError("--dtype", options.dtype, "contradicts --precision tf32 (float32 storage, TF32 products)");
  }
  if (!options.jitter.empty()) {
    parse_jitter(options.jitter);
    if (backend != Backend::kSim) {
      throw InputError("--jitter", options.jitter,
                       "draws noise on simulated op times (--backend sim); on cpu, hold a device back with "
                       "--straggler D:MS");
    }
  }
  if (!options.straggler.empty()) {
    const StragglerDelay straggler = parse_straggler(options.straggler);
    if (backend != Backend::kCpu) {
      throw InputError("--straggler", options.straggler,
                       "holds a device of the cpu backend back; a simulation draws its noise with --jitter "
                       "lognormal:SIGMA");
    }
    if (straggler.device >= devices) {
      throw InputError("--straggler", options.straggler,
                       fmt::format("device {} is not one of the {} devices (0 to {})", straggler.device, devices,
                                   devices - 1));
    }
  }
  if (backend != Backend::kSim && !options.machine.empty()) {
    throw InputError("--machine", "", "is for --backend sim; " + name + " runs on the hardware here");
  }
  // Spelling mistakes are errors on every backend, not only where the value is used.
  parse_link_mode(options.link);
  parse_dtype(options.dtype);
  parse_placement_mode(options.placement);
  if (backend == Backend::kSim && options.timeout_ms) {
    throw InputError("--timeout-ms", "", "applies to measured runs (cpu, cuda); a simulation has no deadline");
  }
  if (backend != Backend::kCuda) {
    // Silently ignoring them would label a float32 cpu run as bf16 in the user's mind.
    const ExecutionOptions defaults;
    const char* cuda_only = options.virtual_devices            ? "--virtual"
                            : options.cuda_graph               ? "--graph"
                            : options.link != defaults.link    ? "--link"
                            : options.dtype != defaults.dtype  ? "--dtype"
                                                               : nullptr;
    if (cuda_only != nullptr) {
      throw InputError(cuda_only, "",
                       backend == Backend::kSim
                           ? "applies to --backend cuda only (a simulated machine's math is its machine file's "
                             "matrix_math)"
                           : "applies to --backend cuda only (the cpu backend computes in float32 with plain copies)");
    }
  }
  if (backend == Backend::kSim && options.machine.empty()) {
    throw InputError("--machine", "", "--backend sim needs a machine to simulate, e.g. --machine h100-nvlink-8");
  }
}

std::unique_ptr<Executor> make_executor(const ExecutionOptions& options, const RunTarget& target, int devices,
                                        int first_device) {
  check_backend_options(options, target.backend, devices);
  const Precision precision = precision_option(options.precision);
  switch (target.backend) {
    case Backend::kCpu: return std::make_unique<CpuExecutor>();
    case Backend::kSim: {
      Machine machine = target.machine.machine();
      if (!options.precision.empty()) machine = machine_at_precision(std::move(machine), precision);
      if (options.predict_replayed_graph) machine.device.host_issue_us = 0;  // a replayed graph issues no calls
      return std::make_unique<Simulator>(std::move(machine), parse_placement_mode(options.placement));
    }
    case Backend::kCuda: {
      CudaOptions cuda;
      cuda.mode = options.virtual_devices ? DeviceMode::kVirtual : DeviceMode::kPhysical;
      cuda.link = parse_link_mode(options.link);
      cuda.dtype = precision == Precision::kTf32 ? Dtype::kTf32 : parse_dtype(options.dtype);
      cuda.cuda_graph = options.cuda_graph;
      cuda.virtual_devices = devices;
      cuda.first_device = first_device;
      return make_cuda_executor(cuda);
    }
  }
  throw InputError("--backend", "", "unknown backend '" + target.backend_name() + "'; use cpu, cuda or sim");
}

ExecutionOptions ExecutionOptions::for_prediction_on(const std::string& machine_name) const {
  const ExecutionOptions defaults;
  ExecutionOptions simulated = *this;
  simulated.machine = machine_name;
  simulated.virtual_devices = defaults.virtual_devices;
  simulated.cuda_graph = defaults.cuda_graph;
  simulated.predict_replayed_graph = cuda_graph;
  simulated.link = defaults.link;
  simulated.dtype = defaults.dtype;
  simulated.timeout_ms = defaults.timeout_ms;  // a deadline for the measured runs, not for the prediction
  simulated.straggler = defaults.straggler;    // a slow cpu device is no part of the predicted machine
  return simulated;
}

PartitionOptions partition_options(const ExecutionOptions& options, const RunTarget& target, int devices,
                                   int microbatches) {
  PartitionOptions partition;
  partition.devices = devices;
  partition.microbatches = microbatches;
  partition.precision = precision_option(options.precision);
  if (target.simulated() && target.machine.named()) {
    Machine machine = target.machine.machine();
    if (!options.precision.empty()) machine = machine_at_precision(std::move(machine), partition.precision);
    partition.cost = std::make_shared<MachineCostFunction>(machine, partition.precision);
  }
  return partition;
}

RunOptions run_options(const ExecutionOptions& options) {
  if (options.repeats < 1) throw InputError("--repeat", "", "must be at least 1");
  if (options.warmup < 0) throw InputError("--warmup", "", "must not be negative");
  // Checked here for every backend, not only where the cpu backend reads them:
  // a script's mistake should not pass on sim and fail on cpu.
  if (options.inter_op_threads < 0) {
    throw InputError("--inter-op-threads", "",
                     fmt::format("{} is negative; give a count of threads, or 0 for one per device",
                                 options.inter_op_threads));
  }
  if (options.intra_op_threads < 0) {
    throw InputError("--intra-op-threads", "",
                     fmt::format("{} is negative; give a count of threads, or 0 for hardware threads / inter-op "
                                 "threads",
                                 options.intra_op_threads));
  }
  RunOptions run;
  if (!options.jitter.empty()) run.jitter_sigma = parse_jitter(options.jitter);
  if (!options.straggler.empty()) run.straggler = parse_straggler(options.straggler);
  run.repeats = options.repeats;
  run.warmup = options.warmup;
  run.seed = options.seed;
  run.timeout_ms = options.timeout_ms;
  run.inter_op_threads = options.inter_op_threads;
  run.intra_op_threads = options.intra_op_threads;
  return run;
}

}  // namespace splitscope::cli
