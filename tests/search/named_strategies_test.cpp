// The search's best is never slower than the best named strategy, each
// named one built and simulated here on its own, as `compare` runs it.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "search/plan_search.hpp"
#include "search_test_support.hpp"
#include "sim/costs/machine_cost_function.hpp"

namespace splitscope {
namespace {

/// The fastest named strategy that fits, each as compare makes it (pipeline with compare's micro-batches).
double fastest_named_us(const SearchProblem& problem) {
  const Simulator simulator(problem.machine);
  double fastest = std::numeric_limits<double>::infinity();
  for (const std::string& name : strategy_names()) {
    if (name == "ps") continue;
    const auto partitioner = make_partitioner(name);
    if (problem.graph->is_training() && !partitioner->traits().trains) continue;
    const bool baseline = partitioner->traits().baseline;
    if (!baseline && !partitioner->applies(*problem.graph, problem.devices)) continue;
    PartitionOptions options;
    options.devices = baseline ? 1 : problem.devices;
    options.microbatches = partitioner->traits().microbatched ? problem.named_microbatches : 1;
    options.cost = std::make_shared<MachineCostFunction>(problem.machine);
    const Plan plan = make_plan(*partitioner, problem.graph, options);
    check(plan);
    int64_t peak = 0;
    for (const DeviceMemory& memory : plan.memory) peak = std::max(peak, memory.peak);
    if (peak > problem.memory_limit_bytes) continue;
    fastest = std::min(fastest, simulator.simulate(plan).makespan_us());
  }
  return fastest;
}

struct ZooProblem {
  const char* network;
  bool train;
  int devices;
  const char* machine;
};

class SearchAgainstNamed : public ::testing::TestWithParam<ZooProblem> {};

TEST_P(SearchAgainstNamed, BestIsNeverSlowerThanTheBestNamedStrategy) {
  const ZooProblem& zoo = GetParam();
  const SearchProblem problem = testing::search_problem(zoo.network, zoo.train, zoo.devices, zoo.machine);
  const double named = fastest_named_us(problem);
  ASSERT_TRUE(std::isfinite(named));
  const SearchResult result = search_plans(problem);
  ASSERT_NE(result.best(), nullptr);
  ASSERT_NE(result.best_named(), nullptr);
  EXPECT_DOUBLE_EQ(result.best_named()->makespan_us, named) << "the search priced the named strategies otherwise";
  EXPECT_LE(result.best()->makespan_us, named) << describe(result.best()->spec);
  // Nothing on the front is beaten in both time and memory by a ranked plan.
  for (const PricedPlan& front : result.pareto) {
    for (const PricedPlan& plan : result.ranked) {
      EXPECT_FALSE(plan.makespan_us < front.makespan_us && plan.peak_memory_max < front.peak_memory_max)
          << describe(plan.spec) << " dominates " << describe(front.spec);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Zoo, SearchAgainstNamed,
    ::testing::Values(ZooProblem{"mlp", false, 4, "h100-nvlink-8"}, ZooProblem{"mlp", true, 8, "h100-nvlink-8"},
                      ZooProblem{"cnn", true, 4, "2x8-h100-ib"}, ZooProblem{"lstm", false, 4, "h100-nvlink-8"},
                      ZooProblem{"resnet-small", true, 2, "h100-nvlink-8"},
                      ZooProblem{"inception-small", false, 8, "2x8-h100-ib"},
                      // The transformers (tensor by heads on bert-small's 4; not over 8 of gpt2-small's 12).
                      ZooProblem{"bert-small", true, 4, "h100-nvlink-8"},
                      ZooProblem{"gpt2-small", true, 8, "h100-nvlink-8"}),
    [](const auto& info) {
      std::string name = std::string(info.param.network) + (info.param.train ? "_train_" : "_forward_") +
                         std::to_string(info.param.devices) + "_" + info.param.machine;
      std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
      return name;
    });

TEST(SearchLeftOut, ATransformerSaysThatTensorDoesNotApplyAndWhy) {
  // gpt2-small's 12 heads do not split over 8 devices.
  const SearchResult result = search_plans(testing::search_problem("gpt2-small", true, 8));
  const auto tensor = std::find_if(result.left_out.begin(), result.left_out.end(),
                                   [](const LeftOutStrategy& left) { return left.strategy == "tensor"; });
  ASSERT_NE(tensor, result.left_out.end());
  // The tensor partitioner's own refusal.
  EXPECT_EQ(tensor->reason,
            "tensor splits attention by heads, and layer h0_attn has 12 heads, which 8 devices do not divide; "
            "use --devices 1, 2, 3, 4, 6, 12");
  for (const PricedPlan& plan : result.ranked) {
    EXPECT_FALSE(plan.spec.strategy == "tensor" && plan.spec.replicas == 1) << describe(plan.spec);
  }
  ASSERT_NE(result.best(), nullptr);
}

TEST(SearchLeftOut, ATransformerWhoseHeadsTheDevicesDivideIsSplitByHeads) {
  const SearchResult result = search_plans(testing::search_problem("bert-small", true, 4));
  EXPECT_TRUE(std::none_of(result.left_out.begin(), result.left_out.end(),
                           [](const LeftOutStrategy& left) { return left.strategy == "tensor"; }));
  EXPECT_TRUE(std::any_of(result.ranked.begin(), result.ranked.end(),
                          [](const PricedPlan& plan) { return plan.spec.strategy == "tensor"; }));
}

TEST(SearchLeftOut, OnlyWhatIsNotPricedIsListed) {
  // mlp has dense pairs: tensor is priced. For inference, data is priced as
  // batch-split inference though compare leaves it out.
  const SearchResult result = search_plans(testing::search_problem("mlp", false, 4));
  for (const LeftOutStrategy& left : result.left_out) {
    EXPECT_NE(left.strategy, "tensor");
    EXPECT_NE(left.strategy, "data");
  }
  for (const char* priced : {"tensor", "data"}) {
    EXPECT_TRUE(std::any_of(result.ranked.begin(), result.ranked.end(),
                            [&](const PricedPlan& plan) { return plan.spec.strategy == priced; }))
        << priced;
  }
  // Past its limit a split is left out with the partitioner's refusal.
  const SearchResult wide = search_plans(testing::search_problem("lstm", false, 16, "2x8-h100-ib"));
  const auto horizontal = std::find_if(wide.left_out.begin(), wide.left_out.end(),
                                       [](const LeftOutStrategy& left) { return left.strategy == "horizontal"; });
  ASSERT_NE(horizontal, wide.left_out.end());
  EXPECT_NE(horizontal->reason.find("can use at most 10 devices here"), std::string::npos) << horizontal->reason;
}

}  // namespace
}  // namespace splitscope
