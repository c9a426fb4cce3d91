// The layer split: balance, the dominant layer, and the RNN wavefront's edges.

#include <gtest/gtest.h>

#include "plan/plan_check.hpp"
#include "plan_test_support.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace horizontal_test {
namespace {

TEST(Horizontal, DominantLayerGetsADeviceOfItsOwn) {
  // dense 2048 -> 2048 is ~4000x the work of each 32-wide layer around it.
  const auto graph = graph_from_text(R"({"batch": 16, "input": [32], "layers": [
      {"type": "dense", "units": 32, "name": "a"}, {"type": "dense", "units": 2048, "name": "b"},
      {"type": "dense", "units": 2048, "name": "big"}, {"type": "dense", "units": 32, "name": "c"},
      {"type": "dense", "units": 32, "name": "d"}]})");
  const Plan plan = make_plan(graph, "horizontal", 3);
  check(plan);
  int big_device = -1;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCompute && graph->node(op.node).name == "big") big_device = op.device;
  }
  ASSERT_GE(big_device, 0);
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCompute && graph->node(op.node).name != "big") {
      EXPECT_NE(op.device, big_device) << graph->node(op.node).name << " shares the big layer's device";
    }
  }
}

TEST(Horizontal, RecurrentStackSplitsByLayerIntoAWavefront) {
  const auto graph = zoo_graph("lstm-small");  // 4 stacked LSTM layers, 6 steps
  const Plan plan = make_plan(graph, "horizontal", 4);
  check(plan);
  std::map<int, int> device_of_sublayer;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCompute || graph->node(op.node).kind != OpKind::kLstmCell) continue;
    const OpNode& cell = graph->node(op.node);
    // All steps of one stacked layer on one device.
    auto [it, inserted] = device_of_sublayer.emplace(cell.sublayer, op.device);
    EXPECT_EQ(it->second, op.device);
    // x_t from the layer below: a transfer from the previous device (or the input).
    const Value& x = plan.value(op.inputs[kCellInputSlot]);
    if (cell.sublayer > 0) {
      const int producer = x.producer;
      ASSERT_GE(producer, 0);
      EXPECT_EQ(plan.op(producer).role, OpRole::kTransfer);
      EXPECT_EQ(plan.op(producer).src_device, op.device - 1);
    }
    // h_{t-1}, c_{t-1}: on the cell's own device, straight from (l, t-1).
    if (cell.step > 0) {
      const Value& h = plan.value(op.inputs[kCellHiddenSlot]);
      EXPECT_EQ(plan.op(h.producer).role, OpRole::kCompute);
      EXPECT_EQ(graph->node(h.node).step, cell.step - 1);
      EXPECT_EQ(graph->node(h.node).sublayer, cell.sublayer);
    }
  }
  EXPECT_EQ(device_of_sublayer.size(), 4u);
  for (const auto& [sublayer, device] : device_of_sublayer) EXPECT_EQ(sublayer, device);
  // 3 boundaries x 6 steps of h (4 rows x 16 units x 4 bytes = 256 bytes).
  EXPECT_EQ(plan_totals(plan).transfer_count, 3 * 6);
  EXPECT_EQ(plan_totals(plan).transfer_bytes, 3 * 6 * 256);
}

TEST(Horizontal, TooManyDevicesNamesTheMaximum) {
  const auto graph = zoo_graph("mlp-small");  // 6 layers
  try {
    make_plan(graph, "horizontal", 7);
    FAIL();
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("at most 6 devices"), std::string::npos) << error.what();
  }
}

TEST(Horizontal, RefusesMicroBatches) {
  EXPECT_THROW(make_plan(zoo_graph("mlp-small"), "horizontal", 2, 2), InputError);
}

}  // namespace
}  // namespace horizontal_test
}  // namespace splitscope::testing
