#include "exec/cpu/kernels/recurrent_cell.hpp"

#include <algorithm>
#include <cmath>

#include "exec/cpu/kernels/activation.hpp"
#include "exec/cpu/kernels/gemm.hpp"

namespace splitscope {
namespace {

/// pre = x·Wx (+ b): the input half of the gates, into a [rows × width] matrix.
void input_product(ParallelFor& parallel, const CellArgs& a, int64_t width, float* pre) {
  float beta = 0.0f;
  if (a.bias != nullptr) {
    for (int64_t r = 0; r < a.rows; ++r) std::copy_n(a.bias, width, pre + r * width);
    beta = 1.0f;
  }
  gemm(parallel, a.rows, width, a.inputs, {a.x, a.x_stride}, {a.wx, width}, beta, pre, width);
}

}  // namespace

int64_t lstm_workspace_floats(int64_t rows, int64_t units) { return rows * kLstmGates * units; }

int64_t gru_workspace_floats(int64_t rows, int64_t units) { return 2 * rows * kGruGates * units; }

void lstm_cell(ParallelFor& parallel, const CellArgs& a) {
  const int64_t u_count = a.units;
  const int64_t width = kLstmGates * u_count;
  float* gates = a.workspace;
  input_product(parallel, a, width, gates);
  if (a.h_prev != nullptr) {
    gemm(parallel, a.rows, width, a.hidden, {a.h_prev, a.h_prev_stride}, {a.wh, width}, 1.0f, gates,
         width);
  }
  lstm_cell_pointwise(a, gates, width);
}

void lstm_cell_pointwise(const CellArgs& a, const float* gates, int64_t gates_stride) {
  const int64_t u_count = a.units;
  for (int64_t r = 0; r < a.rows; ++r) {
    const float* pre = gates + r * gates_stride;
    const float* c_prev = a.c_prev != nullptr ? a.c_prev + r * a.c_prev_stride : nullptr;
    float* h = a.h_out + r * a.h_out_stride;
    float* c = a.c_out + r * a.c_out_stride;
    for (int64_t u = 0; u < u_count; ++u) {
      const float i = sigmoid(pre[u]);
      const float f = sigmoid(pre[u_count + u]);
      const float g = std::tanh(pre[2 * u_count + u]);
      const float o = sigmoid(pre[3 * u_count + u]);
      const float c_next = (c_prev != nullptr ? f * c_prev[u] : 0.0f) + i * g;
      c[u] = c_next;
      h[u] = o * std::tanh(c_next);
    }
  }
}

void gru_cell(ParallelFor& parallel, const CellArgs& a) {
  const int64_t u_count = a.units;
  const int64_t width = kGruGates * u_count;
  float* from_x = a.workspace;                   // x·Wx + b
  float* from_h = a.workspace + a.rows * width;  // h·Wh, kept apart: the reset gate scales its n part only
  input_product(parallel, a, width, from_x);
  if (a.h_prev != nullptr) {
    gemm(parallel, a.rows, width, a.hidden, {a.h_prev, a.h_prev_stride}, {a.wh, width}, 0.0f, from_h,
         width);
  } else {
    std::fill_n(from_h, a.rows * width, 0.0f);
  }
  gru_cell_pointwise(a, from_x, width, from_h, width);
}

void gru_cell_pointwise(const CellArgs& a, const float* from_x, int64_t x_stride, const float* from_h,
                        int64_t h_stride) {
  const int64_t u_count = a.units;
  for (int64_t r = 0; r < a.rows; ++r) {
    const float* px = from_x + r * x_stride;
    const float* ph = from_h + r * h_stride;
    const float* h_prev = a.h_prev != nullptr ? a.h_prev + r * a.h_prev_stride + a.unit_begin : nullptr;
    float* h = a.h_out + r * a.h_out_stride;
    for (int64_t u = 0; u < u_count; ++u) {
      const float reset = sigmoid(px[u] + ph[u]);
      const float update = sigmoid(px[u_count + u] + ph[u_count + u]);
      const float candidate = std::tanh(px[2 * u_count + u] + reset * ph[2 * u_count + u]);
      const float previous = h_prev != nullptr ? h_prev[u] : 0.0f;
      h[u] = (1.0f - update) * candidate + update * previous;
    }
  }
}

void slice_gate_columns(const float* in, int64_t rows, int64_t gates, int64_t hidden,
                        int64_t unit_begin, int64_t units, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g = 0; g < gates; ++g) {
      std::copy_n(in + r * gates * hidden + g * hidden + unit_begin, units,
                  out + r * gates * units + g * units);
    }
  }
}

}  // namespace splitscope
