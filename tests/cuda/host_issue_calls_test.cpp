// The simulator's host lane counts the device calls of each op
// (sim/costs/host_issue.hpp) as the cuda backend compiles it: over every small zoo
// network x strategy, forward and training, the counts add up to the
// compiled program's steps.

#include <gtest/gtest.h>

#include <map>

#include "exec/cuda/plan_compiler.hpp"
#include "ir/training.hpp"
#include "partitioners/collective_plan.hpp"
#include "partitioners/partitioner.hpp"
#include "reference_network.hpp"
#include "sim/costs/host_issue.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace host_issue_calls_test {
namespace {

void expect_counts_match(const Plan& plan, const std::string& what) {
  const gpu::DeviceProgram program = gpu::compile_plan(plan, gpu::CompileOptions{LinkMode::kDevice});
  std::map<int, int> compiled;  // op -> steps
  for (const gpu::Step& step : program.steps) {
    compiled[program.spans[static_cast<size_t>(step.span)].op] += 1;
  }
  for (const PlanOp& op : plan.ops) {
    EXPECT_EQ(device_calls(plan, op), compiled[op.id])
        << what << ": op " << op.id << " (" << to_string(op.role) << " " << to_string(plan.graph->node(op.node).kind) << " "
        << plan.graph->node(op.node).name << ")";
  }
}

TEST(HostIssueCalls, EveryOpsCallsAreItsCompiledSteps) {
  for (const char* network : {"mlp-small", "cnn-small", "lstm-small", "gru-small", "residual-small", "towers-small",
                              "resnet-small", "two-tower-small", "inception-small"}) {
    const auto forward = zoo_graph(network);
    const auto training = std::make_shared<const Graph>(training_graph(*forward, Optimizer{}));
    for (const auto& graph : {forward, training}) {
      for (const auto& strategy : strategy_names()) {
        for (int devices : {1, 2, 4}) {
          if ((strategy == "single") != (devices == 1)) continue;
          PartitionOptions options{devices, strategy == "pipeline" ? 2 : 1, nullptr};
          Plan plan;
          try {
            plan = make_partitioner(strategy)->partition(graph, options);
          } catch (const InputError&) {
            continue;  // a split the strategy refuses
          }
          expect_counts_match(plan, std::string(network) + " " + strategy + " N=" + std::to_string(devices) +
                                        (graph->is_training() ? " train" : ""));
        }
      }
    }
  }
}

TEST(HostIssueCalls, EveryCollectiveTestsCallsAreItsCompiledSteps) {
  // Chunks that span a reduce-scatter's outputs, a broadcast of several chunks.
  for (const CollectiveTest test : {CollectiveTest::kAllReduce, CollectiveTest::kAllGather,
                                    CollectiveTest::kReduceScatter, CollectiveTest::kBroadcast}) {
    for (int devices : {2, 3, 4}) {
      expect_counts_match(collective_plan(test, devices, 4 * 300'000),
                          std::string(to_string(test)) + " N=" + std::to_string(devices));
    }
  }
}

}  // namespace
}  // namespace host_issue_calls_test
}  // namespace splitscope::testing
