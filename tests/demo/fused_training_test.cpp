// The fused cpu training loop (exec/cpu/fused_rnn_training.hpp), the cpu
// backend's fused baseline of `demo rnn --train`, trains step for step as the
// cell-by-cell `single` plan does: every step's loss and the last step's
// output within 1e-4 relative, with momentum SGD and with Adam.

#include <gtest/gtest.h>

#include "../exec/training_support.hpp"
#include "exec/cpu/cpu_executor.hpp"
#include "exec/cpu/fused_rnn_training.hpp"
#include "exec/training_run.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/training.hpp"
#include "partitioners/partitioner.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace fused_training_test {
namespace {

constexpr int kSteps = 4;

std::shared_ptr<const Graph> training(const std::string& text, const Optimizer& optimizer) {
  const Graph forward = lower(parse_model_text(text, "net.json"));
  return std::make_shared<const Graph>(training_graph(forward, optimizer));
}

testing_support::TrainedRun cell_by_cell(const std::shared_ptr<const Graph>& graph, uint64_t seed) {
  const Plan plan = make_partitioner("single")->partition(graph, PartitionOptions{});
  CpuExecutor executor;
  RunOptions options;
  options.seed = seed;
  const RunResult result = run_training_steps(executor, plan, options, kSteps);
  return {result.losses, result.output};
}

testing_support::TrainedRun fused(const std::shared_ptr<const Graph>& graph, uint64_t seed, int threads) {
  RunOptions options;
  options.seed = seed;
  options.repeats = kSteps;
  options.intra_op_threads = threads;
  const FusedRnnTrainingResult result = run_fused_rnn_training(*graph, options);
  EXPECT_EQ(result.times_ms.size(), static_cast<size_t>(kSteps));
  for (double ms : result.times_ms) EXPECT_GT(ms, 0.0);
  return {result.losses, result.output};
}

Optimizer momentum() {
  Optimizer optimizer;
  optimizer.learning_rate = 0.5;  // large, so that a wrong gradient shows in the later steps' losses
  optimizer.momentum = 0.9;
  return optimizer;
}

Optimizer adam() {
  Optimizer optimizer;
  optimizer.kind = OptimizerKind::kAdam;
  optimizer.learning_rate = 0.05;
  optimizer.momentum = 0;
  return optimizer;
}

class FusedTraining : public ::testing::TestWithParam<std::string> {};

TEST_P(FusedTraining, TrainsStepForStepWithTheCellByCellPlan) {
  // The demo's shape (one stacked layer, the last step's h, mean squared
  // error), and every step returned with input features 6 != hidden 9 (the
  // first layer's Wx differs from the others'). Threads 1 and 3: the products
  // split over the pool or not.
  const std::string cell = GetParam();
  const std::vector<std::string> networks{
      R"({"name": "demo", "batch": 5, "input": [7, 9], "layers": [{"type": ")" + cell +
          R"(", "hidden": 9, "layers": 3, "return_sequences": false}]})",
      R"({"name": "seq", "batch": 3, "input": [5, 6], "layers": [{"type": ")" + cell +
          R"(", "hidden": 9, "layers": 2, "return_sequences": true}]})"};
  for (const std::string& text : networks) {
    for (const Optimizer& optimizer : {momentum(), adam()}) {
      const auto graph = training(text, optimizer);
      const testing_support::TrainedRun want = cell_by_cell(graph, 13);
      ASSERT_EQ(want.losses.size(), static_cast<size_t>(kSteps));
      // Training moved the weights: a step's loss is not the first's.
      EXPECT_NE(want.losses.front(), want.losses.back());
      for (int threads : {1, 3}) {
        testing_support::expect_same_training(fused(graph, 13, threads), want,
                             graph->model().name + " " + std::string(optimizer.name()) + " threads " +
                                 std::to_string(threads));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cells, FusedTraining, ::testing::Values("lstm", "gru"));

TEST(FusedTraining, RefusesWhatItCannotTrain) {
  RunOptions options;
  const auto forward = std::make_shared<const Graph>(lower(parse_model_text(
      R"({"batch": 2, "input": [3, 4], "layers": [{"type": "lstm", "hidden": 4}]})", "lstm.json")));
  EXPECT_THROW(run_fused_rnn_training(*forward, options), InputError);  // not a training graph
  const auto headed = training(R"({"batch": 2, "input": [3, 4], "layers": [{"type": "lstm", "hidden": 4, "return_sequences": false},
      {"type": "dense", "units": 2}]})", momentum());
  EXPECT_THROW(run_fused_rnn_training(*headed, options), InputError);  // more than the stack
}

}  // namespace
}  // namespace fused_training_test
}  // namespace splitscope::testing
