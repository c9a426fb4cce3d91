#pragma once
/// \file
/// Max and average pooling, per channel, without padding (FORMATS.md: output
/// floor((H - kernel) / stride) + 1). Tensors are [channels][height][width] per sample.

#include <cstdint>

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

  int64_t out_h() const { return (in_h - kernel_h) / stride_h + 1; }
  int64_t out_w() const { return (in_w - kernel_w) / stride_w + 1; }
};

/// The pooling geometry of a maxpool/avgpool layer, for `channels` channels.
PoolArgs pool_geometry(const OpNode& pool, int64_t channels);

/// out = the largest element of each kernel window.
void max_pool(const PoolArgs& args);
/// out = the mean of each kernel window (every window is whole: no padding).
void avg_pool(const PoolArgs& args);

}  // namespace splitscope
