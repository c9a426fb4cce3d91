// `hybrid`'s plans (partitioners/hybrid.hpp): which devices each group of
// traffic stays in, the degenerate degrees that are another strategy, and
// the degrees it refuses.
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>

#include "ir/training.hpp"
#include "naive_reference.hpp"
#include "plan/group_traffic.hpp"
#include "partitioners/hybrid.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace hybrid_plan_test {
namespace {

Plan hybrid_plan(const std::shared_ptr<const Graph>& graph, ParallelDegrees degrees, int microbatches,
                 PipelineSchedule schedule = PipelineSchedule::kGpipe) {
  PartitionOptions options;
  options.devices = degrees.tensor * degrees.pipeline * degrees.data;
  options.microbatches = microbatches;
  options.schedule = schedule;
  options.degrees = degrees;
  Plan plan = make_partitioner("hybrid")->partition(graph, options);
  check(plan);
  return plan;
}

Plan strategy_plan(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices,
                   int microbatches, PipelineSchedule schedule = PipelineSchedule::kGpipe) {
  PartitionOptions options;
  options.devices = devices;
  options.microbatches = microbatches;
  options.schedule = schedule;
  Plan plan = make_partitioner(strategy)->partition(graph, options);
  check(plan);
  return plan;
}

std::shared_ptr<const Graph> mlp_training() {
  return std::make_shared<const Graph>(training_graph(*testing_support::zoo_graph("mlp-small"), Optimizer{}));
}

std::set<int> devices_of(const PlanOp& op) { return {op.participants.begin(), op.participants.end()}; }

// mlp-small (batch 8): fc1..fc4 (64 units), classifier (10), softmax. Two
// stages balanced by cost, (fc1, fc2, fc3) and (fc4, classifier, softmax),
// each stage's layers split over its 2 devices: the pair (fc1, fc2) inside
// stage 0, the pair (fc3, fc4) across the boundary, fc3's column halves
// handed over position by position (device t of stage 0 to device t of
// stage 1) for fc4's row halves. Per replica (4 rows) and micro-batch (2
// rows): one all-reduce a pair inside the group that holds its partial
// sums, two half hand-offs, the classifier's slices concatenated on the
// stage's first device for the softmax.
TEST(HybridPlan, MlpT2P2D2ForwardKeepsEachKindOfTrafficInItsGroup) {
  const Plan plan = hybrid_plan(testing_support::zoo_graph("mlp-small"), {2, 2, 2}, 2);
  EXPECT_EQ(plan.strategy, "hybrid t2 p2 d2");
  ASSERT_TRUE(plan.degrees.has_value());
  EXPECT_EQ(plan.devices, 8);
  const int64_t microbatch_bytes = 2 * 64 * 4;  // 2 rows of 64 float32 features
  int all_reduces = 0;
  int transfers = 0;
  int concats = 0;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCollective && op.collective == CollectiveKind::kAllReduce) {
      ++all_reduces;
      const std::string layer = plan.graph->node(op.node).name;
      ASSERT_TRUE(layer == "fc2" || layer == "fc4") << layer;
      const int first = (op.participants.front() / 4) * 4 + (layer == "fc2" ? 0 : 2);  // replica, then stage
      EXPECT_EQ(devices_of(op), (std::set<int>{first, first + 1})) << layer;
      EXPECT_EQ(op.payload_bytes, microbatch_bytes);
      EXPECT_EQ(op.bytes_moved, 2 * microbatch_bytes);  // 2(N-1)·B for N = 2
    } else if (op.role == OpRole::kTransfer) {
      ++transfers;
      EXPECT_EQ(plan.graph->node(op.node).name, "fc3");
      EXPECT_TRUE(op.src_device % 4 < 2) << op.src_device;
      EXPECT_EQ(op.device, op.src_device + 2) << "device t of stage 0 to device t of stage 1, in one replica";
      EXPECT_EQ(op.bytes_moved, microbatch_bytes / 2);
    } else if (op.role == OpRole::kCollective && op.collective == CollectiveKind::kConcat) {
      ++concats;
      EXPECT_EQ(op.device % 4, 2);
      EXPECT_EQ(devices_of(op), (std::set<int>{op.device, op.device + 1}));
      EXPECT_EQ(op.bytes_moved, 2 * 5 * 4);  // the other device's 2 rows of 5 classes
    } else if (op.role == OpRole::kCollective) {
      ADD_FAILURE() << "an unexpected collective: " << op_label(plan, op);
    }
  }
  EXPECT_EQ(all_reduces, 2 * 2 * 2);  // 2 pairs x 2 micro-batches x 2 replicas
  EXPECT_EQ(transfers, 2 * 2 * 2);    // 2 halves x 2 micro-batches x 2 replicas
  EXPECT_EQ(concats, 2 * 2);          // per micro-batch and replica
  // A dense slice's FLOPs are 2·rows·inputs·outputs (activations and the
  // softmax are counted as none); each replica runs 4 rows. Stage 0's
  // devices: half of fc1, fc2 and fc3 each; stage 1's: half of fc4 and of
  // the classifier.
  const std::vector<int64_t> flops = plan_totals(plan).device_flops;
  const int64_t half_layer = 2 * 4 * 64 * 32;
  for (size_t d = 0; d < 8; ++d) {
    EXPECT_EQ(flops[d], d % 4 < 2 ? 3 * half_layer : half_layer + 2 * 4 * 64 * 5) << d;
  }

  const GroupTraffic traffic = group_traffic(plan_traffic(plan), *plan.degrees);
  EXPECT_EQ(traffic.data, 0);  // a forward pass has no gradients to all-reduce
  EXPECT_EQ(traffic.pipeline, transfers * microbatch_bytes / 2);
  // A 2-device ring all-reduce sends B/2 each way twice (reduce-scatter,
  // all-gather); a concat sends the other device's slice.
  EXPECT_EQ(traffic.tensor, all_reduces * 2 * microbatch_bytes + concats * 2 * 5 * 4);
}

TEST(HybridPlan, TrainingAllReducesEachWeightSliceAcrossTheReplicasOnly) {
  const Plan plan = hybrid_plan(mlp_training(), {2, 2, 2}, 2);
  int data_all_reduces = 0;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCollective || op.collective != CollectiveKind::kAllReduce) continue;
    const std::set<int> devices = devices_of(op);
    const bool across_replicas = *devices.begin() < 4 && *devices.rbegin() >= 4;
    if (!across_replicas) {
      EXPECT_EQ(*devices.rbegin() / 2, *devices.begin() / 2) << "a tensor all-reduce leaves its group";
      continue;
    }
    ++data_all_reduces;
    // A device and its counterpart in the other replica, and nothing else.
    for (int device : devices) EXPECT_TRUE(devices.count(device % 4) && devices.count(device % 4 + 4));
  }
  EXPECT_GT(data_all_reduces, 0);
  const GroupTraffic traffic = group_traffic(plan_traffic(plan), *plan.degrees);
  EXPECT_GT(traffic.tensor, 0);
  EXPECT_GT(traffic.pipeline, 0);
  // The gradients of every weight, once: each device's weight slices, all-reduced
  // with one other device (a 2-ring sends each its slice once, half each way twice).
  int64_t weights = 0;
  for (int d = 0; d < 8; ++d) weights += plan.memory[static_cast<size_t>(d)].params;
  EXPECT_EQ(traffic.data, weights);
}

TEST(HybridPlan, OneForwardOneBackwardOrdersEachStageGroupAlike) {
  const Plan plan = hybrid_plan(mlp_training(), {2, 2, 1}, 4, PipelineSchedule::kOneForwardOneBackward);
  // The two devices of a stage run the same passes in the same order (their
  // all-reduces pair up); stage 0 warms up with one forward more than stage 1.
  const auto passes = [&](int device) {
    std::vector<std::pair<Pass, int>> sequence;
    for (int id : plan.schedule[static_cast<size_t>(device)]) {
      const PlanOp& op = plan.op(id);
      if (op.role == OpRole::kUpdate) continue;
      const std::pair<Pass, int> pass{plan.graph->node(op.node).pass, op.microbatch};
      if (sequence.empty() || sequence.back() != pass) sequence.push_back(pass);
    }
    return sequence;
  };
  EXPECT_EQ(passes(0), passes(1));
  EXPECT_EQ(passes(2), passes(3));
  const auto stage0 = passes(0);
  ASSERT_GE(stage0.size(), 3u);
  EXPECT_EQ(stage0[0], (std::pair<Pass, int>{Pass::kForward, 0}));
  EXPECT_EQ(stage0[1], (std::pair<Pass, int>{Pass::kForward, 1}));
  EXPECT_EQ(stage0[2], (std::pair<Pass, int>{Pass::kBackward, 0}));
  EXPECT_EQ(passes(2)[1], (std::pair<Pass, int>{Pass::kBackward, 0}));
  ASSERT_TRUE(ideal_bubble(plan).has_value());
  EXPECT_DOUBLE_EQ(*ideal_bubble(plan), 1.0 / 5.0);  // (P-1)/(M+P-1), P = 2 stages, not 4 devices
}

TEST(HybridPlan, EverySmallZooNetworkGivesACheckedPlanForwardAndTraining) {
  for (const char* network : {"mlp-small", "cnn-small", "lstm-small", "gru-small", "residual-small", "towers-small",
                              "inception-small", "resnet-small", "two-tower-small", "bert-small", "gpt-small"}) {
    const auto forward = testing_support::zoo_graph(network);
    const auto training = std::make_shared<const Graph>(training_graph(*forward, Optimizer{}));
    for (const auto& graph : {forward, training}) {
      for (const auto& [degrees, microbatches] :
           std::vector<std::pair<ParallelDegrees, int>>{{{2, 2, 2}, 1}, {{2, 2, 1}, 2}, {{1, 2, 2}, 1}}) {
        if (microbatches > graph->batch() / degrees.data) continue;
        const Plan plan = hybrid_plan(graph, degrees, microbatches);  // check()ed
        EXPECT_EQ(plan.devices, degrees.tensor * degrees.pipeline * degrees.data) << network;
      }
    }
  }
}

/// The plans are the same op for op: what runs where, moves and collectives.
void expect_same_plan(const Plan& a, const Plan& b, const std::string& what) {
  ASSERT_EQ(a.ops.size(), b.ops.size()) << what;
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const PlanOp& x = a.ops[i];
    const PlanOp& y = b.ops[i];
    EXPECT_TRUE(x.role == y.role && x.node == y.node && x.microbatch == y.microbatch && x.device == y.device &&
                x.src_device == y.src_device && x.participants == y.participants && x.slice.batch == y.slice.batch &&
                x.slice.out == y.slice.out && x.slice.reduce == y.slice.reduce &&
                x.flops == y.flops && x.bytes_moved == y.bytes_moved)
        << what << ": op " << i << " is " << op_label(a, x) << " against " << op_label(b, y);
  }
  EXPECT_EQ(a.schedule, b.schedule) << what;
  ASSERT_EQ(a.memory.size(), b.memory.size()) << what;
  for (size_t d = 0; d < a.memory.size(); ++d) EXPECT_EQ(a.memory[d].peak, b.memory[d].peak) << what << " device " << d;
}

TEST(HybridPlan, DegenerateDegreesAreTheOtherStrategies) {
  for (const auto& graph : {testing_support::zoo_graph("mlp-small"), mlp_training()}) {
    const std::string pass = graph->is_training() ? " training" : " forward";
    expect_same_plan(hybrid_plan(graph, {4, 1, 1}, 1), strategy_plan(graph, "tensor", 4, 1), "t4 = tensor" + pass);
    for (const PipelineSchedule schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kOneForwardOneBackward}) {
      expect_same_plan(hybrid_plan(graph, {1, 4, 1}, 4, schedule), strategy_plan(graph, "pipeline", 4, 4, schedule),
                       "p4 = pipeline" + pass);
    }
    expect_same_plan(hybrid_plan(graph, {1, 1, 1}, 1), strategy_plan(graph, "single", 1, 1), "1,1,1 = single" + pass);
    // d4 is `single` as 4 replicas, which is what `data` is: the same
    // compute on the same rows, gradients all-reduced across the 4.
    const Plan replicas = hybrid_plan(graph, {1, 1, 4}, 1);
    const Plan data = strategy_plan(graph, "data", 4, 1);
    const PlanTotals a = plan_totals(replicas);
    const PlanTotals b = plan_totals(data);
    EXPECT_EQ(a.device_flops, b.device_flops) << "d4 = data" << pass;
    EXPECT_EQ(a.device_ops, b.device_ops) << "d4 = data" << pass;
    EXPECT_EQ(a.collective_count, b.collective_count) << "d4 = data" << pass;
    EXPECT_EQ(a.collective_bytes, b.collective_bytes) << "d4 = data" << pass;
    EXPECT_EQ(a.transfer_count, 0) << pass;
  }
}

/// The InputError `degrees` over `devices` devices raise, as "source: problem".
std::string refusal(const std::shared_ptr<const Graph>& graph, std::optional<ParallelDegrees> degrees, int devices,
                    int microbatches = 1) {
  PartitionOptions options;
  options.devices = devices;
  options.microbatches = microbatches;
  options.degrees = degrees;
  try {
    (void)make_partitioner("hybrid")->partition(graph, options);
  } catch (const InputError& error) {
    return error.source() + ": " + error.problem();
  }
  return "accepted";
}

TEST(HybridPlan, RefusesDegreesItCannotBuildNamingTheOptionAndTheFix) {
  const auto mlp = testing_support::zoo_graph("mlp-small");
  const auto has = [](const std::string& message, const std::string& part) {
    return message.find(part) != std::string::npos;
  };
  const std::string none = refusal(mlp, std::nullopt, 8);
  EXPECT_TRUE(has(none, "--degrees: hybrid needs its three degrees: --degrees T,P,D")) << none;
  const std::string product = refusal(mlp, ParallelDegrees{2, 2, 2}, 4);
  EXPECT_TRUE(has(product, "--degrees: 2x2x2 = 8 devices, but --devices is 4")) << product;
  const std::string zero = refusal(mlp, ParallelDegrees{0, 2, 2}, 0);
  EXPECT_TRUE(has(zero, "--degrees: each degree must be at least 1")) << zero;
  const std::string stages = refusal(mlp, ParallelDegrees{1, 7, 1}, 7);
  EXPECT_TRUE(has(stages, "--degrees: 7 pipeline stages, but mlp-small has 6 layers")) << stages;
  EXPECT_TRUE(has(stages, "at most 6")) << stages;
  const std::string tensor = refusal(mlp, ParallelDegrees{16, 1, 1}, 16);
  EXPECT_TRUE(
      has(tensor, "--degrees: a tensor degree of 16, but layer classifier has 10 outputs to slice; use at most 10"))
      << tensor;
  const std::string data = refusal(mlp, ParallelDegrees{1, 1, 16}, 16);
  EXPECT_TRUE(has(data, "--degrees: 16 data replicas need a row of the batch each, and the batch has 8")) << data;
  const std::string microbatches = refusal(mlp, ParallelDegrees{1, 2, 4}, 8, 3);
  EXPECT_TRUE(has(microbatches, "--microbatches: must be between 1 and each replica's rows (2 of the batch of 8"))
      << microbatches;
  EXPECT_EQ(refusal(mlp, ParallelDegrees{1, 2, 4}, 8, 2), "accepted");
}

TEST(HybridPlan, ParsesDegreesAndRefusesAnythingButThreeWholeNumbers) {
  EXPECT_EQ(parse_degrees("2,4,8"), (ParallelDegrees{2, 4, 8}));
  for (const char* bad : {"", "2,2", "2,2,2,2", "2,,2", "a,2,2", "2.5,1,1", "2,2,2,"}) {
    try {
      (void)parse_degrees(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& error) {
      EXPECT_EQ(error.source(), "--degrees") << bad;
    }
  }
}

}  // namespace
}  // namespace hybrid_plan_test
}  // namespace splitscope
