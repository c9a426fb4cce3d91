#include "exec/cpu/cpu_executor.hpp"
#include "exec/input_stream.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>

#include "exec/cpu/compute_task.hpp"
#include "exec/cpu/cpu_run_memory.hpp"
#include "exec/cpu/host_info.hpp"
#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/kernels/gemm.hpp"
#include "exec/cpu/plan_tasks.hpp"
#include "exec/cpu/ps_training.hpp"
#include "exec/cpu/scheduler.hpp"
#include "exec/cpu/stored_precision.hpp"
#include "exec/cpu/thread_config.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"

namespace splitscope {

void check_cpu_run_options(const Plan& plan, const RunOptions& options) {
  if (options.repeats < 1) {
    throw InputError("--repeat", "", fmt::format("{} timed runs; give at least 1", options.repeats));
  }
  if (options.warmup < 0) {
    throw InputError("--warmup", "", fmt::format("{} warm-up runs; give 0 or more", options.warmup));
  }
  if (options.timeout_ms && !(*options.timeout_ms > 0 && std::isfinite(*options.timeout_ms))) {
    throw InputError("--timeout-ms", "",
                     fmt::format("{} is not a positive number of milliseconds", *options.timeout_ms));
  }
  if (plan.graph == nullptr || plan.devices < 1) {
    throw InputError("plan", "", "the plan has no graph or no devices");
  }
  if (options.straggler && !(options.straggler->ms >= 0 && std::isfinite(options.straggler->ms))) {
    throw InputError("--straggler", "", fmt::format("a delay of {} ms; give 0 or more", options.straggler->ms));
  }
  if (options.jitter_sigma != 0) {
    throw InputError("--jitter", "", "draws noise on simulated op times (--backend sim); on cpu, hold one device "
                                     "back with --straggler D:MS");
  }
}

std::optional<std::chrono::microseconds> run_deadline(const RunOptions& options) {
  if (!options.timeout_ms) return std::nullopt;
  return std::chrono::microseconds(static_cast<int64_t>(std::ceil(*options.timeout_ms * 1000.0)));
}

namespace {

// Every value gets its own buffer, each device the weights of its parameter
// values and their optimizer state, each device a kernel workspace
// (cpu_run_memory.hpp): a run that cannot fit in the memory available now is
// refused before it allocates, rather than ending in std::bad_alloc or the
// kernel's OOM killer. Threads: the compute threads fill the machine, and
// each device has a copy thread.
void check_fits_in_memory(std::span<const Plan* const> plans, const HostInfo& host) {
  if (plans.empty()) return;
  CpuRunMemory memory;
  for (const Plan* plan : plans) memory += cpu_run_memory(*plan, host.hardware_threads + plan->devices);
  // Where /proc/meminfo is not there to say what is available: the machine's memory.
  const int64_t available = host.memory_available_bytes > 0 ? host.memory_available_bytes : host.memory_bytes;
  check_memory_fits(memory, available, host.memory_bytes, plans.front()->graph->batch());
}

void check_fits_in_memory(const Plan& plan, const HostInfo& host) {
  const Plan* const plans[] = {&plan};
  check_fits_in_memory(plans, host);
}

/// "to CPUs 0, 1", or why not.
std::string describe_pinning(const std::vector<int>& pinned_cpus) {
  if (pinned_cpus.empty()) return "no (the kernel places them)";
  std::vector<std::string> cpus;
  for (int cpu : pinned_cpus) cpus.push_back(std::to_string(cpu));
  return "to CPUs " + join(cpus, ", ");
}

}  // namespace

void CpuExecutor::check_fit_together(std::span<const Plan* const> plans) const {
  check_fits_in_memory(plans, read_host_info());
}

RunInfo cpu_run_info(const Plan& plan, const RunOptions& options, const ThreadConfig& threads,
                     const std::vector<int>& pinned_cpus) {
  const HostInfo host = read_host_info();
  RunInfo info;
  info.backend = "cpu";
  info.measured = true;
  info.device_mode = "cpu threads";
  info.machine_name = host.host_name;
  info.device_name = host.cpu_model;
  // The devices are threads of one process: each may use all of the machine's memory, which they share.
  if (host.memory_bytes > 0) info.device_memory_bytes.assign(static_cast<size_t>(plan.devices), host.memory_bytes);
  info.facts = {
      {"inter-op threads", describe_inter_op(threads, options)},
      {"intra-op threads", std::to_string(threads.intra_op)},
      {"copy threads", fmt::format("{} (one per device)", plan.devices)},
      {"hardware threads", std::to_string(threads.hardware_threads)},
      {"compute threads pinned", describe_pinning(pinned_cpus)},
      {"blas", blas_description()},
      // The math stays float32; other precisions round what they store (stored_precision.hpp).
      {"dtype", stored_formats(plan.precision).all_float32()
                    ? std::string("fp32")
                    : fmt::format("fp32 math, {} storage rounded", to_string(plan.precision))},
  };
  return info;
}

std::string CpuExecutor::unsupported(const Plan& plan, const PlanOp& op) const {
  if (op.role != OpRole::kCompute) return {};
  const OpKind kind = plan.graph->node(op.node).kind;
  if (has_cpu_kernel(kind)) return {};
  return fmt::format("the cpu backend has no kernel for {} ops", to_string(kind));
}

/// One plan's buffers, weights, tasks and threads, run as often as asked.
class CpuPreparedRun final : public PreparedRun {
 public:
  CpuPreparedRun(const Plan& plan, const RunOptions& options, const HostInfo& host)
      : plan_(plan),
        options_(options),
        threads_(resolve_threads(options, plan.devices, host.hardware_threads)),
        // Setup (untimed) uses the whole machine to generate the weights.
        setup_threads_(threads_.hardware_threads),
        buffers_(plan),
        weights_(*plan.graph, options.seed, setup_threads_, plan.precision),
        tasks_(build_plan_tasks(plan, buffers_, weights_, options.straggler)),
        scheduler_(scheduler_config(plan, threads_)),
        deadline_(run_deadline(options)) {
    // No op writes an input value, so the inputs filled once serve every run.
    fill_network_inputs(plan, options.seed, buffers_);
    round_network_inputs(plan, buffers_);
  }

  void run(int warmup, int repeats, RunResult& into) override {
    for (int index = -warmup; index < repeats; ++index) {
      if (options_.on_repeat) options_.on_repeat(index, repeats);
      std::vector<TaskTiming> timings = scheduler_.run(tasks_.graph, deadline_);
      if (index >= 0) into.timelines.push_back(tasks_timeline(tasks_, timings));
    }
    into.info = cpu_run_info(plan_, options_, threads_, scheduler_.pinned_cpus());
  }

  HostTensor output() override { return assemble_output(plan_, buffers_); }

 private:
  static SchedulerConfig scheduler_config(const Plan& plan, const ThreadConfig& threads) {
    SchedulerConfig config;
    config.devices = plan.devices;
    config.compute_workers = threads.inter_op;
    config.intra_op_threads = threads.intra_op;
    config.pin_compute_threads = true;
    return config;
  }

  const Plan& plan_;
  RunOptions options_;
  ThreadConfig threads_;
  IntraOpPool setup_threads_;
  ValueBuffers buffers_;
  WeightStore weights_;
  PlanTasks tasks_;
  Scheduler scheduler_;
  std::optional<std::chrono::microseconds> deadline_;
};

std::unique_ptr<PreparedRun> CpuExecutor::prepare(const Plan& plan, const RunOptions& options) {
  require_supported(*this, plan);
  check_cpu_run_options(plan, options);
  const HostInfo host = read_host_info();
  check_fits_in_memory(plan, host);
  use_single_threaded_blas();
  return std::make_unique<CpuPreparedRun>(plan, options, host);
}

RunResult CpuExecutor::run(const Plan& plan, const RunOptions& options) { return run_prepared(*this, plan, options); }

void check_fits_in_host_memory(const Plan& plan) { check_fits_in_memory(plan, read_host_info()); }

RunResult CpuExecutor::run_parameter_server(const Plan& plan, const RunOptions& options,
                                            const ParameterServerOptions& ps) {
  require_supported(*this, plan);
  // The shards' pushes, pulls and updates run apart from the plan's tasks and store float32 only.
  if (plan.precision != Precision::kFp32) {
    throw UnavailableError(fmt::format("--precision {}: the cpu backend runs the ps strategy at fp32 only; predict "
                                       "it with --backend sim --machine NAME (e.g. h100-nvlink-8), or run another "
                                       "strategy on cpu",
                                       to_string(plan.precision)));
  }
  check_cpu_run_options(plan, options);
  check_fits_in_memory(plan, read_host_info());
  use_single_threaded_blas();
  return run_cpu_parameter_server(plan, options, ps);
}

RunResult CpuExecutor::run_input_stream(const Plan& plan, const RunOptions& options,
                                        const InputPipelineOptions& input) {
  return run_measured_input_stream(*this, plan, options, input);
}

}  // namespace splitscope
