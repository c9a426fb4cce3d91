#include "exec/cpu/kernels/activation.hpp"

namespace splitscope {
namespace {

template <typename F>
void map_rows(const float* in, int64_t in_stride, float* out, int64_t out_stride, int64_t rows,
              int64_t cols, F f) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* src = in + r * in_stride;
    float* dst = out + r * out_stride;
    for (int64_t j = 0; j < cols; ++j) dst[j] = f(src[j]);
  }
}

/// dst = f(dy, y) element-wise over rows of three strided matrices.
template <typename F>
void map_grad_rows(const float* dy, int64_t dy_stride, const float* y, int64_t y_stride, float* dx,
                   int64_t dx_stride, int64_t rows, int64_t width, F f) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* g = dy + r * dy_stride;
    const float* out = y + r * y_stride;
    float* dst = dx + r * dx_stride;
    for (int64_t j = 0; j < width; ++j) dst[j] = f(g[j], out[j]);
  }
}

}  // namespace

void activation_rows(Activation activation, const float* in, int64_t in_stride, float* out,
                     int64_t out_stride, int64_t rows, int64_t cols) {
  // One loop per activation, so that each inner loop is a plain map the compiler vectorises.
  switch (activation) {
    case Activation::kNone:
      if (in == out && in_stride == out_stride) return;
      map_rows(in, in_stride, out, out_stride, rows, cols, [](float x) { return x; });
      return;
    case Activation::kRelu:
      map_rows(in, in_stride, out, out_stride, rows, cols, [](float x) { return x > 0.0f ? x : 0.0f; });
      return;
    case Activation::kTanh:
      map_rows(in, in_stride, out, out_stride, rows, cols, [](float x) { return std::tanh(x); });
      return;
    case Activation::kSigmoid:
      map_rows(in, in_stride, out, out_stride, rows, cols, [](float x) { return sigmoid(x); });
      return;
  }
}

void activation_grad_rows(Activation activation, const float* dy, int64_t dy_stride, const float* y,
                          int64_t y_stride, float* dx, int64_t dx_stride, int64_t rows,
                          int64_t width) {
  // As activation_rows(): one plain loop per activation, for the vectoriser.
  switch (activation) {
    case Activation::kNone:
      // y is not read (it may be null): dx = dy.
      if (dx == dy && dx_stride == dy_stride) return;
      map_rows(dy, dy_stride, dx, dx_stride, rows, width, [](float g) { return g; });
      return;
    case Activation::kRelu:
      map_grad_rows(dy, dy_stride, y, y_stride, dx, dx_stride, rows, width,
                    [](float g, float out) { return out > 0.0f ? g : 0.0f; });
      return;
    case Activation::kTanh:
      map_grad_rows(dy, dy_stride, y, y_stride, dx, dx_stride, rows, width,
                    [](float g, float out) { return g * (1.0f - out * out); });
      return;
    case Activation::kSigmoid:
      map_grad_rows(dy, dy_stride, y, y_stride, dx, dx_stride, rows, width,
                    [](float g, float out) { return g * out * (1.0f - out); });
      return;
  }
}

void activation_in_place(Activation activation, float* data, int64_t stride, int64_t rows,
                         int64_t cols) {
  activation_rows(activation, data, stride, data, stride, rows, cols);
}

}  // namespace splitscope
