#include "exec/cpu/kernels/gelu.hpp"

#include <cmath>
#include <numbers>

namespace splitscope {

void gelu_rows(const float* x, int64_t x_stride, float* y, int64_t y_stride, int64_t rows, int64_t width) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < width; ++i) {
      const double v = x[r * x_stride + i];
      y[r * y_stride + i] = static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::numbers::sqrt2)));
    }
  }
}

void gelu_grad_rows(const float* x, int64_t x_stride, const float* dy, int64_t dy_stride, float* dx,
                    int64_t dx_stride, int64_t rows, int64_t width) {
  const double inv_sqrt_2pi = 0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < width; ++i) {
      const double v = x[r * x_stride + i];
      const double cdf = 0.5 * (1.0 + std::erf(v / std::numbers::sqrt2));
      const double pdf = inv_sqrt_2pi * std::exp(-0.5 * v * v);
      dx[r * dx_stride + i] = static_cast<float>(dy[r * dy_stride + i] * (cdf + v * pdf));
    }
  }
}

}  // namespace splitscope
