// Networks as graphs: layers name their `inputs`; add and concat join them.
// Shapes, FLOPs and parameters of a residual block and a concat block are
// counted by hand; every fault of a graph is exit 2 naming the layer.

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include <string>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace graph_format_test {
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

const Layer& layer_named(const Model& model, const std::string& name) {
  const auto found =
      std::find_if(model.layers.begin(), model.layers.end(), [&](const Layer& l) { return l.name == name; });
  if (found == model.layers.end()) throw std::logic_error("no layer " + name);
  return *found;
}

NodeId node_named(const Graph& graph, const std::string& name) {
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    if (graph.node(id).name == name) return id;
  }
  throw std::logic_error("no node " + name);
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

// A bottleneck block with a projected, strided shortcut (resnet50's first block of a stage) on [8, 8, 8], batch 2:
//   a    conv 8->4 1x1:                 out [4, 8, 8]   params 4·8 + 4 = 36     FLOPs 2·4·8·8·8·2 = 8,192
//   b    conv 4->4 3x3 stride 2 pad 1:  out [4, 4, 4]   params 4·4·9 + 4 = 148  FLOPs 2·4·4·4·4·9·2 = 9,216
//   c    conv 4->16 1x1:                out [16, 4, 4]  params 16·4 + 16 = 80   FLOPs 2·16·4·4·4·2 = 4,096
//   proj conv 8->16 1x1 stride 2:       out [16, 4, 4]  params 16·8 + 16 = 144  FLOPs 2·16·4·4·8·2 = 8,192
//   add(c, proj), relu: [16, 4, 4]; the add reads 2 × 2·256·4 bytes and writes 2·256·4.
TEST(GraphFormat, HandCountedBottleneckBlockWithProjectedShortcut) {
  const Model model = parse_model_text(net(R"(
      {"type": "conv2d", "name": "a", "filters": 4, "kernel": 1, "activation": "relu"},
      {"type": "conv2d", "name": "b", "filters": 4, "kernel": 3, "stride": 2, "padding": 1, "activation": "relu"},
      {"type": "conv2d", "name": "c", "filters": 16, "kernel": 1},
      {"type": "conv2d", "name": "proj", "inputs": "input", "filters": 16, "kernel": 1, "stride": 2},
      {"type": "add", "name": "sum", "inputs": ["c", "proj"]},
      {"type": "relu", "name": "out"})", R"("input": [8, 8, 8])"), "g.json");
  EXPECT_EQ(layer_named(model, "b").output_shape, (Shape{4, 4, 4}));
  EXPECT_EQ(layer_named(model, "proj").output_shape, (Shape{16, 4, 4}));
  EXPECT_EQ(model.output_shape(), (Shape{16, 4, 4}));
  const Graph graph = lower(model);
  EXPECT_EQ(graph.total_params(), 36 + 148 + 80 + 144);
  EXPECT_EQ(graph.total_flops(), 8'192 + 9'216 + 4'096 + 8'192);
  const OpNode& sum = graph.node(node_named(graph, "sum"));
  EXPECT_EQ(sum.bytes_read, 2 * 2 * 256 * 4);
  EXPECT_EQ(sum.bytes_written, 2 * 256 * 4);
  // The block's input is read by a and by proj: one value, two readers.
  NodeId input = 0;
  for (NodeId id = 0; id < graph.num_nodes(); ++id) input = graph.node(id).kind == OpKind::kInput ? id : input;
  EXPECT_EQ(graph.consumers({input, 0}).size(), 2u);
}

// An inception block on [8, 6, 6], batch 2 (36 positions a plane; FLOPs per sample, times 2 below):
//   1x1          conv 8->4 1x1:         params 4·8 + 4 = 36     FLOPs 2·4·36·8 = 2,304
//   3x3_reduce   conv 8->2 1x1:         params 2·8 + 2 = 18     FLOPs 2·2·36·8 = 1,152
//   3x3          conv 2->4 3x3 pad 1:   params 4·2·9 + 4 = 76   FLOPs 2·4·36·2·9 = 5,184
//   5x5_reduce   conv 8->2 1x1:         params 18               FLOPs 1,152
//   5x5          conv 2->3 5x5 pad 2:   params 3·2·25 + 3 = 153 FLOPs 2·3·36·2·25 = 10,800
//   pool         maxpool 3x3 stride 1 pad 1: [8, 6, 6], no params, no FLOPs
//   pool_proj    conv 8->2 1x1:         params 18               FLOPs 1,152
//   concat: [4 + 4 + 3 + 2 = 13, 6, 6]; reads and writes 2·13·36·4 = 3,744 bytes.
TEST(GraphFormat, HandCountedInceptionBlock) {
  const Model model = parse_model_text(net(R"(
      {"type": "conv2d", "name": "1x1", "filters": 4, "kernel": 1, "activation": "relu"},
      {"type": "conv2d", "name": "3x3_reduce", "inputs": "input", "filters": 2, "kernel": 1, "activation": "relu"},
      {"type": "conv2d", "name": "3x3", "filters": 4, "kernel": 3, "padding": 1, "activation": "relu"},
      {"type": "conv2d", "name": "5x5_reduce", "inputs": "input", "filters": 2, "kernel": 1, "activation": "relu"},
      {"type": "conv2d", "name": "5x5", "filters": 3, "kernel": 5, "padding": 2, "activation": "relu"},
      {"type": "maxpool", "name": "pool", "inputs": "input", "kernel": 3, "stride": 1, "padding": 1},
      {"type": "conv2d", "name": "pool_proj", "filters": 2, "kernel": 1, "activation": "relu"},
      {"type": "concat", "name": "out", "inputs": ["1x1", "3x3", "5x5", "pool_proj"]})",
                                                R"("input": [8, 6, 6])"),
                                            "g.json");
  EXPECT_EQ(layer_named(model, "pool").output_shape, (Shape{8, 6, 6}));
  EXPECT_EQ(model.output_shape(), (Shape{13, 6, 6}));
  const Graph graph = lower(model);
  EXPECT_EQ(graph.total_params(), 36 + 18 + 76 + 18 + 153 + 18);
  EXPECT_EQ(graph.total_flops(), 2 * (2'304 + 1'152 + 5'184 + 1'152 + 10'800 + 1'152));
  const OpNode& concat = graph.node(node_named(graph, "out"));
  EXPECT_EQ(concat.bytes_read, 2 * 13 * 36 * 4);
  EXPECT_EQ(concat.bytes_written, 2 * 13 * 36 * 4);
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
}  // namespace graph_format_test
}  // namespace splitscope
