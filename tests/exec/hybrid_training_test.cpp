// `hybrid` (--degrees T,P,D, partitioners/hybrid.hpp) trains on the cpu
// backend step for step as `single` does, and its forward output is single's:
// pipeline stages of tensor groups, run as data-parallel replicas.
#include <gtest/gtest.h>

#include <string>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/training_run.hpp"
#include "ir/training.hpp"
#include "naive_reference.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "training_support.hpp"

namespace splitscope {
namespace hybrid_training_test {
namespace {

using testing_support::expect_same_training;
using testing_support::TrainedRun;

constexpr uint64_t kHybridSeed = 11;

// Uneven everywhere: 7 rows, so replicas and micro-batches get unequal shares.
const char* kUnevenDense = R"({"name": "uneven", "batch": 7, "input": [6], "layers": [
    {"type": "dense", "units": 8, "activation": "tanh"},
    {"type": "dense", "units": 6, "activation": "relu"},
    {"type": "dense", "units": 5, "activation": "relu"},
    {"type": "dense", "units": 4}, {"type": "softmax"}]})";

struct HybridCase {
  ParallelDegrees degrees;
  int microbatches = 1;
  PipelineSchedule schedule = PipelineSchedule::kGpipe;
};

std::string describe(const HybridCase& c) {
  return "t" + std::to_string(c.degrees.tensor) + " p" + std::to_string(c.degrees.pipeline) + " d" +
         std::to_string(c.degrees.data) + " m" + std::to_string(c.microbatches) +
         (c.schedule == PipelineSchedule::kGpipe ? " gpipe" : " 1f1b");
}

std::shared_ptr<const Graph> training_of(const std::shared_ptr<const Graph>& forward) {
  Optimizer optimizer;
  optimizer.learning_rate = 0.05;
  optimizer.momentum = 0.9;
  return std::make_shared<const Graph>(training_graph(*forward, optimizer));
}

TrainedRun train(const std::shared_ptr<const Graph>& training, const std::string& strategy, int devices,
                 const HybridCase& c = {}) {
  PartitionOptions options;
  options.devices = devices;
  options.microbatches = c.microbatches;
  options.schedule = c.schedule;
  if (strategy == "hybrid") options.degrees = c.degrees;
  const Plan plan = make_partitioner(strategy)->partition(training, options);
  check(plan);
  CpuExecutor executor;
  RunOptions run;
  run.seed = kHybridSeed;
  const RunResult result = run_training_steps(executor, plan, run, 3);
  return {result.losses, result.output};
}

int devices_of(const ParallelDegrees& degrees) { return degrees.tensor * degrees.pipeline * degrees.data; }

TEST(HybridTraining, MlpSmallTrainsStepForStepAsSingle) {
  const auto training = training_of(testing_support::zoo_graph("mlp-small"));
  const TrainedRun single = train(training, "single", 1);
  ASSERT_EQ(single.losses.size(), 3u);
  for (const PipelineSchedule schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kOneForwardOneBackward}) {
    for (const HybridCase& c : std::vector<HybridCase>{{{2, 2, 1}, 2, schedule},
                                                       {{1, 2, 2}, 2, schedule},
                                                       {{2, 1, 2}, 1, schedule},
                                                       {{2, 2, 2}, 2, schedule},
                                                       {{2, 2, 2}, 4, schedule},
                                                       {{2, 4, 1}, 4, schedule},
                                                       {{4, 2, 1}, 3, schedule}}) {
      expect_same_training(train(training, "hybrid", devices_of(c.degrees), c), single, describe(c));
    }
  }
}

TEST(HybridTraining, UnevenSharesTrainStepForStepAsSingle) {
  const auto training = training_of(testing_support::graph_from_json(kUnevenDense));
  const TrainedRun single = train(training, "single", 1);
  for (const HybridCase& c : std::vector<HybridCase>{{{2, 2, 3}, 2, PipelineSchedule::kOneForwardOneBackward},
                                                     {{3, 2, 2}, 3, PipelineSchedule::kGpipe},
                                                     {{2, 3, 1}, 3, PipelineSchedule::kOneForwardOneBackward}}) {
    expect_same_training(train(training, "hybrid", devices_of(c.degrees), c), single, describe(c));
  }
}

// The zoo's small networks of every kind of layer the splits take: convolutions
// (their channel split), residual joins, towers, recurrent cells.
TEST(HybridTraining, ZooNetworksTrainStepForStepAsSingle) {
  for (const char* network : {"cnn-small", "residual-small", "towers-small", "lstm-small", "gru-small"}) {
    const auto training = training_of(testing_support::zoo_graph(network));
    const TrainedRun single = train(training, "single", 1);
    for (const HybridCase& c : std::vector<HybridCase>{{{2, 2, 1}, 1, PipelineSchedule::kGpipe},
                                                       {{2, 2, 1}, 2, PipelineSchedule::kOneForwardOneBackward},
                                                       {{1, 2, 2}, 1, PipelineSchedule::kGpipe}}) {
      if (c.microbatches > training->batch() / c.degrees.data) continue;
      expect_same_training(train(training, "hybrid", devices_of(c.degrees), c), single,
                           std::string(network) + " " + describe(c));
    }
  }
}

TEST(HybridTraining, ForwardOutputIsSingles) {
  const auto forward = testing_support::zoo_graph("mlp-small");
  CpuExecutor executor;
  RunOptions run;
  run.seed = kHybridSeed;
  PartitionOptions alone;
  const HostTensor expected = executor.run(make_partitioner("single")->partition(forward, alone), run).output;
  for (const HybridCase& c : std::vector<HybridCase>{{{2, 2, 2}, 2}, {{4, 1, 2}, 1}, {{1, 4, 2}, 4}, {{2, 2, 1}, 1}}) {
    PartitionOptions options;
    options.devices = devices_of(c.degrees);
    options.microbatches = c.microbatches;
    options.degrees = c.degrees;
    const Plan plan = make_partitioner("hybrid")->partition(forward, options);
    check(plan);
    const HostTensor output = executor.run(plan, run).output;
    ASSERT_EQ(output.data.size(), expected.data.size()) << describe(c);
    for (size_t i = 0; i < output.data.size(); ++i) {
      EXPECT_NEAR(output.data[i], expected.data[i], 1e-4 * std::max(1.0f, std::abs(expected.data[i])))
          << describe(c) << " output " << i;
    }
  }
}

}  // namespace
}  // namespace hybrid_training_test
}  // namespace splitscope
