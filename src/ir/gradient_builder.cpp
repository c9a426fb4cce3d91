#include "ir/gradient_builder.hpp"

#include "ir/ops/op_def.hpp"
#include "ir/slice.hpp"
#include "util/check.hpp"

namespace splitscope {

TensorRef GradientBuilder::input(NodeId id, int slot) const {
  const auto inputs = graph_.inputs(id);
  SPLITSCOPE_CHECK(slot < static_cast<int>(inputs.size()) && inputs[static_cast<size_t>(slot)].has_value(),
                   graph_.node(id).name + " has no input in slot " + std::to_string(slot));
  return *inputs[static_cast<size_t>(slot)];
}

std::optional<TensorRef> GradientBuilder::optional_input(NodeId id, int slot) const {
  const auto inputs = graph_.inputs(id);
  if (slot >= static_cast<int>(inputs.size())) return std::nullopt;
  return inputs[static_cast<size_t>(slot)];
}

NodeId GradientBuilder::add(OpKind kind, NodeId forward, const std::string& suffix,
                            const std::vector<TensorRef>& inputs, const Shape& output, const OpAttrs& attrs) {
  std::vector<std::pair<std::optional<TensorRef>, Shape>> slots;
  for (const TensorRef& tensor : inputs) {
    slots.emplace_back(tensor, graph_.node(tensor.node).output_shapes.at(static_cast<size_t>(tensor.output)));
  }
  return add_slots(kind, forward, suffix, slots, {output}, attrs);
}

NodeId GradientBuilder::add_slots(OpKind kind, NodeId forward, const std::string& suffix,
                                  const std::vector<std::pair<std::optional<TensorRef>, Shape>>& slots,
                                  const std::vector<Shape>& outputs, const OpAttrs& attrs) {
  const OpNode& source = graph_.node(forward);
  OpNode node;
  node.kind = kind;
  node.name = source.name + "/" + suffix;
  node.attrs = attrs;
  node.layer = source.layer;
  node.layer_name = source.layer_name;
  node.recurrent_layer = source.recurrent_layer;
  node.stacked = source.stacked;
  node.sublayer = source.sublayer;
  node.step = source.step;
  node.pass = Pass::kBackward;
  node.forward = static_cast<int64_t>(forward);
  for (const auto& slot : slots) node.input_shapes.push_back(slot.second);
  node.output_shapes = outputs;
  const OpDef& def = op_def(kind);
  if (def.weighted || def.writes_gradient || def.params != nullptr) {
    node.param_key = source.param_key;
    node.param_count = source.param_count;
  }
  const SliceCost cost = def.cost(node, full_slice(node, {0, graph_.batch()}));
  node.flops = cost.flops;
  node.bytes_read = cost.bytes_read;
  node.bytes_written = cost.bytes_written;
  const NodeId id = graph_.add_node(std::move(node));
  for (size_t slot = 0; slot < slots.size(); ++slot) {
    if (slots[slot].first) graph_.add_edge(*slots[slot].first, id, static_cast<int>(slot));
  }
  return id;
}

bool GradientBuilder::wants(TensorRef tensor) const { return graph_.node(tensor.node).kind != OpKind::kInput; }

void GradientBuilder::contribute(TensorRef tensor, TensorRef gradient) {
  if (!wants(tensor)) return;
  contributions_[{tensor.node, tensor.output}].push_back(gradient);
}

std::optional<TensorRef> GradientBuilder::gradient_of(TensorRef tensor) {
  const auto found = contributions_.find({tensor.node, tensor.output});
  if (found == contributions_.end() || found->second.empty()) return std::nullopt;
  const std::vector<TensorRef> parts = found->second;
  if (parts.size() == 1) return parts.front();
  // A tensor read by several ops: its gradient is the sum of theirs.
  const Shape shape = graph_.node(tensor.node).output_shapes.at(static_cast<size_t>(tensor.output));
  const NodeId sum = add(OpKind::kAdd, tensor.node, "grad_sum" + std::to_string(tensor.output), parts, shape, {});
  return TensorRef{sum, 0};
}

}  // namespace splitscope
