#pragma once
// PoolArgs of a square window, for the pooling kernels' tests.

#include <cstdint>

#include "exec/cpu/kernels/pooling.hpp"

namespace splitscope::testing_support {

inline PoolArgs pool_args(int64_t rows, int64_t channels, int64_t in_h, int64_t in_w, int64_t kernel, int64_t stride,
                          int64_t pad, const float* input, int64_t input_stride, float* output,
                          int64_t output_stride) {
  PoolArgs args;
  args.rows = rows;
  args.window.in_channels = args.window.filters = channels;
  args.window.in_h = in_h;
  args.window.in_w = in_w;
  args.window.kernel_h = args.window.kernel_w = kernel;
  args.window.stride_h = args.window.stride_w = stride;
  args.window.pad_h = args.window.pad_w = pad;
  args.input = input;
  args.input_stride = input_stride;
  args.output = output;
  args.output_stride = output_stride;
  return args;
}

}  // namespace splitscope::testing_support
