#include "exec/cpu/kernels/dense_backward.hpp"

#include <algorithm>

#include "exec/cpu/kernels/gemm.hpp"

namespace splitscope {

void dense_grad_input(ParallelFor& parallel, const DenseGradInputArgs& args) {
  // dX[rows × inputs] = dZ[rows × outputs]·Wᵀ, W stored [inputs × outputs].
  gemm_transposed(parallel, Transpose::kNo, Transpose::kYes, args.rows, args.inputs, args.outputs,
                  {args.dz, args.dz_stride}, {args.w, args.outputs}, 0.0f, args.dx, args.dx_stride);
}

void dense_grad_weight(ParallelFor& parallel, const DenseGradWeightArgs& args) {
  // dW[inputs × outputs] = previous + Xᵀ·dZ, X stored [rows × inputs].
  const int64_t w_size = args.inputs * args.outputs;
  float beta = 0.0f;
  if (args.previous_w != nullptr) {
    if (args.previous_w != args.dw) std::copy_n(args.previous_w, w_size, args.dw);
    beta = 1.0f;
  }
  gemm_transposed(parallel, Transpose::kYes, Transpose::kNo, args.inputs, args.outputs, args.rows,
                  {args.x, args.x_stride}, {args.dz, args.dz_stride}, beta, args.dw, args.outputs);
  if (args.db == nullptr) return;
  if (args.previous_b == nullptr) {
    std::fill_n(args.db, args.outputs, 0.0f);
  } else if (args.previous_b != args.db) {
    std::copy_n(args.previous_b, args.outputs, args.db);
  }
  // Row by row, so that the inner loop is a contiguous add the compiler vectorises.
  for (int64_t r = 0; r < args.rows; ++r) {
    const float* row = args.dz + r * args.dz_stride;
    for (int64_t j = 0; j < args.outputs; ++j) args.db[j] += row[j];
  }
}

}  // namespace splitscope
