// The simulator's predicted fused stack (sim/fused_rnn_prediction.hpp)
// against hand-computed rooflines.

#include <gtest/gtest.h>

#include "demo_test_support.hpp"
#include "sim/fused_rnn_prediction.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
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
  // The same FLOPs as the 20 cells of 2·64·32·4 = 16384 FLOPs each (16.384 µs): 327.68 µs.
  EXPECT_NE(p.method.find("free-links"), std::string::npos) << p.method;
}

TEST(FusedPrediction, LaunchesAndEfficienciesCount) {
  Machine machine = free_link_machine(1, 1.0);
  machine.device.launch_overhead_us = 5;
  machine.device.efficiency = {{"dense", 0.5}, {"lstm_cell", 0.25}};
  const FusedRnnPrediction p = predict_fused_rnn(machine, *lstm_graph(), 0);
  // Per layer: 81.92 / 0.5 + 5 = 168.84 µs of input product; 10·(8.192 / 0.25 + 5) = 377.68 µs of steps.
  EXPECT_NEAR(p.input_products_seconds * 1e6, 2 * 168.84, 1e-9);
  EXPECT_NEAR(p.recurrent_steps_seconds * 1e6, 2 * 377.68, 1e-9);
  EXPECT_NEAR(p.seconds * 1e6, 1093.04, 1e-9);
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

TEST(FusedPrediction, RefusesALayerThatIsNotRecurrent) {
  EXPECT_THROW(predict_fused_rnn(free_link_machine(1, 1.0), *lstm_graph(), 3), InputError);
}

}  // namespace
}  // namespace splitscope::testing
