// Micro-batches: rows, fill-drain order, the ideal bubble.

#include <gtest/gtest.h>

#include "plan/plan_check.hpp"
#include "plan_test_support.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace pipeline_test {
namespace {

TEST(Pipeline, MicroBatchesTileTheBatchUnevenlyWhenTheyMust) {
  const auto graph = zoo_graph("mlp-small");  // batch 8
  const Plan plan = make_plan(graph, "pipeline", 2, 3);
  check(plan);
  // 8 rows in 3 micro-batches: 3 + 3 + 2.
  std::map<int, Range> rows;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCompute) rows[op.microbatch] = op.slice.batch;
  }
  EXPECT_EQ(rows[0], (Range{0, 3}));
  EXPECT_EQ(rows[1], (Range{3, 6}));
  EXPECT_EQ(rows[2], (Range{6, 8}));
  EXPECT_EQ(plan.outputs.size(), 3u);
}

TEST(Pipeline, EachDeviceRunsMicroBatchesInFillDrainOrder) {
  const Plan plan = make_plan(zoo_graph("cnn-small"), "pipeline", 3, 4);
  check(plan);
  for (int device = 0; device < plan.devices; ++device) {
    int last = 0;
    for (int id : plan.schedule[static_cast<size_t>(device)]) {
      EXPECT_GE(plan.op(id).microbatch, last) << "device " << device;
      last = plan.op(id).microbatch;
    }
    EXPECT_EQ(last, 3);
  }
}

TEST(Pipeline, IdealBubble) {
  const Plan plan = make_plan(zoo_graph("mlp-small"), "pipeline", 4, 8);
  ASSERT_TRUE(ideal_bubble(plan).has_value());
  EXPECT_DOUBLE_EQ(*ideal_bubble(plan), 3.0 / 11.0);  // (4-1)/(8+4-1)
  EXPECT_FALSE(ideal_bubble(make_plan(zoo_graph("mlp-small"), "horizontal", 4)).has_value());
}

TEST(Pipeline, MoreMicroBatchesThanRowsIsRefused) {
  try {
    make_plan(zoo_graph("mlp-small"), "pipeline", 2, 9);
    FAIL();
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("between 1 and the batch (8)"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace pipeline_test
}  // namespace splitscope::testing
