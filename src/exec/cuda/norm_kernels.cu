// Batch norm, layer norm and dropout (kernels.hpp). One block per channel
// (batch norm) or per run of features (layer norm), summing in double as the
// cpu kernels do; dropout is a grid-stride loop.

#include <cstdint>

#include "exec/cuda/kernels.hpp"
#include "ir/ops/dropout_mask.hpp"

namespace splitscope::gpu::kernels {
namespace {

constexpr int kNormThreads = 256;
constexpr int64_t kMaxNormBlocks = 65536;

__device__ double block_sum(double value, double* shared) {
  const int lane = threadIdx.x;
  shared[lane] = value;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (lane < half) shared[lane] += shared[lane + half];
    __syncthreads();
  }
  const double result = shared[0];
  __syncthreads();
  return result;
}

/// Element e of channel c over (rows, inner), at a row stride.
__device__ __forceinline__ int64_t at(int64_t e, int64_t c, int64_t inner, int64_t stride) {
  return (e / inner) * stride + c * inner + e % inner;
}

/// Mean and 1/σ of channel `c` (batch norm) over rows × inner.
__device__ void channel_moments(const NormArgs& a, int64_t c, double* shared, double* mean, double* inv_std) {
  const int64_t count = a.rows * a.inner;
  double local = 0;
  for (int64_t e = threadIdx.x; e < count; e += blockDim.x) local += a.x[at(e, c, a.inner, a.x_stride)];
  const double m = block_sum(local, shared) / static_cast<double>(count);
  local = 0;
  for (int64_t e = threadIdx.x; e < count; e += blockDim.x) {
    const double d = a.x[at(e, c, a.inner, a.x_stride)] - m;
    local += d * d;
  }
  *mean = m;
  *inv_std = rsqrt(block_sum(local, shared) / static_cast<double>(count) + a.epsilon);
}

__global__ void batch_norm_kernel(NormArgs a) {
  __shared__ double shared[kNormThreads];
  const int64_t c = blockIdx.x;
  double mean = 0;
  double inv_std = rsqrt(1.0 + a.epsilon);
  if (a.training) channel_moments(a, c, shared, &mean, &inv_std);
  const double scale = a.gamma[c] * inv_std;
  for (int64_t e = threadIdx.x; e < a.rows * a.inner; e += blockDim.x) {
    a.out[at(e, c, a.inner, a.out_stride)] =
        static_cast<float>((a.x[at(e, c, a.inner, a.x_stride)] - mean) * scale + a.beta[c]);
  }
}

/// Σ dY and Σ dY·x̂ of channel c.
__device__ void channel_sums(const NormArgs& a, int64_t c, double mean, double inv_std, double* shared,
                             double* sum_dy, double* sum_dy_xhat) {
  double dy_local = 0;
  double xhat_local = 0;
  for (int64_t e = threadIdx.x; e < a.rows * a.inner; e += blockDim.x) {
    const double dy = a.dy[at(e, c, a.inner, a.dy_stride)];
    dy_local += dy;
    xhat_local += dy * (a.x[at(e, c, a.inner, a.x_stride)] - mean) * inv_std;
  }
  *sum_dy = block_sum(dy_local, shared);
  *sum_dy_xhat = block_sum(xhat_local, shared);
}

__global__ void batch_norm_grad_input_kernel(NormArgs a) {
  __shared__ double shared[kNormThreads];
  const int64_t c = blockIdx.x;
  double mean = 0, inv_std = 1, sum_dy = 0, sum_dy_xhat = 0;
  channel_moments(a, c, shared, &mean, &inv_std);
  channel_sums(a, c, mean, inv_std, shared, &sum_dy, &sum_dy_xhat);
  const double count = static_cast<double>(a.rows * a.inner);
  const double scale = a.gamma[c] * inv_std / count;
  for (int64_t e = threadIdx.x; e < a.rows * a.inner; e += blockDim.x) {
    const double xhat = (a.x[at(e, c, a.inner, a.x_stride)] - mean) * inv_std;
    const double dy = a.dy[at(e, c, a.inner, a.dy_stride)];
    a.out[at(e, c, a.inner, a.out_stride)] = static_cast<float>(scale * (count * dy - sum_dy - xhat * sum_dy_xhat));
  }
}

__global__ void batch_norm_grad_weight_kernel(NormArgs a) {
  __shared__ double shared[kNormThreads];
  const int64_t c = blockIdx.x;
  double mean = 0, inv_std = 1, sum_dy = 0, sum_dy_xhat = 0;
  channel_moments(a, c, shared, &mean, &inv_std);
  channel_sums(a, c, mean, inv_std, shared, &sum_dy, &sum_dy_xhat);
  if (threadIdx.x == 0) {
    a.out[c] = (a.previous != nullptr ? a.previous[c] : 0.0f) + static_cast<float>(sum_dy_xhat);
    a.out[a.channels + c] = (a.previous != nullptr ? a.previous[a.channels + c] : 0.0f) + static_cast<float>(sum_dy);
  }
}

/// Mean and 1/σ of run `run` (sample run / channels, its run run % channels) of layer norm.
__device__ void run_moments(const NormArgs& a, const float* x, double* shared, double* mean, double* inv_std) {
  double local = 0;
  for (int64_t f = threadIdx.x; f < a.inner; f += blockDim.x) local += x[f];
  const double m = block_sum(local, shared) / static_cast<double>(a.inner);
  local = 0;
  for (int64_t f = threadIdx.x; f < a.inner; f += blockDim.x) local += (x[f] - m) * (x[f] - m);
  *mean = m;
  *inv_std = rsqrt(block_sum(local, shared) / static_cast<double>(a.inner) + a.epsilon);
}

__device__ __forceinline__ int64_t run_offset(int64_t run, int64_t runs, int64_t features, int64_t stride) {
  return (run / runs) * stride + (run % runs) * features;
}

__global__ void layer_norm_kernel(NormArgs a) {
  __shared__ double shared[kNormThreads];
  const int64_t run = blockIdx.x;
  const float* x = a.x + run_offset(run, a.channels, a.inner, a.x_stride);
  float* y = a.out + run_offset(run, a.channels, a.inner, a.out_stride);
  double mean = 0, inv_std = 1;
  run_moments(a, x, shared, &mean, &inv_std);
  for (int64_t f = threadIdx.x; f < a.inner; f += blockDim.x) {
    y[f] = static_cast<float>((x[f] - mean) * inv_std * a.gamma[f] + a.beta[f]);
  }
}

__global__ void layer_norm_grad_input_kernel(NormArgs a) {
  __shared__ double shared[kNormThreads];
  const int64_t run = blockIdx.x;
  const float* x = a.x + run_offset(run, a.channels, a.inner, a.x_stride);
  const float* dy = a.dy + run_offset(run, a.channels, a.inner, a.dy_stride);
  float* dx = a.out + run_offset(run, a.channels, a.inner, a.out_stride);
  double mean = 0, inv_std = 1;
  run_moments(a, x, shared, &mean, &inv_std);
  double g_local = 0;
  double xhat_local = 0;
  for (int64_t f = threadIdx.x; f < a.inner; f += blockDim.x) {
    const double g = static_cast<double>(a.gamma[f]) * dy[f];
    g_local += g;
    xhat_local += g * (x[f] - mean) * inv_std;
  }
  const double sum_g = block_sum(g_local, shared);
  const double sum_g_xhat = block_sum(xhat_local, shared);
  const double count = static_cast<double>(a.inner);
  for (int64_t f = threadIdx.x; f < a.inner; f += blockDim.x) {
    const double g = static_cast<double>(a.gamma[f]) * dy[f];
    const double xhat = (x[f] - mean) * inv_std;
    dx[f] = static_cast<float>((count * g - sum_g - xhat * sum_g_xhat) * inv_std / count);
  }
}

__global__ void layer_norm_stats_kernel(NormArgs a) {
  __shared__ double shared[kNormThreads];
  const int64_t run = blockIdx.x;
  double mean = 0, inv_std = 1;
  run_moments(a, a.x + run_offset(run, a.channels, a.inner, a.x_stride), shared, &mean, &inv_std);
  if (threadIdx.x == 0) {
    a.scratch[2 * run] = static_cast<float>(mean);
    a.scratch[2 * run + 1] = static_cast<float>(inv_std);
  }
}

__global__ void layer_norm_grad_weight_kernel(NormArgs a) {
  const int64_t runs = a.rows * a.channels;
  for (int64_t f = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; f < a.inner;
       f += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double dgamma = 0;
    double dbeta = 0;
    for (int64_t run = 0; run < runs; ++run) {
      const double x = a.x[run_offset(run, a.channels, a.inner, a.x_stride) + f];
      const double dy = a.dy[run_offset(run, a.channels, a.inner, a.dy_stride) + f];
      dgamma += dy * (x - a.scratch[2 * run]) * a.scratch[2 * run + 1];
      dbeta += dy;
    }
    a.out[f] = (a.previous != nullptr ? a.previous[f] : 0.0f) + static_cast<float>(dgamma);
    a.out[a.inner + f] = (a.previous != nullptr ? a.previous[a.inner + f] : 0.0f) + static_cast<float>(dbeta);
  }
}

__global__ void dropout_kernel(const float* x, int64_t x_stride, float* y, int64_t y_stride, int64_t rows,
                               int64_t width, int64_t first_row, int64_t first_element, int64_t sample_elements,
                               int layer, float rate, bool training) {
  const float scale = 1.0f / (1.0f - rate);
  const int64_t total = rows * width;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = e / width;
    const int64_t j = e % width;
    const float value = x[r * x_stride + j];
    const int64_t element = (first_row + r) * sample_elements + first_element + j;
    y[r * y_stride + j] = !training ? value : dropout_keeps(layer, element, rate) ? value * scale : 0.0f;
  }
}

unsigned norm_blocks(int64_t count) {
  return static_cast<unsigned>(count < 1 ? 1 : (count > kMaxNormBlocks ? kMaxNormBlocks : count));
}

}  // namespace

cudaError_t normalize(cudaStream_t stream, int mode, const NormArgs& args) {
  const int64_t blocks = mode <= 2 ? args.channels : args.rows * args.channels;
  if (blocks == 0) return cudaSuccess;
  if (blocks > 0x7fffffff) return cudaErrorInvalidValue;
  const auto grid = static_cast<unsigned>(blocks);
  switch (mode) {
    case 0: batch_norm_kernel<<<grid, kNormThreads, 0, stream>>>(args); break;
    case 1: batch_norm_grad_input_kernel<<<grid, kNormThreads, 0, stream>>>(args); break;
    case 2: batch_norm_grad_weight_kernel<<<grid, kNormThreads, 0, stream>>>(args); break;
    case 3: layer_norm_kernel<<<grid, kNormThreads, 0, stream>>>(args); break;
    case 4: layer_norm_grad_input_kernel<<<grid, kNormThreads, 0, stream>>>(args); break;
    case 5: {
      if (args.scratch == nullptr) return cudaErrorInvalidValue;
      layer_norm_stats_kernel<<<grid, kNormThreads, 0, stream>>>(args);
      const cudaError_t stats = cudaGetLastError();
      if (stats != cudaSuccess) return stats;
      layer_norm_grad_weight_kernel<<<norm_blocks((args.inner + kNormThreads - 1) / kNormThreads), kNormThreads, 0,
                                      stream>>>(args);
      break;
    }
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t dropout(cudaStream_t stream, const float* x, int64_t x_stride, float* y, int64_t y_stride, int64_t rows,
                    int64_t width, int64_t first_row, int64_t first_element, int64_t sample_elements, int layer,
                    float rate, bool training) {
  const int64_t total = rows * width;
  if (total == 0) return cudaSuccess;
  dropout_kernel<<<norm_blocks((total + kNormThreads - 1) / kNormThreads), kNormThreads, 0, stream>>>(
      x, x_stride, y, y_stride, rows, width, first_row, first_element, sample_elements, layer, rate, training);
  return cudaGetLastError();
}

}  // namespace splitscope::gpu::kernels
