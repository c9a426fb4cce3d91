#pragma once
/// \file
/// The geometry of a (grouped) 2-D convolution or a pooling window over NCHW
/// planes: the one type the cpu kernels, the CUDA plan compiler's steps, the
/// simulator's convolution prices and the tests describe a window with.
/// Output size: floor((H + 2·padding − kernel) / stride) + 1
/// (docs/network-format.md).

#include <algorithm>
#include <cstdint>
#include <utility>

#include "ir/op.hpp"

namespace splitscope {

struct ConvGeometry {
  int64_t in_channels = 0;  ///< C, over all groups (pooling: the channels pooled)
  int64_t in_h = 0;
  int64_t in_w = 0;
  int64_t filters = 0;      ///< output channels, over all groups (pooling: in_channels)
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
  /// The input rows [begin, end) of output row y's window, clipped to the input.
  std::pair<int64_t, int64_t> rows_of(int64_t y) const { return clipped(y * stride_h - pad_h, kernel_h, in_h); }
  /// The input columns [begin, end) of output column x's window, clipped to the input.
  std::pair<int64_t, int64_t> cols_of(int64_t x) const { return clipped(x * stride_w - pad_w, kernel_w, in_w); }

 private:
  static std::pair<int64_t, int64_t> clipped(int64_t begin, int64_t size, int64_t limit) {
    return {std::max<int64_t>(begin, 0), std::min(begin + size, limit)};
  }
};

/// The geometry of the convolution of a [C, H, W] `input` into `filters`
/// channels with `attrs`' kernel, stride, padding and groups: a conv2d
/// node's, or that of one of its gradient ops (whose shapes are the layer's,
/// in another order).
ConvGeometry conv_geometry(const OpAttrs& attrs, const Shape& input, int64_t filters);
/// The geometry of a conv2d node.
ConvGeometry conv_geometry(const OpNode& conv);
/// The window of a pooling layer whose input planes are `input` ([C, H, W])
/// with `attrs`' kernel, stride and padding, over `channels` of its channels
/// (a slice pools only its own): a maxpool or avgpool node's, or that of its
/// gradient (whose output is the layer's input).
ConvGeometry pool_geometry(const OpAttrs& attrs, const Shape& input, int64_t channels);
/// The window of a maxpool or avgpool node over `channels` of its channels.
ConvGeometry pool_geometry(const OpNode& pool, int64_t channels);

}  // namespace splitscope
