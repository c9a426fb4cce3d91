// Bytes crossing devices, computed by hand for a small case of each strategy.

#include <gtest/gtest.h>

#include "plan/plan_check.hpp"
#include "plan_test_support.hpp"

namespace splitscope::testing {
namespace transfer_bytes_test {
namespace {

// in 10 -> dense 6 -> dense 4, batch 3.
const char* kTwoDense = R"({"batch": 3, "input": [10], "layers": [
    {"type": "dense", "units": 6, "activation": "relu"}, {"type": "dense", "units": 4}]})";

TEST(TransferBytes, SingleMovesNothing) {
  const Plan plan = make_plan(graph_from_text(kTwoDense), "single", 1);
  check(plan);
  const PlanTotals totals = plan_totals(plan);
  EXPECT_EQ(totals.transfer_bytes + totals.collective_bytes, 0);
}

TEST(TransferBytes, VerticalTwoDenseMovesExactlyWhatTheSecondLayerNeeds) {
  const Plan plan = make_plan(graph_from_text(kTwoDense), "vertical", 2);
  check(plan);
  // Layer 1's output [3, 6] is split 3 + 3 units; layer 2 needs all 6 on both
  // devices: each receives the other's 3 rows x 3 units x 4 bytes = 36 bytes.
  // Layer 2's output stays split (it is the network output): no more traffic.
  const PlanTotals totals = plan_totals(plan);
  EXPECT_EQ(totals.transfer_count, 0);
  EXPECT_EQ(totals.collective_count, 1);
  EXPECT_EQ(count_collectives(plan, CollectiveKind::kAllGather), 1);
  EXPECT_EQ(totals.collective_bytes, 2 * 36);
  EXPECT_EQ(plan.outputs.size(), 2u);
}

TEST(TransferBytes, HorizontalTwoDenseMovesTheBoundaryActivation) {
  const Plan plan = make_plan(graph_from_text(kTwoDense), "horizontal", 2);
  check(plan);
  // One layer per device; layer 1's whole output crosses: 3 x 6 x 4 = 72 bytes.
  const PlanTotals totals = plan_totals(plan);
  EXPECT_EQ(totals.transfer_count, 1);
  EXPECT_EQ(totals.transfer_bytes, 72);
  EXPECT_EQ(totals.collective_count, 0);
}

TEST(TransferBytes, PipelineMovesEachMicroBatchOnce) {
  const Plan plan = make_plan(graph_from_text(kTwoDense), "pipeline", 2, 3);
  check(plan);
  // 3 micro-batches of one row: 3 transfers of 1 x 6 x 4 = 24 bytes.
  const PlanTotals totals = plan_totals(plan);
  EXPECT_EQ(totals.transfer_count, 3);
  EXPECT_EQ(totals.transfer_bytes, 72);
  ASSERT_TRUE(ideal_bubble(plan).has_value());
  EXPECT_DOUBLE_EQ(*ideal_bubble(plan), 1.0 / 4.0);  // (N-1)/(M+N-1) = 1/4
}

TEST(TransferBytes, TensorPairIsOneAllReduce) {
  const Plan plan = make_plan(graph_from_text(kTwoDense), "tensor", 2);
  check(plan);
  // Column split of layer 1, row split of layer 2: each device holds a partial
  // [3, 4] sum (48 bytes); a ring all-reduce moves 2(N-1)/N x 48 per device,
  // 2 x 48 = 96 bytes over both.
  EXPECT_EQ(count_collectives(plan, CollectiveKind::kAllReduce), 1);
  EXPECT_EQ(count_ops(plan, OpRole::kTransfer), 0);
  const PlanTotals totals = plan_totals(plan);
  EXPECT_EQ(totals.collective_count, 1);
  EXPECT_EQ(totals.collective_bytes, 96);
  // Layer 2 has no activation: the reduced sum is the output, no epilogue.
  EXPECT_EQ(count_ops(plan, OpRole::kEpilogue), 0);
}

TEST(TransferBytes, VerticalSoftmaxConcatenatesOnlyOnDeviceZero) {
  const Plan plan = make_plan(graph_from_text(R"({"batch": 3, "input": [10], "layers": [
      {"type": "dense", "units": 4}, {"type": "softmax"}]})"), "vertical", 2);
  check(plan);
  // The softmax runs whole on device 0, which lacks device 1's 3 x 2 slice: 24 bytes.
  EXPECT_EQ(count_collectives(plan, CollectiveKind::kConcat), 1);
  EXPECT_EQ(count_collectives(plan, CollectiveKind::kAllGather), 0);
  EXPECT_EQ(plan_totals(plan).collective_bytes, 24);
}

}  // namespace
}  // namespace transfer_bytes_test
}  // namespace splitscope::testing
