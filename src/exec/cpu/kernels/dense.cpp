#include "exec/cpu/kernels/dense.hpp"

#include <algorithm>

#include "exec/cpu/kernels/activation.hpp"
#include "exec/cpu/kernels/gemm.hpp"

namespace splitscope {

void dense(ParallelFor& parallel, const DenseArgs& args) {
  float beta = 0.0f;
  if (args.bias != nullptr) {
    for (int64_t r = 0; r < args.rows; ++r) {
      std::copy_n(args.bias, args.outputs, args.y + r * args.y_stride);
    }
    beta = 1.0f;
  }
  gemm(parallel, args.rows, args.outputs, args.inputs, {args.x, args.x_stride}, {args.w, args.outputs},
       beta, args.y, args.y_stride);
  activation_in_place(args.activation, args.y, args.y_stride, args.rows, args.outputs);
}

}  // namespace splitscope
