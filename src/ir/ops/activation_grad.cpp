// activation_grad: dX = dY ⊙ f'(Y) for the activation in attrs, computed from
// the activation's output Y (relu: Y > 0; tanh: 1 - Y²; sigmoid: Y (1 - Y)).
// Element-wise: reads dY and Y, writes dX; bytes only, like the forward activation.
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace activation_grad_op {

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_written = op_rules::output_bytes(node, slice);
  c.bytes_read = 2 * c.bytes_written;
  return c;
}

}  // namespace activation_grad_op

const OpDef& activation_grad_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kActivationGrad;
    d.name = "activation_grad";
    d.efficiency_like = "relu";
    d.channel_local = true;
    d.split.out = true;
    d.cost = activation_grad_op::cost;
    d.input_channels = op_rules::same_channels;
    d.signature = op_rules::elements_signature;
    d.device_calls = op_rules::one_device_call;
    return d;
  }();
  return def;
}

}  // namespace splitscope
