// batch_norm: y = gamma·(x - mean)/sqrt(var + eps) + beta per channel (axis 0
// of [C, H, W], or each feature of [F]). In a training step mean and var are
// the batch's, over (N, H, W) of the slice's own samples (a data-parallel
// replica normalizes by its replica's samples, as PyTorch DDP without
// SyncBatchNorm); in inference they are the running statistics.
// Channel-local: a slice of channels needs only those channels and their
// gamma/beta, so a filter split keeps it on the device of its channels.
// Memory-bound: no FLOPs counted (as for every element-wise kind); a training
// step's forward reads X twice (statistics, then normalize), inference once.
#include <fmt/format.h>

#include "ir/gradient_builder.hpp"
#include "ir/layer_costs.hpp"
#include "ir/network_fields.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/norm_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace batch_norm_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.param_count = 2 * slice.out.size();
  c.bytes_written = op_rules::output_bytes(node, slice);
  const int64_t passes = node.attrs.training ? 2 : 1;
  c.bytes_read = passes * c.bytes_written + c.param_count * kFloat;
  return c;
}

std::string signature(const OpNode& node, const Slice& slice) {
  return fmt::format("batch_norm:b{}:c{}:n{}{}", slice.batch.size(), slice.out.size(), norm_rules::channel_inner(node),
                     node.attrs.training ? ":train" : "");
}

std::vector<ParamTensor> params(const OpNode& node) {
  return norm_rules::gain_and_shift(node.output_shapes.at(0).at(0));
}

/// dX (where the input wants one) and dgamma, dbeta, both from X and dY.
void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  const OpNode forward = builder.node(node);  // a copy: adding nodes moves the graph's nodes
  const TensorRef x = builder.input(node, 0);
  const TensorRef dy = *gradients.at(0);
  if (builder.wants(x)) {
    builder.contribute(x, TensorRef{builder.add(OpKind::kBatchNormGradInput, node, "grad_input", {x, dy},
                                                forward.input_shapes.at(0), forward.attrs),
                                    0});
  }
  builder.add(OpKind::kBatchNormGradWeight, node, "grad_weight", {x, dy}, forward.output_shapes.at(0), forward.attrs);
}

void training_form(OpNode& node) {
  if (node.attrs.training) return;
  node.attrs.training = true;
  node.bytes_read += node.bytes_written;  // the statistics pass over X (X and Y have one shape)
}

}  // namespace batch_norm_op

namespace batch_norm_layer {

void read(const NetworkFields& fields, Layer& layer) {
  layer.attrs.epsilon = fields.optional_number("epsilon", 1e-5, NumberRule::kPositive);
  layer.attrs.momentum = fields.optional_number("momentum", 0.1, NumberRule::kFraction);
  if (layer.input_shape.size() == 2) {
    fields.fail("", "batch_norm normalizes the channels of an image [channels, height, width] (after conv2d) or "
                    "the features of a vector [features] (after dense), but gets the sequence " +
                        to_string(layer.input_shape) + "; use layer_norm for sequences");
  }
  layer.output_shape = layer.input_shape;
}

/// gamma, beta per channel
int64_t params(const Layer& layer) { return count_product({2, layer.input_shape.at(0)}); }

const LayerDef& definition() {
  static const LayerDef def = [] {
    LayerDef d;
    d.name = "batch_norm";
    d.fields = {"epsilon", "momentum"};
    d.read = read;
    d.params = params;
    return d;
  }();
  return def;
}

}  // namespace batch_norm_layer

const OpDef& batch_norm_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kBatchNorm;
    d.name = "batch_norm";
    d.channel_local = true;
    d.split.out = true;
    d.cost = batch_norm_op::cost;
    d.input_channels = op_rules::same_channels;
    d.signature = batch_norm_op::signature;
    d.params = batch_norm_op::params;
    d.gradient = batch_norm_op::gradient;
    d.training_form = batch_norm_op::training_form;
    d.param_range = norm_rules::channel_params;
    d.device_calls = op_rules::one_device_call;
    d.layer = &batch_norm_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
