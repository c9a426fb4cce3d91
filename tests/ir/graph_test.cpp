// Lowering: node and edge counts of unrolled recurrent stacks, acyclicity, costs.

#include <gtest/gtest.h>

#include <set>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"

namespace splitscope {
namespace graph_test {
namespace {

Graph lower_text(const std::string& text) { return lower(parse_model_text(text, "graph.json")); }

TEST(Graph, DenseChain) {
  const Graph graph = lower_text(R"({"batch": 2, "input": [8], "layers": [
      {"type": "dense", "units": 4}, {"type": "relu"}, {"type": "dense", "units": 2}]})");
  // input + 3 layers, a chain of 3 edges.
  EXPECT_EQ(graph.num_nodes(), 4u);
  EXPECT_EQ(graph.num_edges(), 3u);
  EXPECT_EQ(graph.node(0).kind, OpKind::kInput);
  EXPECT_EQ(graph.output(), (TensorRef{3, 0}));
  EXPECT_TRUE(graph.is_acyclic());
  // dense0 reads 2·8 floats of input and 8·4 + 4 weights; writes 2·4 floats.
  EXPECT_EQ(graph.node(1).bytes_read, 4 * (16 + 36));
  EXPECT_EQ(graph.node(1).bytes_written, 4 * 8);
}

TEST(Graph, UnrolledLstmStackCounts) {
  // L = 3 stacked layers, T = 5 steps, sequence input straight into the stack.
  const Graph graph = lower_text(R"({"batch": 2, "input": [5, 4], "layers": [
      {"type": "lstm", "hidden": 6, "layers": 3, "return_sequences": false}]})");
  // Nodes: 5 step inputs + 3·5 cells = 20.
  EXPECT_EQ(graph.num_nodes(), 20u);
  // Edges: x edges L·T = 15; (l, t-1) -> (l, t) carries h and c: 2·L·(T-1) = 24.
  EXPECT_EQ(graph.num_edges(), 15u + 24u);
  EXPECT_TRUE(graph.is_acyclic());
  // The output is h of the last cell (layer 2, step 4).
  const OpNode& last = graph.node(graph.output().node);
  EXPECT_EQ(last.kind, OpKind::kLstmCell);
  EXPECT_EQ(last.sublayer, 2);
  EXPECT_EQ(last.step, 4);
  EXPECT_EQ(graph.output().output, kCellHiddenOutput);
}

TEST(Graph, CellEdgesFollowTheWavefront) {
  const Graph graph = lower_text(R"({"batch": 1, "input": [3, 2], "layers": [
      {"type": "gru", "hidden": 2, "layers": 2}]})");
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const OpNode& node = graph.node(id);
    if (node.kind != OpKind::kGruCell) continue;
    const auto inputs = graph.inputs(id);
    ASSERT_EQ(inputs.size(), 2u);  // x and h; a GRU has no c
    ASSERT_TRUE(inputs[kCellInputSlot].has_value());
    const OpNode& below = graph.node(inputs[kCellInputSlot]->node);
    EXPECT_EQ(below.step, node.step);
    if (node.sublayer == 0) {
      EXPECT_EQ(below.kind, OpKind::kInput);
    } else {
      EXPECT_EQ(below.sublayer, node.sublayer - 1);
    }
    if (node.step == 0) {
      EXPECT_FALSE(inputs[kCellHiddenSlot].has_value());
    } else {
      const OpNode& before = graph.node(inputs[kCellHiddenSlot]->node);
      EXPECT_EQ(before.sublayer, node.sublayer);
      EXPECT_EQ(before.step, node.step - 1);
    }
  }
}

TEST(Graph, ReturnSequencesIntoDenseStacksTheSteps) {
  const Graph graph = lower_text(R"({"batch": 2, "input": [4, 3], "layers": [
      {"type": "lstm", "hidden": 5}, {"type": "flatten"}, {"type": "dense", "units": 2}]})");
  // 4 inputs + 4 cells + stack + flatten + dense = 11 nodes.
  EXPECT_EQ(graph.num_nodes(), 11u);
  NodeId stack = 0;
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    if (graph.node(id).kind == OpKind::kStack) stack = id;
  }
  ASSERT_NE(stack, 0u);
  EXPECT_EQ(graph.node(stack).output_shapes[0], (Shape{4, 5}));
  EXPECT_EQ(graph.inputs(stack).size(), 4u);
  // Edges: 4 x + 2·3 state + 4 into the stack + stack->flatten + flatten->dense = 16.
  EXPECT_EQ(graph.num_edges(), 16u);
}

TEST(Graph, ActivationBetweenRecurrentLayersIsSlicedPerStep) {
  const Graph graph = lower_text(R"({"batch": 1, "input": [3, 2], "layers": [
      {"type": "gru", "hidden": 4}, {"type": "tanh"}, {"type": "gru", "hidden": 4}]})");
  int slices = 0;
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    if (graph.node(id).kind == OpKind::kStepSlice) ++slices;
  }
  EXPECT_EQ(slices, 3);
  EXPECT_TRUE(graph.is_acyclic());
}

TEST(Graph, CellsOfOneStackedLayerShareTheirWeights) {
  const Graph graph = lower_text(R"({"batch": 1, "input": [4, 2], "layers": [
      {"type": "lstm", "hidden": 3, "layers": 2}]})");
  std::set<int> keys;
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    if (graph.node(id).param_key >= 0) keys.insert(graph.node(id).param_key);
  }
  EXPECT_EQ(keys.size(), 2u);
  // 4·3·(2+3) + 12 = 72 and 4·3·(3+3) + 12 = 84.
  EXPECT_EQ(graph.total_params(), 72 + 84);
}

}  // namespace
}  // namespace graph_test
}  // namespace splitscope

namespace splitscope {
namespace graph_test {
namespace {

TEST(Graph, WavefrontOrderRunsAnUnrolledStackDiagonally) {
  const Graph graph = lower(parse_model_text(R"({"batch": 1, "input": [4, 2], "layers": [
      {"type": "lstm", "hidden": 2, "layers": 3}]})", "w.json"));
  // Depth of cell (l, t) is l + t + 1 (the step input is depth 0): the order
  // visits cells by l + t, never a cell before the cells it waits for.
  int64_t last_diagonal = -1;
  std::vector<bool> done(graph.num_nodes(), false);
  for (NodeId id : graph.wavefront_order()) {
    for (const auto& input : graph.inputs(id)) {
      if (input) {
        EXPECT_TRUE(done[input->node]);
      }
    }
    done[id] = true;
    const OpNode& node = graph.node(id);
    if (node.kind != OpKind::kLstmCell) continue;
    EXPECT_GE(node.sublayer + node.step, last_diagonal);
    last_diagonal = node.sublayer + node.step;
  }
  EXPECT_EQ(last_diagonal, 2 + 3);
}

}  // namespace
}  // namespace graph_test
}  // namespace splitscope
