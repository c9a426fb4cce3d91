#pragma once
/// \file
/// Max and average pooling, per channel, with optional zero-width padding
/// (docs/network-format.md: output floor((H + 2·padding - kernel) / stride) + 1).
/// Padding adds window positions, never values: a max and an average are over
/// the window's real elements only (cuDNN's AVERAGE_COUNT_EXCLUDE_PADDING).
/// Tensors are [channels][height][width] per sample.

#include <cstdint>

#include "ir/ops/conv_geometry.hpp"

namespace splitscope {

struct PoolArgs {
  int64_t rows = 0;     ///< samples
  /// in_channels: the channels pooled (a slice pools only its own); padding at
  /// most kernel / 2, so that every window holds a real element.
  ConvGeometry window;
  const float* input = nullptr;  ///< [rows][channels][in_h][in_w], `input_stride` between samples
  int64_t input_stride = 0;
  float* output = nullptr;  ///< [rows][channels][out_h][out_w], `output_stride` between samples
  int64_t output_stride = 0;
};

/// out = the largest element of each kernel window.
void max_pool(const PoolArgs& args);
/// out = the mean of each kernel window's real elements (padding not counted).
void avg_pool(const PoolArgs& args);

}  // namespace splitscope
