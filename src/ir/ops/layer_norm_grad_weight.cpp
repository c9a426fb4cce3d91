// layer_norm_grad_weight: dgamma = Σ_rows dY ⊙ x̂ and dbeta = Σ_rows dY over
// every row of the slice's samples, added to the running sum of the
// micro-batches before it. Reads X (slot 0) and dY (slot 1) once; writes
// 2·F floats (OpDef::writes_gradient).
#include <fmt/format.h>

#include "ir/ops/norm_rules.hpp"

namespace splitscope {
namespace layer_norm_grad_weight_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_read = 2 * op_rules::output_bytes(node, slice);
  c.bytes_written = 2 * norm_rules::features(node) * kFloat;
  return c;
}

std::string signature(const OpNode& node, const Slice& slice) {
  const int64_t features = norm_rules::features(node);
  return fmt::format("layer_norm_grad_weight:b{}:r{}:f{}", slice.batch.size(),
                     slice.out.size() * inner_count(node.output_shapes.at(0)) / features, features);
}

Slice from_forward(const OpNode&, const Slice& forward) { return forward; }

}  // namespace layer_norm_grad_weight_op

const OpDef& layer_norm_grad_weight_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kLayerNormGradWeight;
    d.name = "layer_norm_grad_weight";
    d.efficiency_like = "layer_norm";
    d.writes_gradient = true;
    d.sums_over_positions = true;
    d.cost = layer_norm_grad_weight_op::cost;
    d.input_channels = norm_rules::position_channels;
    d.param_slice = norm_rules::whole_positions;
    d.signature = layer_norm_grad_weight_op::signature;
    d.from_forward = layer_norm_grad_weight_op::from_forward;
    d.param_range = norm_rules::feature_params;
    d.device_calls = norm_rules::gradient_calls;
    return d;
  }();
  return def;
}

}  // namespace splitscope
