// input: a network input (or one time step of a sequence input). Provided
// before the run, never computed; its "cost" is the bytes it holds.
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace input_op {

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_written = op_rules::output_bytes(node, slice);
  return c;
}

}  // namespace input_op

const OpDef& input_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kInput;
    d.name = "input";
    d.cost_class = CostClass::kFree;
    d.cost = input_op::cost;
    d.input_channels = op_rules::all_channels;
    d.signature = op_rules::elements_signature;
    d.device_calls = [](const SliceCalls&) { return 0; };  // provided before the run, never placed
    return d;
  }();
  return def;
}

}  // namespace splitscope
