// batch_norm_grad_input: dX = gamma/(M·σ)·(M·dY - Σ dY - x̂·Σ dY·x̂) per
// channel, M = samples·H·W of the slice, σ and x̂ from the batch statistics.
// Reads X (slot 0) and dY (slot 1) twice, as cuDNN's backward does with the
// statistics the forward saved: the two sums, then dX (the cpu kernel
// recomputes the statistics in one more pass; docs/op-table.md). Reads gamma.
#include <fmt/format.h>

#include "ir/ops/norm_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace batch_norm_grad_input_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.param_count = 2 * slice.out.size();  // the forward slice's parameter value (it reads its gamma)
  c.bytes_written = op_rules::output_bytes(node, slice);
  c.bytes_read = 2 * 2 * c.bytes_written + slice.out.size() * kFloat;
  return c;
}

Range input_channels(const OpNode&, const Slice& slice, int) { return slice.out; }

std::string signature(const OpNode& node, const Slice& slice) {
  return fmt::format("batch_norm_grad_input:b{}:c{}:n{}", slice.batch.size(), slice.out.size(),
                     norm_rules::channel_inner(node));
}

Slice from_forward(const OpNode&, const Slice& forward) { return forward; }

std::vector<ParamTensor> params(const OpNode& node) {
  return norm_rules::gain_and_shift(node.output_shapes.at(0).at(0));
}

}  // namespace batch_norm_grad_input_op

const OpDef& batch_norm_grad_input_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kBatchNormGradInput;
    d.name = "batch_norm_grad_input";
    d.efficiency_like = "batch_norm";
    d.channel_local = true;
    d.split.out = true;
    d.cost = batch_norm_grad_input_op::cost;
    d.input_channels = batch_norm_grad_input_op::input_channels;
    d.signature = batch_norm_grad_input_op::signature;
    d.from_forward = batch_norm_grad_input_op::from_forward;
    d.params = batch_norm_grad_input_op::params;  // it reads its forward slice's gamma
    d.param_range = norm_rules::channel_params;
    d.device_calls = op_rules::one_device_call;
    return d;
  }();
  return def;
}

}  // namespace splitscope
