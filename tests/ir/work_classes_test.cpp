// Work classes: which nodes do the same work, and that a graph keeps them
// only until it changes.

#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/work_classes.hpp"

namespace splitscope {
namespace work_classes_test {
namespace {

// 3 stacked layers of 6 over 5 steps of 4 features: layer 0 reads 4, layers 1 and 2 read 6.
Graph lstm_stack() {
  return lower(parse_model_text(R"({"batch": 2, "input": [5, 4], "layers": [
      {"type": "lstm", "hidden": 6, "layers": 3, "return_sequences": false}]})", "stack.json"));
}

/// Each cell's class, by (stacked layer, step).
std::map<std::pair<int, int>, int> cell_classes(const Graph& graph, const WorkClasses& classes) {
  std::map<std::pair<int, int>, int> cells;
  for (size_t id = 0; id < graph.num_nodes(); ++id) {
    const OpNode& node = graph.node(id);
    if (node.kind == OpKind::kLstmCell) cells[{node.sublayer, node.step}] = classes.of_node[id];
  }
  return cells;
}

TEST(WorkClasses, CellsOfEqualShapeShareAClassWhateverTheirLayerOrStep) {
  const Graph graph = lstm_stack();
  const WorkClasses classes = work_classes(graph);
  ASSERT_EQ(classes.of_node.size(), graph.num_nodes());
  const auto cells = cell_classes(graph, classes);
  ASSERT_EQ(cells.size(), 15u);
  // Layers 1 and 2 read 6 features at every step; a step with state differs from the first.
  EXPECT_EQ(cells.at({1, 1}), cells.at({2, 4}));
  EXPECT_EQ(cells.at({1, 0}), cells.at({2, 0}));
  EXPECT_NE(cells.at({1, 0}), cells.at({1, 1}));
  // Layer 0 reads 4.
  EXPECT_EQ(cells.at({0, 1}), cells.at({0, 3}));
  EXPECT_NE(cells.at({0, 1}), cells.at({1, 1}));
  EXPECT_NE(cells.at({0, 0}), cells.at({1, 0}));
  // Classes are numbered by their first node, from 0.
  int next = 0;
  for (int cls : classes.of_node) {
    EXPECT_LE(cls, next);
    if (cls == next) ++next;
  }
  EXPECT_EQ(classes.count, next);
}

TEST(WorkClasses, AGraphKeepsItsClassesUntilANodeChanges) {
  Graph graph = lstm_stack();
  const WorkClasses fresh = work_classes(graph);
  EXPECT_EQ(graph.work_classes().of_node, fresh.of_node);
  EXPECT_EQ(&graph.work_classes(), &graph.work_classes());
  // Cell (0, 3) made a first step: it leaves its layer's class for layer 0's first step's.
  NodeId moved = 0;
  for (size_t id = 0; id < graph.num_nodes(); ++id) {
    const OpNode& node = graph.node(id);
    if (node.kind == OpKind::kLstmCell && node.sublayer == 0 && node.step == 3) moved = id;
  }
  graph.mutable_node(moved).step = 0;
  const auto cells = cell_classes(graph, graph.work_classes());
  EXPECT_EQ(graph.work_classes().of_node[moved], cells.at({0, 0}));
  EXPECT_NE(cells.at({0, 0}), cells.at({0, 1}));
  const size_t before = graph.num_nodes();
  graph.add_node(graph.node(moved));
  ASSERT_EQ(graph.work_classes().of_node.size(), before + 1);
  EXPECT_EQ(graph.work_classes().of_node[before], graph.work_classes().of_node[moved]);
  // A copy finds its own.
  const Graph copy = graph;
  EXPECT_EQ(copy.work_classes().of_node, graph.work_classes().of_node);
}

}  // namespace
}  // namespace work_classes_test
}  // namespace splitscope
