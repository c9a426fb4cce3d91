#include "exec/cpu/kernels/pooling.hpp"

#include <algorithm>
#include <limits>

namespace splitscope {
namespace {

template <typename Reduce>
void pool(const PoolArgs& a, float initial, Reduce reduce, bool mean) {
  const int64_t out_h = a.out_h();
  const int64_t out_w = a.out_w();
  for (int64_t n = 0; n < a.rows; ++n) {
    for (int64_t c = 0; c < a.channels; ++c) {
      const float* in = a.input + n * a.input_stride + c * a.in_h * a.in_w;
      float* out = a.output + n * a.output_stride + c * out_h * out_w;
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

PoolArgs pool_geometry(const OpNode& pool, int64_t channels) {
  PoolArgs args;
  args.channels = channels;
  args.in_h = pool.input_shapes.at(0).at(1);
  args.in_w = pool.input_shapes.at(0).at(2);
  args.kernel_h = pool.attrs.kernel.h;
  args.kernel_w = pool.attrs.kernel.w;
  args.stride_h = pool.attrs.stride.h;
  args.stride_w = pool.attrs.stride.w;
  args.pad_h = pool.attrs.padding.h;
  args.pad_w = pool.attrs.padding.w;
  return args;
}

void max_pool(const PoolArgs& args) {
  pool(args, -std::numeric_limits<float>::infinity(), [](float a, float b) { return std::max(a, b); }, false);
}

void avg_pool(const PoolArgs& args) {
  pool(args, 0.0f, [](float a, float b) { return a + b; }, true);
}

}  // namespace splitscope
