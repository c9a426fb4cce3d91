#pragma once
/// \file
/// The backward pass of max and average pooling (padding as in pooling.hpp), per channel.
/// Tensors are [channels][height][width] per sample, as for pooling.hpp.

#include <cstdint>

#include "exec/cpu/kernels/pooling.hpp"

namespace splitscope {

/// dx = 0, then each window's output gradient dy[n, c, y, x] is added to the
/// one element that max_pool() took as the window's largest: the first
/// largest in row-major window order (max_pool() keeps its running maximum on
/// ties). Windows that overlap may send several gradients to one element.
/// A window with no element above -inf (all -inf or NaN) sends its gradient
/// to its first real element. `args.input` is the forward input; `args.output`
/// and `args.output_stride` are not used. dy is [rows][channels][out_h][out_w]
/// with `dy_stride` floats between samples, dx [rows][channels][in_h][in_w]
/// with `dx_stride`.
void max_pool_grad(const PoolArgs& args, const float* dy, int64_t dy_stride, float* dx,
                   int64_t dx_stride);

/// dx = 0, then each window's gradient / (its real elements) is added to every
/// real element of the window (overlapping windows add up; elements in no window get 0).
/// `args.input`, `args.output` and `args.output_stride` are not used.
void avg_pool_grad(const PoolArgs& args, const float* dy, int64_t dy_stride, float* dx,
                   int64_t dx_stride);

}  // namespace splitscope
