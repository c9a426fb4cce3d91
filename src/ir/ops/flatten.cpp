// flatten: a reshape of a contiguous [C, H, W] tensor into [C·H·W]. Moves no
// data; a slice of features [a, b) reads input channels [a/inner, b/inner).
#include "ir/network_fields.hpp"
#include "ir/ops/gradient_rules.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/op_rules.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace flatten_op {

SliceCost cost(const OpNode&, const Slice&) { return {}; }

Range input_channels(const OpNode& node, const Slice& slice, int) {
  const int64_t inner = inner_count(node.input_shapes.at(0));
  SPLITSCOPE_CHECK(slice.out.begin % inner == 0 && slice.out.end % inner == 0,
                   "a flatten slice must cover whole input channels");
  return {slice.out.begin / inner, slice.out.end / inner};
}

/// Input channel c is features [c·inner, (c+1)·inner).
std::optional<Range> channels_from_input(const OpNode& node, Range input) {
  const int64_t inner = inner_count(node.input_shapes.at(0));
  return Range{input.begin * inner, input.end * inner};
}

}  // namespace flatten_op

namespace flatten_op {
void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  gradient_rules::unary(builder, node, gradients, OpKind::kUnflatten, {gradient_rules::kOutputGradient});
}
}  // namespace flatten_op

namespace flatten_layer {

void read(const NetworkFields&, Layer& layer) { layer.output_shape = {element_count(layer.input_shape)}; }

const LayerDef& definition() {
  static const LayerDef def = [] {
    LayerDef d;
    d.name = "flatten";
    d.read = read;
    return d;
  }();
  return def;
}

}  // namespace flatten_layer

const OpDef& flatten_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kFlatten;
    d.name = "flatten";
    d.cost_class = CostClass::kFree;
    d.channel_local = true;
    d.split.out = true;
    d.cost = flatten_op::cost;
    d.input_channels = flatten_op::input_channels;
    d.channels_from_input = flatten_op::channels_from_input;
    d.signature = op_rules::elements_signature;
    d.gradient = flatten_op::gradient;
    d.device_calls = op_rules::one_device_call;
    d.layer = &flatten_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
