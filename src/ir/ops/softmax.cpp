// softmax over a flat [F] input. A slice of outputs still reads whole rows
// (the normaliser needs every element); bytes only.
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace softmax_op {

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_written = op_rules::output_bytes(node, slice);
  c.bytes_read = slice.batch.size() * element_count(node.input_shapes.at(0)) * op_rules::kFloat;
  return c;
}

}  // namespace softmax_op

const OpDef& softmax_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kSoftmax;
    d.name = "softmax";
    d.cost = softmax_op::cost;
    d.input_channels = op_rules::all_channels;
    d.signature = op_rules::elements_signature;
    d.device_calls = op_rules::one_device_call;
    return d;
  }();
  return def;
}

}  // namespace splitscope
