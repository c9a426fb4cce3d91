#include "exec/cpu/kernels/recurrent_cell_backward.hpp"

#include <algorithm>
#include <cmath>

#include "exec/cpu/kernels/activation.hpp"
#include "exec/cpu/kernels/gemm.hpp"
#include "exec/cpu/kernels/recurrent_cell.hpp"

namespace splitscope {
namespace {

/// Hidden units per chunk of the element-wise part, at least: a few tens of
/// microseconds of exp and tanh, well above a thread hand-off.
constexpr int64_t kPointwiseGrainUnits = 4096;

int64_t row_grain(int64_t hidden) {
  return std::max<int64_t>(1, kPointwiseGrainUnits / std::max<int64_t>(hidden, 1));
}

/// pre = x·Wx (+ b) into a [rows × width] matrix: the forward's input_product(),
/// the same sgemm, so that the recomputed gates are the forward's bit for bit.
void input_product(ParallelFor& parallel, const CellGradArgs& a, int64_t width, float* pre) {
  float beta = 0.0f;
  if (a.bias != nullptr) {
    for (int64_t r = 0; r < a.rows; ++r) std::copy_n(a.bias, width, pre + r * width);
    beta = 1.0f;
  }
  gemm(parallel, a.rows, width, a.inputs, {a.x, a.x_stride}, {a.wx, width}, beta, pre, width);
}

}  // namespace

int64_t cell_grad_workspace_floats(int64_t rows, int64_t units) {
  return std::max(lstm_workspace_floats(rows, units), gru_workspace_floats(rows, units));
}

void lstm_cell_grad(ParallelFor& parallel, const CellGradArgs& a) {
  const int64_t width = kLstmGates * a.unit_count();
  float* gates = a.workspace;  // pre-activations i, f, g, o, gate-major
  input_product(parallel, a, width, gates);
  if (a.h_prev != nullptr) {
    gemm(parallel, a.rows, width, a.hidden, {a.h_prev, a.h_prev_stride}, {a.wh, width}, 1.0f, gates,
         width);
  }
  lstm_cell_grad_pointwise(parallel, a, gates, width);
}

void lstm_cell_grad_pointwise(ParallelFor& parallel, const CellGradArgs& a, const float* gates, int64_t gates_stride) {
  const int64_t h_count = a.unit_count();
  parallel.run(a.rows, row_grain(h_count), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* pre = gates + r * gates_stride;
      const float* c_prev = a.c_prev != nullptr ? a.c_prev + r * a.c_prev_stride : nullptr;
      const float* dh = a.dh + r * a.dh_stride;
      const float* dc = a.dc != nullptr ? a.dc + r * a.dc_stride : nullptr;
      float* dgates = a.dgates + r * a.dgates_stride;
      float* second = a.second != nullptr ? a.second + r * a.second_stride : nullptr;
      for (int64_t u = 0; u < h_count; ++u) {
        // The forward's own expressions (lstm_cell_pointwise), then the chain rule.
        const float i = sigmoid(pre[u]);
        const float f = sigmoid(pre[h_count + u]);
        const float g = std::tanh(pre[2 * h_count + u]);
        const float o = sigmoid(pre[3 * h_count + u]);
        const float previous = c_prev != nullptr ? c_prev[u] : 0.0f;
        const float c_next = (c_prev != nullptr ? f * previous : 0.0f) + i * g;
        const float tanh_c = std::tanh(c_next);
        const float dc_total = (dc != nullptr ? dc[u] : 0.0f) + dh[u] * o * (1.0f - tanh_c * tanh_c);
        float* out = dgates + u * kCellGradColumns;
        out[0] = dc_total * g * i * (1.0f - i);
        out[1] = dc_total * previous * f * (1.0f - f);
        out[2] = dc_total * i * (1.0f - g * g);
        out[3] = dh[u] * tanh_c * o * (1.0f - o);
        if (second != nullptr) second[u] = dc_total * f;
      }
    }
  });
}

void gru_cell_grad(ParallelFor& parallel, const CellGradArgs& a) {
  const int64_t width = kGruGates * a.unit_count();
  float* from_x = a.workspace;                   // x·Wx + b
  float* from_h = a.workspace + a.rows * width;  // h·Wh, apart: the reset gate scales its n part only
  input_product(parallel, a, width, from_x);
  if (a.h_prev != nullptr) {
    gemm(parallel, a.rows, width, a.hidden, {a.h_prev, a.h_prev_stride}, {a.wh, width}, 0.0f, from_h,
         width);
  } else {
    std::fill_n(from_h, a.rows * width, 0.0f);
  }
  gru_cell_grad_pointwise(parallel, a, from_x, width, from_h, width);
}

void gru_cell_grad_pointwise(ParallelFor& parallel, const CellGradArgs& a, const float* from_x, int64_t x_stride,
                             const float* from_h, int64_t h_stride) {
  const int64_t h_count = a.unit_count();
  parallel.run(a.rows, row_grain(h_count), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* px = from_x + r * x_stride;
      const float* ph = from_h + r * h_stride;
      // The slice's own units of h_{t-1}: z mixes each unit with itself.
      const float* h_prev = a.h_prev != nullptr ? a.h_prev + r * a.h_prev_stride + a.unit_begin : nullptr;
      const float* dh = a.dh + r * a.dh_stride;
      float* dgates = a.dgates + r * a.dgates_stride;
      float* second = a.second != nullptr ? a.second + r * a.second_stride : nullptr;
      for (int64_t u = 0; u < h_count; ++u) {
        // The forward's own expressions (gru_cell_pointwise), then the chain rule.
        const float reset = sigmoid(px[u] + ph[u]);
        const float update = sigmoid(px[h_count + u] + ph[h_count + u]);
        const float candidate = std::tanh(px[2 * h_count + u] + reset * ph[2 * h_count + u]);
        const float previous = h_prev != nullptr ? h_prev[u] : 0.0f;
        const float d_candidate = dh[u] * (1.0f - update) * (1.0f - candidate * candidate);
        float* out = dgates + u * kCellGradColumns;
        out[0] = d_candidate * ph[2 * h_count + u] * reset * (1.0f - reset);
        out[1] = dh[u] * (previous - candidate) * update * (1.0f - update);
        out[2] = d_candidate;
        out[3] = d_candidate * reset;
        if (second != nullptr) second[u] = dh[u] * update;
      }
    }
  });
}

}  // namespace splitscope
