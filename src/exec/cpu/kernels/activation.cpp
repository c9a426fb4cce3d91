#include "exec/cpu/kernels/activation.hpp"

namespace splitscope {
namespace {

template <typename F>
void map_rows(const float* in, int64_t in_stride, float* out, int64_t out_stride, int64_t rows,
              int64_t cols, F f) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* src = in + r * in_stride;
    float* dst = out + r * out_stride;
    for (int64_t j = 0; j < cols; ++j) dst[j] = f(src[j]);
  }
}

}  // namespace

void activation_rows(Activation activation, const float* in, int64_t in_stride, float* out,
                     int64_t out_stride, int64_t rows, int64_t cols) {
  // One loop per activation, so that each inner loop is a plain map the compiler vectorises.
  switch (activation) {
    case Activation::kNone:
      if (in == out && in_stride == out_stride) return;
      map_rows(in, in_stride, out, out_stride, rows, cols, [](float x) { return x; });
      return;
    case Activation::kRelu:
      map_rows(in, in_stride, out, out_stride, rows, cols, [](float x) { return x > 0.0f ? x : 0.0f; });
      return;
    case Activation::kTanh:
      map_rows(in, in_stride, out, out_stride, rows, cols, [](float x) { return std::tanh(x); });
      return;
    case Activation::kSigmoid:
      map_rows(in, in_stride, out, out_stride, rows, cols, [](float x) { return sigmoid(x); });
      return;
  }
}

void activation_in_place(Activation activation, float* data, int64_t stride, int64_t rows,
                         int64_t cols) {
  activation_rows(activation, data, stride, data, stride, rows, cols);
}

}  // namespace splitscope
