// Our own kernels (kernels.hpp). Grid-stride loops over 64-bit indices; one
// block per row for the softmax reductions.

#include <cfloat>
#include <cstdint>

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

// The same sums, four floats per load (16-byte transactions): the H200 run
// measured the scalar kernel at 13% of the copy roofline on resnet50's adds
// (reports/h200/FINDINGS.md). Summed in the same order, so bit-identical.
__global__ void sum4_kernel(float4* y, SumInputs inputs, int count, int64_t quads) {
  for (int64_t e = global_index(); e < quads; e += grid_stride()) {
    float4 total = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int k = 0; k < count; ++k) {
      const float4 v = reinterpret_cast<const float4*>(inputs.pointers[k])[e];
      total.x += v.x;
      total.y += v.y;
      total.z += v.z;
      total.w += v.w;
    }
    y[e] = total;
  }
}

bool aligned16(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

__global__ void empty_kernel() {}

__global__ void loss_grad_kernel(const float* prediction, int64_t prediction_stride, const float* target,
                                 int64_t target_stride, float* gradient, int64_t rows, int64_t width,
                                 bool cross_entropy, float batch) {
  const int64_t total = rows * width;
  const float scale = 2.0f / (batch * static_cast<float>(width));
  for (int64_t e = global_index(); e < total; e += grid_stride()) {
    const int64_t r = e / width;
    const int64_t j = e % width;
    const float p = prediction[r * prediction_stride + j];
    if (cross_entropy) {
      const auto label = static_cast<int64_t>(target[r * target_stride]);
      gradient[e] = (p - (j == label ? 1.0f : 0.0f)) / batch;
    } else {
      gradient[e] = scale * (p - target[r * target_stride + j]);
    }
  }
}

__global__ void activation_grad_kernel(const float* dy, int64_t dy_stride, const float* y, int64_t y_stride, float* dx,
                                       int64_t dx_stride, int64_t rows, int64_t width, int activation) {
  const int64_t total = rows * width;
  for (int64_t e = global_index(); e < total; e += grid_stride()) {
    const int64_t r = e / width;
    const int64_t i = e % width;
    const float g = dy[r * dy_stride + i];
    float result = g;
    if (activation != 0) {
      const float out = y[r * y_stride + i];
      switch (activation) {
        case 1: result = out > 0.0f ? g : 0.0f; break;
        case 2: result = g * (1.0f - out * out); break;
        case 3: result = g * out * (1.0f - out); break;
        default: break;
      }
    }
    dx[r * dx_stride + i] = result;
  }
}

__global__ void bias_grad_kernel(const float* dz, int64_t dz_stride, float* db, int64_t rows, int64_t inner,
                                 bool accumulate) {
  __shared__ float shared[kThreads];
  const int64_t channel = blockIdx.x;
  const int64_t per_channel = rows * inner;
  float local = 0.0f;
  for (int64_t e = threadIdx.x; e < per_channel; e += blockDim.x) {
    local += dz[(e / inner) * dz_stride + channel * inner + e % inner];
  }
  const float total = block_reduce(local, false, shared);
  if (threadIdx.x == 0) db[channel] = (accumulate ? db[channel] : 0.0f) + total;
}

__global__ void pool_grad_kernel(PoolGradShape s, const float* x, const float* dy, float* dx) {
  const int64_t plane = s.height * s.width;
  const int64_t total = s.batch * s.channels * plane;
  for (int64_t e = global_index(); e < total; e += grid_stride()) {
    const int64_t n = e / (s.channels * plane);
    const int64_t c = (e / plane) % s.channels;
    const int64_t iy = (e % plane) / s.width;
    const int64_t ix = e % s.width;
    const float* in = x != nullptr ? x + n * s.x_sample_stride + c * plane : nullptr;
    const float* grad_out = dy + n * s.dy_sample_stride + c * s.out_h * s.out_w;
    // The windows holding (iy, ix): oy·stride − pad ≤ iy < oy·stride − pad + kernel.
    const int64_t first_y = iy + s.pad_h - s.kernel_h + 1 > 0 ? (iy + s.pad_h - s.kernel_h + s.stride_h) / s.stride_h : 0;
    const int64_t last_y = min((iy + s.pad_h) / s.stride_h, s.out_h - 1);
    const int64_t first_x = ix + s.pad_w - s.kernel_w + 1 > 0 ? (ix + s.pad_w - s.kernel_w + s.stride_w) / s.stride_w : 0;
    const int64_t last_x = min((ix + s.pad_w) / s.stride_w, s.out_w - 1);
    float sum = 0.0f;
    for (int64_t oy = first_y; oy <= last_y; ++oy) {
      const int64_t top = max(oy * s.stride_h - s.pad_h, int64_t{0});
      const int64_t bottom = min(oy * s.stride_h - s.pad_h + s.kernel_h, s.height);
      for (int64_t ox = first_x; ox <= last_x; ++ox) {
        const int64_t left = max(ox * s.stride_w - s.pad_w, int64_t{0});
        const int64_t right = min(ox * s.stride_w - s.pad_w + s.kernel_w, s.width);
        const float g = grad_out[oy * s.out_w + ox];
        if (s.max) {
          // The forward scan: the first of equal maxima wins.
          float best = -INFINITY;
          int64_t best_at = top * s.width + left;
          for (int64_t i = top; i < bottom; ++i) {
            for (int64_t j = left; j < right; ++j) {
              if (best < in[i * s.width + j]) {
                best = in[i * s.width + j];
                best_at = i * s.width + j;
              }
            }
          }
          if (best_at == iy * s.width + ix) sum += g;
        } else {
          sum += g * (1.0f / static_cast<float>((bottom - top) * (right - left)));
        }
      }
    }
    dx[n * s.dx_sample_stride + c * plane + iy * s.width + ix] = sum;
  }
}

__global__ void lstm_grad_kernel(CellGradPointers p, int64_t rows, int64_t units) {
  const int64_t total = rows * units;
  const int64_t width = 4 * units;
  for (int64_t e = global_index(); e < total; e += grid_stride()) {
    const int64_t r = e / units;
    const int64_t u = e % units;
    const float* pre = p.gates + r * width;
    auto gate = [&](int k) { return pre[k * units + u] + (p.bias != nullptr ? p.bias[k * units + u] : 0.0f); };
    // The forward kernel's own expressions, then the chain rule (recurrent_cell_backward.cpp).
    const float i = sigmoid(gate(0));
    const float f = sigmoid(gate(1));
    const float g = tanhf(gate(2));
    const float o = sigmoid(gate(3));
    const float previous = p.c_prev != nullptr ? p.c_prev[r * p.c_prev_stride + u] : 0.0f;
    const float c_next = f * previous + i * g;
    const float tanh_c = tanhf(c_next);
    const float dh = p.dh[r * p.dh_stride + u];
    const float dc_total = (p.dc != nullptr ? p.dc[r * p.dc_stride + u] : 0.0f) + dh * o * (1.0f - tanh_c * tanh_c);
    float* out = p.dgates + r * p.dgates_stride + u * 4;
    out[0] = dc_total * g * i * (1.0f - i);
    out[1] = dc_total * previous * f * (1.0f - f);
    out[2] = dc_total * i * (1.0f - g * g);
    out[3] = dh * tanh_c * o * (1.0f - o);
    p.second[r * p.second_stride + u] = dc_total * f;
  }
}

__global__ void gru_grad_kernel(CellGradPointers p, int64_t rows, int64_t units) {
  const int64_t total = rows * units;
  const int64_t width = 3 * units;
  for (int64_t e = global_index(); e < total; e += grid_stride()) {
    const int64_t r = e / units;
    const int64_t u = e % units;
    const float* px = p.gates + r * width;
    const float* ph = p.hidden_gates != nullptr ? p.hidden_gates + r * width : nullptr;
    auto b = [&](int k) { return p.bias != nullptr ? p.bias[k * units + u] : 0.0f; };
    auto hidden = [&](int k) { return ph != nullptr ? ph[k * units + u] : 0.0f; };
    const float reset = sigmoid(px[u] + hidden(0) + b(0));
    const float update = sigmoid(px[units + u] + hidden(1) + b(1));
    const float candidate = tanhf(px[2 * units + u] + b(2) + reset * hidden(2));
    const float previous = p.h_prev != nullptr ? p.h_prev[r * p.h_prev_stride + u] : 0.0f;
    const float dh = p.dh[r * p.dh_stride + u];
    const float d_candidate = dh * (1.0f - update) * (1.0f - candidate * candidate);
    float* out = p.dgates + r * p.dgates_stride + u * 4;
    out[0] = d_candidate * hidden(2) * reset * (1.0f - reset);
    out[1] = dh * (previous - candidate) * update * (1.0f - update);
    out[2] = d_candidate;
    out[3] = d_candidate * reset;
    p.second[r * p.second_stride + u] = dh * update;
  }
}

struct GateColumns {
  int columns[4];
};

__global__ void gate_gather_kernel(const float* dgates, int64_t dgates_stride, GateColumns columns, int count,
                                   float* out, int64_t rows, int64_t units) {
  const int64_t width = count * units;
  const int64_t total = rows * width;
  for (int64_t e = global_index(); e < total; e += grid_stride()) {
    const int64_t r = e / width;
    const int64_t g = (e % width) / units;
    const int64_t u = e % units;
    out[e] = dgates[r * dgates_stride + u * 4 + columns.columns[g]];
  }
}

__global__ void count_update_kernel(float* counter) { *counter += 1.0f; }

__global__ void optimizer_kernel(int kind, float lr, float momentum, float* w, const float* g, float* first,
                                 float* second, const float* counter, int64_t elements) {
  float correct1 = 1.0f;
  float correct2 = 1.0f;
  if (kind == 2) {
    // In double, as the cpu backend's optimizer_step(): β^t loses float's precision early on.
    const double t = static_cast<double>(*counter);
    correct1 = static_cast<float>(1.0 / (1.0 - pow(0.9, t)));
    correct2 = static_cast<float>(1.0 / (1.0 - pow(0.999, t)));
  }
  for (int64_t i = global_index(); i < elements; i += grid_stride()) {
    if (kind == 2) {
      first[i] = 0.9f * first[i] + (1.0f - 0.9f) * g[i];
      second[i] = 0.999f * second[i] + (1.0f - 0.999f) * g[i] * g[i];
      w[i] -= lr * (first[i] * correct1) / (sqrtf(second[i] * correct2) + 1e-8f);
    } else if (kind == 1) {
      first[i] = momentum * first[i] + g[i];
      w[i] -= lr * first[i];
    } else {
      w[i] -= lr * g[i];
    }
  }
}

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
  bool vector = elements % 4 == 0 && aligned16(y);
  for (int k = 0; k < count; ++k) {
    packed.pointers[k] = inputs[k];
    vector = vector && aligned16(inputs[k]);
  }
  if (vector) {
    sum4_kernel<<<blocks_for(elements / 4), kThreads, 0, stream>>>(reinterpret_cast<float4*>(y), packed, count,
                                                                   elements / 4);
  } else {
    sum_kernel<<<blocks_for(elements), kThreads, 0, stream>>>(y, packed, count, elements);
  }
  return cudaGetLastError();
}

cudaError_t loss_grad(cudaStream_t stream, const float* prediction, int64_t prediction_stride, const float* target,
                      int64_t target_stride, float* gradient, int64_t rows, int64_t width, bool cross_entropy,
                      int64_t batch) {
  if (rows * width == 0) return cudaSuccess;
  loss_grad_kernel<<<blocks_for(rows * width), kThreads, 0, stream>>>(prediction, prediction_stride, target,
                                                                      target_stride, gradient, rows, width,
                                                                      cross_entropy, static_cast<float>(batch));
  return cudaGetLastError();
}

cudaError_t activation_grad(cudaStream_t stream, const float* dy, int64_t dy_stride, const float* y, int64_t y_stride,
                            float* dx, int64_t dx_stride, int64_t rows, int64_t width, int activation) {
  if (rows * width == 0) return cudaSuccess;
  activation_grad_kernel<<<blocks_for(rows * width), kThreads, 0, stream>>>(dy, dy_stride, y, y_stride, dx, dx_stride,
                                                                            rows, width, activation);
  return cudaGetLastError();
}

cudaError_t bias_grad(cudaStream_t stream, const float* dz, int64_t dz_stride, float* db, int64_t rows,
                      int64_t channels, int64_t inner, bool accumulate) {
  if (channels == 0) return cudaSuccess;
  if (channels > 0x7fffffff) return cudaErrorInvalidValue;
  bias_grad_kernel<<<static_cast<unsigned>(channels), kThreads, 0, stream>>>(dz, dz_stride, db, rows, inner,
                                                                             accumulate);
  return cudaGetLastError();
}

cudaError_t pool_grad(cudaStream_t stream, const PoolGradShape& shape, const float* x, const float* dy, float* dx) {
  const int64_t total = shape.batch * shape.channels * shape.height * shape.width;
  if (total == 0) return cudaSuccess;
  if (shape.max && x == nullptr) return cudaErrorInvalidValue;
  pool_grad_kernel<<<blocks_for(total), kThreads, 0, stream>>>(shape, x, dy, dx);
  return cudaGetLastError();
}

cudaError_t optimizer_update(cudaStream_t stream, int kind, float learning_rate, float momentum, float* w,
                             const float* g, float* first, float* second, float* counter, int64_t elements) {
  if (kind < 0 || kind > 2 || (kind >= 1 && first == nullptr) || (kind == 2 && (second == nullptr || counter == nullptr))) {
    return cudaErrorInvalidValue;
  }
  if (kind == 2) {
    count_update_kernel<<<1, 1, 0, stream>>>(counter);
    const cudaError_t counted = cudaGetLastError();
    if (counted != cudaSuccess) return counted;
  }
  if (elements == 0) return cudaSuccess;
  optimizer_kernel<<<blocks_for(elements), kThreads, 0, stream>>>(kind, learning_rate, momentum, w, g, first, second,
                                                                  counter, elements);
  return cudaGetLastError();
}

cudaError_t cell_grad(cudaStream_t stream, bool gru, const CellGradPointers& p, int64_t rows, int64_t units) {
  if (rows * units == 0) return cudaSuccess;
  if (p.gates == nullptr || p.dh == nullptr || p.dgates == nullptr || p.second == nullptr) return cudaErrorInvalidValue;
  if (gru) {
    gru_grad_kernel<<<blocks_for(rows * units), kThreads, 0, stream>>>(p, rows, units);
  } else {
    lstm_grad_kernel<<<blocks_for(rows * units), kThreads, 0, stream>>>(p, rows, units);
  }
  return cudaGetLastError();
}

cudaError_t gate_gather(cudaStream_t stream, const float* dgates, int64_t dgates_stride, const int* columns, int count,
                        float* out, int64_t rows, int64_t units) {
  if (count < 1 || count > 4) return cudaErrorInvalidValue;
  if (rows * units == 0) return cudaSuccess;
  GateColumns packed{};
  for (int g = 0; g < count; ++g) {
    if (columns[g] < 0 || columns[g] > 3) return cudaErrorInvalidValue;
    packed.columns[g] = columns[g];
  }
  gate_gather_kernel<<<blocks_for(rows * count * units), kThreads, 0, stream>>>(dgates, dgates_stride, packed, count,
                                                                                 out, rows, units);
  return cudaGetLastError();
}

cudaError_t empty(cudaStream_t stream) {
  empty_kernel<<<1, 1, 0, stream>>>();
  return cudaGetLastError();
}

}  // namespace splitscope::gpu::kernels
