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
#include "exec/cuda/pinned_input_staging.hpp"
#include "exec/cuda/plan_compiler.hpp"
#include "exec/cuda/program_runner.hpp"
#include "exec/input_stream.hpp"
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

/// A plan set up on the GPU once: devices, compiled program, buffers, weights.
/// Its runs share them, so a training plan's runs are successive steps.
class CudaPreparedRun : public PreparedRun {
 public:
  CudaPreparedRun(const Plan& plan, const RunOptions& options, const CudaOptions& cuda, const DriverApi& driver)
      : plan_(plan), options_(options), cuda_(cuda), devices_(make_devices(plan, cuda, driver)),
        runner_(plan, compile_plan(plan, CompileOptions{cuda.link}), devices_,
                RunnerOptions{cuda.dtype, options.seed}) {}

  void run(int warmup, int repeats, RunResult& into) override {
    // repeats 0: warm-ups only (compare warms every plan up before it interleaves their timed runs).
    if (repeats < 0) throw InputError("--repeat", "", "must be at least 1");
    RunOptions options = options_;
    options.repeats = repeats;
    for (int w = 0; w < warmup; ++w) {
      if (options.on_repeat) options.on_repeat(w - warmup, repeats);
      const double started = now_ms();
      runner_.issue(nullptr, 0);
      runner_.wait(options.timeout_ms, started);
    }
    // Built from a list: GCC 12 warns falsely (-Warray-bounds) on a first emplace_back here.
    std::vector<std::pair<std::string, std::string>> facts{
        {"link", cuda_.link == LinkMode::kHost ? "host (every cross-device copy staged through pinned host memory)"
                                               : "device (device-to-device copies)"},
        {"dtype", dtype_fact(cuda_.dtype)}};
    if (repeats == 0) return;
    if (cuda_.cuda_graph) {
      const TimedRuns eager = time_eager(runner_, options, false);
      TimedRuns graph = time_graph(runner_, options);
      facts.emplace_back("timing", graph.method);
      facts.emplace_back("cuda_graph", "yes: the timed runs replay one captured graph");
      facts.emplace_back("eager_makespan_ms", fmt::format("{:.4f} (median; timed with {})",
                                                          median_makespan_ms(eager.timelines), eager.method));
      facts.emplace_back("graph_makespan_ms", fmt::format("{:.4f} (median)", median_makespan_ms(graph.timelines)));
      append(into.timelines, std::move(graph.timelines));
    } else {
      TimedRuns eager = time_eager(runner_, options, true);
      facts.emplace_back("timing", eager.method);
      facts.emplace_back("cuda_graph", "no");
      append(into.timelines, std::move(eager.timelines));
    }
    describe(facts, into.info);
  }

  HostTensor output() override { return runner_.read_output(); }

 private:
  /// The partitions a GPU is carved into: `--virtual-devices`, else one per plan device.
  static int partitions(const Plan& plan, const CudaOptions& cuda) {
    return cuda.mode == DeviceMode::kVirtual && cuda.virtual_devices > 0 ? cuda.virtual_devices : plan.devices;
  }

  static DeviceSet make_devices(const Plan& plan, const CudaOptions& cuda, const DriverApi& driver) {
    if (cuda.mode == DeviceMode::kVirtual && cuda.first_device + plan.devices > partitions(plan, cuda)) {
      throw InputError("--devices", "",
                       fmt::format("the plan uses {} devices from virtual device {}, more than the {} carved",
                                   plan.devices, cuda.first_device, partitions(plan, cuda)));
    }
    return cuda.mode == DeviceMode::kVirtual
               ? DeviceSet::virtual_devices(cuda.gpu, partitions(plan, cuda), plan.devices, driver, cuda.first_device)
               : DeviceSet::physical(plan.devices, cuda.first_device);
  }

  static void append(std::vector<Timeline>& into, std::vector<Timeline> more) {
    for (Timeline& timeline : more) into.push_back(std::move(timeline));
  }

  void describe(std::vector<std::pair<std::string, std::string>> facts, RunInfo& info) const {
    cudaDeviceProp properties{};
    SPLITSCOPE_CUDA_CHECK(cudaGetDeviceProperties(&properties, devices_.device(0).ordinal));
    const LibraryVersions versions = library_versions();
    info.backend = "cuda";
    info.measured = true;
    info.device_mode = devices_.mode();
    info.machine_name = host_name();
    info.device_name = properties.name;
    info.driver = versions.driver;
    info.device_memory_bytes.clear();
    const int carved = partitions(plan_, cuda_);
    for (int d = 0; d < plan_.devices; ++d) {
      cudaDeviceProp device{};
      SPLITSCOPE_CUDA_CHECK(cudaGetDeviceProperties(&device, devices_.device(d).ordinal));
      const auto total = static_cast<int64_t>(device.totalGlobalMem);
      info.device_memory_bytes.push_back(devices_.is_virtual() ? total / carved : total);
    }
    info.facts = std::move(facts);
    for (const auto& fact : devices_.facts()) info.facts.push_back(fact);
    for (const auto& fact : runner_.facts()) info.facts.push_back(fact);
    info.facts.emplace_back("cuda", versions.describe());
  }

  const Plan& plan_;
  RunOptions options_;
  CudaOptions cuda_;
  DeviceSet devices_;      // before runner_, which uses it
  ProgramRunner runner_;
};

CudaExecutor::CudaExecutor(const CudaOptions& options) : options_(options) {}

std::string CudaExecutor::unsupported(const Plan& plan, const PlanOp& op) const {
  if (plan.graph->is_training() && options_.cuda_graph) {
    return "a training step runs once per step, and --graph times replays beside eager runs (each would be a step): "
           "drop --graph to train on the cuda backend";
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

std::unique_ptr<PreparedRun> CudaExecutor::prepare(const Plan& plan, const RunOptions& options) {
  SPLITSCOPE_CHECK(plan.graph != nullptr, "plan without a graph");
  require_supported(*this, plan);
  return std::make_unique<CudaPreparedRun>(plan, options, options_, driver_);
}

RunResult CudaExecutor::run(const Plan& plan, const RunOptions& options) {
  if (options.repeats < 1) throw InputError("--repeat", "", "must be at least 1");
  return run_prepared(*this, plan, options);
}

RunResult CudaExecutor::run_input_stream(const Plan& plan, const RunOptions& options,
                                         const InputPipelineOptions& input) {
  const CudaOptions cuda = options_;
  return run_measured_input_stream(
      *this, plan, options, input,
      [cuda](const std::vector<InputCopy>& targets, size_t slots, int64_t batch_bytes) -> std::unique_ptr<InputStaging> {
        // Plan device d is GPU first_device + d, or a partition of the one carved GPU.
        std::vector<int> ordinals;
        for (const InputCopy& target : targets) {
          ordinals.push_back(cuda.mode == DeviceMode::kVirtual ? cuda.gpu : cuda.first_device + target.device);
        }
        return std::make_unique<PinnedInputStaging>(targets, ordinals, slots, batch_bytes);
      });
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
