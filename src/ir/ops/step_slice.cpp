// step_slice: takes step t (OpNode::step) out of a [T, F] sequence, for a
// recurrent layer that reads a whole tensor. A copy: reads what it writes.
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace {

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_written = op_rules::output_bytes(node, slice);
  c.bytes_read = c.bytes_written;
  return c;
}

}  // namespace

const OpDef& step_slice_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kStepSlice;
    d.name = "step_slice";
    d.cost = cost;
    d.input_channels = op_rules::all_channels;
    d.signature = op_rules::elements_signature;
    return d;
  }();
  return def;
}

}  // namespace splitscope
