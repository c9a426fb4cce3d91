#pragma once
/// \file
/// One step of an LSTM or GRU cell, or a slice of its hidden units, with the
/// gate equations and weight layout of ir/params.hpp. Callable on its own: the
/// executor runs sliced cells with it, the RNN demo a fused stack loop.
///
/// A slice over hidden units [u0, u0 + U) of H uses, for every gate g, the
/// columns g·H + u0 .. g·H + u0 + U of Wx, Wh and b; the caller passes them
/// gathered gate-major (column g·U + u), see slice_gate_columns(). It reads all
/// of h_{t-1} (every unit feeds every gate) and only its own units of c_{t-1}.

#include <cstdint>

#include "exec/cpu/kernels/parallel_for.hpp"

namespace splitscope {

struct CellArgs {
  int64_t rows = 0;        ///< samples
  int64_t inputs = 0;      ///< I: features of x_t
  int64_t hidden = 0;      ///< H: hidden units of the whole cell (length of h_{t-1})
  int64_t unit_begin = 0;  ///< u0: first hidden unit computed
  int64_t units = 0;       ///< U: hidden units computed
  const float* x = nullptr;  ///< [rows × I], row stride x_stride
  int64_t x_stride = 0;
  const float* h_prev = nullptr;  ///< [rows × H] (all units), row stride h_prev_stride; null = zeros (t = 0)
  int64_t h_prev_stride = 0;
  const float* c_prev = nullptr;  ///< LSTM: [rows × U] (own units), row stride c_prev_stride; null = zeros
  int64_t c_prev_stride = 0;
  const float* wx = nullptr;    ///< [I × gates·U], gate-major columns
  const float* wh = nullptr;    ///< [H × gates·U], gate-major columns
  const float* bias = nullptr;  ///< [gates·U], or null for none
  float* h_out = nullptr;  ///< [rows × U], row stride h_out_stride
  int64_t h_out_stride = 0;
  float* c_out = nullptr;  ///< LSTM: [rows × U], row stride c_out_stride
  int64_t c_out_stride = 0;
  float* workspace = nullptr;  ///< cell_workspace_floats() floats
};

inline constexpr int64_t kLstmGates = 4;  ///< i, f, g, o
inline constexpr int64_t kGruGates = 3;   ///< r, z, n

/// Floats of scratch a cell step needs: the gate pre-activations.
int64_t lstm_workspace_floats(int64_t rows, int64_t units);
int64_t gru_workspace_floats(int64_t rows, int64_t units);

/// gates = x·Wx + h·Wh + b (i, f, g, o); c' = σ(f)⊙c + σ(i)⊙tanh(g);
/// h' = σ(o)⊙tanh(c').
void lstm_cell(ParallelFor& parallel, const CellArgs& args);

/// r = σ(x·Wx_r + h·Wh_r + b_r), z = σ(x·Wx_z + h·Wh_z + b_z),
/// n = tanh(x·Wx_n + b_n + r⊙(h·Wh_n)), h' = (1 - z)⊙n + z⊙h (own units of h).
void gru_cell(ParallelFor& parallel, const CellArgs& args);

/// The element-wise half of lstm_cell(), for callers that form the gate
/// pre-activations themselves (the RNN demo's fused loop computes x·Wx for
/// every step in one product): h', c' of `args` (rows, units, c_prev, h_out,
/// c_out; the weights and x are not read) from `gates` [rows × 4U], row
/// stride `gates_stride`, holding x·Wx + h·Wh + b. c_out may be c_prev.
void lstm_cell_pointwise(const CellArgs& args, const float* gates, int64_t gates_stride);

/// The element-wise half of gru_cell(): h' of `args` (rows, units,
/// unit_begin, h_prev, h_out) from `from_x` = x·Wx + b and `from_h` = h·Wh
/// (zeros at t = 0), both [rows × 3U] with the given row strides.
void gru_cell_pointwise(const CellArgs& args, const float* from_x, int64_t x_stride, const float* from_h,
                        int64_t h_stride);

/// Gathers the columns of a [rows × gates·H] gate-major matrix that belong to
/// units [u0, u0 + U): out[r, g·U + u] = in[r, g·H + u0 + u].
void slice_gate_columns(const float* in, int64_t rows, int64_t gates, int64_t hidden,
                        int64_t unit_begin, int64_t units, float* out);

}  // namespace splitscope
