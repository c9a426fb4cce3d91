// The op slices to time, and one-op plans to time them (op_samples.hpp).

#include "partitioners/op_samples.hpp"

#include <algorithm>
#include <set>

#include "ir/op_signature.hpp"
#include "partitioners/head_split.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

void add_sample(std::vector<OpSample>& samples, std::set<std::string>& seen, const std::shared_ptr<const Graph>& graph,
                NodeId node, const Slice& slice) {
  std::string signature = op_signature(*graph, node, slice);
  if (!seen.insert(signature).second) return;
  samples.push_back(OpSample{graph, node, slice, std::move(signature)});
}

/// The output-channel parts a split into `parts` gives for this node.
std::vector<Range> channel_parts(const Graph& graph, NodeId id, int parts) {
  const OpNode& node = graph.node(id);
  const int64_t total = node.output_shapes.at(0).at(0);
  if (parts <= 1 || total < parts) return {{0, total}};
  if (node.kind == OpKind::kConv2d) {
    const int64_t groups = node.attrs.groups;
    if (groups > 1 && parts <= groups) return split_aligned(total, parts, total / groups);
  }
  if (node.kind == OpKind::kFlatten) {
    const int64_t inner = inner_count(node.input_shapes.at(0));
    if (total / inner < parts) return {{0, total}};
    return split_aligned(total, parts, inner);
  }
  return split_evenly(total, parts);
}

bool splits_along_channels(OpKind kind) { return op_def(kind).split.out; }

}  // namespace

std::vector<OpSample> op_samples_from_plans(const std::vector<Plan>& plans) {
  std::vector<OpSample> samples;
  std::set<std::string> seen;
  for (const Plan& plan : plans) {
    for (const PlanOp& op : plan.ops) {
      if (op.role != OpRole::kCompute) continue;
      add_sample(samples, seen, plan.graph, op.node, op.slice);
    }
  }
  return samples;
}

std::vector<OpSample> op_samples_from_graph(const std::shared_ptr<const Graph>& graph,
                                            const std::vector<int>& channel_splits,
                                            const std::vector<int>& batch_splits) {
  std::vector<OpSample> samples;
  std::set<std::string> seen;
  std::vector<Range> batches{{0, graph->batch()}};
  for (int parts : batch_splits) {
    if (parts <= 1 || parts > graph->batch()) continue;
    for (const Range& part : split_evenly(graph->batch(), parts)) batches.push_back(part);
  }
  for (NodeId id = 0; id < graph->num_nodes(); ++id) {
    const OpNode& node = graph->node(id);
    if (node.kind == OpKind::kInput) continue;
    for (const Range& batch : batches) {
      const Slice whole = full_slice(node, batch);
      add_sample(samples, seen, graph, id, whole);
      // tensor's split of a transformer by heads: each device's feature cut.
      for (int parts : channel_splits) {
        for (const FeatureCut& cut : head_split_cuts(*graph, id, parts)) {
          Slice slice = whole;
          slice.features = cut;
          add_sample(samples, seen, graph, id, slice);
        }
      }
      if (!splits_along_channels(node.kind)) continue;
      for (int parts : channel_splits) {
        for (const Range& out : channel_parts(*graph, id, parts)) {
          Slice slice = whole;
          slice.out = out;
          add_sample(samples, seen, graph, id, slice);
        }
        if (node.kind == OpKind::kDense && parts > 1 && whole.reduce.size() >= parts) {
          // The row-split half of tensor parallelism: a partial sum over part of the inputs.
          for (const Range& reduce : split_evenly(whole.reduce.size(), parts)) {
            Slice slice = whole;
            slice.reduce = reduce;
            add_sample(samples, seen, graph, id, slice);
          }
        }
      }
    }
  }
  return samples;
}

Plan replicated_op_plan(const OpSample& sample, int copies, int runs_per_device, int idle_devices) {
  SPLITSCOPE_CHECK(copies >= 1, "an op replicated on no device");
  SPLITSCOPE_CHECK(runs_per_device >= 1, "an op run no time");
  SPLITSCOPE_CHECK(idle_devices >= 0, "a negative number of idle devices");
  const Graph& graph = *sample.graph;
  const OpNode& node = graph.node(sample.node);
  Plan plan;
  plan.strategy = "calibration";
  plan.devices = copies;
  plan.graph = sample.graph;
  int device = 0;
  auto add_value = [&](NodeId of, int output, Range channels, FeatureCut features, int producer) {
    Value value;
    value.id = static_cast<int>(plan.values.size());
    value.device = device;
    value.node = of;
    value.output = output;
    value.batch = sample.slice.batch;
    value.channels = channels;
    value.features = features;  // a head-wise slice's cut of the last axis (ir/feature_cut.hpp)
    value.producer = producer;
    value.bytes = value_bytes(graph, value);
    plan.values.push_back(value);
    return value.id;
  };
  const SliceCost cost = slice_cost(graph, sample.node, sample.slice);
  const auto sources = graph.inputs(sample.node);
  for (device = 0; device < copies; ++device) {
    // The device's inputs and weights, read by each of its runs.
    std::vector<int> inputs;
    for (size_t slot = 0; slot < sources.size(); ++slot) {
      if (!sources[slot]) {
        inputs.push_back(-1);
        continue;
      }
      const Range needed = needed_input_channels(graph, sample.node, sample.slice, static_cast<int>(slot));
      const int id = add_value(sources[slot]->node, sources[slot]->output, needed,
                               needed_input_features(graph, sample.node, sample.slice, static_cast<int>(slot)), -1);
      inputs.push_back(id);
      plan.inputs.push_back(id);
    }
    const int params = cost.param_count > 0 ? add_parameter_value(plan, device, sample.node, sample.slice) : -1;
    plan.schedule.emplace_back();
    for (int run = 0; run < runs_per_device; ++run) {
      PlanOp op;
      op.id = static_cast<int>(plan.ops.size());
      op.role = OpRole::kCompute;
      op.node = sample.node;
      op.device = device;
      op.slice = sample.slice;
      op.inputs = inputs;
      for (size_t output = 0; output < node.output_shapes.size(); ++output) {
        const int id = add_value(sample.node, static_cast<int>(output), sample.slice.out,
                                 output == 0 ? output_features(node, sample.slice) : FeatureCut{}, op.id);
        op.outputs.push_back(id);
        plan.outputs.push_back(id);
      }
      op.flops = cost.flops;
      op.bytes_read = cost.bytes_read;
      op.bytes_written = cost.bytes_written;
      op.param_count = cost.param_count;
      op.params = params;
      plan.ops.push_back(op);
      plan.schedule.back().push_back(op.id);
    }
  }
  plan.devices = copies + idle_devices;
  plan.schedule.resize(static_cast<size_t>(plan.devices));
  return plan;
}

Plan single_op_plan(const OpSample& sample) { return replicated_op_plan(sample, 1); }

}  // namespace splitscope
