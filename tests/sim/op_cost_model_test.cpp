// The op cost model: roofline x efficiency + launch, free no-ops, the
// calibration table overriding the roofline, and the same numbers behind the
// partitioners' CostFunction.

#include <gtest/gtest.h>

#include "hand_plan.hpp"
#include "ir/training.hpp"
#include "ir/op_signature.hpp"
#include "sim/costs/machine_cost_function.hpp"
#include "sim/costs/op_cost_model.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {
namespace op_cost_model_test {
namespace {

using testing::HandPlan;
using testing::switch_topology;
using testing::test_machine;

// dense 1024 -> 1024 over a batch of 64:
//   FLOPs  2·64·1024·1024                       = 134,217,728
//   read   64·1024·4 + (1024·1024 + 1024)·4     = 4,460,544
//   write  64·1024·4                            = 262,144
const char* const kNet = R"({"batch": 64, "input": [1024], "layers": [
    {"type": "dense", "units": 1024, "name": "fc"},
    {"type": "relu", "name": "act"}]})";
constexpr int64_t kFlops = 134'217'728;
constexpr int64_t kBytes = 4'460'544 + 262'144;

Machine machine_with(double tflops, double gbps, double launch_us, double dense_efficiency) {
  Machine machine = test_machine(2, switch_topology(10, 0), tflops, launch_us);
  machine.device.memory_bandwidth_gbps = gbps;
  machine.device.efficiency = {{"dense", dense_efficiency}, {"default", 0.25}};
  return machine;
}

TEST(OpCostModel, MemoryBoundDenseIsBytesOverBandwidth) {
  HandPlan hand(kNet, 1);
  const NodeId fc = hand.node("fc");
  const OpCostModel model(machine_with(10, 100, 5, 0.5));
  // compute 134217728 / 10e12 = 13.42 µs < memory 4722688 / 100e9 = 47.22688 µs;
  // 47.22688 / 0.5 + 5 = 99.45376 µs.
  EXPECT_NEAR(model.slice_seconds(hand.graph(), fc, full_slice(hand.graph().node(fc), {0, 64})),
              99.45376e-6, 1e-15);
}

TEST(OpCostModel, ComputeBoundDenseIsFlopsOverPeak) {
  HandPlan hand(kNet, 1);
  const NodeId fc = hand.node("fc");
  const OpCostModel model(machine_with(1, 1000, 5, 0.5));
  // 134217728 / 1e12 = 134.217728 µs > 4.722688 µs; / 0.5 + 5 = 273.435456 µs.
  const double expected = 273.435456e-6;
  EXPECT_NEAR(model.slice_seconds(hand.graph(), fc, full_slice(hand.graph().node(fc), {0, 64})),
              expected, 1e-15);
  // The plan path prices the PlanOp's own FLOPs and bytes the same way.
  const int x = hand.input(hand.node("input"), 0, 262'144);
  hand.compute(fc, 0, {x}, kFlops, 262'144, 0, kBytes);
  EXPECT_NEAR(model.op_seconds(hand.plan(), hand.plan().op(0)), expected, 1e-15);
}

TEST(OpCostModel, MatrixMathPicksThePeak) {
  HandPlan hand(kNet, 1);
  const NodeId fc = hand.node("fc");
  Machine machine = machine_with(1, 1000, 0, 1.0);
  machine.device.peak_tflops["tf32"] = 8;
  machine.device.matrix_math = "tf32";
  // 134217728 / 8e12 = 16.777216 µs (still above the memory side, 4.72 µs).
  EXPECT_NEAR(OpCostModel(machine).slice_seconds(hand.graph(), fc, full_slice(hand.graph().node(fc), {0, 64})),
              16.777216e-6, 1e-15);
}

// A calibration measures forward kinds: a backward kind the file does not
// list runs at the efficiency of the kind it runs like (dense_grad_input's
// product is a GEMM of the layer's size), not at `default`.
TEST(OpCostModel, ABackwardProductTakesItsForwardKindsEfficiency) {
  HandPlan hand(kNet, 1);
  const Graph training = training_graph(hand.graph(), Optimizer{});
  const OpCostModel model(machine_with(1, 1000, 5, 0.5));
  int priced = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(training.num_nodes()); ++id) {
    const OpNode& node = training.node(id);
    if (node.kind != OpKind::kDenseGradInput && node.kind != OpKind::kDenseGradWeight) continue;
    // dX = dZ·Wᵀ and dW = Xᵀ·dZ: 2·64·1024·1024 FLOPs each (dW adds db's 64·1024),
    // compute-bound at 1 TFLOP/s: / 0.5 (dense's, not the default 0.25) + 5 µs.
    const Slice slice = full_slice(node, {0, 64});
    const double flops = static_cast<double>(slice_cost(training, id, slice).flops);
    EXPECT_NEAR(model.slice_seconds(training, id, slice), flops / 1e12 / 0.5 + 5e-6, 1e-12) << node.name;
    ++priced;
  }
  EXPECT_EQ(priced, 1) << "the first layer's input gradient is not computed: only dW";
}

TEST(OpCostModel, ElementwiseOpsAreMemoryBoundAtTheirKindsEfficiency) {
  HandPlan hand(kNet, 1);
  const NodeId act = hand.node("act");
  // relu reads and writes 64·1024·4 bytes each: 524288 / 100e9 = 5.24288 µs;
  // "relu" is not listed, so the default 0.25: 20.97152 µs, + 5 µs launch.
  const OpCostModel model(machine_with(10, 100, 5, 0.5));
  EXPECT_NEAR(model.slice_seconds(hand.graph(), act, full_slice(hand.graph().node(act), {0, 64})),
              25.97152e-6, 1e-15);
}

TEST(OpCostModel, AnOpThatMovesNothingCostsNothingNotEvenALaunch) {
  HandPlan hand(R"({"batch": 2, "input": [3, 8, 8], "layers": [
      {"type": "conv2d", "filters": 4, "kernel": 3}, {"type": "flatten", "name": "flat"}]})", 1);
  const NodeId flat = hand.node("flat");
  const OpCostModel model(machine_with(10, 100, 5, 0.5));
  EXPECT_EQ(model.slice_seconds(hand.graph(), flat, full_slice(hand.graph().node(flat), {0, 2})), 0.0);
}

TEST(OpCostModel, EpiloguesUseTheEpilogueEfficiency) {
  HandPlan hand(kNet, 1);
  Machine machine = machine_with(10, 100, 5, 0.5);
  machine.device.efficiency["epilogue"] = 0.8;
  const int sum = hand.input(hand.node("fc"), 0, 262'144);
  hand.epilogue(sum, 524'288);
  // 524288 / 100e9 = 5.24288 µs / 0.8 = 6.5536 µs, + 5 µs.
  EXPECT_NEAR(OpCostModel(machine).op_seconds(hand.plan(), hand.plan().op(0)), 11.5536e-6, 1e-15);
}

TEST(OpCostModel, TheCalibrationTableOverridesTheRooflineForTheOpsItCovers) {
  HandPlan hand(kNet, 1);
  const NodeId fc = hand.node("fc");
  const Slice whole = full_slice(hand.graph().node(fc), {0, 64});
  const Slice half{{0, 64}, {0, 512}, {0, 1024}, {}};
  Machine machine = machine_with(1, 1000, 5, 0.5);
  machine.calibration.op_times_us[op_signature(hand.graph(), fc, whole)] = 42.5;
  const OpCostModel model(machine);
  EXPECT_TRUE(model.has_calibration());
  // The whole op: the measured 42.5 µs, launch included.
  EXPECT_DOUBLE_EQ(model.slice_seconds(hand.graph(), fc, whole), 42.5e-6);
  // Half the units is another signature: the roofline, 67.108864 / 0.5 + 5 µs.
  EXPECT_NEAR(model.slice_seconds(hand.graph(), fc, half), 139.217728e-6, 1e-15);

  // And in a simulation: the op's span lasts the measured time.
  const int x = hand.input(hand.node("input"), 0, 262'144);
  hand.compute(fc, 0, {x}, kFlops, 262'144, 0, kBytes);
  const Simulator simulator(machine);
  const Timeline timeline = simulator.simulate(hand.plan());
  ASSERT_EQ(timeline.spans.size(), 1u);
  EXPECT_NEAR(timeline.spans[0].duration_us(), 42.5, 1e-9);
  bool calibrated = false;
  simulator.costs().op_seconds(hand.plan(), hand.plan().op(0), &calibrated);
  EXPECT_TRUE(calibrated);
}

TEST(Simulator, SaysWhatShareOfThePredictedComputeTimeCameFromMeasuredOpTimes) {
  HandPlan hand(kNet, 1);
  const NodeId fc = hand.node("fc");
  const NodeId act = hand.node("act");
  Machine machine = machine_with(1, 1000, 5, 0.5);
  const int x = hand.input(hand.node("input"), 0, 262'144);
  const int y = hand.compute(fc, 0, {x}, kFlops, 262'144, 0, kBytes);
  hand.compute(act, 0, {y}, 65'536, 262'144, 0, 2 * 262'144);
  // No table: no share to report.
  Simulator plain(machine);
  EXPECT_FALSE(plain.run(hand.plan(), RunOptions{}).info.calibrated_share.has_value());

  // fc measured at 42.5 µs; the relu by its roofline at the default 0.25:
  // 524,288 bytes / 1e12 B/s / 0.25 + 5 µs = 7.097152 µs.
  machine.calibration.op_times_us[op_signature(hand.graph(), fc, full_slice(hand.graph().node(fc), {0, 64}))] = 42.5;
  Simulator simulator(machine);
  EXPECT_NEAR(simulator.costs().op_seconds(hand.plan(), hand.plan().op(1)), 7.097152e-6, 1e-15);
  const RunResult result = simulator.run(hand.plan(), RunOptions{});
  ASSERT_TRUE(result.info.calibrated_share.has_value());
  EXPECT_NEAR(*result.info.calibrated_share, 42.5 / (42.5 + 7.097152), 1e-12);
}

TEST(MachineCostFunction, GivesThePartitionersTheSameNumbers) {
  HandPlan hand(kNet, 1);
  const NodeId fc = hand.node("fc");
  const Machine machine = machine_with(10, 100, 5, 0.5);
  const MachineCostFunction cost(machine);
  const CostFunction& base = cost;
  const Slice half{{0, 64}, {0, 512}, {0, 1024}, {}};
  EXPECT_DOUBLE_EQ(base.seconds(hand.graph(), fc, half), OpCostModel(machine).slice_seconds(hand.graph(), fc, half));
  // Half the units read the whole input but half the weights: less time than the whole op.
  EXPECT_LT(base.seconds(hand.graph(), fc, half),
            base.seconds(hand.graph(), fc, full_slice(hand.graph().node(fc), {0, 64})));
}

}  // namespace
}  // namespace op_cost_model_test
}  // namespace splitscope
