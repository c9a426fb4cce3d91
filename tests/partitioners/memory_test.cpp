// Per-device memory: weights held once, values alive together at the peak.

#include <gtest/gtest.h>

#include "plan/plan_check.hpp"
#include "plan_test_support.hpp"

namespace splitscope::testing {
namespace memory_test {
namespace {

TEST(Memory, SingleDenseChainByHand) {
  // batch 2: input [2, 10] = 80 B, dense 6 -> 48 B, dense 4 -> 32 B.
  const auto graph = graph_from_text(R"({"batch": 2, "input": [10], "layers": [
      {"type": "dense", "units": 6}, {"type": "dense", "units": 4}]})");
  const Plan plan = make_plan(graph, "single", 1);
  check(plan);
  const DeviceMemory& memory = plan.memory[0];
  // Weights (10·6 + 6) + (6·4 + 4) = 94 floats.
  EXPECT_EQ(memory.params, 94 * 4);
  // After dense 1: input 80 + its output 48 = 128 (then the input is freed);
  // after dense 2: 48 + 32 = 80.
  EXPECT_EQ(memory.activations_peak, 128);
  EXPECT_EQ(memory.transfer_buffers, 0);
  EXPECT_EQ(memory.peak, 94 * 4 + 128);
}

TEST(Memory, HorizontalCountsTheReceivedActivation) {
  const auto graph = graph_from_text(R"({"batch": 2, "input": [10], "layers": [
      {"type": "dense", "units": 6}, {"type": "dense", "units": 4}]})");
  const Plan plan = make_plan(graph, "horizontal", 2);
  check(plan);
  // Device 0: input 80 + output 48 = 128. Device 1: the received 48 + its output 32 = 80.
  EXPECT_EQ(plan.memory[0].activations_peak, 128);
  EXPECT_EQ(plan.memory[0].params, 66 * 4);
  EXPECT_EQ(plan.memory[1].activations_peak, 80);
  EXPECT_EQ(plan.memory[1].transfer_buffers, 48);
  EXPECT_EQ(plan.memory[1].params, 28 * 4);
}

TEST(Memory, RecurrentWeightsAreHeldOncePerDevice) {
  const auto graph = zoo_graph("lstm-small");
  const Plan single = make_plan(graph, "single", 1);
  EXPECT_EQ(single.memory[0].params, graph->total_params() * 4);
  const Plan pipelined = make_plan(graph, "pipeline", 2, 4);
  int64_t params = 0;
  for (const DeviceMemory& memory : pipelined.memory) params += memory.params;
  EXPECT_EQ(params, graph->total_params() * 4);
}

TEST(Memory, VerticalSplitsTheWeights) {
  const auto graph = zoo_graph("mlp");  // 2 GiB of weights
  const Plan single = make_plan(graph, "single", 1);
  const Plan vertical = make_plan(graph, "vertical", 4);
  for (const DeviceMemory& memory : vertical.memory) {
    EXPECT_LT(memory.params, single.memory[0].params / 3);
  }
}

}  // namespace
}  // namespace memory_test
}  // namespace splitscope::testing
