#pragma once
/// \file
/// A (grouped) 2-D convolution, or a slice of its filters, by im2col + sgemm.
/// Tensors are [channels][height][width] per sample (NCHW).

#include <cstdint>

#include "exec/cpu/kernels/parallel_for.hpp"
#include "ir/op.hpp"
#include "ir/range.hpp"

namespace splitscope {

/// The whole layer's geometry (every filter, every group).
struct Conv2dGeometry {
  int64_t in_channels = 0;  ///< Cin, over all groups
  int64_t in_h = 0;
  int64_t in_w = 0;
  int64_t filters = 0;      ///< Cout, over all groups
  int64_t groups = 1;
  int64_t kernel_h = 1;
  int64_t kernel_w = 1;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  int64_t pad_h = 0;
  int64_t pad_w = 0;

  int64_t out_h() const { return (in_h + 2 * pad_h - kernel_h) / stride_h + 1; }
  int64_t out_w() const { return (in_w + 2 * pad_w - kernel_w) / stride_w + 1; }
  int64_t channels_per_group() const { return in_channels / groups; }
  int64_t filters_per_group() const { return filters / groups; }
  /// Rows of one group's im2col matrix: (Cin/groups)·kh·kw.
  int64_t patch_size() const { return channels_per_group() * kernel_h * kernel_w; }
};

/// The geometry of a conv2d layer.
Conv2dGeometry conv2d_geometry(const OpNode& conv);
/// The geometry of the convolution of an [C, H, W] `input` into `filters`
/// channels with `attrs`' kernel, stride, padding and groups: a conv2d
/// node's, or that of one of its gradient ops (whose shapes are the layer's,
/// in another order).
Conv2dGeometry conv2d_geometry(const OpAttrs& attrs, const Shape& input, int64_t filters);

/// Floats of scratch conv2d() needs: one group's im2col matrix for one sample.
int64_t conv2d_workspace_floats(const Conv2dGeometry& geometry);

struct Conv2dArgs {
  Conv2dGeometry geometry;
  Range filters;   ///< the filters computed, [f0, f1) of [0, Cout)
  int64_t rows = 0;  ///< samples
  /// Input channel conv_input_channels(filters).begin of sample 0 (the first
  /// channel of the first group the slice touches); `input_stride` floats
  /// between samples.
  const float* input = nullptr;
  int64_t input_stride = 0;
  const float* weights = nullptr;  ///< [f1 - f0][Cin/groups][kh][kw], contiguous
  const float* bias = nullptr;     ///< [f1 - f0], or null for none
  Activation activation = Activation::kNone;
  float* output = nullptr;  ///< [rows][f1 - f0][out_h][out_w], `output_stride` floats between samples
  int64_t output_stride = 0;
  float* workspace = nullptr;  ///< conv2d_workspace_floats(geometry) floats
};

/// output[n, f, y, x] = act(bias[f] + Σ_{c, i, j} w[f, c, i, j]·in[n, g·Cin/G + c,
/// y·sh - ph + i, x·sw - pw + j]) for each filter f of the slice, g its group,
/// reading zeros outside the input. Per sample and group: one im2col, one sgemm.
void conv2d(ParallelFor& parallel, const Conv2dArgs& args);

/// The im2col matrix of `channels` channels of one sample: row (c·kh + i)·kw + j,
/// column y·out_w + x holds in[c, y·sh - ph + i, x·sw - pw + j] (0 outside).
void im2col(ParallelFor& parallel, const Conv2dGeometry& geometry, int64_t channels,
            const float* input, float* columns);

}  // namespace splitscope
