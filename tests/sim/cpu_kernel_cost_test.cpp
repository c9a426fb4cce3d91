// The cpu kernels' cost by shape: the sgemm rate curve (exact at its grid
// points, log-linear between them, held at the edges), the dense and conv2d
// rules in closed form, which kinds they price, the machine file's
// gemm_rates, and the cpu calibration's grid becoming a machine's curve.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "calibration/calibration_file.hpp"
#include "calibration_fixture.hpp"
#include "hand_plan.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/slice.hpp"
#include "sim/machine/calibrated_machine.hpp"
#include "sim/costs/gemm_rate_curve.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/costs/op_cost_model.hpp"
#include "sim/costs/weight_stream_curve.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace cpu_kernel_cost_test {
namespace {

/// Every m, n, k of {16, 64} x {8, 32} x {4, 256}, each rate a distinct number.
std::vector<GemmRatePoint> two_by_two_by_two() {
  std::vector<GemmRatePoint> points;
  double rate = 10;
  for (int64_t m : {16, 64}) {
    for (int64_t n : {8, 32}) {
      for (int64_t k : {4, 256}) points.push_back({m, n, k, rate += 7});
    }
  }
  return points;
}

TEST(GemmRateCurve, GivesBackEveryRateItWasBuiltFrom) {
  const std::vector<GemmRatePoint> points = two_by_two_by_two();
  const GemmRateCurve curve(points);
  for (const GemmRatePoint& p : points) {
    EXPECT_NEAR(curve.flops_per_second(p.m, p.n, p.k), p.gflops * 1e9, 1e-3) << p.m << " " << p.n << " " << p.k;
  }
}

TEST(GemmRateCurve, InterpolatesInLogSpaceAndHoldsTheEdges) {
  // One axis that varies: m = 16 at 10 GFLOP/s, 64 at 40.
  const GemmRateCurve curve({{16, 8, 8, 10}, {64, 8, 8, 40}});
  // m = 32 is halfway in log2 (4 -> 6): the geometric mean, 20 GFLOP/s.
  EXPECT_NEAR(curve.flops_per_second(32, 8, 8), 20e9, 1e-3);
  // Both varying axes at once: m and k each halfway, the mean of the four corners' log rates.
  const GemmRateCurve square({{16, 8, 16, 10}, {64, 8, 16, 40}, {16, 8, 64, 20}, {64, 8, 64, 80}});
  EXPECT_NEAR(square.flops_per_second(32, 8, 32), std::exp2((std::log2(10e9) + std::log2(40e9) + std::log2(20e9) +
                                                             std::log2(80e9)) / 4),
              1e-3);
  // Below and above the grid, and along the one-value axes: the nearest edge.
  EXPECT_NEAR(curve.flops_per_second(1, 8, 8), 10e9, 1e-3);
  EXPECT_NEAR(curve.flops_per_second(4096, 1, 100000), 40e9, 1e-3);
  // Seconds: 2·m·n·k over the rate; nothing to do costs nothing.
  EXPECT_NEAR(curve.seconds(64, 8, 8), 2.0 * 64 * 8 * 8 / 40e9, 1e-18);
  EXPECT_EQ(curve.seconds(0, 8, 8), 0.0);
}

TEST(GemmRateCurve, NeedsAFullGridOfPositiveShapesAndRates) {
  std::vector<GemmRatePoint> points = two_by_two_by_two();
  EXPECT_EQ(gemm_grid_problem(points), "");
  points.pop_back();
  EXPECT_NE(gemm_grid_problem(points).find("shape 64x32x256 on 1 thread(s) with 1 running is missing"), std::string::npos)
      << gemm_grid_problem(points);
  EXPECT_THROW(GemmRateCurve{points}, std::logic_error);
  EXPECT_NE(gemm_grid_problem({{4, 4, 4, 1}, {4, 4, 4, 2}}).find("given twice"), std::string::npos);
  EXPECT_NE(gemm_grid_problem({{0, 4, 4, 1}}).find("below 1"), std::string::npos);
  EXPECT_NE(gemm_grid_problem({{4, 4, 4, 0}}).find("must be positive"), std::string::npos);
  EXPECT_EQ(gemm_grid_problem({}), "no shapes");
}

/// A cpu-like device: one sgemm rate (a one-point grid), 20 GB/s of memory, a 1 µs op gap.
Machine cpu_machine(double gflops) {
  Machine machine = testing::test_machine(2, testing::switch_topology(10, 0), 1.0, 1.0);
  machine.device.memory_bandwidth_gbps = 20;
  machine.device.gemm_rates = {{64, 1024, 1024, gflops}};
  machine.device.efficiency = {{"default", 0.25}};
  return machine;
}

/// A pool of two threads, each grid one shape at 50 GFLOP/s, products twice as fast on two threads by speedup.
Machine two_thread_pool() {
  Machine pool = cpu_machine(50);
  pool.pooled = true;
  pool.device.gemm_rates = {{64, 1024, 1024, 50, 1}, {64, 1024, 1024, 50, 2}};
  pool.device.speedup = {{"default|shares=2", 2.0}};
  return pool;
}

/// One sample of 3 x 64 x 64 through 8 3x3 filters: im2col's 27 patch rows of 4096 values split over two threads.
constexpr const char* kConvOf64By64 = R"({"batch": 1, "input": [3, 64, 64], "layers": [
      {"type": "conv2d", "filters": 8, "kernel": 3, "padding": 1, "activation": "relu", "name": "conv"}]})";

double full_slice_seconds(const OpCostModel& model, const testing::HandPlan& hand, const std::string& name) {
  const NodeId node = hand.node(name);
  const OpNode& op = hand.graph().node(node);
  return model.slice_seconds(hand.graph(), node, full_slice(op, {0, hand.graph().batch()}));
}

TEST(CpuKernelCost, DenseIsItsBiasCopyProductAndActivation) {
  const testing::HandPlan hand(R"({"batch": 64, "input": [1024], "layers": [
      {"type": "dense", "units": 1024, "activation": "relu", "name": "fc"}]})",
                               1);
  const OpCostModel model(cpu_machine(100));
  // product 2·64·1024·1024 / 100e9 = 1342.17728 µs; the bias copy and the
  // relu each 2 · 65536 floats · 4 B / 20e9 = 26.2144 µs; one 1 µs op gap.
  EXPECT_NEAR(full_slice_seconds(model, hand, "fc"), (1342.17728 + 2 * 26.2144 + 1) * 1e-6, 1e-12);
  // A kind given an efficiency of its own keeps its roofline: memory-bound,
  // (2 · 64·1024 + 1024·1024 + 1024) floats · 4 B = 4,722,688 B / 20e9 = 236.1344 µs, / 0.5, + 1 µs.
  Machine listed = cpu_machine(100);
  listed.device.efficiency["dense"] = 0.5;
  EXPECT_NEAR(full_slice_seconds(OpCostModel(listed), hand, "fc"), (236.1344 / 0.5 + 1) * 1e-6, 1e-12);
}

TEST(CpuKernelCost, ConvIsIm2colBiasAndProductPerSampleThenTheActivation) {
  const testing::HandPlan hand(R"({"batch": 2, "input": [3, 8, 8], "layers": [
      {"type": "conv2d", "filters": 8, "kernel": 3, "padding": 1, "activation": "relu", "name": "conv"}]})",
                               1);
  const OpCostModel model(cpu_machine(50));
  // Per sample: the product (8 filters, 64 pixels, 27 patch) 2·8·64·27 / 50e9
  // = 0.55296 µs; im2col 27·64 floats, 2·1728·4 / 20e9 = 0.6912 µs; the bias
  // fill and the relu 512 floats each, 0.2048 µs. Two samples, one op gap.
  EXPECT_NEAR(full_slice_seconds(model, hand, "conv"), (2 * (0.55296 + 0.6912 + 2 * 0.2048) + 1) * 1e-6, 1e-15);
}

/// Timed passes with round numbers: a bias written at 0.5 ns a value, ReLU at 0.25 and tanh at 4 in place, im2col
/// at 2 ns a value + 3 µs a call on one thread and 1 ns + 5 µs on two.
CpuPassRates round_pass_rates() {
  CpuPassRates passes;
  passes.fill_ns_per_value = 0.5;
  passes.activation_ns_per_value = {{"relu", 0.25}, {"tanh", 4}};
  passes.im2col = {{1, 2, 3}, {2, 1, 5}};
  return passes;
}

TEST(CpuKernelCost, TimedPassesPriceTheBiasTheActivationAndIm2col) {
  const testing::HandPlan conv(R"({"batch": 2, "input": [3, 8, 8], "layers": [
      {"type": "conv2d", "filters": 8, "kernel": 3, "padding": 1, "activation": "relu", "name": "conv"}]})",
                               1);
  Machine machine = cpu_machine(50);
  machine.device.kernel_passes = round_pass_rates();
  // Per sample: the product 0.55296 µs (as above); im2col's 27 rows of 64
  // values are one chunk (a chunk copies 512 rows at least), so one thread's
  // rate, 3 + 1728 · 2 ns = 6.456 µs; the bias fill 512 · 0.5 ns = 0.256 µs;
  // the relu 512 · 0.25 ns = 0.128 µs. Two samples, one op gap.
  EXPECT_NEAR(full_slice_seconds(OpCostModel(machine), conv, "conv"),
              (2 * (0.55296 + 6.456 + 0.256 + 0.128) + 1) * 1e-6, 1e-15);

  const testing::HandPlan dense(R"({"batch": 64, "input": [1024], "layers": [
      {"type": "dense", "units": 1024, "activation": "tanh", "name": "fc"}]})",
                                1);
  // The product 2·64·1024·1024 / 50e9 = 2684.35456 µs; the bias copy 65536 · 0.5 ns = 32.768 µs; tanh 65536 ·
  // 4 ns = 262.144 µs; 1 µs.
  EXPECT_NEAR(full_slice_seconds(OpCostModel(machine), dense, "fc"), (2684.35456 + 32.768 + 262.144 + 1) * 1e-6,
              1e-12);
  // An activation without a timed rate keeps the memory pass: 2 · 65536 · 4 B / 20e9 = 26.2144 µs.
  machine.device.kernel_passes.activation_ns_per_value.erase("tanh");
  EXPECT_NEAR(full_slice_seconds(OpCostModel(machine), dense, "fc"), (2684.35456 + 32.768 + 26.2144 + 1) * 1e-6,
              1e-12);
}

TEST(CpuKernelCost, Im2colOnTwoThreadsTakesTheRateTimedOnTwo) {
  const testing::HandPlan hand(kConvOf64By64, 1);
  Machine pool = two_thread_pool();
  pool.device.kernel_passes = round_pass_rates();
  // The product 35.38944 µs on the two-thread grid; im2col's 27 rows of 4096
  // values in ceil(27 / 8) = 4 chunks, two threads: 5 + 110592 · 1 ns =
  // 115.592 µs; the bias fill 32768 · 0.5 ns = 16.384 µs and the relu 32768 ·
  // 0.25 ns = 8.192 µs on one thread; 1 µs.
  EXPECT_NEAR(full_slice_seconds(OpCostModel(machine_for_plan(pool, 1)), hand, "conv"),
              (35.38944 + 115.592 + 16.384 + 8.192 + 1) * 1e-6, 1e-12);
  // Not timed on two threads: one thread's rate over a thread's 14 rows, 3 + 57344 · 2 ns = 117.688 µs.
  pool.device.kernel_passes.im2col.pop_back();
  EXPECT_NEAR(full_slice_seconds(OpCostModel(machine_for_plan(pool, 1)), hand, "conv"),
              (35.38944 + 117.688 + 16.384 + 8.192 + 1) * 1e-6, 1e-12);
}

TEST(CpuKernelCost, ATimedPoolCostsItsWindows) {
  const testing::HandPlan hand(R"({"batch": 2, "input": [4, 8, 8], "layers": [
      {"type": "maxpool", "kernel": 3, "stride": 2, "name": "pool"}]})",
                               1);
  Machine machine = cpu_machine(50);
  machine.device.efficiency = {{"default", 0.25}};
  machine.device.kernel_passes = round_pass_rates();
  machine.device.kernel_passes.pool_ns_per_window_value = {{"maxpool", 0.5}};
  // 2 samples · 4 channels · 3 · 3 outputs = 72, each a 3x3 window: 648 elements · 0.5 ns = 0.324 µs, + 1 µs.
  EXPECT_NEAR(full_slice_seconds(OpCostModel(machine), hand, "pool"), (0.324 + 1) * 1e-6, 1e-15);
  // An efficiency of its own takes the kind back to the roofline: (2·4·64 + 72) floats · 4 B = 2336 B / 20e9 =
  // 0.1168 µs, / 0.5, + 1 µs.
  machine.device.efficiency["maxpool"] = 0.5;
  EXPECT_NEAR(full_slice_seconds(OpCostModel(machine), hand, "pool"), (0.1168 / 0.5 + 1) * 1e-6, 1e-15);
}

TEST(CpuKernelCost, WeightsTheCacheCannotHoldStreamFromMemory) {
  // One 8-row and one 64-row dense layer of 1024 x 1024 weights (4 MiB), with a bias, on device 0.
  testing::HandPlan hand(R"({"batch": 64, "input": [1024], "layers": [
      {"type": "dense", "units": 1024, "name": "fc"}]})",
                         1);
  const NodeId fc = hand.node("fc");
  const int x = hand.input(hand.node("input"), 0, 262'144);
  hand.compute(fc, 0, {x}, 16'777'216, 32'768);
  const int few_rows = hand.last_op();
  hand.op(few_rows).slice.batch = {0, 8};
  hand.compute(fc, 0, {x}, 134'217'728, 262'144);
  const int many_rows = hand.last_op();
  Machine machine = cpu_machine(100);
  machine.device.last_level_cache_mib = 2;
  machine.device.weight_stream = {{1, 1, 8}};
  Plan plan = hand.plan();
  const OpCostModel model(machine);
  // The weights fit (1 MiB of parameters on the device): the grid's price. 8 rows: 2·8·1024·1024 / 100e9 =
  // 167.77216 µs, the bias copy 2 · 8192 · 4 B / 20e9 = 3.2768 µs, 1 µs; 64 rows: 1342.17728 + 26.2144 + 1.
  plan.memory[0].params = 1 << 20;
  EXPECT_NEAR(model.op_seconds(plan, plan.op(few_rows)), (167.77216 + 3.2768 + 1) * 1e-6, 1e-12);
  EXPECT_NEAR(model.op_seconds(plan, plan.op(many_rows)), (1342.17728 + 26.2144 + 1) * 1e-6, 1e-12);
  // They do not (4 MiB and more against 2): 8 rows wait for the weights, 4,194,304 B / 8e9 = 524.288 µs;
  // 64 rows compute longer than that and keep the grid's price.
  plan.memory[0].params = 4 << 20;
  EXPECT_NEAR(model.op_seconds(plan, plan.op(few_rows)), (524.288 + 3.2768 + 1) * 1e-6, 1e-12);
  EXPECT_NEAR(model.op_seconds(plan, plan.op(many_rows)), (1342.17728 + 26.2144 + 1) * 1e-6, 1e-12);
  // The memoised pricing of a simulation says the same.
  OpCostModel::PlanPricing pricing(model, plan);
  EXPECT_NEAR(pricing.seconds(plan.op(few_rows)), (524.288 + 3.2768 + 1) * 1e-6, 1e-12);
  // Timed at 8 and 64 rows (8 and 2 GB/s): 64 rows now wait for their weights too, 4,194,304 B / 2e9 =
  // 2097.152 µs; 36 rows wait halfway between, 4,194,304 · (0.125 + 0.5) / 2 ns = 1310.72 µs against a grid of
  // 755.0 µs.
  machine.device.weight_stream = {{1, 1, 8, 8}, {1, 1, 2, 64}};
  const OpCostModel by_rows(machine);
  EXPECT_NEAR(by_rows.op_seconds(plan, plan.op(few_rows)), (524.288 + 3.2768 + 1) * 1e-6, 1e-12);
  EXPECT_NEAR(by_rows.op_seconds(plan, plan.op(many_rows)), (2097.152 + 26.2144 + 1) * 1e-6, 1e-12);
  plan.ops.at(static_cast<size_t>(many_rows)).slice.batch = {0, 36};
  EXPECT_NEAR(by_rows.op_seconds(plan, plan.op(many_rows)), (1310.72 + 36 * 1024 * 4 * 2 / 20e3 + 1) * 1e-6, 1e-12);
  plan.ops.at(static_cast<size_t>(many_rows)).slice.batch = {0, 64};
  machine.device.weight_stream = {{1, 1, 8}};
  // A machine that does not know its cache, or the stream rate, prices every product from the caches.
  machine.device.last_level_cache_mib = 0;
  EXPECT_NEAR(OpCostModel(machine).op_seconds(plan, plan.op(few_rows)), (167.77216 + 3.2768 + 1) * 1e-6, 1e-12);
  // A pooled device of two shares holds twice one share's cache: 4 MiB, so 4 MiB of weights fit.
  Machine pool = cpu_machine(100);
  pool.pooled = true;
  pool.device.gemm_rates = {{64, 1024, 1024, 100, 1}, {64, 1024, 1024, 100, 2}};
  pool.device.speedup = {{"default|shares=2", 2.0}};
  pool.device.last_level_cache_mib = 2;
  pool.device.weight_stream = {{2, 1, 8}};
  EXPECT_DOUBLE_EQ(machine_for_plan(pool, 1).device.last_level_cache_mib, 4);
  EXPECT_NEAR(OpCostModel(machine_for_plan(pool, 1)).op_seconds(plan, plan.op(few_rows)),
              (167.77216 + 3.2768 + 1) * 1e-6, 1e-12);
}

TEST(CpuKernelCost, AWeightStreamIsLinearInRowsBetweenTheRowCountsTimed) {
  // 8, 4 and 2 GB/s at 8, 64 and 256 rows: 0.125, 0.25 and 0.5 ns a byte.
  const std::vector<WeightStreamRate> rates = {{1, 1, 4, 64}, {1, 1, 8, 8}, {1, 1, 2, 256}, {1, 2, 1, 8}, {2, 1, 16, 8}};
  const WeightStreamCurve alone = WeightStreamCurve::of(rates, 1, 1);
  EXPECT_DOUBLE_EQ(alone.seconds_per_byte(1), 0.125e-9);
  EXPECT_DOUBLE_EQ(alone.seconds_per_byte(8), 0.125e-9);
  EXPECT_DOUBLE_EQ(alone.seconds_per_byte(36), 0.1875e-9);
  EXPECT_DOUBLE_EQ(alone.seconds_per_byte(64), 0.25e-9);
  EXPECT_DOUBLE_EQ(alone.seconds_per_byte(160), 0.375e-9);
  EXPECT_DOUBLE_EQ(alone.seconds_per_byte(4096), 0.5e-9);
  // Busy, one point: that point's rate at every row count; a pairing not timed busy takes its rate alone.
  EXPECT_DOUBLE_EQ(WeightStreamCurve::of(rates, 1, 2).seconds_per_byte(256), 1e-9);
  EXPECT_DOUBLE_EQ(WeightStreamCurve::of(rates, 2, 2).seconds_per_byte(64), 0.0625e-9);
  EXPECT_TRUE(WeightStreamCurve::of(rates, 4, 1).empty());
}

TEST(CpuKernelCost, AMachineFileCarriesItsKernelPassesWholeOrNotAtAll) {
  Machine machine = cpu_machine(100);
  machine.device.kernel_passes = round_pass_rates();
  const Machine again = parse_machine_text(machine_to_json(machine), "cpu.json");
  EXPECT_EQ(again.device.kernel_passes, machine.device.kernel_passes);
  EXPECT_EQ(machine_to_json(again), machine_to_json(machine));
  const auto refused = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& says) {
    nlohmann::json doc = nlohmann::json::parse(machine_to_json(machine));
    edit(doc["device"]["kernel_passes"]);
    try {
      parse_machine_text(doc.dump(), "passes.json");
      ADD_FAILURE() << "accepted: " << doc["device"]["kernel_passes"].dump();
    } catch (const InputError& error) {
      EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << error.what();
    }
  };
  refused([](nlohmann::json& p) { p["im2col"].erase(0); }, "needs the rate on 1 thread");
  refused([](nlohmann::json& p) { p["im2col"][1]["threads"] = 1; }, "1 threads are given twice");
  refused([](nlohmann::json& p) { p["activation_ns_per_value"]["gelu"] = 1; }, "not an activation");
  refused([](nlohmann::json& p) { p.erase("fill_ns_per_value"); }, "fill_ns_per_value");
  refused([](nlohmann::json& p) { p["im2col"] = nlohmann::json::array(); }, "non-empty array");
  refused([](nlohmann::json& p) { p["im2col"][0]["us_per_call"] = -1; }, "us_per_call");
  refused([](nlohmann::json& p) { p["pool_ns_per_window_value"] = {{"softmax", 1}}; }, "not a pooling kind");
  // The cache and the stream rates round-trip; a (threads, running) given twice is refused.
  machine.device.last_level_cache_mib = 16;
  machine.device.weight_stream = {{1, 1, 11.25}, {1, 2, 10.5}, {2, 1, 12.75}};
  const Machine streamed = parse_machine_text(machine_to_json(machine), "stream.json");
  EXPECT_EQ(streamed.device.last_level_cache_mib, 16);
  EXPECT_EQ(streamed.device.weight_stream, machine.device.weight_stream);
  nlohmann::json twice = nlohmann::json::parse(machine_to_json(machine));
  twice["device"]["weight_stream"][1]["running"] = 1;
  EXPECT_THROW(parse_machine_text(twice.dump(), "twice.json"), InputError);
  // The same pairing at another row count is another point; a file without rows timed 8 (older files).
  twice["device"]["weight_stream"][1]["rows"] = 64;
  EXPECT_EQ(parse_machine_text(twice.dump(), "rows.json").device.weight_stream[1].rows, 64);
  twice["device"]["weight_stream"][1].erase("rows");
  twice["device"]["weight_stream"][1]["running"] = 2;
  EXPECT_EQ(parse_machine_text(twice.dump(), "old.json").device.weight_stream[1].rows, 8);
  // The pools' rates are optional (files from before they were timed), and round-trip where given.
  machine.device.kernel_passes.pool_ns_per_window_value = {{"avgpool", 0.5}, {"maxpool", 0.375}};
  EXPECT_EQ(parse_machine_text(machine_to_json(machine), "pools.json").device.kernel_passes,
            machine.device.kernel_passes);
}

TEST(CpuKernelCost, ACellStepIsItsProductsAndItsTimedGateArithmetic) {
  const testing::HandPlan hand(R"({"batch": 4, "input": [2, 8], "layers": [
      {"type": "lstm", "hidden": 8, "layers": 1, "return_sequences": false, "name": "lstm"}]})",
                               1);
  Machine machine = cpu_machine(10);
  machine.device.cell_pointwise_ns = {{"lstm_cell", 20}};
  const OpCostModel model(machine);
  std::vector<double> steps;  // by time step
  for (NodeId id = 0; id < hand.graph().num_nodes(); ++id) {
    const OpNode& node = hand.graph().node(id);
    if (node.kind == OpKind::kLstmCell) steps.push_back(model.slice_seconds(hand.graph(), id, full_slice(node, {0, 4})));
  }
  ASSERT_EQ(steps.size(), 2u);
  // Gates 4 · 8 units = 32 wide. x·Wx 2·4·32·8 / 10e9 = 0.2048 µs; the bias
  // copy 4·32 floats, 2·128·4 / 20e9 = 0.0512 µs; the gate arithmetic 4 rows
  // · 8 units · 20 ns = 0.64 µs; one 1 µs op gap. The second step adds h·Wh,
  // another 0.2048 µs.
  EXPECT_NEAR(steps[0], (0.2048 + 0.0512 + 0.64 + 1) * 1e-6, 1e-15);
  EXPECT_NEAR(steps[1], (2 * 0.2048 + 0.0512 + 0.64 + 1) * 1e-6, 1e-15);
  // A cell kind without a timed gate arithmetic keeps its efficiency (here `default`, 0.25).
  machine.device.cell_pointwise_ns.clear();
  const NodeId first = [&] {
    for (NodeId id = 0; id < hand.graph().num_nodes(); ++id) {
      if (hand.graph().node(id).kind == OpKind::kLstmCell) return id;
    }
    return NodeId{0};
  }();
  const SliceCost cost = slice_cost(hand.graph(), first, full_slice(hand.graph().node(first), {0, 4}));
  EXPECT_NEAR(OpCostModel(machine).slice_seconds(hand.graph(), first, full_slice(hand.graph().node(first), {0, 4})),
              OpCostModel(machine).roofline_seconds("lstm_cell", cost.flops, cost.bytes_read + cost.bytes_written),
              1e-18);
}

TEST(CpuKernelCost, ADeviceOfSeveralThreadsTakesTheGridTimedOnThemWithoutASpeedup) {
  const testing::HandPlan hand(kConvOf64By64, 1);
  Machine pool = two_thread_pool();
  const Machine two_threads = machine_for_plan(pool, 1);
  ASSERT_EQ(two_threads.device.gemm_rates.size(), 1u);
  EXPECT_EQ(two_threads.device.gemm_rates[0].threads, 2);
  // The product 2·8·4096·27 / 50e9 = 35.38944 µs, split as timed; im2col's
  // 27 patch rows of 4096 pixels cut into chunks of at least 8 rows (32768
  // values), at most one per thread: 14 rows, 2·14·4096·4 / 20e9 = 22.9376
  // µs; the bias fill and the relu on one thread, 13.1072 µs each; no speedup.
  EXPECT_NEAR(full_slice_seconds(OpCostModel(two_threads), hand, "conv"),
              (35.38944 + 22.9376 + 2 * 13.1072 + 1) * 1e-6, 1e-12);
  // Without a two-thread grid: the one-thread price (im2col's 27 rows, 44.2368 µs) over the speedup.
  pool.device.gemm_rates.pop_back();
  const Machine one_thread_grid = machine_for_plan(pool, 1);
  EXPECT_EQ(one_thread_grid.device.gemm_rates.size(), 1u);
  EXPECT_NEAR(full_slice_seconds(OpCostModel(one_thread_grid), hand, "conv"),
              (35.38944 + 44.2368 + 2 * 13.1072 + 1) / 2 * 1e-6, 1e-12);
  // Without speedups a device of N shares is N times one: a one-thread grid scales with it, the N-thread grid
  // (timed on them) does not.
  Machine no_speedups = pool;
  no_speedups.device.speedup.clear();
  no_speedups.device.gemm_rates = {{64, 1024, 1024, 50, 1}, {64, 1024, 1024, 80, 2}};
  EXPECT_EQ(machine_for_plan(no_speedups, 1).device.gemm_rates,
            (std::vector<GemmRatePoint>{{64, 1024, 1024, 80, 2}}));
  no_speedups.device.gemm_rates.pop_back();
  EXPECT_EQ(machine_for_plan(no_speedups, 1).device.gemm_rates,
            (std::vector<GemmRatePoint>{{64, 1024, 1024, 100, 1}}));
  // A curve of several thread counts is the grid of the fewest.
  const GemmRateCurve curve({{4, 4, 4, 30, 2}, {4, 4, 4, 10, 1}});
  EXPECT_EQ(curve.threads(), 1);
  EXPECT_NEAR(curve.flops_per_second(4, 4, 4), 10e9, 1e-3);
}

TEST(CpuKernelCost, TheGridTimedWithEveryDeviceBusyPricesTheBusyTimeAndTheGridAloneTheTimeAlone) {
  testing::HandPlan hand(R"({"batch": 64, "input": [1024], "layers": [
      {"type": "dense", "units": 1024, "activation": "relu", "name": "fc"}]})",
                         2);
  const NodeId fc = hand.node("fc");
  const int x = hand.input(hand.node("input"), 0, 262'144);
  hand.compute(fc, 0, {x}, 134'217'728, 262'144);
  // Two one-thread devices: the product at 100 GFLOP/s alone, 50 with the other busy; a fitted
  // contention of 3 that the busy grid overrides for the products.
  Machine pool = cpu_machine(100);
  pool.pooled = true;
  pool.device.gemm_rates = {{64, 1024, 1024, 100, 1, 1}, {64, 1024, 1024, 50, 1, 2}};
  pool.device.contention = {{"default", 3.0}};
  const OpCostModel model(machine_for_plan(pool, 2));
  EXPECT_TRUE(model.contended());
  const PlanOp& op = hand.plan().op(hand.last_op());
  // Busy: 2·64·1024·1024 / 50e9 = 2684.35456 µs + the bias copy and relu (2 · 26.2144 µs) + 1 µs.
  const double busy = model.op_seconds(hand.plan(), op);
  EXPECT_NEAR(busy, (2684.35456 + 2 * 26.2144 + 1) * 1e-6, 1e-12);
  // Alone: the product at 100 GFLOP/s, 1342.17728 µs.
  EXPECT_NEAR(model.op_alone_seconds(hand.plan(), op, OpKind::kDense, busy), (1342.17728 + 2 * 26.2144 + 1) * 1e-6,
              1e-12);
  // A plan on fewer devices than the grid was timed busy with keeps the grid alone only, and its contention.
  Machine three = pool;
  three.devices = 3;
  three.device.gemm_rates = {{64, 1024, 1024, 100, 1, 1}, {64, 1024, 1024, 50, 1, 3}};
  EXPECT_EQ(machine_for_plan(three, 2).device.gemm_rates.size(), 1u);
  const OpCostModel fitted(machine_for_plan(three, 2));
  EXPECT_NEAR(fitted.op_seconds(hand.plan(), op), 3 * (1342.17728 + 2 * 26.2144 + 1) * 1e-6, 1e-12);
}

TEST(CpuKernelCost, AMachineFileCarriesItsGemmRates) {
  Machine machine = cpu_machine(100);
  machine.device.gemm_rates = two_by_two_by_two();
  for (GemmRatePoint point : two_by_two_by_two()) {
    point.threads = 2;
    machine.device.gemm_rates.push_back(point);
  }
  for (GemmRatePoint point : two_by_two_by_two()) {
    point.running = 2;
    machine.device.gemm_rates.push_back(point);
  }
  machine.device.cell_pointwise_ns = {{"gru_cell", 16.25}, {"lstm_cell", 29.5}};
  const Machine again = parse_machine_text(machine_to_json(machine), "cpu.json");
  EXPECT_EQ(again.device.gemm_rates, machine.device.gemm_rates);
  EXPECT_EQ(again.device.cell_pointwise_ns, machine.device.cell_pointwise_ns);
  EXPECT_EQ(machine_to_json(again), machine_to_json(machine));
  // A grid with a hole is refused, naming the shape.
  nlohmann::json doc = nlohmann::json::parse(machine_to_json(machine));
  doc["device"]["gemm_rates"].erase(3);
  try {
    parse_machine_text(doc.dump(), "holed.json");
    FAIL() << "a gemm grid with a hole was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("gemm_rates"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("is missing"), std::string::npos) << error.what();
  }
  doc["device"]["gemm_rates"] = nlohmann::json::array({{{"m", 4}, {"n", 4}, {"k", 4}, {"GFLOPs", 1}, {"x", 1}}});
  EXPECT_THROW(parse_machine_text(doc.dump(), "extra.json"), InputError);
  doc = nlohmann::json::parse(machine_to_json(machine));
  doc["device"]["cell_pointwise_ns"]["dense"] = 3;
  EXPECT_THROW(parse_machine_text(doc.dump(), "not_a_cell.json"), InputError);
}

TEST(CpuKernelCost, ACpuCalibrationsGridBecomesTheMachinesCurve) {
  calibration::CalibrationResult result = testing::hand_calibration();
  result.device_name = "Test CPU";
  CalibratedMachineOptions options;
  options.name = "host";
  // hand_calibration's square products do not form a grid: efficiencies as before.
  const Machine before = cpu_machine_from_calibration(result, options);
  EXPECT_TRUE(before.device.gemm_rates.empty());
  EXPECT_TRUE(before.device.efficiency.count("dense"));
  result.gemm.clear();
  for (const GemmRatePoint& p : two_by_two_by_two()) {
    result.gemm.push_back({p.m, p.n, p.k, "fp32", 2.0 * p.m * p.n * p.k / (p.gflops * 1e9), p.gflops * 1e9});
  }
  const Machine machine = cpu_machine_from_calibration(result, options);
  ASSERT_EQ(machine.device.gemm_rates.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(machine.device.gemm_rates[i].gflops, two_by_two_by_two()[i].gflops, 1e-9);
  // The curve prices the products: their fitted efficiencies would override it.
  EXPECT_FALSE(machine.device.efficiency.count("dense"));
  EXPECT_FALSE(machine.device.efficiency.count("conv2d"));
  EXPECT_TRUE(machine.device.cell_pointwise_ns.empty());
  // With the cells' gate arithmetic timed, the cells too (in ns), and the raw file keeps it.
  result.cell_pointwise_seconds_per_unit = {{"lstm_cell", 30e-9}};
  const Machine cells = cpu_machine_from_calibration(result, options);
  EXPECT_NEAR(cells.device.cell_pointwise_ns.at("lstm_cell"), 30, 1e-9);
  EXPECT_FALSE(cells.device.efficiency.count("lstm_cell"));
  const auto raw = calibration::parse_calibration_result(calibration::calibration_to_json(result), "raw.json");
  EXPECT_EQ(raw.cell_pointwise_seconds_per_unit, result.cell_pointwise_seconds_per_unit);
  EXPECT_EQ(raw.gemm.size(), result.gemm.size());
  EXPECT_NE(machine.comment.find("gemm_rates: sgemm rates at 8 shapes, a full grid of m, n, k on each of 1 thread(s)"),
            std::string::npos);
  EXPECT_FALSE(machine.device.kernel_passes.measured());
  // The kernels' passes, timed in seconds, become ns and µs; the raw file keeps them.
  result.kernel_passes.fill_seconds_per_value = 0.5e-9;
  result.kernel_passes.activation_seconds_per_value = {{"relu", 0.25e-9}, {"tanh", 4e-9}};
  result.kernel_passes.im2col = {{1, 2e-9, 3e-6}, {2, 1e-9, 5e-6}};
  const Machine passes = cpu_machine_from_calibration(result, options);
  ASSERT_TRUE(passes.device.kernel_passes.measured());
  EXPECT_NEAR(passes.device.kernel_passes.fill_ns_per_value, 0.5, 1e-12);
  EXPECT_NEAR(passes.device.kernel_passes.activation_ns_per_value.at("tanh"), 4, 1e-12);
  ASSERT_EQ(passes.device.kernel_passes.im2col.size(), 2u);
  EXPECT_EQ(passes.device.kernel_passes.im2col[1].threads, 2);
  EXPECT_NEAR(passes.device.kernel_passes.im2col[1].ns_per_value, 1, 1e-12);
  EXPECT_NEAR(passes.device.kernel_passes.im2col[1].us_per_call, 5, 1e-12);
  const auto raw_passes = calibration::parse_calibration_result(calibration::calibration_to_json(result), "raw.json");
  EXPECT_EQ(raw_passes.kernel_passes.im2col.size(), 2u);
  EXPECT_EQ(raw_passes.kernel_passes.activation_seconds_per_value, result.kernel_passes.activation_seconds_per_value);
  EXPECT_DOUBLE_EQ(raw_passes.kernel_passes.im2col[0].seconds_per_call, 3e-6);
  // The cache, one share's part of it, and the stream rates in GB/s; both round-trip in the raw file.
  result.last_level_cache_bytes = 32 << 20;
  result.weight_stream = {{1, 1, 11e9}, {1, 2, 10e9}};
  const Machine stream = cpu_machine_from_calibration(result, options);
  EXPECT_NEAR(stream.device.last_level_cache_mib, 32.0 / stream.devices, 1e-12);
  EXPECT_EQ(stream.device.weight_stream, (std::vector<WeightStreamRate>{{1, 1, 11}, {1, 2, 10}}));
  const auto raw_stream = calibration::parse_calibration_result(calibration::calibration_to_json(result), "raw.json");
  EXPECT_EQ(raw_stream.last_level_cache_bytes, 32 << 20);
  ASSERT_EQ(raw_stream.weight_stream.size(), 2u);
  EXPECT_EQ(raw_stream.weight_stream[1].running, 2);
  EXPECT_DOUBLE_EQ(raw_stream.weight_stream[1].bytes_per_second, 10e9);
  // Rows round-trip; a cache the products were measured to keep, smaller than the one reported, is the one
  // each share gets part of; a larger one is not (the reported cache bounds it).
  result.weight_stream = {{1, 1, 11e9, 8}, {1, 1, 5e9, 64}};
  result.effective_cache_bytes = 12 << 20;
  const Machine measured = cpu_machine_from_calibration(result, options);
  EXPECT_NEAR(measured.device.last_level_cache_mib, 12.0 / measured.devices, 1e-12);
  EXPECT_EQ(measured.device.weight_stream, (std::vector<WeightStreamRate>{{1, 1, 11, 8}, {1, 1, 5, 64}}));
  const auto raw_rows = calibration::parse_calibration_result(calibration::calibration_to_json(result), "raw.json");
  EXPECT_EQ(raw_rows.effective_cache_bytes, 12 << 20);
  EXPECT_EQ(raw_rows.weight_stream[1].rows, 64);
  result.effective_cache_bytes = 64 << 20;
  EXPECT_NEAR(cpu_machine_from_calibration(result, options).device.last_level_cache_mib, 32.0 / measured.devices,
              1e-12);
  result.effective_cache_bytes = 0;
  // Timed pools leave their fitted efficiencies to their gradients, which ran like them.
  result.op_times.push_back({"maxpool:b8:c64:h56:w56:k3x3:s1x1:p1x1", "x/pool", 0, 12'845'056, 2e-3, 2e-3, 2e-3});
  const Machine fitted = cpu_machine_from_calibration(result, options);
  ASSERT_TRUE(fitted.device.efficiency.count("maxpool"));
  EXPECT_FALSE(fitted.device.efficiency.count("maxpool_grad"));
  result.kernel_passes.pool_seconds_per_window_value = {{"maxpool", 0.4e-9}};
  const Machine pools = cpu_machine_from_calibration(result, options);
  EXPECT_NEAR(pools.device.kernel_passes.pool_ns_per_window_value.at("maxpool"), 0.4, 1e-12);
  EXPECT_FALSE(pools.device.efficiency.count("maxpool"));
  EXPECT_NEAR(pools.device.efficiency.at("maxpool_grad"), fitted.device.efficiency.at("maxpool"), 1e-12);
  EXPECT_EQ(calibration::parse_calibration_result(calibration::calibration_to_json(result), "raw.json")
                .kernel_passes.pool_seconds_per_window_value,
            result.kernel_passes.pool_seconds_per_window_value);
  // The peak is the best rate of the grid.
  EXPECT_NEAR(machine.device.peak_tflops.at("fp32"), 66e-3, 1e-12);
}

}  // namespace
}  // namespace cpu_kernel_cost_test
}  // namespace splitscope
