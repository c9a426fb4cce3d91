// ZeRO-1 (`--zero 1`) on the simulator: the reduce-scatter and all-gather
// that replace data's gradient all-reduce are, in a ring, its two halves
// ((N−1)/N·B per device each), so the plan keeps the one all-reduce and the
// simulated step is the same to the nanosecond; only each replica's memory
// falls by the optimizer state it no longer keeps (plan/zero_sharding.hpp).

#include <gtest/gtest.h>

#include "hand_plan.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/training.hpp"
#include "partitioners/partitioner.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {
namespace zero_pricing_test {
namespace {

// fc1 2·5 + 5 = 15 weights, fc2 5·3 + 3 = 18; over 4 replicas Adam's two
// moments shard as (4+5), (4+5), (4+4), (3+4) weights' worth.
const char* const kZeroNet = R"({"batch": 8, "input": [2], "layers": [
    {"type": "dense", "units": 5, "name": "fc1"}, {"type": "dense", "units": 3, "name": "fc2"},
    {"type": "softmax"}]})";

Plan zero_plan(int zero) {
  Optimizer adam;
  adam.kind = OptimizerKind::kAdam;
  const auto graph =
      std::make_shared<const Graph>(training_graph(lower(parse_model_text(kZeroNet, "zero.json")), adam));
  PartitionOptions options;
  options.devices = 4;
  options.zero_stage = zero;
  return make_plan(*make_partitioner("data"), graph, options);
}

TEST(ZeroPricing, TheShardedStepTakesTheAllReducesTimeAndLessMemory) {
  const Machine machine = testing::test_machine(4, testing::switch_topology(10, 2), 1.0);
  const Plan whole = zero_plan(0);
  const Plan sharded = zero_plan(1);
  const Timeline before = simulate(whole, machine);
  const Timeline after = simulate(sharded, machine);
  EXPECT_GT(before.makespan_us(), 0);
  EXPECT_EQ(after.makespan_us(), before.makespan_us());
  ASSERT_EQ(after.spans.size(), before.spans.size());
  for (size_t i = 0; i < after.spans.size(); ++i) {
    EXPECT_EQ(after.spans[i].start_us, before.spans[i].start_us) << i;
    EXPECT_EQ(after.spans[i].end_us, before.spans[i].end_us) << i;
  }
  const std::vector<int64_t> kept = {9, 9, 8, 7};
  for (size_t d = 0; d < 4; ++d) {
    EXPECT_EQ(whole.memory[d].peak - sharded.memory[d].peak, 2 * (33 - kept[d]) * 4) << d;
  }
}

}  // namespace
}  // namespace zero_pricing_test
}  // namespace splitscope
