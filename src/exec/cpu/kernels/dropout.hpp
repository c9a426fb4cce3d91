#pragma once
/// \file
/// Dropout on rows of a strided matrix: y = x·m/(1 - rate) in a training
/// step (m: ir/ops/dropout_mask.hpp, by each element's place in the whole
/// batch), a copy in inference. Its backward is the same call on dY.

#include <cstdint>

namespace splitscope {

struct DropoutArgs {
  int64_t rows = 0;
  int64_t width = 0;          ///< floats of a row the slice holds: its channels × inner
  int64_t first_row = 0;      ///< the slice's first sample in the batch
  int64_t first_element = 0;  ///< its first channel's offset in a sample: channel × inner
  int64_t sample_elements = 0;  ///< elements of a whole sample
  int layer = 0;
  float rate = 0;
  bool training = false;
  const float* x = nullptr;
  int64_t x_stride = 0;
  float* y = nullptr;
  int64_t y_stride = 0;
};
void dropout(const DropoutArgs& args);

}  // namespace splitscope
