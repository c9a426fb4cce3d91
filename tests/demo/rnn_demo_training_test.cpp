// `demo rnn --train` below the command line: training steps of every way,
// held against the cell-by-cell single device (no fused training baseline),
// through the simulator and for real on the cpu backend.

#include <gtest/gtest.h>

#include <sstream>

#include "demo/demo_report.hpp"
#include "demo/rnn_demo.hpp"
#include "demo_test_support.hpp"
#include "exec/cpu/cpu_executor.hpp"
#include "sim/machine_cost_function.hpp"
#include "sim/simulator.hpp"

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

TEST(RnnDemoTraining, ThroughTheSimulatorTheWaysAreHeldAgainstTheCellsRun) {
  const Machine machine = free_link_machine(4, 1.0);
  DemoBackend backend;
  backend.name = "sim";
  backend.executor = [machine](int) { return std::make_unique<Simulator>(machine); };
  backend.fused = [](int) -> std::unique_ptr<FusedBaseline> {
    ADD_FAILURE() << "training runs no fused baseline";
    return nullptr;
  };
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
