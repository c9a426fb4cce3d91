#include "hand_plan.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "plan/collective_schedule.hpp"

namespace splitscope::testing {

HandPlan::HandPlan(const std::string& network_json, int devices, std::string strategy) {
  plan_.strategy = std::move(strategy);
  // A hand plan named after a strategy has that strategy's traits.
  plan_.traits = {.baseline = plan_.strategy == "single", .microbatched = plan_.strategy == "pipeline"};
  plan_.devices = devices;
  plan_.graph = std::make_shared<const Graph>(lower(parse_model_text(network_json, "hand.json")));
  plan_.schedule.resize(static_cast<size_t>(devices));
  plan_.memory.resize(static_cast<size_t>(devices));
}

NodeId HandPlan::node(const std::string& name) const {
  for (NodeId id = 0; id < graph().num_nodes(); ++id) {
    if (graph().node(id).name == name) return id;
  }
  throw std::invalid_argument("no node " + name);
}

int HandPlan::add_value(int device, NodeId node, int output, int microbatch, int producer,
                        int64_t bytes) {
  Value value;
  value.id = static_cast<int>(plan_.values.size());
  value.device = device;
  value.node = node;
  value.output = output;
  value.microbatch = microbatch;
  value.batch = {0, graph().batch()};
  value.channels = {0, graph().node(node).output_shapes.at(static_cast<size_t>(output)).at(0)};
  value.producer = producer;
  value.bytes = bytes;
  plan_.values.push_back(value);
  return value.id;
}

PlanOp& HandPlan::add_op(OpRole role, NodeId node, int device) {
  PlanOp op;
  op.id = static_cast<int>(plan_.ops.size());
  op.role = role;
  op.node = node;
  op.device = device;
  op.slice = full_slice(graph().node(node), {0, graph().batch()});
  plan_.ops.push_back(op);
  return plan_.ops.back();
}

int HandPlan::input(NodeId node, int device, int64_t bytes) {
  const int value = add_value(device, node, 0, 0, -1, bytes);
  plan_.inputs.push_back(value);
  return value;
}

int HandPlan::compute(NodeId node, int device, std::vector<int> inputs, int64_t flops,
                      int64_t out_bytes, int microbatch, int64_t bytes) {
  PlanOp& op = add_op(OpRole::kCompute, node, device);
  op.microbatch = microbatch;
  op.inputs = std::move(inputs);
  op.flops = flops;
  op.bytes_read = bytes;
  const int id = op.id;
  const size_t outputs = graph().node(node).output_shapes.size();
  for (size_t output = 0; output < outputs; ++output) {
    const int value = add_value(device, node, static_cast<int>(output), microbatch, id, out_bytes);
    plan_.ops.back().outputs.push_back(value);
  }
  plan_.schedule.at(static_cast<size_t>(device)).push_back(id);
  return plan_.ops.back().outputs.front();
}

int HandPlan::epilogue(int value, int64_t bytes) {
  const Value source = plan_.value(value);
  PlanOp& op = add_op(OpRole::kEpilogue, source.node, source.device);
  op.inputs = {value};
  op.bytes_read = bytes;
  const int id = op.id;
  const int out = add_value(source.device, source.node, source.output, source.microbatch, id,
                            source.bytes);
  plan_.ops.back().outputs = {out};
  plan_.schedule.at(static_cast<size_t>(source.device)).push_back(id);
  return out;
}

int HandPlan::transfer(int value, int device) {
  const Value source = plan_.value(value);
  PlanOp& op = add_op(OpRole::kTransfer, source.node, device);
  op.src_device = source.device;
  op.microbatch = source.microbatch;
  op.inputs = {value};
  op.bytes_moved = source.bytes;
  const int id = op.id;
  const int copy = add_value(device, source.node, source.output, source.microbatch, id, source.bytes);
  plan_.ops.back().outputs = {copy};
  return copy;
}

std::vector<int> HandPlan::collective(CollectiveKind kind, const std::vector<int>& inputs, int root) {
  const Value first = plan_.value(inputs.front());
  PlanOp& op = add_op(OpRole::kCollective, first.node, kind == CollectiveKind::kConcat ? root : -1);
  op.collective = kind;
  op.algorithm = default_algorithm(kind);
  op.inputs = inputs;
  // An all-reduce may hold several values per participant (a gradient bucket), listed participant by participant.
  for (int input : inputs) {
    const int device = plan_.value(input).device;
    const bool bucket = kind == CollectiveKind::kAllReduce;
    if (!bucket || std::find(op.participants.begin(), op.participants.end(), device) == op.participants.end()) {
      op.participants.push_back(device);
    }
  }
  const int id = op.id;
  std::vector<int> outputs;
  if (kind == CollectiveKind::kConcat) {
    int64_t bytes = 0;
    for (int input : inputs) bytes += plan_.value(input).bytes;
    outputs.push_back(add_value(root, first.node, first.output, first.microbatch, id, bytes));
  } else {
    int64_t gathered = 0;
    for (int input : inputs) gathered += plan_.value(input).bytes;
    for (int input : inputs) {
      const int64_t bytes = kind == CollectiveKind::kAllGather ? gathered : plan_.value(input).bytes;
      outputs.push_back(
          add_value(plan_.value(input).device, first.node, first.output, first.microbatch, id, bytes));
    }
  }
  plan_.ops.back().outputs = outputs;
  return outputs;
}

void HandPlan::set_memory_peak(int device, int64_t bytes) {
  plan_.memory.at(static_cast<size_t>(device)).peak = bytes;
}

Machine test_machine(int devices, const TopologySpec& topology, double tflops, double launch_us) {
  Machine machine;
  machine.name = "test";
  machine.devices = devices;
  machine.device.name = "test device";
  machine.device.peak_tflops = {{"fp32", tflops}};
  machine.device.memory_bandwidth_gbps = 1000;
  machine.device.memory_gib = 80;
  machine.device.launch_overhead_us = launch_us;
  // The plain roofline at full efficiency for every kind, so that the
  // closed-form tests hold; the datasheet rules have tests of their own.
  machine.device.efficiency = {{std::string(kDefaultEfficiency), 1.0}};
  machine.topology = topology;
  return machine;
}

TopologySpec switch_topology(double gbps, double latency_us) {
  TopologySpec topology;
  topology.kind = TopologyKind::kSwitch;
  topology.link = {gbps, latency_us};
  return topology;
}

TopologySpec host_staged_topology(int devices_per_bus, double gbps, double latency_us) {
  TopologySpec topology;
  topology.kind = TopologyKind::kHostStaged;
  topology.devices_per_bus = devices_per_bus;
  topology.bus = {gbps, latency_us};
  return topology;
}

TopologySpec multi_node_topology(int devices_per_node, int nics_per_node, double link_gbps,
                                 double nic_gbps) {
  TopologySpec topology;
  topology.kind = TopologyKind::kMultiNode;
  topology.devices_per_node = devices_per_node;
  topology.nics_per_node = nics_per_node;
  topology.link = {link_gbps, 0};
  topology.nic = {nic_gbps, 0};
  return topology;
}

TopologySpec free_links() { return switch_topology(1e12, 0); }

}  // namespace splitscope::testing
