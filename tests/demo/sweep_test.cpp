// --sweep: the crossover logic on hand-made numbers, and a sweep run through
// the simulator.

#include <gtest/gtest.h>

#include <sstream>

#include "demo/rnn_sweep.hpp"
#include "demo_test_support.hpp"
#include "sim/costs/fused_rnn_prediction.hpp"
#include "sim/costs/machine_cost_function.hpp"
#include "sim/engine/simulator.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace sweep_test {
namespace {

SweepPoint point(int64_t value, std::optional<double> split, std::optional<double> microbatched) {
  SweepPoint p;
  p.value = value;
  p.devices = 4;
  p.microbatches = 4;
  p.fused_ms = 10;
  p.split_speedup = split;
  p.microbatched_speedup = microbatched;
  return p;
}

SweepResult hand_sweep(std::vector<SweepPoint> points) {
  SweepResult result;
  result.sweep.name = "hidden";
  for (const SweepPoint& p : points) result.sweep.values.push_back(p.value);
  result.points = std::move(points);
  return result;
}

TEST(SweepCrossover, TheFirstValueWhereEitherSplitWins) {
  const SweepResult sweep = hand_sweep({point(256, 0.5, 0.6), point(512, 0.9, 1.0), point(1024, 1.2, 1.1),
                                        point(2048, 0.97, std::nullopt), point(4096, 1.5, 1.7)});
  EXPECT_DOUBLE_EQ(*sweep.points[2].best_speedup(), 1.2);
  EXPECT_DOUBLE_EQ(*sweep.points[3].best_speedup(), 0.97);
  EXPECT_EQ(first_win(sweep.points), 2u);  // 1.2 >= 1.05; 1.0 at 512 is only even
  const std::string text = crossover_text(sweep);
  EXPECT_NE(text.find("first beats the fused single device at hidden=1024, 1.20x as fast (the layer split)"),
            std::string::npos)
      << text;
  // Not monotonic: 2048 loses again, so the wins are listed.
  EXPECT_NE(text.find("it wins at hidden=1024 (1.20x), 4096 (1.70x)"), std::string::npos) << text;
}

TEST(SweepCrossover, TheMicroBatchedSplitCanDecideIt) {
  const SweepResult sweep = hand_sweep({point(1, 0.8, 0.9), point(2, 0.9, 1.3)});
  EXPECT_EQ(first_win(sweep.points), 1u);
  EXPECT_NE(crossover_text(sweep).find("at hidden=2, 1.30x as fast (the layer split with 4 micro-batches)"),
            std::string::npos)
      << crossover_text(sweep);
}

TEST(SweepCrossover, WinsStartAtExactlyOnePointOFive) {
  EXPECT_EQ(first_win(hand_sweep({point(1, 1.0499, 1.04), point(2, 1.05, 0.5)}).points), 1u);
}

TEST(SweepCrossover, NoneSaysHowCloseTheSplitCame) {
  const SweepResult sweep = hand_sweep({point(256, 0.5, 0.6), point(512, 1.0, 0.9), point(1024, 0.7, 0.8)});
  EXPECT_FALSE(first_win(sweep.points).has_value());
  const std::string text = crossover_text(sweep);
  EXPECT_NE(text.find("crossover: none"), std::string::npos) << text;
  EXPECT_NE(text.find("the closest a split came is 1.00x at hidden=512"), std::string::npos) << text;
  EXPECT_FALSE(first_win(hand_sweep({point(1, std::nullopt, std::nullopt)}).points).has_value());
}

TEST(SweepRun, ThroughTheSimulator) {
  // Equal cells, free links: the fused prediction is L·T cells' time, the
  // layer split (T + L - 1) cells, so its speedup is L·T / (T + L - 1)
  // whatever the hidden size: 3·8 / 10 = 2.4 here.
  const Machine machine = free_link_machine(3, 1.0);
  DemoBackend backend;
  backend.name = "sim";
  backend.executor = [machine](int) { return std::make_unique<Simulator>(machine); };
  backend.fused = [machine](int) { return make_sim_fused_baseline(machine); };
  backend.cost = std::make_shared<MachineCostFunction>(machine);
  RnnDemoSettings base;
  base.shape = demo_shape("lstm", 3, 16, 8, 4);
  base.microbatches = 1;  // no micro-batched split
  const RnnSweep sweep = parse_rnn_sweep("hidden=8,16,32");
  std::ostringstream quiet;
  Progress progress(quiet, false);
  const SweepResult result = run_rnn_sweep(base, sweep, backend, RunOptions{}, progress);
  ASSERT_EQ(result.points.size(), 3u);
  EXPECT_FALSE(result.measured);
  EXPECT_EQ(result.info.backend, "sim");
  for (size_t i = 0; i < 3; ++i) {
    const SweepPoint& p = result.points[i];
    EXPECT_EQ(p.value, sweep.values[i]);
    EXPECT_EQ(p.devices, 3);
    const auto graph = demo_plan(with_swept(base.shape, "hidden", p.value), "single", 1)->graph;
    EXPECT_NEAR(p.fused_ms, predict_fused_rnn(machine, *graph, 0).seconds * 1e3, 1e-12);
    ASSERT_TRUE(p.split_ms && p.split_speedup);
    EXPECT_NEAR(*p.split_speedup, 2.4, 1e-6);
    EXPECT_NEAR(*p.split_speedup, p.fused_ms / *p.split_ms, 1e-12);
    EXPECT_FALSE(p.microbatched_ms.has_value());
  }
  EXPECT_EQ(result.crossover, 8);
  const std::string table = sweep_table_text(result);
  EXPECT_NE(table.find("2.40x"), std::string::npos) << table;
  EXPECT_NE(table.find("crossover: a split first beats the fused single device at hidden=8"), std::string::npos)
      << table;
}

TEST(SweepRun, AnExplicitDeviceCountIsCappedAtASweptLayerCount) {
  // Refusing layers=2 with --devices 4 sent users round in circles (issue 19):
  // the advice "--devices 2" then failed on a larger point's machine.
  const Machine machine = free_link_machine(4, 1.0);
  DemoBackend backend;
  backend.name = "sim";
  backend.executor = [machine](int) { return std::make_unique<Simulator>(machine); };
  backend.fused = [machine](int) { return make_sim_fused_baseline(machine); };
  RnnDemoSettings base;
  base.shape = demo_shape("gru", 4, 8, 4, 2);
  base.devices = 4;
  std::ostringstream quiet;
  Progress progress(quiet, false);
  const SweepResult result = run_rnn_sweep(base, parse_rnn_sweep("layers=4,2"), backend, RunOptions{}, progress);
  ASSERT_EQ(result.points.size(), 2u);
  EXPECT_EQ(result.points[0].devices, 4);
  EXPECT_EQ(result.points[1].devices, 2);
}

TEST(SweepRun, ABadPointIsNamedByTheSweep) {
  RnnDemoSettings base;
  base.shape = demo_shape("gru", 4, 8, 4, 2);
  try {
    resolve_sweep_point(base, parse_rnn_sweep("steps=1000000"), 1000000);
    FAIL() << "2^20 ops past the limit";
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), "--sweep");
    EXPECT_EQ(error.problem().rfind("steps=1000000: 4 layers × 8 hidden over 1000000 steps", 0), 0u)
        << error.problem();
  }
}

}  // namespace
}  // namespace sweep_test
}  // namespace splitscope::testing
