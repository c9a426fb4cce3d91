// The recurrent-cell rule (sim/costs/rnn_step_cost.hpp): a step is the share of
// the batched input product, the recurrent product and the gate kernel, each
// with its launch.

#include "sim/costs/rnn_step_cost.hpp"

#include <gtest/gtest.h>

#include "rule_devices.hpp"

namespace splitscope {
namespace rnn_step_cost_test {
namespace {

using testing::v100;

CellShape lstm_1024() {
  CellShape s;
  s.rows = 64;
  s.input = 1024;
  s.hidden = 1024;
  s.units = 1024;
  s.gates = 4;
  s.steps = 32;
  s.has_state = true;
  s.lstm = true;
  return s;
}

TEST(RnnStepCost, AnLstmStepIsThreeKernelsOneOfThemSharedOverTheSteps) {
  // LSTM 1024, batch 64, 32 steps, on a V100 (80 SMs at 196.25e9 FLOP/s,
  // 810e9 B/s, 5 µs launches):
  // - input product over all steps: 2048 × 4096 × 1024. 128×64 tiles: 16·64
  //   = 1024 tiles, 13 waves (12.8) of 2·128·64·1024 / 196.25e9 = 85.49 µs:
  //   1111.36 µs, + 5 µs, / 32 = 34.886 µs a step;
  // - recurrent product 64 × 4096 × 1024: 64×64 tiles, 64 of them, one wave
  //   of 2·64·64·1024 / 196.25e9 = 42.74 µs (its 17.4 MB take 22.3 µs), + 5 µs;
  // - gates: 4·(2·64·4096 + 4096 + 64·1024 + 2·64·1024) = 2,899,968 bytes at
  //   810e9: 3.58 µs, + 5 µs.
  // 91.21 µs in 2 + 1/32 kernels.
  const CellEstimate cell = estimate_cell_step(v100(), lstm_1024());
  EXPECT_NEAR(cell.input_product, (13 * 2.0 * 128 * 64 * 1024 / 196.25e9 + 5e-6) / 32, 1e-12);
  EXPECT_NEAR(cell.recurrent_product, 2.0 * 64 * 64 * 1024 / 196.25e9 + 5e-6, 1e-12);
  EXPECT_NEAR(cell.elementwise, 2899968.0 / 810e9 + 5e-6, 1e-12);
  EXPECT_DOUBLE_EQ(cell.kernels, 2 + 1.0 / 32);
  EXPECT_NEAR(cell.seconds, 91.21e-6, 0.01e-6);
}

TEST(RnnStepCost, TheFirstStepRunsTheSameKernelsOnAZeroState) {
  // cuDNN runs the recurrent product at t = 0 too (on a zero h); only the
  // gate kernel reads less: no c_{t-1}, so 4·(2·64·4096 + 4096 + 2·64·1024).
  CellShape s = lstm_1024();
  s.has_state = false;
  const CellEstimate first = estimate_cell_step(v100(), s);
  const CellEstimate later = estimate_cell_step(v100(), lstm_1024());
  EXPECT_DOUBLE_EQ(first.recurrent_product, later.recurrent_product);
  EXPECT_DOUBLE_EQ(first.kernels, 2 + 1.0 / 32);
  EXPECT_NEAR(first.elementwise, 4.0 * (2 * 64 * 4096 + 4096 + 2 * 64 * 1024) / 810e9 + 5e-6, 1e-12);
}

TEST(RnnStepCost, ASmallCellIsMostlyLaunches) {
  // LSTM 256, batch 4: the recurrent product 4 × 1024 × 256 is 16 tiles of
  // 64×64; split 4 ways, 64 tiles of K = 64 in one wave, 2·64·64·64 /
  // 196.25e9 = 2.67 µs, then the reduction (131,072 bytes, 0.16 µs, + a 5 µs
  // launch) and its own launch: 12.83 µs. With the gates (5.06 µs) and the
  // input product's share (0.49 µs): 18.38 µs in 3 + 1/32 kernels, where one
  // roofline and one launch would be 4·(4·256 + 256·1024 + 4·1024)/810e9 +
  // 5 µs ≈ 6.3 µs.
  CellShape s = lstm_1024();
  s.rows = 4;
  s.input = s.hidden = s.units = 256;
  const CellEstimate cell = estimate_cell_step(v100(), s);
  EXPECT_NEAR(cell.recurrent_product, 2.0 * 64 * 64 * 64 / 196.25e9 + 131072.0 / 810e9 + 10e-6, 1e-12);
  EXPECT_NEAR(cell.seconds, 18.38e-6, 0.01e-6);
  EXPECT_DOUBLE_EQ(cell.kernels, 3 + 1.0 / 32);
}

TEST(RnnStepCost, AGruHasThreeGatesAndNoCellState) {
  CellShape s = lstm_1024();
  s.gates = 3;
  s.lstm = false;
  const CellEstimate cell = estimate_cell_step(v100(), s);
  // Gates: two products of 3·1024 per row, the bias, h_{t-1} in and h_t out.
  EXPECT_NEAR(cell.elementwise, 4.0 * (2 * 64 * 3072 + 3072 + 64 * 1024 + 64 * 1024) / 810e9 + 5e-6, 1e-12);
}

}  // namespace
}  // namespace rnn_step_cost_test
}  // namespace splitscope
