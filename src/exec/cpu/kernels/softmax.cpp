#include "exec/cpu/kernels/softmax.hpp"

#include <algorithm>
#include <cmath>

namespace splitscope {

void softmax(const SoftmaxArgs& a) {
  for (int64_t r = 0; r < a.rows; ++r) {
    const float* in = a.input + r * a.input_stride;
    float* out = a.output + r * a.output_stride;
    const float largest = *std::max_element(in, in + a.length);
    double sum = 0;  // in double, so that a row of many thousand classes loses nothing to rounding
    for (int64_t j = 0; j < a.length; ++j) sum += std::exp(in[j] - largest);
    const float inverse = static_cast<float>(1.0 / sum);
    for (int64_t j = a.columns.begin; j < a.columns.end; ++j) {
      out[j - a.columns.begin] = std::exp(in[j] - largest) * inverse;
    }
  }
}

}  // namespace splitscope
