#include "ir/slice.hpp"

#include "ir/layer_costs.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

constexpr int64_t kFloat = sizeof(float);

}  // namespace

bool Slice::is_partial(const OpNode& node) const {
  if (node.kind != OpKind::kDense) return false;
  return reduce.size() != node.input_shapes.at(0).at(0);
}

Slice full_slice(const OpNode& node, Range batch) {
  Slice slice;
  slice.batch = batch;
  slice.out = {0, node.output_shapes.at(0).at(0)};
  slice.reduce = {0, node.input_shapes.empty() ? 0 : node.input_shapes.at(0).at(0)};
  return slice;
}

Range conv_input_channels(const Layer& conv, Range out) {
  const int64_t filters_per_group = conv.filters / conv.groups;
  const int64_t channels_per_group = conv.input_shape.at(0) / conv.groups;
  const int64_t first_group = out.begin / filters_per_group;
  const int64_t last_group = (out.end - 1) / filters_per_group;
  return {first_group * channels_per_group, (last_group + 1) * channels_per_group};
}

SliceCost slice_cost(const Graph& graph, NodeId id, const Slice& slice) {
  const OpNode& node = graph.node(id);
  const int64_t rows = slice.batch.size();
  const int64_t outs = slice.out.size();
  SliceCost cost;
  const int64_t out_inner = inner_count(node.output_shapes.at(0));
  cost.bytes_written = rows * outs * out_inner * kFloat;
  switch (node.kind) {
    case OpKind::kInput:
      break;
    case OpKind::kDense: {
      const Layer& layer = graph.layer_of(id);
      const int64_t k = slice.reduce.size();
      cost.flops = dense_flops(k, outs, rows);
      // A row split adds the bias once, in the slice that starts the reduction.
      cost.param_count = k * outs + (layer.bias && slice.reduce.begin == 0 ? outs : 0);
      cost.bytes_read = rows * k * kFloat + cost.param_count * kFloat;
      break;
    }
    case OpKind::kConv2d: {
      const Layer& layer = graph.layer_of(id);
      const int64_t in_per_group = layer.input_shape[0] / layer.groups;
      cost.flops = conv2d_flops(outs, layer.output_shape[1], layer.output_shape[2], in_per_group,
                                layer.kernel.h, layer.kernel.w, rows);
      cost.param_count = outs * in_per_group * layer.kernel.h * layer.kernel.w + (layer.bias ? outs : 0);
      const Range in = conv_input_channels(layer, slice.out);
      cost.bytes_read = rows * in.size() * inner_count(layer.input_shape) * kFloat +
                        cost.param_count * kFloat;
      break;
    }
    case OpKind::kLstmCell:
    case OpKind::kGruCell: {
      const Layer& layer = graph.layer_of(id);
      const LayerKind kind = layer.kind;
      const int64_t gates = gate_count(kind);
      const int64_t input = node.input_shapes[kCellInputSlot][0];
      const int64_t hidden = layer.hidden;
      // A slice of `outs` hidden units still multiplies the whole h_{t-1}.
      cost.flops = 2 * gates * outs * (input + hidden) * rows;
      cost.param_count = gates * outs * (input + hidden) + (layer.bias ? gates * outs : 0);
      const bool has_state = node.step > 0;
      const bool lstm = node.kind == OpKind::kLstmCell;
      cost.bytes_read = rows * input * kFloat + cost.param_count * kFloat +
                        (has_state ? rows * hidden * kFloat : 0) +
                        (has_state && lstm ? rows * outs * kFloat : 0);
      cost.bytes_written = rows * outs * kFloat * (lstm ? 2 : 1);
      break;
    }
    case OpKind::kFlatten:
      cost.bytes_written = 0;
      break;
    case OpKind::kStack:
    case OpKind::kStepSlice:
    case OpKind::kSoftmax:
    case OpKind::kMaxPool:
    case OpKind::kAvgPool:
    case OpKind::kRelu:
    case OpKind::kTanh:
    case OpKind::kSigmoid: {
      // Element-wise or per-channel: reads the input that matches its slice.
      const Shape& in = node.input_shapes.at(0);
      if (node.kind == OpKind::kStack || node.kind == OpKind::kStepSlice) {
        cost.bytes_read = cost.bytes_written;
      } else if (is_channel_local(node.kind)) {
        cost.bytes_read = rows * outs * inner_count(in) * kFloat;
      } else {
        cost.bytes_read = rows * element_count(in) * kFloat;
      }
      break;
    }
  }
  SPLITSCOPE_CHECK(slice.out.begin >= 0 && slice.out.end <= node.output_shapes.at(0).at(0),
                   "slice outside the output of " + node.name);
  return cost;
}

}  // namespace splitscope
