// stack: gathers the per-step outputs of a recurrent layer into one [T, H]
// tensor (output channel t = input slot t). A copy: reads what it writes.
#include "ir/ops/gradient_rules.hpp"
#include <algorithm>
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace stack_op {

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_written = op_rules::output_bytes(node, slice);
  c.bytes_read = c.bytes_written;
  return c;
}

/// One copy per time step of the slice.
int device_calls(const SliceCalls& calls) { return std::max<int>(1, static_cast<int>(calls.slice.out.size())); }

}  // namespace stack_op

namespace stack_op {
/// Step t's output gets row t of the sequence's gradient (a step slice).
void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  // Copies: adding nodes moves the graph's nodes.
  const std::vector<Shape> steps = builder.node(node).input_shapes;
  const OpAttrs attrs = builder.node(node).attrs;
  for (size_t slot = 0; slot < steps.size(); ++slot) {
    const TensorRef step = builder.input(node, static_cast<int>(slot));
    if (!builder.wants(step)) continue;
    const NodeId slice = builder.add(OpKind::kStepSlice, node, "grad" + std::to_string(slot), {*gradients.at(0)},
                                     steps[slot], attrs);
    builder.set_step(slice, static_cast<int>(slot));
    builder.contribute(step, TensorRef{slice, 0});
  }
}
}  // namespace stack_op

const OpDef& stack_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kStack;
    d.name = "stack";
    d.cost = stack_op::cost;
    d.input_channels = op_rules::all_channels;
    d.signature = op_rules::elements_signature;
    d.gradient = stack_op::gradient;
    d.device_calls = stack_op::device_calls;
    d.rate_families = {"join"};
    return d;
  }();
  return def;
}

}  // namespace splitscope
