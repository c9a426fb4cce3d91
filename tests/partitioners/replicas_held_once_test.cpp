// Replicas held once (Plan::replicas): expand_replicas() writes, op for op,
// the plan that `data` wrote when it placed every replica itself, with even
// and uneven rows, with and without gradient buckets.
#include <gtest/gtest.h>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/training.hpp"
#include "ir/zoo.hpp"
#include "plan/plan_builder.hpp"
#include "plan/plan_check.hpp"
#include "plan/plan_replicas.hpp"
#include "util/errors.hpp"
#include "plan_equality.hpp"
#include "plan_test_support.hpp"

namespace splitscope {
namespace replicas_held_once_test {
namespace {

std::shared_ptr<const Graph> training(const std::string& zoo_name, int64_t batch) {
  return testing::zoo_training_graph(zoo_name, batch);
}

/// `data` as it was written before replicas were held once: every replica
/// placed, node by node, device by device.
Plan every_replica_placed(const std::shared_ptr<const Graph>& graph, int devices, int64_t bucket_bytes) {
  const auto rows = split_evenly(graph->batch(), devices);
  PlanBuilder builder(graph, "data", make_partitioner("data")->traits(), devices, 1);
  builder.set_gradient_buckets(bucket_bytes);
  for (NodeId id : graph->wavefront_order()) {
    if (graph->node(id).kind == OpKind::kInput) continue;
    for (int device = 0; device < devices; ++device) {
      builder.place(id, 0, full_slice(graph->node(id), rows[static_cast<size_t>(device)]), device);
    }
  }
  return builder.build();
}

Plan held_once(const std::shared_ptr<const Graph>& graph, int devices, int64_t bucket_bytes) {
  PartitionOptions options;
  options.devices = devices;
  options.bucket_bytes = bucket_bytes;
  options.compact_replicas = true;
  return make_partitioner("data")->partition(graph, options);
}

TEST(ReplicasHeldOnce, DataHoldsOneReplicaAndTheAllReducesSpanningThem) {
  const auto graph = training("mlp-small", 8);
  const Plan plan = held_once(graph, 4, 0);
  ASSERT_TRUE(plan.replicas.has_value());
  EXPECT_EQ(plan.devices, 4);
  EXPECT_EQ(plan.replicas->count, 4);
  EXPECT_EQ(plan.replicas->devices_each, 1);
  EXPECT_EQ(plan.replicas->rows, (std::vector<Range>{{0, 2}, {2, 4}, {4, 6}, {6, 8}}));
  EXPECT_TRUE(replicas_alike(plan));
  ASSERT_EQ(plan.schedule.size(), 1U);
  const Plan whole = every_replica_placed(graph, 4, 0);
  int spanning = 0;
  for (const PlanOp& op : plan.ops) {
    EXPECT_LT(op_devices(op).empty() ? 0 : op_devices(op).back(), 1);
    if (!op.spans_replicas) continue;
    ++spanning;
    EXPECT_EQ(op.participants, std::vector<int>{0});
  }
  EXPECT_EQ(spanning, testing::count_collectives(whole, CollectiveKind::kAllReduce));
  EXPECT_EQ(expanded_op_count(plan), static_cast<int64_t>(whole.ops.size()));
  // Every op but the all-reduces once per replica: a quarter of the ops.
  EXPECT_EQ(static_cast<int64_t>(plan.ops.size() - spanning) * 4, static_cast<int64_t>(whole.ops.size()) - spanning);
}

TEST(ReplicasHeldOnce, ExpandingGivesThePlanOfEveryReplicaPlaced) {
  struct Case {
    const char* network;
    int64_t batch;
    int devices;
    int64_t bucket_bytes;
  };
  for (const Case& c : {Case{"mlp-small", 8, 4, 0}, Case{"mlp-small", 10, 4, 0}, Case{"mlp-small", 10, 4, int64_t{25} << 20},
                        Case{"cnn-small", 7, 3, int64_t{1} << 12}, Case{"residual-small", 5, 5, 0},
                        Case{"lstm-small", 9, 2, int64_t{1} << 16}}) {
    SCOPED_TRACE(std::string(c.network) + " batch " + std::to_string(c.batch) + " over " + std::to_string(c.devices));
    const auto graph = training(c.network, c.batch);
    const Plan compact = held_once(graph, c.devices, c.bucket_bytes);
    EXPECT_EQ(replicas_alike(compact), c.batch % c.devices == 0);
    const Plan whole = every_replica_placed(graph, c.devices, c.bucket_bytes);
    const Plan expanded = expand_replicas(compact);
    testing::expect_same_plan(expanded, whole);
    check(expanded);
    for (int d = 0; d < c.devices; ++d) EXPECT_EQ(device_memory(compact, d).peak, whole.memory[static_cast<size_t>(d)].peak);
  }
}

TEST(ReplicasHeldOnce, TheDefaultPlanIsTheWholeOne) {
  const auto graph = training("mlp-small", 10);
  PartitionOptions options;
  options.devices = 4;
  options.bucket_bytes = 0;
  const Plan plan = make_partitioner("data")->partition(graph, options);
  EXPECT_FALSE(plan.replicas.has_value());
  testing::expect_same_plan(plan, every_replica_placed(graph, 4, 0));
}

TEST(ReplicasHeldOnce, ReplicasOfAModelSplitExpandToEveryReplicaWritten) {
  struct Case {
    const char* strategy;
    const char* network;
    int64_t batch;
    int devices;
    int replicas;
    int microbatches;
    int64_t bucket_bytes;
  };
  for (const Case& c : {Case{"tensor", "mlp-small", 8, 4, 2, 1, 0}, Case{"tensor", "mlp-small", 9, 6, 3, 1, int64_t{1} << 14},
                        Case{"pipeline", "mlp-small", 12, 4, 2, 2, 0}, Case{"pipeline", "cnn-small", 11, 4, 2, 2, 1 << 12},
                        Case{"single", "residual-small", 7, 3, 3, 1, 0}, Case{"vertical", "cnn-small", 8, 4, 2, 1, 0}}) {
    SCOPED_TRACE(std::string(c.strategy) + " x" + std::to_string(c.replicas) + " of " + c.network + " batch " +
                 std::to_string(c.batch));
    const auto graph = training(c.network, c.batch);
    PartitionOptions options;
    options.devices = c.devices;
    options.microbatches = c.microbatches;
    options.bucket_bytes = c.bucket_bytes;
    const auto partitioner = make_partitioner(c.strategy, c.replicas);
    const Plan whole = partitioner->partition(graph, options);
    EXPECT_FALSE(whole.replicas.has_value());
    options.compact_replicas = true;
    const Plan compact = partitioner->partition(graph, options);
    ASSERT_TRUE(compact.replicas.has_value());
    EXPECT_EQ(compact.replicas->count, c.replicas);
    EXPECT_EQ(compact.replicas->devices_each, c.devices / c.replicas);
    EXPECT_EQ(replicas_alike(compact), c.batch % c.replicas == 0);
    EXPECT_EQ(expanded_op_count(compact), static_cast<int64_t>(whole.ops.size()));
    testing::expect_same_plan(expand_replicas(compact), whole);
    const PlanTotals held = plan_totals(compact);
    const PlanTotals every = plan_totals(whole);
    EXPECT_EQ(held.device_ops, every.device_ops);
    EXPECT_EQ(held.device_flops, every.device_flops);
    EXPECT_EQ(held.transfer_bytes, every.transfer_bytes);
    EXPECT_EQ(held.collective_count, every.collective_count);
    EXPECT_EQ(held.collective_bytes, every.collective_bytes);
    check(compact);
  }
}

TEST(ReplicasHeldOnce, TotalsAndMemoryOfDataHeldOnceAreTheWholePlans) {
  const auto graph = training("cnn-small", 10);
  const Plan compact = held_once(graph, 4, int64_t{1} << 12);
  const Plan whole = every_replica_placed(graph, 4, int64_t{1} << 12);
  const PlanTotals held = plan_totals(compact);
  const PlanTotals every = plan_totals(whole);
  EXPECT_EQ(held.device_ops, every.device_ops);
  EXPECT_EQ(held.device_flops, every.device_flops);
  EXPECT_EQ(held.transfer_count, every.transfer_count);
  EXPECT_EQ(held.collective_count, every.collective_count);
  EXPECT_EQ(held.collective_bytes, every.collective_bytes);
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(device_memory(compact, d).activations_peak, whole.memory[static_cast<size_t>(d)].activations_peak);
    EXPECT_EQ(device_memory(compact, d).gradients, whole.memory[static_cast<size_t>(d)].gradients);
  }
}

TEST(ReplicasHeldOnce, ExpandingChecksTheOpLimitFirst) {
  // resnet-small over 16,384 replicas is fine held once, and past 2^21 ops written out.
  const auto graph = training("resnet-small", 16384);
  const Plan compact = held_once(graph, 16384, int64_t{25} << 20);
  ASSERT_GT(expanded_op_count(compact), int64_t{1} << 21);
  EXPECT_LT(compact.ops.size(), size_t{1} << 12);
  check(compact);
  EXPECT_THROW(expand_replicas(compact), InputError);
}

}  // namespace
}  // namespace replicas_held_once_test
}  // namespace splitscope
