#include "exec/cuda/program_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>
#include <type_traits>

#include "exec/cuda/cuda_check.hpp"
#include "exec/cuda/event_timer.hpp"
#include "exec/cuda/kernels.hpp"
#include "exec/cuda/program_data.hpp"
#include "exec/cuda/step_launcher.hpp"
#include "ir/params.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"

namespace splitscope::gpu {
namespace {

/// cuBLAS's recommended workspace on Hopper; also ample on Ampere.
constexpr size_t kCublasWorkspace = size_t{32} << 20;

std::string lane_name(StreamLane lane) {
  switch (lane) {
    case StreamLane::kCompute: return "compute";
    case StreamLane::kCopyIn: return "copy-in";
    case StreamLane::kCopyOut: return "copy-out";
  }
  return "?";
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string gib(int64_t bytes) { return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1 << 30)); }

}  // namespace

struct ProgramRunner::DeviceContext {
  DeviceBuffer cublas_workspace;
  DeviceBuffer cudnn_workspace;
  CublasHandle cublas;
  CudnnHandle cudnn;
};

ProgramRunner::ProgramRunner(const Plan& plan, DeviceProgram program, const DeviceSet& devices,
                             const RunnerOptions& options)
    : plan_(plan), program_(std::move(program)), devices_(devices), dtype_(options.dtype) {
  SPLITSCOPE_CHECK(devices_.size() >= program_.devices, "fewer devices than the program needs");
  for (int d = 0; d < program_.devices; ++d) ordinals_ = std::max(ordinals_, devices_.device(d).ordinal + 1);
  prepare_libraries();
  allocate();
  fill(options);
  std::vector<bool> waited_on(program_.steps.size(), false);
  for (const Step& step : program_.steps) {
    for (int w : step.waits) waited_on[static_cast<size_t>(w)] = true;
  }
  done_.resize(program_.steps.size());
  for (size_t i = 0; i < program_.steps.size(); ++i) {
    if (!waited_on[i]) continue;
    DeviceGuard guard(devices_.device(program_.steps[i].stream.device).ordinal);
    done_[i] = Event::create(false);
  }
}

ProgramRunner::~ProgramRunner() {
  if (graph_exec_ != nullptr) SPLITSCOPE_CUDA_WARN(cudaGraphExecDestroy(graph_exec_));
  if (graph_ != nullptr) SPLITSCOPE_CUDA_WARN(cudaGraphDestroy(graph_));
}

void ProgramRunner::prepare_libraries() {
  for (int d = 0; d < program_.devices; ++d) {
    const LogicalDevice& device = devices_.device(d);
    DeviceGuard guard(device.ordinal);
    auto context = std::make_unique<DeviceContext>();
    context->cublas_workspace = DeviceBuffer(kCublasWorkspace);
    context->cublas =
        CublasHandle::create(device.compute.get(), context->cublas_workspace.get(), context->cublas_workspace.bytes());
    // fp32 keeps cuBLAS's default math (no TF32); the compute type of each
    // product (cublas_compute_type) asks for TF32 or bf16 where wanted.
    SPLITSCOPE_CUBLAS_CHECK(cublasSetMathMode(context->cublas.get(), CUBLAS_DEFAULT_MATH));
    context->cudnn = CudnnHandle::create(device.compute.get());
    contexts_.push_back(std::move(context));
  }
  conv_plans_.resize(program_.steps.size());
  pool_plans_.resize(program_.steps.size());
  std::vector<size_t> workspace(static_cast<size_t>(program_.devices), 0);
  std::map<std::string, std::string> algorithms;
  for (size_t i = 0; i < program_.steps.size(); ++i) {
    const Step& step = program_.steps[i];
    const bool needs_library = std::holds_alternative<MatMulStep>(step.action) ||
                               std::holds_alternative<ConvStep>(step.action) ||
                               std::holds_alternative<PoolStep>(step.action);
    SPLITSCOPE_CHECK(!needs_library || step.stream.lane == StreamLane::kCompute,
                     "a library call off the compute stream (its handle is bound there)");
    const int d = step.stream.device;
    if (const auto* conv = std::get_if<ConvStep>(&step.action)) {
      DeviceGuard guard(devices_.device(d).ordinal);
      conv_plans_[i] = std::make_unique<ConvPlan>(*conv, contexts_[static_cast<size_t>(d)]->cudnn.get(), dtype_);
      workspace[static_cast<size_t>(d)] = std::max(workspace[static_cast<size_t>(d)], conv_plans_[i]->workspace_bytes());
      const PlanOp& op = plan_.op(program_.spans[static_cast<size_t>(step.span)].op);
      algorithms.emplace(plan_.graph->node(op.node).name, conv_plans_[i]->description());
    } else if (const auto* pool = std::get_if<PoolStep>(&step.action)) {
      pool_plans_[i] = std::make_unique<PoolPlan>(*pool);
    }
  }
  for (int d = 0; d < program_.devices; ++d) {
    DeviceGuard guard(devices_.device(d).ordinal);
    contexts_[static_cast<size_t>(d)]->cudnn_workspace = DeviceBuffer(workspace[static_cast<size_t>(d)]);
  }
  if (!algorithms.empty()) {
    std::vector<std::string> parts;
    for (const auto& [name, algorithm] : algorithms) parts.push_back(name + ": " + algorithm);
    facts_.emplace_back("conv_algorithms", join(parts, "; "));
  }
}

void ProgramRunner::allocate() {
  // Refuse a plan that does not fit before allocating any of it.
  std::vector<int64_t> needed(static_cast<size_t>(ordinals_), 0);
  for (const BufferSpec& buffer : program_.buffers) {
    if (buffer.device >= 0) needed[static_cast<size_t>(devices_.device(buffer.device).ordinal)] += buffer.elements * 4;
  }
  for (int ordinal = 0; ordinal < ordinals_; ++ordinal) {
    DeviceGuard guard(ordinal);
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    SPLITSCOPE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (needed[static_cast<size_t>(ordinal)] > static_cast<int64_t>(free_bytes)) {
      throw RunError(fmt::format("the plan needs {} on GPU {}, which has {} free of {}; use more devices, a smaller "
                                 "--batch, or --backend sim to see what would fit",
                                 gib(needed[static_cast<size_t>(ordinal)]), ordinal,
                                 gib(static_cast<int64_t>(free_bytes)), gib(static_cast<int64_t>(total_bytes))));
    }
  }
  device_buffers_.resize(program_.buffers.size());
  // Pinned memory is slow to allocate: one arena for every staging buffer,
  // each starting on a 256-byte boundary (as cudaMalloc's would).
  host_offsets_.assign(program_.buffers.size(), 0);
  int64_t host_elements = 0;
  for (size_t b = 0; b < program_.buffers.size(); ++b) {
    if (program_.buffers[b].device >= 0) continue;
    host_offsets_[b] = host_elements;
    host_elements += (program_.buffers[b].elements + 63) / 64 * 64;
  }
  host_arena_ = PinnedBuffer(static_cast<size_t>(host_elements) * sizeof(float));
  for (size_t b = 0; b < program_.buffers.size(); ++b) {
    const BufferSpec& spec = program_.buffers[b];
    const size_t bytes = static_cast<size_t>(spec.elements) * sizeof(float);
    if (spec.device >= 0) {
      DeviceGuard guard(devices_.device(spec.device).ordinal);
      device_buffers_[b] = DeviceBuffer(bytes);
    }
  }
}

void ProgramRunner::fill(const RunnerOptions& options) {
  for (size_t b = 0; b < program_.buffers.size(); ++b) {
    const BufferSpec& spec = program_.buffers[b];
    const size_t bytes = static_cast<size_t>(spec.elements) * sizeof(float);
    if (bytes == 0) continue;
    if (spec.device < 0) {
      std::fill_n(host_arena_.floats() + host_offsets_[b], spec.elements, 0.0f);
      continue;
    }
    DeviceGuard guard(devices_.device(spec.device).ordinal);
    std::vector<float> data;
    if (spec.kind == BufferKind::kWeight) {
      data = materialise(*spec.weight, options.seed);
    } else if (spec.kind == BufferKind::kValue && plan_.value(spec.value).producer < 0) {
      const Value& value = plan_.value(spec.value);
      if (plan_.graph->node(value.node).kind == OpKind::kInput) {
        data = network_input(plan_, value, options.seed);
      } else {
        // A value standing in for an upstream op's output (calibration times
        // one op alone): any data of the right size and range will do.
        data.resize(static_cast<size_t>(spec.elements));
        for (size_t i = 0; i < data.size(); ++i) data[i] = input_value(options.seed, static_cast<int64_t>(i));
      }
    }
    if (data.empty()) {
      SPLITSCOPE_CUDA_CHECK(cudaMemset(device_buffers_[b].get(), 0, bytes));
    } else {
      SPLITSCOPE_CUDA_CHECK(cudaMemcpy(device_buffers_[b].get(), data.data(), bytes, cudaMemcpyHostToDevice));
    }
  }
  for (int ordinal = 0; ordinal < ordinals_; ++ordinal) {
    DeviceGuard guard(ordinal);
    SPLITSCOPE_CUDA_CHECK(cudaDeviceSynchronize());  // setup only: the runs start from a quiet device
  }
}

float* ProgramRunner::address(const Ref& ref) const {
  SPLITSCOPE_CHECK(ref.buffer >= 0 && ref.buffer < static_cast<int>(program_.buffers.size()), "invalid buffer");
  const auto b = static_cast<size_t>(ref.buffer);
  float* base = program_.buffers[b].device < 0 ? host_arena_.floats() + host_offsets_[b] : device_buffers_[b].floats();
  return base + ref.offset;
}

int ProgramRunner::ordinal_of_buffer(int buffer) const {
  const int device = program_.buffers[static_cast<size_t>(buffer)].device;
  return device < 0 ? -1 : devices_.device(device).ordinal;
}

void ProgramRunner::make_current(int ordinal) {
  if (ordinal == current_ordinal_) return;
  SPLITSCOPE_CUDA_CHECK(cudaSetDevice(ordinal));
  current_ordinal_ = ordinal;
}

std::vector<int> ProgramRunner::step_ordinals() const {
  std::vector<int> ordinals;
  for (const Step& step : program_.steps) ordinals.push_back(devices_.device(step.stream.device).ordinal);
  return ordinals;
}

std::vector<int> ProgramRunner::step_spans() const {
  std::vector<int> spans;
  for (const Step& step : program_.steps) spans.push_back(step.span);
  return spans;
}

void ProgramRunner::issue(StepObserver* observer, int run) {
  current_ordinal_ = -1;
  if (observer != nullptr) {
    std::vector<cudaStream_t> origins(static_cast<size_t>(ordinals_), nullptr);
    for (int d = 0; d < program_.devices; ++d) {
      const LogicalDevice& device = devices_.device(d);
      if (origins[static_cast<size_t>(device.ordinal)] == nullptr) {
        origins[static_cast<size_t>(device.ordinal)] = device.compute.get();
      }
    }
    observer->begin_run(run, origins.data(), ordinals_);
  }
  for (size_t i = 0; i < program_.steps.size(); ++i) {
    const Step& step = program_.steps[i];
    const LogicalDevice& device = devices_.device(step.stream.device);
    make_current(device.ordinal);
    const cudaStream_t stream = device.stream(step.stream.lane);
    for (int w : step.waits) SPLITSCOPE_CUDA_CHECK(cudaStreamWaitEvent(stream, done_[static_cast<size_t>(w)].get(), 0));
    if (observer != nullptr) observer->before_step(static_cast<int>(i), step.span, stream, device.ordinal);
    launch(static_cast<int>(i), stream);
    if (observer != nullptr) observer->after_step(static_cast<int>(i), step.span, stream, device.ordinal);
    if (done_[i].get() != nullptr) SPLITSCOPE_CUDA_CHECK(cudaEventRecord(done_[i].get(), stream));
  }
}

void ProgramRunner::launch(int index, cudaStream_t stream) {
  const Step& step = program_.steps[static_cast<size_t>(index)];
  DeviceContext& context = *contexts_[static_cast<size_t>(step.stream.device)];
  auto optional = [&](const Ref& ref) -> const float* { return ref.valid() ? address(ref) : nullptr; };
  std::visit(
      [&](const auto& action) {
        using Action = std::decay_t<decltype(action)>;
        if constexpr (std::is_same_v<Action, MatMulStep>) {
          launch_matmul(context.cublas.get(), cublas_compute_type(dtype_), action, address(action.x), address(action.w),
                        address(action.y));
        } else if constexpr (std::is_same_v<Action, ConvStep>) {
          conv_plans_[static_cast<size_t>(index)]->launch(context.cudnn.get(), address(action.x),
                                                          address(action.filter), address(action.y),
                                                          context.cudnn_workspace.get(), context.cudnn_workspace.bytes());
        } else if constexpr (std::is_same_v<Action, PoolStep>) {
          pool_plans_[static_cast<size_t>(index)]->launch(context.cudnn.get(), address(action.x), address(action.y));
        } else if constexpr (std::is_same_v<Action, BiasActivationStep>) {
          SPLITSCOPE_CUDA_CHECK(kernels::bias_activation(stream, address(action.y), optional(action.bias), action.rows,
                                                         action.channels, action.inner,
                                                         static_cast<int>(action.activation)));
        } else if constexpr (std::is_same_v<Action, MapStep>) {
          SPLITSCOPE_CUDA_CHECK(kernels::map_activation(stream, address(action.x), action.x_stride, address(action.y),
                                                        action.y_stride, action.rows, action.width,
                                                        static_cast<int>(action.activation)));
        } else if constexpr (std::is_same_v<Action, SoftmaxStep>) {
          SPLITSCOPE_CUDA_CHECK(kernels::softmax(stream, address(action.x), action.x_stride, action.width,
                                                 address(action.y), action.y_stride, action.out_begin,
                                                 action.out_width, action.rows));
        } else if constexpr (std::is_same_v<Action, LstmCellStep>) {
          SPLITSCOPE_CUDA_CHECK(kernels::lstm_cell(stream, address(action.gates), optional(action.bias),
                                                   optional(action.c_prev), action.c_prev_stride, address(action.h_out),
                                                   address(action.c_out), action.rows, action.units));
        } else if constexpr (std::is_same_v<Action, GruCellStep>) {
          SPLITSCOPE_CUDA_CHECK(kernels::gru_cell(stream, address(action.input_gates), optional(action.hidden_gates),
                                                  optional(action.bias), optional(action.h_prev), action.h_prev_stride,
                                                  address(action.h_out), action.rows, action.units));
        } else if constexpr (std::is_same_v<Action, SumStep>) {
          std::vector<const float*> inputs;
          for (const Ref& input : action.inputs) inputs.push_back(address(input));
          SPLITSCOPE_CHECK(static_cast<int>(inputs.size()) <= kernels::kMaxSumInputs,
                           fmt::format("an all-reduce over {} devices; at most {} are supported", inputs.size(),
                                       kernels::kMaxSumInputs));
          SPLITSCOPE_CUDA_CHECK(kernels::sum(stream, address(action.y), inputs.data(),
                                             static_cast<int>(inputs.size()), action.elements));
        } else if constexpr (std::is_same_v<Action, CopyStep>) {
          launch_copy(action, address(action.src), address(action.dst),
                      CopyEnds{ordinal_of_buffer(action.src.buffer), ordinal_of_buffer(action.dst.buffer)}, stream);
        } else if constexpr (std::is_same_v<Action, LossGradStep>) {
          SPLITSCOPE_CUDA_CHECK(kernels::loss_grad(stream, address(action.prediction), action.prediction_stride,
                                                   address(action.target), action.target_stride,
                                                   address(action.gradient), action.rows, action.width,
                                                   action.cross_entropy, action.batch));
        } else if constexpr (std::is_same_v<Action, ActivationGradStep>) {
          SPLITSCOPE_CUDA_CHECK(kernels::activation_grad(stream, address(action.dy), action.dy_stride, optional(action.y),
                                                         action.y_stride, address(action.dx), action.dx_stride,
                                                         action.rows, action.width,
                                                         static_cast<int>(action.activation)));
        } else if constexpr (std::is_same_v<Action, BiasGradStep>) {
          SPLITSCOPE_CUDA_CHECK(kernels::bias_grad(stream, address(action.dz), action.dz_stride, address(action.db),
                                                   action.rows, action.channels, action.inner, action.accumulate));
        } else if constexpr (std::is_same_v<Action, PoolGradStep>) {
          kernels::PoolGradShape shape;
          shape.max = action.max;
          shape.batch = action.batch;
          // The kernel's launch block is flat (device code calls no member functions).
          const ConvGeometry& window = action.window;
          shape.channels = window.in_channels;
          shape.height = window.in_h;
          shape.width = window.in_w;
          shape.kernel_h = window.kernel_h;
          shape.kernel_w = window.kernel_w;
          shape.stride_h = window.stride_h;
          shape.stride_w = window.stride_w;
          shape.pad_h = window.pad_h;
          shape.pad_w = window.pad_w;
          shape.out_h = window.out_h();
          shape.out_w = window.out_w();
          shape.x_sample_stride = action.x_sample_stride;
          shape.dy_sample_stride = action.dy_sample_stride;
          shape.dx_sample_stride = action.dx_sample_stride;
          SPLITSCOPE_CUDA_CHECK(
              kernels::pool_grad(stream, shape, optional(action.x), address(action.dy), address(action.dx)));
        } else if constexpr (std::is_same_v<Action, UpdateStep>) {
          const Optimizer& optimizer = action.optimizer;
          const int kind = optimizer.adam() ? 2 : optimizer.state_per_param() > 0 ? 1 : 0;
          auto writable = [&](const Ref& ref) -> float* { return ref.valid() ? address(ref) : nullptr; };
          SPLITSCOPE_CUDA_CHECK(kernels::optimizer_update(
              stream, kind, static_cast<float>(optimizer.learning_rate), static_cast<float>(optimizer.momentum),
              address(action.weights), address(action.gradient), writable(action.first), writable(action.second),
              writable(action.counter), action.elements));
        } else if constexpr (std::is_same_v<Action, CellGradStep>) {
          kernels::CellGradPointers pointers;
          pointers.gates = address(action.gates);
          pointers.hidden_gates = optional(action.hidden_gates);
          pointers.bias = optional(action.bias);
          pointers.c_prev = optional(action.c_prev);
          pointers.c_prev_stride = action.c_prev_stride;
          pointers.h_prev = optional(action.h_prev);
          pointers.h_prev_stride = action.h_prev_stride;
          pointers.dh = address(action.dh);
          pointers.dh_stride = action.dh_stride;
          pointers.dc = optional(action.dc);
          pointers.dc_stride = action.dc_stride;
          pointers.dgates = address(action.dgates);
          pointers.dgates_stride = action.dgates_stride;
          pointers.second = address(action.second);
          pointers.second_stride = action.second_stride;
          SPLITSCOPE_CUDA_CHECK(kernels::cell_grad(stream, action.gru, pointers, action.rows, action.units));
        } else if constexpr (std::is_same_v<Action, GateGatherStep>) {
          SPLITSCOPE_CUDA_CHECK(kernels::gate_gather(stream, address(action.dgates), action.dgates_stride,
                                                     action.columns.data(), action.count, address(action.out),
                                                     action.rows, action.units));
        } else if constexpr (std::is_same_v<Action, NormStep>) {
          kernels::NormArgs args;
          args.rows = action.rows;
          args.channels = action.channels;
          args.inner = action.inner;
          args.epsilon = action.epsilon;
          args.training = action.training;
          args.x = address(action.x);
          args.x_stride = action.x_stride;
          args.dy = optional(action.dy);
          args.dy_stride = action.dy_stride;
          args.gamma = optional(action.gamma);
          args.beta = optional(action.beta);
          args.out = address(action.out);
          args.out_stride = action.out_stride;
          args.previous = optional(action.previous);
          args.scratch = action.scratch.valid() ? address(action.scratch) : nullptr;
          SPLITSCOPE_CUDA_CHECK(kernels::normalize(stream, static_cast<int>(action.mode), args));
        } else if constexpr (std::is_same_v<Action, DropoutStep>) {
          SPLITSCOPE_CUDA_CHECK(kernels::dropout(stream, address(action.x), action.x_stride, address(action.y),
                                                 action.y_stride, action.rows, action.width, action.first_row,
                                                 action.first_element, action.sample_elements, action.layer,
                                                 action.rate, action.training));
        } else if constexpr (std::is_same_v<Action, ZeroStep>) {
          SPLITSCOPE_CUDA_CHECK(cudaMemsetAsync(address(action.y), 0,
                                                static_cast<size_t>(action.elements) * sizeof(float), stream));
        }
      },
      step.action);
}

void ProgramRunner::capture(EventTimer* timer, int run) {
  if (graph_exec_ != nullptr) {
    SPLITSCOPE_CUDA_CHECK(cudaGraphExecDestroy(graph_exec_));
    graph_exec_ = nullptr;
  }
  if (graph_ != nullptr) {
    SPLITSCOPE_CUDA_CHECK(cudaGraphDestroy(graph_));
    graph_ = nullptr;
  }
  const LogicalDevice& root_device = devices_.device(0);
  const cudaStream_t root = root_device.compute.get();
  std::vector<std::pair<cudaStream_t, int>> others;  // every other stream, with its GPU
  for (int d = 0; d < program_.devices; ++d) {
    const LogicalDevice& device = devices_.device(d);
    for (StreamLane lane : {StreamLane::kCompute, StreamLane::kCopyIn, StreamLane::kCopyOut}) {
      if (device.stream(lane) != root) others.emplace_back(device.stream(lane), device.ordinal);
    }
  }
  if (fork_join_.empty()) {
    DeviceGuard guard(root_device.ordinal);
    fork_join_.push_back(Event::create(false));  // the fork, on the root
    for (const auto& [stream, ordinal] : others) {
      DeviceGuard other(ordinal);
      fork_join_.push_back(Event::create(false));
    }
  }
  SPLITSCOPE_CUDA_CHECK(cudaSetDevice(root_device.ordinal));
  SPLITSCOPE_CUDA_CHECK(cudaStreamBeginCapture(root, cudaStreamCaptureModeThreadLocal));
  try {
    // Fork every stream off the root so that they all join the capture.
    SPLITSCOPE_CUDA_CHECK(cudaEventRecord(fork_join_[0].get(), root));
    for (const auto& [stream, ordinal] : others) {
      SPLITSCOPE_CUDA_CHECK(cudaStreamWaitEvent(stream, fork_join_[0].get(), 0));
    }
    if (timer != nullptr) timer->set_capturing(true);
    issue(timer, run);
    if (timer != nullptr) timer->set_capturing(false);
    for (size_t k = 0; k < others.size(); ++k) {
      SPLITSCOPE_CUDA_CHECK(cudaSetDevice(others[k].second));
      SPLITSCOPE_CUDA_CHECK(cudaEventRecord(fork_join_[k + 1].get(), others[k].first));
      SPLITSCOPE_CUDA_CHECK(cudaSetDevice(root_device.ordinal));
      SPLITSCOPE_CUDA_CHECK(cudaStreamWaitEvent(root, fork_join_[k + 1].get(), 0));
    }
    SPLITSCOPE_CUDA_CHECK(cudaSetDevice(root_device.ordinal));
    SPLITSCOPE_CUDA_CHECK(cudaStreamEndCapture(root, &graph_));
  } catch (...) {
    if (timer != nullptr) timer->set_capturing(false);
    cudaGraph_t broken = nullptr;
    // Clean-up after the failure being rethrown: report, do not replace it.
    SPLITSCOPE_CUDA_WARN(cudaSetDevice(root_device.ordinal));
    const cudaError_t ended = cudaStreamEndCapture(root, &broken);
    (void)ended;  // capture was already invalidated by the failure; its status adds nothing
    if (broken != nullptr) SPLITSCOPE_CUDA_WARN(cudaGraphDestroy(broken));
    cudaGetLastError();
    throw;
  }
  SPLITSCOPE_CUDA_CHECK(cudaGraphInstantiate(&graph_exec_, graph_, 0));
  current_ordinal_ = -1;
}

void ProgramRunner::replay() {
  SPLITSCOPE_CHECK(graph_exec_ != nullptr, "replay before capture");
  const LogicalDevice& root_device = devices_.device(0);
  make_current(root_device.ordinal);
  SPLITSCOPE_CUDA_CHECK(cudaGraphLaunch(graph_exec_, root_device.compute.get()));
}

void ProgramRunner::wait(std::optional<double> timeout_ms, double started_ms) {
  struct Busy {
    int device;
    StreamLane lane;
    cudaStream_t stream;
  };
  std::vector<Busy> streams;
  for (int d = 0; d < program_.devices; ++d) {
    for (StreamLane lane : {StreamLane::kCompute, StreamLane::kCopyIn, StreamLane::kCopyOut}) {
      streams.push_back({d, lane, devices_.device(d).stream(lane)});
    }
  }
  if (!timeout_ms) {
    for (const Busy& busy : streams) SPLITSCOPE_CUDA_CHECK(cudaStreamSynchronize(busy.stream));
    return;
  }
  while (true) {
    std::vector<std::string> running;
    for (const Busy& busy : streams) {
      const cudaError_t status = cudaStreamQuery(busy.stream);
      if (status == cudaErrorNotReady) {
        running.push_back(fmt::format("device {} {}", busy.device, lane_name(busy.lane)));
      } else {
        SPLITSCOPE_CUDA_CHECK(status);
      }
    }
    if (running.empty()) return;
    if (now_ms() - started_ms > *timeout_ms) {
      throw RunError(fmt::format("the run took longer than --timeout-ms {}; still running: {}", *timeout_ms,
                                 join(running, ", ")));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

HostTensor ProgramRunner::read_output() const {
  HostTensor output = make_output_tensor(plan_);
  for (int id : plan_.outputs) {
    const Value& value = plan_.value(id);
    const int buffer = program_.value_buffer[static_cast<size_t>(id)];
    std::vector<float> data(static_cast<size_t>(program_.buffers[static_cast<size_t>(buffer)].elements));
    DeviceGuard guard(ordinal_of_buffer(buffer));
    SPLITSCOPE_CUDA_CHECK(cudaMemcpy(data.data(), device_buffers_[static_cast<size_t>(buffer)].get(),
                                     data.size() * sizeof(float), cudaMemcpyDeviceToHost));
    place_output_value(plan_, value, data, output);
  }
  return output;
}

}  // namespace splitscope::gpu
