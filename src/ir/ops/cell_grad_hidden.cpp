// cell_grad_hidden: dh_{t-1} = G·Whᵀ, G the gate gradients the h-product
// takes (LSTM all four; GRU dr, dz, dn·r), plus (GRU) the direct part dh ⊙ z
// (slot 1). Reads the layer's Wh. FLOPs 2·rows·H·G·U for a slice summing over
// U hidden units (`reduce`; a partial sum of dh_{t-1} unless U = H, with the
// direct part of its own units, cell_rules.hpp).
#include <fmt/format.h>

#include "ir/ops/cell_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace cell_grad_hidden_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  const int64_t rows = slice.batch.size();
  const int64_t hidden = node.attrs.hidden;
  const int64_t units = slice.reduce.size();
  const int64_t columns = cell_rules::gradient_gates(node) * units;
  SliceCost c;
  c.flops = 2 * rows * hidden * columns;
  c.param_count = hidden * columns;
  int64_t read = 0;
  for (const Shape& shape : node.input_shapes) read += units * inner_count(shape);
  c.bytes_read = rows * read * kFloat + c.param_count * kFloat;
  c.bytes_written = op_rules::output_bytes(node, slice);
  return c;
}

std::string signature(const OpNode& node, const Slice& slice) {
  return fmt::format("cell_grad_hidden:b{}:h{}:u{}:g{}", slice.batch.size(), node.attrs.hidden,
                     slice.reduce.size(), cell_rules::gradient_gates(node));
}

GemmDims gemm(const OpNode& node, const Slice& slice) {
  return GemmDims{slice.batch.size(), node.attrs.hidden, cell_rules::gradient_gates(node) * slice.reduce.size(), 1};
}

/// The gate gradients (and GRU direct part) of the units it sums over.
Range input_channels(const OpNode&, const Slice& slice, int) { return slice.reduce; }

/// Gather and product; the GRU's direct part copied in first, after a zero
/// fill of the units a slice's direct part leaves out.
int device_calls(const SliceCalls& calls) {
  if (!calls.node.attrs.gru || !calls.has_input(1)) return 2;
  return 3 + (calls.slice.reduce.size() != calls.node.attrs.hidden ? 1 : 0);
}

}  // namespace cell_grad_hidden_op

const OpDef& cell_grad_hidden_def() {
  static const OpDef def = [] {
    OpDef d = cell_rules::gradient_product_def(OpKind::kCellGradHidden, "cell_grad_hidden");
    d.weighted = true;
    d.split.reduce = true;
    d.input_gradient_slot = kCellHiddenSlot;
    d.params = cell_rules::gradient_params;
    d.input_channels = cell_grad_hidden_op::input_channels;
    d.cost = cell_grad_hidden_op::cost;
    d.signature = cell_grad_hidden_op::signature;
    d.gemm = cell_grad_hidden_op::gemm;
    d.device_calls = cell_grad_hidden_op::device_calls;
    return d;
  }();
  return def;
}

}  // namespace splitscope
