// avgpool_grad: each window's gradient, divided by the window's size, added
// to every element of the window. Per channel; bytes only: reads dY, writes dX.
#include <fmt/format.h>

#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace avgpool_grad_op {

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_written = op_rules::output_bytes(node, slice);
  c.bytes_read = slice.batch.size() * slice.out.size() * inner_count(node.input_shapes.at(0)) * op_rules::kFloat;
  return c;
}

std::string signature(const OpNode& node, const Slice& slice) {
  const Shape& in = node.output_shapes.at(0);
  const OpAttrs& a = node.attrs;
  return fmt::format("avgpool_grad:b{}:c{}:h{}:w{}:k{}x{}:s{}x{}", slice.batch.size(), slice.out.size(), in.at(1),
                     in.at(2), a.kernel.h, a.kernel.w, a.stride.h, a.stride.w);
}

}  // namespace avgpool_grad_op

const OpDef& avgpool_grad_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kAvgPoolGrad;
    d.name = "avgpool_grad";
    d.efficiency_like = "avgpool";
    d.channel_local = true;
    d.split.out = true;
    d.cost = avgpool_grad_op::cost;
    d.input_channels = op_rules::same_channels;
    d.signature = avgpool_grad_op::signature;
    d.device_calls = op_rules::one_device_call;
    d.rate_families = {"pool_gradient.avg", "pool.avg"};
    return d;
  }();
  return def;
}

}  // namespace splitscope
