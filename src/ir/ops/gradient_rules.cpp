#include "ir/ops/gradient_rules.hpp"

#include "util/check.hpp"

namespace splitscope::gradient_rules {

void weighted(GradientBuilder& builder, NodeId node, const Gradients& gradients, OpKind input_kind,
              OpKind weight_kind) {
  const OpNode forward = builder.node(node);  // a copy: adding nodes moves the graph's nodes
  SPLITSCOPE_CHECK(gradients.size() == 1 && gradients[0].has_value(), forward.name + ": one output gradient expected");
  TensorRef dz = *gradients[0];
  const Shape output = forward.output_shapes.at(0);
  const Shape input = forward.input_shapes.at(0);
  const OpAttrs attrs = forward.attrs;
  if (attrs.activation != Activation::kNone) {
    dz = TensorRef{builder.add(OpKind::kActivationGrad, node, "act_grad", {dz, TensorRef{node, 0}}, output, attrs), 0};
  }
  const TensorRef x = builder.input(node, 0);
  // The products carry no activation: a partial dX is all-reduced as it is
  // (an activation attribute would make the plan apply it after the sum).
  OpAttrs products = attrs;
  products.activation = Activation::kNone;
  if (builder.wants(x)) {
    builder.contribute(x, TensorRef{builder.add(input_kind, node, "grad_input", {dz}, input, products), 0});
  }
  builder.add(weight_kind, node, "grad_weight", {x, dz}, output, products);
}

void activation(GradientBuilder& builder, NodeId node, const Gradients& gradients, Activation activation) {
  const OpNode forward = builder.node(node);  // a copy: adding nodes moves the graph's nodes
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
  const OpNode forward = builder.node(node);  // a copy: adding nodes moves the graph's nodes
  SPLITSCOPE_CHECK(gradients.size() == 1 && gradients[0].has_value(), forward.name + ": one output gradient expected");
  const TensorRef x = builder.input(node, 0);
  if (!builder.wants(x)) return;
  std::vector<TensorRef> reads;
  for (int input : inputs) reads.push_back(input == kForwardInput ? x : *gradients[0]);
  const Shape shape = forward.input_shapes.at(0);
  const OpAttrs attrs = forward.attrs;
  builder.contribute(x, TensorRef{builder.add(kind, node, "grad", reads, shape, attrs), 0});
}

void cell(GradientBuilder& builder, NodeId node, const Gradients& gradients, bool gru) {
  const OpNode forward = builder.node(node);  // a copy: adding nodes moves the graph's nodes
  SPLITSCOPE_CHECK(!gradients.empty() && gradients[0].has_value(),
                   forward.name + ": a cell whose state has a gradient but whose output has none");
  const Shape x_shape = forward.input_shapes.at(kCellInputSlot);
  const Shape h_shape{forward.attrs.hidden};
  OpAttrs attrs = forward.attrs;
  attrs.gru = gru;
  attrs.cell_inputs = x_shape.at(0);
  const TensorRef x = builder.input(node, kCellInputSlot);
  const std::optional<TensorRef> h_prev = builder.optional_input(node, kCellHiddenSlot);
  using Slot = std::pair<std::optional<TensorRef>, Shape>;
  std::vector<Slot> slots{{x, x_shape}, {h_prev, h_shape}};
  std::optional<TensorRef> c_prev;
  if (!gru) {
    c_prev = builder.optional_input(node, kCellStateSlot);
    slots.emplace_back(c_prev, h_shape);
  }
  slots.emplace_back(gradients[0], h_shape);
  if (!gru) slots.emplace_back(gradients.size() > 1 ? gradients[1] : std::nullopt, h_shape);
  const Shape gate_gradients{forward.attrs.hidden, 4};
  const NodeId step = builder.add_slots(gru ? OpKind::kGruCellGrad : OpKind::kLstmCellGrad, node, "grad", slots,
                                        {gate_gradients, h_shape}, attrs);
  const TensorRef dgates{step, 0};
  const TensorRef second{step, 1};
  if (builder.wants(x)) {
    builder.contribute(x, TensorRef{builder.add(OpKind::kCellGradInput, node, "grad_input", {dgates}, x_shape, attrs), 0});
  }
  if (h_prev && builder.wants(*h_prev)) {
    std::vector<TensorRef> reads{dgates};
    if (gru) reads.push_back(second);  // the direct part, dh ⊙ z
    builder.contribute(*h_prev,
                       TensorRef{builder.add(OpKind::kCellGradHidden, node, "grad_hidden", reads, h_shape, attrs), 0});
  }
  if (!gru && c_prev && builder.wants(*c_prev)) builder.contribute(*c_prev, second);
  builder.add_slots(OpKind::kCellGradWeight, node, "grad_weight",
                    {Slot{x, x_shape}, Slot{h_prev, h_shape}, Slot{dgates, gate_gradients}}, {h_shape}, attrs);
}

}  // namespace splitscope::gradient_rules
