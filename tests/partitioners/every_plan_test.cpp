// Every zoo network x every strategy x N in {1, 2, 3, 4}: the plan passes
// check(), its FLOPs sum to the network's, and each device's memory adds up.

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "ir/zoo.hpp"
#include "plan/plan_check.hpp"
#include "partitioners/transformer_blocks.hpp"
#include "plan_test_support.hpp"

namespace splitscope::testing {
namespace every_plan_test {
namespace {

struct Case {
  std::string network;
  std::string strategy;
  int devices;
  int microbatches;
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const auto& network : zoo_names(ZooShelf::kNetworks)) {
    const int64_t batch = zoo_graph(network)->batch();
    const auto graph = zoo_graph(network);
    for (const auto& strategy : strategy_names()) {
      for (int devices : {1, 2, 3, 4}) {
        if (devices > make_partitioner(strategy)->max_devices(*graph)) continue;
        // tensor splits a transformer by heads: only degrees that divide them (tensor_heads_test: the refusal).
        const std::vector<int> degrees = head_degrees(*graph);
        if (strategy == "tensor" && !degrees.empty() &&
            std::find(degrees.begin(), degrees.end(), devices) == degrees.end()) {
          continue;
        }
        for (int microbatches : make_partitioner(strategy)->traits().microbatched ? std::vector<int>{1, 3, 4} : std::vector<int>{1}) {
          if (microbatches > batch) continue;
          cases.push_back({network, strategy, devices, microbatches});
        }
      }
    }
  }
  return cases;
}

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.network << " " << c.strategy << " N=" << c.devices << " M=" << c.microbatches;
}

class EveryPlan : public ::testing::TestWithParam<Case> {};

TEST_P(EveryPlan, PassesTheCheckerAndAddsUp) {
  const Case& c = GetParam();
  const auto graph = zoo_graph(c.network);
  const Plan plan = make_plan(graph, c.strategy, c.devices, c.microbatches);
  const auto problems = plan_problems(plan);
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems: " << ::testing::PrintToString(problems);

  const PlanTotals totals = plan_totals(plan);
  int64_t flops = 0;
  for (int64_t device_flops : totals.device_flops) flops += device_flops;
  EXPECT_EQ(flops, graph->total_flops());
  EXPECT_EQ(plan.devices, c.devices);
  ASSERT_EQ(plan.memory.size(), static_cast<size_t>(c.devices));
  int64_t params = 0;
  for (const DeviceMemory& memory : plan.memory) {
    EXPECT_EQ(memory.peak, memory.params + memory.activations_peak);
    EXPECT_LE(memory.transfer_buffers, memory.activations_peak);
    params += memory.params;
  }
  // Weight slices are disjoint across devices, except that the row-split
  // bias is held once: sum == network parameters, in bytes (per replica).
  // `tensor` on a transformer runs the layer norms and the embedding whole
  // on every device of the group: those slices count once per holder.
  const int64_t replicas = plan.traits.replicated ? c.devices : 1;
  std::set<std::tuple<int, Range, Range, FeatureCut>> distinct;
  int64_t repeated = 0;
  for (int id : plan.parameters) {
    const Value& weights = plan.value(id);
    if (!distinct.insert({graph->node(weights.node).param_key, weights.channels, weights.reduce, weights.features})
             .second) {
      repeated += weights.bytes;
    }
  }
  if (plan.traits.replicated) repeated = 0;
  EXPECT_EQ(params, graph->total_params() * 4 * replicas + repeated);
  if (c.devices == 1) {
    EXPECT_EQ(totals.transfer_count + totals.collective_count, 0);
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.network + "_" + info.param.strategy + "_" +
                     std::to_string(info.param.devices) + "_m" + std::to_string(info.param.microbatches);
  for (char& ch : name) {
    if (ch == '-' || ch == '.') ch = '_';  // gpt-1.3b
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Zoo, EveryPlan, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace every_plan_test
}  // namespace splitscope::testing
