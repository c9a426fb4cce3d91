// The wavefront through the real simulator, against its closed form (issue
// 8): L layers on L devices, T steps, cells of equal cost t and free links.
// Cell (l, t) can start once (l-1, t) and (l, t-1) are done, so it runs in
// slice l + t: k devices are busy in slice k - 1 of the fill, all L in the
// steady state, and the run takes (T + L - 1)·t.

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "demo/wavefront.hpp"
#include "demo_test_support.hpp"
#include "sim/costs/op_cost_model.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope::testing {
namespace sim_wavefront_test {
namespace {

// Transfers on the free links add (L - 1) · 256 B / 1e18 B/s ≈ 1e-15 µs to the critical path.
constexpr double kTolUs = 1e-6;

/// The busy-device counts of the closed form: 1, 2, ..., L, L (T - L + 1
/// slices of L in all), ..., 2, 1 over T + L - 1 slices.
std::vector<int> closed_form_busy(int layers, int steps) {
  std::vector<int> busy;
  for (int k = 0; k < steps + layers - 1; ++k) {
    busy.push_back(std::min({k + 1, layers, steps + layers - 1 - k}));
  }
  return busy;
}

class SimulatedWavefront : public ::testing::TestWithParam<std::string> {};

TEST_P(SimulatedWavefront, EqualCellsAndFreeLinksGiveTheClosedForm) {
  constexpr int kLayers = 4;
  constexpr int kSteps = 10;
  const RnnDemoShape shape = demo_shape(GetParam(), kLayers, 16, kSteps, 4);
  const auto plan = demo_plan(shape, "horizontal", kLayers);
  const Machine machine = free_link_machine(kLayers, 1.0);

  // Every cell costs the same: 2·G·H·(I + H)·B FLOPs at 1 GFLOP/s, compute-bound.
  // LSTM: 2·4·16·32·4 = 16384 FLOPs = 16.384 µs; GRU: 2·3·16·32·4 = 12288 FLOPs = 12.288 µs.
  const double t_us = GetParam() == "lstm" ? 16.384 : 12.288;
  const OpCostModel costs(machine);
  for (const PlanOp& op : plan->ops) {
    if (op.role == OpRole::kCompute) {
      EXPECT_NEAR(costs.op_seconds(*plan, op) * 1e6, t_us, 1e-9);
    }
  }

  const Timeline timeline = simulate(*plan, machine);
  // (T + L - 1)·t = 13·t
  EXPECT_NEAR(timeline.makespan_us(), (kSteps + kLayers - 1) * t_us, kTolUs);
  for (const Span& span : timeline.spans) {
    if (span.kind != SpanKind::kCompute) continue;
    const OpNode& node = plan->graph->node(plan->op(span.op).node);
    EXPECT_EQ(span.device, node.sublayer);  // one layer per device
    EXPECT_NEAR(span.start_us, (node.sublayer + node.step) * t_us, kTolUs) << node.name;
  }

  const Wavefront wave = analyse_wavefront(*plan, timeline);
  EXPECT_NEAR(wave.slice_us, t_us, 1e-9);
  // 1, 2, 3, then 4 for T - L + 1 = 7 slices, then 3, 2, 1.
  EXPECT_EQ(wave.busy_devices, (std::vector<int>{1, 2, 3, 4, 4, 4, 4, 4, 4, 4, 3, 2, 1}));
  EXPECT_EQ(wave.busy_devices, closed_form_busy(kLayers, kSteps));
  EXPECT_EQ(wave.fill_slices, kLayers - 1);
  EXPECT_EQ(wave.drain_slices, kLayers - 1);
  EXPECT_EQ(wave.peak_busy, kLayers);
  // Fill (L - 1)·t, steady (T - L + 1)·t with every device computing, drain (L - 1)·t.
  EXPECT_NEAR(wave.fill_us, (kLayers - 1) * t_us, kTolUs);
  EXPECT_NEAR(wave.steady_us, (kSteps - kLayers + 1) * t_us, kTolUs);
  EXPECT_NEAR(wave.drain_us, (kLayers - 1) * t_us, kTolUs);
  EXPECT_NEAR(wave.steady_occupancy, 1.0, 1e-9);
  EXPECT_NEAR(wave.compute_us, kLayers * kSteps * t_us, 1e-6);
}

TEST_P(SimulatedWavefront, MicroBatchesRefineTheWavefront) {
  // M micro-batches of B/M rows, each device running them one after the
  // other: M·T cells of t/M per device, so the run takes (M·T + L - 1)·t/M.
  constexpr int kLayers = 3;
  constexpr int kSteps = 6;
  constexpr int kMicrobatches = 2;
  const RnnDemoShape shape = demo_shape(GetParam(), kLayers, 16, kSteps, 4);
  const auto plan = demo_plan(shape, "pipeline", kLayers, kMicrobatches);
  const Machine machine = free_link_machine(kLayers, 1.0);
  // Half the rows: LSTM 2·4·16·32·2 = 8192 FLOPs = 8.192 µs; GRU 6144 FLOPs = 6.144 µs.
  const double t_us = GetParam() == "lstm" ? 8.192 : 6.144;
  const Timeline timeline = simulate(*plan, machine);
  // (2·6 + 3 - 1)·t = 14·t
  EXPECT_NEAR(timeline.makespan_us(), (kMicrobatches * kSteps + kLayers - 1) * t_us, kTolUs);
  const Wavefront wave = analyse_wavefront(*plan, timeline);
  EXPECT_EQ(wave.busy_devices, closed_form_busy(kLayers, kMicrobatches * kSteps));
}

INSTANTIATE_TEST_SUITE_P(Cells, SimulatedWavefront, ::testing::Values("lstm", "gru"));

}  // namespace
}  // namespace sim_wavefront_test
}  // namespace splitscope::testing
