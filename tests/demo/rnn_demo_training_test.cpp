// `demo rnn --train` below the command line: training steps of every way,
// held against the fused training step where the backend has one (cpu, sim)
// and against the cell-by-cell single device where it has none (cuda),
// through the simulator and for real on the cpu backend.

#include <gtest/gtest.h>

#include <sstream>

#include "demo/demo_report.hpp"
#include "demo/rnn_demo.hpp"
#include "demo_test_support.hpp"
#include "exec/cpu/cpu_executor.hpp"
#include "sim/costs/machine_cost_function.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope::testing {
namespace rnn_demo_training_test {
namespace {

Optimizer momentum_sgd() {
  Optimizer optimizer;
  optimizer.learning_rate = 0.05;
  optimizer.momentum = 0.9;
  return optimizer;
}

RnnDemoResult run_demo(const RnnDemoSettings& settings, const DemoBackend& backend, int steps) {
  std::ostringstream quiet;
  Progress progress(quiet, false);
  RunOptions options;
  options.repeats = steps;
  options.warmup = 0;
  return run_rnn_demo(settings, backend, options, ReportContext{}, progress);
}

/// A backend's fused baseline with no training step (the cuda one's today).
class ForwardOnlyFused final : public FusedBaseline {
 public:
  std::string_view name() const override { return "forward-only"; }
  FusedTiming run(const std::shared_ptr<const Graph>&, const RunOptions&) override {
    ADD_FAILURE() << "a fused baseline without a training step was run in training";
    return {};
  }
};

TEST(RnnDemoTraining, WithoutAFusedTrainingStepTheWaysAreHeldAgainstTheCellsRun) {
  const Machine machine = free_link_machine(4, 1.0);
  DemoBackend backend;
  backend.name = "sim";
  backend.executor = [machine](int) { return std::make_unique<Simulator>(machine); };
  backend.fused = [](int) -> std::unique_ptr<FusedBaseline> { return std::make_unique<ForwardOnlyFused>(); };
  backend.cost = std::make_shared<MachineCostFunction>(machine);
  RnnDemoSettings settings;
  settings.shape = demo_shape("gru", 4, 16, 6, 4);
  settings.training = momentum_sgd();
  settings.schedule = PipelineSchedule::kOneForwardOneBackward;
  const RnnDemoResult result = run_demo(settings, backend, 1);

  ASSERT_TRUE(result.trains());
  EXPECT_TRUE(result.graph->is_training());
  EXPECT_TRUE(result.fused.timelines.empty());
  EXPECT_TRUE(result.wavefront.busy.empty());
  ASSERT_EQ(result.rows.size(), 3u);
  EXPECT_EQ(result.rows[0].way, DemoWay::kCells);
  EXPECT_EQ(result.rows[0].decider, "baseline");
  EXPECT_FALSE(result.rows[0].verdict.has_value());
  const double cells_ms = result.rows[0].makespan->median_ms;
  for (size_t i = 1; i < result.rows.size(); ++i) {
    const DemoRow& row = result.rows[i];
    ASSERT_TRUE(row.makespan.has_value()) << row.title;
    EXPECT_DOUBLE_EQ(row.speedup, cells_ms / row.makespan->median_ms) << row.title;
    EXPECT_TRUE(row.verdict.has_value()) << row.title;
  }
  EXPECT_EQ(result.rows[1].way, DemoWay::kSplit);
  EXPECT_EQ(result.rows[2].way, DemoWay::kSplitMicrobatched);
  const RunReport* pipeline = find_run(result.comparison, "pipeline");
  ASSERT_NE(pipeline, nullptr);
  ASSERT_TRUE(pipeline->summary.training.has_value());
  EXPECT_EQ(pipeline->summary.training->schedule, "1f1b");
  EXPECT_NE(result.conclusion.find("the single device"), std::string::npos) << result.conclusion;
  EXPECT_EQ(result.conclusion.find("fused"), std::string::npos) << result.conclusion;

  const auto json = demo_json(result, ReportContext{});
  EXPECT_EQ(json["train"]["schedule"], "1f1b");
  EXPECT_EQ(json["train"]["optimizer"], "sgd+momentum");
  EXPECT_EQ(json["train"]["recompute"], false);
  EXPECT_NE(json["baseline"]["implementation"].get<std::string>().find("cell-by-cell"), std::string::npos);
  EXPECT_DOUBLE_EQ(json["baseline"]["makespan_ms"]["median"].get<double>(), cells_ms);
  EXPECT_TRUE(json["wavefront"].is_null());
  for (const auto& way : json["ways"]) {
    EXPECT_TRUE(way["speedup_vs_fused"].is_null());
    EXPECT_FALSE(way["speedup_vs_baseline"].is_null());
  }
  EXPECT_NE(verdict_table_text(result.rows).find("vs single"), std::string::npos);
}

TEST(RnnDemoTraining, ThroughTheSimulatorTheWaysAreHeldAgainstThePredictedFusedTrainingStep) {
  const Machine machine = free_link_machine(4, 1.0);
  DemoBackend backend;
  backend.name = "sim";
  backend.executor = [machine](int) { return std::make_unique<Simulator>(machine); };
  backend.fused = [machine](int) { return make_sim_fused_baseline(machine); };
  backend.cost = std::make_shared<MachineCostFunction>(machine);
  RnnDemoSettings settings;
  settings.shape = demo_shape("lstm", 4, 16, 6, 4);
  settings.training = momentum_sgd();
  settings.microbatches = 1;
  const RnnDemoResult result = run_demo(settings, backend, 1);

  ASSERT_TRUE(result.baseline_fused());
  ASSERT_EQ(result.rows.size(), 3u);  // fused, cells, layer split (one micro-batch)
  EXPECT_EQ(result.rows[0].way, DemoWay::kFused);
  EXPECT_EQ(result.rows[1].way, DemoWay::kCells);
  EXPECT_EQ(result.rows[2].way, DemoWay::kSplit);
  const double fused_ms = result.rows[0].makespan->median_ms;
  for (size_t i = 1; i < result.rows.size(); ++i) {
    EXPECT_DOUBLE_EQ(result.rows[i].speedup, fused_ms / result.rows[i].makespan->median_ms) << result.rows[i].title;
  }
  // A step is the forward and a backward of about twice its products: the
  // predicted step lies between two and five forward passes (launches count
  // more in the backward, which runs more kernels at this size).
  const auto forward = make_sim_fused_baseline(machine)->run(demo_graph(settings.shape), RunOptions{});
  const double forward_ms = forward.timelines.front().makespan_us() / 1e3;
  EXPECT_GT(fused_ms, 2.0 * forward_ms);
  EXPECT_LT(fused_ms, 5.0 * forward_ms);

  const auto json = demo_json(result, ReportContext{});
  EXPECT_EQ(json["baseline"]["implementation"], "cost-model prediction");
  EXPECT_DOUBLE_EQ(json["baseline"]["makespan_ms"]["median"].get<double>(), fused_ms);
  for (const auto& way : json["ways"]) EXPECT_FALSE(way["speedup_vs_fused"].is_null()) << way["way"];
  EXPECT_NE(verdict_table_text(result.rows).find("vs fused"), std::string::npos);
}

TEST(RnnDemoTraining, OnTheCpuEveryWayTrainsStepForStepAsTheSingleDevice) {
  // The layer split and the micro-batched split compute the same step as the
  // cells on one device: the same loss at every step (the weights after each
  // update are equal), and the loss falls.
  DemoBackend backend;
  backend.name = "cpu";
  backend.executor = [](int) { return std::make_unique<CpuExecutor>(); };
  backend.fused = [](int) { return make_cpu_fused_baseline(); };
  for (const char* cell : {"lstm", "gru"}) {
    SCOPED_TRACE(cell);
    RnnDemoSettings settings;
    settings.shape = demo_shape(cell, 2, 8, 5, 4);
    settings.training = momentum_sgd();
    settings.microbatches = 2;
    const RnnDemoResult result = run_demo(settings, backend, 4);
    const RunReport* single = find_run(result.comparison, "single");
    ASSERT_NE(single, nullptr);
    const std::vector<double>& expected = single->summary.training->losses;
    ASSERT_EQ(expected.size(), 4u);
    EXPECT_LT(expected.back(), expected.front());
    // The baseline is the fused training loop, which trains as the cells do.
    ASSERT_TRUE(result.baseline_fused());
    EXPECT_EQ(result.fused.implementation, "fused cpu training loop");
    ASSERT_EQ(result.fused.losses.size(), expected.size());
    for (size_t step = 0; step < expected.size(); ++step) {
      EXPECT_NEAR(result.fused.losses[step], expected[step], 1e-4 * std::abs(expected[step])) << "fused step " << step;
    }
    for (const char* strategy : {"horizontal", "pipeline"}) {
      const RunReport* run = find_run(result.comparison, strategy);
      ASSERT_NE(run, nullptr) << strategy;
      const std::vector<double>& losses = run->summary.training->losses;
      ASSERT_EQ(losses.size(), expected.size()) << strategy;
      for (size_t step = 0; step < losses.size(); ++step) {
        EXPECT_NEAR(losses[step], expected[step], 1e-5 * std::abs(expected[step])) << strategy << " step " << step;
      }
    }
  }
}

}  // namespace
}  // namespace rnn_demo_training_test
}  // namespace splitscope::testing
