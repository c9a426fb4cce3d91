// Machines from GPU calibrations: every field from the hand-made calibration's
// numbers by the arithmetic in the comments; the file round trip; the
// simulator pricing the measured ops from the table and the others by the
// roofline; and recorded calibrations read back.

#include "sim/machine/calibrated_machine.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "../cli/cli_test_support.hpp"
#include "calibration/calibration_file.hpp"
#include "calibration_fixture.hpp"
#include "hand_plan.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/op_signature.hpp"
#include "ir/zoo.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace calibrated_machine_test {
namespace {

using testing::hand_calibration;
using testing::hand_calibration_with_peers;

constexpr double kRelative = 1e-12;

CalibratedMachineOptions options_for(CalibratedLink link, int devices = 4) {
  CalibratedMachineOptions options;
  options.name = "test-gpu";
  options.link = link;
  options.devices = devices;
  options.calibration_file = "reports/test-gpu/calibration.json";
  options.source = "hand.calibration.json";
  return options;
}

void expect_close(double actual, double expected) { EXPECT_NEAR(actual, expected, std::abs(expected) * kRelative); }

TEST(CalibratedMachine, DeviceFieldsFollowTheMeasurements) {
  const Machine machine = machine_from_calibration(hand_calibration(), options_for(CalibratedLink::kVirtualDevice));
  const DeviceSpec& device = machine.device;
  EXPECT_EQ(machine.name, "test-gpu");
  EXPECT_EQ(device.name, "Test GPU");
  // The best GEMM rate of each math: fp32 max(40, 50), tf32 max(300, 400), bf16 800 TFLOP/s.
  ASSERT_EQ(device.peak_tflops.size(), 3u);
  expect_close(device.peak_tflops.at("fp32"), 50);
  expect_close(device.peak_tflops.at("tf32"), 400);
  expect_close(device.peak_tflops.at("bf16"), 800);
  EXPECT_EQ(device.matrix_math, "fp32");  // the op times' dtype
  // A device-to-device copy at 1.5e12 B/s reads and writes every byte: 3e12 B/s = 3000 GB/s of memory.
  expect_close(device.memory_bandwidth_gbps, 3000);
  expect_close(device.memory_gib, 80);         // 80 · 2^30 bytes
  expect_close(device.launch_overhead_us, 2);  // GPU time per empty kernel, not the host's 3 µs
}

// The host-issue probe's time per step is the machine's host lane (sim/costs/host_issue.hpp); a raw file
// without it (older GPU calibrations, every cpu one) leaves the lane off.
TEST(CalibratedMachine, TheHostIssueProbeBecomesTheHostLane) {
  calibration::CalibrationResult result = hand_calibration();
  EXPECT_EQ(machine_from_calibration(result, options_for(CalibratedLink::kVirtualDevice)).device.host_issue_us, 0.0);
  result.host_issue.steps = 64;
  result.host_issue.seconds_per_step = 17.5e-6;
  expect_close(machine_from_calibration(result, options_for(CalibratedLink::kVirtualDevice)).device.host_issue_us, 17.5);
  // The raw file carries it.
  const calibration::CalibrationResult read =
      calibration::parse_calibration_result(calibration::calibration_to_json(result), "test");
  EXPECT_EQ(read.host_issue.steps, 64);
  EXPECT_DOUBLE_EQ(read.host_issue.seconds_per_step, 17.5e-6);
}

TEST(CalibratedMachine, EfficiencyPerKindMakesTheRooflineMatchTheMeasuredTotal) {
  const Machine machine = machine_from_calibration(hand_calibration(), options_for(CalibratedLink::kVirtualDevice));
  const auto& efficiency = machine.device.efficiency;
  // Rooflines at 50 TFLOP/s and 3e12 B/s; measured less the 2 µs launch:
  // dense: (1e9/50e12 = 20 µs + 5e8/50e12 = 10 µs) / ((42 - 2) + (22 - 2) µs) = 30/60
  expect_close(efficiency.at("dense"), 0.5);
  // conv2d: 2e9/50e12 = 40 µs / (52 - 2) µs
  expect_close(efficiency.at("conv2d"), 0.8);
  // relu: 6e6/3e12 = 2 µs / (6 - 2) µs; softmax: 9e6/3e12 = 3 µs / (5.75 - 2) µs
  expect_close(efficiency.at("relu"), 0.5);
  expect_close(efficiency.at("softmax"), 0.8);
  // default, over the element-wise ops (relu, softmax; the flatten moves
  // nothing and the tanh was timed at 0): (2 + 3) / (4 + 3.75)
  expect_close(efficiency.at("default"), 5 / 7.75);
  // epilogue, over the activations measured (relu alone): 2 / 4
  expect_close(efficiency.at("epilogue"), 0.5);
  EXPECT_EQ(efficiency.size(), 6u);  // nothing for kinds not measured: they take `default`
  EXPECT_NE(machine.comment.find("dense 0.5 over 2 ops"), std::string::npos) << machine.comment;
}

TEST(CalibratedMachine, EfficiencyAboveTheRooflineIsHeldAtOneAndLaunchBoundKindsAreLeftOut) {
  calibration::CalibrationResult result = hand_calibration();
  // avgpool: 9e6/3e12 = 3 µs of roofline measured in 2 + 1 µs: 3 > 1, held at 1.
  result.op_times.push_back({"avgpool:b4:c8:h8:w8:k2x2:s2x2", "cnn/pool", 0, 9'000'000, 3e-6, 3e-6, 3e-6});
  // maxpool: measured in 1.5 µs, within the 2 µs launch: no efficiency can be told.
  result.op_times.push_back({"maxpool:b4:c8:h8:w8:k2x2:s2x2", "cnn/pool", 0, 3000, 1.5e-6, 1.5e-6, 1.5e-6});
  const Machine machine = machine_from_calibration(result, options_for(CalibratedLink::kVirtualDevice));
  EXPECT_EQ(machine.device.efficiency.at("avgpool"), 1.0);
  EXPECT_EQ(machine.device.efficiency.count("maxpool"), 0u);
  EXPECT_NE(machine.comment.find("avgpool 1 over 1 ops (held at 1)"), std::string::npos) << machine.comment;
  EXPECT_NE(machine.comment.find("maxpool: none"), std::string::npos) << machine.comment;
  // avgpool joins the element-wise pool; maxpool, measured within the launch, joins none (its
  // 1.5 - 2 = -0.5 µs would inflate it): (2 + 3 + 3) / (4 + 3.75 + 1) µs.
  expect_close(machine.device.efficiency.at("default"), (2 + 3 + 3) / (4 + 3.75 + 1));
  // And both keep their measured times.
  expect_close(machine.calibration.op_times_us.at("maxpool:b4:c8:h8:w8:k2x2:s2x2"), 1.5);
}

TEST(CalibratedMachine, OpsWhoseRooflineIsShorterThanALaunchFitNoRate) {
  calibration::CalibrationResult result = hand_calibration();
  // A tiny tanh: 3e5 B / 3e12 B/s = 0.1 µs of roofline, under the 2 µs launch,
  // measured in 6 µs. Its 4 µs beyond the launch are a kernel's fixed cost:
  // as a rate it would be 0.1/4 = 0.025 of the roofline, and price a 2 MB
  // epilogue 40 times too slow. It joins no fit.
  result.op_times.push_back({"tanh:b4:n64", "rnn/tanh", 0, 300'000, 6e-6, 6e-6, 6e-6});
  const Machine machine = machine_from_calibration(result, options_for(CalibratedLink::kVirtualDevice));
  EXPECT_EQ(machine.device.efficiency.count("tanh"), 0u);
  EXPECT_NE(machine.comment.find("tanh: none (its 1 ops are launch-bound)"), std::string::npos) << machine.comment;
  // The pools keep the fits of the hand calibration alone (see above).
  expect_close(machine.device.efficiency.at("epilogue"), 0.5);
  expect_close(machine.device.efficiency.at("default"), 5 / 7.75);
  expect_close(machine.calibration.op_times_us.at("tanh:b4:n64"), 6);
}

TEST(CalibratedMachine, OpTableHoldsEveryPositiveMeasuredTimeInMicroseconds) {
  const Machine machine = machine_from_calibration(hand_calibration(), options_for(CalibratedLink::kVirtualDevice));
  const auto& table = machine.calibration.op_times_us;
  EXPECT_EQ(table.size(), 6u);  // 7 op times, the tanh timed at 0 left out
  expect_close(table.at("dense:b64:k8192:n8192"), 42);
  expect_close(table.at("dense:b64:k8192:n4096"), 22);
  expect_close(table.at("conv2d:b4:c64:h32:w32:f64:k3x3:s1x1:p1x1:g1"), 52);
  expect_close(table.at("relu:b64:n4096"), 6);
  expect_close(table.at("softmax:b64:n1000"), 5.75);
  expect_close(table.at("flatten:b4:n512"), 1);
  EXPECT_EQ(table.count("tanh:b64:n10"), 0u);
  EXPECT_NE(machine.calibration.comment.find("6 op times measured on Test GPU in fp32"), std::string::npos);
}

TEST(CalibratedMachine, VirtualLinksAreOneSharedBusAtTheCopySeriesRates) {
  const Machine device_link =
      machine_from_calibration(hand_calibration(), options_for(CalibratedLink::kVirtualDevice, 4));
  EXPECT_EQ(device_link.devices, 4);
  EXPECT_FALSE(device_link.pooled);
  EXPECT_EQ(device_link.topology.kind, TopologyKind::kHostStaged);
  EXPECT_EQ(device_link.topology.devices_per_bus, 4);
  expect_close(device_link.topology.bus.bandwidth_gbps, 1500);  // the copy rate, 1.5e12 B/s
  expect_close(device_link.topology.bus.latency_us, 5);

  const Machine host_link = machine_from_calibration(hand_calibration(), options_for(CalibratedLink::kVirtualHost, 8));
  EXPECT_EQ(host_link.devices, 8);
  EXPECT_EQ(host_link.topology.kind, TopologyKind::kHostStaged);
  EXPECT_EQ(host_link.topology.devices_per_bus, 8);
  expect_close(host_link.topology.bus.bandwidth_gbps, 25);  // device -> host -> device, both hops
  expect_close(host_link.topology.bus.latency_us, 20);
  // The devices are the same either way.
  EXPECT_EQ(device_link.device.peak_tflops, host_link.device.peak_tflops);
  EXPECT_EQ(device_link.device.efficiency, host_link.device.efficiency);
  EXPECT_EQ(device_link.calibration.op_times_us, host_link.calibration.op_times_us);
}

double copy_span_us(const Timeline& timeline, int op) {
  for (const Span& span : timeline.spans) {
    if (span.op == op && span.lane == Lane::kCopyIn) return span.duration_us();
  }
  ADD_FAILURE() << "no copy span of op " << op;
  return 0;
}

TEST(CalibratedMachine, ALoneCopyTakesWhatTheSeriesMeasuredAndConcurrentOnesShare) {
  const char* const network =
      R"({"batch": 4, "input": [16], "layers": [{"type": "dense", "units": 16, "name": "fc1"}]})";
  const Machine machine = machine_from_calibration(hand_calibration(), options_for(CalibratedLink::kVirtualHost, 4));
  // 1e8 bytes from device 0 to 1: 20 µs + 1e8 / 25e9 s = 20 + 4000 µs, what
  // the host_staged series' fitted line says for one copy alone.
  testing::HandPlan alone(network, 4);
  alone.transfer(alone.input(alone.node("fc1"), 0, 100'000'000), 1);
  expect_close(copy_span_us(simulate(alone.plan(), machine), 0), 4020);
  // 0 -> 1 and 2 -> 3 at once: on a switch they would not meet; here they
  // share the one PCIe link, each at 12.5e9 B/s: 20 + 8000 µs.
  testing::HandPlan both(network, 4);
  both.transfer(both.input(both.node("fc1"), 0, 100'000'000), 1);
  both.transfer(both.input(both.node("fc1"), 2, 100'000'000), 3);
  const Timeline shared = simulate(both.plan(), machine);
  expect_close(copy_span_us(shared, 0), 8020);
  expect_close(copy_span_us(shared, 1), 8020);
}

TEST(CalibratedMachine, PeerSeriesMakeASwitchAtTheSlowestPeer) {
  const Machine machine = machine_from_calibration(hand_calibration_with_peers(), options_for(CalibratedLink::kPeer));
  EXPECT_EQ(machine.devices, 4);  // GPU 0 and its peers 1, 2, 3
  EXPECT_EQ(machine.topology.kind, TopologyKind::kSwitch);
  expect_close(machine.topology.link.bandwidth_gbps, 250);  // min(300, 250, 280) GB/s
  expect_close(machine.topology.link.latency_us, 4);        // that series' latency
  EXPECT_EQ(calibrated_gpu_count(hand_calibration_with_peers()), 4);
  EXPECT_EQ(calibrated_gpu_count(hand_calibration()), 1);
}

TEST(CalibratedMachine, PeersWithoutPeerAccessShareOneBus) {
  calibration::CalibrationResult result = hand_calibration_with_peers();
  result.copies.back().peer_access = false;  // the driver stages GPU 0 -> 3 through the host
  const Machine machine = machine_from_calibration(result, options_for(CalibratedLink::kPeer));
  EXPECT_EQ(machine.topology.kind, TopologyKind::kHostStaged);
  EXPECT_EQ(machine.topology.devices_per_bus, 4);
  expect_close(machine.topology.bus.bandwidth_gbps, 250);
}

TEST(CalibratedMachine, OpTimesInTf32PriceWithTheTf32Peak) {
  calibration::CalibrationResult result = hand_calibration();
  result.dtype = "tf32";
  const Machine machine = machine_from_calibration(result, options_for(CalibratedLink::kVirtualDevice));
  EXPECT_EQ(machine.device.matrix_math, "tf32");
  // dense at 400 TFLOP/s: (1e9/400e12 = 2.5 µs + 5e8/400e12 = 1.25 µs) but
  // 3e6 bytes at 3e12 B/s take 1 µs each: max -> 2.5 + 1.25 = 3.75 µs over 60 µs.
  expect_close(machine.device.efficiency.at("dense"), 3.75 / 60);
}

TEST(CalibratedMachine, RoundTripsThroughTheMachineFile) {
  for (CalibratedLink link : {CalibratedLink::kVirtualDevice, CalibratedLink::kVirtualHost, CalibratedLink::kPeer}) {
    SCOPED_TRACE(to_string(link));
    const Machine machine = machine_from_calibration(hand_calibration_with_peers(), options_for(link));
    const std::string text = machine_to_json(machine);
    const Machine again = parse_machine_text(text, "again.json");
    EXPECT_EQ(machine_to_json(again), text);
    EXPECT_EQ(again.device.peak_tflops, machine.device.peak_tflops);
    EXPECT_EQ(again.device.efficiency, machine.device.efficiency);
    EXPECT_EQ(again.calibration.op_times_us, machine.calibration.op_times_us);
    EXPECT_EQ(again.topology.kind, machine.topology.kind);
    EXPECT_GT(again.comment.size(), 100u);  // the zoo's rule: the comment cites the sources
    EXPECT_NE(again.comment.find("reports/test-gpu/calibration.json"), std::string::npos);
  }
}

TEST(CalibratedMachine, WhatIsMissingIsNamed) {
  auto problem = [](const calibration::CalibrationResult& result, CalibratedLink link) {
    try {
      machine_from_calibration(result, options_for(link));
    } catch (const InputError& error) {
      EXPECT_EQ(error.source(), "hand.calibration.json");
      return error.field() + ": " + error.problem();
    }
    return std::string("no error");
  };
  calibration::CalibrationResult no_fp32 = hand_calibration();
  std::erase_if(no_fp32.gemm, [](const calibration::GemmRate& rate) { return rate.math == "fp32"; });
  EXPECT_NE(problem(no_fp32, CalibratedLink::kVirtualDevice).find("gemm: no fp32 GEMM rate"), std::string::npos);

  calibration::CalibrationResult bf16_ops = hand_calibration();
  bf16_ops.dtype = "bf16";
  std::erase_if(bf16_ops.gemm, [](const calibration::GemmRate& rate) { return rate.math == "bf16"; });
  EXPECT_NE(problem(bf16_ops, CalibratedLink::kVirtualDevice).find("no bf16 GEMM rate"), std::string::npos);

  calibration::CalibrationResult no_copies = hand_calibration();
  no_copies.copies.erase(no_copies.copies.begin());  // the device_to_device series
  EXPECT_NE(problem(no_copies, CalibratedLink::kVirtualHost).find("copies: no device_to_device series"),
            std::string::npos);

  EXPECT_NE(problem(hand_calibration(), CalibratedLink::kPeer).find("no peer series"), std::string::npos);

  calibration::CalibrationResult no_rate = hand_calibration();
  no_rate.copies.back().bandwidth_bytes_per_second = 0;  // host_staged
  EXPECT_NE(problem(no_rate, CalibratedLink::kVirtualHost).find("the host_staged series has no bandwidth"),
            std::string::npos);
}

TEST(CalibratedMachine, FilesBesideTheOutputNamedAfterTheirStems) {
  const auto one_gpu = calibrated_machine_files(hand_calibration(), "models/machines/h200.json");
  ASSERT_EQ(one_gpu.size(), 2u);
  EXPECT_EQ(one_gpu[0].path, "models/machines/h200.json");
  EXPECT_EQ(one_gpu[0].name, "h200");
  EXPECT_EQ(one_gpu[0].link, CalibratedLink::kVirtualDevice);
  EXPECT_EQ(one_gpu[1].path, "models/machines/h200-link-host.json");
  EXPECT_EQ(one_gpu[1].name, "h200-link-host");
  EXPECT_EQ(one_gpu[1].link, CalibratedLink::kVirtualHost);
  const auto four_gpus = calibrated_machine_files(hand_calibration_with_peers(), "m.json");
  ASSERT_EQ(four_gpus.size(), 3u);
  EXPECT_EQ(four_gpus[2].path, "m-peer.json");
  EXPECT_EQ(four_gpus[2].link, CalibratedLink::kPeer);
  EXPECT_EQ(default_calibration_path("models/machines/h200.json"), "models/machines/h200.calibration.json");
  EXPECT_THROW(calibrated_machine_files(hand_calibration(), "h200.txt"), InputError);
}

// --- the simulator priced with a calibrated machine ---

std::shared_ptr<const Graph> zoo_graph(const std::string& name) {
  return std::make_shared<const Graph>(lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, name))));
}

Plan partition(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices) {
  PartitionOptions options;
  options.devices = devices;
  options.microbatches = strategy == "pipeline" ? 2 : 1;
  Plan plan = make_partitioner(strategy)->partition(graph, options);
  check(plan);
  return plan;
}

TEST(CalibratedMachine, SimulatorUsesMeasuredTimesForTabledOpsAndTheRooflineForTheRest) {
  // mlp-small: batch 8, 64 -> 4 x dense 64 -> dense 10 -> softmax, on one device.
  calibration::CalibrationResult result = hand_calibration();
  result.op_times.push_back({"dense:b8:k64:n64", "mlp-small/fc1", 65536, 0, 7e-6, 7e-6, 7e-6});
  const Machine machine = machine_from_calibration(result, options_for(CalibratedLink::kVirtualDevice));
  const auto graph = zoo_graph("mlp-small");
  const Plan plan = partition(graph, "single", 1);
  const Timeline timeline = simulate(plan, machine);
  std::vector<double> durations;
  for (const Span& span : timeline.spans) {
    if (span.lane == Lane::kCompute) durations.push_back(span.duration_us());
  }
  ASSERT_EQ(durations.size(), 6u);
  // The four hidden layers are dense:b8:k64:n64, in the table: 7 µs each.
  for (int i = 0; i < 4; ++i) expect_close(durations[static_cast<size_t>(i)], 7);
  // The classifier, dense:b8:k64:n10, is not: it reads 8·64 inputs, 64·10
  // weights and 10 biases and writes 8·10 outputs, (512 + 640 + 10 + 80)·4 =
  // 4968 bytes: 4968 / 3e12 s = 0.001656 µs (2·8·64·10 FLOPs at 50 TFLOP/s
  // take 0.0002048 µs), over the dense efficiency, plus 2 µs of launch.
  // The dense efficiency does not count the 7 µs op: its 65536 FLOPs take
  // 0.00131072 µs at 50 TFLOP/s, under one 2 µs launch, so it is launch-bound.
  const double dense = (20 + 10) / (40.0 + 20);
  expect_close(machine.device.efficiency.at("dense"), dense);
  expect_close(durations[4], 0.001656 / dense + 2);
  // The softmax reads and writes 8·10 floats, 640 bytes: 0.000213.. µs over 0.8, plus 2.
  expect_close(durations[5], 640 / 3e12 * 1e6 / 0.8 + 2);
  expect_close(timeline.makespan_us(), 4 * 7 + (0.001656 / dense + 2) + (640 / 3e12 * 1e6 / 0.8 + 2));
}

}  // namespace
}  // namespace calibrated_machine_test
}  // namespace splitscope
