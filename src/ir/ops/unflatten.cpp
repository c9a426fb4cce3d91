// unflatten: flatten's gradient, the inverse reshape [C·H·W] -> [C, H, W].
// Moves no data in a contiguous layout; channels [a, b) of the output read
// features [a·inner, b·inner) of the input.
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace unflatten_op {

SliceCost cost(const OpNode&, const Slice&) { return {}; }

Range input_channels(const OpNode& node, const Slice& slice, int) {
  const int64_t inner = inner_count(node.output_shapes.at(0));
  return {slice.out.begin * inner, slice.out.end * inner};
}

/// Features [a, b) are channels [a/inner, b/inner) where they cover whole channels.
std::optional<Range> channels_from_input(const OpNode& node, Range input) {
  const int64_t inner = inner_count(node.output_shapes.at(0));
  if (input.begin % inner != 0 || input.end % inner != 0) return std::nullopt;
  return Range{input.begin / inner, input.end / inner};
}

}  // namespace unflatten_op

const OpDef& unflatten_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kUnflatten;
    d.name = "unflatten";
    d.efficiency_like = "flatten";
    d.cost_class = CostClass::kFree;
    d.channel_local = true;
    d.split.out = true;
    d.cost = unflatten_op::cost;
    d.input_channels = unflatten_op::input_channels;
    d.channels_from_input = unflatten_op::channels_from_input;
    d.signature = op_rules::elements_signature;
    d.device_calls = op_rules::one_device_call;
    return d;
  }();
  return def;
}

}  // namespace splitscope
