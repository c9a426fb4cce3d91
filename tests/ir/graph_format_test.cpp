// Networks as graphs: layers name their `inputs`; add and concat join them.
// Shapes, FLOPs and parameters of a residual block and a concat block are
// counted by hand; every fault of a graph is exit 2 naming the layer.

#include <gtest/gtest.h>

#include <string>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

void expect_error(const std::string& text, const std::string& field, const std::string& words) {
  try {
    parse_model_text(text, "g.json");
    FAIL() << "no error for " << text;
  } catch (const InputError& error) {
    EXPECT_EQ(error.field(), field) << error.what();
    EXPECT_NE(error.problem().find(words), std::string::npos)
        << "message: " << error.what() << "\nexpected to contain: " << words;
  }
}

std::string net(const std::string& layers, const std::string& input = R"("input": [4])") {
  return R"({"batch": 2, )" + input + R"(, "layers": [)" + layers + "]}";
}

// A residual block on [8, 6, 6], batch 2:
//   c1 conv 8->8 3x3 pad 1: params 8·8·9 + 8 = 584, FLOPs 2·8·6·6·8·9·2 = 82,944
//   c2 the same; add(c1, c2): [8, 6, 6], no params, no FLOPs (bytes only).
TEST(GraphFormat, HandCountedResidualBlock) {
  const Model model = parse_model_text(net(R"(
      {"type": "conv2d", "name": "c1", "filters": 8, "kernel": 3, "padding": 1, "activation": "relu"},
      {"type": "conv2d", "name": "c2", "filters": 8, "kernel": 3, "padding": 1},
      {"type": "add", "name": "sum", "inputs": ["c1", "c2"]})", R"("input": [8, 6, 6])"), "g.json");
  ASSERT_EQ(model.layers.size(), 3u);
  EXPECT_EQ(model.layers[2].inputs, (std::vector<std::string>{"c1", "c2"}));
  EXPECT_EQ(model.layers[2].output_shape, (Shape{8, 6, 6}));
  const Graph graph = lower(model);
  EXPECT_EQ(graph.total_params(), 2 * 584);
  EXPECT_EQ(graph.total_flops(), 2 * 82'944);
  // c1's output is read twice (by c2 and by the add): one tensor, two consumers.
  NodeId c1 = 0, sum = 0;
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    if (graph.node(id).name == "c1") c1 = id;
    if (graph.node(id).name == "sum") sum = id;
  }
  EXPECT_EQ(graph.consumers({c1, 0}).size(), 2u);
  EXPECT_EQ(graph.node(sum).kind, OpKind::kAdd);
  EXPECT_EQ(graph.output().node, sum);
  // The add reads 2 × 2·8·6·6·4 bytes and writes one of them.
  EXPECT_EQ(graph.node(sum).bytes_read, 2 * 2 * 288 * 4);
  EXPECT_EQ(graph.node(sum).bytes_written, 2 * 288 * 4);
}

// Inception-style: two branches on [4, 5, 5] joined along channels.
//   a: conv 4->3 1x1: params 4·3 + 3 = 15, FLOPs 2·3·5·5·4·1·1·2 = 1,200
//   b: conv 4->5 3x3 pad 1: params 5·4·9 + 5 = 185, FLOPs 2·5·5·5·4·9·2 = 18,000
//   concat: [8, 5, 5]
TEST(GraphFormat, HandCountedConcatBlockWithTwoNamedInputs) {
  const Model model = parse_model_text(R"({"batch": 2, "inputs": {"img": [4, 5, 5], "side": [6]}, "layers": [
      {"type": "conv2d", "name": "a", "inputs": "img", "filters": 3, "kernel": 1},
      {"type": "conv2d", "name": "b", "inputs": ["img"], "filters": 5, "kernel": 3, "padding": 1},
      {"type": "concat", "name": "cat", "inputs": ["a", "b"]},
      {"type": "flatten", "name": "flat"},
      {"type": "concat", "name": "both", "inputs": ["flat", "side"]}]})", "g.json");
  ASSERT_EQ(model.inputs.size(), 2u);
  EXPECT_EQ(model.layers[2].output_shape, (Shape{8, 5, 5}));
  EXPECT_EQ(model.layers[4].output_shape, (Shape{8 * 25 + 6}));
  const Graph graph = lower(model);
  EXPECT_EQ(graph.total_params(), 15 + 185);
  EXPECT_EQ(graph.total_flops(), 1'200 + 18'000);
  int inputs = 0;
  for (NodeId id = 0; id < graph.num_nodes(); ++id) inputs += graph.node(id).kind == OpKind::kInput ? 1 : 0;
  EXPECT_EQ(inputs, 2);
}

TEST(GraphFormat, LayersMayBeListedInAnyOrderAndRunInDependencyOrder) {
  const Model model = parse_model_text(net(R"(
      {"type": "add", "name": "sum", "inputs": ["x", "y"]},
      {"type": "dense", "name": "x", "inputs": "input", "units": 3},
      {"type": "dense", "name": "y", "inputs": "input", "units": 3})"), "g.json");
  ASSERT_EQ(model.layers.size(), 3u);
  EXPECT_EQ(model.layers[0].name, "x");
  EXPECT_EQ(model.layers[1].name, "y");
  EXPECT_EQ(model.layers[2].name, "sum");
}

TEST(GraphFormat, ACycleNamesTheLayersOnIt) {
  expect_error(net(R"(
      {"type": "dense", "name": "a", "units": 4, "inputs": "c"},
      {"type": "dense", "name": "b", "units": 4, "inputs": "a"},
      {"type": "add", "name": "c", "inputs": ["b", "input"]},
      {"type": "dense", "name": "out", "units": 2, "inputs": "c"})"),
               "layers[0].inputs", "a reads c reads b reads a");
}

TEST(GraphFormat, AMisspeltInputListsTheNames) {
  expect_error(net(R"({"type": "dense", "name": "a", "units": 4}, {"type": "dense", "units": 2, "inputs": "aa"})"),
               "layers[1].inputs", "no layer or network input is named 'aa'; the names are input, a");
}

TEST(GraphFormat, AnUnusedLayerIsRefused) {
  expect_error(net(R"({"type": "dense", "name": "dead", "units": 4},
                      {"type": "dense", "name": "out", "units": 2, "inputs": "input"})"),
               "layers[0]", "layer 'dead' is not used");
}

TEST(GraphFormat, AShapeMismatchAtAJoinNamesBothInputs) {
  expect_error(net(R"({"type": "dense", "name": "a", "units": 4}, {"type": "dense", "name": "b", "units": 3},
                      {"type": "add", "inputs": ["a", "b"]})"),
               "layers[2].inputs", "add needs inputs of one shape, but 'a' is [4] and 'b' is [3]");
  expect_error(net(R"({"type": "conv2d", "name": "a", "filters": 2, "kernel": 1},
                      {"type": "conv2d", "name": "b", "filters": 2, "kernel": 3, "inputs": "input"},
                      {"type": "concat", "inputs": ["a", "b"]})", R"("input": [1, 5, 5])"),
               "layers[2].inputs", "'a' is [2, 5, 5] and 'b' is [2, 3, 3]");
}

TEST(GraphFormat, JoinsNeedTwoInputsAndOtherLayersOne) {
  expect_error(net(R"({"type": "add"})"), "layers[0].inputs", "add joins two or more inputs");
  expect_error(net(R"({"type": "dense", "name": "a", "units": 4}, {"type": "dense", "units": 2, "inputs": ["a", "input"]})"),
               "layers[1].inputs", "dense reads one input, but \"inputs\" names 2");
}

TEST(GraphFormat, SeveralInputsNeedTheFirstLayerToSayWhichItReads) {
  expect_error(R"({"batch": 1, "inputs": {"l": [2], "r": [2]}, "layers": [{"type": "relu"}]})", "layers[0].inputs",
               "the network has several inputs (l, r)");
  expect_error(R"({"batch": 1, "inputs": {"l": [2], "r": [2]}, "layers": [{"type": "relu", "inputs": "l"}]})",
               "inputs.r", "the network input 'r' is not read by any layer");
  expect_error(R"({"batch": 1, "input": [2], "inputs": {"l": [2]}, "layers": [{"type": "relu"}]})", "inputs",
               "not both");
}

}  // namespace
}  // namespace splitscope
