#include "exec/cuda/fused_rnn.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "exec/cuda/calibration.hpp"
#include "exec/cuda/cuda_check.hpp"
#include "exec/cuda/cuda_resources.hpp"
#include "exec/cuda/device_set.hpp"
#include "exec/cuda/driver_api.hpp"
#include "exec/cuda/kernels.hpp"
#include "exec/cuda/library_handles.hpp"
#include "exec/cuda/rnn_weight_layout.hpp"
#include "exec/cuda_backend.hpp"
#include "ir/layer_costs.hpp"
#include "ir/params.hpp"
#include "ir/training.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope::gpu {
namespace {

int to_int(int64_t value) {
  SPLITSCOPE_CHECK(value >= 0 && value <= (int64_t{1} << 31) - 1, "a size beyond cuDNN's int");
  return static_cast<int>(value);
}

/// Writes one matrix or bias of params.hpp into cuDNN's weight space, after
/// checking that cuDNN reports the shape rnn_weight_layout.hpp assumes.
void upload_weight(const TensorDescriptor& descriptor, void* address, const std::vector<float>& values, int64_t rows,
                   int64_t columns, const char* what) {
  cudnnDataType_t type{};
  int dims = 0;
  int dim[3] = {0, 0, 0};
  int stride[3] = {0, 0, 0};
  SPLITSCOPE_CUDNN_CHECK(cudnnGetTensorNdDescriptor(descriptor.get(), 3, &type, &dims, dim, stride));
  const bool as_expected = dims == 3 && dim[0] == 1 && dim[1] == rows && dim[2] == columns &&
                           (columns == 1 || stride[2] == 1) && stride[1] == columns;
  if (!as_expected || address == nullptr) {
    throw RunError(fmt::format("cuDNN lays out the RNN {} as {}-d [{}, {}, {}] (strides {}, {}, {}); splitscope "
                               "expects [1, {}, {}] row-major",
                               what, dims, dim[0], dim[1], dim[2], stride[0], stride[1], stride[2], rows, columns));
  }
  SPLITSCOPE_CUDA_CHECK(cudaMemcpy(address, values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice));
}

/// `work` enqueued on `stream` between two events; its time in ms.
template <class Work>
double time_on_stream(cudaStream_t stream, const Event& start, const Event& stop, Work work) {
  SPLITSCOPE_CUDA_CHECK(cudaEventRecord(start.get(), stream));
  work();
  SPLITSCOPE_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
  SPLITSCOPE_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float ms = 0;
  SPLITSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}

void set_time_stats(FusedRnnResult& result) {
  result.median_ms = median(result.times_ms);
  result.min_ms = *std::min_element(result.times_ms.begin(), result.times_ms.end());
  result.max_ms = *std::max_element(result.times_ms.begin(), result.times_ms.end());
}

/// What a training step reads besides the forward: the descriptors and the
/// device buffers the forward call set up.
struct TrainingBuffers {
  cudnnHandle_t handle;
  cudnnRNNDescriptor_t rnn;
  cudnnRNNDataDescriptor_t x_desc, y_desc;
  cudnnTensorDescriptor_t state_desc;
  const int32_t* lengths;
  void* x;
  void* y;
  size_t weight_bytes;
  void* weights;
  size_t work_bytes;
  void* work;
  size_t reserve_bytes;
  void* reserve;
};

/// `request.repeats` training steps: `forward` (training mode), the network
/// output copied out (the last step's h only, without return_sequences), the
/// loss and dy = 2(y − t)/(B·n) on the host as the plan's loss op has them,
/// the backward data and weights calls, the update of the whole weight space
/// (cuDNN's extra biases, kept zero, get zero gradients and stay zero). Each
/// step timed with CUDA events around all of it, the host's loss included.
template <class Forward>
void train_steps(const FusedRnnRequest& request, const FusedRnnShape& shape, cudaStream_t stream, Forward forward,
                 const TrainingBuffers& b, FusedRnnResult& result) {
  const Graph& graph = *request.graph;
  const bool sequences = graph.model().layers.front().return_sequences;
  const size_t all_steps = static_cast<size_t>(shape.batch * shape.steps * shape.hidden);
  const size_t outputs = sequences ? all_steps : static_cast<size_t>(shape.batch * shape.hidden);
  std::vector<float> targets(outputs);
  for (size_t e = 0; e < outputs; ++e) {
    targets[e] = target_value(request.seed, static_cast<int64_t>(e), LossKind::kMeanSquaredError, 0);
  }
  const size_t weight_floats = b.weight_bytes / sizeof(float);
  const Optimizer& optimizer = *request.training;
  const int kind = optimizer.adam() ? 2 : optimizer.state_per_param() > 0 ? 1 : 0;
  DeviceBuffer dweights(b.weight_bytes);
  DeviceBuffer first(kind > 0 ? b.weight_bytes : sizeof(float));
  DeviceBuffer second(kind == 2 ? b.weight_bytes : sizeof(float));
  DeviceBuffer counter(sizeof(float));
  const auto reset_optimizer_state = [&] {
    SPLITSCOPE_CUDA_CHECK(cudaMemsetAsync(first.get(), 0, kind > 0 ? b.weight_bytes : sizeof(float), stream));
    SPLITSCOPE_CUDA_CHECK(cudaMemsetAsync(second.get(), 0, kind == 2 ? b.weight_bytes : sizeof(float), stream));
    SPLITSCOPE_CUDA_CHECK(cudaMemsetAsync(counter.get(), 0, sizeof(float), stream));
  };
  reset_optimizer_state();
  DeviceBuffer dy(all_steps * sizeof(float));
  SPLITSCOPE_CUDA_CHECK(cudaMemsetAsync(dy.get(), 0, all_steps * sizeof(float), stream));
  DeviceBuffer dx(static_cast<size_t>(shape.batch * shape.steps * shape.input) * sizeof(float));
  // Row b of the network output: all of sample b's steps, or its last step's h.
  const size_t row = sequences ? static_cast<size_t>(shape.steps * shape.hidden) : static_cast<size_t>(shape.hidden);
  const size_t pitch = static_cast<size_t>(shape.steps * shape.hidden) * sizeof(float);
  const size_t at = sequences ? 0 : static_cast<size_t>((shape.steps - 1) * shape.hidden) * sizeof(float);
  HostTensor output;
  output.shape = sequences ? std::vector<int64_t>{shape.batch, shape.steps, shape.hidden}
                           : std::vector<int64_t>{shape.batch, shape.hidden};
  output.data.resize(outputs);
  std::vector<float> gradient(outputs);
  const float scale = 2.0f / static_cast<float>(outputs);
  Event start = Event::create(true);
  Event stop = Event::create(true);
  const auto step = [&] {
    forward();
    SPLITSCOPE_CUDA_CHECK(cudaMemcpy2DAsync(output.data.data(), row * sizeof(float), static_cast<char*>(b.y) + at,
                                            pitch, row * sizeof(float), static_cast<size_t>(shape.batch),
                                            cudaMemcpyDeviceToHost, stream));
    SPLITSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream));
    result.losses.push_back(step_loss(graph, output.data, request.seed));
    for (size_t e = 0; e < outputs; ++e) gradient[e] = (output.data[e] - targets[e]) * scale;
    SPLITSCOPE_CUDA_CHECK(cudaMemcpy2DAsync(static_cast<char*>(dy.get()) + at, pitch, gradient.data(),
                                            row * sizeof(float), row * sizeof(float),
                                            static_cast<size_t>(shape.batch), cudaMemcpyHostToDevice, stream));
    SPLITSCOPE_CUDNN_CHECK(cudnnRNNBackwardData_v8(
        b.handle, b.rnn, b.lengths, b.y_desc, b.y, dy.get(), b.x_desc, dx.get(), b.state_desc, nullptr, nullptr,
        nullptr, b.state_desc, nullptr, nullptr, nullptr, b.weight_bytes, b.weights, b.work_bytes, b.work,
        b.reserve_bytes, b.reserve));
    // cuDNN adds to the weight gradient (CUDNN_WGRAD_MODE_ADD): this step's starts from zero.
    SPLITSCOPE_CUDA_CHECK(cudaMemsetAsync(dweights.get(), 0, b.weight_bytes, stream));
    SPLITSCOPE_CUDNN_CHECK(cudnnRNNBackwardWeights_v8(b.handle, b.rnn, CUDNN_WGRAD_MODE_ADD, b.lengths, b.x_desc, b.x,
                                                      b.state_desc, nullptr, b.y_desc, b.y, b.weight_bytes,
                                                      dweights.get(), b.work_bytes, b.work, b.reserve_bytes,
                                                      b.reserve));
    SPLITSCOPE_CUDA_CHECK(kernels::optimizer_update(
        stream, kind, static_cast<float>(optimizer.learning_rate), static_cast<float>(optimizer.momentum),
        static_cast<float*>(b.weights), static_cast<const float*>(dweights.get()),
        kind > 0 ? static_cast<float*>(first.get()) : nullptr, kind == 2 ? static_cast<float*>(second.get()) : nullptr,
        kind == 2 ? static_cast<float*>(counter.get()) : nullptr, static_cast<int64_t>(weight_floats)));
  };
  if (request.warmup > 0) {
    // cuDNN loads its training kernels on their first call: on an H200
    // partition the first step took 122 ms against 26 ms for the next ones.
    // Warm-up steps run untimed and are then undone (weights, optimizer
    // state, losses), so that the timed steps are the steps a cold run takes.
    DeviceBuffer saved(b.weight_bytes);
    SPLITSCOPE_CUDA_CHECK(cudaMemcpyAsync(saved.get(), b.weights, b.weight_bytes, cudaMemcpyDeviceToDevice, stream));
    for (int w = 0; w < request.warmup; ++w) step();
    SPLITSCOPE_CUDA_CHECK(cudaMemcpyAsync(b.weights, saved.get(), b.weight_bytes, cudaMemcpyDeviceToDevice, stream));
    reset_optimizer_state();
    SPLITSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream));
    result.losses.clear();
  }
  for (int index = 0; index < std::max(1, request.repeats); ++index) {
    result.times_ms.push_back(time_on_stream(stream, start, stop, step));
  }
  set_time_stats(result);
  result.output = std::move(output);
}

}  // namespace

FusedRnnResult run_fused_rnn(const FusedRnnRequest& request) {
  const FusedRnnShape shape = check_fused_rnn_request(request);
  if (gpu_count() == 0) {
    throw UnavailableError("no CUDA GPU found here; the fused cuDNN baseline needs one (use --backend cpu or sim)");
  }
  const std::vector<float> input = fused_rnn_input(request, shape);
  const Dtype dtype = parse_dtype(request.dtype);

  FusedRnnResult result;
  DriverApi driver;
  std::optional<DeviceSet> devices;
  if (request.virtual_devices > 1) {
    devices.emplace(DeviceSet::virtual_devices(request.device, request.virtual_devices, 1, driver));
    result.device_mode = devices->mode();
  } else {
    devices.emplace(DeviceSet::single(request.device));
    result.device_mode = "physical";
  }
  const LogicalDevice& device = devices->device(0);
  result.sm_count = device.sm_count;
  DeviceGuard guard(device.ordinal);
  const cudaStream_t stream = device.compute.get();
  cudaDeviceProp properties{};
  SPLITSCOPE_CUDA_CHECK(cudaGetDeviceProperties(&properties, device.ordinal));
  result.device_name = properties.name;

  CudnnHandle handle = CudnnHandle::create(stream);
  DropoutDescriptor dropout;
  size_t state_bytes = 0;
  SPLITSCOPE_CUDNN_CHECK(cudnnDropoutGetStatesSize(handle.get(), &state_bytes));
  DeviceBuffer states(state_bytes);
  SPLITSCOPE_CUDNN_CHECK(cudnnSetDropoutDescriptor(dropout.get(), handle.get(), 0.0f, states.get(), state_bytes, 0));

  // fp32: FMA math, so cuDNN uses no TF32 and matches the cell-by-cell run.
  const cudnnMathType_t math = dtype == Dtype::kFp32 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
  result.math = dtype == Dtype::kFp32 ? "fp32 (CUDNN_FMA_MATH)" : "tf32 (CUDNN_DEFAULT_MATH: tensor cores allowed)";
  RnnDescriptor rnn;
  SPLITSCOPE_CUDNN_CHECK(cudnnSetRNNDescriptor_v8(
      rnn.get(), CUDNN_RNN_ALGO_STANDARD, shape.lstm ? CUDNN_LSTM : CUDNN_GRU,
      shape.bias ? CUDNN_RNN_SINGLE_INP_BIAS : CUDNN_RNN_NO_BIAS, CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT,
      CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, math, to_int(shape.input), to_int(shape.hidden), to_int(shape.hidden),
      to_int(shape.layers), dropout.get(),
      // cuDNN refuses the unpacked (batch-major) layout below unless padded I/O
      // is on (CUDNN_STATUS_BAD_PARAM, seen on an H100 with cuDNN 9.19); every
      // sequence has the full length, so no padding is ever written.
      CUDNN_RNN_PADDED_IO_ENABLED));

  const std::vector<int> lengths(static_cast<size_t>(shape.batch), to_int(shape.steps));
  RnnDataDescriptor x_desc;
  RnnDataDescriptor y_desc;
  SPLITSCOPE_CUDNN_CHECK(cudnnSetRNNDataDescriptor(x_desc.get(), CUDNN_DATA_FLOAT,
                                                   CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, to_int(shape.steps),
                                                   to_int(shape.batch), to_int(shape.input), lengths.data(), nullptr));
  SPLITSCOPE_CUDNN_CHECK(cudnnSetRNNDataDescriptor(y_desc.get(), CUDNN_DATA_FLOAT,
                                                   CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, to_int(shape.steps),
                                                   to_int(shape.batch), to_int(shape.hidden), lengths.data(), nullptr));
  // The initial and final states: [layers, batch, hidden], fully packed.
  // Their pointers stay null (zero initial state; final state not wanted).
  TensorDescriptor state_desc;
  const int state_dims[3] = {to_int(shape.layers), to_int(shape.batch), to_int(shape.hidden)};
  const int state_strides[3] = {to_int(shape.batch * shape.hidden), to_int(shape.hidden), 1};
  SPLITSCOPE_CUDNN_CHECK(cudnnSetTensorNdDescriptor(state_desc.get(), CUDNN_DATA_FLOAT, 3, state_dims, state_strides));

  size_t weight_bytes = 0;
  SPLITSCOPE_CUDNN_CHECK(cudnnGetRNNWeightSpaceSize(handle.get(), rnn.get(), &weight_bytes));
  size_t work_bytes = 0;
  size_t reserve_bytes = 0;
  const bool training = request.training.has_value();
  if (training && (!request.graph->is_training() || request.graph->model().layers.size() != 1 ||
                   request.graph->training()->loss != LossKind::kMeanSquaredError)) {
    throw InputError(request.graph->model().source, "layers",
                     "a fused cuDNN training step trains a network that is one stacked lstm or gru layer, with mean "
                     "squared error");
  }
  const cudnnForwardMode_t mode = training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE;
  SPLITSCOPE_CUDNN_CHECK(
      cudnnGetRNNTempSpaceSizes(handle.get(), rnn.get(), mode, x_desc.get(), &work_bytes, &reserve_bytes));
  DeviceBuffer weights(weight_bytes);
  DeviceBuffer work(work_bytes);
  DeviceBuffer reserve(reserve_bytes);
  SPLITSCOPE_CUDA_CHECK(cudaMemset(weights.get(), 0, weight_bytes));  // any bias cuDNN keeps but we do not use is zero

  for (int64_t l = 0; l < shape.layers; ++l) {
    const NodeId cell = cell_node_of(*request.graph, request.layer, static_cast<int>(l));
    const int64_t in = l == 0 ? shape.input : shape.hidden;
    for (const bool recurrent : {false, true}) {
      for (int gate = 0; gate < shape.gates; ++gate) {
        TensorDescriptor matrix_desc;
        TensorDescriptor bias_desc;
        void* matrix = nullptr;
        void* bias = nullptr;
        SPLITSCOPE_CUDNN_CHECK(cudnnGetRNNWeightParams(handle.get(), rnn.get(), static_cast<int32_t>(l), weight_bytes,
                                                       weights.get(), cudnn_lin_layer_id(shape.gates, recurrent, gate),
                                                       matrix_desc.get(), &matrix, bias_desc.get(), &bias));
        upload_weight(matrix_desc, matrix,
                      cudnn_gate_matrix(*request.graph, cell, recurrent, gate, request.seed), shape.hidden,
                      recurrent ? shape.hidden : in, recurrent ? "recurrent matrix" : "input matrix");
        if (shape.bias && !recurrent) {
          upload_weight(bias_desc, bias, cudnn_gate_bias(*request.graph, cell, gate, request.seed), shape.hidden, 1,
                        "input bias");
        }
      }
    }
  }

  DeviceBuffer device_lengths(lengths.size() * sizeof(int));
  SPLITSCOPE_CUDA_CHECK(
      cudaMemcpy(device_lengths.get(), lengths.data(), lengths.size() * sizeof(int), cudaMemcpyHostToDevice));
  DeviceBuffer x(input.size() * sizeof(float));
  SPLITSCOPE_CUDA_CHECK(cudaMemcpy(x.get(), input.data(), input.size() * sizeof(float), cudaMemcpyHostToDevice));
  const size_t output_count = static_cast<size_t>(shape.batch * shape.steps * shape.hidden);
  DeviceBuffer y(output_count * sizeof(float));

  auto forward = [&] {
    SPLITSCOPE_CUDNN_CHECK(cudnnRNNForward(handle.get(), rnn.get(), mode,
                                           static_cast<const int32_t*>(device_lengths.get()), x_desc.get(), x.get(),
                                           y_desc.get(), y.get(), state_desc.get(), nullptr, nullptr, state_desc.get(),
                                           nullptr, nullptr, weight_bytes, weights.get(), work_bytes, work.get(),
                                           reserve_bytes, reserve.get()));
  };
  if (training) {
    train_steps(request, shape, stream, [&] { forward(); },
                TrainingBuffers{handle.get(), rnn.get(), x_desc.get(), y_desc.get(), state_desc.get(),
                                static_cast<const int32_t*>(device_lengths.get()), x.get(), y.get(), weight_bytes,
                                weights.get(), work_bytes, work.get(), reserve_bytes, reserve.get()},
                result);
    return result;
  }
  for (int w = 0; w < request.warmup; ++w) forward();
  SPLITSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  Event start = Event::create(true);
  Event stop = Event::create(true);
  for (int r = 0; r < std::max(1, request.repeats); ++r) {
    result.times_ms.push_back(time_on_stream(stream, start, stop, forward));
  }
  set_time_stats(result);

  result.output.shape = {shape.batch, shape.steps, shape.hidden};
  result.output.data.resize(output_count);
  SPLITSCOPE_CUDA_CHECK(
      cudaMemcpy(result.output.data.data(), y.get(), output_count * sizeof(float), cudaMemcpyDeviceToHost));
  return result;
}

}  // namespace splitscope::gpu
