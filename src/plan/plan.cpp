#include "plan/plan.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "util/check.hpp"

namespace splitscope {

std::string_view to_string(OpRole role) {
  switch (role) {
    case OpRole::kCompute: return "compute";
    case OpRole::kEpilogue: return "epilogue";
    case OpRole::kTransfer: return "transfer";
    case OpRole::kCollective: return "collective";
    case OpRole::kUpdate: return "update";
  }
  return "?";
}

std::string_view to_string(PipelineSchedule schedule) {
  switch (schedule) {
    case PipelineSchedule::kGpipe: return "gpipe";
    case PipelineSchedule::kOneForwardOneBackward: return "1f1b";
  }
  return "?";
}

std::string_view to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllGather: return "all-gather";
    case CollectiveKind::kAllReduce: return "all-reduce";
    case CollectiveKind::kConcat: return "concat";
    case CollectiveKind::kReduceScatter: return "reduce-scatter";
    case CollectiveKind::kBroadcast: return "broadcast";
  }
  return "?";
}

std::string_view to_string(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::kRing: return "ring";
    case CollectiveAlgorithm::kDirect: return "direct";
  }
  return "?";
}

std::vector<int> op_devices(const PlanOp& op) {
  switch (op.role) {
    case OpRole::kCompute:
    case OpRole::kEpilogue:
    case OpRole::kUpdate:
      return {op.device};
    case OpRole::kTransfer:
      return {op.src_device, op.device};
    case OpRole::kCollective: {
      std::vector<int> devices = op.participants;
      if (op.collective == CollectiveKind::kConcat &&
          std::find(devices.begin(), devices.end(), op.device) == devices.end()) {
        devices.push_back(op.device);
      }
      return devices;
    }
  }
  return {};
}

std::string op_label(const Plan& plan, const PlanOp& op) {
  const std::string& node = plan.graph->node(op.node).name;
  const std::string mb = plan.microbatches > 1 ? fmt::format(" mb{}", op.microbatch) : "";
  switch (op.role) {
    case OpRole::kCompute: {
      const OpNode& graph_node = plan.graph->node(op.node);
      const bool split = op.slice.out.size() != graph_node.output_shapes.at(0).at(0);
      std::string label = node + mb;
      if (split) label += " " + op.slice.out.to_string();
      label += op.slice.features.to_string();
      if (op.slice.is_partial(graph_node) && op.slice.features.whole()) label += " partial " + op.slice.reduce.to_string();
      if (op.slice.is_partial(graph_node) && !op.slice.features.whole()) label += " partial";
      if (op.recomputes >= 0) label += " (recompute)";
      return label;
    }
    case OpRole::kEpilogue:
      return node + mb + " activation";
    case OpRole::kUpdate: {
      const Value& params = plan.value(op.params);
      const OpNode& layer = plan.graph->node(params.node);
      const bool split = params.channels.size() != layer.output_shapes.at(0).at(0);
      return layer.name + " update" + (split ? " " + params.channels.to_string() : "") + params.features.to_string();
    }
    case OpRole::kTransfer:
      return fmt::format("{}{} {}->{}", node, mb, op.src_device, op.device);
    case OpRole::kCollective: {
      // A gradient bucket: its first tensor and how many more travel with it.
      const size_t segments = op.participants.empty() ? 1 : op.inputs.size() / op.participants.size();
      const std::string more = segments > 1 ? fmt::format(" +{}", segments - 1) : "";
      return fmt::format("{} {}{}{}", to_string(op.collective), node, more, mb);
    }
  }
  return node;
}

Shape value_shape(const Plan& plan, const Value& value) {
  Shape shape = plan.graph->node(value.node).output_shapes.at(static_cast<size_t>(value.output));
  shape.at(0) = value.channels.size();
  if (!value.features.whole() && shape.size() > 1) shape.back() = value.features.count(shape.back());
  return shape;
}

int64_t value_elements(const Graph& graph, const Value& value) {
  if (value.role == ValueRole::kParameter || value.role == ValueRole::kGradient) {
    return slice_cost(graph, value.node, Slice{{0, 1}, value.channels, value.reduce, value.features}).param_count;
  }
  const Shape& shape = graph.node(value.node).output_shapes.at(static_cast<size_t>(value.output));
  return value.batch.size() * value.channels.size() * cut_inner_count(shape, value.features);
}

int64_t value_bytes(const Graph& graph, const Value& value) {
  return value_elements(graph, value) * static_cast<int64_t>(sizeof(float));
}

int64_t value_element_bytes(const Plan& plan, const Value& value) {
  const StorageBytes storage = storage_bytes(plan.precision);
  switch (value.role) {
    case ValueRole::kActivation: return storage.activation;
    case ValueRole::kParameter: return storage.weight;
    case ValueRole::kGradient: return storage.gradient;
  }
  return storage.activation;
}

std::pair<NodeId, Slice> weight_slice_of(const Graph& graph, NodeId id, const Slice& slice) {
  const OpNode& node = graph.node(id);
  const OpDef& def = op_def(node.kind);
  const Slice forward_slice = def.param_slice != nullptr ? def.param_slice(node, slice) : slice;
  const NodeId forward = node.forward >= 0 ? static_cast<NodeId>(node.forward) : id;
  return {forward, forward_slice};
}

int add_parameter_value(Plan& plan, int device, NodeId node, const Slice& slice) {
  Value value;
  value.id = static_cast<int>(plan.values.size());
  value.role = ValueRole::kParameter;
  value.device = device;
  value.node = node;
  value.channels = slice.out;
  value.reduce = slice.reduce;
  value.features = slice.features;
  value.bytes = value_bytes(*plan.graph, value);
  plan.values.push_back(value);
  plan.parameters.push_back(value.id);
  return value.id;
}

Range needed_input_channels(const Graph& graph, NodeId id, const Slice& slice, int slot) {
  const OpNode& node = graph.node(id);
  return op_def(node.kind).input_channels(node, slice, slot);
}

FeatureCut needed_input_features(const Graph& graph, NodeId id, const Slice& slice, int slot) {
  return input_features(graph.node(id), slice, slot);
}

std::vector<std::vector<int>> op_predecessors(const Plan& plan) {
  std::vector<std::vector<int>> predecessors(plan.ops.size());
  for (const PlanOp& op : plan.ops) {
    auto& list = predecessors[static_cast<size_t>(op.id)];
    for (int input : op.inputs) {
      if (input < 0) continue;
      const int producer = plan.value(input).producer;
      if (producer >= 0) list.push_back(producer);
    }
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  return predecessors;
}

std::vector<std::vector<int>> op_successors(const Plan& plan) {
  std::vector<std::vector<int>> successors(plan.ops.size());
  const auto predecessors = op_predecessors(plan);
  for (size_t op = 0; op < predecessors.size(); ++op) {
    for (int predecessor : predecessors[op]) {
      successors[static_cast<size_t>(predecessor)].push_back(static_cast<int>(op));
    }
  }
  return successors;  // already sorted: ops are visited in increasing order
}

namespace {

/// One replica's totals (or a whole plan's): its ops on its own devices,
/// without the collectives spanning the replicas.
PlanTotals own_totals(const Plan& plan, int devices) {
  PlanTotals totals;
  totals.device_ops.assign(static_cast<size_t>(devices), 0);
  totals.device_flops.assign(static_cast<size_t>(devices), 0);
  for (const PlanOp& op : plan.ops) {
    if (op.spans_replicas) continue;
    switch (op.role) {
      case OpRole::kCompute:
      case OpRole::kEpilogue:
      case OpRole::kUpdate:
        SPLITSCOPE_CHECK(op.device >= 0 && op.device < devices, "op on an unknown device");
        totals.device_ops[static_cast<size_t>(op.device)] += 1;
        totals.device_flops[static_cast<size_t>(op.device)] += op.flops;
        break;
      case OpRole::kTransfer:
        totals.transfer_count += 1;
        totals.transfer_bytes += op.bytes_moved;
        break;
      case OpRole::kCollective:
        totals.collective_count += 1;
        totals.collective_bytes += op.bytes_moved;
        break;
    }
  }
  return totals;
}

}  // namespace

PlanTotals plan_totals(const Plan& plan) {
  if (!plan.replicas) return own_totals(plan, plan.devices);
  // Replicas held once: each replica's totals from its body (replica 0's, or
  // the short replicas'), R of them, and the spanning collectives once.
  const ReplicaSet& set = *plan.replicas;
  const PlanTotals first = own_totals(plan, set.devices_each);
  const PlanTotals short_ = set.short_from < set.count ? own_totals(*set.short_replica, set.devices_each) : first;
  PlanTotals totals;
  totals.device_ops.assign(static_cast<size_t>(plan.devices), 0);
  totals.device_flops.assign(static_cast<size_t>(plan.devices), 0);
  for (int r = 0; r < set.count; ++r) {
    const PlanTotals& own = r < set.short_from ? first : short_;
    totals.transfer_count += own.transfer_count;
    totals.transfer_bytes += own.transfer_bytes;
    totals.collective_count += own.collective_count;
    totals.collective_bytes += own.collective_bytes;
    for (size_t d = 0; d < own.device_ops.size(); ++d) {
      const size_t device = static_cast<size_t>(r) * own.device_ops.size() + d;
      if (device >= totals.device_ops.size()) break;
      totals.device_ops[device] = own.device_ops[d];
      totals.device_flops[device] = own.device_flops[d];
    }
  }
  for (const PlanOp& op : plan.ops) {
    if (!op.spans_replicas) continue;
    totals.collective_count += 1;
    totals.collective_bytes += op.bytes_moved;
  }
  return totals;
}

std::optional<double> ideal_bubble(const Plan& plan) {
  if (!plan.traits.microbatched) return std::nullopt;
  const double n = plan.degrees ? plan.degrees->pipeline : plan.devices;
  const double m = plan.microbatches;
  return (n - 1) / (m + n - 1);
}

}  // namespace splitscope
