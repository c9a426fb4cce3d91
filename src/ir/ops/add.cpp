// add: the element-wise sum of two or more inputs of one shape (a residual
// join). Channel-local: a slice of channels reads the same channels of every
// input. Bytes only, like every element-wise op: n inputs read, one written.
#include "ir/ops/gradient_rules.hpp"
#include <fmt/format.h>

#include "ir/network_fields.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace add_op {

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_written = op_rules::output_bytes(node, slice);
  c.bytes_read = c.bytes_written * static_cast<int64_t>(node.input_shapes.size());
  return c;
}

std::string signature(const OpNode& node, const Slice& slice) {
  return fmt::format("add:b{}:n{}:i{}", slice.batch.size(), slice.out.size() * inner_count(node.output_shapes.at(0)),
                     node.input_shapes.size());
}

/// One sum over the slice's rows where every input holds just its channels;
/// else one per row (the rows of the inputs are strided apart).
int device_calls(const SliceCalls& calls) {
  return calls.inputs_match_slice ? 1 : static_cast<int>(calls.slice.batch.size());
}

}  // namespace add_op

namespace add_op {
/// Every input's gradient is the output's.
void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  const size_t inputs = builder.node(node).input_shapes.size();
  for (size_t slot = 0; slot < inputs; ++slot) builder.contribute(builder.input(node, static_cast<int>(slot)), *gradients.at(0));
}
}  // namespace add_op

namespace add_layer {

/// Two or more inputs of one shape.
void read(const NetworkFields& fields, Layer& layer) {
  for (size_t i = 1; i < layer.input_shapes.size(); ++i) {
    if (layer.input_shapes[i] != layer.input_shapes[0]) {
      fields.fail("inputs", "add needs inputs of one shape, but '" + layer.inputs[0] + "' is " +
                                to_string(layer.input_shapes[0]) + " and '" + layer.inputs[i] + "' is " +
                                to_string(layer.input_shapes[i]));
    }
  }
  layer.output_shape = layer.input_shapes[0];
}

const LayerDef& definition() {
  static const LayerDef def = [] {
    LayerDef d;
    d.name = "add";
    d.joins = true;
    d.read = read;
    return d;
  }();
  return def;
}

}  // namespace add_layer

const OpDef& add_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kAdd;
    d.name = "add";
    d.channel_local = true;
    d.split.out = true;
    d.cost = add_op::cost;
    d.input_channels = op_rules::same_channels;
    d.signature = add_op::signature;
    d.gradient = add_op::gradient;
    d.device_calls = add_op::device_calls;
    d.rate_families = {"join"};
    d.layer = &add_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
