#include "demo_test_support.hpp"

#include "ir/lower.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "sim/machine/machine_file.hpp"

namespace splitscope::testing {

RnnDemoShape demo_shape(const std::string& cell, int64_t layers, int64_t hidden, int64_t steps, int64_t batch) {
  RnnDemoShape shape;
  shape.cell = cell;
  shape.layers = layers;
  shape.hidden = hidden;
  shape.steps = steps;
  shape.batch = batch;
  return shape;
}

std::shared_ptr<const Plan> demo_plan(const RnnDemoShape& shape, const std::string& strategy, int devices,
                                      int microbatches) {
  const auto graph = std::make_shared<const Graph>(lower(rnn_demo_model(shape)));
  PartitionOptions options;
  options.devices = devices;
  options.microbatches = microbatches;
  auto plan = std::make_shared<const Plan>(make_partitioner(strategy)->partition(graph, options));
  check(*plan);
  return plan;
}

Machine free_link_machine(int devices, double gflops) {
  Machine machine;
  machine.name = "free-links";
  machine.devices = devices;
  machine.device.name = "test device";
  machine.device.peak_tflops = {{"fp32", gflops * 1e-3}};
  machine.device.memory_bandwidth_gbps = 1e9;
  machine.device.memory_gib = 80;
  // The plain roofline for every kind (the closed forms below); the datasheet
  // rules have tests of their own (tests/sim).
  machine.device.efficiency = {{std::string(kDefaultEfficiency), 1.0}};
  machine.topology.kind = TopologyKind::kSwitch;
  machine.topology.link = {1e9, 0.0};
  check_machine(machine);
  return machine;
}

}  // namespace splitscope::testing
