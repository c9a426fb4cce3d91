// step_slice: takes step t (OpNode::step) out of a [T, F] sequence, for a
// recurrent layer that reads a whole tensor. A copy: reads what it writes.
#include "ir/ops/gradient_rules.hpp"
#include "util/errors.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace step_slice_op {

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_written = op_rules::output_bytes(node, slice);
  c.bytes_read = c.bytes_written;
  return c;
}

}  // namespace step_slice_op

namespace step_slice_op {
/// A sequence cut into steps for a recurrent layer: its gradient is needed
/// only when the sequence is computed (not a network input).
void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  (void)gradients;
  const TensorRef sequence = builder.input(node, 0);
  if (!builder.wants(sequence)) return;
  throw InputError("--train", "",
                   "layer '" + builder.node(node).layer_name + "' reads a computed sequence step by step; its "
                   "gradient (a stack of the steps' gradients) is not built yet");
}
}  // namespace step_slice_op

const OpDef& step_slice_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kStepSlice;
    d.name = "step_slice";
    d.cost = step_slice_op::cost;
    d.input_channels = op_rules::all_channels;
    d.signature = op_rules::elements_signature;
    d.gradient = step_slice_op::gradient;
    d.device_calls = op_rules::one_device_call;
    d.rate_families = {"join"};
    return d;
  }();
  return def;
}

}  // namespace splitscope
