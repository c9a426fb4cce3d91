// dropout: in a training step y = x·m/(1 - rate), m the mask of
// dropout_mask.hpp; in inference the identity (run as a copy). Its gradient
// is the same op on dY (a backward node of this kind, the same mask).
// Channel-local, element-wise: reads X, writes Y; bytes only.
#include "ir/network_fields.hpp"
#include "ir/ops/gradient_rules.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace dropout_op {

void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  gradient_rules::unary(builder, node, gradients, OpKind::kDropout, {gradient_rules::kOutputGradient});
}

void training_form(OpNode& node) { node.attrs.training = true; }

std::string signature(const OpNode& node, const Slice& slice) {
  return op_rules::elements_signature(node, slice) + (node.attrs.training ? ":train" : "");
}

}  // namespace dropout_op

namespace dropout_layer {

void read(const NetworkFields& fields, Layer& layer) {
  layer.attrs.rate = fields.optional_number("rate", 0.5, NumberRule::kNonNegative);
  if (layer.attrs.rate >= 1.0) fields.fail("rate", "the share of elements dropped must be below 1 (0.5 drops half)");
  layer.output_shape = layer.input_shape;
}

const LayerDef& definition() {
  static const LayerDef def = [] {
    LayerDef d;
    d.name = "dropout";
    d.fields = {"rate"};
    d.read = read;
    return d;
  }();
  return def;
}

}  // namespace dropout_layer

const OpDef& dropout_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kDropout;
    d.name = "dropout";
    d.channel_local = true;
    d.split.out = true;
    d.cost = op_rules::channel_local_cost;
    d.input_channels = op_rules::same_channels;
    d.signature = dropout_op::signature;
    d.gradient = dropout_op::gradient;
    d.training_form = dropout_op::training_form;
    d.device_calls = op_rules::one_device_call;
    d.layer = &dropout_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
