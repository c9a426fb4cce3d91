// Calibration files: what `splitscope calibrate` writes (through the CUDA
// module's own writer, so that a change of format shows here), read back and
// applied to a machine, and used by a simulation.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "exec/cuda/calibration.hpp"
#include "hand_plan.hpp"
#include "ir/op_signature.hpp"
#include "sim/calibration_file.hpp"
#include "sim/machine_file.hpp"
#include "sim/simulator.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

using testing::HandPlan;

const char* const kNet = R"({"batch": 64, "input": [1024], "layers": [
    {"type": "dense", "units": 1024, "name": "fc"}]})";

gpu::CopySeries series(const std::string& kind, bool peer_access, double latency, double bandwidth) {
  gpu::CopySeries copy;
  copy.kind = kind;
  copy.peer_access = peer_access;
  copy.latency_seconds = latency;
  copy.bandwidth_bytes_per_second = bandwidth;
  copy.points = {{1 << 20, latency + (1 << 20) / bandwidth, (1 << 20) / (latency + (1 << 20) / bandwidth)}};
  return copy;
}

/// A calibration as the calibrate command would have measured it.
gpu::CalibrationResult measured_h200() {
  gpu::CalibrationResult result;
  result.date = "2026-11-23T03:00:00Z";
  result.host = "gpu-box";
  result.device_name = "NVIDIA H200";
  result.sm_count = 132;
  result.memory_bytes = 150'000'000'000;
  result.compute_capability = "9.0";
  result.driver = "13.0";
  result.dtype = "tf32";
  result.repeats = 20;
  result.gemm = {{4096, 4096, 4096, "fp32", 0.002, 5.0e13},
                 {4096, 4096, 4096, "tf32", 0.0004, 3.4e14},
                 {8192, 8192, 8192, "tf32", 0.003, 3.6e14}};
  // Peer copies to three GPUs (medians: latency 2e-6 s, 3.5e11 B/s); one
  // without peer access (ignored); host-staged copies; copies within the GPU.
  result.copies = {series("peer", true, 1.5e-6, 3.4e11), series("peer", true, 2.0e-6, 3.5e11),
                   series("peer", true, 2.5e-6, 3.6e11), series("peer", false, 9e-6, 2e10),
                   series("host_staged", false, -1e-7, 2.5e10), series("device_to_device", false, 1e-6, 2e12)};
  result.launch = {1000, 3e-6, 2.5e-6};
  HandPlan hand(kNet, 1);
  const NodeId fc = hand.node("fc");
  result.op_times = {{op_signature(hand.graph(), fc, full_slice(hand.graph().node(fc), {0, 64})), "net/fc",
                      134'217'728, 4'722'688, 1.25e-5, 1.2e-5, 1.4e-5},
                     {"relu:b64:n1024", "net/relu", 0, 524'288, 3e-6, 2.9e-6, 3.3e-6}};
  return result;
}

TEST(CalibrationFile, ReadsWhatCalibrateWrites) {
  const MeasuredDevice measured = parse_calibration_text(gpu::calibration_to_json(measured_h200()), "h200.json");
  EXPECT_EQ(measured.device_name, "NVIDIA H200");
  EXPECT_EQ(measured.memory_bytes, 150'000'000'000);
  EXPECT_EQ(measured.dtype, "tf32");
  EXPECT_EQ(measured.compute_capability, "9.0");
  EXPECT_EQ(measured.driver, "13.0");
  EXPECT_DOUBLE_EQ(measured.launch_seconds, 2.5e-6);
  EXPECT_DOUBLE_EQ(measured.best_gemm_flops_per_second, 3.6e14);  // the faster tf32 product
  ASSERT_EQ(measured.op_seconds.size(), 2u);
  EXPECT_DOUBLE_EQ(measured.op_seconds.at("relu:b64:n1024"), 3e-6);
  ASSERT_TRUE(measured.peer.has_value());
  EXPECT_DOUBLE_EQ(measured.peer->latency_seconds, 2.0e-6);  // median of the three with peer access
  EXPECT_DOUBLE_EQ(measured.peer->bytes_per_second, 3.5e11);
  ASSERT_TRUE(measured.host_staged.has_value());
  EXPECT_EQ(measured.host_staged->latency_seconds, 0.0);  // a negative intercept is no latency
  EXPECT_DOUBLE_EQ(measured.host_staged->bytes_per_second, 2.5e10);
}

TEST(CalibrationFile, AppliedToASwitchMachine) {
  const MeasuredDevice measured = parse_calibration_text(gpu::calibration_to_json(measured_h200()), "h200.json");
  const Machine machine = apply_calibration(load_machine("h100-nvlink-8"), measured);
  EXPECT_EQ(machine.name, "h100-nvlink-8+calibrated");
  EXPECT_EQ(machine.device.name, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(machine.device.memory_gib, 150e9 / kBytesPerGib);
  EXPECT_DOUBLE_EQ(machine.device.launch_overhead_us, 2.5);
  EXPECT_EQ(machine.device.matrix_math, "tf32");                // h100-nvlink-8 has a tf32 peak
  EXPECT_DOUBLE_EQ(machine.device.peak_tflops.at("tf32"), 494.5);  // kept: the preset has one
  EXPECT_DOUBLE_EQ(machine.topology.link.bandwidth_gbps, 350.0);
  EXPECT_DOUBLE_EQ(machine.topology.link.latency_us, 2.0);
  EXPECT_DOUBLE_EQ(machine.calibration.op_times_us.at("relu:b64:n1024"), 3.0);
  EXPECT_NE(machine.calibration.comment.find("NVIDIA H200"), std::string::npos) << machine.calibration.comment;
  EXPECT_NE(machine.calibration.comment.find("2 op shapes timed in tf32"), std::string::npos);
  // It is a valid machine, and a machine file of it reads back the same.
  EXPECT_NO_THROW(check_machine(machine));
  EXPECT_EQ(machine_to_json(parse_machine_text(machine_to_json(machine), "again.json")), machine_to_json(machine));
}

TEST(CalibrationFile, AppliedToAHostStagedMachineWithoutThatPrecision) {
  const MeasuredDevice measured = parse_calibration_text(gpu::calibration_to_json(measured_h200()), "h200.json");
  const Machine machine = apply_calibration(load_machine("p100-pcie-8"), measured);
  // p100-pcie-8 has no tf32 peak: the fastest measured tf32 product becomes it.
  EXPECT_EQ(machine.device.matrix_math, "tf32");
  EXPECT_DOUBLE_EQ(machine.device.peak_tflops.at("tf32"), 360.0);
  EXPECT_DOUBLE_EQ(machine.topology.bus.bandwidth_gbps, 25.0);
  EXPECT_DOUBLE_EQ(machine.topology.bus.latency_us, 0.0);
}

TEST(CalibrationFile, MeasuredOpTimesDriveTheSimulation) {
  const MeasuredDevice measured = parse_calibration_text(gpu::calibration_to_json(measured_h200()), "h200.json");
  HandPlan hand(kNet, 1);
  const NodeId fc = hand.node("fc");
  hand.compute(fc, 0, {hand.input(hand.node("input"), 0, 262'144)}, 134'217'728, 262'144, 0, 4'722'688);
  const Timeline timeline = simulate(hand.plan(), apply_calibration(load_machine("h100-nvlink-8"), measured));
  ASSERT_EQ(timeline.spans.size(), 1u);
  EXPECT_NEAR(timeline.spans[0].duration_us(), 12.5, 1e-9);  // the measured 1.25e-5 s
}

void expect_error(const std::function<void(nlohmann::json&)>& edit, const std::string& field,
                  const std::string& words) {
  nlohmann::json doc = nlohmann::json::parse(gpu::calibration_to_json(measured_h200()));
  edit(doc);
  try {
    parse_calibration_text(doc.dump(), "cal.json");
    ADD_FAILURE() << "no error for " << field;
  } catch (const InputError& error) {
    EXPECT_EQ(error.field(), field) << error.what();
    EXPECT_NE(error.problem().find(words), std::string::npos) << error.what();
  }
}

TEST(CalibrationFileErrors, NameTheField) {
  expect_error([](nlohmann::json& d) { d["schema"] = "splitscope.report/1"; }, "schema",
               "is not a calibration file this build reads");
  expect_error([](nlohmann::json& d) { d["device"].erase("name"); }, "device.name", "missing required field");
  expect_error([](nlohmann::json& d) { d["op_times"][1]["seconds"] = 0; }, "op_times[1].seconds",
               "must be positive");
  expect_error([](nlohmann::json& d) { d["copies"][0]["bandwidth_bytes_per_second"] = -5; },
               "copies[0].bandwidth_bytes_per_second", "must be positive");
  expect_error([](nlohmann::json& d) { d["op_times"] = 3; }, "op_times", "must be an array");
  expect_error([](nlohmann::json& d) { d.erase("launch"); }, "launch", "missing required field");
  EXPECT_THROW(parse_calibration_text("not json", "x.json"), InputError);
  EXPECT_THROW(load_calibration_file("/no/such/calibration.json"), InputError);
}

}  // namespace
}  // namespace splitscope
