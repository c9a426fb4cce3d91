#include "exec/cpu/kernels/pooling_backward.hpp"

#include <algorithm>
#include <limits>

namespace splitscope {
namespace {

/// Zeroes dx, then calls `scatter(in, dx, y, x, g)` for every window of every
/// channel of every sample, with `in`/`dx` that channel's planes (top-left
/// element of the plane) and g the window's output gradient.
template <typename Scatter>
void scatter_windows(const PoolArgs& args, const float* dy, int64_t dy_stride, float* dx,
                     int64_t dx_stride, Scatter scatter) {
  const ConvGeometry& a = args.window;
  const int64_t out_h = a.out_h();
  const int64_t out_w = a.out_w();
  const int64_t plane = a.in_h * a.in_w;
  for (int64_t n = 0; n < args.rows; ++n) {
    std::fill_n(dx + n * dx_stride, a.in_channels * plane, 0.0f);
    for (int64_t c = 0; c < a.in_channels; ++c) {
      const float* in = args.input != nullptr ? args.input + n * args.input_stride + c * plane : nullptr;
      float* grad_in = dx + n * dx_stride + c * plane;
      const float* grad_out = dy + n * dy_stride + c * out_h * out_w;
      for (int64_t y = 0; y < out_h; ++y) {
        for (int64_t x = 0; x < out_w; ++x) scatter(in, grad_in, y, x, grad_out[y * out_w + x]);
      }
    }
  }
}

}  // namespace

void max_pool_grad(const PoolArgs& args, const float* dy, int64_t dy_stride, float* dx,
                   int64_t dx_stride) {
  scatter_windows(args, dy, dy_stride, dx, dx_stride,
                  [&](const float* in, float* grad_in, int64_t y, int64_t x, float g) {
    // The same scan as max_pool(): std::max(acc, v) replaces acc only when
    // acc < v, so the first of equal maxima wins and NaN never does.
    const auto [top, bottom] = args.window.rows_of(y);
    const auto [left, right] = args.window.cols_of(x);
    float best = -std::numeric_limits<float>::infinity();
    int64_t best_at = top * args.window.in_w + left;
    for (int64_t i = top; i < bottom; ++i) {
      for (int64_t j = left; j < right; ++j) {
        if (best < in[i * args.window.in_w + j]) {
          best = in[i * args.window.in_w + j];
          best_at = i * args.window.in_w + j;
        }
      }
    }
    grad_in[best_at] += g;
  });
}

void avg_pool_grad(const PoolArgs& args, const float* dy, int64_t dy_stride, float* dx,
                   int64_t dx_stride) {
  scatter_windows(args, dy, dy_stride, dx, dx_stride,
                  [&](const float*, float* grad_in, int64_t y, int64_t x, float g) {
    const auto [top, bottom] = args.window.rows_of(y);
    const auto [left, right] = args.window.cols_of(x);
    // The forward pass's own scale, 1/count rounded to float, so the two are adjoints.
    const float share = g * (1.0f / static_cast<float>((bottom - top) * (right - left)));
    for (int64_t i = top; i < bottom; ++i) {
      for (int64_t j = left; j < right; ++j) grad_in[i * args.window.in_w + j] += share;
    }
  });
}

}  // namespace splitscope
