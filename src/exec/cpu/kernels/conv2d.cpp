#include "exec/cpu/kernels/conv2d.hpp"

#include <algorithm>

#include "exec/cpu/kernels/activation.hpp"
#include "exec/cpu/kernels/gemm.hpp"
#include "util/copy_grain.hpp"

namespace splitscope {

int64_t conv2d_workspace_floats(const ConvGeometry& geometry) {
  return geometry.patch_size() * geometry.out_h() * geometry.out_w();
}

void im2col(ParallelFor& parallel, const ConvGeometry& g, int64_t channels, const float* input,
            float* columns) {
  const int64_t out_h = g.out_h();
  const int64_t out_w = g.out_w();
  const int64_t patch_rows = channels * g.kernel_h * g.kernel_w;
  const int64_t plane = g.in_h * g.in_w;
  parallel.run(patch_rows, copy_grain_rows(out_h * out_w), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t c = row / (g.kernel_h * g.kernel_w);
      const int64_t i = (row / g.kernel_w) % g.kernel_h;
      const int64_t j = row % g.kernel_w;
      const float* in = input + c * plane;
      float* out = columns + row * out_h * out_w;
      for (int64_t y = 0; y < out_h; ++y) {
        const int64_t in_y = y * g.stride_h - g.pad_h + i;
        float* out_row = out + y * out_w;
        if (in_y < 0 || in_y >= g.in_h) {
          std::fill_n(out_row, out_w, 0.0f);
          continue;
        }
        const float* in_row = in + in_y * g.in_w;
        for (int64_t x = 0; x < out_w; ++x) {
          const int64_t in_x = x * g.stride_w - g.pad_w + j;
          out_row[x] = (in_x >= 0 && in_x < g.in_w) ? in_row[in_x] : 0.0f;
        }
      }
    }
  });
}

void conv2d(ParallelFor& parallel, const Conv2dArgs& args) {
  const ConvGeometry& g = args.geometry;
  const int64_t pixels = g.out_h() * g.out_w();
  const int64_t plane = g.in_h * g.in_w;
  const int64_t per_group = g.filters_per_group();
  const int64_t patch = g.patch_size();
  const int64_t first_group = args.filters.begin / per_group;
  const int64_t last_group = (args.filters.end - 1) / per_group;
  for (int64_t n = 0; n < args.rows; ++n) {
    const float* sample = args.input + n * args.input_stride;
    float* out = args.output + n * args.output_stride;
    for (int64_t group = first_group; group <= last_group; ++group) {
      // The filters of this group that the slice computes, relative to the slice.
      const int64_t f0 = std::max(args.filters.begin, group * per_group);
      const int64_t f1 = std::min(args.filters.end, (group + 1) * per_group);
      const int64_t local = f0 - args.filters.begin;
      const float* group_input = sample + (group - first_group) * g.channels_per_group() * plane;
      im2col(parallel, g, g.channels_per_group(), group_input, args.workspace);
      float* group_output = out + local * pixels;
      float beta = 0.0f;
      if (args.bias != nullptr) {
        for (int64_t f = 0; f < f1 - f0; ++f) {
          std::fill_n(group_output + f * pixels, pixels, args.bias[local + f]);
        }
        beta = 1.0f;
      }
      gemm(parallel, f1 - f0, pixels, patch, {args.weights + local * patch, patch},
           {args.workspace, pixels}, beta, group_output, pixels);
    }
    activation_in_place(args.activation, out, 0, 1, (args.filters.size()) * pixels);
  }
}

}  // namespace splitscope
