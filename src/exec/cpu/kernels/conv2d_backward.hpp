#pragma once
/// \file
/// The backward pass of a (grouped) 2-D convolution, or of a slice of its
/// filters, by the same im2col + sgemm as the forward pass.
/// Tensors are NCHW per sample: inputs [rows][Cin][H][W], output gradients
/// [rows][Cout][out_h][out_w], weights [Cout][Cin/groups][kh][kw]. Both
/// kernels take dz, the gradient of the pre-activation output (the
/// activation's derivative is applied before, by activation_grad_rows()).

#include <cstdint>

#include "exec/cpu/kernels/conv2d.hpp"
#include "exec/cpu/kernels/parallel_for.hpp"

namespace splitscope {

/// Floats of scratch both kernels need: one group's im2col matrix of one
/// sample, as conv2d_workspace_floats().
int64_t conv2d_backward_workspace_floats(const ConvGeometry& geometry);

struct Conv2dGradInputArgs {
  ConvGeometry geometry;
  Range filters;   ///< the filters summed over, [f0, f1) of [0, Cout); empty: all of them
  Range channels;  ///< the input channels written: whole groups covering the filters' groups; empty: all
  int64_t rows = 0;  ///< samples
  const float* dz = nullptr;  ///< [rows][f1 - f0][out_h][out_w], `dz_stride` floats between samples
  int64_t dz_stride = 0;
  const float* weights = nullptr;  ///< [f1 - f0][Cin/groups][kh][kw], contiguous: the forward weights
  float* dx = nullptr;  ///< [rows][channels][H][W], `dx_stride` floats between samples; overwritten
  int64_t dx_stride = 0;
  float* workspace = nullptr;  ///< conv2d_backward_workspace_floats(geometry) floats
};

/// dx = the adjoint of the convolution over `filters`: per sample and group
/// they touch, columns = W_gᵀ·dz_g over the group's filters in the slice (one
/// sgemm, [patch × pixels]), then col2im() adds each column back to the
/// input pixels it was read from (what fell on the zero padding is dropped).
/// Channels of groups the filters do not touch are zero. Samples and groups
/// run one after the other through the one workspace; the sgemm and col2im
/// (by channel) are split over `parallel`.
void conv2d_grad_input(ParallelFor& parallel, const Conv2dGradInputArgs& args);

struct Conv2dGradWeightArgs {
  ConvGeometry geometry;
  Range filters;  ///< the filters whose weights it differentiates, [f0, f1) of [0, Cout); empty: all
  int64_t rows = 0;  ///< samples, summed over
  /// [rows][..][H][W] from input channel conv_input_channels(filters).begin
  /// (as conv2d()'s input), `x_stride` floats between samples: the forward input
  const float* x = nullptr;
  int64_t x_stride = 0;
  const float* dz = nullptr;  ///< [rows][f1 - f0][out_h][out_w], `dz_stride` floats between samples
  int64_t dz_stride = 0;
  /// Running sums to add to (gradients of earlier micro-batches), or null:
  /// start from zero. Either separate buffers or exactly dw / db.
  const float* previous_w = nullptr;  ///< [f1 - f0][Cin/groups][kh][kw]
  const float* previous_b = nullptr;  ///< [f1 - f0]
  float* dw = nullptr;  ///< [f1 - f0][Cin/groups][kh][kw], contiguous
  float* db = nullptr;  ///< [f1 - f0], or null when the layer has no bias
  float* workspace = nullptr;  ///< conv2d_backward_workspace_floats(geometry) floats
};

/// dw_g = previous_w_g + Σ_samples dz_g·im2col(x_g)ᵀ per group g the filters
/// touch, and db[f] = previous_b[f] + Σ over samples and pixels of dz[f]. The sum over
/// samples accumulates in dw itself (sgemm with beta = 1), so samples run one
/// after the other; each im2col and sgemm is split over `parallel`.
void conv2d_grad_weight(ParallelFor& parallel, const Conv2dGradWeightArgs& args);

/// The adjoint of im2col() for `channels` channels of one sample: adds
/// columns[(c·kh + i)·kw + j, y·out_w + x] into input[c, y·sh - ph + i,
/// x·sw - pw + j] when that lies inside the input (the rest fell on zero
/// padding). Adds, so the caller zeroes `input` first; overlapping windows
/// (stride < kernel) add up. Channel c only writes channel c, so disjoint
/// channel ranges may run concurrently.
void col2im(const ConvGeometry& geometry, int64_t channels, const float* columns, float* input);

}  // namespace splitscope
