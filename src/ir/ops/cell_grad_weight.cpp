// cell_grad_weight: one step's dWx = xᵀ·Gx, dWh = h_{t-1}ᵀ·Gh, db = Σ Gx,
// added to the sum of the steps (and micro-batches) before it. Reads x
// (slot 0), h_{t-1} (slot 1, none at t = 0) and the gate gradients (slot 2);
// writes the gradient of the layer's weights (of a slice's U hidden units:
// their gathered gate columns, cell_rules.hpp). FLOPs 2·rows·G·U·(I+H) + rows·G·U.
#include <fmt/format.h>

#include "ir/ops/cell_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace cell_grad_weight_op {

using op_rules::kFloat;

/// x and h_{t-1} whole (slots 0, 1), the gate gradients of its units (slot 2).
Range input_channels(const OpNode& node, const Slice& slice, int slot) {
  return slot == 2 ? slice.out : op_rules::all_channels(node, slice, slot);
}

SliceCost cost(const OpNode& node, const Slice& slice) {
  const int64_t rows = slice.batch.size();
  const int64_t columns = cell_rules::gradient_gates(node) * slice.out.size();
  const int64_t input = node.attrs.cell_inputs;
  const int64_t hidden = node.attrs.hidden;
  const int64_t bias = node.attrs.bias ? columns : 0;
  SliceCost c;
  c.flops = 2 * rows * columns * (input + hidden) + rows * bias;
  int64_t read = 0;
  for (size_t slot = 0; slot < node.input_shapes.size(); ++slot) {
    read += input_channels(node, slice, static_cast<int>(slot)).size() * inner_count(node.input_shapes[slot]);
  }
  c.bytes_read = rows * read * kFloat;
  c.bytes_written = (columns * (input + hidden) + bias) * kFloat;
  return c;
}

std::string signature(const OpNode& node, const Slice& slice) {
  return fmt::format("cell_grad_weight:b{}:i{}:h{}:u{}:g{}:t{}", slice.batch.size(), node.attrs.cell_inputs,
                     node.attrs.hidden, slice.out.size(), cell_rules::gradient_gates(node), node.step > 0 ? 1 : 0);
}

GemmDims gemm(const OpNode& node, const Slice& slice) {
  return GemmDims{node.attrs.cell_inputs + node.attrs.hidden, cell_rules::gradient_gates(node) * slice.out.size(),
                  slice.batch.size(), 1};
}

/// Gather and dWx; gather (GRU) and dWh, or at t = 0 a zero fill where
/// nothing is summed onto; the bias sum; the running sum copied in.
int device_calls(const SliceCalls& calls) {
  const OpAttrs& attrs = calls.node.attrs;
  const int sum = calls.adds_running_sum ? 1 : 0;
  const int recurrent = calls.has_input(1) ? (attrs.gru ? 2 : 1) : (sum == 0 ? 1 : 0);
  return 2 + recurrent + (attrs.bias ? 1 : 0) + sum;
}

}  // namespace cell_grad_weight_op

const OpDef& cell_grad_weight_def() {
  static const OpDef def = [] {
    OpDef d = cell_rules::gradient_product_def(OpKind::kCellGradWeight, "cell_grad_weight");
    d.writes_gradient = true;
    d.input_channels = cell_grad_weight_op::input_channels;
    d.cost = cell_grad_weight_op::cost;
    d.signature = cell_grad_weight_op::signature;
    d.gemm = cell_grad_weight_op::gemm;
    d.device_calls = cell_grad_weight_op::device_calls;
    return d;
  }();
  return def;
}

}  // namespace splitscope
