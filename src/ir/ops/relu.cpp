// relu: an element-wise activation. Bytes only (docs/network-format.md counts no FLOPs for it).
#include "ir/ops/gradient_rules.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/layer_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {

namespace relu_op {
void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  gradient_rules::activation(builder, node, gradients, Activation::kRelu);
}
}  // namespace relu_op

namespace relu_layer {

const LayerDef& definition() {
  static const LayerDef def = layer_rules::shape_keeping("relu");
  return def;
}

}  // namespace relu_layer

const OpDef& relu_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kRelu;
    d.name = "relu";
    d.channel_local = true;
    d.activation = true;
    d.split.out = true;
    d.cost = op_rules::channel_local_cost;
    d.input_channels = op_rules::same_channels;
    d.signature = op_rules::elements_signature;
    d.gradient = relu_op::gradient;
    d.device_calls = op_rules::one_device_call;
    d.layer = &relu_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
