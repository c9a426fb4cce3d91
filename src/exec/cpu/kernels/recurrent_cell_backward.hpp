#pragma once
/// \file
/// The backward pass through one step of an LSTM or GRU cell, a whole layer
/// or a slice of its hidden units (a vertical split), with the gate equations and weight layout of
/// recurrent_cell.hpp: Wx [I × G·H] and Wh [H × G·H] with gate-major columns
/// g·H + u, the bias on the input side only, and the GRU's reset gate applied
/// after the recurrent product (n = tanh(x·Wx_n + b_n + r⊙(h·Wh_n))).
///
/// The step is split as the dense layer's backward is: this file holds the
/// element-wise half, from the output gradients to the gradients of the gate
/// pre-activations (recomputing the gates, which the forward does not keep);
/// cell_grad_products.hpp turns those into dx, dh_{t-1} and the weight
/// gradients with transposed products.

#include <cstdint>

#include "exec/cpu/kernels/parallel_for.hpp"

namespace splitscope {

/// The gradients of one cell step, unit-major: per row, per hidden unit u,
/// kCellGradColumns floats. LSTM: (di, df, dg, do), the gradients of the four
/// gate pre-activations (both products take them). GRU: (dr, dz, dn, dn·r):
/// the pre-activation gradients of r, z and n on the input side, and n's on
/// the recurrent side (r multiplies h·Wh_n), so the x-product takes columns
/// 0,1,2 and the h-product columns 0,1,3.
inline constexpr int64_t kCellGradColumns = 4;

struct CellGradArgs {
  int64_t rows = 0;    ///< samples
  int64_t inputs = 0;  ///< I: features of x_t
  int64_t hidden = 0;  ///< H: hidden units (all of the cell)
  /// The slice of hidden units [u0, u0 + U) differentiated (a vertical
  /// split's): the weights are its gathered gate-major columns [.. × G·U]
  /// (recurrent_cell.hpp), c_prev, dh, dc, dgates and `second` hold its U
  /// units only; x and h_prev are whole. units = 0: all H.
  int64_t unit_begin = 0;
  int64_t units = 0;
  int64_t unit_count() const { return units > 0 ? units : hidden; }
  const float* x = nullptr;  ///< [rows × I], row stride x_stride: the step's input
  int64_t x_stride = 0;
  const float* h_prev = nullptr;  ///< [rows × H], row stride h_prev_stride; null = zeros (t = 0)
  int64_t h_prev_stride = 0;
  const float* c_prev = nullptr;  ///< LSTM: [rows × U], row stride c_prev_stride; null = zeros
  int64_t c_prev_stride = 0;
  const float* wx = nullptr;    ///< [I × G·U] gate-major (G = 4 LSTM, 3 GRU), contiguous
  const float* wh = nullptr;    ///< [H × G·U] gate-major, contiguous
  const float* bias = nullptr;  ///< [G·U], or null for none
  const float* dh = nullptr;  ///< gradient of h_t, [rows × U], row stride dh_stride
  int64_t dh_stride = 0;
  const float* dc = nullptr;  ///< LSTM: gradient of c_t from the step after, [rows × U]; null = zeros
  int64_t dc_stride = 0;
  /// [rows × U·kCellGradColumns] unit-major (column u·kCellGradColumns + k),
  /// row stride dgates_stride; written.
  float* dgates = nullptr;
  int64_t dgates_stride = 0;
  /// [rows × U], row stride second_stride; written (null: not wanted). LSTM:
  /// dc_prev, the gradient of c_{t-1}. GRU: the direct part of dh_{t-1},
  /// dh ⊙ z (cell_grad_hidden() adds it to the product through Wh).
  float* second = nullptr;
  int64_t second_stride = 0;
  float* workspace = nullptr;  ///< cell_grad_workspace_floats(rows, U) floats
};

/// Floats of scratch either cell's gradient over `units` hidden units needs:
/// its recomputed gate pre-activations (the larger of the two cells' forward
/// workspaces).
int64_t cell_grad_workspace_floats(int64_t rows, int64_t units);

/// Recomputes the step's gates from x, h_prev, c_prev and the weights (the
/// forward's own equations: the same products as lstm_cell()), then, with
/// dc_total = dc + dh⊙o⊙(1 - tanh(c)²):
///   do = dh⊙tanh(c)⊙o(1 - o), di = dc_total⊙g⊙i(1 - i),
///   dg = dc_total⊙i⊙(1 - g²),  df = dc_total⊙c_prev⊙f(1 - f),
/// into dgates, and dc_prev = dc_total⊙f into `second`. The element-wise part
/// is split over rows across `parallel`.
void lstm_cell_grad(ParallelFor& parallel, const CellGradArgs& args);

/// The element-wise half of lstm_cell_grad(), for callers that kept the
/// forward's gate pre-activations (the fused training loop): `gates` [rows ×
/// 4U], row stride `gates_stride`, holding x·Wx + h·Wh + b; the weights and x,
/// h_prev of `args` are not read.
void lstm_cell_grad_pointwise(ParallelFor& parallel, const CellGradArgs& args, const float* gates,
                              int64_t gates_stride);

/// Recomputes fx = x·Wx + b and fh = h_prev·Wh (zeros at t = 0) as gru_cell()
/// does, the gates r, z, n from them, then
///   dn = dh⊙(1 - z)⊙(1 - n²), dz = dh⊙(h_prev - n)⊙z(1 - z),
///   dr = dn⊙fh_n⊙r(1 - r),
/// into dgates as (dr, dz, dn, dn⊙r), and dh⊙z into `second`.
void gru_cell_grad(ParallelFor& parallel, const CellGradArgs& args);

/// The element-wise half of gru_cell_grad(), from the forward's kept
/// `from_x` = x·Wx + b and `from_h` = h_prev·Wh (zeros at t = 0), both
/// [rows × 3U] with the given row strides; reads h_prev's own units, not the
/// weights or x.
void gru_cell_grad_pointwise(ParallelFor& parallel, const CellGradArgs& args, const float* from_x, int64_t x_stride,
                             const float* from_h, int64_t h_stride);

}  // namespace splitscope
