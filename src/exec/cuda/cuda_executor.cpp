#include "exec/cuda/cuda_executor.hpp"

#include <cudnn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "exec/cuda/activity_mapping.hpp"
#include "exec/cuda/calibration.hpp"
#include "exec/cuda/cuda_check.hpp"
#include "exec/cuda/cupti_tracer.hpp"
#include "exec/cuda/device_set.hpp"
#include "exec/cuda/event_timer.hpp"
#include "exec/cuda/kernels.hpp"
#include "exec/cuda/library_versions.hpp"
#include "exec/cuda/plan_compiler.hpp"
#include "exec/cuda/program_runner.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace gpu {
namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}


struct TimedRuns {
  std::vector<Timeline> timelines;
  std::string method;
};

/// One timed eager run with the event fallback.
Timeline run_with_events(ProgramRunner& runner, EventTimer& timer, const RunOptions& options, int run) {
  const double started = now_ms();
  runner.issue(&timer, run);
  runner.wait(options.timeout_ms, started);
  SpansFromRecords mapped = spans_from_records(runner.program(), timer.records(runner.step_spans(), run), run);
  SPLITSCOPE_CHECK(mapped.spans_without_records.empty(), "an issued step without timing events");
  return std::move(mapped.timeline);
}

TimedRuns time_eager(ProgramRunner& runner, const RunOptions& options, bool report_progress) {
  std::string why_not;
  std::unique_ptr<CuptiTracer> tracer = CuptiTracer::start(&why_not);
  EventTimer timer(runner.step_ordinals(), runner.ordinals());
  TimedRuns timed;
  timed.method = tracer ? "CUPTI activity records" : "CUDA events (CUPTI unavailable: " + why_not + ")";
  for (int r = 0; r < options.repeats; ++r) {
    if (report_progress && options.on_repeat) options.on_repeat(r, options.repeats);
    if (tracer) {
      const double started = now_ms();
      runner.issue(tracer.get(), r);
      runner.wait(options.timeout_ms, started);
      SpansFromRecords mapped = spans_from_records(runner.program(), tracer->collect().records, r);
      if (mapped.spans_without_records.empty()) {
        timed.timelines.push_back(std::move(mapped.timeline));
        continue;
      }
      // CUPTI lost records (or cannot see some kind of copy here): time this
      // repeat and the rest with events, and say so.
      const SpanSpec& missing = runner.program().spans[static_cast<size_t>(mapped.spans_without_records.front())];
      timed.method = fmt::format(
          "CUDA events from repeat {} on (CUPTI gave no record for {} span(s), the first of op {}{})", r + 1,
          mapped.spans_without_records.size(), missing.op,
          tracer->dropped() > 0 ? fmt::format("; {} records dropped", tracer->dropped()) : "");
      if (r > 0) timed.method += "; earlier repeats from CUPTI activity records";
      tracer.reset();
    }
    timed.timelines.push_back(run_with_events(runner, timer, options, r));
  }
  return timed;
}

TimedRuns time_graph(ProgramRunner& runner, const RunOptions& options) {
  EventTimer timer(runner.step_ordinals(), runner.ordinals());
  runner.capture(&timer, 0);
  runner.replay();  // the first launch of an instantiated graph uploads it: not timed
  runner.wait(options.timeout_ms, now_ms());
  TimedRuns timed;
  timed.method = "CUDA event nodes in one captured CUDA Graph, replayed";
  for (int r = 0; r < options.repeats; ++r) {
    if (options.on_repeat) options.on_repeat(r, options.repeats);
    const double started = now_ms();
    runner.replay();
    runner.wait(options.timeout_ms, started);
    SpansFromRecords mapped = spans_from_records(runner.program(), timer.records(runner.step_spans(), r), r);
    SPLITSCOPE_CHECK(mapped.spans_without_records.empty(), "a captured step without timing events");
    timed.timelines.push_back(std::move(mapped.timeline));
  }
  return timed;
}

double median_makespan_ms(const std::vector<Timeline>& timelines) {
  std::vector<double> makespans;
  for (const Timeline& timeline : timelines) makespans.push_back(timeline.makespan_us() / 1000.0);
  return median(makespans);
}

std::string host_name() {
  char name[256] = {0};
  return gethostname(name, sizeof(name) - 1) == 0 ? std::string(name) : std::string("unknown host");
}

std::string dtype_fact(Dtype dtype) {
  switch (dtype) {
    case Dtype::kFp32: return "fp32 (float32 storage and math; cuBLAS default math, cuDNN FMA-only kernels)";
    case Dtype::kTf32: return "tf32 (float32 storage; TF32 tensor cores in cuBLAS and cuDNN)";
    case Dtype::kBf16:
      return "bf16 (float32 storage; cuBLAS products on bf16 tensor cores; cuDNN convolutions in TF32, cuDNN has no "
             "bf16 math for float32 tensors)";
  }
  return "?";
}

}  // namespace

CudaExecutor::CudaExecutor(const CudaOptions& options) : options_(options) {}

std::string CudaExecutor::unsupported(const Plan& plan, const PlanOp& op) const {
  if (plan.graph->is_training()) {
    return "the cuda backend does not train yet (its backward kernels are still to come): train with --backend cpu "
           "or sim";
  }
  if (op.role == OpRole::kCollective && static_cast<int>(op.participants.size()) > kernels::kMaxSumInputs) {
    return fmt::format("the cuda backend runs collectives over at most {} devices; this one has {}",
                       kernels::kMaxSumInputs, op.participants.size());
  }
  if (op.role == OpRole::kCompute && plan.graph->node(op.node).kind == OpKind::kAdd &&
      static_cast<int>(plan.graph->node(op.node).input_shapes.size()) > kernels::kMaxSumInputs) {
    return fmt::format("the cuda backend adds at most {} inputs in one op", kernels::kMaxSumInputs);
  }
  if (op.role == OpRole::kCompute && !gpu::has_cuda_kernel(plan.graph->node(op.node).kind)) {
    return fmt::format("the cuda backend has no kernel for {} ops", to_string(plan.graph->node(op.node).kind));
  }
  return {};
}

RunResult CudaExecutor::run(const Plan& plan, const RunOptions& options) {
  SPLITSCOPE_CHECK(plan.graph != nullptr, "plan without a graph");
  require_supported(*this, plan);
  if (options.repeats < 1) throw InputError("--repeat", "", "must be at least 1");

  int partitions = plan.devices;
  if (options_.mode == DeviceMode::kVirtual && options_.virtual_devices > 0) {
    if (plan.devices > options_.virtual_devices) {
      throw InputError("--devices", "", fmt::format("the plan uses {} devices, more than the {} virtual devices carved",
                                                    plan.devices, options_.virtual_devices));
    }
    partitions = options_.virtual_devices;
  }
  DeviceSet devices = options_.mode == DeviceMode::kVirtual
                          ? DeviceSet::virtual_devices(options_.gpu, partitions, plan.devices, driver_)
                          : DeviceSet::physical(plan.devices);
  DeviceProgram program = compile_plan(plan, CompileOptions{options_.link});
  ProgramRunner runner(plan, std::move(program), devices, RunnerOptions{options_.dtype, options.seed});

  for (int w = 0; w < options.warmup; ++w) {
    if (options.on_repeat) options.on_repeat(w - options.warmup, options.repeats);
    const double started = now_ms();
    runner.issue(nullptr, 0);
    runner.wait(options.timeout_ms, started);
  }

  RunResult result;
  std::vector<std::pair<std::string, std::string>> facts;
  facts.emplace_back("link", options_.link == LinkMode::kHost
                                 ? "host (every cross-device copy staged through pinned host memory)"
                                 : "device (device-to-device copies)");
  facts.emplace_back("dtype", dtype_fact(options_.dtype));
  if (options_.cuda_graph) {
    const TimedRuns eager = time_eager(runner, options, false);
    TimedRuns graph = time_graph(runner, options);
    facts.emplace_back("timing", graph.method);
    facts.emplace_back("cuda_graph", "yes: the timed runs replay one captured graph");
    facts.emplace_back("eager_makespan_ms", fmt::format("{:.4f} (median; timed with {})",
                                                        median_makespan_ms(eager.timelines), eager.method));
    facts.emplace_back("graph_makespan_ms", fmt::format("{:.4f} (median)", median_makespan_ms(graph.timelines)));
    result.timelines = std::move(graph.timelines);
  } else {
    TimedRuns eager = time_eager(runner, options, true);
    facts.emplace_back("timing", eager.method);
    facts.emplace_back("cuda_graph", "no");
    result.timelines = std::move(eager.timelines);
  }
  if (options.want_output) result.output = runner.read_output();

  cudaDeviceProp properties{};
  SPLITSCOPE_CUDA_CHECK(cudaGetDeviceProperties(&properties, devices.device(0).ordinal));
  const LibraryVersions versions = library_versions();
  RunInfo& info = result.info;
  info.backend = "cuda";
  info.measured = true;
  info.device_mode = devices.mode();
  info.machine_name = host_name();
  info.device_name = properties.name;
  info.driver = versions.driver;
  for (int d = 0; d < plan.devices; ++d) {
    cudaDeviceProp device{};
    SPLITSCOPE_CUDA_CHECK(cudaGetDeviceProperties(&device, devices.device(d).ordinal));
    const auto total = static_cast<int64_t>(device.totalGlobalMem);
    info.device_memory_bytes.push_back(devices.is_virtual() ? total / partitions : total);
  }
  info.facts = std::move(facts);
  for (const auto& fact : devices.facts()) info.facts.push_back(fact);
  for (const auto& fact : runner.facts()) info.facts.push_back(fact);
  info.facts.emplace_back("cuda", versions.describe());
  return result;
}

}  // namespace gpu

int cuda_gpu_count() { return gpu::gpu_count(); }

std::unique_ptr<Executor> make_cuda_executor(const CudaOptions& options) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    const std::string why =
        status != cudaSuccess ? fmt::format("cudaGetDeviceCount: {}", cudaGetErrorString(status)) : "no devices";
    cudaGetLastError();
    throw UnavailableError(fmt::format(
        "no CUDA GPU found here ({}); use --backend cpu, or --backend sim --machine NAME to predict", why));
  }
  return std::make_unique<gpu::CudaExecutor>(options);
}

}  // namespace splitscope
