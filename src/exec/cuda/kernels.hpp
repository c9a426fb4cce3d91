#pragma once
/// \file
/// Our own small kernels: what cuBLAS and cuDNN do not do for us. Each
/// launcher enqueues one kernel on `stream` and returns the launch status
/// (cudaGetLastError), which the caller checks with SPLITSCOPE_CUDA_CHECK.
/// Pointers are device pointers; strides and sizes count float elements.
/// `activation` is static_cast<int>(splitscope::Activation): 0 none, 1 relu,
/// 2 tanh, 3 sigmoid. Full-precision expf/tanhf throughout (no fast math), so
/// results track the cpu backend's.

#include <cuda_runtime.h>

#include <cstdint>

namespace splitscope::gpu::kernels {

/// Most inputs one sum kernel adds (one per all-reduce participant).
inline constexpr int kMaxSumInputs = 16;

/// In place on a contiguous [rows][channels][inner] block: y = act(y + bias[channel]); bias may be null.
cudaError_t bias_activation(cudaStream_t stream, float* y, const float* bias, int64_t rows, int64_t channels,
                            int64_t inner, int activation);

/// y[r][i] = act(x[r][i]) for i < width.
cudaError_t map_activation(cudaStream_t stream, const float* x, int64_t x_stride, float* y, int64_t y_stride,
                           int64_t rows, int64_t width, int activation);

/// Row-wise softmax over x[r][0, width); writes columns [out_begin, out_begin + out_width) to y[r].
cudaError_t softmax(cudaStream_t stream, const float* x, int64_t x_stride, int64_t width, float* y,
                    int64_t y_stride, int64_t out_begin, int64_t out_width, int64_t rows);

/// LSTM element-wise math. gates [rows][4·units] (i, f, g, o); bias [4·units]
/// or null; c_prev at c_prev_stride or null (zeros); h, c: [rows][units].
cudaError_t lstm_cell(cudaStream_t stream, const float* gates, const float* bias, const float* c_prev,
                      int64_t c_prev_stride, float* h, float* c, int64_t rows, int64_t units);

/// GRU element-wise math (params.hpp). gx, gh [rows][3·units] (r, z, n), gh
/// may be null (t = 0); bias [3·units] or null; h_prev at h_prev_stride or null.
cudaError_t gru_cell(cudaStream_t stream, const float* gx, const float* gh, const float* bias, const float* h_prev,
                     int64_t h_prev_stride, float* h, int64_t rows, int64_t units);

/// y[i] = Σ_k inputs[k][i] in order, for `count` ≤ kMaxSumInputs inputs (`inputs` is a host array of device pointers).
cudaError_t sum(cudaStream_t stream, float* y, const float* const* inputs, int count, int64_t elements);

// --- the backward pass and the optimizer (device_program.hpp's steps) ------

/// The loss's gradient (LossGradStep): cross-entropy (p − onehot(target[r][0])) / batch, or MSE 2(p − t) / (batch·width).
cudaError_t loss_grad(cudaStream_t stream, const float* prediction, int64_t prediction_stride, const float* target,
                      int64_t target_stride, float* gradient, int64_t rows, int64_t width, bool cross_entropy,
                      int64_t batch);

/// dx[r][i] = dy[r][i]·f'(y[r][i]), f' from the activation's output (ActivationGradStep); y unused for none.
cudaError_t activation_grad(cudaStream_t stream, const float* dy, int64_t dy_stride, const float* y, int64_t y_stride,
                            float* dx, int64_t dx_stride, int64_t rows, int64_t width, int activation);

/// db[c] (+)= Σ_r Σ_i dz[r·dz_stride + c·inner + i]: one block per channel.
cudaError_t bias_grad(cudaStream_t stream, const float* dz, int64_t dz_stride, float* db, int64_t rows,
                      int64_t channels, int64_t inner, bool accumulate);

/// Pooling's backward (PoolGradStep), one thread per input element gathering from its windows in order.
struct PoolGradShape {
  bool max = true;
  int64_t batch = 0, channels = 0, height = 0, width = 0;
  int64_t kernel_h = 0, kernel_w = 0, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  int64_t out_h = 0, out_w = 0;
  int64_t x_sample_stride = 0, dy_sample_stride = 0, dx_sample_stride = 0;
};
cudaError_t pool_grad(cudaStream_t stream, const PoolGradShape& shape, const float* x, const float* dy, float* dx);

/// One optimizer step in place (UpdateStep): kind 0 SGD, 1 SGD with momentum
/// (`first`), 2 Adam (`first`, `second`, and `counter`, one float counting the
/// updates, advanced first by a one-thread kernel).
cudaError_t optimizer_update(cudaStream_t stream, int kind, float learning_rate, float momentum, float* w,
                             const float* g, float* first, float* second, float* counter, int64_t elements);

/// A recurrent cell step's backward, element-wise half (CellGradStep in device_program.hpp).
struct CellGradPointers {
  const float* gates = nullptr;         ///< LSTM x·Wx + h·Wh; GRU x·Wx
  const float* hidden_gates = nullptr;  ///< GRU h·Wh, or null (t = 0)
  const float* bias = nullptr;
  const float* c_prev = nullptr;
  int64_t c_prev_stride = 0;
  const float* h_prev = nullptr;
  int64_t h_prev_stride = 0;
  const float* dh = nullptr;
  int64_t dh_stride = 0;
  const float* dc = nullptr;
  int64_t dc_stride = 0;
  float* dgates = nullptr;
  int64_t dgates_stride = 0;
  float* second = nullptr;
  int64_t second_stride = 0;
};
cudaError_t cell_grad(cudaStream_t stream, bool gru, const CellGradPointers& p, int64_t rows, int64_t units);

/// out[r][g·units + u] = dgates[r·dgates_stride + u·4 + columns[g]] for g < count (≤ 4).
cudaError_t gate_gather(cudaStream_t stream, const float* dgates, int64_t dgates_stride, const int* columns, int count,
                        float* out, int64_t rows, int64_t units);

/// Batch norm, layer norm and their gradients (norm_kernels.cu), in double
/// sums as the cpu kernels take them. `mode` is static_cast<int>(NormMode)
/// (device_program.hpp): 0 batch norm, 1 its dX, 2 its dgamma and dbeta, 3
/// layer norm, 4 its dX, 5 its dgamma and dbeta (two kernels: each run's
/// statistics into `scratch`, 2 floats a run, then the sums per feature).
struct NormArgs {
  int64_t rows = 0;
  int64_t channels = 0;  ///< batch norm: channels; layer norm: runs of features per sample
  int64_t inner = 1;     ///< batch norm: elements per channel; layer norm: features
  float epsilon = 1e-5f;
  bool training = false;  ///< batch norm: batch statistics, else a fresh layer's running ones
  const float* x = nullptr;
  int64_t x_stride = 0;
  const float* dy = nullptr;
  int64_t dy_stride = 0;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  float* out = nullptr;  ///< y, dX, or dgamma then dbeta
  int64_t out_stride = 0;
  const float* previous = nullptr;  ///< a weight gradient's running sum, or null
  float* scratch = nullptr;
};
cudaError_t normalize(cudaStream_t stream, int mode, const NormArgs& args);

/// Dropout on [rows][width] (ir/ops/dropout_mask.hpp): y = x·m/(1 − rate) in
/// training, a copy otherwise. Element j of row r is element
/// (first_row + r)·sample_elements + first_element + j of the whole batch.
cudaError_t dropout(cudaStream_t stream, const float* x, int64_t x_stride, float* y, int64_t y_stride, int64_t rows,
                    int64_t width, int64_t first_row, int64_t first_element, int64_t sample_elements, int layer,
                    float rate, bool training);

/// An empty kernel, to measure launch overhead.
cudaError_t empty(cudaStream_t stream);

}  // namespace splitscope::gpu::kernels
