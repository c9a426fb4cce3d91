#pragma once
/// \file
/// A fully connected layer, or a slice of one: y = act(x·W + b).

#include <cstdint>

#include "exec/cpu/kernels/parallel_for.hpp"
#include "ir/op_attrs.hpp"

namespace splitscope {

struct DenseArgs {
  int64_t rows = 0;     ///< samples
  int64_t inputs = 0;   ///< k: input features summed over
  int64_t outputs = 0;  ///< n: output units computed
  const float* x = nullptr;  ///< [rows × inputs], row stride x_stride
  int64_t x_stride = 0;
  const float* w = nullptr;  ///< [inputs × outputs], contiguous
  const float* bias = nullptr;  ///< [outputs], or null for none
  Activation activation = Activation::kNone;
  float* y = nullptr;  ///< [rows × outputs], row stride y_stride
  int64_t y_stride = 0;
};

/// y[r, j] = act(Σ_i x[r, i]·w[i, j] + bias[j]). A slice of a layer is the
/// same call on the slice's columns of W (output units) and rows of W (a
/// partial reduction: pass no bias unless the slice starts the reduction, and
/// no activation).
void dense(ParallelFor& parallel, const DenseArgs& args);

}  // namespace splitscope
