#pragma once
/// \file
/// The options `run`, `compare` and `demo rnn` share: which backend runs the
/// plans (cpu threads, CUDA streams, or the simulator on a machine file), how
/// often, and with what inputs. Each command registers them on its own
/// subcommand and turns them into an Executor and RunOptions here.

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "exec/executor.hpp"
#include "partitioners/partitioner.hpp"
#include "run/backend.hpp"
#include "run/run_target.hpp"

namespace splitscope::cli {

struct ExecutionOptions {
  std::string backend;        ///< cpu | cuda | sim; empty: the command's default
  std::string machine;        ///< sim: NAME or FILE
  bool virtual_devices = false;
  std::string link = "device";
  std::string dtype = "fp32";
  /// `--precision` (precision_option.hpp), registered by add_precision_option;
  /// empty: not given (fp32 storage, the machine file's matrix_math).
  std::string precision;
  bool cuda_graph = false;
  /// sim, set by for_prediction_on() for a measured run replayed from a CUDA graph: the
  /// prediction charges no host issue per call (DeviceSpec::host_issue_us), as the replay issues none.
  bool predict_replayed_graph = false;
  int repeats = 3;
  bool repeats_given = false;  ///< --repeat was on the command line (compare then runs exactly that many)
  int warmup = 1;
  uint64_t seed = 0;
  std::optional<double> timeout_ms;
  int inter_op_threads = 0;
  int intra_op_threads = 0;
  std::optional<int64_t> batch;
  bool quiet = false;
  /// sim: default | topology, which machine device each plan device runs on
  /// (src/sim/machine/device_placement.hpp); registered by add_placement_option.
  std::string placement = "default";
  /// sim: `lognormal:SIGMA`, per-op noise; registered by add_noise_options.
  std::string jitter;
  /// cpu: `D:MS`, device D held back MS ms each run; registered by add_noise_options.
  std::string straggler;

  /// These options for a simulated prediction on `machine`: the cuda-only
  /// options (a machine file sets its own math) and the deadline back at
  /// their defaults.
  ExecutionOptions for_prediction_on(const std::string& machine) const;
};

/// For unsigned 64-bit options: CLI11 would wrap "-1" around to 2^64 - 1,
/// and read 2^64 as 2^64 - 1.
inline CLI::Validator unsigned_integer() {
  return CLI::Validator(
      [](const std::string& text) {
        if (!text.empty() && text.front() == '-') return "must be zero or a positive integer, got " + text;
        uint64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error == std::errc::result_out_of_range) {
          return "is too large (at most 18446744073709551615), got " + text;
        }
        if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
          return "must be zero or a positive integer, got " + text;
        }
        return std::string();
      },
      "UINT");
}

/// Registers the shared options on `command`. `default_backend` is named in
/// the help text ("cpu", or "cuda if a GPU is present, else cpu").
void add_execution_options(CLI::App& command, ExecutionOptions& options, const std::string& default_backend);

/// Registers `--placement default|topology` on `command` (`run` and
/// `compare`, whose simulated runs it places).
void add_placement_option(CLI::App& command, ExecutionOptions& options);


/// Registers `--precision fp32|tf32|bf16|fp16|amp` on `command` (`run` and `compare`).
void add_precision_option(CLI::App& command, ExecutionOptions& options);

/// Registers `--jitter lognormal:SIGMA` (sim) and `--straggler D:MS` (cpu)
/// on `command` (`run` and `compare`).
void add_noise_options(CLI::App& command, ExecutionOptions& options);

/// The backend `--backend` names (parsed here, once per command), or
/// `fallback` where it was not given.
Backend chosen_backend(const ExecutionOptions& options, Backend fallback);

/// Where the command runs: `backend`, and for the simulator the machine
/// `--machine` names, read once at its first use (run_target.hpp) and
/// resolved as the zoo and `host` resolve it (host_machine.hpp).
RunTarget resolve_target(const ExecutionOptions& options, Backend backend);

/// Refuses the options `backend` cannot take, in one place: InputError for a
/// missing --machine (sim), a --machine given another backend, a cuda-only
/// option (--virtual, --graph, --link, --dtype) given another, --jitter
/// (sim) or --straggler (cpu, a device of the `devices`) elsewhere,
/// --timeout-ms on sim; UnavailableError (exit 3) where the backend cannot
/// run --precision.
void check_backend_options(const ExecutionOptions& options, Backend backend, int devices);

/// The executor for `target` (check_backend_options() first). `devices` is
/// the device count of the plans it will run (virtual CUDA devices are
/// carved to match); on cuda a plan's device i runs on device
/// `first_device` + i (GPU, or virtual device), so that plans of one device
/// can each have another. InputError for a machine without a peak for
/// --precision; UnavailableError (exit 3) where CUDA is not available.
std::unique_ptr<Executor> make_executor(const ExecutionOptions& options, const RunTarget& target, int devices,
                                        int first_device = 0);

/// How a partitioner should price ops for `target`: the simulated machine's
/// cost model, the default roofline otherwise.
PartitionOptions partition_options(const ExecutionOptions& options, const RunTarget& target, int devices,
                                   int microbatches);

/// RunOptions from the shared options.
RunOptions run_options(const ExecutionOptions& options);

}  // namespace splitscope::cli
