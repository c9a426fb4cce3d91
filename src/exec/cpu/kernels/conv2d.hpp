#pragma once
/// \file
/// A (grouped) 2-D convolution, or a slice of its filters, by im2col + sgemm.
/// Tensors are [channels][height][width] per sample (NCHW).

#include <cstdint>

#include "exec/cpu/kernels/parallel_for.hpp"
#include "ir/op.hpp"
#include "ir/ops/conv_geometry.hpp"
#include "ir/range.hpp"

namespace splitscope {

/// Floats of scratch conv2d() needs: one group's im2col matrix for one sample.
int64_t conv2d_workspace_floats(const ConvGeometry& geometry);

struct Conv2dArgs {
  ConvGeometry geometry;
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
void im2col(ParallelFor& parallel, const ConvGeometry& geometry, int64_t channels,
            const float* input, float* columns);

}  // namespace splitscope
