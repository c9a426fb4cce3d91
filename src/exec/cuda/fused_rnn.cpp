#include "exec/cuda/fused_rnn.hpp"

#include <fmt/format.h>

#include <optional>

#include "exec/cuda/calibration.hpp"
#include "exec/cuda/cuda_check.hpp"
#include "exec/cuda/cuda_resources.hpp"
#include "exec/cuda/device_set.hpp"
#include "exec/cuda/driver_api.hpp"
#include "exec/cuda/library_handles.hpp"
#include "exec/cuda/rnn_weight_layout.hpp"
#include "exec/cuda_backend.hpp"
#include "ir/layer_costs.hpp"
#include "ir/params.hpp"
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
  SPLITSCOPE_CUDNN_CHECK(cudnnGetRNNTempSpaceSizes(handle.get(), rnn.get(), CUDNN_FWD_MODE_INFERENCE, x_desc.get(),
                                                   &work_bytes, &reserve_bytes));
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
    SPLITSCOPE_CUDNN_CHECK(cudnnRNNForward(handle.get(), rnn.get(), CUDNN_FWD_MODE_INFERENCE,
                                           static_cast<const int32_t*>(device_lengths.get()), x_desc.get(), x.get(),
                                           y_desc.get(), y.get(), state_desc.get(), nullptr, nullptr, state_desc.get(),
                                           nullptr, nullptr, weight_bytes, weights.get(), work_bytes, work.get(),
                                           reserve_bytes, reserve.get()));
  };
  for (int w = 0; w < request.warmup; ++w) forward();
  SPLITSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  Event start = Event::create(true);
  Event stop = Event::create(true);
  for (int r = 0; r < std::max(1, request.repeats); ++r) {
    SPLITSCOPE_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    forward();
    SPLITSCOPE_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    SPLITSCOPE_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    SPLITSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    result.times_ms.push_back(ms);
  }
  result.median_ms = median(result.times_ms);
  result.min_ms = *std::min_element(result.times_ms.begin(), result.times_ms.end());
  result.max_ms = *std::max_element(result.times_ms.begin(), result.times_ms.end());

  result.output.shape = {shape.batch, shape.steps, shape.hidden};
  result.output.data.resize(output_count);
  SPLITSCOPE_CUDA_CHECK(
      cudaMemcpy(result.output.data.data(), y.get(), output_count * sizeof(float), cudaMemcpyDeviceToHost));
  return result;
}

}  // namespace splitscope::gpu
