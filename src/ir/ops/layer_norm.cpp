// layer_norm: y = gamma ⊙ (x - mean)/sqrt(var + eps) + beta over the last axis
// of each sample ([F], or each step of [T, F]), the same in training and
// inference. Its statistics span every feature, so a tensor or vertical
// split never cuts the features: it runs whole on one device, its input
// gathered there (docs/op-table.md: how a split of the features would reduce
// instead). Over a sequence [T, F] each position is normalized alone, so
// sequence parallelism cuts the positions (axis 0): a slice reads its own.
// Memory-bound, no FLOPs counted: one pass over X (a row is in cache for its
// statistics and its normalization), gamma and beta read.
#include <fmt/format.h>

#include "ir/gradient_builder.hpp"
#include "ir/layer_costs.hpp"
#include "ir/network_fields.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/norm_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace layer_norm_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.param_count = 2 * norm_rules::features(node);
  c.bytes_written = op_rules::output_bytes(node, slice);
  c.bytes_read = c.bytes_written + c.param_count * kFloat;
  return c;
}

std::string signature(const OpNode& node, const Slice& slice) {
  const int64_t features = norm_rules::features(node);
  return fmt::format("layer_norm:b{}:r{}:f{}", slice.batch.size(),
                     slice.out.size() * inner_count(node.output_shapes.at(0)) / features, features);
}

std::vector<ParamTensor> params(const OpNode& node) { return norm_rules::gain_and_shift(norm_rules::features(node)); }

/// dX (where the input wants one) and dgamma, dbeta, both from X and dY.
void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  const OpNode forward = builder.node(node);  // a copy: adding nodes moves the graph's nodes
  const TensorRef x = builder.input(node, 0);
  const TensorRef dy = *gradients.at(0);
  if (builder.wants(x)) {
    builder.contribute(x, TensorRef{builder.add(OpKind::kLayerNormGradInput, node, "grad_input", {x, dy},
                                                forward.input_shapes.at(0), forward.attrs),
                                    0});
  }
  builder.add(OpKind::kLayerNormGradWeight, node, "grad_weight", {x, dy}, forward.output_shapes.at(0), forward.attrs);
}

}  // namespace layer_norm_op

namespace layer_norm_layer {

void read(const NetworkFields& fields, Layer& layer) {
  layer.attrs.epsilon = fields.optional_number("epsilon", 1e-5, NumberRule::kPositive);
  if (layer.input_shape.size() == 3) {
    fields.fail("", "layer_norm normalizes the last axis of a vector [features] or a sequence [steps, features], "
                    "but gets the image " +
                        to_string(layer.input_shape) +
                        "; use batch_norm after a convolution, or add {\"type\": \"flatten\"} first");
  }
  layer.output_shape = layer.input_shape;
}

/// gamma, beta per feature
int64_t params(const Layer& layer) { return count_product({2, layer.input_shape.back()}); }

const LayerDef& definition() {
  static const LayerDef def = [] {
    LayerDef d;
    d.name = "layer_norm";
    d.fields = {"epsilon"};
    d.read = read;
    d.params = params;
    return d;
  }();
  return def;
}

}  // namespace layer_norm_layer

const OpDef& layer_norm_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kLayerNorm;
    d.name = "layer_norm";
    d.cost = layer_norm_op::cost;
    d.input_channels = norm_rules::position_channels;
    d.param_slice = norm_rules::whole_positions;
    d.signature = layer_norm_op::signature;
    d.params = layer_norm_op::params;
    d.gradient = layer_norm_op::gradient;
    d.param_range = norm_rules::feature_params;
    d.device_calls = op_rules::one_device_call;
    d.layer = &layer_norm_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
