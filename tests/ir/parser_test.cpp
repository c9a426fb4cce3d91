// Parsing: defaults, shapes and names of every layer kind.

#include <gtest/gtest.h>

#include "ir/model_parser.hpp"

namespace splitscope {
namespace parser_test {
namespace {

Model parse(const std::string& text) { return parse_model_text(text, "test.json"); }

TEST(Parser, DenseStackShapesAndDefaultNames) {
  const Model model = parse(R"({"name": "m", "batch": 8, "input": [32],
    "layers": [{"type": "dense", "units": 16, "activation": "relu"},
               {"type": "dense", "units": 4, "bias": false},
               {"type": "softmax"}]})");
  EXPECT_EQ(model.name, "m");
  EXPECT_EQ(model.batch, 8);
  ASSERT_EQ(model.layers.size(), 3u);
  EXPECT_EQ(model.layers[0].name, "dense0");
  EXPECT_EQ(model.layers[1].name, "dense1");
  EXPECT_EQ(model.layers[2].name, "softmax2");
  EXPECT_EQ(model.layers[0].attrs.activation, Activation::kRelu);
  EXPECT_TRUE(model.layers[0].attrs.bias);
  EXPECT_FALSE(model.layers[1].attrs.bias);
  EXPECT_EQ(model.layers[0].output_shape, (Shape{16}));
  EXPECT_EQ(model.layers[1].input_shape, (Shape{16}));
  EXPECT_EQ(model.output_shape(), (Shape{4}));
}

TEST(Parser, ConvAndPoolShapesFollowTheFormula) {
  // conv: floor((227 + 2·0 - 11) / 4) + 1 = 55; pool: floor((55 - 3) / 2) + 1 = 27;
  // conv 5x5 pad 2: floor((27 + 4 - 5) / 1) + 1 = 27; flatten: 256·27·27 = 186624.
  const Model model = parse(R"({"batch": 2, "input": [3, 227, 227], "layers": [
      {"type": "conv2d", "filters": 96, "kernel": 11, "stride": 4, "name": "conv1"},
      {"type": "maxpool", "kernel": 3, "stride": 2},
      {"type": "conv2d", "filters": 256, "kernel": [5, 5], "padding": 2, "groups": 2},
      {"type": "flatten"}]})");
  EXPECT_EQ(model.name, "test");  // from the file name
  EXPECT_EQ(model.layers[0].output_shape, (Shape{96, 55, 55}));
  EXPECT_EQ(model.layers[1].output_shape, (Shape{96, 27, 27}));
  EXPECT_EQ(model.layers[2].output_shape, (Shape{256, 27, 27}));
  EXPECT_EQ(model.layers[2].attrs.groups, 2);
  EXPECT_EQ(model.layers[3].output_shape, (Shape{186624}));
}

TEST(Parser, PoolStrideDefaultsToKernelAndAcceptsPairs) {
  const Model model = parse(R"({"batch": 1, "input": [4, 9, 8], "layers": [
      {"type": "avgpool", "kernel": [3, 2]}]})");
  const Layer& pool = model.layers[0];
  EXPECT_EQ(pool.attrs.stride, (Extent2{3, 2}));
  // h: floor((9 - 3) / 3) + 1 = 3; w: floor((8 - 2) / 2) + 1 = 4
  EXPECT_EQ(pool.output_shape, (Shape{4, 3, 4}));
}

TEST(Parser, PaddedPoolShapes) {
  // ResNet's stem pool: floor((112 + 2 - 3) / 2) + 1 = 56; inception's pool branch keeps 28x28.
  const Model model = parse(R"({"batch": 1, "input": [64, 112, 112], "layers": [
      {"type": "maxpool", "kernel": 3, "stride": 2, "padding": 1},
      {"type": "avgpool", "kernel": 3, "stride": 2, "padding": [0, 1]},
      {"type": "maxpool", "kernel": 3, "stride": 1, "padding": 1}]})");
  EXPECT_EQ(model.layers[0].output_shape, (Shape{64, 56, 56}));
  EXPECT_EQ(model.layers[0].attrs.padding, (Extent2{1, 1}));
  // h: floor((56 - 3) / 2) + 1 = 27; w: floor((56 + 2 - 3) / 2) + 1 = 28
  EXPECT_EQ(model.layers[1].output_shape, (Shape{64, 27, 28}));
  EXPECT_EQ(model.layers[2].output_shape, (Shape{64, 27, 28}));
}

TEST(Parser, RecurrentShapes) {
  const Model model = parse(R"({"batch": 4, "input": [10, 6], "layers": [
      {"type": "lstm", "hidden": 8, "layers": 3},
      {"type": "gru", "hidden": 5, "return_sequences": false},
      {"type": "dense", "units": 2}]})");
  EXPECT_EQ(model.layers[0].stacked, 3);
  EXPECT_EQ(model.layers[0].output_shape, (Shape{10, 8}));
  EXPECT_EQ(model.layers[1].stacked, 1);
  EXPECT_EQ(model.layers[1].output_shape, (Shape{5}));
  EXPECT_EQ(model.layers[2].input_shape, (Shape{5}));
}

TEST(Parser, ActivationLayersKeepTheShape) {
  const Model model = parse(R"({"batch": 1, "input": [3, 4, 5], "layers": [
      {"type": "relu"}, {"type": "tanh"}, {"type": "sigmoid", "name": "gate"}]})");
  for (const Layer& layer : model.layers) EXPECT_EQ(layer.output_shape, (Shape{3, 4, 5}));
  EXPECT_EQ(model.layers[2].name, "gate");
}

}  // namespace
}  // namespace parser_test
}  // namespace splitscope
