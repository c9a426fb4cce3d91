// Weights and inputs: a pure function of (seed, weight set, tensor, element).

#include <gtest/gtest.h>

#include <cmath>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/params.hpp"

namespace splitscope {
namespace params_test {
namespace {

TEST(Params, DeterministicAndBounded) {
  double sum = 0;
  for (int64_t i = 0; i < 10000; ++i) {
    const float a = param_value(7, 3, 0, i, 0.5f);
    EXPECT_EQ(a, param_value(7, 3, 0, i, 0.5f));
    EXPECT_GE(a, -0.5f);
    EXPECT_LT(a, 0.5f);
    sum += a;
  }
  // Uniform on [-0.5, 0.5): the mean of 10000 draws is within ±0.01 (4 sigma = 4·0.289/100).
  EXPECT_NEAR(sum / 10000, 0.0, 0.012);
}

TEST(Params, SeedKeyAndTensorGiveDifferentStreams) {
  int same_seed = 0;
  int same_key = 0;
  int same_tensor = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    same_seed += param_value(1, 0, 0, i, 1) == param_value(2, 0, 0, i, 1);
    same_key += param_value(1, 0, 0, i, 1) == param_value(1, 1, 0, i, 1);
    same_tensor += param_value(1, 0, 0, i, 1) == param_value(1, 0, 1, i, 1);
  }
  EXPECT_LT(same_seed, 5);
  EXPECT_LT(same_key, 5);
  EXPECT_LT(same_tensor, 5);
  EXPECT_NE(input_value(1, 0), input_value(2, 0));
}

TEST(Params, TensorLayoutsMatchTheParameterCounts) {
  const Graph graph = lower(parse_model_text(R"({"batch": 1, "input": [3, 6, 6], "layers": [
      {"type": "conv2d", "filters": 4, "kernel": 3, "activation": "relu"},
      {"type": "flatten"}, {"type": "dense", "units": 5}]})", "p.json"));
  const auto conv = param_tensors(graph, 1);
  ASSERT_EQ(conv.size(), 2u);
  EXPECT_EQ(conv[kWeight].shape, (Shape{4, 3, 3, 3}));
  EXPECT_EQ(conv[kBias].shape, (Shape{4}));
  // He-uniform before a ReLU: sqrt(6 / fan_in), fan_in = 3·3·3 = 27.
  EXPECT_FLOAT_EQ(conv[kWeight].scale, std::sqrt(6.0f / 27.0f));
  const auto dense = param_tensors(graph, 3);
  EXPECT_EQ(dense[kWeight].shape, (Shape{64, 5}));  // 4·4·4 flattened features
  EXPECT_TRUE(param_tensors(graph, 2).empty());     // flatten has no weights
}

TEST(Params, CellTensors) {
  const Graph graph = lower(parse_model_text(R"({"batch": 1, "input": [2, 3], "layers": [
      {"type": "gru", "hidden": 4}]})", "p.json"));
  const auto cell = param_tensors(graph, 2);  // 2 step inputs, then the first cell
  ASSERT_EQ(cell.size(), 3u);
  EXPECT_EQ(cell[kInputWeight].shape, (Shape{3, 12}));
  EXPECT_EQ(cell[kRecurrentWeight].shape, (Shape{4, 12}));
  EXPECT_EQ(cell[kCellBias].shape, (Shape{12}));
}

}  // namespace
}  // namespace params_test
}  // namespace splitscope
