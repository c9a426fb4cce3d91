// The simulator's predicted fused stack (sim/costs/fused_rnn_prediction.hpp)
// against hand-computed rooflines.

#include <gtest/gtest.h>

#include "demo_test_support.hpp"
#include "ir/training.hpp"
#include <cmath>

#include "sim/costs/achieved_rates.hpp"
#include "sim/machine/device_facts.hpp"
#include "sim/costs/fused_rnn_prediction.hpp"
#include "sim/machine/machine_file.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace fused_prediction_test {
namespace {

// An LSTM of 2 layers, H = I = 16, T = 10, B = 4 (G = 4 gates, 4·H = 64 columns).
std::shared_ptr<const Graph> lstm_graph() { return demo_plan(demo_shape("lstm", 2, 16, 10, 4), "single", 1)->graph; }

TEST(FusedPrediction, ComputeBoundAtOneGflop) {
  const Machine machine = free_link_machine(1, 1.0);
  const FusedRnnPrediction p = predict_fused_rnn(machine, *lstm_graph(), 0);
  // Input product per layer: 2·64·16·(4·10) = 81920 FLOPs = 81.92 µs at 1 GFLOP/s.
  // Recurrent step: 2·64·16·4 = 8192 FLOPs = 8.192 µs, times 10 steps = 81.92 µs.
  EXPECT_NEAR(p.input_products_seconds * 1e6, 2 * 81.92, 1e-9);
  EXPECT_NEAR(p.recurrent_steps_seconds * 1e6, 2 * 81.92, 1e-9);
  EXPECT_NEAR(p.seconds * 1e6, 327.68, 1e-9);
  EXPECT_EQ(p.launches, 2 * (10 + 1));
  EXPECT_EQ(p.exposed_launches, 1 + (10 + 2 - 1));  // the first input product, then one per wavefront slice
  // The same FLOPs as the 20 cells of 2·64·32·4 = 16384 FLOPs each (16.384 µs): 327.68 µs.
  EXPECT_NE(p.method.find("free-links"), std::string::npos) << p.method;
}

TEST(FusedPrediction, EfficienciesCountAndOnlyTheWavefrontsLaunchesAreExposed) {
  Machine machine = free_link_machine(1, 1.0);
  machine.device.launch_overhead_us = 5;
  machine.device.efficiency = {{"dense", 0.5}, {"lstm_cell", 0.4}};
  const FusedRnnPrediction p = predict_fused_rnn(machine, *lstm_graph(), 0);
  // Input products: 2 · 81.92 / 0.5 = 327.68 µs of work, plus the first one's launch (5 µs).
  EXPECT_NEAR(p.input_products_seconds * 1e6, 327.68 + 5, 1e-9);
  // A step: 8.192 µs of FLOPs, 20.48 µs alone (cell efficiency 0.4), 16.384 µs at dense efficiency 0.5.
  // The 2-layer, 10-step wavefront has 11 slices: the first and last hold one cell (5 + 20.48 µs),
  // the 9 between hold two (5 + max(20.48, 2 · 16.384) = 37.768 µs): 50.96 + 339.912 = 390.872 µs.
  // Cell by cell it would be 20 · (5 + 20.48) = 509.6 µs.
  EXPECT_NEAR(p.recurrent_steps_seconds * 1e6, 390.872, 1e-9);
  EXPECT_NEAR(p.seconds * 1e6, 723.552, 1e-9);
  EXPECT_EQ(p.exposed_launches, 12);
}

TEST(FusedPrediction, SmallCellsFillTheDeviceSideBySide) {
  Machine machine = free_link_machine(1, 1.0);
  machine.device.efficiency = {{"dense", 0.8}, {"lstm_cell", 0.2}};
  const FusedRnnPrediction p = predict_fused_rnn(machine, *lstm_graph(), 0);
  // A step alone: 8.192 / 0.2 = 40.96 µs; two side by side at dense efficiency: 2 · 8.192 / 0.8 = 20.48 µs,
  // so no two-cell slice is slower than one cell alone: 11 slices · 40.96 µs = 450.56 µs, not 20 · 40.96.
  EXPECT_NEAR(p.recurrent_steps_seconds * 1e6, 11 * 40.96, 1e-9);
}

TEST(FusedPrediction, MemoryBoundReadsEachInputWeightOnce) {
  Machine machine = free_link_machine(1, 1e9);  // 1 PFLOP/s: nothing is compute-bound
  machine.device.memory_bandwidth_gbps = 1;     // 1e9 B/s: 1 µs per 1000 bytes
  const FusedRnnPrediction p = predict_fused_rnn(machine, *lstm_graph(), 0);
  // Input product: 4 B · (40·16 x + 16·64 Wx + 64 b + 40·64 pre) = 4·4288 = 17152 B = 17.152 µs.
  // Step: 4 B · (4·16 h + 16·64 Wh + 4·64 pre + 4·16 h' + 2·4·16 c, c') = 4·1536 = 6144 B = 6.144 µs.
  EXPECT_NEAR(p.input_products_seconds * 1e6, 2 * 17.152, 1e-9);
  EXPECT_NEAR(p.recurrent_steps_seconds * 1e6, 2 * 10 * 6.144, 1e-9);
  EXPECT_NEAR(p.seconds * 1e6, 157.184, 1e-9);
}

TEST(FusedPrediction, GruHasThreeGatesAndNoCellState) {
  const auto graph = demo_plan(demo_shape("gru", 1, 16, 10, 4), "single", 1)->graph;
  Machine machine = free_link_machine(1, 1e9);
  machine.device.memory_bandwidth_gbps = 1;
  const FusedRnnPrediction p = predict_fused_rnn(machine, *graph, 0);
  // Input: 4·(40·16 + 16·48 + 48 + 40·48) = 4·3376 = 13504 B; step: 4·(64 + 16·48 + 4·48 + 64) = 4·1088 = 4352 B.
  EXPECT_NEAR(p.seconds * 1e6, 13.504 + 10 * 4.352, 1e-9);
}

TEST(FusedPrediction, ATrainingStepIsTheForwardTheBackwardWavefrontTheProductsAndTheUpdate) {
  Optimizer optimizer;  // SGD with momentum: 4 FLOPs a weight
  const auto graph = std::make_shared<const Graph>(training_graph(*lstm_graph(), optimizer));
  const FusedRnnTrainingPrediction p = predict_fused_rnn_training(free_link_machine(1, 1.0), *graph);
  // The forward as ComputeBoundAtOneGflop: 327.68 µs.
  EXPECT_NEAR(p.forward_seconds * 1e6, 327.68, 1e-9);
  // Backward at 1 GFLOP/s:
  // - a step's dh·Whᵀ is 2·4·16·64 = 8192 FLOPs (8.192 µs); the 11-slice wavefront of 2 layers × 10
  //   steps holds one step in its first and last slices and two in the 9 between: 2·8.192 + 9·16.384 = 163.84;
  // - over all 40 rows, 2·40·16·64 = 81920 FLOPs (81.92 µs) each: dWx and dWh of both layers, dx of the
  //   second (the first layer's input needs none): 5 · 81.92 = 409.6;
  // - db: 40·64 = 2560 adds a layer, 2 · 2.56 = 5.12.
  EXPECT_NEAR(p.backward_seconds * 1e6, 163.84 + 409.6 + 5.12, 1e-9);
  // The update: 2 · ((16 + 16)·64 + 64) = 4224 weights at 4 FLOPs each: 16.896 µs.
  EXPECT_NEAR(p.update_seconds * 1e6, 16.896, 1e-9);
  EXPECT_NEAR(p.seconds * 1e6, 327.68 + 578.56 + 16.896, 1e-9);
  EXPECT_THROW(predict_fused_rnn_training(free_link_machine(1, 1.0), *lstm_graph()), InputError);  // not training
}

// A GPU priced by achieved-rate rules prices the fused stack's products by
// them too, as it prices the split's cells: here every product runs at half
// the datasheet rules' rate and every element-wise kernel at a quarter.
std::shared_ptr<const AchievedRates> half_rate_products() {
  const auto at = [](double fraction) {
    AchievedRateRule rule;
    rule.log_fraction = std::log(fraction);
    rule.min_body_seconds = 1e-12;
    rule.max_body_seconds = 1.0;
    return rule;
  };
  return std::make_shared<const AchievedRates>(
      "test rules", std::map<std::string, AchievedRateRule>{
                        {"product.fma.skinny", at(0.5)}, {"product.fma.wide", at(0.5)}, {"elementwise", at(0.25)}});
}

TEST(FusedPrediction, AchievedRatesPriceTheFusedProductsAsTheyPriceTheCells) {
  Machine datasheet = load_machine("h100-nvlink-8");
  datasheet.device.achieved_rates = nullptr;
  Machine learned = datasheet;
  learned.device.achieved_rates = half_rate_products();
  const auto graph = lstm_graph();
  const FusedRnnPrediction rules = predict_fused_rnn(datasheet, *graph, 0);
  const FusedRnnPrediction achieved = predict_fused_rnn(learned, *graph, 0);
  // Input products: 40 x 64 x 16 and 40 x 64 x 16 (no split-K at this size), twice the datasheet work,
  // behind the one launch both pay.
  const double launch = device_facts(datasheet.device).launch_seconds;
  EXPECT_NEAR(achieved.input_products_seconds - launch, 2 * (rules.input_products_seconds - launch), 1e-15);
  // The steps: alone, the recurrent product at half rate plus the gate kernel at a quarter; so no slice is
  // faster than the datasheet's, and none more than 4 times slower.
  EXPECT_GT(achieved.recurrent_steps_seconds, rules.recurrent_steps_seconds);
  EXPECT_LT(achieved.recurrent_steps_seconds - 11 * launch, 4 * (rules.recurrent_steps_seconds - 11 * launch));
  EXPECT_NE(achieved.method.find("achieved rates"), std::string::npos) << achieved.method;

  Optimizer optimizer;
  const auto training = std::make_shared<const Graph>(training_graph(*graph, optimizer));
  const FusedRnnTrainingPrediction step_rules = predict_fused_rnn_training(datasheet, *training);
  const FusedRnnTrainingPrediction step_achieved = predict_fused_rnn_training(learned, *training);
  EXPECT_GT(step_achieved.backward_seconds, step_rules.backward_seconds);
  EXPECT_NEAR(step_achieved.update_seconds, step_rules.update_seconds, 1e-15);  // the update is no product
}

TEST(FusedPrediction, RefusesALayerThatIsNotRecurrent) {
  EXPECT_THROW(predict_fused_rnn(free_link_machine(1, 1.0), *lstm_graph(), 3), InputError);
}

}  // namespace
}  // namespace fused_prediction_test
}  // namespace splitscope::testing
