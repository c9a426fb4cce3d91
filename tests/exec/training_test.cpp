// Training on the cpu backend: gradients against central finite differences
// of the double-precision reference, every trainable strategy against
// `single` step for step, and a loss that goes down.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/cpu/kernels/parallel_for.hpp"
#include "exec/cpu/plan_tasks.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "exec/training_run.hpp"
#include "ir/params.hpp"
#include "ir/training.hpp"
#include "naive_reference.hpp"
#include "training_support.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace training_test {
namespace {

using testing_support::graph_from_json;
using testing_support::naive_output;
using testing_support::WeightNudge;

constexpr uint64_t kSeed = 7;

// Small networks of each trainable family, with a softmax head (cross-entropy) or none (MSE).
const char* kDense = R"({"name": "dense", "batch": 5, "input": [6], "layers": [
    {"type": "dense", "units": 7, "activation": "tanh"},
    {"type": "dense", "units": 5, "activation": "sigmoid"},
    {"type": "dense", "units": 4}, {"type": "softmax"}]})";
const char* kConv = R"({"name": "conv", "batch": 3, "input": [4, 9, 9], "layers": [
    {"type": "conv2d", "filters": 6, "kernel": 3, "stride": 1, "padding": 1, "groups": 2, "activation": "relu"},
    {"type": "maxpool", "kernel": 3, "stride": 2},
    {"type": "conv2d", "filters": 4, "kernel": 2, "stride": 1, "activation": "tanh"},
    {"type": "avgpool", "kernel": 2, "stride": 1},
    {"type": "flatten"}, {"type": "dense", "units": 3}, {"type": "softmax"}]})";
const char* kResidualMse = R"({"name": "residual", "batch": 4, "input": [5], "layers": [
    {"name": "a", "type": "dense", "units": 6, "activation": "relu"},
    {"name": "b", "type": "dense", "units": 6, "activation": "tanh"},
    {"name": "j", "type": "add", "inputs": ["a", "b"]},
    {"name": "o", "type": "dense", "units": 3}]})";

const char* kTowers = R"({"name": "towers", "batch": 3, "input": [5], "layers": [
    {"name": "a", "type": "dense", "units": 4, "activation": "relu"},
    {"name": "b", "type": "dense", "units": 3, "inputs": "input", "activation": "sigmoid"},
    {"name": "c", "type": "concat", "inputs": ["a", "b"]},
    {"name": "o", "type": "dense", "units": 2}, {"type": "softmax"}]})";

const char* kLstm = R"({"name": "lstm", "batch": 3, "input": [4, 5], "layers": [
    {"name": "l", "type": "lstm", "hidden": 4, "layers": 2, "return_sequences": false},
    {"type": "dense", "units": 3}, {"type": "softmax"}]})";
const char* kGru = R"({"name": "gru", "batch": 3, "input": [4, 5], "layers": [
    {"name": "g", "type": "gru", "hidden": 4, "layers": 2, "return_sequences": true},
    {"type": "flatten"}, {"type": "dense", "units": 2}]})";

Optimizer plain_sgd(double lr) {
  Optimizer optimizer;
  optimizer.learning_rate = lr;
  optimizer.momentum = 0;
  return optimizer;
}

/// The loss of the forward graph in double precision, one weight nudged.
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

/// One step of a single-device training plan, its tasks run once in order
/// on this thread, keeping the buffers and weights to look into.
struct SerialStep {
  explicit SerialStep(const Plan& plan) : buffers(plan), weights(*plan.graph, kSeed, serial) {
    fill_network_inputs(plan, kSeed, buffers);
    PlanTasks tasks = build_plan_tasks(plan, buffers, weights);
    TaskContext context{serial};
    for (int t = 0; t < tasks.graph.size(); ++t) tasks.graph.task(t).work(context);
  }
  /// The summed gradient an update op applied.
  ConstChannelBlock gradient(const PlanOp& update) const { return buffers.block(update.inputs.at(0)); }

  SerialFor serial;
  ValueBuffers buffers;
  WeightStore weights;
};

/// Each weight set's gradient (flat, its tensors end to end) by param_key.
std::map<int, std::vector<float>> cpu_gradients(const Plan& plan) {
  const SerialStep step(plan);
  std::map<int, std::vector<float>> gradients;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kUpdate) continue;
    const ConstChannelBlock block = step.gradient(op);
    gradients[plan.graph->node(op.node).param_key].assign(block.data, block.data + block.floats());
  }
  return gradients;
}

void expect_gradients_match_finite_differences(const char* json) {
  const auto forward = graph_from_json(json);
  const auto training = std::make_shared<const Graph>(training_graph(*forward, plain_sgd(0.1)));
  const Plan plan = make_partitioner("single")->partition(training, {1, 1, nullptr});
  check(plan);
  const auto gradients = cpu_gradients(plan);
  ASSERT_FALSE(gradients.empty());
  int checked = 0;
  for (NodeId id = 0; id < forward->num_nodes(); ++id) {
    const OpNode& node = forward->node(id);
    if (node.param_key < 0) continue;
    const std::vector<float>& gradient = gradients.at(node.param_key);
    int64_t offset = 0;
    const auto tensors = param_tensors(*forward, id);
    for (size_t t = 0; t < tensors.size(); ++t) {
      const int64_t count = element_count(tensors[t].shape);
      for (int64_t element : {int64_t{0}, count / 2, count - 1}) {
        constexpr double kEps = 1e-3;
        WeightNudge up{node.param_key, static_cast<int>(t), element, kEps};
        WeightNudge down{node.param_key, static_cast<int>(t), element, -kEps};
        const double numeric = (reference_loss(*forward, *training, up) - reference_loss(*forward, *training, down)) /
                               (2 * kEps);
        const double analytic = gradient.at(static_cast<size_t>(offset + element));
        EXPECT_NEAR(analytic, numeric, 2e-3 * std::max(1.0, std::abs(numeric)) + 2e-5)
            << node.name << " tensor " << tensors[t].name << " element " << element;
        ++checked;
      }
      offset += count;
    }
    EXPECT_EQ(offset, static_cast<int64_t>(gradient.size())) << node.name;
  }
  EXPECT_GT(checked, 0);
}

TEST(Training, DenseGradientsMatchCentralFiniteDifferences) { expect_gradients_match_finite_differences(kDense); }
TEST(Training, GroupedConvAndPoolingGradientsMatchCentralFiniteDifferences) {
  expect_gradients_match_finite_differences(kConv);
}
TEST(Training, ABranchThatJoinsSumsTheGradientsOfItsReaders) {
  expect_gradients_match_finite_differences(kResidualMse);
}
TEST(Training, AConcatHandsEachInputItsChannelsOfTheGradient) { expect_gradients_match_finite_differences(kTowers); }
TEST(Training, LstmGradientsThroughTimeMatchCentralFiniteDifferences) { expect_gradients_match_finite_differences(kLstm); }
TEST(Training, GruGradientsThroughTimeMatchCentralFiniteDifferences) { expect_gradients_match_finite_differences(kGru); }

using Trained = testing_support::TrainedRun;
using testing_support::expect_same_training;

Trained train(const char* json, const std::string& strategy, int devices, int microbatches,
              PipelineSchedule schedule, int steps, Optimizer optimizer, bool recompute = false) {
  const auto forward = graph_from_json(json);
  const auto training = std::make_shared<const Graph>(training_graph(*forward, optimizer));
  PartitionOptions options{devices, microbatches, nullptr};
  options.schedule = schedule;
  options.recompute = recompute;
  const Plan plan = make_plan(*make_partitioner(strategy), training, options);
  check(plan);
  CpuExecutor executor;
  RunOptions run;
  run.seed = kSeed;
  const RunResult result = run_training_steps(executor, plan, run, steps);
  return {result.losses, result.output};
}

Optimizer momentum_sgd() {
  Optimizer optimizer;
  optimizer.learning_rate = 0.05;
  optimizer.momentum = 0.9;
  return optimizer;
}


TEST(Training, EveryTrainingStrategyMatchesSingleStepForStep) {
  for (const char* json : {kDense, kConv, kResidualMse, kTowers, kLstm, kGru}) {
    const Trained single = train(json, "single", 1, 1, PipelineSchedule::kGpipe, 3, momentum_sgd());
    ASSERT_EQ(single.losses.size(), 3u);
    ASSERT_FALSE(single.output.data.empty());
    for (int devices : {2, 3}) {
      const std::string n = " N=" + std::to_string(devices);
      expect_same_training(train(json, "horizontal", devices, 1, PipelineSchedule::kGpipe, 3, momentum_sgd()), single,
                           "horizontal" + n);
      expect_same_training(train(json, "data", devices, 1, PipelineSchedule::kGpipe, 3, momentum_sgd()), single,
                           "data" + n);
      for (const PipelineSchedule schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kOneForwardOneBackward}) {
        const std::string what = "pipeline " + std::string(to_string(schedule)) + n;
        expect_same_training(train(json, "pipeline", devices, 3, schedule, 3, momentum_sgd()), single, what);
      }
    }
  }
}

TEST(Training, RecomputingTheForwardForTheBackwardTrainsStepForStepWithSingle) {
  // Re-run forward ops write what the stashed ones wrote, so every strategy
  // with --recompute trains as `single` does without.
  for (const char* json : {kDense, kConv, kResidualMse, kTowers, kLstm, kGru}) {
    const Trained single = train(json, "single", 1, 1, PipelineSchedule::kGpipe, 3, momentum_sgd());
    expect_same_training(train(json, "single", 1, 1, PipelineSchedule::kGpipe, 3, momentum_sgd(), true), single,
                         "single recomputing");
    expect_same_training(train(json, "data", 2, 1, PipelineSchedule::kGpipe, 3, momentum_sgd(), true), single,
                         "data recomputing");
    for (int devices : {2, 3}) {
      for (const PipelineSchedule schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kOneForwardOneBackward}) {
        const std::string what = "pipeline " + std::string(to_string(schedule)) + " recomputing N=" +
                                 std::to_string(devices);
        expect_same_training(train(json, "pipeline", devices, 3, schedule, 3, momentum_sgd(), true), single, what);
      }
    }
  }
  const Trained single = train(kDense, "single", 1, 1, PipelineSchedule::kGpipe, 3, momentum_sgd());
  for (const char* strategy : {"vertical", "tensor"}) {
    expect_same_training(train(kDense, strategy, 2, 1, PipelineSchedule::kGpipe, 3, momentum_sgd(), true), single,
                         std::string(strategy) + " recomputing");
  }
}

Optimizer adam(double lr) {
  Optimizer optimizer;
  optimizer.kind = OptimizerKind::kAdam;
  optimizer.learning_rate = lr;
  optimizer.momentum = 0;
  return optimizer;
}

TEST(Training, BranchesTrainsForksStepForStepWithSingle) {
  // Each branch's backward runs on its branch's device, and the gradient of
  // the fork's input (read by both branches) adds up across devices.
  const char* two_paths = R"({"name": "two-paths", "batch": 4, "input": [5], "layers": [
      {"name": "a", "type": "dense", "units": 6, "activation": "relu"},
      {"name": "left", "type": "dense", "units": 6, "activation": "tanh", "inputs": "a"},
      {"name": "right", "type": "dense", "units": 6, "activation": "sigmoid", "inputs": "a"},
      {"name": "j", "type": "add", "inputs": ["left", "right"]},
      {"name": "o", "type": "dense", "units": 3}]})";
  for (const char* json : {two_paths, kTowers}) {
    const Trained single = train(json, "single", 1, 1, PipelineSchedule::kGpipe, 3, momentum_sgd());
    expect_same_training(train(json, "branches", 2, 1, PipelineSchedule::kGpipe, 3, momentum_sgd()), single,
                         std::string("branches on ") + json);
  }
}

TEST(Training, AdamsFirstStepMovesEveryWeightByTheLearningRateAgainstItsGradientsSign) {
  // After one step m̂ = g and v̂ = g², so w moves by lr·g/(|g| + ε): lr·sign(g)
  // wherever |g| >> ε. The gradient is the one the finite-difference test checks.
  const auto forward = graph_from_json(kDense);
  const auto training = std::make_shared<const Graph>(training_graph(*forward, adam(0.01)));
  const Plan plan = make_partitioner("single")->partition(training, {1, 1, nullptr});
  SerialStep step(plan);
  int checked = 0;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kUpdate) continue;
    const Value& params = plan.value(op.params);
    const ConstChannelBlock gradient = step.gradient(op);
    const WeightSlice before = materialise_weights(*plan.graph, params.node, Slice{{0, 1}, params.channels, params.reduce, params.features},
                                                   kSeed, step.serial);
    const auto after = step.weights.get(params);
    int64_t i = 0;
    for (size_t t = 0; t < before.tensors.size(); ++t) {
      for (size_t e = 0; e < before.tensors[t].size(); ++e, ++i) {
        const float g = gradient.data[i];
        if (std::abs(g) < 1e-4f) continue;  // where ε = 1e-8 is negligible
        EXPECT_NEAR(after->tensors[t][e] - before.tensors[t][e], -0.01f * (g > 0 ? 1.0f : -1.0f), 1e-5f);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 50);
}

TEST(Training, AdamTrainsEveryStrategyStepForStepWithSingle) {
  for (const char* json : {kDense, kLstm}) {
    const Trained single = train(json, "single", 1, 1, PipelineSchedule::kGpipe, 3, adam(0.01));
    for (const char* strategy : {"data", "horizontal", "pipeline"}) {
      expect_same_training(train(json, strategy, 2, std::string(strategy) == "pipeline" ? 3 : 1,
                                 PipelineSchedule::kOneForwardOneBackward, 3, adam(0.01)),
                           single, std::string("adam ") + strategy);
    }
  }
  const Trained falling = train(kDense, "single", 1, 1, PipelineSchedule::kGpipe, 50, adam(0.01));
  EXPECT_LT(falling.losses.back(), 0.5 * falling.losses.front());
}

TEST(Training, TheLossFallsOverFiftyStepsOfAFixedBatch) {
  const Trained run = train(kDense, "pipeline", 2, 2, PipelineSchedule::kOneForwardOneBackward, 50, momentum_sgd());
  ASSERT_EQ(run.losses.size(), 50u);
  EXPECT_LT(run.losses.back(), 0.5 * run.losses.front());
  EXPECT_LT(run.losses[25], run.losses.front());
}

TEST(Training, TheSlicedStrategiesTrainStepForStepWithSingle) {
  // kConv's grouped layer (2 groups of 3 filters) splits along whole groups
  // over 2 devices (its input gradient stays on each device) and into parts
  // of groups over 3 (partial sums over every channel, all-reduced); its
  // ungrouped layer leaves partial sums either way.
  for (const char* json : {kDense, kResidualMse, kTowers, kConv}) {
    const Trained single = train(json, "single", 1, 1, PipelineSchedule::kGpipe, 3, momentum_sgd());
    for (int devices : {2, 3}) {
      for (const char* strategy : {"vertical", "tensor"}) {
        if (devices > make_partitioner(strategy)->max_devices(*graph_from_json(json))) continue;
        expect_same_training(train(json, strategy, devices, 1, PipelineSchedule::kGpipe, 3, momentum_sgd()), single,
                             std::string(strategy) + " N=" + std::to_string(devices));
      }
    }
  }
}

/// Bytes that op kind `kind` of layer `layer` moves between devices in the vertical plan over `devices`.
int64_t moved_by(const std::shared_ptr<const Graph>& training, int devices, OpKind kind, const std::string& layer) {
  const Plan plan = make_partitioner("vertical")->partition(training, {devices, 1, nullptr});
  int64_t bytes = 0;
  for (const PlanOp& op : plan.ops) {
    const OpNode& node = training->node(op.node);
    if (node.kind == kind && node.layer_name == layer && op.role != OpRole::kCompute) bytes += op.bytes_moved;
  }
  return bytes;
}

// A grouped convolution after another (the first layer's input needs no gradient).
const char* kGroupedSecond = R"({"name": "grouped", "batch": 3, "input": [2, 7, 7], "layers": [
    {"name": "c1", "type": "conv2d", "filters": 4, "kernel": 3, "padding": 1, "activation": "relu"},
    {"name": "c2", "type": "conv2d", "filters": 6, "kernel": 3, "groups": 2, "activation": "tanh"},
    {"type": "flatten"}, {"type": "dense", "units": 4}]})";

TEST(Training, AConvolutionSplitAlongWholeGroupsMovesNoInputGradient) {
  const auto training = std::make_shared<const Graph>(training_graph(*graph_from_json(kGroupedSecond), plain_sgd(0.1)));
  // 2 devices: c2's two groups, one a device; each device's dX is its group's channels.
  EXPECT_EQ(moved_by(training, 2, OpKind::kConv2dGradInput, "c2"), 0);
  // 3 devices: parts of groups, partial sums of dX [4, 7, 7] over 3 samples, all-reduced: 2(N-1)·B.
  EXPECT_EQ(moved_by(training, 3, OpKind::kConv2dGradInput, "c2"), 2 * 2 * (3 * 4 * 7 * 7 * 4));
  const Trained single = train(kGroupedSecond, "single", 1, 1, PipelineSchedule::kGpipe, 3, momentum_sgd());
  for (int devices : {2, 3, 4}) {
    expect_same_training(train(kGroupedSecond, "vertical", devices, 1, PipelineSchedule::kGpipe, 3, momentum_sgd()),
                         single, "vertical N=" + std::to_string(devices));
  }
}

TEST(Training, RecurrentCellsSplitByHiddenUnitsTrainStepForStepWithSingle) {
  // Each device differentiates its units of every cell; dx and dh_{t-1} are
  // partial sums over them, all-reduced each step. kLstm: 2 layers of 4 units
  // over 4 steps, batch 3: dh_{t-1} [3 × 4] at t = 1..3 of both layers (6
  // all-reduces) and dx of the second layer at every step (4; the first
  // layer's x is the network input), 48 bytes each, 2(N-1)·48 bytes a ring.
  // kLstm and kGru with a head of 4 units, so that every layer splits 4 ways.
  const char* lstm_json = R"({"name": "lstm", "batch": 3, "input": [4, 5], "layers": [
      {"name": "l", "type": "lstm", "hidden": 4, "layers": 2, "return_sequences": false},
      {"type": "dense", "units": 4}, {"type": "softmax"}]})";
  const char* gru_json = R"({"name": "gru", "batch": 3, "input": [4, 5], "layers": [
      {"name": "g", "type": "gru", "hidden": 4, "layers": 2, "return_sequences": true},
      {"type": "flatten"}, {"type": "dense", "units": 4}]})";
  for (const char* json : {lstm_json, gru_json}) {
    const auto training = std::make_shared<const Graph>(training_graph(*graph_from_json(json), momentum_sgd()));
    const Trained single = train(json, "single", 1, 1, PipelineSchedule::kGpipe, 3, momentum_sgd());
    for (int devices : {2, 3, 4}) {
      const std::string what = std::string(json == lstm_json ? "lstm" : "gru") + " vertical N=" + std::to_string(devices);
      EXPECT_TRUE(make_partitioner("vertical")->applies(*training, devices)) << what;
      expect_same_training(train(json, "vertical", devices, 1, PipelineSchedule::kGpipe, 3, momentum_sgd()), single,
                           what);
    }
  }
  const auto lstm = std::make_shared<const Graph>(training_graph(*graph_from_json(lstm_json), momentum_sgd()));
  for (int devices : {2, 3, 4}) {
    EXPECT_EQ(moved_by(lstm, devices, OpKind::kCellGradHidden, "l"), 6 * 2 * (devices - 1) * 48) << devices;
    EXPECT_EQ(moved_by(lstm, devices, OpKind::kCellGradInput, "l"), 4 * 2 * (devices - 1) * 48) << devices;
  }
}

TEST(Training, AConvolutionWhoseSlicesAreWholeGroupsOnlySomewhereTrainsWithOneAllReduce) {
  // c2's 4 filters in 2 groups over 3 devices: [0, 2) is group 0, [2, 3) and
  // [3, 4) are halves of group 1. The whole group's input gradient is widened
  // to a partial sum of every channel (zero outside group 0's), so one
  // all-reduce of dX [4, 5, 5] x 2 samples sums all three: 2(N-1)·B.
  const char* json = R"({"name": "mixed", "batch": 2, "input": [2, 5, 5], "layers": [
      {"type": "conv2d", "filters": 4, "kernel": 1, "activation": "relu"}, {"name": "c2", "type": "conv2d",
      "filters": 4, "kernel": 3, "padding": 1, "groups": 2}, {"type": "flatten"}, {"type": "dense", "units": 3}]})";
  const auto training = std::make_shared<const Graph>(training_graph(*graph_from_json(json), plain_sgd(0.1)));
  EXPECT_TRUE(make_partitioner("vertical")->applies(*training, 3));
  EXPECT_EQ(moved_by(training, 3, OpKind::kConv2dGradInput, "c2"), 2 * 2 * (2 * 4 * 5 * 5 * 4));
  const Trained single = train(json, "single", 1, 1, PipelineSchedule::kGpipe, 3, momentum_sgd());
  expect_same_training(train(json, "vertical", 3, 1, PipelineSchedule::kGpipe, 3, momentum_sgd()), single,
                       "vertical N=3");
}

}  // namespace
}  // namespace training_test
}  // namespace splitscope
