#pragma once
/// \file
/// The products of a cell step's backward pass, after the element-wise part
/// (recurrent_cell_backward.hpp), shared by the LSTM and the GRU: dx,
/// dh_{t-1} and the weight gradients, each from a gate-major matrix of
/// pre-activation gradients gathered out of the unit-major dgates. The
/// products read the forward weights transposed in place (gemm_transposed()).

#include <cstdint>
#include <span>

#include "exec/cpu/kernels/parallel_for.hpp"

namespace splitscope {

/// The gate-major [rows × G·H] matrix of the chosen columns of dgates
/// (G = columns.size(), contiguous rows): out[r, g·H + u] =
/// dgates[r, u·kCellGradColumns + columns[g]].
void gather_gate_gradients(const float* dgates, int64_t dgates_stride, int64_t rows, int64_t hidden,
                           std::span<const int> columns, float* out);

struct CellGradProductArgs {
  int64_t rows = 0;    ///< samples
  int64_t inputs = 0;  ///< I
  int64_t hidden = 0;  ///< H
  /// The hidden units [u0, u0 + U) whose gate gradients dgates holds (a
  /// vertical split's slice; units = 0: all H). The weights and weight
  /// gradients are then their gathered gate-major columns [.. × G·U], and
  /// dx, dh_{t-1} partial sums over those units, to be all-reduced.
  int64_t unit_begin = 0;
  int64_t units = 0;
  int64_t unit_count() const { return units > 0 ? units : hidden; }
  std::span<const int> x_columns;  ///< the columns of dgates the x-product takes: LSTM {0,1,2,3}; GRU {0,1,2}
  std::span<const int> h_columns;  ///< those the h-product takes: LSTM {0,1,2,3}; GRU {0,1,3}; as many as x_columns
  const float* dgates = nullptr;   ///< [rows × U·kCellGradColumns] unit-major, row stride dgates_stride
  int64_t dgates_stride = 0;
  float* workspace = nullptr;  ///< cell_grad_product_workspace_floats(rows, U, gates) floats
};

/// Floats of scratch the products over `units` hidden units need: one
/// gathered gate-major matrix.
int64_t cell_grad_product_workspace_floats(int64_t rows, int64_t units, int64_t gates);

/// dx [rows × I], row stride dx_stride, overwritten = Gx·Wxᵀ (Gx: the x
/// columns, gate-major; wx the forward's [I × G·U]).
void cell_grad_input(ParallelFor& parallel, const CellGradProductArgs& args, const float* wx, float* dx,
                     int64_t dx_stride);

/// dh_prev [rows × H], row stride dh_prev_stride, overwritten = Gh·Whᵀ (wh
/// [H × G·U]), plus `direct` [rows × U] at units [u0, u0 + U) where not null
/// (the GRU's dh⊙z). For a whole layer `direct` may be dh_prev itself (same
/// pointer and stride).
void cell_grad_hidden(ParallelFor& parallel, const CellGradProductArgs& args, const float* wh,
                      const float* direct, int64_t direct_stride, float* dh_prev, int64_t dh_prev_stride);

/// The weight set's gradient, flat as the weights lie (Wx [I × G·U], then
/// Wh [H × G·U], then b [G·U] when has_bias), added to `previous` (same
/// layout, or null = zeros): dWx = xᵀ·Gx, dWh = h_prevᵀ·Gh (nothing added
/// when h_prev is null: t = 0), db = Σ_rows Gx. `previous` may be `gradient`
/// itself or a separate buffer.
void cell_grad_weight(ParallelFor& parallel, const CellGradProductArgs& args, const float* x,
                      int64_t x_stride, const float* h_prev, int64_t h_prev_stride, bool has_bias,
                      const float* previous, float* gradient);

}  // namespace splitscope
