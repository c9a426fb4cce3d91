#include "hand_plan.hpp"

#include <map>
#include <stdexcept>

#include "plan/collective_schedule.hpp"
#include "plan/plan_memory.hpp"

namespace splitscope::testing_support {

HandPlan::HandPlan(std::shared_ptr<const Graph> graph, std::string strategy, int devices, int microbatches) {
  plan_.strategy = std::move(strategy);
  // A hand plan named after a strategy has that strategy's traits.
  plan_.traits = {.baseline = plan_.strategy == "single", .microbatched = plan_.strategy == "pipeline"};
  plan_.devices = devices;
  plan_.microbatches = microbatches;
  plan_.graph = std::move(graph);
  plan_.schedule.resize(static_cast<size_t>(devices));
}

Plan HandPlan::plan() const {
  Plan plan = plan_;
  plan.memory = compute_memory(plan);
  return plan;
}

int HandPlan::add_value(int device, NodeId node, int output, int microbatch, Range batch, Range channels, int producer) {
  Value value;
  value.id = static_cast<int>(plan_.values.size());
  value.device = device;
  value.node = node;
  value.output = output;
  value.microbatch = microbatch;
  value.batch = batch;
  value.channels = channels;
  value.producer = producer;
  value.bytes = value_bytes(*plan_.graph, value);
  plan_.values.push_back(value);
  return value.id;
}

int HandPlan::add_op(PlanOp op) {
  op.id = static_cast<int>(plan_.ops.size());
  plan_.ops.push_back(std::move(op));
  return plan_.ops.back().id;
}

int HandPlan::input(NodeId node, int device, Range batch, int microbatch) {
  const int id = add_value(device, node, 0, microbatch, batch, {0, plan_.graph->node(node).output_shapes.at(0).at(0)}, -1);
  plan_.inputs.push_back(id);
  return id;
}

std::vector<int> HandPlan::compute(NodeId node, int device, const Slice& slice, std::vector<int> inputs, int microbatch) {
  PlanOp op;
  op.role = OpRole::kCompute;
  op.node = node;
  op.microbatch = microbatch;
  op.device = device;
  op.slice = slice;
  op.inputs = std::move(inputs);
  const SliceCost cost = slice_cost(*plan_.graph, node, slice);
  op.flops = cost.flops;
  op.bytes_read = cost.bytes_read;
  op.bytes_written = cost.bytes_written;
  op.param_count = cost.param_count;
  if (cost.param_count > 0) {
    // One parameter value per device and slice of a weight set, as the partitioners make them.
    const int key = plan_.graph->node(node).param_key;
    for (int held : plan_.parameters) {
      const Value& value = plan_.value(held);
      if (value.device == device && plan_.graph->node(value.node).param_key == key && value.channels == slice.out &&
          value.reduce == slice.reduce) {
        op.params = held;
      }
    }
    if (op.params < 0) op.params = add_parameter_value(plan_, device, node, slice);
  }
  const int id = add_op(op);
  const size_t outputs = plan_.graph->node(node).output_shapes.size();
  for (size_t k = 0; k < outputs; ++k) {
    const int value = add_value(device, node, static_cast<int>(k), microbatch, slice.batch, slice.out, id);
    plan_.values.back().partial = slice.is_partial(plan_.graph->node(node)) ? PartialSum::kReduction : PartialSum::kNone;
    plan_.ops[static_cast<size_t>(id)].outputs.push_back(value);
  }
  plan_.schedule.at(static_cast<size_t>(device)).push_back(id);
  return plan_.ops[static_cast<size_t>(id)].outputs;
}

int HandPlan::transfer(int value, int device) {
  const Value source = plan_.value(value);
  PlanOp op;
  op.role = OpRole::kTransfer;
  op.node = source.node;
  op.microbatch = source.microbatch;
  op.device = device;
  op.src_device = source.device;
  op.inputs = {value};
  op.bytes_moved = source.bytes;
  const int id = add_op(op);
  const int copy = add_value(device, source.node, source.output, source.microbatch, source.batch, source.channels, id);
  plan_.values.back().partial = source.partial;
  plan_.values.back().pre_activation = source.pre_activation;
  plan_.ops[static_cast<size_t>(id)].outputs = {copy};
  return copy;
}

std::vector<int> HandPlan::gather(const std::vector<int>& values, bool to_all, int root) {
  PlanOp op;
  op.role = OpRole::kCollective;
  op.collective = to_all ? CollectiveKind::kAllGather : CollectiveKind::kConcat;
  op.algorithm = default_algorithm(op.collective);
  const Value first = plan_.value(values.front());
  op.node = first.node;
  op.microbatch = first.microbatch;
  op.device = to_all ? -1 : root;
  op.inputs = values;
  Range all = first.channels;
  for (int v : values) {
    op.participants.push_back(plan_.value(v).device);
    all.begin = std::min(all.begin, plan_.value(v).channels.begin);
    all.end = std::max(all.end, plan_.value(v).channels.end);
  }
  const std::vector<int> targets = to_all ? op.participants : std::vector<int>{root};
  const int id = add_op(op);
  for (int device : targets) {
    const int out = add_value(device, first.node, first.output, first.microbatch, first.batch, all, id);
    plan_.ops[static_cast<size_t>(id)].outputs.push_back(out);
    for (int v : values) {
      if (plan_.value(v).device != device) plan_.ops[static_cast<size_t>(id)].bytes_moved += plan_.value(v).bytes;
    }
  }
  plan_.ops[static_cast<size_t>(id)].payload_bytes = plan_.value(plan_.ops[static_cast<size_t>(id)].outputs[0]).bytes;
  return plan_.ops[static_cast<size_t>(id)].outputs;
}

std::vector<int> HandPlan::all_reduce(const std::vector<int>& partials) {
  PlanOp op;
  op.role = OpRole::kCollective;
  op.collective = CollectiveKind::kAllReduce;
  const Value first = plan_.value(partials.front());
  op.node = first.node;
  op.microbatch = first.microbatch;
  op.device = -1;
  op.inputs = partials;
  for (int v : partials) op.participants.push_back(plan_.value(v).device);
  const int64_t n = static_cast<int64_t>(partials.size());
  op.bytes_moved = 2 * (n - 1) * first.bytes;  // 2·(N-1)/N·B per participant, N participants
  op.payload_bytes = first.bytes;
  const int id = add_op(op);
  for (int device : plan_.ops[static_cast<size_t>(id)].participants) {
    const int out = add_value(device, first.node, first.output, first.microbatch, first.batch, first.channels, id);
    plan_.values.back().pre_activation = true;
    plan_.ops[static_cast<size_t>(id)].outputs.push_back(out);
  }
  return plan_.ops[static_cast<size_t>(id)].outputs;
}

int HandPlan::epilogue(int value) {
  const Value sum = plan_.value(value);
  PlanOp op;
  op.role = OpRole::kEpilogue;
  op.node = sum.node;
  op.microbatch = sum.microbatch;
  op.device = sum.device;
  op.slice = {sum.batch, sum.channels, {0, plan_.graph->node(sum.node).input_shapes.at(0).at(0)}};
  op.inputs = {value};
  const int id = add_op(op);
  const int out = add_value(sum.device, sum.node, sum.output, sum.microbatch, sum.batch, sum.channels, id);
  plan_.ops[static_cast<size_t>(id)].outputs = {out};
  plan_.schedule.at(static_cast<size_t>(sum.device)).push_back(id);
  return out;
}

Plan single_plan(std::shared_ptr<const Graph> graph) {
  HandPlan hand(graph, "single", 1);
  const Range batch{0, graph->batch()};
  std::map<std::pair<NodeId, int>, int> value_of;
  for (NodeId id : graph->topological_order()) {
    const OpNode& node = graph->node(id);
    if (node.kind == OpKind::kInput) {
      value_of[{id, 0}] = hand.input(id, 0, batch);
      continue;
    }
    std::vector<int> inputs;
    for (const auto& ref : graph->inputs(id)) inputs.push_back(ref ? value_of.at({ref->node, ref->output}) : -1);
    const std::vector<int> outputs = hand.compute(id, 0, full_slice(node, batch), inputs);
    for (size_t k = 0; k < outputs.size(); ++k) value_of[{id, static_cast<int>(k)}] = outputs[k];
  }
  hand.set_outputs({value_of.at({graph->output().node, graph->output().output})});
  return hand.plan();
}

}  // namespace splitscope::testing_support
