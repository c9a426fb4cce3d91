// The intra-layer split: grouped convolutions split cleanly, dense layers gather.

#include <gtest/gtest.h>

#include <set>

#include "plan/plan_check.hpp"
#include "plan_test_support.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace vertical_test {
namespace {

/// Names of the graph ops whose tensors cross devices.
std::set<std::string> moved_tensors(const Plan& plan) {
  std::set<std::string> names;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kTransfer || op.role == OpRole::kCollective) {
      names.insert(plan.graph->node(op.node).name);
    }
  }
  return names;
}

TEST(Vertical, GroupedConvolutionsMoveNoData) {
  // cnn-small: conv1 -> pool1 -> conv2 (g2) -> conv3 (g2) -> pool3 -> flatten -> fc4 -> fc5 -> softmax.
  // Two devices: conv1's filters split 4 + 4, pool1 follows, and each grouped
  // conv's group reads exactly the channels its device holds.
  const Plan plan = make_plan(zoo_graph("cnn-small"), "vertical", 2);
  check(plan);
  EXPECT_EQ(moved_tensors(plan), (std::set<std::string>{"flatten", "fc4", "fc5"}));
}

TEST(Vertical, AlexNetMovesDataOnlyAtConv3AndTheDenseHead) {
  const Plan plan = make_plan(zoo_graph("cnn"), "vertical", 2);
  check(plan);
  // pool2 feeds conv3 (not grouped); flatten, fc6, fc7 feed dense layers; fc8 feeds the softmax.
  EXPECT_EQ(moved_tensors(plan), (std::set<std::string>{"pool2", "flatten", "fc6", "fc7", "fc8"}));
}

TEST(Vertical, DenseStackAllGathersEveryLayer) {
  const Plan plan = make_plan(zoo_graph("mlp-small"), "vertical", 4);
  check(plan);
  // fc1..fc4 each feed a dense layer on every device: 4 all-gathers; the
  // classifier feeds the softmax on device 0 only: one concat.
  EXPECT_EQ(count_collectives(plan, CollectiveKind::kAllGather), 4);
  EXPECT_EQ(count_collectives(plan, CollectiveKind::kConcat), 1);
  // Each all-gather of [8, 64] over 4 devices: every device lacks 3/4 of it:
  // 4 x 3 x (8 x 16 x 4) = 6144 bytes; the concat brings 3 of 4 slices of
  // [8, 10] (split 3, 3, 2, 2) to device 0: (3 + 2 + 2) x 8 x 4 = 224 bytes.
  EXPECT_EQ(plan_totals(plan).collective_bytes, 4 * 6144 + 224);
}

TEST(Vertical, RecurrentCellsGatherTheHiddenStateEveryStep) {
  const auto graph = zoo_graph("gru-small");  // 3 layers x 12 units, 5 steps
  const Plan plan = make_plan(graph, "vertical", 3);
  check(plan);
  // Every cell's h is needed whole by (l, t+1) and (l+1, t) on every device:
  // one all-gather per cell, except the top layer's last step (read by the
  // classifier slices on every device too): 3 x 5 = 15 all-gathers.
  EXPECT_EQ(count_collectives(plan, CollectiveKind::kAllGather), 15);
}

TEST(Vertical, UnevenSplitsAreAllowed) {
  const Plan plan = make_plan(zoo_graph("mlp-small"), "vertical", 3);  // 64 = 22 + 21 + 21
  check(plan);
  std::set<int64_t> sizes;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCompute && plan.graph->node(op.node).name == "fc1") sizes.insert(op.slice.out.size());
  }
  EXPECT_EQ(sizes, (std::set<int64_t>{21, 22}));
}

TEST(Vertical, TooManyDevicesNamesTheLimitingLayer) {
  try {
    make_plan(zoo_graph("mlp-small"), "vertical", 11);  // the classifier has 10 units
    FAIL();
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("at most 10 devices"), std::string::npos) << message;
    EXPECT_NE(message.find("classifier"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace vertical_test
}  // namespace splitscope::testing
