// The measuring half of calibration (calibration.hpp): CUDA events around
// cuBLAS products, copies, empty kernels, and single-op plans.

#include <cudnn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "exec/cuda/calibration.hpp"
#include "exec/cuda/cuda_check.hpp"
#include "exec/cuda/cupti_tracer.hpp"
#include "exec/cuda/library_versions.hpp"
#include "exec/cuda/cuda_resources.hpp"
#include "exec/cuda/device_set.hpp"
#include "exec/cuda/driver_api.hpp"
#include "exec/cuda/event_timer.hpp"
#include "exec/cuda/kernels.hpp"
#include "exec/cuda/library_handles.hpp"
#include "exec/cuda/plan_compiler.hpp"
#include "exec/cuda/program_runner.hpp"
#include "exec/cuda/step_launcher.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/slice.hpp"
#include "partitioners/partitioner.hpp"
#include "util/errors.hpp"
#include "util/utc_time.hpp"

namespace splitscope::gpu {
namespace {

constexpr size_t kCublasWorkspace = size_t{32} << 20;
constexpr int kLaunches = 1000;

std::string host_name() {
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

/// Times `body` (enqueued on `stream`) with events: `warmup` untimed calls,
/// then `repeats` timed ones; returns seconds per call.
std::vector<double> time_calls(cudaStream_t stream, int warmup, int repeats, const std::function<void()>& body) {
  for (int w = 0; w < warmup; ++w) body();
  SPLITSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  Event start = Event::create(true);
  Event stop = Event::create(true);
  std::vector<double> seconds;
  for (int r = 0; r < repeats; ++r) {
    SPLITSCOPE_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    body();
    SPLITSCOPE_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    SPLITSCOPE_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    SPLITSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    seconds.push_back(static_cast<double>(ms) / 1e3);
  }
  return seconds;
}

struct GemmShape {
  int64_t m, n, k;
};

void measure_gemm(const CalibrationOptions& options, cudaStream_t stream, CalibrationResult& result) {
  // Squares for the peak; then the zoo's own shapes: batch-64 rows against
  // the mlp's 8192-wide layers, the classifier, the RNN cells' gate products
  // (4·1024 and 3·1024 columns), and their halves and quarters (the splits).
  std::vector<GemmShape> shapes{{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}};
  if (!options.quick) {
    shapes.push_back({8192, 8192, 8192});
    for (int64_t n : {8192, 4096, 2048}) shapes.push_back({64, n, 8192});
    shapes.push_back({64, 1000, 8192});
    for (int64_t n : {4096, 3072, 2048, 1536, 1024}) shapes.push_back({64, n, 1024});
    shapes.push_back({32, 4096, 1024});
    shapes.push_back({16, 4096, 1024});
  }
  size_t a_max = 0;
  size_t b_max = 0;
  size_t c_max = 0;
  for (const GemmShape& shape : shapes) {
    a_max = std::max(a_max, static_cast<size_t>(shape.m * shape.k));
    b_max = std::max(b_max, static_cast<size_t>(shape.k * shape.n));
    c_max = std::max(c_max, static_cast<size_t>(shape.m * shape.n));
  }
  DeviceBuffer a(a_max * sizeof(float));
  DeviceBuffer b(b_max * sizeof(float));
  DeviceBuffer c(c_max * sizeof(float));
  SPLITSCOPE_CUDA_CHECK(cudaMemsetAsync(a.get(), 0, a.bytes(), stream));
  SPLITSCOPE_CUDA_CHECK(cudaMemsetAsync(b.get(), 0, b.bytes(), stream));
  DeviceBuffer workspace(kCublasWorkspace);
  CublasHandle handle = CublasHandle::create(stream, workspace.get(), workspace.bytes());
  for (Dtype dtype : {Dtype::kFp32, Dtype::kTf32, Dtype::kBf16}) {
    for (const GemmShape& shape : shapes) {
      MatMulStep step;
      step.rows = shape.m;
      step.cols = shape.n;
      step.inner = shape.k;
      step.x_stride = shape.k;
      step.w_stride = shape.n;
      step.y_stride = shape.n;
      const auto seconds = time_calls(stream, options.warmup, options.repeats, [&] {
        launch_matmul(handle.get(), cublas_compute_type(dtype), step, a.floats(), b.floats(), c.floats());
      });
      GemmRate rate;
      rate.m = shape.m;
      rate.n = shape.n;
      rate.k = shape.k;
      rate.math = to_string(dtype);
      rate.seconds = median(seconds);
      rate.flops_per_second = rate.seconds > 0 ? 2.0 * shape.m * shape.n * shape.k / rate.seconds : 0;
      result.gemm.push_back(rate);
    }
  }
}

CopySeries measure_copies(const CalibrationOptions& options, cudaStream_t stream, const std::string& kind,
                          const std::vector<int64_t>& sizes, const std::function<void(size_t)>& copy) {
  CopySeries series;
  series.kind = kind;
  series.src_device = options.device;
  series.dst_device = options.device;
  for (int64_t bytes : sizes) {
    const auto seconds =
        time_calls(stream, options.warmup, options.repeats, [&] { copy(static_cast<size_t>(bytes)); });
    CopyPoint point;
    point.bytes = bytes;
    point.seconds = median(seconds);
    point.bytes_per_second = point.seconds > 0 ? static_cast<double>(bytes) / point.seconds : 0;
    series.points.push_back(point);
  }
  fit_copy_series(series);
  return series;
}

void measure_all_copies(const CalibrationOptions& options, cudaStream_t stream, CalibrationResult& result) {
  std::vector<int64_t> sizes;
  const int64_t largest = options.quick ? (int64_t{4} << 20) : (int64_t{256} << 20);
  for (int64_t bytes = 4096; bytes <= largest; bytes *= 4) sizes.push_back(bytes);
  const auto biggest = static_cast<size_t>(largest);
  DeviceBuffer source(biggest);
  DeviceBuffer target(biggest);
  PinnedBuffer host(biggest);
  SPLITSCOPE_CUDA_CHECK(cudaMemsetAsync(source.get(), 0, biggest, stream));
  result.copies.push_back(measure_copies(options, stream, "device_to_device", sizes, [&](size_t bytes) {
    SPLITSCOPE_CUDA_CHECK(cudaMemcpyAsync(target.get(), source.get(), bytes, cudaMemcpyDeviceToDevice, stream));
  }));
  result.copies.push_back(measure_copies(options, stream, "host_to_device", sizes, [&](size_t bytes) {
    SPLITSCOPE_CUDA_CHECK(cudaMemcpyAsync(target.get(), host.get(), bytes, cudaMemcpyHostToDevice, stream));
  }));
  result.copies.push_back(measure_copies(options, stream, "device_to_host", sizes, [&](size_t bytes) {
    SPLITSCOPE_CUDA_CHECK(cudaMemcpyAsync(host.get(), source.get(), bytes, cudaMemcpyDeviceToHost, stream));
  }));
  result.copies.push_back(measure_copies(options, stream, "host_staged", sizes, [&](size_t bytes) {
    SPLITSCOPE_CUDA_CHECK(cudaMemcpyAsync(host.get(), source.get(), bytes, cudaMemcpyDeviceToHost, stream));
    SPLITSCOPE_CUDA_CHECK(cudaMemcpyAsync(target.get(), host.get(), bytes, cudaMemcpyHostToDevice, stream));
  }));
  const int gpus = gpu_count();
  if (gpus < 2) {
    result.notes.push_back("peer copies not measured: this machine has one GPU");
    return;
  }
  for (int other = 0; other < gpus; ++other) {
    if (other == options.device) continue;
    int can = 0;
    SPLITSCOPE_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, options.device, other));
    if (can != 0) {
      const cudaError_t status = cudaDeviceEnablePeerAccess(other, 0);
      if (status == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();
      } else {
        SPLITSCOPE_CUDA_CHECK(status);
      }
    }
    DeviceBuffer remote;
    {
      DeviceGuard guard(other);
      remote = DeviceBuffer(biggest);
    }
    CopySeries series = measure_copies(options, stream, "peer", sizes, [&](size_t bytes) {
      SPLITSCOPE_CUDA_CHECK(cudaMemcpyPeerAsync(remote.get(), other, source.get(), options.device, bytes, stream));
    });
    series.dst_device = other;
    series.peer_access = can != 0;
    result.copies.push_back(std::move(series));
  }
}

void measure_launches(const CalibrationOptions& options, cudaStream_t stream, CalibrationResult& result) {
  for (int w = 0; w < 100; ++w) SPLITSCOPE_CUDA_CHECK(kernels::empty(stream));
  SPLITSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  Event start = Event::create(true);
  Event stop = Event::create(true);
  std::vector<double> host;
  std::vector<double> device;
  for (int r = 0; r < std::max(3, options.repeats / 4); ++r) {
    SPLITSCOPE_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    const auto begun = std::chrono::steady_clock::now();
    for (int k = 0; k < kLaunches; ++k) SPLITSCOPE_CUDA_CHECK(kernels::empty(stream));
    const auto issued = std::chrono::steady_clock::now();
    SPLITSCOPE_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    SPLITSCOPE_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    SPLITSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    host.push_back(std::chrono::duration<double>(issued - begun).count() / kLaunches);
    device.push_back(static_cast<double>(ms) / 1e3 / kLaunches);
  }
  result.launch.kernels = kLaunches;
  result.launch.host_seconds_per_launch = median(host);
  result.launch.device_seconds_per_kernel = median(device);
}

void measure_ops(const CalibrationOptions& options, const DeviceSet& devices, CalibrationResult& result) {
  const Dtype dtype = parse_dtype(options.dtype);
  for (const OpSample& sample : options.ops) {
    try {
      const Plan plan = single_op_plan(sample);
      ProgramRunner runner(plan, compile_plan(plan, CompileOptions{}), devices, RunnerOptions{dtype, options.seed});
      EventTimer timer(runner.step_ordinals(), runner.ordinals());
      for (int w = 0; w < options.warmup; ++w) {
        runner.issue(nullptr, 0);
        runner.wait(std::nullopt, 0);
      }
      std::vector<double> seconds;
      for (int r = 0; r < options.repeats; ++r) {
        runner.issue(&timer, r);
        runner.wait(std::nullopt, 0);
        const SpansFromRecords spans = spans_from_records(runner.program(), timer.records(runner.step_spans(), r), r);
        seconds.push_back(spans.timeline.makespan_us() / 1e6);
      }
      const SliceCost cost = slice_cost(*sample.graph, sample.node, sample.slice);
      OpTime time;
      time.signature = sample.signature;
      time.example = sample.graph->name() + "/" + sample.graph->node(sample.node).name;
      time.flops = cost.flops;
      time.bytes = cost.bytes_read + cost.bytes_written;
      time.seconds = median(seconds);
      time.min_seconds = *std::min_element(seconds.begin(), seconds.end());
      time.max_seconds = *std::max_element(seconds.begin(), seconds.end());
      result.op_times.push_back(time);
    } catch (const RunError& error) {
      result.notes.push_back(fmt::format("{} not timed: {}", sample.signature, error.what()));
    }
  }
}

/// Element-wise ops in the host-issue probe: a chain of tiny kernels the
/// device finishes faster than the host issues them.
constexpr int kProbeOps = 64;

/// The host's cost of one device step as an eager run pays it: the probe
/// chain compiled and issued by the executor itself (ProgramRunner::issue,
/// with the CUPTI tracer observing as time_eager() has it, or the event
/// timer where CUPTI is unavailable), host wall time of each issue over its
/// steps; the median over the repeats.
void measure_host_issue(const CalibrationOptions& options, const DeviceSet& devices, CalibrationResult& result) {
  std::string layers;
  for (int k = 0; k < kProbeOps; ++k) layers += fmt::format("{}{{\"type\": \"relu\"}}", k == 0 ? "" : ", ");
  const auto graph = std::make_shared<const Graph>(lower(parse_model_text(
      fmt::format(R"({{"name": "host-issue-probe", "batch": 1, "input": [256], "layers": [{}]}})", layers),
      "host-issue-probe")));
  const Plan plan = make_partitioner("single")->partition(graph, PartitionOptions{1, 1, nullptr});
  ProgramRunner runner(plan, compile_plan(plan, CompileOptions{}), devices, RunnerOptions{Dtype::kFp32, options.seed});
  const int steps = static_cast<int>(runner.program().steps.size());
  for (int w = 0; w < options.warmup; ++w) {
    runner.issue(nullptr, 0);
    runner.wait(std::nullopt, 0);
  }
  std::string why_not;
  std::unique_ptr<CuptiTracer> tracer = CuptiTracer::start(&why_not);
  EventTimer timer(runner.step_ordinals(), runner.ordinals());
  StepObserver* observer = tracer ? static_cast<StepObserver*>(tracer.get()) : static_cast<StepObserver*>(&timer);
  std::vector<double> per_step;
  for (int r = 0; r < std::max(5, options.repeats); ++r) {
    const auto begun = std::chrono::steady_clock::now();
    runner.issue(observer, r);
    const auto issued = std::chrono::steady_clock::now();
    runner.wait(std::nullopt, 0);
    if (tracer) tracer->collect();
    per_step.push_back(std::chrono::duration<double>(issued - begun).count() / steps);
  }
  result.host_issue.steps = steps;
  result.host_issue.seconds_per_step = median(per_step);
  result.notes.push_back(fmt::format("host issue: {:.2f} us a device step over a chain of {} steps, observed by {}",
                                     result.host_issue.seconds_per_step * 1e6, steps,
                                     tracer ? "CUPTI" : "CUDA events (CUPTI unavailable: " + why_not + ")"));
}

}  // namespace

CalibrationResult calibrate_device(const CalibrationOptions& options) {
  const int gpus = gpu_count();
  if (gpus == 0) {
    throw UnavailableError(
        "no CUDA GPU found here, so there is nothing to calibrate; use a machine file from models/machines with "
        "--backend sim");
  }
  if (options.device < 0 || options.device >= gpus) {
    throw InputError("--device", "", fmt::format("there is no GPU {} here ({} found: 0..{})", options.device, gpus,
                                                 gpus - 1));
  }
  if (options.repeats < 1) throw InputError("--repeat", "", "must be at least 1");
  const Dtype dtype = parse_dtype(options.dtype);
  DeviceGuard guard(options.device);
  cudaDeviceProp properties{};
  SPLITSCOPE_CUDA_CHECK(cudaGetDeviceProperties(&properties, options.device));
  const LibraryVersions versions = library_versions();

  CalibrationResult result;
  result.date = utc_now_iso8601();
  result.host = host_name();
  result.device = options.device;
  result.device_name = properties.name;
  result.sm_count = properties.multiProcessorCount;
  result.memory_bytes = static_cast<int64_t>(properties.totalGlobalMem);
  result.compute_capability = fmt::format("{}.{}", properties.major, properties.minor);
  result.driver = versions.driver;
  result.runtime = versions.runtime;
  result.cublas = versions.cublas;
  result.cudnn = versions.cudnn;
  result.dtype = to_string(dtype);
  result.repeats = options.repeats;

  // With partitions, everything that runs kernels (products, launches, op
  // times) runs inside the first of that many green-context partitions, as a
  // `--virtual --devices N` run's devices do; copies too, on its stream.
  if (options.partitions < 1) {
    throw InputError("--partitions", "", fmt::format("must be at least 1, got {}", options.partitions));
  }
  const DriverApi driver;
  const DeviceSet devices = options.partitions > 1
                                ? DeviceSet::virtual_devices(options.device, options.partitions, 1, driver)
                                : DeviceSet::single(options.device);
  const LogicalDevice& measured = devices.device(0);
  result.partitions = options.partitions;
  if (options.partitions > 1) {
    result.sm_count = measured.sm_count;
    result.notes.push_back(fmt::format(
        "measured inside one of {} green-context partitions of GPU {} ({} of its {} SMs), as `--virtual "
        "--devices {}` runs it; the partitions beside it were idle, so memory-bound ops had the whole memory "
        "bandwidth",
        options.partitions, options.device, measured.sm_count, properties.multiProcessorCount, options.partitions));
  }
  const cudaStream_t stream = measured.compute.get();
  measure_gemm(options, stream, result);
  measure_all_copies(options, stream, result);
  measure_launches(options, stream, result);
  measure_host_issue(options, devices, result);
  measure_ops(options, devices, result);
  result.conv = conv_rates(result.op_times);
  return result;
}

}  // namespace splitscope::gpu
