// Training plans: the pipeline schedules' closed forms, the plan of a
// training step (gradients summed over micro-batches, one update per weight
// slice), and 1F1B's smaller activation stash.
#include <gtest/gtest.h>

#include "ir/training.hpp"
#include "partitioners/partitioner.hpp"
#include "partitioners/pipeline_schedule.hpp"
#include "partitioners/plan_check.hpp"
#include "plan_test_support.hpp"

namespace splitscope {
namespace {

using testing::zoo_graph;

std::string spell(const std::vector<StagePass>& sequence) {
  std::string text;
  for (const StagePass& pass : sequence) {
    text += (pass.pass == Pass::kForward ? "F" : "B") + std::to_string(pass.microbatch) + " ";
  }
  return text;
}

TEST(PipelineSchedule, GpipeRunsEveryForwardThenEveryBackward) {
  EXPECT_EQ(spell(stage_sequence(PipelineSchedule::kGpipe, 1, 3, 3)), "F0 F1 F2 B0 B1 B2 ");
  EXPECT_EQ(peak_in_flight(stage_sequence(PipelineSchedule::kGpipe, 0, 4, 16)), 16);
}

TEST(PipelineSchedule, OneForwardOneBackwardWarmsUpByTheStagesAfterIt) {
  // Stage 0 of 4: three warm-up forwards, then alternate, then the cool-down.
  EXPECT_EQ(spell(stage_sequence(PipelineSchedule::kOneForwardOneBackward, 0, 4, 6)),
            "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5 ");
  // The last stage runs each micro-batch's backward right after its forward.
  EXPECT_EQ(spell(stage_sequence(PipelineSchedule::kOneForwardOneBackward, 3, 4, 3)), "F0 B0 F1 B1 F2 B2 ");
  // Fewer micro-batches than stages: the warm-up is all of them.
  EXPECT_EQ(spell(stage_sequence(PipelineSchedule::kOneForwardOneBackward, 0, 4, 2)), "F0 F1 B0 B1 ");
  for (int stages : {2, 3, 4, 8}) {
    for (int microbatches : {1, 2, 4, 8, 32}) {
      for (int stage = 0; stage < stages; ++stage) {
        const auto sequence = stage_sequence(PipelineSchedule::kOneForwardOneBackward, stage, stages, microbatches);
        EXPECT_EQ(static_cast<int>(sequence.size()), 2 * microbatches);
        // At most min(N - s, M) micro-batches in flight on stage s: min(N, M) on the first.
        EXPECT_EQ(peak_in_flight(sequence), std::min(stages - stage, microbatches))
            << stages << " stages, " << microbatches << " micro-batches, stage " << stage;
      }
    }
  }
}

int count_ops_of(const Plan& plan, OpRole role) { return testing::count_ops(plan, role); }

std::shared_ptr<const Graph> training(const std::string& zoo_name) {
  Optimizer optimizer;
  return std::make_shared<const Graph>(training_graph(*zoo_graph(zoo_name), optimizer));
}

Plan training_plan(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices,
                   int microbatches, PipelineSchedule schedule) {
  PartitionOptions options{devices, microbatches, nullptr};
  options.schedule = schedule;
  return make_partitioner(strategy)->partition(graph, options);
}

TEST(TrainingPlan, EveryTrainableStrategyMakesAValidPlanOfEveryTrainableZooNetwork) {
  for (const char* name : {"mlp-small", "cnn-small", "residual-small", "towers-small", "lstm-small", "gru-small", "mlp",
                           "cnn"}) {
    const auto graph = training(name);
    for (const PipelineSchedule schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kOneForwardOneBackward}) {
      for (const auto& [strategy, devices, microbatches] :
           std::vector<std::tuple<std::string, int, int>>{{"single", 1, 1}, {"horizontal", 2, 1}, {"pipeline", 2, 4},
                                                          {"pipeline", 3, 2}, {"data", 2, 1}, {"data", 3, 1}}) {
        SCOPED_TRACE(std::string(name) + " " + strategy + " " + std::string(to_string(schedule)));
        const int rows = static_cast<int>(std::min<int64_t>(microbatches, graph->batch()));
        const Plan plan = training_plan(graph, strategy, devices, rows, schedule);
        EXPECT_TRUE(plan_problems(plan).empty()) << plan_problems(plan).front();
      }
    }
  }
}

TEST(TrainingPlan, TheSlicedStrategiesMakeValidPlansOfDenseNetworks) {
  for (const char* name : {"mlp-small", "mlp"}) {
    const auto graph = training(name);
    for (const char* strategy : {"vertical", "tensor"}) {
      for (int devices : {2, 3, 4}) {
        SCOPED_TRACE(std::string(name) + " " + strategy + " N=" + std::to_string(devices));
        const Plan plan = training_plan(graph, strategy, devices, 1, PipelineSchedule::kGpipe);
        EXPECT_TRUE(plan_problems(plan).empty()) << plan_problems(plan).front();
        // Each device updates the weight slices it holds, once.
        int64_t updated = 0;
        for (const PlanOp& op : plan.ops) {
          if (op.role == OpRole::kUpdate) updated += plan.value(op.params).bytes;
        }
        int64_t held = 0;
        for (const DeviceMemory& memory : plan.memory) held += memory.params;
        EXPECT_EQ(updated, held);
      }
    }
  }
}

TEST(TrainingPlan, TheSlicedStrategiesApplyWhereTheirBackwardCanFollowTheSlices) {
  for (const char* strategy : {"vertical", "tensor"}) {
    const auto partitioner = make_partitioner(strategy);
    EXPECT_TRUE(partitioner->applies(*training("mlp-small"), 2)) << strategy;
    EXPECT_FALSE(partitioner->applies(*training("cnn-small"), 2)) << strategy << ": convolutions split by filters";
    EXPECT_FALSE(partitioner->applies(*training("lstm-small"), 2)) << strategy << ": cells split by units";
    EXPECT_TRUE(partitioner->applies(*zoo_graph("cnn-small"), 2) || std::string(strategy) == "tensor")
        << strategy << ": forward passes split as before";
  }
}

TEST(TrainingPlan, MicroBatchGradientsAreSummedThenAppliedOncePerWeightSlice) {
  const auto graph = training("mlp-small");
  const Plan plan = training_plan(graph, "pipeline", 2, 4, PipelineSchedule::kGpipe);
  int weighted_layers = 0;
  for (NodeId id = 0; id < graph->num_nodes(); ++id) {
    if (graph->node(id).pass == Pass::kForward && graph->node(id).param_key >= 0) ++weighted_layers;
  }
  int updates = 0;
  int gradient_ops = 0;
  int chained = 0;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kUpdate) {
      ++updates;
      const Value& gradient = plan.value(op.inputs.at(0));
      EXPECT_EQ(gradient.batch, (Range{0, graph->batch()}));
      EXPECT_EQ(gradient.bytes, plan.value(op.params).bytes);
      // The update is its device's last op.
      EXPECT_EQ(plan.schedule[static_cast<size_t>(op.device)].back() == op.id ||
                    plan.op(plan.schedule[static_cast<size_t>(op.device)].back()).role == OpRole::kUpdate,
                true);
    }
    if (op.role == OpRole::kCompute && op_def(graph->node(op.node).kind).writes_gradient) {
      ++gradient_ops;
      if (op.microbatch > 0) {
        ++chained;
        EXPECT_EQ(op.inputs.size(), graph->node(op.node).input_shapes.size() + 1) << op_label(plan, op);
      }
    }
  }
  EXPECT_EQ(updates, weighted_layers);
  EXPECT_EQ(gradient_ops, 4 * weighted_layers);
  EXPECT_EQ(chained, 3 * weighted_layers);
  // Momentum SGD: one state float per weight, beside the weights.
  for (const DeviceMemory& memory : plan.memory) EXPECT_EQ(memory.optimizer_state, memory.params);
}

TEST(TrainingPlan, OneForwardOneBackwardStashesFewerActivationsOnTheFirstStage) {
  // M = 4N: GPipe keeps every micro-batch's activations until its backward;
  // 1F1B at most N of them.
  const auto graph = training("mlp-small");
  const int stages = 2;
  const int microbatches = 4 * stages;
  const Plan gpipe = training_plan(graph, "pipeline", stages, microbatches, PipelineSchedule::kGpipe);
  const Plan one_f_one_b =
      training_plan(graph, "pipeline", stages, microbatches, PipelineSchedule::kOneForwardOneBackward);
  check(gpipe);
  check(one_f_one_b);
  EXPECT_LT(one_f_one_b.memory[0].activations_peak, gpipe.memory[0].activations_peak);
  EXPECT_LE(2 * one_f_one_b.memory[0].activations_peak, gpipe.memory[0].activations_peak);
  EXPECT_EQ(one_f_one_b.memory[0].params, gpipe.memory[0].params);
}

TEST(TrainingPlan, ASchedulePastTheDataFlowIsRefusedByTheWalk) {
  const auto graph = training("mlp-small");
  Plan plan = training_plan(graph, "pipeline", 2, 2, PipelineSchedule::kGpipe);
  // Stage 1 running a backward before the forward it needs: a cycle.
  auto& stage = plan.schedule[1];
  std::reverse(stage.begin(), stage.end());
  EXPECT_FALSE(plan_problems(plan).empty());
}

}  // namespace
}  // namespace splitscope

namespace splitscope {
namespace {

TEST(DataParallelPlan, EachWeightSliceIsAllReducedOnceAcrossTheReplicasThenUpdatedOnEach) {
  const auto graph = training("cnn-small");
  for (int devices : {2, 3}) {
    const Plan plan = training_plan(graph, "data", devices, 1, PipelineSchedule::kGpipe);
    check(plan);
    int weight_sets = 0;
    int64_t weight_bytes = 0;
    for (NodeId id = 0; id < graph->num_nodes(); ++id) {
      const OpNode& node = graph->node(id);
      if (node.pass != Pass::kForward || node.param_key < 0) continue;
      ++weight_sets;
      weight_bytes += node.param_count * 4;
    }
    int all_reduces = 0;
    int64_t moved = 0;
    int transfers = 0;
    for (const PlanOp& op : plan.ops) {
      if (op.role == OpRole::kTransfer) ++transfers;
      if (op.role != OpRole::kCollective) continue;
      ASSERT_EQ(op.collective, CollectiveKind::kAllReduce);
      EXPECT_EQ(static_cast<int>(op.participants.size()), devices);
      ++all_reduces;
      moved += op.bytes_moved;
    }
    EXPECT_EQ(transfers, 0) << "replicas move no activations";
    EXPECT_EQ(all_reduces, weight_sets);
    // The ring moves 2(N-1)/N of every gradient into each of N devices.
    EXPECT_EQ(moved, 2 * (devices - 1) * weight_bytes);
    EXPECT_EQ(count_ops_of(plan, OpRole::kUpdate), devices * weight_sets);
  }
}

TEST(DataParallelPlan, AForwardRunSplitsTheBatchAndMovesNothing) {
  const Plan plan = testing::make_plan(zoo_graph("mlp-small"), "data", 4);
  check(plan);
  EXPECT_EQ(plan_totals(plan).transfer_count + plan_totals(plan).collective_count, 0);
  EXPECT_FALSE(make_partitioner("data")->applies(*zoo_graph("mlp-small"), 4)) << "compare runs it when training";
  EXPECT_TRUE(make_partitioner("data")->applies(*training("mlp-small"), 4));
}

}  // namespace
}  // namespace splitscope
