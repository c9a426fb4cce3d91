// layer_norm_grad_input: per row, with g = gamma ⊙ dY,
// dX = (F·g - Σ g - x̂·Σ g·x̂)/(F·σ). Reads X (slot 0), dY (slot 1) and gamma
// once (a row stays in cache), writes dX. Runs whole over the features,
// beside its forward op.
#include <fmt/format.h>

#include "ir/ops/norm_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace layer_norm_grad_input_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.param_count = 2 * norm_rules::features(node);  // the forward's parameter value (it reads its gamma)
  c.bytes_written = op_rules::output_bytes(node, slice);
  c.bytes_read = 2 * c.bytes_written + norm_rules::features(node) * kFloat;
  return c;
}

std::string signature(const OpNode& node, const Slice& slice) {
  const int64_t features = norm_rules::features(node);
  return fmt::format("layer_norm_grad_input:b{}:r{}:f{}", slice.batch.size(),
                     slice.out.size() * inner_count(node.output_shapes.at(0)) / features, features);
}

Slice from_forward(const OpNode&, const Slice& forward) { return forward; }

std::vector<ParamTensor> params(const OpNode& node) { return norm_rules::gain_and_shift(norm_rules::features(node)); }

}  // namespace layer_norm_grad_input_op

const OpDef& layer_norm_grad_input_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kLayerNormGradInput;
    d.name = "layer_norm_grad_input";
    d.efficiency_like = "layer_norm";
    d.cost = layer_norm_grad_input_op::cost;
    d.input_channels = norm_rules::position_channels;
    d.param_slice = norm_rules::whole_positions;
    d.signature = layer_norm_grad_input_op::signature;
    d.from_forward = layer_norm_grad_input_op::from_forward;
    d.params = layer_norm_grad_input_op::params;  // it reads its forward op's gamma
    d.param_range = norm_rules::feature_params;
    d.device_calls = op_rules::one_device_call;
    return d;
  }();
  return def;
}

}  // namespace splitscope
