#pragma once
/// \file
/// The backward pass of a fully connected layer z = x·W + b: the gradient
/// flowing back to the input, and the weight and bias gradients. The
/// activation's own derivative is applied before (activation_grad_rows()), so
/// both take dz, the gradient of the pre-activation sum.

#include <cstdint>

#include "exec/cpu/kernels/parallel_for.hpp"

namespace splitscope {

struct DenseGradInputArgs {
  int64_t rows = 0;     ///< samples
  int64_t inputs = 0;   ///< input features (columns of dx)
  int64_t outputs = 0;  ///< output units (columns of dz), summed over
  const float* dz = nullptr;  ///< [rows × outputs], row stride dz_stride
  int64_t dz_stride = 0;
  const float* w = nullptr;  ///< [inputs × outputs], contiguous: the forward W
  float* dx = nullptr;       ///< [rows × inputs], row stride dx_stride; overwritten
  int64_t dx_stride = 0;
};

/// dx[r, i] = Σ_j dz[r, j]·w[i, j], that is dX = dZ·Wᵀ: one sgemm reading W
/// transposed in place, so the forward weights serve as they are.
void dense_grad_input(ParallelFor& parallel, const DenseGradInputArgs& args);

struct DenseGradWeightArgs {
  int64_t rows = 0;     ///< samples, summed over
  int64_t inputs = 0;   ///< rows of dw
  int64_t outputs = 0;  ///< columns of dw and of dz
  const float* x = nullptr;  ///< [rows × inputs], row stride x_stride: the forward input
  int64_t x_stride = 0;
  const float* dz = nullptr;  ///< [rows × outputs], row stride dz_stride
  int64_t dz_stride = 0;
  /// Running sums to add to (gradients of earlier micro-batches), or null:
  /// start from zero. Either separate buffers or exactly dw / db.
  const float* previous_w = nullptr;  ///< [inputs × outputs], contiguous
  const float* previous_b = nullptr;  ///< [outputs]
  float* dw = nullptr;  ///< [inputs × outputs], contiguous
  float* db = nullptr;  ///< [outputs], or null when the layer has no bias
};

/// dw = previous_w + xᵀ·dz and db = previous_b + Σ_r dz[r, :]. The sums
/// over samples go into the running sums directly (sgemm with beta = 1), so
/// micro-batches accumulate without a temporary the size of W.
void dense_grad_weight(ParallelFor& parallel, const DenseGradWeightArgs& args);

}  // namespace splitscope
