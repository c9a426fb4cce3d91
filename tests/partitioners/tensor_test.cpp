// Megatron pairs: one all-reduce per pair, activation after the reduce.

#include <gtest/gtest.h>

#include "plan/plan_check.hpp"
#include "plan_test_support.hpp"

namespace splitscope::testing {
namespace tensor_test {
namespace {

TEST(Tensor, EvenDenseStackHasOneAllReducePerPair) {
  const auto graph = graph_from_text(R"({"batch": 4, "input": [32], "layers": [
      {"type": "dense", "units": 32, "activation": "relu"}, {"type": "dense", "units": 32, "activation": "relu"},
      {"type": "dense", "units": 32, "activation": "relu"}, {"type": "dense", "units": 32, "activation": "relu"},
      {"type": "dense", "units": 32, "activation": "relu"}, {"type": "dense", "units": 32}]})");
  for (int devices : {2, 3, 4}) {
    const Plan plan = make_plan(graph, "tensor", devices);
    check(plan);
    EXPECT_EQ(count_collectives(plan, CollectiveKind::kAllReduce), 3) << devices;
    EXPECT_EQ(count_collectives(plan, CollectiveKind::kAllGather), 0) << devices;
    EXPECT_EQ(count_collectives(plan, CollectiveKind::kConcat), 0) << devices;
    EXPECT_EQ(count_ops(plan, OpRole::kTransfer), 0) << devices;
    // The ReLU of layers 2 and 4 is applied after their all-reduce, on every
    // device (the next pair's column split needs it there); layer 6 has none.
    EXPECT_EQ(count_ops(plan, OpRole::kEpilogue), 2 * devices) << devices;
  }
}

TEST(Tensor, MlpPairsThenFallsBackToVertical) {
  // mlp-small: (fc1, fc2), (fc3, fc4) paired; the classifier is split like
  // vertical and concatenated on device 0 for the softmax.
  const Plan plan = make_plan(zoo_graph("mlp-small"), "tensor", 2);
  check(plan);
  EXPECT_EQ(count_collectives(plan, CollectiveKind::kAllReduce), 2);
  EXPECT_EQ(count_collectives(plan, CollectiveKind::kAllGather), 0);
  EXPECT_EQ(count_collectives(plan, CollectiveKind::kConcat), 1);
}

TEST(Tensor, PartialSlicesCarryTheBiasOnce) {
  const Plan plan = make_plan(zoo_graph("mlp-small"), "tensor", 4);
  int64_t params = 0;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCompute && plan.graph->node(op.node).name == "fc2") params += op.param_count;
  }
  EXPECT_EQ(params, 64 * 64 + 64);
}

}  // namespace
}  // namespace tensor_test
}  // namespace splitscope::testing

namespace splitscope::testing {
namespace tensor_test {
namespace {

TEST(Tensor, AppliesOnlyWhereThereIsAPair) {
  const auto tensor = make_partitioner("tensor");
  EXPECT_TRUE(tensor->applies(*zoo_graph("mlp-small"), 2));
  EXPECT_TRUE(tensor->applies(*zoo_graph("cnn-small"), 2));   // fc4, fc5
  EXPECT_FALSE(tensor->applies(*zoo_graph("lstm-small"), 2));  // one dense layer only
  EXPECT_FALSE(tensor->applies(*zoo_graph("mlp-small"), 11));  // the classifier has 10 units
  EXPECT_TRUE(make_partitioner("single")->applies(*zoo_graph("mlp-small"), 8));
}

}  // namespace
}  // namespace tensor_test
}  // namespace splitscope::testing
