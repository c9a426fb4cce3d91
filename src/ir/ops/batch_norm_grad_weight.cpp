// batch_norm_grad_weight: dgamma = Σ dY·x̂ and dbeta = Σ dY per channel over
// the slice's samples and H·W, added to the running sum of the micro-batches
// before it. Reads X (slot 0) and dY (slot 1) once; writes 2 floats a channel
// (OpDef::writes_gradient: the gradient of the forward slice's gamma, beta).
#include <fmt/format.h>

#include "ir/ops/norm_rules.hpp"

namespace splitscope {
namespace batch_norm_grad_weight_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_read = 2 * op_rules::output_bytes(node, slice);
  c.bytes_written = 2 * slice.out.size() * kFloat;
  return c;
}

Range input_channels(const OpNode&, const Slice& slice, int) { return slice.out; }

std::string signature(const OpNode& node, const Slice& slice) {
  return fmt::format("batch_norm_grad_weight:b{}:c{}:n{}", slice.batch.size(), slice.out.size(),
                     norm_rules::channel_inner(node));
}

Slice from_forward(const OpNode&, const Slice& forward) { return forward; }

}  // namespace batch_norm_grad_weight_op

const OpDef& batch_norm_grad_weight_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kBatchNormGradWeight;
    d.name = "batch_norm_grad_weight";
    d.efficiency_like = "batch_norm";
    d.writes_gradient = true;
    d.split.out = true;
    d.cost = batch_norm_grad_weight_op::cost;
    d.input_channels = batch_norm_grad_weight_op::input_channels;
    d.signature = batch_norm_grad_weight_op::signature;
    d.from_forward = batch_norm_grad_weight_op::from_forward;
    d.param_range = norm_rules::channel_params;
    d.device_calls = norm_rules::gradient_calls;
    return d;
  }();
  return def;
}

}  // namespace splitscope
