#pragma once
/// \file
/// GELU, x·Φ(x) (PyTorch's default, exact erf form), and its gradient from X.

#include <cstdint>

namespace splitscope {

/// y = x·Φ(x) over `rows` strided rows of `width` floats.
void gelu_rows(const float* x, int64_t x_stride, float* y, int64_t y_stride, int64_t rows, int64_t width);

/// dx = dy ⊙ (Φ(x) + x·φ(x)).
void gelu_grad_rows(const float* x, int64_t x_stride, const float* dy, int64_t dy_stride, float* dx,
                    int64_t dx_stride, int64_t rows, int64_t width);

}  // namespace splitscope
