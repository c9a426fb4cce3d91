// gelu: y = x·Φ(x) = x·(1 + erf(x/√2))/2, PyTorch's default (exact, erf)
// form, not its tanh approximation. Element-wise on any shape: bytes only,
// as the other activations (docs/network-format.md counts no FLOPs for them).
// Its gradient needs X, not Y (GELU is not invertible from its output), so it
// is its own kind, gelu_grad, rather than an activation_grad.
#include "ir/gradient_builder.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/layer_rules.hpp"
#include "ir/ops/op_rules.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace gelu_op {

void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  const OpNode forward = builder.node(node);  // a copy: adding nodes moves the graph's nodes
  SPLITSCOPE_CHECK(gradients.size() == 1 && gradients[0].has_value(), forward.name + ": one output gradient expected");
  const TensorRef x = builder.input(node, 0);
  if (!builder.wants(x)) return;
  builder.contribute(x, TensorRef{builder.add(OpKind::kGeluGrad, node, "grad", {x, *gradients[0]},
                                              forward.output_shapes.at(0), forward.attrs),
                                  0});
}

}  // namespace gelu_op

namespace gelu_layer {

const LayerDef& definition() {
  static const LayerDef def = layer_rules::shape_keeping("gelu");
  return def;
}

}  // namespace gelu_layer

const OpDef& gelu_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kGelu;
    d.name = "gelu";
    d.channel_local = true;
    d.split.out = true;
    d.cost = op_rules::channel_local_cost;
    d.input_channels = op_rules::same_channels;
    d.signature = op_rules::elements_signature;
    d.gradient = gelu_op::gradient;
    d.device_calls = op_rules::one_device_call;
    d.layer = &gelu_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
