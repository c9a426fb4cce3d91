// maxpool_grad: each window's gradient goes to the element the forward pass
// picked, found again from the forward input X (slot 0); dY is slot 1.
// Per channel; bytes only: reads X and dY, writes dX.
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace maxpool_grad_op {

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_written = op_rules::output_bytes(node, slice);
  c.bytes_read = c.bytes_written + slice.batch.size() * slice.out.size() * inner_count(node.input_shapes.at(1)) *
                                        op_rules::kFloat;
  return c;
}

}  // namespace maxpool_grad_op

const OpDef& maxpool_grad_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kMaxPoolGrad;
    d.name = "maxpool_grad";
    d.efficiency_like = "maxpool";
    d.channel_local = true;
    d.split.out = true;
    d.cost = maxpool_grad_op::cost;
    d.input_channels = op_rules::same_channels;
    d.signature = op_rules::pool_signature;
    d.device_calls = op_rules::one_device_call;
    d.rate_families = {"pool_gradient.max", "pool.max"};
    return d;
  }();
  return def;
}

}  // namespace splitscope
