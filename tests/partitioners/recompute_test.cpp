// Re-materialisation (partitioners/recompute.hpp): the re-run forward ops
// of a training plan, where they run, what they cost, what they save, and
// the check that holds each to the op it re-runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "ir/training.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "partitioners/recompute.hpp"
#include "plan_test_support.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace recompute_test {
namespace {

using testing::zoo_graph;

std::shared_ptr<const Graph> training(const std::string& zoo_name) {
  return std::make_shared<const Graph>(training_graph(*zoo_graph(zoo_name), Optimizer{}));
}

Plan plan_of(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices, int microbatches,
             PipelineSchedule schedule, bool recompute) {
  PartitionOptions options{devices, microbatches, nullptr};
  options.schedule = schedule;
  options.recompute = recompute;
  return make_plan(*make_partitioner(strategy), graph, options);
}

bool is_backward(const Plan& plan, const PlanOp& op) {
  return op.role == OpRole::kCompute && plan.graph->node(op.node).pass == Pass::kBackward;
}

TEST(Recompute, EveryTrainableStrategyRecomputesIntoAValidPlan) {
  for (const char* name : {"mlp-small", "cnn-small", "residual-small", "towers-small", "lstm-small", "gru-small"}) {
    const auto graph = training(name);
    for (const auto& [strategy, devices, microbatches] :
         std::vector<std::tuple<std::string, int, int>>{{"single", 1, 1}, {"horizontal", 2, 1}, {"pipeline", 2, 4},
                                                        {"pipeline", 3, 2}, {"data", 2, 1}}) {
      for (const PipelineSchedule schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kOneForwardOneBackward}) {
        SCOPED_TRACE(std::string(name) + " " + strategy + " " + std::string(to_string(schedule)));
        const int rows = static_cast<int>(std::min<int64_t>(microbatches, graph->batch()));
        const Plan plan = plan_of(graph, strategy, devices, rows, schedule, true);
        const auto problems = plan_problems(plan);
        EXPECT_TRUE(problems.empty()) << problems.front();
        EXPECT_GT(std::count_if(plan.ops.begin(), plan.ops.end(), [](const PlanOp& op) { return op.recomputes >= 0; }),
                  0);
      }
    }
  }
  const Plan tensor = plan_of(training("mlp-small"), "tensor", 2, 1, PipelineSchedule::kGpipe, true);
  EXPECT_TRUE(plan_problems(tensor).empty()) << plan_problems(tensor).front();
}

TEST(Recompute, EachMicroBatchIsReRunJustBeforeItsBackwardWhichReadsOnlyTheReRun) {
  const auto graph = training("mlp-small");
  const Plan plan = plan_of(graph, "pipeline", 2, 4, PipelineSchedule::kOneForwardOneBackward, true);
  const std::set<int> outputs(plan.outputs.begin(), plan.outputs.end());
  for (size_t device = 0; device < plan.schedule.size(); ++device) {
    const std::vector<int>& schedule = plan.schedule[device];
    for (int microbatch = 0; microbatch < 4; ++microbatch) {
      size_t last_forward = 0, first_rerun = schedule.size(), last_rerun = 0, first_backward = schedule.size();
      for (size_t at = 0; at < schedule.size(); ++at) {
        const PlanOp& op = plan.op(schedule[at]);
        if (op.role != OpRole::kCompute || op.microbatch != microbatch) continue;
        if (op.recomputes >= 0) {
          first_rerun = std::min(first_rerun, at);
          last_rerun = at;
        } else if (is_backward(plan, op)) {
          first_backward = std::min(first_backward, at);
        } else {
          last_forward = at;
        }
      }
      SCOPED_TRACE("device " + std::to_string(device) + " micro-batch " + std::to_string(microbatch));
      ASSERT_LT(first_rerun, schedule.size());
      EXPECT_LT(last_forward, first_rerun);
      EXPECT_EQ(last_rerun + 1, first_backward);  // the re-run runs as one block, right before
    }
  }
  // No backward op reads a forward value its own device computed, but for the plan's outputs.
  for (const PlanOp& op : plan.ops) {
    if (!is_backward(plan, op)) continue;
    for (int input : op.inputs) {
      if (input < 0 || outputs.count(input) != 0) continue;
      const Value& value = plan.value(input);
      if (value.producer < 0) continue;
      const PlanOp& producer = plan.op(value.producer);
      const bool stashed_forward = producer.role == OpRole::kCompute && producer.recomputes < 0 &&
                                   plan.graph->node(producer.node).pass == Pass::kForward;
      EXPECT_FALSE(stashed_forward) << op_label(plan, op) << " reads the stashed " << op_label(plan, producer);
    }
  }
}

TEST(Recompute, TheFirstStageRunsItsForwardTwiceAndStashesLess) {
  // Every forward value of mlp-small's first stage is read by its backward
  // (each dense layer's activation gradient reads its output, its weight
  // gradient its input), so the stage re-runs all of its forward: exactly
  // its forward FLOPs once more, for any schedule.
  const auto graph = training("mlp-small");
  for (const PipelineSchedule schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kOneForwardOneBackward}) {
    SCOPED_TRACE(std::string(to_string(schedule)));
    const Plan stashed = plan_of(graph, "pipeline", 2, 8, schedule, false);
    const Plan recomputed = plan_of(graph, "pipeline", 2, 8, schedule, true);
    int64_t forward = 0, rerun = 0;
    for (const PlanOp& op : recomputed.ops) {
      if (op.role != OpRole::kCompute || op.device != 0 || is_backward(recomputed, op)) continue;
      (op.recomputes >= 0 ? rerun : forward) += op.flops;
    }
    EXPECT_GT(forward, 0);
    EXPECT_EQ(rerun, forward);
    EXPECT_LT(recomputed.memory[0].activations_peak, stashed.memory[0].activations_peak);
    EXPECT_EQ(recomputed.memory[0].params, stashed.memory[0].params);
    EXPECT_EQ(recomputed.memory[0].gradients, stashed.memory[0].gradients);
  }
}

TEST(Recompute, TheCheckHoldsAReRunToTheOpItReRuns) {
  const Plan plan = plan_of(training("mlp-small"), "pipeline", 2, 2, PipelineSchedule::kGpipe, true);
  ASSERT_TRUE(plan_problems(plan).empty());
  const auto rerun = std::find_if(plan.ops.begin(), plan.ops.end(), [](const PlanOp& op) { return op.recomputes >= 0; });
  ASSERT_NE(rerun, plan.ops.end());
  const size_t at = static_cast<size_t>(rerun - plan.ops.begin());

  Plan other_rows = plan;
  other_rows.ops[at].slice.batch.end -= 1;
  EXPECT_FALSE(plan_problems(other_rows).empty());

  Plan of_a_backward_op = plan;
  const auto backward = std::find_if(plan.ops.begin(), plan.ops.end(), [&](const PlanOp& op) {
    return is_backward(plan, op) && op.id < rerun->id;
  });
  ASSERT_NE(backward, plan.ops.end());
  of_a_backward_op.ops[at].recomputes = backward->id;
  EXPECT_FALSE(plan_problems(of_a_backward_op).empty());

  // Counted in the tiling, a re-run would make the network's FLOPs twice.
  Plan uncounted = plan;
  uncounted.ops[at].recomputes = -1;
  EXPECT_FALSE(plan_problems(uncounted).empty());
}

TEST(Recompute, AForwardPlanHasNothingToReRun) {
  PartitionOptions options{2, 2, nullptr};
  options.recompute = true;
  EXPECT_THROW((void)make_plan(*make_partitioner("pipeline"), zoo_graph("mlp-small"), options), InputError);
}

}  // namespace
}  // namespace recompute_test
}  // namespace splitscope
