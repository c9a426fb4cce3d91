// The search tries each tensor split of a transformer again with sequence
// parallelism, and never on a network without attention blocks.

#include <gtest/gtest.h>

#include <algorithm>

#include "search/plan_search.hpp"
#include "search_test_support.hpp"

namespace splitscope {
namespace {

const PricedPlan* find_plan(const SearchResult& result, const std::string& strategy, int replicas,
                            bool sequence_parallel) {
  for (const PricedPlan& plan : result.ranked) {
    if (plan.spec.strategy == strategy && plan.spec.replicas == replicas &&
        plan.spec.sequence_parallel == sequence_parallel && !plan.spec.recompute) {
      return &plan;
    }
  }
  return nullptr;
}

TEST(SequenceParallelSearch, ATransformersTensorSplitIsPricedWithAndWithout) {
  const SearchProblem problem = testing::search_problem("gpt-small", true, 2);
  const SearchResult result = search_plans(problem);
  const PricedPlan* plain = find_plan(result, "tensor", 1, false);
  const PricedPlan* sequence = find_plan(result, "tensor", 1, true);
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(sequence, nullptr) << "no sequence-parallel tensor plan was priced";
  // Megatron-LM's point: each device holds the layer norms' and residual
  // adds' activations for half the sequence only.
  EXPECT_LT(sequence->peak_memory_max, plain->peak_memory_max);
  EXPECT_NE(describe(sequence->spec).find("sequence-parallel"), std::string::npos) << describe(sequence->spec);
}

TEST(SequenceParallelSearch, ANetworkWithoutAttentionBlocksIsNeverSequenceParallel) {
  const SearchProblem problem = testing::search_problem("mlp-small", true, 2);
  const SearchResult result = search_plans(problem);
  ASSERT_NE(find_plan(result, "tensor", 1, false), nullptr);
  for (const PricedPlan& plan : result.ranked) EXPECT_FALSE(plan.spec.sequence_parallel) << describe(plan.spec);
  for (const RefusedPlan& refused : result.refused) {
    EXPECT_EQ(refused.reason.find("--sequence-parallel"), std::string::npos) << refused.reason;
  }
}

}  // namespace
}  // namespace splitscope
