// batch_norm, layer_norm and dropout on the cpu backend: their gradients
// against central finite differences of the double-precision reference (run
// as a training step runs them: batch statistics, the dropout mask), and the
// strategies that keep them exact equal to `single` step for step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/cpu/kernels/parallel_for.hpp"
#include "exec/cpu/plan_tasks.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "exec/output_compare.hpp"
#include "exec/training_run.hpp"
#include "ir/ops/dropout_mask.hpp"
#include "ir/ops/op_def.hpp"
#include "ir/params.hpp"
#include "ir/training.hpp"
#include "naive_reference.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "training_support.hpp"

namespace splitscope {
namespace normalization_training_test {
namespace {

using testing_support::graph_from_json;
using testing_support::naive_output;
using testing_support::WeightNudge;

constexpr uint64_t kSeed = 5;

// Batch norm after a convolution ([C, H, W]: statistics over samples, H, W) and after a dense layer ([F]).
const char* kConvBatchNorm = R"({"name": "conv-bn", "batch": 4, "input": [3, 6, 6], "layers": [
    {"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1, "bias": false},
    {"type": "batch_norm"}, {"type": "relu"},
    {"type": "maxpool", "kernel": 2},
    {"type": "flatten"}, {"type": "dense", "units": 3}, {"type": "softmax"}]})";
const char* kDenseBatchNorm = R"({"name": "dense-bn", "batch": 5, "input": [6], "layers": [
    {"type": "dense", "units": 8}, {"type": "batch_norm", "epsilon": 0.001}, {"type": "tanh"},
    {"type": "dense", "units": 4}]})";
// Layer norm over features, and over each step of a sequence.
const char* kDenseLayerNorm = R"({"name": "dense-ln", "batch": 3, "input": [6], "layers": [
    {"type": "dense", "units": 8}, {"type": "layer_norm"}, {"type": "sigmoid"},
    {"type": "dense", "units": 3}, {"type": "softmax"}]})";
const char* kSequenceLayerNorm = R"({"name": "seq-ln", "batch": 3, "input": [4, 5], "layers": [
    {"type": "gru", "hidden": 6}, {"type": "layer_norm"},
    {"type": "flatten"}, {"type": "dense", "units": 2}]})";
const char* kDropout = R"({"name": "dropout", "batch": 4, "input": [6], "layers": [
    {"type": "dense", "units": 10, "activation": "tanh"}, {"type": "dropout", "rate": 0.3},
    {"type": "dense", "units": 3}, {"type": "softmax"}]})";

Optimizer sgd(double lr, double momentum) {
  Optimizer optimizer;
  optimizer.learning_rate = lr;
  optimizer.momentum = momentum;
  return optimizer;
}

/// The forward graph as a training step runs it (OpDef::training_form).
Graph training_form(const Graph& forward) {
  Graph graph = forward;
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    if (const auto form = op_def(graph.node(id).kind).training_form) form(graph.mutable_node(id));
  }
  return graph;
}

/// The loss in double precision, one weight nudged.
double reference_loss(const Graph& forward, const Graph& training, const WeightNudge& nudge) {
  const std::vector<double> out = naive_output(forward, kSeed, nudge);
  const OpAttrs& target = training.node(target_node(training)).attrs;
  const int64_t batch = forward.batch();
  const auto width = static_cast<int64_t>(out.size()) / batch;
  double total = 0;
  for (int64_t b = 0; b < batch; ++b) {
    if (target.loss == LossKind::kSoftmaxCrossEntropy) {
      const auto label = static_cast<int64_t>(target_value(kSeed, b, target.loss, target.classes));
      total -= std::log(out[static_cast<size_t>(b * width + label)]);
      continue;
    }
    for (int64_t e = 0; e < width; ++e) {
      const double error = out[static_cast<size_t>(b * width + e)] - target_value(kSeed, b * width + e, target.loss, 0);
      total += error * error / static_cast<double>(width);
    }
  }
  return total / static_cast<double>(batch);
}

/// Each weight set's summed gradient (its tensors end to end) after one step of `plan`, by param_key.
std::map<int, std::vector<float>> cpu_gradients(const Plan& plan) {
  SerialFor serial;
  ValueBuffers buffers(plan);
  WeightStore weights(*plan.graph, kSeed, serial);
  fill_network_inputs(plan, kSeed, buffers);
  PlanTasks tasks = build_plan_tasks(plan, buffers, weights);
  TaskContext context{serial};
  for (int t = 0; t < tasks.graph.size(); ++t) tasks.graph.task(t).work(context);
  std::map<int, std::vector<float>> gradients;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kUpdate) continue;
    const ConstChannelBlock block = std::as_const(buffers).block(op.inputs.at(0));
    gradients[plan.graph->node(op.node).param_key].assign(block.data, block.data + block.floats());
  }
  return gradients;
}

/// Every element of every weight tensor of `kind`'s layers, and three of each other layer's.
void expect_gradients_match_finite_differences(const char* json, OpKind kind) {
  const auto forward = graph_from_json(json);
  const Graph stepped = training_form(*forward);
  const auto training = std::make_shared<const Graph>(training_graph(*forward, sgd(0.1, 0)));
  const Plan plan = make_partitioner("single")->partition(training, {1, 1, nullptr});
  check(plan);
  const auto gradients = cpu_gradients(plan);
  int checked_of_kind = 0;
  for (NodeId id = 0; id < forward->num_nodes(); ++id) {
    const OpNode& node = forward->node(id);
    if (node.param_key < 0) continue;
    const std::vector<float>& gradient = gradients.at(node.param_key);
    int64_t offset = 0;
    for (size_t t = 0; t < param_tensors(*forward, id).size(); ++t) {
      const int64_t count = element_count(param_tensors(*forward, id)[t].shape);
      std::vector<int64_t> elements{0, count / 2, count - 1};
      if (node.kind == kind) {
        elements.clear();
        for (int64_t e = 0; e < count; ++e) elements.push_back(e);
      }
      for (int64_t element : elements) {
        constexpr double kEps = 1e-3;
        const WeightNudge up{node.param_key, static_cast<int>(t), element, kEps};
        const WeightNudge down{node.param_key, static_cast<int>(t), element, -kEps};
        const double numeric = (reference_loss(stepped, *training, up) - reference_loss(stepped, *training, down)) /
                               (2 * kEps);
        const double analytic = gradient.at(static_cast<size_t>(offset + element));
        EXPECT_NEAR(analytic, numeric, 2e-3 * std::max(1.0, std::abs(numeric)) + 2e-5)
            << node.name << " tensor " << t << " element " << element;
        checked_of_kind += node.kind == kind ? 1 : 0;
      }
      offset += count;
    }
    EXPECT_EQ(offset, static_cast<int64_t>(gradient.size())) << node.name;
  }
  EXPECT_GT(checked_of_kind, 0);
}

TEST(NormalizationTraining, BatchNormAfterAConvolutionMatchesCentralFiniteDifferences) {
  expect_gradients_match_finite_differences(kConvBatchNorm, OpKind::kBatchNorm);
}
TEST(NormalizationTraining, BatchNormAfterADenseLayerMatchesCentralFiniteDifferences) {
  expect_gradients_match_finite_differences(kDenseBatchNorm, OpKind::kBatchNorm);
}
TEST(NormalizationTraining, LayerNormOverFeaturesMatchesCentralFiniteDifferences) {
  expect_gradients_match_finite_differences(kDenseLayerNorm, OpKind::kLayerNorm);
}
TEST(NormalizationTraining, LayerNormOverEachStepMatchesCentralFiniteDifferences) {
  expect_gradients_match_finite_differences(kSequenceLayerNorm, OpKind::kLayerNorm);
}
TEST(NormalizationTraining, DropoutsGradientThroughItsMaskMatchesCentralFiniteDifferences) {
  // The mask is fixed by the layer and the element, so the loss is smooth in the weights.
  expect_gradients_match_finite_differences(kDropout, OpKind::kDense);
}

TEST(NormalizationTraining, DropoutDropsAboutItsRateAndScalesTheRest) {
  int kept = 0;
  for (int64_t e = 0; e < 10000; ++e) kept += dropout_keeps(3, e, 0.3f) ? 1 : 0;
  EXPECT_NEAR(kept, 7000, 150);  // 3 standard deviations of a binomial(10000, 0.7)
}

using testing_support::expect_same_training;
using testing_support::TrainedRun;

TrainedRun train(const char* json, const std::string& strategy, int devices) {
  const auto forward = graph_from_json(json);
  const auto training = std::make_shared<const Graph>(training_graph(*forward, sgd(0.05, 0.9)));
  const Plan plan = make_plan(*make_partitioner(strategy), training, {devices, 1, nullptr});
  check(plan);
  CpuExecutor executor;
  RunOptions run;
  run.seed = kSeed;
  const RunResult result = run_training_steps(executor, plan, run, 3);
  return {result.losses, result.output};
}

TEST(NormalizationTraining, ChannelAndFeatureSplitsTrainStepForStepWithSingle) {
  // Batch norm's statistics are per channel, so a slice of channels holds
  // all it needs (vertical: the convolution's filters; tensor: the first
  // dense layer's units, batch norm and dropout between the pair); layer
  // norm runs whole on one device.
  for (const char* json : {kConvBatchNorm, kDenseBatchNorm, kDenseLayerNorm, kSequenceLayerNorm, kDropout}) {
    const TrainedRun single = train(json, "single", 1);
    for (const char* strategy : {"vertical", "tensor", "horizontal"}) {
      const Graph training = training_graph(*graph_from_json(json), sgd(0.05, 0.9));
      if (!make_partitioner(strategy)->applies(training, 2)) continue;
      expect_same_training(train(json, strategy, 2), single, std::string(strategy) + " on " + json);
    }
  }
}

TEST(NormalizationTraining, DataParallelismTrainsPerSampleOpsStepForStepWithSingle) {
  // Layer norm and dropout work sample by sample (the mask by each element's
  // place in the whole batch), so replicas of half the batch compute what one
  // device computes.
  for (const char* json : {kDenseLayerNorm, kSequenceLayerNorm, kDropout}) {
    expect_same_training(train(json, "data", 2), train(json, "single", 1), std::string("data on ") + json);
  }
}

TEST(NormalizationTraining, DataParallelBatchNormNormalizesEachReplicaByItsOwnSamples) {
  // As PyTorch DDP without SyncBatchNorm: each replica's statistics are its
  // half of the batch's, so the step differs from single's.
  const TrainedRun data = train(kDenseBatchNorm, "data", 2);
  const TrainedRun single = train(kDenseBatchNorm, "single", 1);
  ASSERT_EQ(data.losses.size(), single.losses.size());
  EXPECT_GT(std::abs(data.losses[0] - single.losses[0]), 1e-4 * std::abs(single.losses[0]));
}

TEST(NormalizationTraining, InferenceUsesRunningStatisticsUnderEveryStrategy) {
  // A forward run normalizes by a fresh layer's running statistics (mean 0,
  // variance 1) and drops nothing, so data parallelism equals single exactly,
  // and both equal the reference.
  for (const char* json : {kConvBatchNorm, kDenseBatchNorm, kDropout}) {
    const auto graph = graph_from_json(json);
    RunOptions run;
    run.warmup = 0;
    run.repeats = 1;
    run.seed = kSeed;
    const HostTensor single = CpuExecutor().run(make_partitioner("single")->partition(graph, {1, 1, nullptr}), run).output;
    const HostTensor data = CpuExecutor().run(make_partitioner("data")->partition(graph, {2, 1, nullptr}), run).output;
    EXPECT_LE(compare_outputs(data, single).max_relative_error, 1e-6) << json;
    EXPECT_LE(compare_outputs(single, testing_support::naive_forward(*graph, kSeed)).max_relative_error, 1e-5) << json;
  }
}

}  // namespace
}  // namespace normalization_training_test
}  // namespace splitscope
