// The host-side half of calibration: fits, medians, which op slices get
// timed, single-op plans, and the JSON written.

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "exec/cuda/calibration.hpp"
#include "exec/cuda/plan_compiler.hpp"
#include "ir/op_signature.hpp"
#include "program_interpreter.hpp"
#include "reference_network.hpp"

namespace splitscope::testing {
namespace calibration_report_test {
namespace {

using namespace gpu;

TEST(Calibration, FitLineRecoversAnExactLine) {
  // y = 3 + 2x through (1, 5), (2, 7), (3, 9).
  const LinearFit fit = fit_line({1, 2, 3}, {5, 7, 9});
  EXPECT_NEAR(fit.intercept, 3.0, 1e-12);
  EXPECT_NEAR(fit.slope, 2.0, 1e-12);
  const LinearFit none = fit_line({1}, {5});
  EXPECT_EQ(none.slope, 0.0);
}

TEST(Calibration, CopySeriesFitGivesLatencyAndBandwidth) {
  // t = 10 µs + bytes / 20 GB/s at 4 KiB .. 64 MiB.
  CopySeries series;
  for (int64_t bytes = 4096; bytes <= (int64_t{64} << 20); bytes *= 4) {
    const double seconds = 10e-6 + static_cast<double>(bytes) / 20e9;
    series.points.push_back({bytes, seconds, static_cast<double>(bytes) / seconds});
  }
  fit_copy_series(series);
  EXPECT_NEAR(series.latency_seconds, 10e-6, 1e-9);
  EXPECT_NEAR(series.bandwidth_bytes_per_second, 20e9, 20e9 * 1e-6);
}

TEST(Calibration, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(median({3, 1, 2}), 2.0);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({}), 0.0);
}

TEST(Calibration, GraphSamplesCoverTheSplitsOnceEach) {
  const auto graph = zoo_graph("mlp-small");  // batch 8, 64 -> 4 x dense 64 -> dense 10 -> softmax
  const auto samples = op_samples_from_graph(graph, {2}, {2});
  std::set<std::string> signatures;
  for (const OpSample& sample : samples) {
    EXPECT_TRUE(signatures.insert(sample.signature).second) << "duplicate " << sample.signature;
    EXPECT_EQ(sample.signature, op_signature(*graph, sample.node, sample.slice));
  }
  for (const char* expected : {"dense:b8:k64:n64",    // whole
                               "dense:b8:k64:n32",    // half the units (vertical)
                               "dense:b8:k32:n64",    // half the inputs (tensor's row split)
                               "dense:b4:k64:n64",    // half the batch (pipeline)
                               "dense:b8:k64:n10", "dense:b8:k64:n5", "softmax:b8:n10", "softmax:b4:n10"}) {
    EXPECT_TRUE(signatures.count(expected)) << expected;
  }
  // Softmax is not split along its channels.
  EXPECT_FALSE(signatures.count("softmax:b8:n5"));
}

TEST(Calibration, PlanSamplesAreTheDistinctComputeSlices) {
  const auto graph = zoo_graph("mlp-small");
  const std::vector<Plan> plans{make_plan(graph, "single", 1), make_plan(graph, "vertical", 2)};
  const auto samples = op_samples_from_plans(plans);
  std::set<std::string> expected;
  for (const Plan& plan : plans) {
    for (const PlanOp& op : plan.ops) {
      if (op.role == OpRole::kCompute) expected.insert(op_signature(*graph, op.node, op.slice));
    }
  }
  EXPECT_EQ(samples.size(), expected.size());
}

TEST(Calibration, SingleOpPlanComputesTheOp) {
  // One dense layer: its single-op plan's output is the network's output.
  const auto graph = graph_from_text(R"({"batch": 3, "input": [7], "layers": [
      {"type": "dense", "units": 5, "activation": "tanh"}]})");
  const OpSample sample{graph, 1, full_slice(graph->node(1), {0, 3}), ""};
  const Plan plan = single_op_plan(sample);
  ASSERT_EQ(plan.ops.size(), 1u);
  ASSERT_EQ(plan.inputs.size(), 1u);
  EXPECT_EQ(plan.ops[0].flops, 2 * 7 * 5 * 3);
  const Interpretation run = interpret(plan, compile_plan(plan, CompileOptions{}), 6);
  EXPECT_LT(relative_error(run.output, reference_output(*graph, 6)), 1e-6);
}

TEST(Calibration, ConvRatesComeFromTheConvolutionsOpTimes) {
  const std::vector<OpTime> times{
      {"dense:b8:k64:n64", "mlp-small/fc1", 65536, 0, 1e-5, 1e-5, 1e-5},
      {"conv2d:b4:c3:h16:w16:f8:k3x3:s1x1:p1x1:g1", "cnn-small/conv1", 442368, 0, 2e-5, 2e-5, 2e-5},
  };
  const auto rates = conv_rates(times);
  ASSERT_EQ(rates.size(), 1u);
  EXPECT_EQ(rates[0].signature, times[1].signature);
  EXPECT_DOUBLE_EQ(rates[0].flops_per_second, 442368 / 2e-5);  // 2·8·16·16·3·3·3·4 FLOPs in 20 µs
}

TEST(Calibration, JsonNamesEveryFieldWithItsUnit) {
  CalibrationResult result;
  result.date = "2026-01-01T00:00:00Z";
  result.device_name = "Test GPU";
  result.sm_count = 132;
  result.memory_bytes = 80LL << 30;
  result.dtype = "fp32";
  result.gemm.push_back({64, 8192, 8192, "fp32", 2e-4, 2.0 * 64 * 8192 * 8192 / 2e-4});
  CopySeries series;
  series.kind = "host_staged";
  series.points.push_back({4096, 1e-5, 4096 / 1e-5});
  series.latency_seconds = 9e-6;
  series.bandwidth_bytes_per_second = 2.5e10;
  result.copies.push_back(series);
  result.launch = {1000, 2e-6, 1.5e-6};
  result.lane_handoff = {40, 3e-6};
  result.op_times.push_back({"dense:b64:k8192:n4096", "mlp/fc1", 4294967296, 135266304, 1e-4, 9e-5, 2e-4});
  result.notes.push_back("peer copies not measured: this machine has one GPU");
  result.conv.push_back({"conv2d:b4:c3:h16:w16:f8:k3x3:s1x1:p1x1:g1", 2e-5, 2.21184e10});
  const auto json = nlohmann::json::parse(calibration_to_json(result));
  EXPECT_EQ(json["schema"], "splitscope.calibration/1");
  EXPECT_EQ(json["device"]["sm_count"], 132);
  EXPECT_DOUBLE_EQ(json["gemm"][0]["flops_per_second"].get<double>(), 2.0 * 64 * 8192 * 8192 / 2e-4);
  EXPECT_EQ(json["copies"][0]["kind"], "host_staged");
  EXPECT_DOUBLE_EQ(json["copies"][0]["bandwidth_bytes_per_second"].get<double>(), 2.5e10);
  EXPECT_DOUBLE_EQ(json["copies"][0]["points"][0]["seconds"].get<double>(), 1e-5);
  EXPECT_DOUBLE_EQ(json["launch"]["host_seconds_per_launch"].get<double>(), 2e-6);
  EXPECT_EQ(json["lane_handoff"]["samples"], 40);
  EXPECT_DOUBLE_EQ(json["lane_handoff"]["seconds"].get<double>(), 3e-6);
  const CalibrationResult back = calibration::parse_calibration_result(calibration_to_json(result), "back.json");
  EXPECT_EQ(back.lane_handoff.samples, 40);
  EXPECT_DOUBLE_EQ(back.lane_handoff.seconds, 3e-6);
  // A GPU calibration has no sleeping workers: the field is left out, and reads back unmeasured.
  EXPECT_FALSE(json.contains("parked_handoff"));
  EXPECT_EQ(back.parked_handoff.samples, 0);
  result.parked_handoff = {9, 8e-5, 5e-5};
  const CalibrationResult parked = calibration::parse_calibration_result(calibration_to_json(result), "parked.json");
  EXPECT_EQ(parked.parked_handoff.samples, 9);
  EXPECT_DOUBLE_EQ(parked.parked_handoff.seconds, 8e-5);
  EXPECT_DOUBLE_EQ(parked.parked_handoff.spin_seconds, 5e-5);
  EXPECT_EQ(json["op_times"][0]["signature"], "dense:b64:k8192:n4096");
  EXPECT_DOUBLE_EQ(json["op_times"][0]["seconds"].get<double>(), 1e-4);
  EXPECT_EQ(json["notes"].size(), 1u);
  EXPECT_DOUBLE_EQ(json["conv"][0]["flops_per_second"].get<double>(), 2.21184e10);
}

}  // namespace
}  // namespace calibration_report_test
}  // namespace splitscope::testing
