// `splitscope calibrate [--device K] --out FILE.json`: measures one GPU
// (matrix-product rates, copy bandwidth and latency, launch overhead, and the
// time of every op slice the zoo's networks produce when split 1, 2 and 4
// ways and pipelined in 2, 4 and 8 micro-batches) and writes simulator
// machine files from it (src/sim/machine/calibrated_machine.hpp): FILE.json for
// `--virtual --link device`, FILE-link-host.json for `--link host`,
// FILE-peer.json for physical GPUs where several were measured; and the raw
// measurements (schema splitscope.calibration/1, src/calibration/calibration_result.hpp)
// beside them, or where --calibration-out says. `--partitions N` measures
// inside one of N green-context partitions, for `--virtual --devices N` runs
// (docs/machine-format.md, "Partitions"). `--from RAW` derives the
// machine files again from a recorded calibration, with no GPU. Without a
// GPU (and no --from): exit 3, nothing written.

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "calibration/calibration_file.hpp"
#include "cli/calibration_progress.hpp"
#include "cli/command.hpp"
#include "cli/command_outputs.hpp"
#include "cli/execution_options.hpp"
#include "cli/network_loading.hpp"
#include "cli/zoo_samples.hpp"
#include "exec/cpu/cpu_calibration.hpp"
#include "exec/cuda/calibration.hpp"
#include "exec/cuda_backend.hpp"
#include "ir/zoo.hpp"
#include "report/text_table.hpp"
#include "sim/machine/calibrated_machine.hpp"
#include "sim/machine/machine_file.hpp"
#include "util/output_batch.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"

namespace splitscope::cli {
namespace {

struct CalibrateOptions {
  int device = 0;
  std::string out;
  std::string from;
  std::string calibration_out;
  int machine_devices = 8;
  int partitions = 1;
  std::string dtype = "fp32";
  std::optional<int> repeats;  ///< unset: 20 on a GPU, 5 on the cpu
  std::string backend = "cuda";
  bool quick = false;
  bool force = false;  ///< may replace a machine file of the zoo
  uint64_t seed = 0;
  std::vector<std::string> networks;
};

/// Where the raw calibration is: the --from file, else --calibration-out,
/// else beside --out; and the option that named it, for messages.
std::string raw_calibration_path(const CalibrateOptions& options) {
  if (!options.from.empty()) return options.from;
  return options.calibration_out.empty() ? default_calibration_path(options.out) : options.calibration_out;
}

const char* raw_calibration_option(const CalibrateOptions& options) {
  return options.calibration_out.empty() ? "--out" : "--calibration-out";
}

/// The networks whose op shapes to time: those asked for, else the zoo's
/// (its small ones only where `small_only`).
std::vector<std::string> calibrated_networks(const CalibrateOptions& options, bool small_only) {
  if (!options.networks.empty()) return options.networks;
  return small_only ? small_zoo_networks() : zoo_names(ZooShelf::kNetworks);
}

calibration::CalibrationResult measure(const CalibrateOptions& options) {
  gpu::CalibrationOptions calibration;
  calibration.device = options.device;
  calibration.dtype = options.dtype;
  calibration.repeats = options.repeats.value_or(20);
  calibration.quick = options.quick;
  calibration.partitions = options.partitions;
  calibration.seed = options.seed;
  calibration.warmup = options.quick ? 1 : 3;
  calibration.ops = zoo_samples(calibrated_networks(options, options.quick));
  return gpu::calibrate_device(calibration);
}

/// The one output check (cli/command_outputs.hpp): a shipped preset of the
/// zoo is replaced only with --force.
void check_outputs(const CalibrateOptions& options, const std::vector<OutputFile>& outputs) {
  check_command_outputs(outputs, {options.from}, options.force ? ZooFiles::kReplaceable : ZooFiles::kKeptWithoutForce);
}

/// The checks that need no measurement, done first, so that a bad option
/// never costs a calibration run.
void check_options(const CalibrateOptions& options) {
  parse_dtype(options.dtype);
  // Before the GPU is looked for: a bad number is exit 2 on any machine, not "no GPU" (exit 3).
  if (options.repeats && *options.repeats < 1) {
    throw InputError("--repeat", "", fmt::format("must be at least 1, got {}", *options.repeats));
  }
  if (options.device < 0) {
    throw InputError("--device", "", fmt::format("must be a GPU index, 0 or more, got {}", options.device));
  }
  if (std::filesystem::path(options.out).extension() != ".json") {
    throw InputError("--out", "",
                     fmt::format("'{}' must be a .json file (machine files are JSON), e.g. "
                                 "models/machines/h100.json",
                                 options.out));
  }
  if (options.partitions < 1 || options.partitions > kMaxMachineDevices) {
    throw InputError("--partitions", "",
                     fmt::format("must be from 1 to {}, got {}", kMaxMachineDevices, options.partitions));
  }
  if (options.machine_devices < 1 || options.machine_devices > kMaxMachineDevices) {
    throw InputError("--machine-devices", "",
                     fmt::format("must be from 1 to {}, got {}", kMaxMachineDevices, options.machine_devices));
  }
}

void print_measurements(const calibration::CalibrationResult& result) {
  double best_fp32 = 0;
  for (const calibration::GemmRate& rate : result.gemm) {
    if (rate.math == "fp32") best_fp32 = std::max(best_fp32, rate.flops_per_second);
  }
  std::cout << fmt::format("{} (GPU {}, {} SMs, {}), driver {}, cuBLAS {}, cuDNN {}\n", result.device_name,
                           result.device, result.sm_count, binary_bytes(static_cast<double>(result.memory_bytes)),
                           result.driver, result.cublas, result.cudnn);
  std::cout << fmt::format("fp32 GEMM peak measured: {}FLOP/s\n", si_count(best_fp32));
  for (const calibration::CopySeries& series : result.copies) {
    std::cout << fmt::format("{:<17} {}/s, latency {:.1f} us\n", series.kind,
                             binary_bytes(series.bandwidth_bytes_per_second), series.latency_seconds * 1e6);
  }
  std::cout << fmt::format("launch overhead: {:.2f} us host, {:.2f} us device per empty kernel\n",
                           result.launch.host_seconds_per_launch * 1e6, result.launch.device_seconds_per_kernel * 1e6);
  std::cout << fmt::format("{} op shapes timed\n", result.op_times.size());
  for (const std::string& note : result.notes) std::cout << "note: " << note << "\n";
}

std::string topology_text(const Machine& machine) {
  const TopologySpec& topology = machine.topology;
  const LinkSpec& link = topology.kind == TopologyKind::kHostStaged ? topology.bus : topology.link;
  const std::string shape = topology.kind == TopologyKind::kHostStaged
                                ? fmt::format("one bus shared by {}", topology.devices_per_bus)
                                : "a switch";
  return fmt::format("{}, {}, {:.1f} GB/s, {:.1f} us", counted(machine.devices, "device"), shape, link.bandwidth_gbps,
                     link.latency_us);
}

void print_machine(const CalibratedMachineFile& file, const Machine& machine) {
  const DeviceSpec& device = machine.device;
  std::cout << fmt::format("wrote {} ({}): {}; {} {:.1f} TFLOP/s, memory {:.0f} GB/s, launch {:.2f} us, {} op times\n",
                           file.path, to_string(file.link), topology_text(machine), device.matrix_math,
                           device.matrix_flops_per_second() / 1e12, device.memory_bandwidth_gbps,
                           device.launch_overhead_us, machine.calibration.op_times_us.size());
}

/// `calibrate --backend cpu`: this host as the cpu backend runs plans, as one
/// pooled machine file (exec/cpu/cpu_calibration.hpp, sim/machine/calibrated_machine.hpp).
int calibrate_cpu_command(const CalibrateOptions& options) {
  if (options.device != 0) throw InputError("--device", "", "picks a GPU; the cpu backend measures this host");
  if (options.partitions != 1) {
    throw InputError("--partitions", "", "carves a GPU into green contexts; the cpu backend has none");
  }
  if (options.dtype != "fp32") throw InputError("--dtype", "", "the cpu backend computes in fp32 only");
  const bool measured = options.from.empty();
  check_outputs(options, {{"--out", options.out}, {"--calibration-out", options.calibration_out}});
  calibration::CalibrationResult result;
  if (measured) {
    CpuCalibrationOptions calibration;
    calibration.repeats = options.repeats.value_or(5);
    calibration.seed = options.seed;
    calibration.quick = options.quick;
    // The small networks by default: their shapes in well under a minute on
    // two cores; --networks adds the full-size ones (minutes each).
    calibration.ops = zoo_samples(calibrated_networks(options, true));
    CalibrationProgress progress("calibrating this host's cpu backend");
    calibration.on_stage = progress.callback();
    result = calibrate_cpu(calibration);
  } else {
    result = calibration::load_calibration_result(options.from);
  }
  const std::string raw_path = raw_calibration_path(options);
  CalibratedMachineOptions machine_options;
  machine_options.name = std::filesystem::path(options.out).stem().string();
  machine_options.calibration_file = raw_path;
  machine_options.source = measured ? "calibration of this host" : options.from;
  const Machine machine = cpu_machine_from_calibration(result, machine_options);
  std::vector<OutputFile> outputs;
  if (measured) outputs.push_back({raw_calibration_option(options), raw_path});
  outputs.push_back({"--out", options.out});
  check_outputs(options, outputs);
  OutputBatch written;
  if (measured) written.add(outputs.front().option, raw_path, calibration::calibration_to_json(result));
  written.add("--out", options.out, machine_to_json(machine));
  written.publish();
  double best = 0;
  for (const calibration::GemmRate& rate : result.gemm) {
    if (rate.threads == 1 && rate.running == 1) best = std::max(best, rate.flops_per_second);
  }
  std::cout << fmt::format("{}: {} hardware threads; one-thread sgemm {}FLOP/s; memcpy {}/s; hand-off {:.1f} us; "
                           "lane hand-off {:.1f} us, to a sleeping worker {:.1f} us; gap between ops {:.2f} us; "
                           "{} op times\n",
                           result.device_name, machine.devices, si_count(best),
                           binary_bytes(result.copies.empty() ? 0 : result.copies.front().bandwidth_bytes_per_second),
                           result.launch.host_seconds_per_launch * 1e6, result.lane_handoff.seconds * 1e6,
                           result.parked_handoff.seconds * 1e6, result.launch.device_seconds_per_kernel * 1e6,
                           result.op_times.size());
  if (measured) std::cout << fmt::format("wrote {} (the raw calibration)\n", raw_path);
  std::cout << fmt::format("wrote {}: predicts `--backend cpu` runs on this host (--predict-on {})\n", options.out,
                           options.out);
  return 0;
}

int calibrate_command(const CalibrateOptions& options) {
  check_options(options);
  if (options.backend == "cpu") return calibrate_cpu_command(options);
  if (options.backend != "cuda") {
    throw InputError("--backend", "", fmt::format("must be cuda or cpu, got '{}'", options.backend));
  }
  const bool measured = options.from.empty();
  // Before a measurement that takes minutes; every file is checked again once their names are known.
  check_outputs(options, {{"--out", options.out}, {"--calibration-out", options.calibration_out}});
  const calibration::CalibrationResult result = [&] {
    if (!measured) return calibration::load_calibration_result(options.from);
    try {
      return measure(options);
    } catch (const UnavailableError& error) {
      // The backends' message suggests other backends for runs; here the other thing to measure is the cpu.
      throw UnavailableError(std::string(error.what()) +
                             "; to calibrate this host's cpu backend instead: splitscope calibrate --backend cpu "
                             "--out FILE");
    }
  }();
  const std::string raw_path = raw_calibration_path(options);

  // Every machine is built (and checked) before anything is written, so that
  // a calibration that cannot make one leaves no files behind.
  const std::vector<CalibratedMachineFile> files = calibrated_machine_files(result, options.out);
  std::vector<OutputFile> outputs;
  if (measured) outputs.push_back({raw_calibration_option(options), raw_path});
  for (const CalibratedMachineFile& file : files) outputs.push_back({"--out", file.path});
  check_outputs(options, outputs);
  std::vector<Machine> machines;
  for (const CalibratedMachineFile& file : files) {
    CalibratedMachineOptions machine;
    machine.name = file.name;
    machine.link = file.link;
    machine.devices = options.machine_devices;
    machine.calibration_file = raw_path;
    machine.source = measured ? "calibration of GPU " + std::to_string(result.device) : options.from;
    machines.push_back(machine_from_calibration(result, machine));
  }

  // All files or none: a machine file without its raw calibration cites a file that is not there.
  OutputBatch written;
  if (measured) written.add(outputs.front().option, raw_path, calibration::calibration_to_json(result));
  for (size_t i = 0; i < files.size(); ++i) written.add("--out", files[i].path, machine_to_json(machines[i]));
  written.publish();
  if (measured) {
    print_measurements(result);
    std::cout << fmt::format("wrote {} (the raw calibration)\n", raw_path);
  }
  for (size_t i = 0; i < files.size(); ++i) print_machine(files[i], machines[i]);
  if (options.machine_devices > 1 && result.partitions == 1) {
    std::cout << fmt::format(
        "note: each device is the whole GPU as measured; --virtual with N > 1 gives each 1/N of the SMs, so "
        "compute-bound ops are predicted up to N times faster than --virtual measures (docs/machine-format.md)\n");
  }
  return 0;
}

}  // namespace

Command add_calibrate_command(CLI::App& app) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* sub = app.add_subcommand(
      "calibrate", "Measure a GPU (--backend cuda) or this host's cpu backend (--backend cpu) and write simulator "
                   "machine files from it");
  sub->add_option("--out", options->out,
                  "the machine file for --virtual --link device, e.g. models/machines/h100.json; NAME-link-host.json "
                  "and (several GPUs) NAME-peer.json are written beside it")
      ->required();
  CLI::Option* from =
      sub->add_option("--from", options->from,
                      "derive the machine files from this recorded calibration (splitscope.calibration/1) instead of "
                      "measuring; needs no GPU");
  sub->add_option("--calibration-out", options->calibration_out,
                  "where the raw calibration goes (default: beside --out, NAME.calibration.json)")
      ->excludes(from);
  sub->add_flag("--force", options->force,
                "replace a machine file of the zoo (models/machines) named by --out; without it a shipped preset "
                "is kept");
  sub->add_option("--backend", options->backend,
                  "what to measure: cuda (a GPU) or cpu (this host as the cpu backend runs plans)")
      ->capture_default_str();
  sub->add_option("--machine-devices", options->machine_devices,
                  "devices of the --virtual machines: plans on up to this many can be simulated on them")
      ->capture_default_str();
  const std::vector<CLI::Option*> measuring{
      sub->add_option("--device", options->device, "the GPU to measure")->capture_default_str(),
      sub->add_option("--dtype", options->dtype, "math of the op times: fp32, tf32, bf16")->capture_default_str(),
      sub->add_option("--repeat", options->repeats,
                      "timed repeats per measurement (medians are kept; default 20 on a GPU, 5 on the cpu)")
          ->capture_default_str(),
      sub->add_option("--seed", options->seed, "weights and inputs of the op timings")
          ->check(unsigned_integer())
          ->capture_default_str(),
      sub->add_option("--networks", options->networks,
                      "networks whose op shapes to time (default: the whole zoo on cuda, the small ones on cpu)")
          ->delimiter(','),
      sub->add_option("--partitions", options->partitions,
                      "measure inside one of N green-context partitions of the GPU, as --virtual runs on N devices "
                      "use it: the machine files then predict those runs")
          ->capture_default_str(),
      sub->add_flag("--quick", options->quick,
                    "fewer shapes and sizes, the small networks only: a smoke test, not a calibration"),
  };
  for (CLI::Option* option : measuring) option->excludes(from);
  return {sub, [options](const std::vector<std::string>&) { return calibrate_command(*options); }};
}

}  // namespace splitscope::cli
