// The transformer's kinds on the cpu backend (embedding, gelu, attention):
// their gradients against central finite differences of the double-precision
// reference (every element of the embedding's tables, through attention,
// layer norm and gelu), their forward pass against the reference, and the
// strategies that apply equal to `single` step for step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/cpu/kernels/parallel_for.hpp"
#include "exec/cpu/plan_tasks.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "exec/output_compare.hpp"
#include "exec/training_run.hpp"
#include "ir/ops/op_def.hpp"
#include "ir/params.hpp"
#include "ir/training.hpp"
#include "naive_reference.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "training_support.hpp"

namespace splitscope {
namespace transformer_training_test {
namespace {

using testing_support::graph_from_json;
using testing_support::naive_output;
using testing_support::WeightNudge;

constexpr uint64_t kTransformerSeed = 7;

// Token ids -> embedding (with positions) -> a linear layer that writes each
// position's Q | K | V -> attention -> layer norm -> gelu -> a classifier: every backward
// kernel of the new kinds lies between the loss and the embedding's tables.
const char* kCausalAttention = R"({"name": "tiny-gpt", "batch": 3, "input": [5], "layers": [
    {"type": "embedding", "vocab": 7, "features": 6, "positions": true},
    {"type": "linear", "units": 12},
    {"type": "attention", "heads": 2, "causal": true},
    {"type": "layer_norm"}, {"type": "gelu"},
    {"type": "flatten"}, {"type": "dense", "units": 3}, {"type": "softmax"}]})";
const char* kBidirectionalAttention = R"({"name": "tiny-bert", "batch": 2, "input": [4], "layers": [
    {"type": "embedding", "vocab": 5, "features": 4},
    {"type": "linear", "units": 12, "bias": false},
    {"type": "attention", "heads": 4}, {"type": "linear", "units": 3},
    {"type": "gelu"}, {"type": "layer_norm"},
    {"type": "flatten"}, {"type": "dense", "units": 2}]})";
// gelu between dense layers (a flat input), its whole slice under a feature split.
const char* kDenseGelu = R"({"name": "dense-gelu", "batch": 4, "input": [6], "layers": [
    {"type": "dense", "units": 8}, {"type": "gelu"},
    {"type": "dense", "units": 3}, {"type": "softmax"}]})";

Optimizer plain_sgd(double lr, double momentum) {
  Optimizer optimizer;
  optimizer.learning_rate = lr;
  optimizer.momentum = momentum;
  return optimizer;
}

/// The loss in double precision, one weight nudged.
double transformer_reference_loss(const Graph& forward, const Graph& training, const WeightNudge& nudge) {
  const std::vector<double> out = naive_output(forward, kTransformerSeed, nudge);
  const OpAttrs& target = training.node(target_node(training)).attrs;
  const int64_t batch = forward.batch();
  const auto width = static_cast<int64_t>(out.size()) / batch;
  double total = 0;
  for (int64_t b = 0; b < batch; ++b) {
    if (target.loss == LossKind::kSoftmaxCrossEntropy) {
      const auto label = static_cast<int64_t>(target_value(kTransformerSeed, b, target.loss, target.classes));
      total -= std::log(out[static_cast<size_t>(b * width + label)]);
      continue;
    }
    for (int64_t e = 0; e < width; ++e) {
      const double error =
          out[static_cast<size_t>(b * width + e)] - target_value(kTransformerSeed, b * width + e, target.loss, 0);
      total += error * error / static_cast<double>(width);
    }
  }
  return total / static_cast<double>(batch);
}

/// Each weight set's summed gradient after one step of `plan`, by param_key.
std::map<int, std::vector<float>> transformer_cpu_gradients(const Plan& plan) {
  SerialFor serial;
  ValueBuffers buffers(plan);
  WeightStore weights(*plan.graph, kTransformerSeed, serial);
  fill_network_inputs(plan, kTransformerSeed, buffers);
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

/// Every element of the weights of `kind`'s layers, and three of each other weight tensor (once per weight set).
void expect_transformer_gradients(const char* json, OpKind kind) {
  const auto forward = graph_from_json(json);
  const auto training = std::make_shared<const Graph>(training_graph(*forward, plain_sgd(0.1, 0)));
  const Plan plan = make_partitioner("single")->partition(training, {1, 1, nullptr});
  check(plan);
  const auto gradients = transformer_cpu_gradients(plan);
  int checked_of_kind = 0;
  std::set<int> seen;
  for (NodeId id = 0; id < forward->num_nodes(); ++id) {
    const OpNode& node = forward->node(id);
    if (node.param_key < 0 || !seen.insert(node.param_key).second) continue;
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
        const double numeric = (transformer_reference_loss(*forward, *training, up) -
                                transformer_reference_loss(*forward, *training, down)) /
                               (2 * kEps);
        const double analytic = gradient.at(static_cast<size_t>(offset + element));
        EXPECT_NEAR(analytic, numeric, 2e-3 * std::max(1.0, std::abs(numeric)) + 2e-5)
            << node.name << " tensor " << t << " element " << element;
        checked_of_kind += node.kind == kind && std::abs(numeric) > 1e-4 ? 1 : 0;
      }
      offset += count;
    }
    EXPECT_EQ(offset, static_cast<int64_t>(gradient.size())) << node.name;
  }
  // Some of the checked elements carry a gradient (a table row no id picks has none).
  EXPECT_GT(checked_of_kind, 10);
}

TEST(TransformerTraining, CausalAttentionAndEmbeddingTablesMatchCentralFiniteDifferences) {
  expect_transformer_gradients(kCausalAttention, OpKind::kEmbedding);
}
TEST(TransformerTraining, BidirectionalAttentionMatchesCentralFiniteDifferences) {
  expect_transformer_gradients(kBidirectionalAttention, OpKind::kEmbedding);
}
TEST(TransformerTraining, GeluBetweenDenseLayersMatchesCentralFiniteDifferences) {
  expect_transformer_gradients(kDenseGelu, OpKind::kDense);
}

TEST(TransformerTraining, ForwardPassEqualsTheReference) {
  for (const char* json : {kCausalAttention, kBidirectionalAttention, kDenseGelu}) {
    const auto graph = graph_from_json(json);
    RunOptions run;
    run.warmup = 0;
    run.repeats = 1;
    run.seed = kTransformerSeed;
    const HostTensor single = CpuExecutor().run(make_partitioner("single")->partition(graph, {1, 1, nullptr}), run).output;
    EXPECT_LE(compare_outputs(single, testing_support::naive_forward(*graph, kTransformerSeed)).max_relative_error, 1e-5)
        << json;
  }
}

TEST(TransformerTraining, GeneratedTokenIdsAreWholeNumbersInTheVocabulary) {
  std::set<float> ids;
  for (int64_t e = 0; e < 1000; ++e) ids.insert(network_input_value(3, e, 0, 7));
  EXPECT_EQ(ids, (std::set<float>{0, 1, 2, 3, 4, 5, 6}));
}

testing_support::TrainedRun train_transformer(const char* json, const std::string& strategy, int devices) {
  const auto forward = graph_from_json(json);
  const auto training = std::make_shared<const Graph>(training_graph(*forward, plain_sgd(0.05, 0.9)));
  const Plan plan = make_plan(*make_partitioner(strategy), training, {devices, 1, nullptr});
  check(plan);
  CpuExecutor executor;
  RunOptions run;
  run.seed = kTransformerSeed;
  const RunResult result = run_training_steps(executor, plan, run, 3);
  return {result.losses, result.output};
}

TEST(TransformerTraining, EveryStrategyThatAppliesTrainsStepForStepWithSingle) {
  // Attention, layer norm and the embedding work sample by sample, so data
  // replicas of part of the batch compute what one device computes; the
  // other strategies keep the new kinds whole on one device.
  for (const char* json : {kCausalAttention, kBidirectionalAttention, kDenseGelu}) {
    const testing_support::TrainedRun single = train_transformer(json, "single", 1);
    int compared = 0;
    for (const char* strategy : {"data", "pipeline", "vertical", "tensor", "horizontal"}) {
      const Graph training = training_graph(*graph_from_json(json), plain_sgd(0.05, 0.9));
      if (!make_partitioner(strategy)->applies(training, 2)) continue;
      testing_support::expect_same_training(train_transformer(json, strategy, 2), single,
                                            std::string(strategy) + " on " + json);
      ++compared;
    }
    EXPECT_GE(compared, 2) << json;
  }
}

}  // namespace
}  // namespace transformer_training_test
}  // namespace splitscope
