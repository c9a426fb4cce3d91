#pragma once
/// \file
/// Max and average pooling, per channel, with optional zero-width padding
/// (docs/network-format.md: output floor((H + 2·padding - kernel) / stride) + 1).
/// Padding adds window positions, never values: a max and an average are over
/// the window's real elements only (cuDNN's AVERAGE_COUNT_EXCLUDE_PADDING).
/// Tensors are [channels][height][width] per sample.

#include <algorithm>
#include <cstdint>
#include <utility>

#include "ir/op.hpp"

namespace splitscope {

struct PoolArgs {
  int64_t rows = 0;      ///< samples
  int64_t channels = 0;  ///< channels pooled (a slice pools only its own)
  int64_t in_h = 0;
  int64_t in_w = 0;
  int64_t kernel_h = 1;
  int64_t kernel_w = 1;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  const float* input = nullptr;  ///< [rows][channels][in_h][in_w], `input_stride` between samples
  int64_t input_stride = 0;
  float* output = nullptr;  ///< [rows][channels][out_h][out_w], `output_stride` between samples
  int64_t output_stride = 0;
  int64_t pad_h = 0;  ///< at most kernel_h / 2, so every window holds a real element
  int64_t pad_w = 0;

  int64_t out_h() const { return (in_h + 2 * pad_h - kernel_h) / stride_h + 1; }
  int64_t out_w() const { return (in_w + 2 * pad_w - kernel_w) / stride_w + 1; }
  /// The input rows [begin, end) of output row y's windows, clipped to the input.
  std::pair<int64_t, int64_t> rows_of(int64_t y) const { return clipped(y * stride_h - pad_h, kernel_h, in_h); }
  /// The input columns [begin, end) of output column x's windows, clipped to the input.
  std::pair<int64_t, int64_t> cols_of(int64_t x) const { return clipped(x * stride_w - pad_w, kernel_w, in_w); }

 private:
  static std::pair<int64_t, int64_t> clipped(int64_t begin, int64_t size, int64_t limit) {
    return {std::max<int64_t>(begin, 0), std::min(begin + size, limit)};
  }
};

/// The pooling geometry of a maxpool/avgpool layer, for `channels` channels.
PoolArgs pool_geometry(const OpNode& pool, int64_t channels);

/// out = the largest element of each kernel window.
void max_pool(const PoolArgs& args);
/// out = the mean of each kernel window's real elements (padding not counted).
void avg_pool(const PoolArgs& args);

}  // namespace splitscope
