// loss: the gradient of the training loss w.r.t. the logits (softmax
// cross-entropy, reading the softmax's probabilities p and the labels:
// (p - onehot) / B) or w.r.t. the prediction (mean squared error: 2 (y - t) / (B·n)).
// Never split: its divisor is the whole batch. Bytes only.
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace loss_op {

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_written = op_rules::output_bytes(node, slice);
  const int64_t rows = slice.batch.size();
  c.bytes_read = rows * (element_count(node.input_shapes.at(0)) + element_count(node.input_shapes.at(1))) *
                 op_rules::kFloat;
  return c;
}

}  // namespace loss_op

const OpDef& loss_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kLoss;
    d.name = "loss";
    d.cost = loss_op::cost;
    d.input_channels = op_rules::all_channels;
    d.signature = op_rules::elements_signature;
    return d;
  }();
  return def;
}

}  // namespace splitscope
