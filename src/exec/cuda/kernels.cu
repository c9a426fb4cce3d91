// Our own kernels (kernels.hpp). Grid-stride loops over 64-bit indices; one
// block per row for the softmax reductions.

#include <cfloat>

#include "exec/cuda/kernels.hpp"

namespace splitscope::gpu::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65536;

unsigned blocks_for(int64_t elements) {
  const int64_t blocks = (elements + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > kMaxBlocks ? kMaxBlocks : blocks));
}

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

__device__ __forceinline__ float activate(float x, int activation) {
  switch (activation) {
    case 1: return x > 0.0f ? x : 0.0f;
    case 2: return tanhf(x);
    case 3: return sigmoid(x);
    default: return x;
  }
}

__device__ __forceinline__ int64_t global_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

__global__ void bias_activation_kernel(float* y, const float* bias, int64_t total, int64_t channels, int64_t inner,
                                       int activation) {
  for (int64_t e = global_index(); e < total; e += grid_stride()) {
    float value = y[e];
    if (bias != nullptr) value += bias[(e / inner) % channels];
    y[e] = activate(value, activation);
  }
}

__global__ void map_kernel(const float* x, int64_t x_stride, float* y, int64_t y_stride, int64_t rows, int64_t width,
                           int activation) {
  const int64_t total = rows * width;
  for (int64_t e = global_index(); e < total; e += grid_stride()) {
    const int64_t r = e / width;
    const int64_t i = e % width;
    y[r * y_stride + i] = activate(x[r * x_stride + i], activation);
  }
}

__device__ float block_reduce(float value, bool take_max, float* shared) {
  const int lane = threadIdx.x;
  shared[lane] = value;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (lane < half) {
      const float other = shared[lane + half];
      shared[lane] = take_max ? fmaxf(shared[lane], other) : shared[lane] + other;
    }
    __syncthreads();
  }
  const float result = shared[0];
  __syncthreads();
  return result;
}

__global__ void softmax_kernel(const float* x, int64_t x_stride, int64_t width, float* y, int64_t y_stride,
                               int64_t out_begin, int64_t out_width) {
  __shared__ float shared[kThreads];
  const float* row = x + static_cast<int64_t>(blockIdx.x) * x_stride;
  float* out = y + static_cast<int64_t>(blockIdx.x) * y_stride;
  float local_max = -FLT_MAX;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) local_max = fmaxf(local_max, row[i]);
  const float row_max = block_reduce(local_max, true, shared);
  float local_sum = 0.0f;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) local_sum += expf(row[i] - row_max);
  const float row_sum = block_reduce(local_sum, false, shared);
  for (int64_t j = threadIdx.x; j < out_width; j += blockDim.x) {
    out[j] = expf(row[out_begin + j] - row_max) / row_sum;
  }
}

__global__ void lstm_cell_kernel(const float* gates, const float* bias, const float* c_prev, int64_t c_prev_stride,
                                 float* h, float* c, int64_t rows, int64_t units) {
  const int64_t total = rows * units;
  for (int64_t e = global_index(); e < total; e += grid_stride()) {
    const int64_t r = e / units;
    const int64_t u = e % units;
    const float* g = gates + r * 4 * units;
    float pre[4];
    for (int k = 0; k < 4; ++k) pre[k] = g[k * units + u] + (bias != nullptr ? bias[k * units + u] : 0.0f);
    const float input_gate = sigmoid(pre[0]);
    const float forget_gate = sigmoid(pre[1]);
    const float candidate = tanhf(pre[2]);
    const float output_gate = sigmoid(pre[3]);
    const float previous = c_prev != nullptr ? c_prev[r * c_prev_stride + u] : 0.0f;
    const float state = forget_gate * previous + input_gate * candidate;
    c[e] = state;
    h[e] = output_gate * tanhf(state);
  }
}

__global__ void gru_cell_kernel(const float* gx, const float* gh, const float* bias, const float* h_prev,
                                int64_t h_prev_stride, float* h, int64_t rows, int64_t units) {
  const int64_t total = rows * units;
  for (int64_t e = global_index(); e < total; e += grid_stride()) {
    const int64_t r = e / units;
    const int64_t u = e % units;
    const float* x_part = gx + r * 3 * units;
    const float* h_part = gh != nullptr ? gh + r * 3 * units : nullptr;
    auto b = [&](int k) { return bias != nullptr ? bias[k * units + u] : 0.0f; };
    auto hidden = [&](int k) { return h_part != nullptr ? h_part[k * units + u] : 0.0f; };
    const float reset = sigmoid(x_part[u] + hidden(0) + b(0));
    const float update = sigmoid(x_part[units + u] + hidden(1) + b(1));
    const float candidate = tanhf(x_part[2 * units + u] + b(2) + reset * hidden(2));
    const float previous = h_prev != nullptr ? h_prev[r * h_prev_stride + u] : 0.0f;
    h[e] = (1.0f - update) * candidate + update * previous;
  }
}

struct SumInputs {
  const float* pointers[kMaxSumInputs];
};

__global__ void sum_kernel(float* y, SumInputs inputs, int count, int64_t elements) {
  for (int64_t e = global_index(); e < elements; e += grid_stride()) {
    float total = 0.0f;
    for (int k = 0; k < count; ++k) total += inputs.pointers[k][e];
    y[e] = total;
  }
}

__global__ void empty_kernel() {}

}  // namespace

cudaError_t bias_activation(cudaStream_t stream, float* y, const float* bias, int64_t rows, int64_t channels,
                            int64_t inner, int activation) {
  const int64_t total = rows * channels * inner;
  if (total == 0) return cudaSuccess;
  bias_activation_kernel<<<blocks_for(total), kThreads, 0, stream>>>(y, bias, total, channels, inner, activation);
  return cudaGetLastError();
}

cudaError_t map_activation(cudaStream_t stream, const float* x, int64_t x_stride, float* y, int64_t y_stride,
                           int64_t rows, int64_t width, int activation) {
  if (rows * width == 0) return cudaSuccess;
  map_kernel<<<blocks_for(rows * width), kThreads, 0, stream>>>(x, x_stride, y, y_stride, rows, width, activation);
  return cudaGetLastError();
}

cudaError_t softmax(cudaStream_t stream, const float* x, int64_t x_stride, int64_t width, float* y,
                    int64_t y_stride, int64_t out_begin, int64_t out_width, int64_t rows) {
  if (rows == 0) return cudaSuccess;
  softmax_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(x, x_stride, width, y, y_stride, out_begin,
                                                                         out_width);
  return cudaGetLastError();
}

cudaError_t lstm_cell(cudaStream_t stream, const float* gates, const float* bias, const float* c_prev,
                      int64_t c_prev_stride, float* h, float* c, int64_t rows, int64_t units) {
  if (rows * units == 0) return cudaSuccess;
  lstm_cell_kernel<<<blocks_for(rows * units), kThreads, 0, stream>>>(gates, bias, c_prev, c_prev_stride, h, c, rows,
                                                                      units);
  return cudaGetLastError();
}

cudaError_t gru_cell(cudaStream_t stream, const float* gx, const float* gh, const float* bias, const float* h_prev,
                     int64_t h_prev_stride, float* h, int64_t rows, int64_t units) {
  if (rows * units == 0) return cudaSuccess;
  gru_cell_kernel<<<blocks_for(rows * units), kThreads, 0, stream>>>(gx, gh, bias, h_prev, h_prev_stride, h, rows,
                                                                     units);
  return cudaGetLastError();
}

cudaError_t sum(cudaStream_t stream, float* y, const float* const* inputs, int count, int64_t elements) {
  if (count < 1 || count > kMaxSumInputs) return cudaErrorInvalidValue;
  if (elements == 0) return cudaSuccess;
  SumInputs packed{};
  for (int k = 0; k < count; ++k) packed.pointers[k] = inputs[k];
  sum_kernel<<<blocks_for(elements), kThreads, 0, stream>>>(y, packed, count, elements);
  return cudaGetLastError();
}

cudaError_t empty(cudaStream_t stream) {
  empty_kernel<<<1, 1, 0, stream>>>();
  return cudaGetLastError();
}

}  // namespace splitscope::gpu::kernels
