// Training plans: the pipeline schedules' closed forms, the plan of a
// training step (gradients summed over micro-batches, one update per weight
// slice), and 1F1B's smaller activation stash.
#include <gtest/gtest.h>

#include <set>

#include <map>

#include "ir/training.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/pipeline_schedule.hpp"
#include "plan/plan_check.hpp"
#include "plan_test_support.hpp"

namespace splitscope {
namespace training_plan_test {
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
                   int microbatches, PipelineSchedule schedule, int64_t bucket_bytes = PartitionOptions{}.bucket_bytes) {
  PartitionOptions options{devices, microbatches, nullptr};
  options.schedule = schedule;
  options.bucket_bytes = bucket_bytes;
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

TEST(TrainingPlan, AVerticalSplitsActivationGradientsRunOnEveryDeviceWithNoTransfer) {
  // Every device holds the all-reduced input gradient of the layer above, so
  // each computes the activation gradient of its own slice of the layer below.
  for (const char* name : {"mlp-small", "cnn-small"}) {
    const auto graph = training(name);
    for (int devices : {2, 3}) {
      SCOPED_TRACE(std::string(name) + " N=" + std::to_string(devices));
      const Plan plan = training_plan(graph, "vertical", devices, 1, PipelineSchedule::kGpipe);
      ASSERT_TRUE(plan_problems(plan).empty()) << plan_problems(plan).front();
      std::map<NodeId, std::set<int>> devices_of;
      for (const PlanOp& op : plan.ops) {
        if (graph->node(op.node).kind != OpKind::kActivationGrad) continue;
        EXPECT_EQ(op.role, OpRole::kCompute) << "moved: " << graph->node(op.node).name;
        devices_of[op.node].insert(op.device);
      }
      ASSERT_FALSE(devices_of.empty());
      for (const auto& [node, on] : devices_of) {
        // Beneath the output's softmax (whole on device 0) the layers are sliced over every device.
        EXPECT_EQ(on.size(), static_cast<size_t>(devices)) << graph->node(node).name;
      }
    }
  }
}

TEST(TrainingPlan, TheSlicedStrategiesApplyWhereTheirBackwardCanFollowTheSlices) {
  for (const char* strategy : {"vertical", "tensor"}) {
    const auto partitioner = make_partitioner(strategy);
    EXPECT_TRUE(partitioner->applies(*training("mlp-small"), 2)) << strategy;
    EXPECT_TRUE(partitioner->applies(*training("cnn-small"), 2) || std::string(strategy) == "tensor")
        << strategy << ": convolutions split by filters";
    // tensor needs a pair of dense layers, which lstm-small lacks.
    EXPECT_EQ(partitioner->applies(*training("lstm-small"), 2), std::string(strategy) == "vertical")
        << strategy << ": cells split by units";
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
}  // namespace training_plan_test
}  // namespace splitscope

namespace splitscope {
namespace training_plan_test {
namespace {

TEST(DataParallelPlan, EachWeightSliceIsAllReducedOnceAcrossTheReplicasThenUpdatedOnEach) {
  const auto graph = training("cnn-small");
  for (int devices : {2, 3}) {
    const Plan plan = training_plan(graph, "data", devices, 1, PipelineSchedule::kGpipe, /*bucket_bytes=*/0);
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

/// The all-reduces of `plan`, as the layer names of each one's segments.
std::vector<std::vector<std::string>> buckets_of(const Plan& plan) {
  std::vector<std::vector<std::string>> buckets;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCollective) continue;
    std::vector<std::string>& names = buckets.emplace_back();
    const size_t segments = op.inputs.size() / op.participants.size();
    for (size_t k = 0; k < segments; ++k) names.push_back(plan.graph->node(plan.value(op.inputs[k]).node).name);
  }
  return buckets;
}

// Three dense layers: fc1 100·1000 + 1000 = 101,000 floats (404,000 bytes),
// fc2 1000·300 + 300 = 300,300 (1,201,200 bytes), fc3 300·10 + 10 = 3,010
// (12,040 bytes). Backward finishes fc3, fc2, fc1 in that order.
constexpr const char* kThreeLayers = R"({"batch": 6, "input": [100], "layers": [
    {"type": "dense", "units": 1000, "name": "fc1"}, {"type": "dense", "units": 300, "name": "fc2"},
    {"type": "dense", "units": 10, "name": "fc3"}, {"type": "softmax"}]})";

TEST(DataParallelPlan, GradientsTravelInDdpBucketsInTheOrderBackwardFinishesThem) {
  const auto graph = std::make_shared<const Graph>(training_graph(*testing::graph_from_text(kThreeLayers), Optimizer{}));
  using Buckets = std::vector<std::vector<std::string>>;
  // 25 MiB: the first bucket closes at 1 MiB (12,040 + 1,201,200 bytes), fc1 is the last.
  EXPECT_EQ(buckets_of(training_plan(graph, "data", 2, 1, PipelineSchedule::kGpipe, 25 << 20)),
            (Buckets{{"fc3", "fc2"}, {"fc1"}}));
  // 0.5 MiB (524,288 bytes): fc3 + fc2 pass it, fc1 alone does not but ends the step.
  EXPECT_EQ(buckets_of(training_plan(graph, "data", 3, 1, PipelineSchedule::kGpipe, 1 << 19)),
            (Buckets{{"fc3", "fc2"}, {"fc1"}}));
  // 12,040 bytes: every slice fills a bucket alone. So does a cap of 0.
  for (int64_t cap : {int64_t{12'040}, int64_t{0}}) {
    EXPECT_EQ(buckets_of(training_plan(graph, "data", 2, 1, PipelineSchedule::kGpipe, cap)),
              (Buckets{{"fc3"}, {"fc2"}, {"fc1"}}))
        << cap;
  }
  // 12,041 bytes: fc3 stays open for fc2.
  EXPECT_EQ(buckets_of(training_plan(graph, "data", 2, 1, PipelineSchedule::kGpipe, 12'041)),
            (Buckets{{"fc3", "fc2"}, {"fc1"}}));
  // 2 MiB: the first bucket still closes at 1 MiB; fc1 then opens the next.
  EXPECT_EQ(buckets_of(training_plan(graph, "data", 2, 1, PipelineSchedule::kGpipe, 2 << 20)),
            (Buckets{{"fc3", "fc2"}, {"fc1"}}));
  // 100 bytes for the first bucket, as DDP's first cap is min(1 MiB, cap).
  const Plan plan = training_plan(graph, "data", 3, 1, PipelineSchedule::kGpipe, 100);
  check(plan);
  EXPECT_EQ(buckets_of(plan).size(), 3u);
}

TEST(DataParallelPlan, ABucketIsOneAllReduceOverItsSlicesThatMovesTheirBytesAndFeedsEachUpdate) {
  const auto graph = std::make_shared<const Graph>(training_graph(*testing::graph_from_text(kThreeLayers), Optimizer{}));
  const Plan plan = training_plan(graph, "data", 3, 1, PipelineSchedule::kGpipe, 64 << 20);
  check(plan);
  ASSERT_EQ(buckets_of(plan).size(), 2u);
  const PlanOp* first = nullptr;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCollective && first == nullptr) first = &op;
  }
  ASSERT_NE(first, nullptr);
  ASSERT_EQ(first->inputs.size(), 6u) << "two segments on each of three participants";
  ASSERT_EQ(first->outputs.size(), 6u);
  EXPECT_EQ(first->payload_bytes, 12'040 + 1'201'200);
  EXPECT_EQ(first->bytes_moved, 2 * 2 * (12'040 + 1'201'200));
  for (size_t i = 0; i < first->inputs.size(); ++i) {
    EXPECT_EQ(plan.value(first->inputs[i]).device, first->participants[i / 2]);
    EXPECT_EQ(plan.value(first->outputs[i]).device, first->participants[i / 2]);
    EXPECT_EQ(plan.value(first->outputs[i]).partial, PartialSum::kNone);
  }
  // Every sum feeds the update of its own layer on its own device.
  int fed = 0;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kUpdate) continue;
    const Value& sum = plan.value(op.inputs.at(0));
    if (sum.producer != first->id) continue;
    ++fed;
    EXPECT_EQ(sum.node, plan.value(op.params).node);
    EXPECT_EQ(sum.device, op.device);
  }
  EXPECT_EQ(fed, 6);
}

TEST(DataParallelPlan, TheCheckRefusesABucketWhoseSegmentsAreOnTheWrongDevice) {
  const auto graph = std::make_shared<const Graph>(training_graph(*testing::graph_from_text(kThreeLayers), Optimizer{}));
  Plan plan = training_plan(graph, "data", 2, 1, PipelineSchedule::kGpipe, 64 << 20);
  for (PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCollective && op.inputs.size() == 4) {
      std::swap(op.inputs[1], op.inputs[2]);  // participant 0's second segment is now participant 1's first
      break;
    }
  }
  EXPECT_THROW(check(plan), std::logic_error);
}

TEST(DataParallelPlan, AForwardRunSplitsTheBatchAndMovesNothing) {
  const Plan plan = testing::make_plan(zoo_graph("mlp-small"), "data", 4);
  check(plan);
  EXPECT_EQ(plan_totals(plan).transfer_count + plan_totals(plan).collective_count, 0);
  EXPECT_FALSE(make_partitioner("data")->applies(*zoo_graph("mlp-small"), 4)) << "compare runs it when training";
  EXPECT_TRUE(make_partitioner("data")->applies(*training("mlp-small"), 4));
}

}  // namespace
}  // namespace training_plan_test
}  // namespace splitscope
