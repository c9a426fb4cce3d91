// Products priced on the units of the plan's precision, and every op's bytes
// at its stored size: a dense layer's simulated time at fp16 and fp32 in
// closed form from the machine's peaks (docs/precision.md).

#include <gtest/gtest.h>

#include "hand_plan.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "partitioners/partitioner.hpp"
#include "sim/costs/bias_activation.hpp"
#include "sim/costs/gemm_efficiency.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {
namespace precision_pricing_test {
namespace {

using testing::switch_topology;
using testing::test_machine;

// dense 1024 -> 1024 over a batch of 64 (op_cost_model_test's): 134,217,728
// FLOPs; reads 64·1024 + 1024·1024 + 1024 values, writes 64·1024:
// 1,180,672 values, 4,722,688 B in float32, 2,361,344 B in fp16.
const char* const kNet = R"({"batch": 64, "input": [1024], "layers": [
    {"type": "dense", "units": 1024, "name": "fc"}, {"type": "relu", "name": "act"}]})";
constexpr double kFlops = 134'217'728;
constexpr double kValues = 1'180'672;
constexpr double kTolUs = 1e-6;

/// 10 TFLOP/s on the CUDA cores, 80 on fp16 tensor cores, 1000 GB/s, no launches; the plain roofline.
Machine machine_at(const std::string& math) {
  Machine machine = test_machine(1, switch_topology(10, 0), 10, 0);
  machine.device.peak_tflops["fp16"] = 80;
  machine.device.matrix_math = math;
  machine.device.efficiency = {{"dense", 1.0}, {"default", 0.5}};
  return machine;
}

double compute_us(const Timeline& timeline, const Plan& plan, const std::string& node) {
  for (const Span& span : timeline.spans) {
    if (span.lane == Lane::kCompute && span.op >= 0 && plan.graph->node(plan.op(span.op).node).name == node) {
      return span.duration_us();
    }
  }
  throw std::out_of_range("no span of " + node);
}

std::shared_ptr<const Graph> precision_graph(const char* text) {
  return std::make_shared<const Graph>(lower(parse_model_text(text, "precision.json")));
}

Plan single_at(Precision precision) {
  PartitionOptions options;
  options.precision = precision;
  return make_plan(*make_partitioner("single"), precision_graph(kNet), options);
}

TEST(PrecisionPricing, ProductOnTheCudaCoresAtFp32AndTensorCoresAtFp16) {
  const Plan fp32 = single_at(Precision::kFp32);
  const Plan fp16 = single_at(Precision::kFp16);
  // fp32: max(134,217,728 / 10e12, 4,722,688 / 1e12) s = 13.4217728 µs, compute-bound.
  EXPECT_NEAR(compute_us(simulate(fp32, machine_at("fp32")), fp32, "fc"), kFlops / 10e12 * 1e6, kTolUs);
  // fp16: max(134,217,728 / 80e12, 2,361,344 / 1e12) s = max(1.678, 2.361) µs: now memory-bound, at half the bytes.
  const double fp16_us = compute_us(simulate(fp16, machine_at("fp16")), fp16, "fc");
  EXPECT_NEAR(fp16_us, 2 * kValues / 1e12 * 1e6, kTolUs);
  EXPECT_GT(fp16_us, kFlops / 80e12 * 1e6);
}

TEST(PrecisionPricing, ElementwiseOpsStreamTheirStoredBytes) {
  // relu over 64·1024 values, read and written: 524,288 B in float32 at
  // half the bandwidth (default efficiency 0.5), 262,144 B in fp16.
  const Plan fp32 = single_at(Precision::kFp32);
  const Plan fp16 = single_at(Precision::kFp16);
  EXPECT_NEAR(compute_us(simulate(fp32, machine_at("fp32")), fp32, "act"), 524'288 / 1e12 / 0.5 * 1e6, kTolUs);
  EXPECT_NEAR(compute_us(simulate(fp16, machine_at("fp16")), fp16, "act"), 262'144 / 1e12 / 0.5 * 1e6, kTolUs);
}

TEST(PrecisionPricing, DatasheetRulesCountTheStoredBytes) {
  // A dense layer's bias-and-activation pass (bias_activation.hpp) over
  // 64·1024 outputs and 1024 bias values: reads and writes each output and
  // reads the bias, 2·65,536 + 1,024 values, at the achieved DRAM rate.
  DeviceFacts facts;
  facts.vector_flops_per_second = 1e15;  // memory-bound
  facts.dram_bytes_per_second = 0.9e12;
  facts.launch_seconds = 0;
  const BiasActivation pass{64 * 1024, 1024, true, true};
  constexpr double kPassValues = 2.0 * 65'536 + 1'024;
  EXPECT_NEAR(bias_activation_seconds(facts, pass), kPassValues * 4 / 0.9e12, 1e-15);
  facts.element_bytes = 2;
  EXPECT_NEAR(bias_activation_seconds(facts, pass), kPassValues * 2 / 0.9e12, 1e-15);
  // A product's own bytes when the caller gives none: A, B and C at the stored size.
  EXPECT_EQ(gemm_bytes({64, 1024, 1024, 1}, 2), 2 * (64 * 1024 + 1024 * 1024 + 64 * 1024));
}

}  // namespace
}  // namespace precision_pricing_test
}  // namespace splitscope
