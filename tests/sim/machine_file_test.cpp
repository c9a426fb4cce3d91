// Machine files: every preset loads; a Machine round-trips through
// machine_to_json; every kind of mistake is an InputError naming the file and
// the JSON path of the field.

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "hand_plan.hpp"
#include "ir/zoo.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/machine/topology.hpp"
#include "ir/ops/op_def.hpp"
#include "sim/costs/op_cost_model.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace machine_file_test {
namespace {

using nlohmann::json;

const char* const kValid = R"({
  "name": "m",
  "devices": 4,
  "device": {"name": "gpu", "peak_tflops": {"fp32": 10, "tf32": 80}, "matrix_math": "tf32",
             "memory_bandwidth_GBps": 1000, "memory_GiB": 16, "launch_overhead_us": 5,
             "efficiency": {"default": 0.5, "dense": 0.9}},
  "topology": {"kind": "host-staged", "devices_per_bus": 2, "bus": {"bandwidth_GBps": 12, "latency_us": 10}},
  "calibration": {"comment": "measured", "op_times_us": {"dense:b8:k64:n64": 12.5}}
})";

TEST(MachineFile, ReadsEveryField) {
  const Machine machine = parse_machine_text(kValid, "m.json");
  EXPECT_EQ(machine.name, "m");
  EXPECT_EQ(machine.devices, 4);
  EXPECT_EQ(machine.device.name, "gpu");
  EXPECT_DOUBLE_EQ(machine.device.matrix_flops_per_second(), 80e12);  // tf32 chosen
  EXPECT_DOUBLE_EQ(machine.device.memory_bytes_per_second(), 1000e9);
  EXPECT_EQ(machine.device.memory_bytes(), 16LL << 30);
  EXPECT_DOUBLE_EQ(machine.device.launch_overhead_seconds(), 5e-6);
  EXPECT_DOUBLE_EQ(machine.device.efficiency_of("dense"), 0.9);
  EXPECT_DOUBLE_EQ(machine.device.efficiency_of("conv2d"), 0.5);  // the default
  EXPECT_EQ(machine.topology.kind, TopologyKind::kHostStaged);
  EXPECT_EQ(machine.topology.devices_per_bus, 2);
  EXPECT_DOUBLE_EQ(machine.topology.bus.bytes_per_second(), 12e9);
  EXPECT_DOUBLE_EQ(machine.topology.bus.latency_seconds(), 10e-6);
  EXPECT_EQ(machine.calibration.op_times_us.at("dense:b8:k64:n64"), 12.5);
  EXPECT_EQ(machine.source, "m.json");
}

TEST(MachineFile, EfficiencyDefaultsToOneWithoutADefault) {
  json doc = json::parse(kValid);
  doc["device"].erase("efficiency");
  EXPECT_DOUBLE_EQ(parse_machine_text(doc.dump(), "m.json").device.efficiency_of("dense"), 1.0);
}

TEST(MachineFile, RoundTripsThroughMachineToJson) {
  const Machine machine = parse_machine_text(kValid, "m.json");
  const std::string written = machine_to_json(machine);
  const Machine again = parse_machine_text(written, "again.json");
  EXPECT_EQ(machine_to_json(again), written);
  EXPECT_EQ(again.device.peak_tflops, machine.device.peak_tflops);
  EXPECT_EQ(again.device.efficiency, machine.device.efficiency);
  EXPECT_EQ(again.topology.bus, machine.topology.bus);
  EXPECT_EQ(again.calibration.op_times_us, machine.calibration.op_times_us);
  EXPECT_EQ(again.calibration.comment, "measured");
}

TEST(MachineFile, AMachineBuiltInCodeRoundTripsExactly) {
  // As `calibrate` would build one: awkward decimals must survive.
  Machine machine = testing::test_machine(16, testing::multi_node_topology(8, 2, 361.7, 47.3));
  machine.device.memory_gib = 79.645263671875;  // 81559 MiB
  machine.device.launch_overhead_us = 3.1415926535897931;
  machine.calibration.op_times_us["lstm_cell:b64:i1024:h1024:u1024:t1"] = 123.456789012345;
  machine.pooled = true;
  const Machine again = parse_machine_text(machine_to_json(machine), "calibrated.json");
  EXPECT_TRUE(again.pooled);
  EXPECT_EQ(again.device.memory_bytes(), machine.device.memory_bytes());
  EXPECT_EQ(again.device.launch_overhead_us, machine.device.launch_overhead_us);
  EXPECT_EQ(again.topology.link, machine.topology.link);
  EXPECT_EQ(again.topology.nic, machine.topology.nic);
  EXPECT_EQ(again.topology.nics_per_node, 2);
  EXPECT_EQ(again.calibration.op_times_us, machine.calibration.op_times_us);
}

TEST(MachineFile, APooledMachinesContentionRoundTrips) {
  json doc = json::parse(kValid);
  doc["pooled"] = true;
  doc["device"]["contention"] = {{"default", 1.5}, {"dense", 1.25}, {"dense|shares=2", 1.125}};
  doc["device"]["speedup"] = {{"default|shares=2", 2}, {"relu|shares=2", 1}};
  const Machine machine = parse_machine_text(doc.dump(), "m.json");
  EXPECT_DOUBLE_EQ(machine.device.contention_of("dense"), 1.25);
  EXPECT_DOUBLE_EQ(machine.device.contention_of("conv2d"), 1.5);  // the default
  EXPECT_DOUBLE_EQ(machine.device.contention.at("dense|shares=2"), 1.125);
  const Machine again = parse_machine_text(machine_to_json(machine), "again.json");
  EXPECT_EQ(again.device.contention, machine.device.contention);
  EXPECT_EQ(again.device.speedup, machine.device.speedup);
  EXPECT_DOUBLE_EQ(machine_for_plan(machine, 2).device.speedup_of("relu"), 1.0);
  // Without the field, nothing slows anything.
  EXPECT_DOUBLE_EQ(parse_machine_text(kValid, "m.json").device.contention_of("dense"), 1.0);
}

TEST(MachineFile, APooledKeySplitsIntoItsKeyAndShares) {
  EXPECT_EQ(split_pooled_key("dense|shares=4"), (std::pair<std::string_view, int>{"dense", 4}));
  EXPECT_EQ(split_pooled_key("sig:b8|alone|shares=2"), (std::pair<std::string_view, int>{"sig:b8|alone", 2}));
  EXPECT_EQ(split_pooled_key("dense"), (std::pair<std::string_view, int>{"dense", 1}));
  // Not a share count: the key as it is.
  EXPECT_EQ(split_pooled_key("dense|shares=1"), (std::pair<std::string_view, int>{"dense|shares=1", 1}));
  EXPECT_EQ(split_pooled_key("dense|shares=x"), (std::pair<std::string_view, int>{"dense|shares=x", 1}));
  EXPECT_EQ(pooled_op_key(alone_op_key("sig"), 4), "sig|alone|shares=4");
}

TEST(MachineFile, APlanOnFewerPooledDevicesGetsTheEntriesOfItsShareCount) {
  Machine machine = testing::test_machine(4, testing::free_links());
  machine.pooled = true;
  machine.device.contention = {{"default", 1.5}, {"default|shares=2", 1.2}};
  machine.calibration.op_times_us = {{"s", 10}, {"s|alone", 8}, {"s|shares=2", 6}, {"s|alone|shares=2", 5}};
  const Machine two = machine_for_plan(machine, 2);  // two shares each
  EXPECT_EQ(two.device.contention, (std::map<std::string, double>{{"default", 1.2}}));
  EXPECT_EQ(two.calibration.op_times_us, (std::map<std::string, double>{{"s", 6}, {"s|alone", 5}}));
  EXPECT_DOUBLE_EQ(two.device.peak_tflops.at("fp32"), 2 * machine.device.peak_tflops.at("fp32"));
  // One device of all four shares has nothing beside it: no contention, and no four-share times here.
  const Machine one = machine_for_plan(machine, 1);
  EXPECT_TRUE(one.device.contention.empty());
  EXPECT_TRUE(one.calibration.op_times_us.empty());
  // Four devices of one share: the machine as it is.
  EXPECT_EQ(machine_for_plan(machine, 4).device.contention, machine.device.contention);
}

TEST(MachineFile, CheckMachineAppliesTheFileRules) {
  Machine machine = testing::test_machine(4, testing::host_staged_topology(3, 10, 0));
  try {
    check_machine(machine);
    FAIL() << "3 devices per bus do not divide 4";
  } catch (const InputError& error) {
    EXPECT_EQ(error.field(), "topology.devices_per_bus");
  }
}

/// Edits the valid file with `edit` and expects an InputError at `field` whose message contains `words`.
void expect_error(const std::function<void(json&)>& edit, const std::string& field,
                  const std::string& words) {
  json doc = json::parse(kValid);
  edit(doc);
  try {
    parse_machine_text(doc.dump(), "bad.json");
    ADD_FAILURE() << "no error for " << field;
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), "bad.json");
    EXPECT_EQ(error.field(), field) << error.what();
    EXPECT_NE(error.problem().find(words), std::string::npos) << error.what();
    EXPECT_EQ(std::string(error.what()).rfind("bad.json: " + field + ": ", 0), 0u) << error.what();
  }
}

TEST(MachineFileErrors, OneForEachKindOfMistake) {
  expect_error([](json& d) { d["gpus"] = 8; }, "gpus", "unknown field for a machine");
  expect_error([](json& d) { d.erase("name"); }, "name", "missing required field");
  expect_error([](json& d) { d["name"] = ""; }, "name", "must not be empty");
  expect_error([](json& d) { d["devices"] = 2.5; }, "devices", "must be an integer");
  expect_error([](json& d) { d["devices"] = 0; }, "devices", "must be positive, got 0");
  expect_error([](json& d) { d["pooled"] = "yes"; }, "pooled", "must be true or false, got a string");
  expect_error([](json& d) { d["schema"] = "splitscope.machine/9"; }, "schema", "expected splitscope.machine/1");
  expect_error([](json& d) { d["device"] = "h100"; }, "device", "must be an object");
  expect_error([](json& d) { d["device"]["peak_tflops"].erase("fp32"); }, "device.peak_tflops",
               "needs an \"fp32\" entry");
  expect_error([](json& d) { d["device"]["peak_tflops"]["bf16"] = -1; }, "device.peak_tflops.bf16",
               "must be positive");
  expect_error([](json& d) { d["device"]["matrix_math"] = "fp8"; }, "device.matrix_math",
               "'fp8' has no entry in peak_tflops; use one of fp32, tf32");
  expect_error([](json& d) { d["device"]["memory_bandwidth_GBps"] = "fast"; },
               "device.memory_bandwidth_GBps", "must be a number, got a string");
  expect_error([](json& d) { d["device"].erase("memory_GiB"); }, "device.memory_GiB",
               "missing required field (device memory in GiB)");
  expect_error([](json& d) { d["device"]["launch_overhead_us"] = -1; }, "device.launch_overhead_us",
               "must be zero or positive");
  expect_error([](json& d) { d["device"]["contention"] = {{"desne", 1.2}}; }, "device.contention.desne",
               "unknown op kind");
  expect_error([](json& d) { d["device"]["contention"] = {{"dense", 0}}; }, "device.contention.dense",
               "must be positive");
  expect_error([](json& d) { d["device"]["contention"] = {{"dense|shares=1", 1.1}}; },
               "device.contention[\"dense|shares=1\"]", "optionally followed by |shares=N (N >= 2)");
  expect_error([](json& d) { d["device"]["efficiency"]["dense|shares=2"] = 0.5; },
               "device.efficiency[\"dense|shares=2\"]", "unknown op kind");
  expect_error([](json& d) { d["device"]["efficiency"]["dense"] = 1.5; }, "device.efficiency.dense",
               "must be a fraction in (0, 1]");
  expect_error([](json& d) { d["device"]["efficiency"]["matmul"] = 0.5; }, "device.efficiency.matmul",
               "unknown op kind; known kinds are default, epilogue, dense");
  expect_error([](json& d) { d["topology"]["kind"] = "torus"; }, "topology.kind",
               "unknown topology 'torus'");
  expect_error([](json& d) { d["topology"]["link"] = d["topology"]["bus"]; }, "topology.link",
               "unknown field for a host-staged topology");
  expect_error([](json& d) { d["topology"]["devices_per_bus"] = 3; }, "topology.devices_per_bus",
               "devices_per_bus = 3 does not divide devices = 4");
  expect_error([](json& d) { d["topology"]["bus"].erase("bandwidth_GBps"); },
               "topology.bus.bandwidth_GBps", "missing required field");
  expect_error([](json& d) { d["topology"]["bus"]["bandwidth_GBps"] = 0; },
               "topology.bus.bandwidth_GBps", "must be positive, got 0");
  // Numbers whose times or byte counts would no longer be finite, sensible values.
  expect_error([](json& d) { d["topology"]["bus"]["latency_us"] = 1.7e308; }, "topology.bus.latency_us",
               "must be between 1e-6 and 1e12 in this field's units");
  expect_error([](json& d) { d["device"]["memory_bandwidth_GBps"] = 1e-300; }, "device.memory_bandwidth_GBps",
               "must be between 1e-6 and 1e12");
  expect_error([](json& d) { d["device"]["memory_GiB"] = 1e10; }, "device.memory_GiB",
               "is more than 2^30 GiB");
  expect_error([](json& d) { d["device"]["efficiency"]["dense"] = 1e-300; }, "device.efficiency.dense",
               "at least 1e-6");
  expect_error([](json& d) { d["topology"]["bus"]["latency"] = 1; }, "topology.bus.latency",
               "unknown field for a link; allowed fields are bandwidth_GBps, latency_us, protocol, comment");
  expect_error(
      [](json& d) {
        d["topology"] = {{"kind", "multi-node"}, {"devices_per_node", 4}, {"nics_per_node", 3},
                         {"link", {{"bandwidth_GBps", 100}}}, {"nic", {{"bandwidth_GBps", 10}}}};
      },
      "topology.nics_per_node", "nics_per_node = 3 does not divide devices_per_node = 4");
  expect_error([](json& d) { d["calibration"]["op_times_us"]["dense:b8:k64:n64"] = 0; },
               "calibration.op_times_us[\"dense:b8:k64:n64\"]", "must be positive");
  expect_error([](json& d) { d["calibration"]["op_times"] = json::object(); }, "calibration.op_times",
               "unknown field for a calibration table");
}

TEST(MachineFileErrors, NotJsonAndNotAnObject) {
  try {
    parse_machine_text("{\"name\": ", "broken.json");
    FAIL();
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), "broken.json");
    EXPECT_NE(error.problem().find("not valid JSON"), std::string::npos) << error.what();
  }
  try {
    parse_machine_text("[1, 2]", "list.json");
    FAIL();
  } catch (const InputError& error) {
    EXPECT_NE(error.problem().find("a machine file is a JSON object, got an array"), std::string::npos);
  }
}

TEST(MachineZoo, HasThePresetsTheIssueAsksFor) {
  const auto names = zoo_names(ZooShelf::kMachines);
  for (const char* name : {"h100-nvlink-8", "h100-pcie-4", "a100-nvlink-8", "p100-pcie-8",
                           "2x8-h100-ib", "8x8-h100-ib", "cpu-2"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

TEST(MachineZoo, EveryPresetLoadsRoundTripsAndCitesItsSources) {
  for (const auto& name : zoo_names(ZooShelf::kMachines)) {
    SCOPED_TRACE(name);
    const Machine machine = load_machine(name);
    EXPECT_EQ(machine.name, name);
    EXPECT_GT(machine.comment.size(), 100u) << "the comment cites the sources";
    const Topology topology(machine);
    EXPECT_EQ(topology.devices(), machine.devices);
    const Machine again = parse_machine_text(machine_to_json(machine), name);
    EXPECT_EQ(machine_to_json(again), machine_to_json(machine));
  }
}

TEST(MachineZoo, PresetsHaveTheirShapes) {
  EXPECT_EQ(load_machine("h100-nvlink-8").devices, 8);
  EXPECT_EQ(load_machine("h100-nvlink-8").topology.kind, TopologyKind::kSwitch);
  EXPECT_EQ(load_machine("h100-pcie-4").topology.kind, TopologyKind::kHostStaged);
  EXPECT_EQ(load_machine("p100-pcie-8").topology.devices_per_bus, 4);
  const Machine ib = load_machine("2x8-h100-ib");
  EXPECT_EQ(ib.devices, 16);
  EXPECT_EQ(ib.topology.kind, TopologyKind::kMultiNode);
  EXPECT_EQ(ib.topology.nics_per_node, 8);  // one 400 Gb/s NIC per GPU
  EXPECT_EQ(load_machine("cpu-2").devices, 2);
  const Machine big = load_machine("h100-switch-4096");  // one switch, for how the simulator scales
  EXPECT_EQ(big.devices, 4096);
  EXPECT_EQ(big.topology.kind, TopologyKind::kSwitch);
  EXPECT_EQ(big.device.name, load_machine("h100-nvlink-8").device.name);
}

TEST(MachineZoo, AnUnknownNameListsTheMachines) {
  try {
    load_machine("tpu-v9");
    FAIL();
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("known machines:"), std::string::npos) << message;
    EXPECT_NE(message.find("h100-nvlink-8"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace machine_file_test
}  // namespace splitscope

namespace splitscope {
namespace machine_file_test {
namespace {

// The machine file's efficiency keys come from the op table: every computed
// kind may be given its own efficiency, and the cost model prices with it.
TEST(MachineFile, EveryComputedOpKindIsAnEfficiencyKeyOfTheCostModel) {
  for (const OpDef* def : op_defs()) {
    if (def->kind == OpKind::kInput) continue;
    SCOPED_TRACE(std::string(def->name));
    json doc = json::parse(kValid);
    doc["device"]["efficiency"][std::string(def->name)] = 0.125;
    const Machine machine = parse_machine_text(doc.dump(), "m.json");
    EXPECT_DOUBLE_EQ(machine.device.efficiency_of(def->name), 0.125);
    // 80 TFLOP/s at 1/8 efficiency: 80e9 FLOPs take 8 ms (+ 5 us launch).
    const OpCostModel model(machine);
    EXPECT_NEAR(model.roofline_seconds(def->name, 80'000'000'000, 0), 8e-3 + 5e-6, 1e-12);
  }
}

}  // namespace
}  // namespace machine_file_test
}  // namespace splitscope
