// gelu_grad: dX = dY ⊙ (Φ(x) + x·φ(x)), from the forward input X (slot 0)
// and dY (slot 1). Element-wise: reads both, writes dX; bytes only.
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace gelu_grad_op {

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_written = op_rules::output_bytes(node, slice);
  c.bytes_read = 2 * c.bytes_written;
  return c;
}

}  // namespace gelu_grad_op

const OpDef& gelu_grad_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kGeluGrad;
    d.name = "gelu_grad";
    d.efficiency_like = "gelu";
    d.channel_local = true;
    d.split.out = true;
    d.cost = gelu_grad_op::cost;
    d.input_channels = op_rules::same_channels;
    d.signature = op_rules::elements_signature;
    d.device_calls = op_rules::one_device_call;
    return d;
  }();
  return def;
}

}  // namespace splitscope
