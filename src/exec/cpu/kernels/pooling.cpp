#include "exec/cpu/kernels/pooling.hpp"

#include <algorithm>
#include <limits>

namespace splitscope {
namespace {

template <typename Reduce>
void pool(const PoolArgs& args, float initial, Reduce reduce, bool mean) {
  const ConvGeometry& a = args.window;
  const int64_t out_h = a.out_h();
  const int64_t out_w = a.out_w();
  for (int64_t n = 0; n < args.rows; ++n) {
    for (int64_t c = 0; c < a.in_channels; ++c) {
      const float* in = args.input + n * args.input_stride + c * a.in_h * a.in_w;
      float* out = args.output + n * args.output_stride + c * out_h * out_w;
      for (int64_t y = 0; y < out_h; ++y) {
        const auto [top, bottom] = a.rows_of(y);
        for (int64_t x = 0; x < out_w; ++x) {
          const auto [left, right] = a.cols_of(x);
          float acc = initial;
          for (int64_t i = top; i < bottom; ++i) {
            for (int64_t j = left; j < right; ++j) acc = reduce(acc, in[i * a.in_w + j]);
          }
          // 1/count rounded to float, as the backward pass scales by it.
          out[y * out_w + x] = mean ? acc * (1.0f / static_cast<float>((bottom - top) * (right - left))) : acc;
        }
      }
    }
  }
}

}  // namespace

void max_pool(const PoolArgs& args) {
  pool(args, -std::numeric_limits<float>::infinity(), [](float a, float b) { return std::max(a, b); }, false);
}

void avg_pool(const PoolArgs& args) {
  pool(args, 0.0f, [](float a, float b) { return a + b; }, true);
}

}  // namespace splitscope
