// The backward-pass kernels against the derivative of a naive double-precision
// forward pass, by central finite differences (or, for the plain products,
// against a naive double loop), on small odd shapes with padded strides.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/kernels/activation.hpp"
#include "exec/cpu/kernels/conv2d.hpp"
#include "exec/cpu/kernels/conv2d_backward.hpp"
#include "exec/cpu/kernels/dense_backward.hpp"
#include "exec/cpu/kernels/gemm.hpp"
#include "exec/cpu/kernels/pooling.hpp"
#include "exec/cpu/kernels/pooling_backward.hpp"
#include "kernel_gradient_check.hpp"
#include "naive_reference.hpp"

namespace splitscope {
namespace backward_kernels_test {
namespace {

using namespace kernel_check;  // the shared helpers of the backward kernels' tests

/// Σ weights ⊙ values: the scalar whose gradient the backward kernels compute
/// when `weights` is the output gradient.
double dot(const std::vector<double>& weights, const std::vector<double>& values) {
  return std::inner_product(weights.begin(), weights.end(), values.begin(), 0.0);
}

// --- gemm_transposed ---------------------------------------------------------

TEST(GemmTransposed, AllTransposeCombinationsMatchTheDefinition) {
  Parallels parallels;
  // Small, then wide and tall products of three of gemm's smallest blocks (65536 · 4 multiply-adds,
  // OpenBLAS's per-thread minimum): split by columns, then rows.
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{5, 7, 3}, {9, 1800, 50}, {1800, 9, 50}}) {
    for (Transpose ta : {Transpose::kNo, Transpose::kYes}) {
      for (Transpose tb : {Transpose::kNo, Transpose::kYes}) {
        // Stored shapes, with padded strides: A is m×k or k×m, B is k×n or n×k.
        const bool a_t = ta == Transpose::kYes, b_t = tb == Transpose::kYes;
        const int64_t a_rows = a_t ? k : m, a_cols = a_t ? m : k, a_stride = a_cols + 2;
        const int64_t b_rows = b_t ? n : k, b_cols = b_t ? k : n, b_stride = b_cols + 3;
        const int64_t c_stride = n + 5;
        const auto a = to_strided(random_vector(at(a_rows * a_cols), 1), a_rows, a_cols, a_stride);
        const auto b = to_strided(random_vector(at(b_rows * b_cols), 2), b_rows, b_cols, b_stride);
        const auto op_a = [&](int64_t i, int64_t l) { return double(a_t ? a[at(l * a_stride + i)] : a[at(i * a_stride + l)]); };
        const auto op_b = [&](int64_t l, int64_t j) { return double(b_t ? b[at(j * b_stride + l)] : b[at(l * b_stride + j)]); };
        const auto c0 = random_vector(at(m * n), 3);
        for (float beta : {0.0f, 1.0f}) {
          for (auto [name, parallel] : parallels.all()) {
            SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + (a_t ? " Aᵀ" : " A") +
                         (b_t ? " Bᵀ" : " B") + " beta " + std::to_string(beta) + " " + name);
            // beta = 0 must not read C: start it as NaN.
            auto c = to_strided(beta == 0.0f ? std::vector<float>(c0.size(), std::numeric_limits<float>::quiet_NaN()) : c0,
                                m, n, c_stride);
            parallels.chunked.chunks = 0;
            gemm_transposed(*parallel, ta, tb, m, n, k, {a.data(), a_stride}, {b.data(), b_stride}, beta, c.data(),
                            c_stride);
            if (parallel == &parallels.chunked && m * n * k >= 2 * 65536 * 4) {
              EXPECT_GT(parallels.chunked.chunks, 1) << "the product was not split";
            }
            const auto actual = from_strided(c, m, n, c_stride);
            for (int64_t i = 0; i < m; ++i) {
              for (int64_t j = 0; j < n; ++j) {
                double sum = beta * double(c0[at(i * n + j)]), magnitude = std::abs(sum);
                for (int64_t l = 0; l < k; ++l) {
                  sum += op_a(i, l) * op_b(l, j);
                  magnitude += std::abs(op_a(i, l) * op_b(l, j));
                }
                ASSERT_NEAR(actual[at(i * n + j)], sum, 1e-4 * std::max(1.0, magnitude)) << "C[" << i << ", " << j << "]";
              }
            }
          }
        }
      }
    }
  }
}

TEST(GemmTransposed, EmptySumScalesC) {
  SerialFor serial;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> c{nan, nan, kSentinel, nan, nan, kSentinel};
  gemm_transposed(serial, Transpose::kYes, Transpose::kYes, 2, 2, 0, {nullptr, 2}, {nullptr, 0}, 0.0f, c.data(), 3);
  EXPECT_EQ(c, (std::vector<float>{0, 0, kSentinel, 0, 0, kSentinel}));
  std::vector<float> d{1, 2, 3, 4};
  gemm_transposed(serial, Transpose::kNo, Transpose::kYes, 2, 2, 0, {nullptr, 0}, {nullptr, 0}, 0.5f, d.data(), 2);
  EXPECT_EQ(d, (std::vector<float>{0.5f, 1, 1.5f, 2}));
}

// --- activation_grad_rows ----------------------------------------------------

TEST(ActivationGrad, MatchesFiniteDifferencesOfTheForward) {
  const int64_t rows = 3, width = 5;
  const int64_t dy_stride = 7, y_stride = 6, dx_stride = 8;
  auto x = random_vector(at(rows * width), 30, -2.0f, 2.0f);
  for (float& v : x) {
    if (std::abs(v) < 0.05f) v = 0.5f;  // relu has no derivative at 0: keep the differences off it
  }
  const auto dy = random_vector(at(rows * width), 31);
  for (Activation activation : {Activation::kNone, Activation::kRelu, Activation::kTanh, Activation::kSigmoid}) {
    SCOPED_TRACE(static_cast<int>(activation));
    std::vector<float> y_compact(x.size());
    for (size_t i = 0; i < x.size(); ++i) y_compact[i] = activate(activation, x[i]);
    const auto y = to_strided(y_compact, rows, width, y_stride);
    const auto dy_strided = to_strided(dy, rows, width, dy_stride);
    auto dx = to_strided(std::vector<float>(x.size(), -9.0f), rows, width, dx_stride);
    activation_grad_rows(activation, dy_strided.data(), dy_stride, y.data(), y_stride, dx.data(), dx_stride, rows,
                         width);
    const auto loss = [&](const std::vector<double>& point) {
      double sum = 0;
      for (size_t i = 0; i < point.size(); ++i) sum += double(dy[i]) * testing_support::naive_activation(activation, point[i]);
      return sum;
    };
    expect_close(from_strided(dx, rows, width, dx_stride), numeric_gradient(loss, wide(x)), kRelative, kAbsolute,
                 "dx");
    // In place over dy gives the same.
    auto in_place = dy_strided;
    activation_grad_rows(activation, in_place.data(), dy_stride, y.data(), y_stride, in_place.data(), dy_stride, rows,
                         width);
    EXPECT_EQ(from_strided(in_place, rows, width, dy_stride), from_strided(dx, rows, width, dx_stride));
  }
}

TEST(ActivationGrad, HandValues) {
  // y = 0 for relu (x ≤ 0) passes nothing; tanh at y = 0.6: 1 - 0.36; sigmoid at y = 0.75: 0.75·0.25.
  const float dy[] = {2.0f, 2.0f};
  const float relu_y[] = {0.0f, 3.0f};
  float dx[2];
  activation_grad_rows(Activation::kRelu, dy, 2, relu_y, 2, dx, 2, 1, 2);
  EXPECT_EQ(dx[0], 0.0f);
  EXPECT_EQ(dx[1], 2.0f);
  const float tanh_y[] = {0.6f, -0.6f};
  activation_grad_rows(Activation::kTanh, dy, 2, tanh_y, 2, dx, 2, 1, 2);
  EXPECT_FLOAT_EQ(dx[0], 2.0f * 0.64f);
  EXPECT_FLOAT_EQ(dx[1], 2.0f * 0.64f);
  const float sigmoid_y[] = {0.75f, 0.5f};
  activation_grad_rows(Activation::kSigmoid, dy, 2, sigmoid_y, 2, dx, 2, 1, 2);
  EXPECT_FLOAT_EQ(dx[0], 2.0f * 0.1875f);
  EXPECT_FLOAT_EQ(dx[1], 0.5f);
  // None does not read y.
  activation_grad_rows(Activation::kNone, dy, 2, nullptr, 0, dx, 2, 1, 2);
  EXPECT_EQ(dx[0], 2.0f);
}

// --- dense -------------------------------------------------------------------

TEST(DenseBackward, GradInputIsDzTimesWTransposed) {
  const int64_t rows = 3, inputs = 5, outputs = 4, dz_stride = 6, dx_stride = 7;
  const auto w = random_vector(at(inputs * outputs), 40);
  const auto dz = random_vector(at(rows * outputs), 41);
  const auto dz_strided = to_strided(dz, rows, outputs, dz_stride);
  std::vector<double> expected(at(rows * inputs));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < inputs; ++i) {
      for (int64_t j = 0; j < outputs; ++j) {
        expected[at(r * inputs + i)] += double(dz[at(r * outputs + j)]) * w[at(i * outputs + j)];
      }
    }
  }
  Parallels parallels;
  for (auto [name, parallel] : parallels.all()) {
    SCOPED_TRACE(name);
    auto dx = to_strided(std::vector<float>(at(rows * inputs), 1e9f), rows, inputs, dx_stride);
    dense_grad_input(*parallel, {rows, inputs, outputs, dz_strided.data(), dz_stride, w.data(), dx.data(), dx_stride});
    expect_close(from_strided(dx, rows, inputs, dx_stride), expected, 1e-4, 1e-6, "dx");
  }
}

TEST(DenseBackward, GradWeightAndBiasWithAndWithoutRunningSums) {
  const int64_t rows = 3, inputs = 5, outputs = 4, x_stride = 8, dz_stride = 6;
  const auto x = random_vector(at(rows * inputs), 42);
  const auto dz = random_vector(at(rows * outputs), 43);
  const auto previous_w = random_vector(at(inputs * outputs), 44);
  const auto previous_b = random_vector(at(outputs), 45);
  const auto x_strided = to_strided(x, rows, inputs, x_stride);
  const auto dz_strided = to_strided(dz, rows, outputs, dz_stride);
  Parallels parallels;
  for (bool accumulate : {false, true}) {
    std::vector<double> expected_w(at(inputs * outputs)), expected_b(at(outputs));
    for (int64_t i = 0; i < inputs; ++i) {
      for (int64_t j = 0; j < outputs; ++j) {
        double sum = accumulate ? previous_w[at(i * outputs + j)] : 0.0;
        for (int64_t r = 0; r < rows; ++r) sum += double(x[at(r * inputs + i)]) * dz[at(r * outputs + j)];
        expected_w[at(i * outputs + j)] = sum;
      }
    }
    for (int64_t j = 0; j < outputs; ++j) {
      expected_b[at(j)] = accumulate ? previous_b[at(j)] : 0.0;
      for (int64_t r = 0; r < rows; ++r) expected_b[at(j)] += dz[at(r * outputs + j)];
    }
    for (auto [name, parallel] : parallels.all()) {
      SCOPED_TRACE(std::string(name) + (accumulate ? ", accumulating" : ", from zero"));
      std::vector<float> dw(at(inputs * outputs), 1e9f), db(at(outputs), 1e9f);
      DenseGradWeightArgs args;
      args.rows = rows;
      args.inputs = inputs;
      args.outputs = outputs;
      args.x = x_strided.data();
      args.x_stride = x_stride;
      args.dz = dz_strided.data();
      args.dz_stride = dz_stride;
      args.previous_w = accumulate ? previous_w.data() : nullptr;
      args.previous_b = accumulate ? previous_b.data() : nullptr;
      args.dw = dw.data();
      args.db = db.data();
      dense_grad_weight(*parallel, args);
      expect_close(dw, expected_w, 1e-4, 1e-6, "dw");
      expect_close(db, expected_b, 1e-4, 1e-6, "db");
      // No bias: db is left alone; the running sums may be dw itself.
      std::vector<float> in_place = accumulate ? previous_w : std::vector<float>(dw.size(), 1e9f);
      args.previous_w = accumulate ? in_place.data() : nullptr;
      args.previous_b = nullptr;
      args.dw = in_place.data();
      args.db = nullptr;
      dense_grad_weight(*parallel, args);
      expect_close(in_place, expected_w, 1e-4, 1e-6, "dw in place");
    }
  }
}

TEST(DenseBackward, MatchesFiniteDifferencesOfTheForward) {
  // Both kernels against ∂/∂x, ∂/∂W, ∂/∂b of Σ dz ⊙ (x·W + b).
  const int64_t rows = 3, inputs = 5, outputs = 4;
  const auto x = random_vector(at(rows * inputs), 46);
  const auto w = random_vector(at(inputs * outputs), 47);
  const auto b = random_vector(at(outputs), 48);
  const auto dz = random_vector(at(rows * outputs), 49);
  const auto forward = [&](const std::vector<double>& xs, const std::vector<double>& ws, const std::vector<double>& bs) {
    std::vector<double> z(at(rows * outputs));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < outputs; ++j) {
        double sum = bs[at(j)];
        for (int64_t i = 0; i < inputs; ++i) sum += xs[at(r * inputs + i)] * ws[at(i * outputs + j)];
        z[at(r * outputs + j)] = sum;
      }
    }
    return dot(wide(dz), z);
  };
  IntraOpPool pool(3);
  std::vector<float> dx(x.size()), dw(w.size()), db(b.size());
  dense_grad_input(pool, {rows, inputs, outputs, dz.data(), outputs, w.data(), dx.data(), inputs});
  DenseGradWeightArgs args;
  args.rows = rows;
  args.inputs = inputs;
  args.outputs = outputs;
  args.x = x.data();
  args.x_stride = inputs;
  args.dz = dz.data();
  args.dz_stride = outputs;
  args.dw = dw.data();
  args.db = db.data();
  dense_grad_weight(pool, args);
  expect_close(dx, numeric_gradient([&](const std::vector<double>& p) { return forward(p, wide(w), wide(b)); }, wide(x)),
               kRelative, kAbsolute, "dx");
  expect_close(dw, numeric_gradient([&](const std::vector<double>& p) { return forward(wide(x), p, wide(b)); }, wide(w)),
               kRelative, kAbsolute, "dw");
  expect_close(db, numeric_gradient([&](const std::vector<double>& p) { return forward(wide(x), wide(w), p); }, wide(b)),
               kRelative, kAbsolute, "db");
}

// --- conv2d ------------------------------------------------------------------

/// The whole layer by its definition, in double: z[n, f, y, x] = b[f] + Σ_{c, i, j}
/// w[f, c, i, j]·in[n, g·Cin/G + c, y·sh - ph + i, x·sw - pw + j], zeros outside.
std::vector<double> naive_conv(const ConvGeometry& g, int64_t rows, const std::vector<double>& in,
                               const std::vector<double>& w, const std::vector<double>& b) {
  const int64_t out_h = g.out_h(), out_w = g.out_w(), per_group = g.filters_per_group(), channels = g.channels_per_group();
  std::vector<double> out(at(rows * g.filters * out_h * out_w));
  for (int64_t n = 0; n < rows; ++n) {
    for (int64_t f = 0; f < g.filters; ++f) {
      const int64_t first_channel = (f / per_group) * channels;
      for (int64_t y = 0; y < out_h; ++y) {
        for (int64_t x = 0; x < out_w; ++x) {
          double sum = b.empty() ? 0.0 : b[at(f)];
          for (int64_t c = 0; c < channels; ++c) {
            for (int64_t i = 0; i < g.kernel_h; ++i) {
              for (int64_t j = 0; j < g.kernel_w; ++j) {
                const int64_t in_y = y * g.stride_h - g.pad_h + i, in_x = x * g.stride_w - g.pad_w + j;
                if (in_y < 0 || in_y >= g.in_h || in_x < 0 || in_x >= g.in_w) continue;
                sum += w[at(((f * channels + c) * g.kernel_h + i) * g.kernel_w + j)] *
                       in[at(((n * g.in_channels + first_channel + c) * g.in_h + in_y) * g.in_w + in_x)];
              }
            }
          }
          out[at(((n * g.filters + f) * out_h + y) * out_w + x)] = sum;
        }
      }
    }
  }
  return out;
}

void check_conv_backward(const char* name, const ConvGeometry& g, int64_t rows) {
  SCOPED_TRACE(name);
  const int64_t plane = g.in_h * g.in_w, pixels = g.out_h() * g.out_w();
  const int64_t in_size = g.in_channels * plane, out_size = g.filters * pixels;
  // Padded sample strides: the gaps must stay untouched.
  const int64_t x_stride = in_size + 3, dz_stride = out_size + 2, dx_stride = in_size + 5;
  const auto x = random_vector(at(rows * in_size), 50);
  const auto w = random_vector(at(g.filters * g.patch_size()), 51);
  const auto b = random_vector(at(g.filters), 52);
  const auto dz = random_vector(at(rows * out_size), 53);
  const auto previous_w = random_vector(w.size(), 54);
  const auto previous_b = random_vector(b.size(), 55);
  const auto x_strided = to_strided(x, rows, in_size, x_stride);
  const auto dz_strided = to_strided(dz, rows, out_size, dz_stride);

  const auto loss = [&](const std::vector<double>& xs, const std::vector<double>& ws, const std::vector<double>& bs) {
    return dot(wide(dz), naive_conv(g, rows, xs, ws, bs));
  };
  const auto expected_dx =
      numeric_gradient([&](const std::vector<double>& p) { return loss(p, wide(w), wide(b)); }, wide(x));
  const auto expected_dw =
      numeric_gradient([&](const std::vector<double>& p) { return loss(wide(x), p, wide(b)); }, wide(w));
  const auto expected_db =
      numeric_gradient([&](const std::vector<double>& p) { return loss(wide(x), wide(w), p); }, wide(b));
  std::vector<double> accumulated_dw(expected_dw), accumulated_db(expected_db);
  for (size_t i = 0; i < accumulated_dw.size(); ++i) accumulated_dw[i] += previous_w[i];
  for (size_t i = 0; i < accumulated_db.size(); ++i) accumulated_db[i] += previous_b[i];

  std::vector<float> workspace(at(conv2d_backward_workspace_floats(g)));
  Parallels parallels;
  for (auto [parallel_name, parallel] : parallels.all()) {
    SCOPED_TRACE(parallel_name);
    auto dx = to_strided(std::vector<float>(at(rows * in_size), 1e9f), rows, in_size, dx_stride);
    Conv2dGradInputArgs input_args;
    input_args.geometry = g;
    input_args.rows = rows;
    input_args.dz = dz_strided.data();
    input_args.dz_stride = dz_stride;
    input_args.weights = w.data();
    input_args.dx = dx.data();
    input_args.dx_stride = dx_stride;
    input_args.workspace = workspace.data();
    conv2d_grad_input(*parallel, input_args);
    expect_close(from_strided(dx, rows, in_size, dx_stride), expected_dx, kRelative, kAbsolute, "dx");

    for (bool accumulate : {false, true}) {
      SCOPED_TRACE(accumulate ? "accumulating" : "from zero");
      std::vector<float> dw(w.size(), 1e9f), db(b.size(), 1e9f);
      Conv2dGradWeightArgs weight_args;
      weight_args.geometry = g;
      weight_args.rows = rows;
      weight_args.x = x_strided.data();
      weight_args.x_stride = x_stride;
      weight_args.dz = dz_strided.data();
      weight_args.dz_stride = dz_stride;
      weight_args.previous_w = accumulate ? previous_w.data() : nullptr;
      weight_args.previous_b = accumulate ? previous_b.data() : nullptr;
      weight_args.dw = dw.data();
      weight_args.db = db.data();
      weight_args.workspace = workspace.data();
      conv2d_grad_weight(*parallel, weight_args);
      expect_close(dw, accumulate ? accumulated_dw : expected_dw, kRelative, kAbsolute, "dw");
      expect_close(db, accumulate ? accumulated_db : expected_db, kRelative, kAbsolute, "db");
    }
  }
}

TEST(Conv2dBackward, MatchesFiniteDifferencesOfTheForward) {
  //                                            Cin H  W  Cout G kh kw sh sw ph pw
  check_conv_backward("grouped, strided, padded", {4, 7, 7, 6, 2, 3, 3, 2, 2, 1, 1}, 2);
  check_conv_backward("one group, uneven", {3, 6, 5, 4, 1, 2, 3, 1, 2, 0, 1}, 3);
  check_conv_backward("depthwise 1x1", {3, 4, 4, 3, 3, 1, 1, 1, 1, 0, 0}, 1);
}

TEST(Conv2dBackward, FilterSlicesAddUpToTheWholeLayersGradients) {
  // A vertical split computes each slice of filters on its own device: its
  // dx (over the channels of its groups, or every channel where it is part of
  // a group) summed over the slices is the layer's dx, and its dw, db are the
  // layer's rows. [0, 2) and [2, 3) are parts of group 0 (partial sums over
  // all four channels), [3, 6) is group 1 whole (channels [2, 4) only).
  //                     Cin H  W  Cout G kh kw sh sw ph pw
  const ConvGeometry g{4, 6, 5, 6, 2, 3, 2, 1, 2, 1, 0};
  const int64_t rows = 2, plane = g.in_h * g.in_w, pixels = g.out_h() * g.out_w();
  const int64_t in_size = g.in_channels * plane, out_size = g.filters * pixels, patch = g.patch_size();
  const auto x = random_vector(at(rows * in_size), 60);
  const auto w = random_vector(at(g.filters * patch), 61);
  const auto dz = random_vector(at(rows * out_size), 62);
  std::vector<float> workspace(at(conv2d_backward_workspace_floats(g)));
  SerialFor serial;

  std::vector<float> whole_dx(at(rows * in_size)), whole_dw(w.size()), whole_db(at(g.filters));
  Conv2dGradInputArgs whole_input{g, {}, {}, rows, dz.data(), out_size, w.data(), whole_dx.data(), in_size,
                                  workspace.data()};
  conv2d_grad_input(serial, whole_input);
  Conv2dGradWeightArgs whole_weight;
  whole_weight.geometry = g;
  whole_weight.rows = rows;
  whole_weight.x = x.data();
  whole_weight.x_stride = in_size;
  whole_weight.dz = dz.data();
  whole_weight.dz_stride = out_size;
  whole_weight.dw = whole_dw.data();
  whole_weight.db = whole_db.data();
  whole_weight.workspace = workspace.data();
  conv2d_grad_weight(serial, whole_weight);

  std::vector<double> summed_dx(whole_dx.size(), 0.0);
  const struct {
    Range filters;
    Range channels;
  } slices[] = {{{0, 2}, {0, 4}}, {{2, 3}, {0, 4}}, {{3, 6}, {2, 4}}};
  for (const auto& slice : slices) {
    SCOPED_TRACE("filters " + slice.filters.to_string());
    const int64_t channels = slice.channels.size();
    std::vector<float> dx(at(rows * channels * plane), 1e9f);
    const Conv2dGradInputArgs input{g, slice.filters, slice.channels, rows, dz.data() + slice.filters.begin * pixels,
                                    out_size, w.data() + slice.filters.begin * patch, dx.data(), channels * plane,
                                    workspace.data()};
    conv2d_grad_input(serial, input);
    for (int64_t n = 0; n < rows; ++n) {
      for (int64_t e = 0; e < channels * plane; ++e) {
        summed_dx[at(n * in_size + slice.channels.begin * plane + e)] += dx[at(n * channels * plane + e)];
      }
    }

    const int64_t filters = slice.filters.size();
    std::vector<float> dw(at(filters * patch), 1e9f), db(at(filters), 1e9f);
    Conv2dGradWeightArgs weight = whole_weight;
    weight.filters = slice.filters;
    weight.x = x.data() + (slice.filters.begin / g.filters_per_group()) * g.channels_per_group() * plane;
    weight.dz = dz.data() + slice.filters.begin * pixels;
    weight.dw = dw.data();
    weight.db = db.data();
    conv2d_grad_weight(serial, weight);
    for (int64_t i = 0; i < filters * patch; ++i) {
      EXPECT_FLOAT_EQ(dw[at(i)], whole_dw[at(slice.filters.begin * patch + i)]) << "dw " << i;
    }
    for (int64_t f = 0; f < filters; ++f) EXPECT_FLOAT_EQ(db[at(f)], whole_db[at(slice.filters.begin + f)]);
  }
  expect_close(whole_dx, summed_dx, 1e-5, 1e-6, "dx against its sum over the slices");
}

TEST(Conv2dBackward, Col2imIsTheAdjointOfIm2col) {
  // <im2col(x), C> = <x, col2im(C)> for any x and C, overlapping windows and padding included.
  const ConvGeometry g{2, 6, 5, 1, 1, 3, 2, 1, 2, 1, 1};
  const int64_t columns_size = g.patch_size() * g.out_h() * g.out_w();
  const auto x = random_vector(at(g.in_channels * g.in_h * g.in_w), 56);
  const auto c = random_vector(at(columns_size), 57);
  std::vector<float> columns(at(columns_size));
  SerialFor serial;
  im2col(serial, g, g.in_channels, x.data(), columns.data());
  std::vector<float> back(x.size(), 0.0f);
  col2im(g, g.in_channels, c.data(), back.data());
  EXPECT_NEAR(dot(wide(columns), wide(c)), dot(wide(x), wide(back)), 1e-5);
  // col2im adds: a second call doubles.
  std::vector<float> twice(back);
  col2im(g, g.in_channels, c.data(), twice.data());
  for (size_t i = 0; i < back.size(); ++i) EXPECT_FLOAT_EQ(twice[i], 2 * back[i]);
}

// --- pooling -----------------------------------------------------------------

struct PoolCase {
  const char* name;
  int64_t in_h, in_w, kernel, stride, pad = 0;
};

/// The pooled outputs of every window by definition, in double.
std::vector<double> naive_pool(bool max, const PoolArgs& args, const std::vector<double>& in) {
  const ConvGeometry& a = args.window;
  std::vector<double> out;
  for (int64_t n = 0; n < args.rows; ++n) {
    for (int64_t c = 0; c < a.in_channels; ++c) {
      for (int64_t y = 0; y < a.out_h(); ++y) {
        for (int64_t x = 0; x < a.out_w(); ++x) {
          double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
          int64_t count = 0;  // padding adds positions, not values
          for (int64_t i = 0; i < a.kernel_h; ++i) {
            for (int64_t j = 0; j < a.kernel_w; ++j) {
              const int64_t row = y * a.stride_h - a.pad_h + i, col = x * a.stride_w - a.pad_w + j;
              if (row < 0 || row >= a.in_h || col < 0 || col >= a.in_w) continue;
              const double v = in[at(((n * a.in_channels + c) * a.in_h + row) * a.in_w + col)];
              acc = max ? std::max(acc, v) : acc + v;
              ++count;
            }
          }
          out.push_back(max ? acc : acc / double(count));
        }
      }
    }
  }
  return out;
}

TEST(PoolingBackward, MatchesFiniteDifferencesOfTheForward) {
  const int64_t rows = 2, channels = 3;
  for (const PoolCase& c : {PoolCase{"overlapping, kernel 3 stride 2", 7, 7, 3, 2},
                            PoolCase{"non-overlapping, kernel 2 stride 2", 6, 6, 2, 2},
                            PoolCase{"gaps between windows, kernel 2 stride 3", 7, 8, 2, 3},
                            PoolCase{"padded, kernel 3 stride 1 padding 1 (inception's pool branch)", 5, 6, 3, 1, 1},
                            PoolCase{"padded, kernel 3 stride 2 padding 1 (resnet's stem)", 7, 8, 3, 2, 1}}) {
    SCOPED_TRACE(c.name);
    PoolArgs args = testing_support::pool_args(rows, channels, c.in_h, c.in_w, c.kernel, c.stride, c.pad, nullptr, 0, nullptr, 0);
    const int64_t in_size = channels * c.in_h * c.in_w, out_size = channels * args.window.out_h() * args.window.out_w();
    const int64_t x_stride = in_size + 2, dy_stride = out_size + 3, dx_stride = in_size + 4;
    // Distinct values 0.01 apart, so that no window's maximum changes within ±eps.
    std::vector<float> x(at(rows * in_size));
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.01f * static_cast<float>(i) - 1.0f;
    std::shuffle(x.begin(), x.end(), std::mt19937(60));
    const auto dy = random_vector(at(rows * out_size), 61);
    const auto x_strided = to_strided(x, rows, in_size, x_stride);
    const auto dy_strided = to_strided(dy, rows, out_size, dy_stride);
    args.input = x_strided.data();
    args.input_stride = x_stride;
    for (bool max : {true, false}) {
      SCOPED_TRACE(max ? "max" : "avg");
      PoolArgs compact = args;
      compact.input_stride = in_size;
      const auto expected =
          numeric_gradient([&](const std::vector<double>& p) { return dot(wide(dy), naive_pool(max, compact, p)); }, wide(x));
      auto dx = to_strided(std::vector<float>(at(rows * in_size), 1e9f), rows, in_size, dx_stride);
      if (max) {
        max_pool_grad(args, dy_strided.data(), dy_stride, dx.data(), dx_stride);
      } else {
        avg_pool_grad(args, dy_strided.data(), dy_stride, dx.data(), dx_stride);
      }
      expect_close(from_strided(dx, rows, in_size, dx_stride), expected, kRelative, kAbsolute, "dx");
    }
  }
}

TEST(PoolingBackward, MaxGoesToTheElementMaxPoolPicked) {
  // Values on a coarse grid, so that most windows hold ties: each window's
  // gradient must land on the first element, in row-major window order, equal
  // to what max_pool() output for it.
  const int64_t in_h = 7, in_w = 7, kernel = 3, stride = 2;
  auto x = random_vector(at(in_h * in_w), 62);
  for (float& v : x) v = std::round(v * 1.5f) / 1.5f;
  PoolArgs args = testing_support::pool_args(1, 1, in_h, in_w, kernel, stride, 0, x.data(), in_h * in_w, nullptr, 0);
  const int64_t out_h = args.window.out_h(), out_w = args.window.out_w();
  std::vector<float> pooled(at(out_h * out_w));
  args.output = pooled.data();
  args.output_stride = out_h * out_w;
  max_pool(args);
  int64_t ties = 0;
  for (int64_t window = 0; window < out_h * out_w; ++window) {
    std::vector<float> dy(pooled.size(), 0.0f), dx(x.size(), -1.0f);
    dy[at(window)] = 1.0f;
    max_pool_grad(args, dy.data(), out_h * out_w, dx.data(), in_h * in_w);
    const int64_t y = window / out_w, col = window % out_w;
    int64_t first_max = -1, equal = 0;
    for (int64_t i = 0; i < kernel; ++i) {
      for (int64_t j = 0; j < kernel; ++j) {
        const int64_t p = (y * stride + i) * in_w + col * stride + j;
        if (x[at(p)] == pooled[at(window)]) {
          ++equal;
          if (first_max < 0) first_max = p;
        }
      }
    }
    ties += equal > 1;
    for (int64_t p = 0; p < in_h * in_w; ++p) {
      EXPECT_EQ(dx[at(p)], p == first_max ? 1.0f : 0.0f) << "window " << window << ", element " << p;
    }
  }
  EXPECT_GT(ties, 0) << "the grid was too fine to make ties";
}

TEST(PoolingBackward, HandComputedWindows) {
  // One 3x3 channel, kernel 2, stride 1: the windows overlap on the centre.
  //  1 9 2       max 9 9       dy  1  2      max dx  0 1+2 0     avg dx: each dy / 4 to its window
  //  3 4 5           8 8           3  4              0  0  0
  //  6 8 7                                           0 3+4 0
  const std::vector<float> x{1, 9, 2, 3, 4, 5, 6, 8, 7};
  const std::vector<float> dy{1, 2, 3, 4};
  PoolArgs args = testing_support::pool_args(1, 1, 3, 3, 2, 1, 0, x.data(), 9, nullptr, 0);
  std::vector<float> dx(9, -1.0f);
  max_pool_grad(args, dy.data(), 4, dx.data(), 9);
  EXPECT_EQ(dx, (std::vector<float>{0, 3, 0, 0, 0, 0, 0, 7, 0}));
  avg_pool_grad(args, dy.data(), 4, dx.data(), 9);
  EXPECT_EQ(dx, (std::vector<float>{0.25f, 0.75f, 0.5f, 1.0f, 2.5f, 1.5f, 0.75f, 1.75f, 1.0f}));
}

}  // namespace
}  // namespace backward_kernels_test
}  // namespace splitscope
