#pragma once
/// \file
/// Element-wise activations, on rows of a strided matrix.

#include <cmath>
#include <cstdint>

#include "ir/op_attrs.hpp"

namespace splitscope {

inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

/// f(x) for one element; the identity for Activation::kNone.
inline float activate(Activation activation, float x) {
  switch (activation) {
    case Activation::kNone: return x;
    case Activation::kRelu: return x > 0.0f ? x : 0.0f;
    case Activation::kTanh: return std::tanh(x);
    case Activation::kSigmoid: return sigmoid(x);
  }
  return x;
}

/// out[r·out_stride + j] = f(in[r·in_stride + j]) for r < rows, j < cols.
/// `in` and `out` may be the same matrix (same pointer and stride).
void activation_rows(Activation activation, const float* in, int64_t in_stride, float* out,
                     int64_t out_stride, int64_t rows, int64_t cols);

/// In place over rows of a strided matrix.
void activation_in_place(Activation activation, float* data, int64_t stride, int64_t rows,
                         int64_t cols);

/// dx[r, j] = dy[r, j]·f'(x[r, j]), computed from the activation's OUTPUT
/// y = f(x), which the forward pass keeps anyway (the pre-activation sum is
/// overwritten in place): relu y > 0 ? 1 : 0; tanh 1 - y²; sigmoid y·(1 - y);
/// none 1 (y is then not read and may be null). Relu's derivative at 0 is
/// taken as 0. `dx` may be `dy` (same pointer and stride).
void activation_grad_rows(Activation activation, const float* dy, int64_t dy_stride, const float* y,
                          int64_t y_stride, float* dx, int64_t dx_stride, int64_t rows,
                          int64_t width);

}  // namespace splitscope
