// LSTM and GRU cells against a naive scalar implementation of params.hpp's
// gate equations, whole and over slices of their hidden units.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/kernels/recurrent_cell.hpp"

namespace splitscope {
namespace recurrent_cell_test {
namespace {

std::vector<float> random_vector(size_t n, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = uniform(generator);
  return v;
}

double sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// Whole-cell weights in params.hpp's layout: Wx [I × G·H], Wh [H × G·H], b [G·H], column g·H + u.
struct Weights {
  int64_t inputs, hidden, gates;
  std::vector<float> wx, wh, b;
  Weights(int64_t i, int64_t h, int64_t g)
      : inputs(i), hidden(h), gates(g), wx(random_vector(i * g * h, 31)), wh(random_vector(h * g * h, 32)),
        b(random_vector(g * h, 33)) {}
  /// Σ_k x[k]·Wx[k, g·H + u] (+ b[g·H + u]), the input side of gate g at unit u.
  double x_side(const float* x, int64_t g, int64_t u, bool bias) const {
    double s = bias ? b[g * hidden + u] : 0.0;
    for (int64_t k = 0; k < inputs; ++k) s += double(x[k]) * wx[k * gates * hidden + g * hidden + u];
    return s;
  }
  double h_side(const float* h, int64_t g, int64_t u) const {
    double s = 0;
    if (h == nullptr) return s;
    for (int64_t k = 0; k < hidden; ++k) s += double(h[k]) * wh[k * gates * hidden + g * hidden + u];
    return s;
  }
  /// The slice's gate-major weights, gathered with slice_gate_columns.
  std::vector<float> slice(const std::vector<float>& whole, int64_t rows, int64_t u0, int64_t units) const {
    std::vector<float> out(static_cast<size_t>(rows * gates * units));
    slice_gate_columns(whole.data(), rows, gates, hidden, u0, units, out.data());
    return out;
  }
};

/// LSTM by the equations: i, f, g, o = σ, σ, tanh, σ of x·Wx + h·Wh + b; c' = f·c + i·g; h' = o·tanh(c').
void naive_lstm(const Weights& w, const float* x, const float* h, const float* c, float* h_out, float* c_out) {
  for (int64_t u = 0; u < w.hidden; ++u) {
    const double i = sig(w.x_side(x, 0, u, true) + w.h_side(h, 0, u));
    const double f = sig(w.x_side(x, 1, u, true) + w.h_side(h, 1, u));
    const double g = std::tanh(w.x_side(x, 2, u, true) + w.h_side(h, 2, u));
    const double o = sig(w.x_side(x, 3, u, true) + w.h_side(h, 3, u));
    const double c_next = f * (c != nullptr ? c[u] : 0.0) + i * g;
    c_out[u] = static_cast<float>(c_next);
    h_out[u] = static_cast<float>(o * std::tanh(c_next));
  }
}

/// GRU by the equations: r = σ(x·Wx_r + h·Wh_r + b_r), z = σ(x·Wx_z + h·Wh_z + b_z),
/// n = tanh(x·Wx_n + b_n + r·(h·Wh_n)), h' = (1 - z)·n + z·h.
void naive_gru(const Weights& w, const float* x, const float* h, float* h_out) {
  for (int64_t u = 0; u < w.hidden; ++u) {
    const double r = sig(w.x_side(x, 0, u, true) + w.h_side(h, 0, u));
    const double z = sig(w.x_side(x, 1, u, true) + w.h_side(h, 1, u));
    const double n = std::tanh(w.x_side(x, 2, u, true) + r * w.h_side(h, 2, u));
    h_out[u] = static_cast<float>((1 - z) * n + z * (h != nullptr ? h[u] : 0.0));
  }
}

struct CellCase {
  int64_t u0, units;
  bool first_step;  // t = 0: no h_{t-1}, no c_{t-1}
};

class CellTest : public testing::TestWithParam<CellCase> {};

TEST_P(CellTest, LstmMatchesTheEquations) {
  const CellCase param = GetParam();
  const int64_t rows = 3, inputs = 5, hidden = 7;
  const Weights w(inputs, hidden, kLstmGates);
  const auto x = random_vector(rows * inputs, 40);
  const auto h = random_vector(rows * hidden, 41);
  const auto c = random_vector(rows * hidden, 42);

  std::vector<float> want_h(rows * hidden), want_c(rows * hidden);
  for (int64_t r = 0; r < rows; ++r) {
    naive_lstm(w, &x[r * inputs], param.first_step ? nullptr : &h[r * hidden],
               param.first_step ? nullptr : &c[r * hidden], &want_h[r * hidden], &want_c[r * hidden]);
  }

  const auto wx = w.slice(w.wx, inputs, param.u0, param.units);
  const auto wh = w.slice(w.wh, hidden, param.u0, param.units);
  const auto b = w.slice(w.b, 1, param.u0, param.units);
  std::vector<float> h_out(rows * param.units), c_out(rows * param.units);
  std::vector<float> workspace(static_cast<size_t>(lstm_workspace_floats(rows, param.units)));
  CellArgs args;
  args.rows = rows;
  args.inputs = inputs;
  args.hidden = hidden;
  args.unit_begin = param.u0;
  args.units = param.units;
  args.x = x.data();
  args.x_stride = inputs;
  if (!param.first_step) {
    args.h_prev = h.data();  // all of h_{t-1}
    args.h_prev_stride = hidden;
    args.c_prev = c.data() + param.u0;  // only the slice's own units of c_{t-1}
    args.c_prev_stride = hidden;
  }
  args.wx = wx.data();
  args.wh = wh.data();
  args.bias = b.data();
  args.h_out = h_out.data();
  args.h_out_stride = param.units;
  args.c_out = c_out.data();
  args.c_out_stride = param.units;
  args.workspace = workspace.data();
  IntraOpPool pool(2);
  lstm_cell(pool, args);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t u = 0; u < param.units; ++u) {
      EXPECT_NEAR(h_out[r * param.units + u], want_h[r * hidden + param.u0 + u], 1e-5f) << r << "," << u;
      EXPECT_NEAR(c_out[r * param.units + u], want_c[r * hidden + param.u0 + u], 1e-5f) << r << "," << u;
    }
  }
}

TEST_P(CellTest, GruMatchesTheEquations) {
  const CellCase param = GetParam();
  const int64_t rows = 3, inputs = 6, hidden = 7;
  const Weights w(inputs, hidden, kGruGates);
  const auto x = random_vector(rows * inputs, 50);
  const auto h = random_vector(rows * hidden, 51);

  std::vector<float> want(rows * hidden);
  for (int64_t r = 0; r < rows; ++r) {
    naive_gru(w, &x[r * inputs], param.first_step ? nullptr : &h[r * hidden], &want[r * hidden]);
  }

  const auto wx = w.slice(w.wx, inputs, param.u0, param.units);
  const auto wh = w.slice(w.wh, hidden, param.u0, param.units);
  const auto b = w.slice(w.b, 1, param.u0, param.units);
  std::vector<float> h_out(rows * param.units);
  std::vector<float> workspace(static_cast<size_t>(gru_workspace_floats(rows, param.units)));
  CellArgs args;
  args.rows = rows;
  args.inputs = inputs;
  args.hidden = hidden;
  args.unit_begin = param.u0;
  args.units = param.units;
  args.x = x.data();
  args.x_stride = inputs;
  if (!param.first_step) {
    args.h_prev = h.data();
    args.h_prev_stride = hidden;
  }
  args.wx = wx.data();
  args.wh = wh.data();
  args.bias = b.data();
  args.h_out = h_out.data();
  args.h_out_stride = param.units;
  args.workspace = workspace.data();
  SerialFor serial;
  gru_cell(serial, args);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t u = 0; u < param.units; ++u) {
      EXPECT_NEAR(h_out[r * param.units + u], want[r * hidden + param.u0 + u], 1e-5f) << r << "," << u;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Slices, CellTest,
                         testing::Values(CellCase{0, 7, false}, CellCase{0, 7, true}, CellCase{2, 3, false},
                                         CellCase{6, 1, false}, CellCase{3, 4, true}),
                         [](const testing::TestParamInfo<CellCase>& info) {
                           return "units_" + std::to_string(info.param.u0) + "_" +
                                  std::to_string(info.param.u0 + info.param.units) +
                                  (info.param.first_step ? "_first_step" : "");
                         });

TEST(SliceGateColumns, PicksEachGatesColumnsOfTheUnits) {
  // One row, 2 gates, H = 3: columns g·3 + u hold 10·g + u. Units [1, 3) -> 1 2 11 12.
  const std::vector<float> in{0, 1, 2, 10, 11, 12};
  std::vector<float> out(4);
  slice_gate_columns(in.data(), 1, 2, 3, 1, 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{1, 2, 11, 12}));
}

}  // namespace
}  // namespace recurrent_cell_test
}  // namespace splitscope
