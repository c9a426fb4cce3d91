// The op samples calibrators time (partitioners/op_samples.hpp): one op alone,
// and the same op on every device of a pooled machine at once.

#include "partitioners/op_samples.hpp"

#include <gtest/gtest.h>

#include <set>

#include "plan_test_support.hpp"

namespace splitscope {
namespace op_samples_test {
namespace {

TEST(OpSamples, AReplicatedOpRunsOnEveryDeviceOnInputsOfItsOwn) {
  const auto graph = testing::zoo_graph("mlp-small");
  const std::vector<OpSample> samples = op_samples_from_graph(graph, {2}, {});
  const OpSample& dense = samples.at(0);  // the first layer, whole
  const Plan plan = replicated_op_plan(dense, 3);
  EXPECT_EQ(plan.devices, 3);
  ASSERT_EQ(plan.ops.size(), 3u);
  ASSERT_EQ(plan.schedule.size(), 3u);
  std::set<int> values;
  for (int d = 0; d < 3; ++d) {
    const PlanOp& op = plan.ops[static_cast<size_t>(d)];
    EXPECT_EQ(op.device, d);
    EXPECT_EQ(op.node, dense.node);
    EXPECT_EQ(plan.schedule[static_cast<size_t>(d)], std::vector<int>{d});
    for (int value : op.inputs) {
      ASSERT_GE(value, 0);
      EXPECT_EQ(plan.values[static_cast<size_t>(value)].device, d);
      EXPECT_TRUE(values.insert(value).second) << "devices share input value " << value;
    }
    for (int value : op.outputs) EXPECT_EQ(plan.values[static_cast<size_t>(value)].device, d);
  }
  // One copy is the single-op plan, value for value.
  const Plan one = replicated_op_plan(dense, 1);
  const Plan single = single_op_plan(dense);
  EXPECT_EQ(one.ops.size(), 1u);
  EXPECT_EQ(one.values.size(), single.values.size());
  EXPECT_EQ(one.ops[0].flops, single.ops[0].flops);
  EXPECT_EQ(plan.ops[2].flops, single.ops[0].flops);
}

TEST(OpSamples, RunsPerDeviceFollowEachOtherOnTheirDeviceAndShareItsInputs) {
  const auto graph = testing::zoo_graph("mlp-small");
  const OpSample dense = op_samples_from_graph(graph, {2}, {}).at(0);
  const Plan plan = replicated_op_plan(dense, 2, 3);
  ASSERT_EQ(plan.ops.size(), 6u);
  EXPECT_EQ(plan.schedule, (std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}}));
  std::set<int> outputs;
  for (const PlanOp& op : plan.ops) {
    EXPECT_EQ(op.device, op.id / 3);
    EXPECT_EQ(op.inputs, plan.ops[static_cast<size_t>(op.device * 3)].inputs);  // its device's inputs
    EXPECT_EQ(op.params, plan.ops[static_cast<size_t>(op.device * 3)].params);
    for (int value : op.outputs) {
      EXPECT_EQ(plan.values[static_cast<size_t>(value)].producer, op.id);
      EXPECT_TRUE(outputs.insert(value).second) << "runs share output value " << value;
    }
  }
  EXPECT_NE(plan.ops[0].inputs, plan.ops[3].inputs);
}

}  // namespace
}  // namespace op_samples_test
}  // namespace splitscope
