// loss: the gradient of the training loss w.r.t. the logits (softmax
// cross-entropy, reading the softmax's probabilities p and the labels:
// (p - onehot) / B) or w.r.t. the prediction (mean squared error: 2 (y - t) / (B·n)).
// Never split by samples: its divisor is the whole batch. Mean squared error
// may be feature-cut (the vocabulary-parallel output layer of `tensor`,
// partitioners/head_split.hpp): each element's gradient needs only its own
// prediction and target, so a device differentiates its logits shard, reading
// the targets whole (each device loads them) at its shard's features.
// Cross-entropy is never cut (its output is a softmax, which `tensor` does not
// split). Bytes only.
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace loss_op {

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_written = op_rules::output_bytes(node, slice);
  const int64_t rows = slice.batch.size();
  // A feature-cut slice reads its shard of the prediction and of the targets.
  const FeatureCut& cut = slice.features;
  const auto elements = [&](const Shape& shape) { return shape.at(0) * cut_inner_count(shape, cut); };
  c.bytes_read = rows * (elements(node.input_shapes.at(0)) + elements(node.input_shapes.at(1))) * op_rules::kFloat;
  return c;
}

/// The prediction's shard (slot 0) and the whole targets (slot 1), which
/// the kernel reads at the shard's features.
FeatureCut shard_input_features(const OpNode&, const Slice& slice, int slot) {
  return slot == 0 ? slice.features : FeatureCut{};
}

FeatureCut shard_output_features(const OpNode&, const Slice& slice) { return slice.features; }

}  // namespace loss_op

const OpDef& loss_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kLoss;
    d.name = "loss";
    d.cost = loss_op::cost;
    d.input_channels = op_rules::all_channels;
    d.signature = op_rules::elements_signature;
    d.input_features = loss_op::shard_input_features;
    d.output_features = loss_op::shard_output_features;
    d.device_calls = op_rules::one_device_call;
    return d;
  }();
  return def;
}

}  // namespace splitscope
