#include "exec/cpu/kernels/cell_grad_products.hpp"

#include <algorithm>

#include "exec/cpu/kernels/dense_backward.hpp"
#include "exec/cpu/kernels/gemm.hpp"
#include "exec/cpu/kernels/recurrent_cell_backward.hpp"

namespace splitscope {

void gather_gate_gradients(const float* dgates, int64_t dgates_stride, int64_t rows, int64_t hidden,
                           std::span<const int> columns, float* out) {
  const auto gates = static_cast<int64_t>(columns.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = dgates + r * dgates_stride;
    float* row = out + r * gates * hidden;
    for (int64_t g = 0; g < gates; ++g) {
      const float* column = in + columns[static_cast<size_t>(g)];
      float* block = row + g * hidden;
      for (int64_t u = 0; u < hidden; ++u) block[u] = column[u * kCellGradColumns];
    }
  }
}

int64_t cell_grad_product_workspace_floats(int64_t rows, int64_t units, int64_t gates) {
  return rows * gates * units;
}

void cell_grad_input(ParallelFor& parallel, const CellGradProductArgs& args, const float* wx, float* dx,
                     int64_t dx_stride) {
  const int64_t width = static_cast<int64_t>(args.x_columns.size()) * args.unit_count();
  float* gx = args.workspace;
  gather_gate_gradients(args.dgates, args.dgates_stride, args.rows, args.unit_count(), args.x_columns, gx);
  // dX[rows × I] = Gx[rows × G·H]·Wxᵀ, Wx stored [I × G·H].
  gemm_transposed(parallel, Transpose::kNo, Transpose::kYes, args.rows, args.inputs, width, {gx, width},
                  {wx, width}, 0.0f, dx, dx_stride);
}

void cell_grad_hidden(ParallelFor& parallel, const CellGradProductArgs& args, const float* wh,
                      const float* direct, int64_t direct_stride, float* dh_prev, int64_t dh_prev_stride) {
  const int64_t units = args.unit_count();
  const int64_t width = static_cast<int64_t>(args.h_columns.size()) * units;
  float* gh = args.workspace;
  gather_gate_gradients(args.dgates, args.dgates_stride, args.rows, units, args.h_columns, gh);
  const bool whole = units == args.hidden;
  float beta = 0.0f;
  if (direct != nullptr && whole) {
    // The direct part first, then the product added onto it (sgemm with beta = 1).
    if (direct != dh_prev || direct_stride != dh_prev_stride) {
      for (int64_t r = 0; r < args.rows; ++r) {
        std::copy_n(direct + r * direct_stride, args.hidden, dh_prev + r * dh_prev_stride);
      }
    }
    beta = 1.0f;
  }
  // dH[rows × H] = Gh[rows × G·U]·Whᵀ, Wh stored [H × G·U].
  gemm_transposed(parallel, Transpose::kNo, Transpose::kYes, args.rows, args.hidden, width, {gh, width},
                  {wh, width}, beta, dh_prev, dh_prev_stride);
  if (direct != nullptr && !whole) {
    // A slice's direct part covers its own units only: added after the product.
    for (int64_t r = 0; r < args.rows; ++r) {
      const float* from = direct + r * direct_stride;
      float* to = dh_prev + r * dh_prev_stride + args.unit_begin;
      for (int64_t u = 0; u < units; ++u) to[u] += from[u];
    }
  }
}

void cell_grad_weight(ParallelFor& parallel, const CellGradProductArgs& args, const float* x,
                      int64_t x_stride, const float* h_prev, int64_t h_prev_stride, bool has_bias,
                      const float* previous, float* gradient) {
  const int64_t units = args.unit_count();
  const int64_t width = static_cast<int64_t>(args.x_columns.size()) * units;
  const int64_t wx_size = args.inputs * width, wh_size = args.hidden * width;
  float* gathered = args.workspace;

  // Wx and b: a dense layer's weight gradient over the x columns.
  gather_gate_gradients(args.dgates, args.dgates_stride, args.rows, units, args.x_columns, gathered);
  DenseGradWeightArgs dense;
  dense.rows = args.rows;
  dense.inputs = args.inputs;
  dense.outputs = width;
  dense.x = x;
  dense.x_stride = x_stride;
  dense.dz = gathered;
  dense.dz_stride = width;
  dense.previous_w = previous;
  dense.previous_b = previous != nullptr && has_bias ? previous + wx_size + wh_size : nullptr;
  dense.dw = gradient;
  dense.db = has_bias ? gradient + wx_size + wh_size : nullptr;
  dense_grad_weight(parallel, dense);

  // Wh: the same over the h columns, or only the running sum at t = 0.
  const float* previous_wh = previous != nullptr ? previous + wx_size : nullptr;
  float* wh_gradient = gradient + wx_size;
  if (h_prev == nullptr) {
    if (previous_wh == nullptr) {
      std::fill_n(wh_gradient, wh_size, 0.0f);
    } else if (previous_wh != wh_gradient) {
      std::copy_n(previous_wh, wh_size, wh_gradient);
    }
    return;
  }
  if (!std::ranges::equal(args.x_columns, args.h_columns)) {
    gather_gate_gradients(args.dgates, args.dgates_stride, args.rows, units, args.h_columns, gathered);
  }
  dense.inputs = args.hidden;
  dense.x = h_prev;
  dense.x_stride = h_prev_stride;
  dense.previous_w = previous_wh;
  dense.previous_b = nullptr;
  dense.dw = wh_gradient;
  dense.db = nullptr;
  dense_grad_weight(parallel, dense);
}

}  // namespace splitscope
