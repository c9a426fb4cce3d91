// batch_norm, layer_norm and dropout as layers and ops: their shapes and
// refusals in the network format, and their parameters, bytes and slices by
// their definitions, against counts done by hand.
#include <gtest/gtest.h>

#include <stdexcept>

#include "ir/layer_costs.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/ops/op_def.hpp"
#include "ir/params.hpp"
#include "ir/slice.hpp"
#include "ir/training.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace normalization_layers_test {
namespace {

std::string with_layers(const std::string& input, const std::string& layers) {
  return R"({"batch": 2, "input": )" + input + R"(, "layers": [)" + layers + "]}";
}

void expect_error(const std::string& text, const std::string& field, const std::string& words) {
  try {
    parse_model_text(text, "nets/bad.json");
    FAIL() << "no error for " << text;
  } catch (const InputError& error) {
    EXPECT_EQ(error.field(), field) << error.what();
    EXPECT_NE(error.problem().find(words), std::string::npos) << error.what() << "\nexpected: " << words;
  }
}

TEST(NormalizationLayers, BatchNormFollowsAnImageOrAVectorAndKeepsItsShape) {
  const Model model = parse_model_text(with_layers("[3, 8, 8]", R"(
      {"type": "conv2d", "filters": 4, "kernel": 3}, {"type": "batch_norm", "epsilon": 0.001, "momentum": 0.01},
      {"type": "flatten"}, {"type": "dense", "units": 5}, {"type": "batch_norm"}, {"type": "dropout", "rate": 0.2})"),
                                       "ok.json");
  EXPECT_EQ(model.layers[1].output_shape, (Shape{4, 6, 6}));
  EXPECT_DOUBLE_EQ(model.layers[1].attrs.epsilon, 0.001);
  EXPECT_DOUBLE_EQ(model.layers[1].attrs.momentum, 0.01);
  EXPECT_EQ(model.layers[4].output_shape, (Shape{5}));
  EXPECT_DOUBLE_EQ(model.layers[4].attrs.epsilon, 1e-5);
  EXPECT_DOUBLE_EQ(model.layers[5].attrs.rate, 0.2);
  // PyTorch's count: gamma and beta per channel; running statistics are buffers.
  EXPECT_EQ(layer_params(model.layers[1]), 2 * 4);
  EXPECT_EQ(layer_params(model.layers[4]), 2 * 5);
  EXPECT_EQ(layer_params(model.layers[5]), 0);
  EXPECT_EQ(layer_flops(model.layers[1], 2), 0);
}

TEST(NormalizationLayers, BadPlacementsAndOptionsAreRefusedNamingTheLayer) {
  expect_error(with_layers("[4, 6]", R"({"type": "batch_norm"})"), "layers[0]",
               "batch_norm normalizes the channels of an image [channels, height, width] (after conv2d) or the "
               "features of a vector [features] (after dense), but gets the sequence [4, 6]; use layer_norm");
  expect_error(with_layers("[3, 8, 8]", R"({"type": "layer_norm"})"), "layers[0]",
               "layer_norm normalizes the last axis of a vector [features] or a sequence [steps, features], but gets "
               "the image [3, 8, 8]");
  expect_error(with_layers("[4]", R"({"type": "dropout", "rate": 1})"), "layers[0].rate", "must be below 1");
  expect_error(with_layers("[4]", R"({"type": "dropout", "rate": -0.5})"), "layers[0].rate", "");
  expect_error(with_layers("[4]", R"({"type": "batch_norm", "epsilon": 0})"), "layers[0].epsilon", "");
  expect_error(with_layers("[4]", R"({"type": "batch_norm", "momentum": 2})"), "layers[0].momentum", "");
  expect_error(with_layers("[4]", R"({"type": "layer_norm", "momentum": 0.1})"), "layers[0].momentum",
               "unknown field");
  expect_error(with_layers("[4]", R"({"type": "batch_norm", "inputs": ["input", "input"]})"), "layers[0].inputs",
               "reads one input");
}

/// A lowered network: input [4, 3, 5] -> batch_norm, [3, 6] -> layer_norm, [10] -> dropout; batch 2.
struct Lowered {
  Graph graph;
  const OpNode& node(OpKind kind) const {
    for (NodeId id = 0; id < graph.num_nodes(); ++id) {
      if (graph.node(id).kind == kind) return graph.node(id);
    }
    throw std::logic_error("no such op");
  }
};

Lowered lowered(const std::string& input, const std::string& layer) {
  return {lower(parse_model_text(with_layers(input, layer), "ok.json"))};
}

TEST(NormalizationLayers, BatchNormCostsBytesOnlyReadingXOnceInInferenceAndTwiceInTraining) {
  const Lowered net = lowered("[4, 3, 5]", R"({"type": "batch_norm"})");
  const OpNode& bn = net.node(OpKind::kBatchNorm);
  const OpDef& def = op_def(OpKind::kBatchNorm);
  // X and Y: 2 samples × 4 channels × 15 elements × 4 bytes = 480; gamma, beta 8 floats = 32 bytes.
  const SliceCost inference = def.cost(bn, full_slice(bn, {0, 2}));
  EXPECT_EQ(inference.flops, 0);
  EXPECT_EQ(inference.param_count, 8);
  EXPECT_EQ(inference.bytes_written, 480);
  EXPECT_EQ(inference.bytes_read, 480 + 32);
  EXPECT_EQ(bn.bytes_read, inference.bytes_read);  // lowering counts the same
  OpNode training = bn;
  def.training_form(training);
  const SliceCost step = def.cost(training, full_slice(training, {0, 2}));
  EXPECT_EQ(step.bytes_read, 2 * 480 + 32);  // the statistics pass, then normalize
  EXPECT_EQ(training.bytes_read, step.bytes_read);
  EXPECT_EQ(def.signature(training, full_slice(training, {0, 2})), "batch_norm:b2:c4:n15:train");
  EXPECT_EQ(def.signature(bn, full_slice(bn, {0, 2})), "batch_norm:b2:c4:n15");
  // Channels [1, 3) of sample 1: its gamma and beta, 1 × 2 × 15 floats.
  const Slice part{{1, 2}, {1, 3}, {0, 4}, {}};
  const SliceCost sliced = def.cost(training, part);
  EXPECT_EQ(sliced.param_count, 4);
  EXPECT_EQ(sliced.bytes_written, 2 * 15 * 4);
  EXPECT_EQ(def.input_channels(training, part, 0), (Range{1, 3}));
  EXPECT_EQ(def.param_range(training, part, 0), (Range{1, 3}));
  EXPECT_EQ(def.device_calls(SliceCalls{training, part}), 1);
}

TEST(NormalizationLayers, BatchNormsBackwardReadsXAndDyTwiceForDxAndOnceForItsWeights) {
  const Lowered net = lowered("[4, 3, 5]", R"({"type": "relu"}, {"type": "batch_norm"}, {"type": "flatten"},
      {"type": "dense", "units": 2})");
  Optimizer sgd;
  const Graph training = training_graph(net.graph, sgd);
  int seen = 0;
  for (NodeId id = 0; id < training.num_nodes(); ++id) {
    const OpNode& node = training.node(id);
    const SliceCost cost = op_def(node.kind).cost(node, full_slice(node, {0, 2}));
    if (node.kind == OpKind::kBatchNorm) {
      EXPECT_TRUE(node.attrs.training);
      EXPECT_EQ(cost.bytes_read, 2 * 480 + 32);
    }
    // dX: two passes over X and dY (sums, then dX) and gamma's 4 floats.
    if (node.kind == OpKind::kBatchNormGradInput) {
      EXPECT_EQ(cost.bytes_read, 4 * 480 + 16);
      EXPECT_EQ(cost.bytes_written, 480);
      EXPECT_EQ(node.param_key, net.node(OpKind::kBatchNorm).param_key);
      ++seen;
    }
    if (node.kind == OpKind::kBatchNormGradWeight) {
      EXPECT_EQ(cost.bytes_read, 2 * 480);
      EXPECT_EQ(cost.bytes_written, 8 * 4);  // dgamma, dbeta
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2);
}

TEST(NormalizationLayers, LayerNormAndDropoutCostTheirBytes) {
  const Lowered ln = lowered("[3, 6]", R"({"type": "layer_norm"})");
  const OpNode& node = ln.node(OpKind::kLayerNorm);
  const OpDef& def = op_def(OpKind::kLayerNorm);
  // 2 samples × 3 steps × 6 features × 4 bytes = 144; gamma, beta 12 floats.
  const SliceCost cost = def.cost(node, full_slice(node, {0, 2}));
  EXPECT_EQ(cost.param_count, 12);
  EXPECT_EQ(cost.bytes_read, 144 + 48);
  EXPECT_EQ(cost.bytes_written, 144);
  EXPECT_EQ(def.signature(node, full_slice(node, {0, 2})), "layer_norm:b2:r3:f6");
  EXPECT_FALSE(def.split.out);  // the statistics span every feature
  EXPECT_EQ(def.param_range(node, Slice{{1, 2}, {0, 3}, {0, 3}, {}}, 1), (Range{0, 6}));
  EXPECT_EQ(layer_params(ln.graph.model().layers[0]), 12);

  const Lowered dropout = lowered("[10]", R"({"type": "dropout"})");
  const OpNode& d = dropout.node(OpKind::kDropout);
  const SliceCost dc = op_def(OpKind::kDropout).cost(d, full_slice(d, {0, 2}));
  EXPECT_EQ(dc.bytes_read, 80);
  EXPECT_EQ(dc.bytes_written, 80);
  EXPECT_EQ(dc.param_count, 0);
}

}  // namespace
}  // namespace normalization_layers_test
}  // namespace splitscope
