// The backward pass of one LSTM or GRU cell step (recurrent_cell_backward.hpp
// and cell_grad_products.hpp) against central finite differences of a naive
// double-precision forward of the step, on small odd shapes with padded
// strides; and the split runs against the serial one on a larger step.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/kernels/cell_grad_products.hpp"
#include "exec/cpu/kernels/recurrent_cell.hpp"
#include "exec/cpu/kernels/recurrent_cell_backward.hpp"
#include "kernel_gradient_check.hpp"

namespace splitscope {
namespace recurrent_cell_backward_test {
namespace {

using namespace kernel_check;  // the shared helpers of the backward kernels' tests

constexpr std::array<int, 4> kLstmColumns{0, 1, 2, 3};
constexpr std::array<int, 3> kGruXColumns{0, 1, 2};
constexpr std::array<int, 3> kGruHColumns{0, 1, 3};


double sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// --- the naive forward, in double ----------------------------------------------

/// One step's inputs and weights, compact, in double. h and c are zeros at
/// t = 0, b zeros without a bias. off_x and off_h [rows × G·H] are added to
/// the input-side and recurrent-side gate sums (zeros: the plain forward);
/// their derivatives are the gradients of the gate pre-activations.
struct Step {
  int64_t rows = 0, inputs = 0, hidden = 0, gates = 0;
  std::vector<double> x, h, c, wx, wh, b, off_x, off_h;

  /// x·Wx + b (+ off_x) for gate g at unit u of row r.
  double x_side(int64_t r, int64_t g, int64_t u) const {
    const int64_t column = g * hidden + u;
    double s = b[at(column)] + off_x[at(r * gates * hidden + column)];
    for (int64_t k = 0; k < inputs; ++k) s += x[at(r * inputs + k)] * wx[at(k * gates * hidden + column)];
    return s;
  }
  /// h·Wh (+ off_h) for gate g at unit u of row r.
  double h_side(int64_t r, int64_t g, int64_t u) const {
    const int64_t column = g * hidden + u;
    double s = off_h[at(r * gates * hidden + column)];
    for (int64_t k = 0; k < hidden; ++k) s += h[at(r * hidden + k)] * wh[at(k * gates * hidden + column)];
    return s;
  }
};

/// L = Σ h'⊙A + Σ c'⊙B, with i, f, g, o = σ, σ, tanh, σ of x·Wx + h·Wh + b;
/// c' = f·c + i·g; h' = o·tanh(c').
double lstm_loss(const Step& s, const std::vector<double>& a, const std::vector<double>& b) {
  double loss = 0;
  for (int64_t r = 0; r < s.rows; ++r) {
    for (int64_t u = 0; u < s.hidden; ++u) {
      const auto pre = [&](int64_t g) { return s.x_side(r, g, u) + s.h_side(r, g, u); };
      const double i = sig(pre(0)), f = sig(pre(1)), g = std::tanh(pre(2)), o = sig(pre(3));
      const double c_next = f * s.c[at(r * s.hidden + u)] + i * g;
      const double h_next = o * std::tanh(c_next);
      loss += h_next * a[at(r * s.hidden + u)] + c_next * b[at(r * s.hidden + u)];
    }
  }
  return loss;
}

/// L = Σ h'⊙A, with r = σ(x·Wx_r + b_r + h·Wh_r), z = σ(x·Wx_z + b_z + h·Wh_z),
/// n = tanh(x·Wx_n + b_n + r·(h·Wh_n)), h' = (1 - z)·n + z·h.
double gru_loss(const Step& s, const std::vector<double>& a) {
  double loss = 0;
  for (int64_t r = 0; r < s.rows; ++r) {
    for (int64_t u = 0; u < s.hidden; ++u) {
      const double reset = sig(s.x_side(r, 0, u) + s.h_side(r, 0, u));
      const double update = sig(s.x_side(r, 1, u) + s.h_side(r, 1, u));
      const double candidate = std::tanh(s.x_side(r, 2, u) + reset * s.h_side(r, 2, u));
      const double h_next = (1 - update) * candidate + update * s.h[at(r * s.hidden + u)];
      loss += h_next * a[at(r * s.hidden + u)];
    }
  }
  return loss;
}

/// ∂loss/∂(one member of the step) by central differences.
std::vector<double> numeric_of(const std::function<double(const Step&)>& loss, const Step& point,
                               std::vector<double> Step::*member) {
  Step moved = point;
  return numeric_gradient(
      [&](const std::vector<double>& v) {
        moved.*member = v;
        return loss(moved);
      },
      point.*member);
}

// --- the finite-difference checks -------------------------------------------------

enum class Cell { kLstm, kGru };

struct GradCase {
  const char* name;
  Cell cell;
  bool first_step;  ///< t = 0: h_prev and c_prev null
  bool with_dc;     ///< LSTM: a gradient of c_t from the step after (else null, and B = 0)
  bool with_bias;
};

void PrintTo(const GradCase& c, std::ostream* os) { *os << c.name; }

class CellGradTest : public testing::TestWithParam<GradCase> {};

TEST_P(CellGradTest, MatchesFiniteDifferencesOfTheForward) {
  const GradCase param = GetParam();
  const bool lstm = param.cell == Cell::kLstm;
  const int64_t rows = 3, inputs = 5, hidden = 4, gates = lstm ? kLstmGates : kGruGates;
  const int64_t width = gates * hidden;
  // Padded row strides, each different.
  const int64_t x_stride = inputs + 2, h_stride = hidden + 1, c_stride = hidden + 3, dh_stride = hidden + 2,
                dc_stride = hidden + 1, dgates_stride = hidden * kCellGradColumns + 3, second_stride = hidden + 2,
                dx_stride = inputs + 1, dh_prev_stride = hidden + 3;

  const auto x = random_vector(at(rows * inputs), 101);
  const auto h = param.first_step ? std::vector<float>(at(rows * hidden)) : random_vector(at(rows * hidden), 102);
  const auto c = param.first_step ? std::vector<float>(at(rows * hidden)) : random_vector(at(rows * hidden), 103);
  const auto wx = random_vector(at(inputs * width), 104);
  const auto wh = random_vector(at(hidden * width), 105);
  const auto b = param.with_bias ? random_vector(at(width), 106) : std::vector<float>(at(width));
  const auto dh = random_vector(at(rows * hidden), 107);  // A
  const auto dc = lstm && param.with_dc ? random_vector(at(rows * hidden), 108) : std::vector<float>(at(rows * hidden));

  Step point;
  point.rows = rows;
  point.inputs = inputs;
  point.hidden = hidden;
  point.gates = gates;
  point.x = wide(x);
  point.h = wide(h);
  point.c = wide(c);
  point.wx = wide(wx);
  point.wh = wide(wh);
  point.b = wide(b);
  point.off_x.assign(at(rows * width), 0.0);
  point.off_h.assign(at(rows * width), 0.0);
  const auto a_weights = wide(dh), b_weights = wide(dc);
  const std::function<double(const Step&)> loss = [&](const Step& s) {
    return lstm ? lstm_loss(s, a_weights, b_weights) : gru_loss(s, a_weights);
  };

  // The expected gradients: of the gate pre-activations (unit-major, as dgates), then of everything else.
  const auto d_off_x = numeric_of(loss, point, &Step::off_x);
  const auto d_off_h = numeric_of(loss, point, &Step::off_h);
  std::vector<double> want_dgates(at(rows * hidden * kCellGradColumns));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t u = 0; u < hidden; ++u) {
      double* unit = &want_dgates[at((r * hidden + u) * kCellGradColumns)];
      for (int64_t g = 0; g < gates; ++g) unit[g] = d_off_x[at(r * width + g * hidden + u)];
      if (!lstm) unit[3] = d_off_h[at(r * width + 2 * hidden + u)];  // n's recurrent side
    }
  }
  const auto want_dx = numeric_of(loss, point, &Step::x);
  const auto want_dh_prev = numeric_of(loss, point, &Step::h);
  const auto want_dc_prev = numeric_of(loss, point, &Step::c);
  std::vector<double> want_weights = numeric_of(loss, point, &Step::wx);
  const auto want_dwh = numeric_of(loss, point, &Step::wh);
  want_weights.insert(want_weights.end(), want_dwh.begin(), want_dwh.end());
  if (param.with_bias) {
    const auto want_db = numeric_of(loss, point, &Step::b);
    want_weights.insert(want_weights.end(), want_db.begin(), want_db.end());
  }
  if (param.first_step) {
    for (int64_t i = 0; i < hidden * width; ++i) ASSERT_EQ(want_dwh[at(i)], 0.0);  // h_prev = 0: no Wh gradient
  }

  const auto x_strided = to_strided(x, rows, inputs, x_stride);
  const auto h_strided = to_strided(h, rows, hidden, h_stride);
  const auto c_strided = to_strided(c, rows, hidden, c_stride);
  const auto dh_strided = to_strided(dh, rows, hidden, dh_stride);
  const auto dc_strided = to_strided(dc, rows, hidden, dc_stride);
  const auto previous = random_vector(want_weights.size(), 109);

  Parallels parallels;
  for (auto [name, parallel] : parallels.all()) {
    SCOPED_TRACE(name);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    // The element-wise half.
    std::vector<float> workspace(at(cell_grad_workspace_floats(rows, hidden)), nan);  // never read before written
    auto dgates = to_strided(std::vector<float>(at(rows * hidden * kCellGradColumns), 1e9f), rows,
                             hidden * kCellGradColumns, dgates_stride);
    auto second = to_strided(std::vector<float>(at(rows * hidden), 1e9f), rows, hidden, second_stride);
    CellGradArgs args;
    args.rows = rows;
    args.inputs = inputs;
    args.hidden = hidden;
    args.x = x_strided.data();
    args.x_stride = x_stride;
    if (!param.first_step) {
      args.h_prev = h_strided.data();
      args.h_prev_stride = h_stride;
      args.c_prev = c_strided.data();
      args.c_prev_stride = c_stride;
    }
    args.wx = wx.data();
    args.wh = wh.data();
    args.bias = param.with_bias ? b.data() : nullptr;
    args.dh = dh_strided.data();
    args.dh_stride = dh_stride;
    if (lstm && param.with_dc) {
      args.dc = dc_strided.data();
      args.dc_stride = dc_stride;
    }
    args.dgates = dgates.data();
    args.dgates_stride = dgates_stride;
    args.second = second.data();
    args.second_stride = second_stride;
    args.workspace = workspace.data();
    if (lstm) {
      lstm_cell_grad(*parallel, args);
    } else {
      gru_cell_grad(*parallel, args);
    }
    const auto dgates_compact = from_strided(dgates, rows, hidden * kCellGradColumns, dgates_stride);
    expect_close(dgates_compact, want_dgates, kRelative, kAbsolute, "dgates");
    const auto second_compact = from_strided(second, rows, hidden, second_stride);
    if (lstm) expect_close(second_compact, want_dc_prev, kRelative, kAbsolute, "dc_prev");

    // The products.
    std::vector<float> product_workspace(at(cell_grad_product_workspace_floats(rows, hidden, gates)), nan);
    CellGradProductArgs products;
    products.rows = rows;
    products.inputs = inputs;
    products.hidden = hidden;
    products.x_columns = lstm ? std::span<const int>(kLstmColumns) : std::span<const int>(kGruXColumns);
    products.h_columns = lstm ? std::span<const int>(kLstmColumns) : std::span<const int>(kGruHColumns);
    products.dgates = dgates.data();
    products.dgates_stride = dgates_stride;
    products.workspace = product_workspace.data();

    auto dx = to_strided(std::vector<float>(at(rows * inputs), nan), rows, inputs, dx_stride);
    cell_grad_input(*parallel, products, wx.data(), dx.data(), dx_stride);
    expect_close(from_strided(dx, rows, inputs, dx_stride), want_dx, kRelative, kAbsolute, "dx");

    auto dh_prev = to_strided(std::vector<float>(at(rows * hidden), nan), rows, hidden, dh_prev_stride);
    cell_grad_hidden(*parallel, products, wh.data(), lstm ? nullptr : second.data(), second_stride, dh_prev.data(),
                     dh_prev_stride);
    expect_close(from_strided(dh_prev, rows, hidden, dh_prev_stride), want_dh_prev, kRelative, kAbsolute, "dh_prev");

    const float* h_prev = param.first_step ? nullptr : h_strided.data();
    std::vector<float> gradient(want_weights.size(), nan);
    cell_grad_weight(*parallel, products, x_strided.data(), x_stride, h_prev, h_stride, param.with_bias, nullptr,
                     gradient.data());
    expect_close(gradient, want_weights, kRelative, kAbsolute, "weights");

    // Running sums: added to a separate buffer, and in place.
    std::vector<double> summed(gradient.size());
    for (size_t i = 0; i < summed.size(); ++i) summed[i] = double(previous[i]) + gradient[i];
    std::vector<float> onto(gradient.size(), nan);
    cell_grad_weight(*parallel, products, x_strided.data(), x_stride, h_prev, h_stride, param.with_bias,
                     previous.data(), onto.data());
    expect_close(onto, summed, 1e-5, 1e-6, "weights onto previous");
    std::vector<float> in_place = previous;
    cell_grad_weight(*parallel, products, x_strided.data(), x_stride, h_prev, h_stride, param.with_bias,
                     in_place.data(), in_place.data());
    expect_close(in_place, summed, 1e-5, 1e-6, "weights in place");

    // GRU: `second` is dh⊙z, the direct part of dh_prev alone.
    if (!lstm) {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t u = 0; u < hidden; ++u) {
          const double update = sig(point.x_side(r, 1, u) + point.h_side(r, 1, u));
          ASSERT_NEAR(second_compact[at(r * hidden + u)], dh[at(r * hidden + u)] * update, 1e-6)
              << "second, row " << r << " unit " << u;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Steps, CellGradTest,
    testing::Values(GradCase{"LstmStep", Cell::kLstm, false, true, true},
                    GradCase{"LstmStepWithoutDc", Cell::kLstm, false, false, true},
                    GradCase{"LstmStepWithoutBias", Cell::kLstm, false, true, false},
                    GradCase{"LstmFirstStep", Cell::kLstm, true, true, true},
                    GradCase{"LstmFirstStepWithoutDcOrBias", Cell::kLstm, true, false, false},
                    GradCase{"GruStep", Cell::kGru, false, false, true},
                    GradCase{"GruStepWithoutBias", Cell::kGru, false, false, false},
                    GradCase{"GruFirstStep", Cell::kGru, true, false, true}),
    [](const testing::TestParamInfo<GradCase>& info) { return std::string(info.param.name); });

// --- gathering ----------------------------------------------------------------------

TEST(CellGradProducts, GatherPicksColumnsGateMajor) {
  const int64_t rows = 2, hidden = 3, stride = hidden * kCellGradColumns + 1;
  std::vector<float> dgates(at(rows * stride));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < stride; ++j) dgates[at(r * stride + j)] = static_cast<float>(100 * r + j);
  }
  std::vector<float> out(at(rows * 3 * hidden), -1.0f);
  gather_gate_gradients(dgates.data(), stride, rows, hidden, kGruHColumns, out.data());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g = 0; g < 3; ++g) {
      for (int64_t u = 0; u < hidden; ++u) {
        EXPECT_EQ(out[at(r * 3 * hidden + g * hidden + u)],
                  static_cast<float>(100 * r + u * kCellGradColumns + kGruHColumns[at(g)]))
            << r << " " << g << " " << u;
      }
    }
  }
}

// --- splitting ------------------------------------------------------------------------

/// Every output of one step's backward pass, compact.
struct StepGradients {
  std::vector<float> dgates, second, dx, dh_prev, weights;
};

/// Columns [begin, begin + count) of each of `rows` rows of `width` floats.
std::vector<float> columns_of(const std::vector<float>& in, int64_t rows, int64_t width, int64_t begin, int64_t count) {
  std::vector<float> out(at(rows * count));
  for (int64_t r = 0; r < rows; ++r) std::copy_n(in.begin() + r * width + begin, count, out.begin() + r * count);
  return out;
}

/// The gate-major columns of units [u0, u0 + U) of a [rows × G·H] matrix.
std::vector<float> unit_columns(const std::vector<float>& in, int64_t rows, int64_t gates, int64_t hidden, int64_t u0,
                                int64_t units) {
  std::vector<float> out(at(rows * gates * units));
  slice_gate_columns(in.data(), rows, gates, hidden, u0, units, out.data());
  return out;
}

/// One step's backward pass over hidden units [u0, u0 + U) (units = 0: all
/// of them), as a vertical split's device runs it: the slice's gathered weight
/// columns, its units of c, dh and dc, all of x and h. Outputs compact: the
/// slice's dgates, second and weight gradient; partial sums of dx and dh_prev.
StepGradients run_step(ParallelFor& parallel, Cell cell, int64_t rows, int64_t inputs, int64_t hidden,
                       int64_t u0 = 0, int64_t units = 0) {
  const bool lstm = cell == Cell::kLstm;
  const int64_t gates = lstm ? kLstmGates : kGruGates, width = gates * hidden;
  const int64_t u_count = units > 0 ? units : hidden, u_width = gates * u_count;
  const auto x = random_vector(at(rows * inputs), 201);
  const auto h = random_vector(at(rows * hidden), 202);
  const auto c = random_vector(at(rows * hidden), 203);
  const auto wx = unit_columns(random_vector(at(inputs * width), 204, -0.3f, 0.3f), inputs, gates, hidden, u0, u_count);
  const auto wh = unit_columns(random_vector(at(hidden * width), 205, -0.3f, 0.3f), hidden, gates, hidden, u0, u_count);
  const auto b = unit_columns(random_vector(at(width), 206), 1, gates, hidden, u0, u_count);
  const auto dh = random_vector(at(rows * hidden), 207);
  const auto dc = random_vector(at(rows * hidden), 208);
  StepGradients out;
  out.dgates.resize(at(rows * u_count * kCellGradColumns));
  out.second.resize(at(rows * u_count));
  out.dx.resize(at(rows * inputs));
  out.dh_prev.resize(at(rows * hidden));
  out.weights.resize(at((inputs + hidden + 1) * u_width));
  std::vector<float> workspace(at(cell_grad_workspace_floats(rows, u_count)));
  CellGradArgs args;
  args.rows = rows;
  args.inputs = inputs;
  args.hidden = hidden;
  args.unit_begin = u0;
  args.units = units;
  args.x = x.data();
  args.x_stride = inputs;
  args.h_prev = h.data();
  args.h_prev_stride = hidden;
  args.c_prev = c.data() + u0;
  args.c_prev_stride = hidden;
  args.wx = wx.data();
  args.wh = wh.data();
  args.bias = b.data();
  args.dh = dh.data() + u0;
  args.dh_stride = hidden;
  args.dc = dc.data() + u0;
  args.dc_stride = hidden;
  args.dgates = out.dgates.data();
  args.dgates_stride = u_count * kCellGradColumns;
  args.second = out.second.data();
  args.second_stride = u_count;
  args.workspace = workspace.data();
  if (lstm) {
    lstm_cell_grad(parallel, args);
  } else {
    gru_cell_grad(parallel, args);
  }
  std::vector<float> product_workspace(at(cell_grad_product_workspace_floats(rows, u_count, gates)));
  CellGradProductArgs products;
  products.rows = rows;
  products.inputs = inputs;
  products.hidden = hidden;
  products.unit_begin = u0;
  products.units = units;
  products.x_columns = lstm ? std::span<const int>(kLstmColumns) : std::span<const int>(kGruXColumns);
  products.h_columns = lstm ? std::span<const int>(kLstmColumns) : std::span<const int>(kGruHColumns);
  products.dgates = out.dgates.data();
  products.dgates_stride = u_count * kCellGradColumns;
  products.workspace = product_workspace.data();
  cell_grad_input(parallel, products, wx.data(), out.dx.data(), inputs);
  cell_grad_hidden(parallel, products, wh.data(), lstm ? nullptr : out.second.data(), u_count, out.dh_prev.data(),
                   hidden);
  cell_grad_weight(parallel, products, x.data(), inputs, h.data(), hidden, true, nullptr, out.weights.data());
  return out;
}

TEST(CellGradSplitting, HiddenUnitSlicesAddUpToTheWholeStep) {
  // A vertical split's slices of 11 units, uneven, one of a single unit: each
  // slice's gate gradients, second output and weight gradient are the whole
  // step's at its units; its dx and dh_prev are partial sums that add up to
  // the whole step's (the all-reduce's job), the GRU's direct part included.
  const int64_t rows = 3, inputs = 5, hidden = 11;
  const std::vector<std::pair<int64_t, int64_t>> slices{{0, 4}, {4, 1}, {5, 6}};
  for (Cell cell : {Cell::kLstm, Cell::kGru}) {
    SCOPED_TRACE(cell == Cell::kLstm ? "lstm" : "gru");
    const int64_t gates = cell == Cell::kLstm ? kLstmGates : kGruGates, width = gates * hidden;
    SerialFor serial;
    const StepGradients whole = run_step(serial, cell, rows, inputs, hidden);
    std::vector<double> dx(at(rows * inputs), 0.0), dh_prev(at(rows * hidden), 0.0);
    // Named members, not a structured binding: clang 14 refuses a lambda (below) capturing one.
    for (const auto& slice : slices) {
      const int64_t u0 = slice.first, units = slice.second;
      SCOPED_TRACE("units " + std::to_string(u0) + " + " + std::to_string(units));
      const StepGradients part = run_step(serial, cell, rows, inputs, hidden, u0, units);
      expect_close(part.dgates,
                   wide(columns_of(whole.dgates, rows, hidden * kCellGradColumns, u0 * kCellGradColumns,
                                   units * kCellGradColumns)),
                   1e-6, 1e-6, "dgates");
      expect_close(part.second, wide(columns_of(whole.second, rows, hidden, u0, units)), 1e-6, 1e-6, "second");
      // The whole gradient's columns of these units: Wx [I × G·H], Wh [H × G·H], b [G·H], one after the other.
      const auto tensor = [&](int64_t begin, int64_t height) {
        return unit_columns(std::vector<float>(whole.weights.begin() + begin, whole.weights.begin() + begin + height * width),
                            height, gates, hidden, u0, units);
      };
      std::vector<float> want = tensor(0, inputs);
      for (const auto& more : {tensor(inputs * width, hidden), tensor((inputs + hidden) * width, 1)}) {
        want.insert(want.end(), more.begin(), more.end());
      }
      expect_close(part.weights, wide(want), 1e-5, 1e-5, "weights");
      for (size_t i = 0; i < dx.size(); ++i) dx[i] += part.dx[i];
      for (size_t i = 0; i < dh_prev.size(); ++i) dh_prev[i] += part.dh_prev[i];
    }
    expect_close(whole.dx, dx, 1e-5, 1e-5, "dx summed");
    expect_close(whole.dh_prev, dh_prev, 1e-5, 1e-5, "dh_prev summed");
  }
}

TEST(CellGradSplitting, SplitRunsMatchTheSerialRun) {
  // Large enough that both the element-wise part and every product split.
  const int64_t rows = 200, inputs = 48, hidden = 64;
  for (Cell cell : {Cell::kLstm, Cell::kGru}) {
    SCOPED_TRACE(cell == Cell::kLstm ? "lstm" : "gru");
    SerialFor serial;
    const StepGradients want = run_step(serial, cell, rows, inputs, hidden);
    ChunkedFor chunked;
    IntraOpPool pool(3);
    for (auto [name, parallel] : {std::pair<const char*, ParallelFor*>{"chunked", &chunked}, {"pool of 3", &pool}}) {
      SCOPED_TRACE(name);
      const StepGradients got = run_step(*parallel, cell, rows, inputs, hidden);
      // Only rounding differs (OpenBLAS's edge paths in the split products,
      // the recomputed gates included).
      expect_close(got.dgates, wide(want.dgates), 1e-5, 1e-5, "dgates");
      expect_close(got.second, wide(want.second), 1e-5, 1e-5, "second");
      expect_close(got.dx, wide(want.dx), 1e-5, 1e-5, "dx");
      expect_close(got.dh_prev, wide(want.dh_prev), 1e-5, 1e-5, "dh_prev");
      expect_close(got.weights, wide(want.weights), 1e-5, 1e-5, "weights");
    }
    // Every parallel loop (6 products, the element-wise part) was split.
    EXPECT_EQ(chunked.runs, 7);
    EXPECT_GE(chunked.chunks, 2 * chunked.runs);
  }
}

}  // namespace
}  // namespace recurrent_cell_backward_test
}  // namespace splitscope
