// FLOPs and parameters of every layer kind, against arithmetic done by hand.

#include <gtest/gtest.h>

#include "ir/layer_costs.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"

namespace splitscope {
namespace layer_costs_test {
namespace {

Model parse(const std::string& text) { return parse_model_text(text, "costs.json"); }

TEST(LayerCosts, Dense) {
  const Model model = parse(R"({"batch": 8, "input": [100], "layers": [
      {"type": "dense", "units": 30}, {"type": "dense", "units": 10, "bias": false}]})");
  // 100·30 weights + 30 biases = 3030; FLOPs 2·100·30·8 = 48000.
  EXPECT_EQ(layer_params(model.layers[0]), 3030);
  EXPECT_EQ(layer_flops(model.layers[0], 8), 48000);
  // 30·10 = 300, no bias; FLOPs 2·30·10·8 = 4800.
  EXPECT_EQ(layer_params(model.layers[1]), 300);
  EXPECT_EQ(layer_flops(model.layers[1], 8), 4800);
}

TEST(LayerCosts, Conv2dAndGroupedConv2d) {
  const Model model = parse(R"({"batch": 2, "input": [4, 10, 10], "layers": [
      {"type": "conv2d", "filters": 6, "kernel": 3},
      {"type": "conv2d", "filters": 8, "kernel": [3, 1], "padding": [1, 0], "groups": 2}]})");
  // conv A: out 6x8x8 (10-3+1); params 6·4·3·3 + 6 = 222;
  // FLOPs 2·6·8·8·4·3·3·2 = 55296.
  EXPECT_EQ(model.layers[0].output_shape, (Shape{6, 8, 8}));
  EXPECT_EQ(layer_params(model.layers[0]), 222);
  EXPECT_EQ(layer_flops(model.layers[0], 2), 55296);
  // conv B (groups 2, 6 in channels -> 3 per group): out 8 x (8+2-3+1=8) x (8-1+1=8);
  // params 8·3·3·1 + 8 = 80; FLOPs 2·8·8·8·3·3·1·2 = 18432.
  EXPECT_EQ(model.layers[1].output_shape, (Shape{8, 8, 8}));
  EXPECT_EQ(layer_params(model.layers[1]), 80);
  EXPECT_EQ(layer_flops(model.layers[1], 2), 18432);
}

TEST(LayerCosts, PoolingActivationsFlattenSoftmaxHaveNoFlopsOrParams) {
  const Model model = parse(R"({"batch": 3, "input": [2, 4, 4], "layers": [
      {"type": "maxpool", "kernel": 2}, {"type": "avgpool", "kernel": 2}, {"type": "relu"},
      {"type": "tanh"}, {"type": "sigmoid"}, {"type": "flatten"}, {"type": "softmax"}]})");
  for (const Layer& layer : model.layers) {
    EXPECT_EQ(layer_params(layer), 0) << layer.name;
    EXPECT_EQ(layer_flops(layer, 3), 0) << layer.name;
  }
}

TEST(LayerCosts, StackedLstm) {
  const Model model = parse(R"({"batch": 5, "input": [7, 3], "layers": [
      {"type": "lstm", "hidden": 4, "layers": 2}]})");
  // layer 0: 4·4·(3+4) + 4·4 = 112 + 16 = 128; layer 1: 4·4·(4+4) + 16 = 128 + 16 = 144.
  EXPECT_EQ(layer_params(model.layers[0]), 128 + 144);
  // cell FLOPs 2·4·H·(I+H)·B: layer 0: 2·4·4·7·5 = 1120, layer 1: 2·4·4·8·5 = 1280; times 7 steps.
  EXPECT_EQ(recurrent_cell_flops(OpKind::kLstmCell, 3, 4, 5), 1120);
  EXPECT_EQ(layer_flops(model.layers[0], 5), 7 * (1120 + 1280));
}

TEST(LayerCosts, GruWithoutBias) {
  const Model model = parse(R"({"batch": 2, "input": [3, 6], "layers": [
      {"type": "gru", "hidden": 5, "bias": false}]})");
  // 3·5·(6+5) = 165 parameters; cell FLOPs 2·3·5·11·2 = 660; 3 steps.
  EXPECT_EQ(layer_params(model.layers[0]), 165);
  EXPECT_EQ(layer_flops(model.layers[0], 2), 3 * 660);
}

TEST(LayerCosts, GraphTotalsEqualTheSumOfLayers) {
  const Model model = parse(R"({"batch": 4, "input": [6, 3], "layers": [
      {"type": "lstm", "hidden": 4, "layers": 2, "return_sequences": false},
      {"type": "dense", "units": 5, "activation": "tanh"}, {"type": "softmax"}]})");
  const Graph graph = lower(model);
  // The graph holds 2·6 unrolled cells, the dense layer and the softmax. FLOPs: cells of layer 0
  // 2·4·4·(3+4)·4 = 896, of layer 1 2·4·4·(4+4)·4 = 1024, six steps each: 6·1920 = 11520; dense
  // 2·4·5·4 = 160; softmax 0: 11680 in all.
  EXPECT_EQ(graph.total_flops(), 11680);
  // Parameters: lstm 4·4·7 + 16 = 128 and 4·4·8 + 16 = 144; dense 4·5 + 5 = 25: 297.
  EXPECT_EQ(graph.total_params(), 297);
}

}  // namespace
}  // namespace layer_costs_test
}  // namespace splitscope
