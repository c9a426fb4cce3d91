#include "exec/cpu/kernels/conv2d_backward.hpp"

#include <algorithm>

#include "exec/cpu/kernels/gemm.hpp"

namespace splitscope {

int64_t conv2d_backward_workspace_floats(const ConvGeometry& geometry) {
  return conv2d_workspace_floats(geometry);
}

void col2im(const ConvGeometry& g, int64_t channels, const float* columns, float* input) {
  const int64_t out_h = g.out_h();
  const int64_t out_w = g.out_w();
  const int64_t plane = g.in_h * g.in_w;
  const int64_t patch_rows = channels * g.kernel_h * g.kernel_w;
  // Row by row of the im2col matrix, mirroring im2col()'s loop: each row is
  // one (channel, i, j) tap, and its pixels scatter into one channel plane.
  for (int64_t row = 0; row < patch_rows; ++row) {
    const int64_t c = row / (g.kernel_h * g.kernel_w);
    const int64_t i = (row / g.kernel_w) % g.kernel_h;
    const int64_t j = row % g.kernel_w;
    float* in = input + c * plane;
    const float* column_row = columns + row * out_h * out_w;
    for (int64_t y = 0; y < out_h; ++y) {
      const int64_t in_y = y * g.stride_h - g.pad_h + i;
      if (in_y < 0 || in_y >= g.in_h) continue;
      float* in_row = in + in_y * g.in_w;
      const float* from = column_row + y * out_w;
      for (int64_t x = 0; x < out_w; ++x) {
        const int64_t in_x = x * g.stride_w - g.pad_w + j;
        if (in_x >= 0 && in_x < g.in_w) in_row[in_x] += from[x];
      }
    }
  }
}

namespace {

Range or_all(Range range, int64_t all) { return range.size() > 0 ? range : Range{0, all}; }

}  // namespace

void conv2d_grad_input(ParallelFor& parallel, const Conv2dGradInputArgs& args) {
  const ConvGeometry& g = args.geometry;
  const Range filters = or_all(args.filters, g.filters);
  const Range channels = or_all(args.channels, g.in_channels);
  const int64_t pixels = g.out_h() * g.out_w();
  const int64_t plane = g.in_h * g.in_w;
  const int64_t per_group = g.filters_per_group();
  const int64_t group_channels = g.channels_per_group();
  const int64_t patch = g.patch_size();
  const int64_t taps = g.kernel_h * g.kernel_w;
  const int64_t first_group = filters.begin / per_group;
  const int64_t last_group = (filters.end - 1) / per_group;
  for (int64_t n = 0; n < args.rows; ++n) {
    const float* dz = args.dz + n * args.dz_stride;
    float* dx = args.dx + n * args.dx_stride;
    std::fill_n(dx, channels.size() * plane, 0.0f);
    for (int64_t group = first_group; group <= last_group; ++group) {
      // The group's filters in the slice, relative to the slice.
      const int64_t f0 = std::max(filters.begin, group * per_group);
      const int64_t f1 = std::min(filters.end, (group + 1) * per_group);
      const int64_t local = f0 - filters.begin;
      // columns[patch × pixels] = W_gᵀ·dz_g, W_g stored [its filters × patch].
      gemm_transposed(parallel, Transpose::kYes, Transpose::kNo, patch, pixels, f1 - f0,
                      {args.weights + local * patch, patch}, {dz + local * pixels, pixels}, 0.0f, args.workspace,
                      pixels);
      float* group_dx = dx + (group * group_channels - channels.begin) * plane;
      parallel.run(group_channels, 1, [&](int64_t begin, int64_t end) {
        col2im(g, end - begin, args.workspace + begin * taps * pixels, group_dx + begin * plane);
      });
    }
  }
}

void conv2d_grad_weight(ParallelFor& parallel, const Conv2dGradWeightArgs& args) {
  const ConvGeometry& g = args.geometry;
  const Range filters = or_all(args.filters, g.filters);
  const int64_t pixels = g.out_h() * g.out_w();
  const int64_t plane = g.in_h * g.in_w;
  const int64_t per_group = g.filters_per_group();
  const int64_t channels = g.channels_per_group();
  const int64_t patch = g.patch_size();
  const int64_t w_size = filters.size() * patch;
  const int64_t first_group = filters.begin / per_group;
  const int64_t last_group = (filters.end - 1) / per_group;
  if (args.previous_w == nullptr) {
    std::fill_n(args.dw, w_size, 0.0f);
  } else if (args.previous_w != args.dw) {
    std::copy_n(args.previous_w, w_size, args.dw);
  }
  for (int64_t n = 0; n < args.rows; ++n) {
    const float* x = args.x + n * args.x_stride;
    const float* dz = args.dz + n * args.dz_stride;
    for (int64_t group = first_group; group <= last_group; ++group) {
      const int64_t f0 = std::max(filters.begin, group * per_group);
      const int64_t f1 = std::min(filters.end, (group + 1) * per_group);
      const int64_t local = f0 - filters.begin;
      im2col(parallel, g, channels, x + (group - first_group) * channels * plane, args.workspace);
      // dw_g[its filters × patch] += dz_g[its filters × pixels]·columnsᵀ, columns stored [patch × pixels].
      gemm_transposed(parallel, Transpose::kNo, Transpose::kYes, f1 - f0, patch, pixels,
                      {dz + local * pixels, pixels}, {args.workspace, pixels}, 1.0f, args.dw + local * patch, patch);
    }
  }
  if (args.db == nullptr) return;
  // Each filter's sum over samples and pixels is its own: split by filter.
  // A double accumulator, as one filter may sum rows·pixels (10⁵ and more) terms.
  parallel.run(filters.size(), 16, [&](int64_t begin, int64_t end) {
    for (int64_t f = begin; f < end; ++f) {
      double sum = args.previous_b != nullptr ? args.previous_b[f] : 0.0;
      for (int64_t n = 0; n < args.rows; ++n) {
        const float* row = args.dz + n * args.dz_stride + f * pixels;
        for (int64_t p = 0; p < pixels; ++p) sum += row[p];
      }
      args.db[f] = static_cast<float>(sum);
    }
  });
}

}  // namespace splitscope
