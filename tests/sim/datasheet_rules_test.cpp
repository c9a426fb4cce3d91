// The op cost model with the datasheet rules (sim/costs/op_cost_model.hpp): which
// kinds the rules price and which the efficiency table does, the facts
// derived from a datasheet, the rules reached through whole ops, and the
// plan-wide pricing the simulator uses giving the same numbers.

#include <gtest/gtest.h>

#include "hand_plan.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/training.hpp"
#include "ir/ops/op_def.hpp"
#include "ir/zoo.hpp"
#include "partitioners/partitioner.hpp"
#include "sim/costs/bias_activation.hpp"
#include "sim/costs/conv_algorithm.hpp"
#include "sim/machine/device_facts.hpp"
#include "sim/costs/gemm_efficiency.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/costs/op_cost_model.hpp"
#include "sim/costs/rnn_step_cost.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {
namespace datasheet_rules_test {
namespace {

using testing::HandPlan;
using testing::switch_topology;
using testing::test_machine;

/// A V100 SXM2 as a datasheet-only machine file would give it: no SM count, no efficiency table.
Machine v100_datasheet() {
  Machine machine = test_machine(2, switch_topology(150, 3), 15.7);
  machine.device.memory_bandwidth_gbps = 900;
  machine.device.efficiency.clear();
  machine.device.launch_overhead_given = false;
  machine.device.launch_overhead_us = 0;
  machine.device.boost_clock_mhz = 1530;
  return machine;
}

/// The VGG block: 32 × 128 × 28² through 128 3×3 filters, padding 1.
ConvShape vgg_block() {
  ConvShape shape;
  shape.rows = 32;
  shape.channels = shape.filters = 128;
  shape.height = shape.width = shape.out_h = shape.out_w = 28;
  shape.kernel_h = shape.kernel_w = 3;
  shape.pad_h = shape.pad_w = 1;
  return shape;
}

const char* const kNet = R"({"batch": 16, "input": [4096], "layers": [
    {"type": "dense", "units": 4096, "name": "fc"},
    {"type": "relu", "name": "act"}]})";

TEST(DeviceFacts, DeriveTheSmCountFromTheFp32PeakAndClock) {
  DeviceSpec device;
  device.peak_tflops = {{"fp32", 9.3}};
  device.boost_clock_mhz = 1303;
  EXPECT_EQ(sm_count_of(device), 56);  // 9.3e12 / (2·64·1.303e9) = 55.76: P100 PCIe
  device.peak_tflops = {{"fp32", 15.7}};
  device.boost_clock_mhz = 1530;
  EXPECT_EQ(sm_count_of(device), 80);  // 80.17: V100 SXM2
  device.boost_clock_mhz = 0;
  EXPECT_EQ(sm_count_of(device), 88);  // at the default 1400 MHz: 87.6
  device.sm_count = 84;
  EXPECT_EQ(sm_count_of(device), 84);  // given: taken as is
}

TEST(DeviceFacts, AchievedMemoryAndTheDefaultLaunch) {
  const DeviceFacts facts = device_facts(v100_datasheet().device);
  EXPECT_DOUBLE_EQ(facts.dram_bytes_per_second, 0.9 * 900e9);
  EXPECT_DOUBLE_EQ(facts.launch_seconds, 5e-6);  // not given: the rules' default
  EXPECT_EQ(facts.sm_count, 80);
  Machine given = v100_datasheet();
  given.device.launch_overhead_given = true;
  given.device.launch_overhead_us = 2;
  EXPECT_DOUBLE_EQ(device_facts(given.device).launch_seconds, 2e-6);
}

TEST(DeviceFacts, ProductsOnFullWidthFp32PartitionsLoseTheIssueSlotsOfTheirLoop) {
  // V100: 15.7e12 / (2 · 80 · 1.53e9) = 64 lanes per SM: no loss.
  EXPECT_EQ(fp32_lanes_per_sm(v100_datasheet().device), 64);  // no sm_count given: 64 by the derivation
  EXPECT_DOUBLE_EQ(device_facts(v100_datasheet().device).matrix_flops_per_second, 15.7e12);
  // H100 SXM5: 67e12 / (2 · 132 · 1.98e9) = 128.2 lanes: 512 FFMAs of every 512 + 41 issue slots.
  const Machine h100 = load_machine("h100-nvlink-8");
  EXPECT_EQ(fp32_lanes_per_sm(h100.device), 128);
  EXPECT_DOUBLE_EQ(fp32_issue_fraction(128), 512.0 / 553);
  EXPECT_DOUBLE_EQ(fp32_issue_fraction(64), 1.0);
  EXPECT_NEAR(device_facts(h100.device).matrix_flops_per_second, 67e12 * 512 / 553, 1);
  // Tensor-core products (another matrix_math) and the CUDA cores' element-wise math keep their peaks.
  Machine tf32 = h100;
  tf32.device.matrix_math = "tf32";
  EXPECT_DOUBLE_EQ(device_facts(tf32.device).matrix_flops_per_second, 494.5e12);
  EXPECT_DOUBLE_EQ(device_facts(h100.device).vector_flops_per_second, 67e12);
}

TEST(DatasheetRules, ADenseOpIsOneTileQuantizedGemmAndALaunchThenItsBias) {
  // 16 × 4096 × 4096 on the V100: split 16 ways, 154.28 µs (gemm_efficiency_test), + 5 µs;
  // then the bias as a kernel of its own (bias_activation.hpp): 16·4096 outputs
  // read and written, + 4096 bias values: 540,672 B at 810e9 = 0.667 µs, + 5 µs.
  HandPlan hand(kNet, 1);
  const NodeId fc = hand.node("fc");
  const OpCostModel model(v100_datasheet());
  EXPECT_TRUE(model.priced_by_rules(OpKind::kDense));
  EXPECT_NEAR(model.slice_seconds(hand.graph(), fc, full_slice(hand.graph().node(fc), {0, 16})),
              13 * 2.0 * 64 * 64 * 256 / 196.25e9 + 8388608.0 / 810e9 + 10e-6 + 540672.0 / 810e9 + 5e-6, 1e-12);
}

TEST(DatasheetRules, TheBiasAndActivationPassFollowsTheSlice) {
  const Graph graph = lower(parse_model_text(R"({"batch": 8, "input": [64], "layers": [
      {"type": "dense", "units": 32, "activation": "relu", "name": "fc"},
      {"type": "dense", "units": 32, "bias": false, "name": "plain"}]})", "d.json"));
  const OpNode& fc = graph.node(1);
  ASSERT_EQ(fc.kind, OpKind::kDense);
  BiasActivation whole = bias_activation_of(fc, full_slice(fc, {0, 8}));
  EXPECT_EQ(whole.outputs, 8 * 32);
  EXPECT_TRUE(whole.bias && whole.activation);
  // A reduce slice is a partial sum: no activation; only the first adds the bias.
  Slice first = full_slice(fc, {0, 8});
  first.reduce = {0, 32};
  Slice second = first;
  second.reduce = {32, 64};
  EXPECT_TRUE(bias_activation_of(fc, first).bias);
  EXPECT_FALSE(bias_activation_of(fc, first).activation);
  EXPECT_FALSE(bias_activation_of(fc, second).any());
  const OpNode& plain = graph.node(2);
  ASSERT_EQ(plain.kind, OpKind::kDense);
  EXPECT_FALSE(bias_activation_of(plain, full_slice(plain, {0, 8})).any());
  // 256 outputs, bias and relu: 512 FLOPs; 8·256 + 4·32 = 2,176 B at 810e9 = 2.7 ns, + 5 µs.
  EXPECT_NEAR(bias_activation_seconds(device_facts(v100_datasheet().device), whole), 2176.0 / 810e9 + 5e-6, 1e-15);
}

TEST(DatasheetRules, ElementwiseOpsStreamAtTheAchievedRate) {
  // relu over 16·4096 floats reads and writes 524,288 bytes: at 810e9 B/s 0.647 µs, + 5 µs.
  HandPlan hand(kNet, 1);
  const NodeId act = hand.node("act");
  const OpCostModel model(v100_datasheet());
  EXPECT_NEAR(model.slice_seconds(hand.graph(), act, full_slice(hand.graph().node(act), {0, 16})),
              524288.0 / 810e9 + 5e-6, 1e-12);
}

TEST(DatasheetRules, AnEfficiencyEntryOverridesTheRulesForItsKindAndDefaultForAll) {
  HandPlan hand(kNet, 1);
  const NodeId fc = hand.node("fc");
  const NodeId act = hand.node("act");
  const Slice dense = full_slice(hand.graph().node(fc), {0, 16});
  const Slice relu = full_slice(hand.graph().node(act), {0, 16});
  // dense: 0.5 → the roofline: bytes 4·(16·4096 + 4096² + 4096 + 16·4096) =
  // 67,649,536 at 900e9, / 0.5, + no launch (none given); relu keeps the rules.
  Machine machine = v100_datasheet();
  machine.device.efficiency = {{"dense", 0.5}};
  const OpCostModel one_kind(machine);
  EXPECT_FALSE(one_kind.priced_by_rules(OpKind::kDense));
  EXPECT_TRUE(one_kind.priced_by_rules(OpKind::kRelu));
  EXPECT_NEAR(one_kind.slice_seconds(hand.graph(), fc, dense), 67649536.0 / 900e9 / 0.5, 1e-12);
  EXPECT_NEAR(one_kind.slice_seconds(hand.graph(), act, relu), 524288.0 / 810e9 + 5e-6, 1e-12);
  // `default` puts every kind not listed on the roofline: relu at 524288 / 900e9 / 0.25.
  machine.device.efficiency["default"] = 0.25;
  const OpCostModel table(machine);
  EXPECT_FALSE(table.priced_by_rules(OpKind::kRelu));
  EXPECT_FALSE(table.epilogue_by_rules());
  EXPECT_NEAR(table.slice_seconds(hand.graph(), act, relu), 524288.0 / 900e9 / 0.25, 1e-12);
}

TEST(DatasheetRules, ConvolutionsAndCellsReachTheirRules) {
  const Graph graph = lower(parse_model_text(R"({"batch": 32, "input": [128, 28, 28], "layers": [
      {"type": "conv2d", "filters": 128, "kernel": 3, "padding": 1, "name": "conv"}]})", "c.json"));
  const OpCostModel model(v100_datasheet());
  const NodeId conv = 1;
  ASSERT_EQ(graph.node(conv).kind, OpKind::kConv2d);
  const ConvShape shape = vgg_block();
  // 228.61 µs (conv_algorithm_test), then the bias: 32·128·28² = 3,211,264
  // outputs read and written + 128 bias values, 25,690,624 B at 810e9 =
  // 31.72 µs, + 5 µs: 265.33 µs.
  EXPECT_NEAR(model.slice_seconds(graph, conv, full_slice(graph.node(conv), {0, 32})),
              estimate_conv(model.facts(), shape).seconds + 25690624.0 / 810e9 + 5e-6, 1e-12);
  EXPECT_NEAR(model.slice_seconds(graph, conv, full_slice(graph.node(conv), {0, 32})), 265.33e-6, 0.01e-6);

  const Graph rnn = lower(parse_model_text(R"({"batch": 64, "input": [32, 1024], "layers": [
      {"type": "lstm", "hidden": 1024, "name": "lstm"}]})", "r.json"));
  NodeId step = 0;
  for (NodeId id = 0; id < rnn.num_nodes(); ++id) {
    if (rnn.node(id).kind == OpKind::kLstmCell && rnn.node(id).step == 5) step = id;
  }
  ASSERT_EQ(rnn.node(step).attrs.steps, 32);
  CellShape cell;
  cell.rows = 64;
  cell.input = cell.hidden = cell.units = 1024;
  cell.gates = 4;
  cell.steps = 32;
  cell.has_state = true;
  cell.lstm = true;
  EXPECT_DOUBLE_EQ(model.slice_seconds(rnn, step, full_slice(rnn.node(step), {0, 64})),
                   estimate_cell_step(model.facts(), cell).seconds);  // 91.21 µs (rnn_step_cost_test)
}

TEST(DatasheetRules, StrideOneGradientsAreTheConvolutionsThatComputeThem) {
  const Graph graph = training_graph(lower(parse_model_text(R"({"batch": 32, "input": [128, 28, 28], "layers": [
      {"type": "conv2d", "filters": 128, "kernel": 3, "padding": 1, "name": "first"},
      {"type": "conv2d", "filters": 128, "kernel": 3, "padding": 1, "name": "same"},
      {"type": "conv2d", "filters": 128, "kernel": 3, "stride": 2, "padding": 1, "name": "strided"}]})", "c.json")),
                                     Optimizer{});
  const OpCostModel model(v100_datasheet());
  int priced = 0;
  int weights = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    const OpNode& node = graph.node(id);
    if (node.kind == OpKind::kConv2dGradWeight && node.attrs.stride.h == 1) {
      // dW of "first" and "same" (both the VGG block) by the weight-gradient
      // rule, then db: a kernel reading dZ (32·128·28² floats) and writing
      // 128, at 810e9 B/s, + 5 µs.
      EXPECT_NEAR(model.slice_seconds(graph, id, full_slice(node, {0, 32})),
                  estimate_conv_weight_gradient(model.facts(), vgg_block()).seconds + (3'211'264.0 + 128) * 4 / 810e9 + 5e-6,
                  1e-12);
      ++weights;
    }
    if (node.kind != OpKind::kConv2dGradInput) continue;
    const Slice slice = full_slice(node, {0, 32});
    if (node.attrs.stride.h == 1) {
      // dX of "same" is dZ [128, 28, 28] padded by 3 − 1 − 1 = 1 and convolved
      // with the flipped filters, 128 in and 128 out: the forward layer's own
      // shape, 228.61 µs (conv_algorithm_test's Winograd), with no bias pass.
      EXPECT_DOUBLE_EQ(model.slice_seconds(graph, id, slice), estimate_conv(model.facts(), vgg_block()).seconds);
      EXPECT_NEAR(model.slice_seconds(graph, id, slice), 228.61e-6, 0.01e-6);
    } else {
      // Strided: no Winograd or FFT form; per sample, columns [128·9, 14·14] = Wᵀ · dZ [128, 14·14], and a launch.
      const SliceCost cost = slice_cost(graph, id, slice);
      EXPECT_DOUBLE_EQ(model.slice_seconds(graph, id, slice),
                       estimate_gemm(model.facts(), GemmShape{128 * 9, 14 * 14, 128, 32},
                                     cost.bytes_read + cost.bytes_written)
                               .seconds +
                           5e-6);
    }
    ++priced;
  }
  EXPECT_EQ(priced, 2) << "the first layer's input gradient is not computed";
  EXPECT_EQ(weights, 2) << "the first two layers' weight gradients";
}

TEST(DatasheetRules, PricingAWholePlanOpByOpGivesTheSameTimes) {
  // Forward and training graphs: the memo must tell apart the shapes the backward kinds' rules read.
  const OpCostModel model(load_machine("p100-pcie-8"));
  for (const char* name : {"lstm-small", "cnn-small", "mlp-small", "residual-small"}) {
    const Graph forward = lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, name)));
    for (const bool train : {false, true}) {
      auto graph = std::make_shared<const Graph>(train ? training_graph(forward, Optimizer{}) : forward);
      for (const char* strategy : {"single", "vertical", "pipeline"}) {
        PartitionOptions options;
        options.devices = std::string(strategy) == "single" ? 1 : 2;
        options.microbatches = std::string(strategy) == "pipeline" ? 2 : 1;
        const Plan plan = make_partitioner(strategy)->partition(graph, options);
        OpCostModel::PlanPricing pricing(model, plan);
        for (const PlanOp& op : plan.ops) {
          if (op.role != OpRole::kCompute && op.role != OpRole::kEpilogue) continue;
          EXPECT_DOUBLE_EQ(pricing.seconds(op), model.op_seconds(plan, op))
              << name << (train ? " training " : " ") << strategy << " op " << op.id;
        }
      }
    }
  }
}

TEST(DatasheetRules, TheGpuPresetsHoldOnlyDatasheetFacts) {
  for (const char* name : {"p100-pcie-8", "a100-nvlink-8", "h100-nvlink-8", "h100-pcie-4", "2x8-h100-ib", "8x8-h100-ib"}) {
    const Machine machine = load_machine(name);
    EXPECT_TRUE(machine.device.efficiency.empty()) << name;
    EXPECT_GT(machine.device.sm_count, 0) << name;
    const OpCostModel model(machine);
    for (const OpDef* def : op_defs()) EXPECT_TRUE(model.priced_by_rules(def->kind)) << name << " " << def->name;
  }
  EXPECT_EQ(load_machine("p100-pcie-8").device.sm_count, sm_count_of([] {
              DeviceSpec p100;
              p100.peak_tflops = {{"fp32", 9.3}};
              p100.boost_clock_mhz = 1303;
              return p100;
            }()));
}

}  // namespace
}  // namespace datasheet_rules_test
}  // namespace splitscope
