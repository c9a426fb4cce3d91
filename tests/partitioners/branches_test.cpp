// The branch split: which layers form the trunk and which the branches of a
// fork, and where `branches` puts them (one tower per device, one transfer at
// the join).

#include <gtest/gtest.h>

#include <set>

#include "partitioners/graph_branches.hpp"
#include "plan/plan_check.hpp"
#include "plan_test_support.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace branches_test {
namespace {

/// The names of each branch's units, branch by branch, for every fork.
std::vector<std::vector<std::vector<std::string>>> named_forks(const GraphBranches& shape) {
  std::vector<std::vector<std::vector<std::string>>> forks;
  for (const GraphFork& fork : shape.forks) {
    auto& named = forks.emplace_back();
    for (const auto& branch : fork.branches) {
      auto& names = named.emplace_back();
      for (size_t unit : branch) names.push_back(shape.units[unit].name);
    }
  }
  return forks;
}

std::vector<std::string> trunk(const GraphBranches& shape) {
  std::vector<std::string> names;
  for (size_t u = 0; u < shape.units.size(); ++u) {
    if (shape.on_trunk[u]) names.push_back(shape.units[u].name);
  }
  return names;
}

TEST(GraphBranches, TwoTowersOnTwoInputsAreOneForkOfTwoBranches) {
  const GraphBranches shape = graph_branches(*zoo_graph("two-tower-small"));
  using Names = std::vector<std::string>;
  EXPECT_EQ(named_forks(shape),
            (std::vector<std::vector<Names>>{{
                {"left_conv1", "left_pool1", "left_conv2", "left_pool2", "left_features"},
                {"right_conv1", "right_pool1", "right_conv2", "right_pool2", "right_features"}}}));
  EXPECT_EQ(trunk(shape), (Names{"joined", "fc1", "fc2", "probs"}));
  EXPECT_EQ(shape.widest(), 2);
}

TEST(GraphBranches, InceptionBlocksForkFourWaysBetweenTrunkLayers) {
  const GraphBranches shape = graph_branches(*zoo_graph("inception-small"));
  using Names = std::vector<std::string>;
  ASSERT_EQ(shape.forks.size(), 2u);
  EXPECT_EQ(named_forks(shape)[0], (std::vector<Names>{{"inception1_1x1"},
                                                       {"inception1_3x3_reduce", "inception1_3x3"},
                                                       {"inception1_5x5_reduce", "inception1_5x5"},
                                                       {"inception1_pool", "inception1_pool_proj"}}));
  EXPECT_EQ(trunk(shape), (Names{"conv1", "inception1_out", "pool1", "inception2_out", "pool2", "flatten", "fc",
                                 "probs"}));
  EXPECT_EQ(shape.widest(), 4);
}

TEST(GraphBranches, ResidualBlocksForkAtTheirInputAndJoinAtTheAdd) {
  // A projecting block forks into its convolutions and its projection; an
  // identity block's skip edge jumps its convolutions, which form one branch.
  const GraphBranches shape = graph_branches(*zoo_graph("resnet-small-folded"));
  using Names = std::vector<std::string>;
  EXPECT_EQ(named_forks(shape),
            (std::vector<std::vector<Names>>{{{"res2a_a", "res2a_b", "res2a_c"}, {"res2a_proj"}},
                                             {{"res2b_a", "res2b_b", "res2b_c"}},
                                             {{"res3a_a", "res3a_b", "res3a_c"}, {"res3a_proj"}}}));
  EXPECT_EQ(shape.widest(), 2);
}

TEST(GraphBranches, AChainHasNoFork) {
  const GraphBranches shape = graph_branches(*zoo_graph("cnn-small"));
  EXPECT_TRUE(shape.forks.empty());
  EXPECT_EQ(shape.widest(), 1);
  EXPECT_EQ(trunk(shape).size(), shape.units.size());
}

TEST(GraphBranches, OneInputReadByTwoTowersForks) {
  const auto graph = graph_from_text(R"({"batch": 2, "input": [6], "layers": [
      {"type": "dense", "name": "a1", "units": 4}, {"type": "dense", "name": "a2", "units": 3},
      {"type": "dense", "name": "b1", "inputs": "input", "units": 5},
      {"type": "concat", "name": "join", "inputs": ["a2", "b1"]}]})");
  const GraphBranches shape = graph_branches(*graph);
  using Names = std::vector<std::string>;
  EXPECT_EQ(named_forks(shape), (std::vector<std::vector<Names>>{{{"a1", "a2"}, {"b1"}}}));
  EXPECT_EQ(trunk(shape), (Names{"join"}));
}

TEST(Branches, TwoTowerPutsOneTowerPerDeviceWithOneTransferAtTheJoin) {
  const auto graph = zoo_graph("two-tower-small");
  const Plan plan = make_plan(graph, "branches", 2);
  check(plan);
  std::set<int> left_devices, right_devices, trunk_devices;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCompute) continue;
    const std::string& layer = graph->node(op.node).layer_name;
    (layer.starts_with("left") ? left_devices : layer.starts_with("right") ? right_devices : trunk_devices)
        .insert(op.device);
  }
  ASSERT_EQ(left_devices.size(), 1u);
  ASSERT_EQ(right_devices.size(), 1u);
  EXPECT_NE(*left_devices.begin(), *right_devices.begin());
  // The towers are equal, so the join goes to the lower device: the left tower's.
  EXPECT_EQ(trunk_devices, (std::set<int>{*left_devices.begin()}));
  ASSERT_EQ(count_ops(plan, OpRole::kTransfer), 1);
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kTransfer) continue;
    EXPECT_EQ(graph->node(op.node).name, "right_features");
    // batch 4 × 12 channels × 3 × 3 floats
    EXPECT_EQ(op.bytes_moved, 4 * 12 * 3 * 3 * 4);
  }
}

TEST(Branches, BalancesFourInceptionPathsOverTwoDevicesByCost) {
  const auto graph = zoo_graph("inception-small");
  const Plan plan = make_plan(graph, "branches", 2);
  check(plan);
  std::set<int> used;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCompute) used.insert(op.device);
  }
  EXPECT_EQ(used, (std::set<int>{0, 1}));
  // Each path of a block runs whole on one device.
  for (const char* path : {"inception1_3x3", "inception1_5x5", "inception2_3x3", "inception2_5x5"}) {
    std::set<int> devices;
    for (const PlanOp& op : plan.ops) {
      const std::string& layer = graph->node(op.node).layer_name;
      if (op.role == OpRole::kCompute && layer.starts_with(path)) devices.insert(op.device);
    }
    EXPECT_EQ(devices.size(), 1u) << path;
  }
}

TEST(Branches, RefusesMoreDevicesThanTheWidestForkAndNetworksWithoutForks) {
  EXPECT_THROW(make_plan(zoo_graph("two-tower-small"), "branches", 3), InputError);
  try {
    make_plan(zoo_graph("mlp-small"), "branches", 2);
    FAIL() << "a chain has no branches to place";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("has no fork"), std::string::npos) << error.what();
  }
  const auto partitioner = make_partitioner("branches");
  EXPECT_FALSE(partitioner->applies(*zoo_graph("mlp-small"), 2));
  EXPECT_TRUE(partitioner->applies(*zoo_graph("inception-small"), 4));
  EXPECT_FALSE(partitioner->applies(*zoo_graph("inception-small"), 5));
}

}  // namespace
}  // namespace branches_test
}  // namespace splitscope::testing
