#pragma once
/// \file
/// The CPU backend: runs a Plan for real on this machine's cores, each device
/// a worker thread with its own queue, the math in float32 through OpenBLAS.
///
/// What it reads from RunOptions:
/// - `seed`: weights and inputs (params.hpp), the same for every strategy;
/// - `warmup`, `repeats`: untimed runs, then timed ones (one Timeline each);
/// - `inter_op_threads`, `intra_op_threads`: see thread_config.hpp;
/// - `timeout_ms`: the deadline of each run (warm-up runs included); a run
///   past it throws RunError naming the op(s) running, and returns nothing.
///
/// Each run: network inputs are filled before it and the output assembled
/// after it, both untimed; weights and buffers are made once, before the
/// first run. Spans are steady-clock microseconds since the run's start.
///
/// Usage: `CpuExecutor().run(plan, options)`; compare outputs of two runs with
/// compare_outputs() (exec/output_compare.hpp).

#include <chrono>
#include <optional>
#include <string_view>

#include "exec/executor.hpp"
#include "exec/mode_runtimes.hpp"

namespace splitscope {

class CpuExecutor final : public Executor, public InputStreamRuntime, public ParameterServerRuntime {
 public:
  CpuExecutor() = default;

  std::string_view name() const override { return "cpu"; }
  /// True: every role runs here. (A compute op of a kind with no CPU kernel,
  /// which only the network input is and no partitioner emits, is refused by
  /// run() with an InputError, since the kind is known only from the graph.)
  std::string unsupported(const Plan& plan, const PlanOp& op) const override;
  /// Throws InputError for impossible options (negative counts, no repeats,
  /// a deadline that is not positive) and RunError when a run fails or passes
  /// its deadline.
  RunResult run(const Plan& plan, const RunOptions& options) override;
  /// Their buffers, weights, workspaces and threads together against the
  /// memory available now, less the margin (cpu_run_memory.hpp).
  void check_fit_together(std::span<const Plan* const> plans) const override;
  /// Buffers, weights, tasks and worker threads made once; each run() of
  /// the result runs the same tasks again (what run() above does between
  /// its repeats).
  std::unique_ptr<PreparedRun> prepare(const Plan& plan, const RunOptions& options) override;
  /// Measured on real threads (input_stream.hpp).
  RunResult run_input_stream(const Plan& plan, const RunOptions& options, const InputPipelineOptions& input) override;
  /// Workers and shards as real threads (ps_training.hpp).
  RunResult run_parameter_server(const Plan& plan, const RunOptions& options,
                                 const ParameterServerOptions& ps) override;
};

struct ThreadConfig;

/// What a run of the cpu backend ran on (this host, its threads), for
/// reports; `pinned_cpus`: the CPUs its compute threads were pinned to
/// (Scheduler::pinned_cpus()), empty where they were not.
RunInfo cpu_run_info(const Plan& plan, const RunOptions& options, const ThreadConfig& threads,
                     const std::vector<int>& pinned_cpus);

/// InputError (exit 2) for options a run of the cpu backend's kernels
/// cannot take: no timed runs, negative warm-up, a deadline that is not a
/// positive number, a negative --straggler delay, --jitter; or a plan with
/// no graph or devices. Public for the other executors that run the cpu
/// kernels (exec/mpi).
void check_cpu_run_options(const Plan& plan, const RunOptions& options);

/// The deadline of each run that --timeout-ms gives, as the scheduler takes it.
std::optional<std::chrono::microseconds> run_deadline(const RunOptions& options);

/// InputError (exit 2, naming --backend cpu) when the plan's tensors and
/// weights would not fit this machine's memory; run() checks it too. Public
/// so that code about to allocate for the same network by other means (the
/// demo's fused loop) refuses it the same way, before allocating.
void check_fits_in_host_memory(const Plan& plan);

}  // namespace splitscope
