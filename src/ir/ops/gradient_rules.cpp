#include "ir/ops/gradient_rules.hpp"

#include "util/check.hpp"

namespace splitscope::gradient_rules {

void weighted(GradientBuilder& builder, NodeId node, const Gradients& gradients, OpKind input_kind,
              OpKind weight_kind) {
  const OpNode& forward = builder.node(node);
  SPLITSCOPE_CHECK(gradients.size() == 1 && gradients[0].has_value(), forward.name + ": one output gradient expected");
  TensorRef dz = *gradients[0];
  const Shape output = forward.output_shapes.at(0);
  const Shape input = forward.input_shapes.at(0);
  const OpAttrs attrs = forward.attrs;
  if (attrs.activation != Activation::kNone) {
    dz = TensorRef{builder.add(OpKind::kActivationGrad, node, "act_grad", {dz, TensorRef{node, 0}}, output, attrs), 0};
  }
  const TensorRef x = builder.input(node, 0);
  if (builder.wants(x)) {
    builder.contribute(x, TensorRef{builder.add(input_kind, node, "grad_input", {dz}, input, attrs), 0});
  }
  builder.add(weight_kind, node, "grad_weight", {x, dz}, output, attrs);
}

void activation(GradientBuilder& builder, NodeId node, const Gradients& gradients, Activation activation) {
  const OpNode& forward = builder.node(node);
  SPLITSCOPE_CHECK(gradients.size() == 1 && gradients[0].has_value(), forward.name + ": one output gradient expected");
  const TensorRef x = builder.input(node, 0);
  if (!builder.wants(x)) return;
  OpAttrs attrs = forward.attrs;
  attrs.activation = activation;
  const Shape shape = forward.output_shapes.at(0);
  builder.contribute(
      x, TensorRef{builder.add(OpKind::kActivationGrad, node, "grad", {*gradients[0], TensorRef{node, 0}}, shape, attrs),
                   0});
}

void unary(GradientBuilder& builder, NodeId node, const Gradients& gradients, OpKind kind,
           const std::vector<int>& inputs) {
  const OpNode& forward = builder.node(node);
  SPLITSCOPE_CHECK(gradients.size() == 1 && gradients[0].has_value(), forward.name + ": one output gradient expected");
  const TensorRef x = builder.input(node, 0);
  if (!builder.wants(x)) return;
  std::vector<TensorRef> reads;
  for (int input : inputs) reads.push_back(input == kForwardInput ? x : *gradients[0]);
  const Shape shape = forward.input_shapes.at(0);
  const OpAttrs attrs = forward.attrs;
  builder.contribute(x, TensorRef{builder.add(kind, node, "grad", reads, shape, attrs), 0});
}

}  // namespace splitscope::gradient_rules
