#include "exec/cpu/kernels/dropout.hpp"

#include <algorithm>

#include "ir/ops/dropout_mask.hpp"

namespace splitscope {

void dropout(const DropoutArgs& a) {
  const float scale = 1.0f / (1.0f - a.rate);
  for (int64_t r = 0; r < a.rows; ++r) {
    const float* x = a.x + r * a.x_stride;
    float* y = a.y + r * a.y_stride;
    if (!a.training) {
      std::copy_n(x, a.width, y);
      continue;
    }
    const int64_t base = (a.first_row + r) * a.sample_elements + a.first_element;
    for (int64_t j = 0; j < a.width; ++j) y[j] = dropout_keeps(a.layer, base + j, a.rate) ? x[j] * scale : 0.0f;
  }
}

}  // namespace splitscope
