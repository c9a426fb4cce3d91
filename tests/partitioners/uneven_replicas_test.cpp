// Replicas of a layer split over a batch the replicas do not divide: the
// shorter replicas keep the longer one's stage cuts. Balanced on one row
// fewer, `horizontal` cut AlexNet (batch 7, 4 rows and 3) at another layer,
// and the replicas' weight slices no longer matched (an internal error,
// exit 1; found by the plans fuzzer under hybrid 1,2,2).
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "partitioners/replicas.hpp"
#include "plan/plan_check.hpp"
#include "plan_test_support.hpp"

namespace splitscope {
namespace uneven_replicas_test {
namespace {

/// The devices within its replica that each forward node's compute runs on, per replica.
std::vector<std::map<NodeId, std::set<int>>> devices_by_replica(const Plan& plan, int replicas) {
  const int each = plan.devices / replicas;
  std::vector<std::map<NodeId, std::set<int>>> by_replica(static_cast<size_t>(replicas));
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCompute || plan.graph->node(op.node).pass != Pass::kForward) continue;
    by_replica[static_cast<size_t>(op.device / each)][op.node].insert(op.device % each);
  }
  return by_replica;
}

struct Case {
  std::string network;
  int64_t batch;
  std::string strategy;
  int microbatches;
  std::optional<ParallelDegrees> degrees;
};

TEST(UnevenReplicas, TheShorterReplicasKeepTheLongerOnesStageCuts) {
  const std::vector<Case> cases{
      {"cnn", 7, "horizontal", 1, std::nullopt},
      {"inception", 3, "horizontal", 1, std::nullopt},
      {"two-tower", 5, "horizontal", 1, std::nullopt},
      {"cnn", 7, "pipeline", 2, std::nullopt},
      {"cnn", 7, "hybrid", 2, ParallelDegrees{1, 2, 2}},
      {"cnn", 7, "hybrid", 2, ParallelDegrees{2, 2, 2}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.network + " batch " + std::to_string(c.batch) + " " + c.strategy);
    const auto graph = testing::zoo_training_graph(c.network, c.batch);
    PartitionOptions options;
    options.microbatches = c.microbatches;
    options.degrees = c.degrees;
    options.devices = c.degrees ? c.degrees->tensor * c.degrees->pipeline * c.degrees->data : 4;
    const int replicas = c.degrees ? c.degrees->data : 2;
    const auto partitioner = c.degrees ? make_partitioner(c.strategy) : with_replicas(make_partitioner(c.strategy), replicas);
    const Plan plan = partitioner->partition(graph, options);
    check(plan);
    ASSERT_EQ(plan.devices, options.devices);
    const auto by_replica = devices_by_replica(plan, replicas);
    EXPECT_EQ(by_replica.front(), by_replica.back());
  }
}

}  // namespace
}  // namespace uneven_replicas_test
}  // namespace splitscope
