// `tensor` on transformers (partitioners/head_split.hpp) on the cpu backend:
// the forward output, the losses and outputs of three training steps, and
// every weight's gradient after one step (the vocabulary-split lm_head's
// included) equal `single`'s, for t = 2 and 4; the same with sequence
// parallelism, and for `hybrid`'s tensor groups (with and without it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/cpu/kernels/parallel_for.hpp"
#include "exec/cpu/plan_tasks.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "exec/output_compare.hpp"
#include "exec/training_run.hpp"
#include "ir/params.hpp"
#include "ir/training.hpp"
#include "../common/gpt_block_network.hpp"
#include "naive_reference.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "training_support.hpp"

namespace splitscope {
namespace tensor_heads_test {
namespace {

constexpr uint64_t kHeadsSeed = 5;

// gpt-small's block with 4 causal heads (gpt-small itself has 2), so that t = 4 splits it too.
const std::string kFourHeadGpt = test_networks::gpt_block_network("gpt-4heads", 3, 6, 11, true);

std::shared_ptr<const Graph> training_of(const std::shared_ptr<const Graph>& forward) {
  Optimizer optimizer;
  optimizer.learning_rate = 0.05;
  optimizer.momentum = 0.9;
  return std::make_shared<const Graph>(training_graph(*forward, optimizer));
}

Plan partition(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices) {
  PartitionOptions options;
  options.devices = devices;
  Plan plan = make_partitioner(strategy)->partition(graph, options);
  check(plan);
  return plan;
}

/// A split of one of the cases below: tensor (with or without sequence
/// parallelism) or hybrid's degrees.
struct Split {
  std::string strategy;
  int devices = 1;
  bool sequence_parallel = false;
  ParallelDegrees degrees;
  int microbatches = 1;

  std::string label() const {
    return strategy + " over " + std::to_string(devices) + (sequence_parallel ? " sequence parallel" : "") +
           (strategy == "hybrid" ? " t" + std::to_string(degrees.tensor) + " p" + std::to_string(degrees.pipeline) +
                                       " d" + std::to_string(degrees.data) + " m" + std::to_string(microbatches)
                                 : "");
  }
};

Plan partition(const std::shared_ptr<const Graph>& graph, const Split& split) {
  PartitionOptions options;
  options.devices = split.devices;
  options.sequence_parallel = split.sequence_parallel;
  options.microbatches = split.microbatches;
  if (split.strategy == "hybrid") options.degrees = split.degrees;
  Plan plan = make_plan(*make_partitioner(split.strategy), graph, options);
  check(plan);
  return plan;
}

std::vector<std::pair<std::shared_ptr<const Graph>, int>> cases() {
  const auto gpt = testing_support::zoo_graph("gpt-small");
  const auto bert = testing_support::zoo_graph("bert-small");
  const auto four = testing_support::graph_from_json(kFourHeadGpt);
  return {{gpt, 2}, {bert, 2}, {bert, 4}, {four, 2}, {four, 4}};
}

/// Sequence parallelism over t = 2 and 4 (t divides the 8 positions of
/// gpt-small and bert-small, and 2 the 6 of gpt-4heads); hybrid's tensor
/// groups across pipeline stages (the stage boundary falls where the cost
/// balance puts it, inside a block or not) and data replicas.
std::vector<std::pair<std::shared_ptr<const Graph>, Split>> split_cases() {
  const auto gpt = testing_support::zoo_graph("gpt-small");
  const auto bert = testing_support::zoo_graph("bert-small");
  const auto four = testing_support::graph_from_json(kFourHeadGpt);
  return {
      {gpt, {"tensor", 2, true, {}, 1}},
      {bert, {"tensor", 2, true, {}, 1}},
      {bert, {"tensor", 4, true, {}, 1}},
      {four, {"tensor", 2, true, {}, 1}},
      {gpt, {"hybrid", 4, false, {2, 2, 1}, 2}},
      {bert, {"hybrid", 4, false, {2, 1, 2}, 1}},
      {four, {"hybrid", 8, false, {4, 2, 1}, 3}},
      {gpt, {"hybrid", 4, true, {2, 2, 1}, 2}},
      {bert, {"hybrid", 8, true, {2, 2, 2}, 2}},
  };
}

TEST(TensorHeads, SplitsTheOutputLayerAndTheLossByVocabulary) {
  // What the tests below compare is the vocabulary-parallel head: lm_head
  // (bert's mlm_head) and the loss run one shard on each device, uneven where
  // t does not divide the vocabulary (gpt-4heads: 11 over 2 and 4).
  for (const auto& [forward, devices] : cases()) {
    const Plan plan = partition(training_of(forward), "tensor", devices);
    const NodeId head = plan.graph->output().node;
    std::vector<int64_t> shard_of_device(static_cast<size_t>(devices), 0);
    int losses = 0;
    for (const PlanOp& op : plan.ops) {
      if (op.role != OpRole::kCompute) continue;
      const OpNode& node = plan.graph->node(op.node);
      if (op.node == head) shard_of_device.at(static_cast<size_t>(op.device)) += op.slice.features.range.size();
      if (node.kind == OpKind::kLoss) {
        ++losses;
        EXPECT_FALSE(op.slice.features.whole()) << forward->model().name;
      }
    }
    const int64_t vocab = plan.graph->node(head).output_shapes.at(0).at(1);
    int64_t total = 0;
    for (int64_t shard : shard_of_device) {
      EXPECT_GE(shard, vocab / devices) << forward->model().name << " t=" << devices;
      EXPECT_LE(shard, vocab / devices + 1) << forward->model().name << " t=" << devices;
      total += shard;
    }
    EXPECT_EQ(total, vocab) << forward->model().name << " t=" << devices;
    EXPECT_EQ(losses, devices) << forward->model().name << " t=" << devices;
  }
}

TEST(TensorHeads, ForwardEqualsSingle) {
  for (const auto& [graph, devices] : cases()) {
    RunOptions run;
    run.seed = kHeadsSeed;
    const HostTensor single = CpuExecutor().run(partition(graph, "single", 1), run).output;
    const HostTensor split = CpuExecutor().run(partition(graph, "tensor", devices), run).output;
    EXPECT_LE(compare_outputs(split, single).max_relative_error, 1e-5) << graph->model().name << " t=" << devices;
  }
}

TEST(TensorHeads, TrainsStepForStepWithSingle) {
  for (const auto& [forward, devices] : cases()) {
    const auto training = training_of(forward);
    const auto train = [&](const std::string& strategy, int count) {
      CpuExecutor executor;
      RunOptions run;
      run.seed = kHeadsSeed;
      const RunResult result = run_training_steps(executor, partition(training, strategy, count), run, 3);
      return testing_support::TrainedRun{result.losses, result.output};
    };
    testing_support::expect_same_training(train("tensor", devices), train("single", 1),
                                          forward->model().name + " t=" + std::to_string(devices));
  }
}

/// The gradient of each weight after one step, in each weight set's own
/// layout (params.hpp), by (param_key, tensor): a feature-cut gradient
/// written back where its elements lie in the whole tensor; replicas (the
/// layer norms every device runs) each checked against the others.
std::map<std::pair<int, int>, std::vector<float>> gradients_after_one_step(const Plan& plan) {
  SerialFor serial;
  ValueBuffers buffers(plan);
  WeightStore weights(*plan.graph, kHeadsSeed, serial);
  fill_network_inputs(plan, kHeadsSeed, buffers);
  PlanTasks tasks = build_plan_tasks(plan, buffers, weights);
  TaskContext context{serial};
  for (int t = 0; t < tasks.graph.size(); ++t) tasks.graph.task(t).work(context);
  std::map<std::pair<int, int>, std::vector<float>> whole;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kUpdate) continue;
    const Value& params = plan.value(op.params);
    const OpNode& node = plan.graph->node(params.node);
    const std::vector<ParamTensor> tensors = param_tensors(*plan.graph, params.node);
    const ConstChannelBlock block = std::as_const(buffers).block(op.inputs.at(0));
    const FeatureCut& cut = params.features;
    int64_t at = 0;
    for (size_t t = 0; t < tensors.size(); ++t) {
      const int64_t count = element_count(tensors[t].shape);
      std::vector<float>& out = whole[{node.param_key, static_cast<int>(t)}];
      if (out.empty()) out.assign(static_cast<size_t>(count), std::nanf(""));
      if (cut.whole()) {
        for (int64_t e = 0; e < count; ++e) {
          const float value = block.data[at + e];
          float& slot = out[static_cast<size_t>(e)];
          if (!std::isnan(slot)) {
            EXPECT_EQ(slot, value) << node.name << ": replicas disagree";
          }
          slot = value;
        }
        at += count;
        continue;
      }
      // Linear: W [in, units], b [units]; a row cut holds W's rows (and b
      // where it starts at 0), a column cut its columns in each block.
      const bool weight = t == static_cast<size_t>(kWeight);
      if (!weight && cut.rows && cut.range.begin != 0) continue;
      const int64_t units = tensors[t].shape.back();
      const int64_t in = weight ? tensors[t].shape.at(0) : 1;
      const Range rows = weight && cut.rows ? cut.range : Range{0, in};
      const int64_t width = cut.rows ? units : cut.count(units);
      const int64_t block_width = units / cut.blocks;
      for (int64_t r = 0; r < rows.size(); ++r) {
        for (int64_t c = 0; c < width; ++c) {
          const int64_t column =
              cut.rows ? c : (c / cut.range.size()) * block_width + cut.range.begin + c % cut.range.size();
          out[static_cast<size_t>((rows.begin + r) * units + column)] = block.data[at + r * width + c];
        }
      }
      at += rows.size() * width;
    }
    EXPECT_EQ(at, block.floats()) << node.name;
  }
  return whole;
}

TEST(TensorHeads, GradientsAfterOneStepEqualSingle) {
  for (const auto& [forward, devices] : cases()) {
    const auto training = training_of(forward);
    const auto single = gradients_after_one_step(partition(training, "single", 1));
    const auto split = gradients_after_one_step(partition(training, "tensor", devices));
    ASSERT_EQ(split.size(), single.size());
    for (const auto& [key, expected] : single) {
      const std::vector<float>& got = split.at(key);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t e = 0; e < got.size(); ++e) {
        EXPECT_NEAR(got[e], expected[e], 1e-5 * std::max(1.0f, std::abs(expected[e])))
            << forward->model().name << " t=" << devices << " weight set " << key.first << " tensor " << key.second
            << " element " << e;
      }
    }
  }
}

TEST(TensorHeads, SequenceParallelAndHybridForwardEqualsSingle) {
  for (const auto& [graph, split] : split_cases()) {
    RunOptions run;
    run.seed = kHeadsSeed;
    const HostTensor single = CpuExecutor().run(partition(graph, "single", 1), run).output;
    const HostTensor output = CpuExecutor().run(partition(graph, split), run).output;
    EXPECT_LE(compare_outputs(output, single).max_relative_error, 1e-5) << graph->model().name << " " << split.label();
  }
}

TEST(TensorHeads, SequenceParallelAndHybridTrainStepForStepWithSingle) {
  for (const auto& [forward, split] : split_cases()) {
    const auto training = training_of(forward);
    CpuExecutor executor;
    RunOptions run;
    run.seed = kHeadsSeed;
    const RunResult single = run_training_steps(executor, partition(training, "single", 1), run, 3);
    const RunResult result = run_training_steps(executor, partition(training, split), run, 3);
    testing_support::expect_same_training({result.losses, result.output}, {single.losses, single.output},
                                          forward->model().name + " " + split.label());
  }
}

TEST(TensorHeads, SequenceParallelAndHybridGradientsAfterOneStepEqualSingle) {
  for (const auto& [forward, split] : split_cases()) {
    const auto training = training_of(forward);
    const auto single = gradients_after_one_step(partition(training, "single", 1));
    const auto got_all = gradients_after_one_step(partition(training, split));
    ASSERT_EQ(got_all.size(), single.size()) << split.label();
    for (const auto& [key, expected] : single) {
      const std::vector<float>& got = got_all.at(key);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t e = 0; e < got.size(); ++e) {
        EXPECT_NEAR(got[e], expected[e], 1e-5 * std::max(1.0f, std::abs(expected[e])))
            << forward->model().name << " " << split.label() << " weight set " << key.first << " tensor "
            << key.second << " element " << e;
      }
    }
  }
}

}  // namespace
}  // namespace tensor_heads_test
}  // namespace splitscope
