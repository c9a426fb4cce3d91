// ZeRO stage 1 (`--zero 1`): each replica keeps 1/d of the optimizer state
// (and of amp's fp32 masters), uneven shards rounded as the reduce-scatter's
// chunks; weights, gradients and the collectives stay as data's
// (plan/zero_sharding.hpp). Every number below is worked by hand.

#include <gtest/gtest.h>

#include "ir/training.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "plan/zero_sharding.hpp"
#include "plan_test_support.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace zero_sharding_test {
namespace {

// fc1: 2·5 + 5 = 15 weights, fc2: 5·3 + 3 = 18; 33 in all (132 B in fp32).
// Over 4 replicas fc1's 15 shard as 4, 4, 4, 3 and fc2's 18 as 5, 5, 4, 4.
constexpr const char* kTwoDense = R"({"batch": 8, "input": [2], "layers": [
    {"type": "dense", "units": 5, "name": "fc1"}, {"type": "dense", "units": 3, "name": "fc2"},
    {"type": "softmax"}]})";

std::shared_ptr<const Graph> adam_graph() {
  Optimizer adam;
  adam.kind = OptimizerKind::kAdam;
  return std::make_shared<const Graph>(training_graph(*testing::graph_from_text(kTwoDense), adam));
}

Plan data_plan(const std::shared_ptr<const Graph>& graph, int devices, int zero, Precision precision,
               const std::string& strategy = "data") {
  PartitionOptions options;
  options.devices = devices;
  options.zero_stage = zero;
  options.precision = precision;
  return make_plan(*make_partitioner(strategy), graph, options);
}

TEST(ZeroSharding, AdamStateIsShardedOverFourReplicasUnevenlyAsTheChunks) {
  const auto graph = adam_graph();
  const Plan whole = data_plan(graph, 4, 0, Precision::kFp32);
  const Plan sharded = data_plan(graph, 4, 1, Precision::kFp32);
  check(sharded);
  EXPECT_EQ(whole.zero_stage, 0);
  EXPECT_EQ(sharded.zero_stage, 1);
  // Adam: two fp32 moments per weight.
  const std::vector<int64_t> kept = {4 + 5, 4 + 5, 4 + 4, 3 + 4};
  int64_t state_total = 0;
  for (size_t d = 0; d < 4; ++d) {
    EXPECT_EQ(whole.memory[d].params, 132);
    EXPECT_EQ(whole.memory[d].gradients, 132);
    EXPECT_EQ(whole.memory[d].optimizer_state, 2 * 33 * 4);
    EXPECT_EQ(sharded.memory[d].params, 132) << "the weights stay whole";
    EXPECT_EQ(sharded.memory[d].gradients, 132) << "so do the gradients";
    EXPECT_EQ(sharded.memory[d].optimizer_state, 2 * kept[d] * 4) << d;
    EXPECT_EQ(sharded.memory[d].activations_peak, whole.memory[d].activations_peak);
    EXPECT_EQ(whole.memory[d].peak - sharded.memory[d].peak, 2 * (33 - kept[d]) * 4) << d;
    state_total += sharded.memory[d].optimizer_state;
  }
  EXPECT_EQ(state_total, 2 * 33 * 4) << "the shards together hold one whole state";
}

TEST(ZeroSharding, TheCollectivesMoveTheBytesOfDatasAllReduce) {
  const auto graph = adam_graph();
  for (int zero : {0, 1}) {
    const Plan plan = data_plan(graph, 4, zero, Precision::kFp32);
    // 132 B of gradients fit DDP's first 1 MiB bucket: one ring all-reduce,
    // 2·(4−1)·132 = 792 B; a reduce-scatter and an all-gather would move
    // (4−1)·132 each, the same 792 B (zero_sharding.hpp).
    EXPECT_EQ(testing::count_collectives(plan, CollectiveKind::kAllReduce), 1) << zero;
    EXPECT_EQ(testing::count_collectives(plan, CollectiveKind::kReduceScatter), 0) << zero;
    EXPECT_EQ(testing::count_collectives(plan, CollectiveKind::kAllGather), 0) << zero;
    for (const PlanOp& op : plan.ops) {
      if (op.role != OpRole::kCollective) continue;
      EXPECT_EQ(op.participants, (std::vector<int>{0, 1, 2, 3}));
      EXPECT_EQ(op.payload_bytes, 132);
      EXPECT_EQ(op.bytes_moved, 792);
      EXPECT_EQ(op.bytes_moved, 2 * (3 * op.payload_bytes));
    }
  }
}

TEST(ZeroSharding, AmpShardsTheFp32MastersBesideTheState) {
  const auto graph = adam_graph();
  const Plan whole = data_plan(graph, 4, 0, Precision::kAmp);
  const Plan sharded = data_plan(graph, 4, 1, Precision::kAmp);
  const std::vector<int64_t> kept = {9, 9, 8, 7};
  for (size_t d = 0; d < 4; ++d) {
    // bf16 copies 33·2 = 66 B on every replica, fp32 masters 33·4 = 132 B whole.
    EXPECT_EQ(whole.memory[d].params, 66 + 132);
    EXPECT_EQ(sharded.memory[d].params, 66 + kept[d] * 4) << d;
    EXPECT_EQ(sharded.memory[d].gradients, 33 * 2);
    EXPECT_EQ(sharded.memory[d].optimizer_state, 2 * kept[d] * 4) << d;
  }
}

TEST(ZeroSharding, ReplicasOfAModelSplitShardEachSliceOverItsOwnReplicas) {
  // --replicas 2 of horizontal over 2 devices: each layer's slice lives on
  // one device of each replica, so its state is split in two.
  const auto graph = adam_graph();
  PartitionOptions options;
  options.devices = 4;
  options.zero_stage = 1;
  const Plan plan = make_plan(*make_partitioner("horizontal", 2), graph, options);
  check(plan);
  PartitionOptions whole_options = options;
  whole_options.zero_stage = 0;
  const Plan whole = make_plan(*make_partitioner("horizontal", 2), graph, whole_options);
  int64_t sharded_total = 0;
  int64_t whole_total = 0;
  for (size_t d = 0; d < 4; ++d) {
    sharded_total += plan.memory[d].optimizer_state;
    whole_total += whole.memory[d].optimizer_state;
    EXPECT_EQ(plan.memory[d].params, whole.memory[d].params);
  }
  EXPECT_EQ(whole_total, 2 * 2 * 33 * 4) << "two replicas of the whole state";
  EXPECT_EQ(sharded_total, 2 * 33 * 4) << "one state, in shards";
}

TEST(ZeroSharding, RefusesAnotherStageAPlanWithoutReplicasAndInference) {
  const auto graph = adam_graph();
  EXPECT_THROW(data_plan(graph, 4, 2, Precision::kFp32), InputError);
  EXPECT_THROW(data_plan(graph, 2, 1, Precision::kFp32, "horizontal"), InputError);
  EXPECT_THROW(data_plan(graph, 1, 1, Precision::kFp32, "single"), InputError);
  EXPECT_THROW(data_plan(testing::graph_from_text(kTwoDense), 4, 1, Precision::kFp32), InputError);
  EXPECT_EQ(data_plan(graph, 4, 0, Precision::kFp32).zero_stage, 0);
}

TEST(ZeroSharding, ShardElementsRoundAsTheReduceScatterChunks) {
  EXPECT_EQ(shard_elements(15, ZeroShard{.replicas = 4, .rank = 0}), 4);
  EXPECT_EQ(shard_elements(15, ZeroShard{.replicas = 4, .rank = 2}), 4);
  EXPECT_EQ(shard_elements(15, ZeroShard{.replicas = 4, .rank = 3}), 3);
  EXPECT_EQ(shard_elements(2, ZeroShard{.replicas = 4, .rank = 3}), 0);
  EXPECT_EQ(shard_elements(7, ZeroShard{}), 7);
}

}  // namespace
}  // namespace zero_sharding_test
}  // namespace splitscope
