// The kernels against naive loops written straight from their definitions,
// on small random inputs, whole and sliced.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/kernels/activation.hpp"
#include "exec/cpu/kernels/conv2d.hpp"
#include "exec/cpu/kernels/dense.hpp"
#include "exec/cpu/kernels/gemm.hpp"
#include "exec/cpu/kernels/pooling.hpp"
#include "exec/cpu/kernels/softmax.hpp"
#include "naive_reference.hpp"
#include "pool_args.hpp"

namespace splitscope {
namespace kernels_test {
namespace {

std::vector<float> random_vector(size_t n, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = uniform(generator);
  return v;
}

void expect_close(const std::vector<float>& actual, const std::vector<float>& expected, float tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
  }
}

/// y[r, j] = act(Σ_i x[r, i]·W[i, j] + b[j]) with W [in × units] row-major, by the definition.
std::vector<float> naive_dense(const std::vector<float>& x, int64_t rows, int64_t in, const std::vector<float>& w,
                               int64_t units, const float* bias, Activation activation) {
  std::vector<float> y(static_cast<size_t>(rows * units));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < units; ++j) {
      double sum = bias != nullptr ? bias[j] : 0.0;
      for (int64_t i = 0; i < in; ++i) sum += double(x[r * in + i]) * w[i * units + j];
      y[r * units + j] = activate(activation, static_cast<float>(sum));
    }
  }
  return y;
}

TEST(Gemm, HandComputedProduct) {
  // [1 2; 3 4]·[5 6; 7 8] = [1·5+2·7, 1·6+2·8; 3·5+4·7, 3·6+4·8] = [19 22; 43 50]
  const float a[] = {1, 2, 3, 4};
  const float b[] = {5, 6, 7, 8};
  float c[] = {1, 1, 1, 1};
  SerialFor serial;
  gemm(serial, 2, 2, 2, {a, 2}, {b, 2}, 1.0f, c, 2);  // beta = 1 adds the old C
  EXPECT_EQ(c[0], 20);
  EXPECT_EQ(c[1], 23);
  EXPECT_EQ(c[2], 44);
  EXPECT_EQ(c[3], 51);
}

TEST(Gemm, SplittingAcrossThreadsGivesTheSameProduct) {
  // Wide (split by columns) and tall (split by rows) products, each well above the split threshold.
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{8, 700, 96}, {700, 8, 96}}) {
    const auto a = random_vector(static_cast<size_t>(m * k), 1);
    const auto b = random_vector(static_cast<size_t>(k * n), 2);
    std::vector<float> serial_c(static_cast<size_t>(m * n));
    std::vector<float> pooled_c(serial_c.size());
    SerialFor serial;
    IntraOpPool pool(3);
    gemm(serial, m, n, k, {a.data(), k}, {b.data(), n}, 0.0f, serial_c.data(), n);
    gemm(pool, m, n, k, {a.data(), k}, {b.data(), n}, 0.0f, pooled_c.data(), n);
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n));
    expect_close(pooled_c, serial_c, 1e-5f);
    // And both are the product: check one element by the definition.
    double sum = 0;
    for (int64_t i = 0; i < k; ++i) sum += double(a[static_cast<size_t>(3 * k + i)]) * b[static_cast<size_t>(i * n + 5)];
    EXPECT_NEAR(serial_c[static_cast<size_t>(3 * n + 5)], sum, 1e-4);
  }
}

TEST(Dense, WholeLayerMatchesTheDefinition) {
  const int64_t rows = 5, in = 37, units = 23;
  const auto x = random_vector(rows * in, 3);
  const auto w = random_vector(in * units, 4);
  const auto b = random_vector(units, 5);
  for (Activation activation : {Activation::kNone, Activation::kRelu, Activation::kTanh, Activation::kSigmoid}) {
    std::vector<float> y(rows * units, -7.0f);
    SerialFor serial;
    dense(serial, {rows, in, units, x.data(), in, w.data(), b.data(), activation, y.data(), units});
    expect_close(y, naive_dense(x, rows, in, w, units, b.data(), activation), 1e-5f);
  }
}

TEST(Dense, OutputSliceIsThoseColumnsOfTheWholeLayer) {
  const int64_t rows = 4, in = 19, units = 12;
  const auto x = random_vector(rows * in, 6);
  const auto w = random_vector(in * units, 7);
  const auto b = random_vector(units, 8);
  const auto whole = naive_dense(x, rows, in, w, units, b.data(), Activation::kRelu);
  // Units [5, 9): W's columns 5..8 and b[5..8].
  const int64_t first = 5, count = 4;
  std::vector<float> w_slice;
  for (int64_t i = 0; i < in; ++i) {
    for (int64_t j = first; j < first + count; ++j) w_slice.push_back(w[i * units + j]);
  }
  // Written into a wider output row (stride 6), as a value with more channels would be.
  std::vector<float> y(rows * 6, 0.0f);
  SerialFor serial;
  dense(serial, {rows, in, count, x.data(), in, w_slice.data(), b.data() + first, Activation::kRelu, y.data(), 6});
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < count; ++j) EXPECT_NEAR(y[r * 6 + j], whole[r * units + first + j], 1e-5f);
  }
}

TEST(Dense, ReductionSlicesSumToTheWholeProduct) {
  // X[:, 0:8]·W[0:8, :] + b  and  X[:, 8:19]·W[8:19, :]  add up to X·W + b (before the activation).
  const int64_t rows = 3, in = 19, units = 7, split = 8;
  const auto x = random_vector(rows * in, 9);
  const auto w = random_vector(in * units, 10);
  const auto b = random_vector(units, 11);
  const auto whole = naive_dense(x, rows, in, w, units, b.data(), Activation::kNone);
  std::vector<float> first(rows * units), second(rows * units);
  SerialFor serial;
  dense(serial, {rows, split, units, x.data(), in, w.data(), b.data(), Activation::kNone, first.data(), units});
  dense(serial, {rows, in - split, units, x.data() + split, in, w.data() + split * units, nullptr, Activation::kNone,
                 second.data(), units});
  // The second slice has no bias: alone, it is exactly the naive partial product.
  std::vector<float> x_tail;
  for (int64_t r = 0; r < rows; ++r) x_tail.insert(x_tail.end(), x.begin() + r * in + split, x.begin() + (r + 1) * in);
  const std::vector<float> w_tail(w.begin() + split * units, w.end());
  expect_close(second, naive_dense(x_tail, rows, in - split, w_tail, units, nullptr, Activation::kNone), 1e-5f);
  for (size_t i = 0; i < whole.size(); ++i) EXPECT_NEAR(first[i] + second[i], whole[i], 1e-5f);
}

TEST(Dense, ThreadedMatchesSerial) {
  const int64_t rows = 16, in = 200, units = 300;
  const auto x = random_vector(rows * in, 12);
  const auto w = random_vector(in * units, 13);
  std::vector<float> serial_y(rows * units), pooled_y(rows * units);
  SerialFor serial;
  IntraOpPool pool(2);
  dense(serial, {rows, in, units, x.data(), in, w.data(), nullptr, Activation::kTanh, serial_y.data(), units});
  dense(pool, {rows, in, units, x.data(), in, w.data(), nullptr, Activation::kTanh, pooled_y.data(), units});
  expect_close(pooled_y, serial_y, 1e-5f);
}

/// The whole layer by naive_reference's definition, then the activation.
std::vector<float> naive_conv(const ConvGeometry& g, int64_t rows, const std::vector<float>& in,
                              const std::vector<float>& w, const std::vector<float>& b, Activation activation) {
  const testing_support::NaiveConv conv{g.in_channels, g.in_h, g.in_w, g.filters, g.groups, g.kernel_h,
                                        g.kernel_w, g.stride_h, g.stride_w, g.pad_h, g.pad_w};
  const auto wide = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
  const std::vector<double> out = testing_support::naive_conv(conv, rows, wide(in), wide(w), wide(b));
  std::vector<float> result;
  for (double v : out) result.push_back(activate(activation, static_cast<float>(v)));
  return result;
}

struct ConvCase {
  const char* name;
  ConvGeometry geometry;
  Range filters;
};

/// Runs filters [f0, f1) of the layer through conv2d() and compares with the whole naive convolution.
void check_conv(const ConvCase& c, Activation activation, bool with_bias) {
  SCOPED_TRACE(c.name);
  const ConvGeometry& g = c.geometry;
  const int64_t rows = 2;
  const auto in = random_vector(static_cast<size_t>(rows * g.in_channels * g.in_h * g.in_w), 20);
  const auto w = random_vector(static_cast<size_t>(g.filters * g.patch_size()), 21);
  const auto b = with_bias ? random_vector(static_cast<size_t>(g.filters), 22) : std::vector<float>{};
  const auto whole = naive_conv(g, rows, in, w, b, activation);

  const int64_t plane = g.in_h * g.in_w, pixels = g.out_h() * g.out_w();
  const int64_t first_channel = (c.filters.begin / g.filters_per_group()) * g.channels_per_group();
  std::vector<float> out(static_cast<size_t>(rows * c.filters.size() * pixels), -5.0f);
  std::vector<float> workspace(static_cast<size_t>(conv2d_workspace_floats(g)));
  Conv2dArgs args;
  args.geometry = g;
  args.filters = c.filters;
  args.rows = rows;
  args.input = in.data() + first_channel * plane;
  args.input_stride = g.in_channels * plane;
  args.weights = w.data() + c.filters.begin * g.patch_size();
  args.bias = with_bias ? b.data() + c.filters.begin : nullptr;
  args.activation = activation;
  args.output = out.data();
  args.output_stride = c.filters.size() * pixels;
  args.workspace = workspace.data();
  IntraOpPool pool(2);
  conv2d(pool, args);
  for (int64_t n = 0; n < rows; ++n) {
    for (int64_t f = c.filters.begin; f < c.filters.end; ++f) {
      for (int64_t p = 0; p < pixels; ++p) {
        ASSERT_NEAR(out[static_cast<size_t>((n * c.filters.size() + f - c.filters.begin) * pixels + p)],
                    whole[static_cast<size_t>((n * g.filters + f) * pixels + p)], 1e-5f)
            << "sample " << n << " filter " << f << " pixel " << p;
      }
    }
  }
}

TEST(Conv2d, MatchesTheDefinition) {
  //                                  Cin H  W  Cout G kh kw sh sw ph pw
  const ConvGeometry plain{3, 7, 6, 5, 1, 3, 3, 1, 1, 0, 0};
  const ConvGeometry strided_padded{3, 9, 8, 4, 1, 3, 2, 2, 3, 1, 2};
  const ConvGeometry grouped{6, 5, 5, 9, 3, 3, 3, 1, 1, 1, 1};
  const ConvGeometry depthwise_1x1{4, 3, 3, 4, 4, 1, 1, 1, 1, 0, 0};
  for (const ConvCase& c : {ConvCase{"plain", plain, {0, 5}},
                            ConvCase{"strided and padded", strided_padded, {0, 4}},
                            ConvCase{"grouped, whole", grouped, {0, 9}},
                            ConvCase{"grouped, 1x1 per group", depthwise_1x1, {0, 4}}}) {
    check_conv(c, Activation::kRelu, true);
    check_conv(c, Activation::kNone, false);
  }
}

TEST(Conv2d, FilterSlicesMatchTheWholeLayer) {
  const ConvGeometry plain{3, 6, 6, 8, 1, 3, 3, 1, 1, 1, 1};
  const ConvGeometry grouped{6, 5, 5, 9, 3, 3, 3, 2, 2, 1, 1};  // 3 filters and 2 channels per group
  for (const ConvCase& c : {ConvCase{"output-channel slice", plain, {2, 7}},
                            ConvCase{"one whole group", grouped, {3, 6}},
                            ConvCase{"inside one group", grouped, {4, 6}},
                            ConvCase{"across two groups", grouped, {1, 5}},
                            ConvCase{"across three groups", grouped, {2, 9}}}) {
    check_conv(c, Activation::kTanh, true);
  }
}

TEST(Conv2d, OutputSizesFollowTheFormula) {
  // floor((H + 2p - k) / s) + 1: (9 + 2 - 3) / 2 + 1 = 5 and (8 + 4 - 2) / 3 + 1 = 4.
  const ConvGeometry g{3, 9, 8, 4, 1, 3, 2, 2, 3, 1, 2};
  EXPECT_EQ(g.out_h(), 5);
  EXPECT_EQ(g.out_w(), 4);
  EXPECT_EQ(conv2d_workspace_floats(g), 3 * 3 * 2 * 5 * 4);
}

TEST(Pooling, HandComputedWindows) {
  // One 4x4 channel, kernel 2, stride 2:
  //  1  2 | 3  4
  //  5  6 | 7  8      max: 6 8      mean: (1+2+5+6)/4 = 3.5, (3+4+7+8)/4 = 5.5
  //  ----------
  //  9 10 |11 12           14 16          (9+10+13+14)/4 = 11.5, (11+12+15+16)/4 = 13.5
  // 13 14 |15 16
  std::vector<float> in(16);
  for (int i = 0; i < 16; ++i) in[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  PoolArgs args = testing_support::pool_args(1, 1, 4, 4, 2, 2, 0, in.data(), 16, nullptr, 4);
  std::vector<float> out(4);
  args.output = out.data();
  max_pool(args);
  EXPECT_EQ(out, (std::vector<float>{6, 8, 14, 16}));
  avg_pool(args);
  EXPECT_EQ(out, (std::vector<float>{3.5f, 5.5f, 11.5f, 13.5f}));
}

TEST(Pooling, PaddingAddsWindowsButNoValues) {
  // One 3x3 channel, kernel 3, stride 2, padding 1: (3 + 2 - 3) / 2 + 1 = 2 outputs per axis,
  // each window a corner 2x2 of the real elements:
  //  1 2 3      max: 5 6       mean (real elements only): (1+2+4+5)/4 = 3, (2+3+5+6)/4 = 4
  //  4 5 6           8 9                                  (4+5+7+8)/4 = 6, (5+6+8+9)/4 = 7
  //  7 8 9
  // Negated, a max still ignores the padding: -1, -2, -4, -5 (a zero pad would give 0).
  std::vector<float> in{1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -2, -3, -4, -5, -6, -7, -8, -9};
  PoolArgs args = testing_support::pool_args(1, 2, 3, 3, 3, 2, 1, in.data(), 9, nullptr, 4);
  ASSERT_EQ(args.window.out_h(), 2);
  std::vector<float> out(8);
  args.output = out.data();
  max_pool(args);
  EXPECT_EQ(out, (std::vector<float>{5, 6, 8, 9, -1, -2, -4, -5}));
  avg_pool(args);
  EXPECT_EQ(out, (std::vector<float>{3, 4, 6, 7, -3, -4, -6, -7}));
}

TEST(Pooling, OverlappingWindowsAndChannels) {
  // Kernel 3, stride 2 on a 5x5 plane: (5 - 3) / 2 + 1 = 2 outputs per axis; windows share a row and column.
  // Two channels, the second the negation of the first: its max is minus the first's min.
  std::vector<float> in(50);
  for (int i = 0; i < 25; ++i) {
    in[static_cast<size_t>(i)] = static_cast<float>((i * 7) % 25);
    in[static_cast<size_t>(25 + i)] = -in[static_cast<size_t>(i)];
  }
  PoolArgs args = testing_support::pool_args(1, 2, 5, 5, 3, 2, 0, in.data(), 50, nullptr, 8);
  std::vector<float> out(8);
  args.output = out.data();
  max_pool(args);
  for (int64_t c = 0; c < 2; ++c) {
    for (int64_t y = 0; y < 2; ++y) {
      for (int64_t x = 0; x < 2; ++x) {
        float best = -1e9f;
        for (int64_t i = 0; i < 3; ++i) {
          for (int64_t j = 0; j < 3; ++j) best = std::max(best, in[static_cast<size_t>(c * 25 + (2 * y + i) * 5 + 2 * x + j)]);
        }
        EXPECT_EQ(out[static_cast<size_t>(c * 4 + y * 2 + x)], best);
      }
    }
  }
}

TEST(Activation, ValuesAndStrides) {
  // Two rows of 2 in a stride-3 matrix; the third column must stay untouched.
  std::vector<float> m{-1.0f, 2.0f, 99.0f, 0.5f, -0.25f, 99.0f};
  activation_in_place(Activation::kRelu, m.data(), 3, 2, 2);
  EXPECT_EQ(m, (std::vector<float>{0.0f, 2.0f, 99.0f, 0.5f, 0.0f, 99.0f}));
  EXPECT_FLOAT_EQ(activate(Activation::kSigmoid, 0.0f), 0.5f);
  EXPECT_FLOAT_EQ(activate(Activation::kSigmoid, std::log(3.0f)), 0.75f);  // 1 / (1 + 1/3)
  EXPECT_FLOAT_EQ(activate(Activation::kTanh, std::log(2.0f)), 0.6f);      // (2 - 1/2) / (2 + 1/2)
  EXPECT_EQ(activate(Activation::kNone, -3.5f), -3.5f);
}

TEST(Softmax, HandComputedAndSliced) {
  // softmax(0, ln 2, ln 5) = (1, 2, 5) / 8.
  const std::vector<float> in{0.0f, std::log(2.0f), std::log(5.0f), 1000.0f, 1000.0f, 1000.0f};
  std::vector<float> out(6);
  softmax({2, 3, in.data(), 3, {0, 3}, out.data(), 3});
  EXPECT_FLOAT_EQ(out[0], 0.125f);
  EXPECT_FLOAT_EQ(out[1], 0.25f);
  EXPECT_FLOAT_EQ(out[2], 0.625f);
  // Large equal logits do not overflow: a third each.
  EXPECT_FLOAT_EQ(out[3], 1.0f / 3.0f);
  // Columns [1, 3) only: the same numbers, written from the start of the output row.
  std::vector<float> slice(4, -1.0f);
  softmax({2, 3, in.data(), 3, {1, 3}, slice.data(), 2});
  EXPECT_FLOAT_EQ(slice[0], 0.25f);
  EXPECT_FLOAT_EQ(slice[1], 0.625f);
  EXPECT_FLOAT_EQ(slice[2], 1.0f / 3.0f);
}

}  // namespace
}  // namespace kernels_test
}  // namespace splitscope
