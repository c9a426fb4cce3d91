#pragma once
/// \file
/// Batch norm and layer norm, forward and backward, on rows of strided
/// matrices (one row a sample). Statistics are summed in double, in a fixed
/// order per channel or row, so a split by channels (batch norm) or samples
/// (layer norm) computes each output exactly as the whole op does.
///
/// x̂ = (x - mean)/σ, σ = sqrt(var + eps), var the biased variance (PyTorch's
/// normalization); y = gamma·x̂ + beta.

#include <cstdint>

#include "exec/cpu/kernels/parallel_for.hpp"

namespace splitscope {

/// A strided matrix: row r starts at data + r·stride.
struct NormRows {
  const float* data = nullptr;
  int64_t stride = 0;
};

/// Batch norm over `rows` samples of `channels` channels of `inner` elements
/// each (H·W, or 1 for features).
struct BatchNormArgs {
  int64_t rows = 0;
  int64_t channels = 0;
  int64_t inner = 1;
  float epsilon = 1e-5f;
  /// Batch statistics over (rows, inner); else the running statistics, which
  /// a fresh layer holds as PyTorch initialises them (mean 0, variance 1).
  bool training = false;
  NormRows x;
  const float* gamma = nullptr;  ///< [channels]
  const float* beta = nullptr;   ///< [channels]
  float* y = nullptr;
  int64_t y_stride = 0;
};
void batch_norm(ParallelFor& parallel, const BatchNormArgs& args);

/// dX = gamma/(M·σ)·(M·dY - Σ dY - x̂·Σ dY·x̂) per channel, M = rows·inner.
struct BatchNormGradInputArgs {
  int64_t rows = 0;
  int64_t channels = 0;
  int64_t inner = 1;
  float epsilon = 1e-5f;
  NormRows x;
  NormRows dy;
  const float* gamma = nullptr;
  float* dx = nullptr;
  int64_t dx_stride = 0;
};
void batch_norm_grad_input(ParallelFor& parallel, const BatchNormGradInputArgs& args);

/// dgamma = Σ dY·x̂, dbeta = Σ dY per channel, plus `previous` (the running
/// sum of earlier micro-batches, gamma's then beta's) where given.
struct BatchNormGradWeightArgs {
  int64_t rows = 0;
  int64_t channels = 0;
  int64_t inner = 1;
  float epsilon = 1e-5f;
  NormRows x;
  NormRows dy;
  float* dgamma = nullptr;  ///< [channels], then dbeta [channels] right after it
  const float* previous = nullptr;
};
void batch_norm_grad_weight(ParallelFor& parallel, const BatchNormGradWeightArgs& args);

/// Layer norm over the last `features` of each of `groups` runs per sample
/// (a [T, F] sample holds T of them).
struct LayerNormArgs {
  int64_t rows = 0;
  int64_t groups = 1;
  int64_t features = 0;
  float epsilon = 1e-5f;
  NormRows x;
  NormRows dy;                   ///< backward only
  const float* gamma = nullptr;  ///< [features]
  const float* beta = nullptr;   ///< [features], forward only
  float* out = nullptr;          ///< y (forward), dX (backward) or dgamma then dbeta (weight gradient)
  int64_t out_stride = 0;
  const float* previous = nullptr;  ///< the weight gradient's running sum, or null
};
void layer_norm(ParallelFor& parallel, const LayerNormArgs& args);
/// dX = (F·g - Σ g - x̂·Σ g·x̂)/(F·σ) with g = gamma ⊙ dY, per run of features.
void layer_norm_grad_input(ParallelFor& parallel, const LayerNormArgs& args);
/// dgamma = Σ dY ⊙ x̂ and dbeta = Σ dY over every run of every sample.
void layer_norm_grad_weight(const LayerNormArgs& args);

}  // namespace splitscope
