// cell_grad_input: dx_t = G·Wxᵀ, G the gate gradients the x-product takes
// (LSTM all four; GRU dr, dz, dn), gate-major. Reads the layer's Wx.
// FLOPs 2·rows·I·G·U for a slice summing over U hidden units (`reduce`; a
// partial sum of dx unless U = H, cell_rules.hpp).
#include <fmt/format.h>

#include "ir/ops/cell_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace cell_grad_input_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  const int64_t rows = slice.batch.size();
  const int64_t units = slice.reduce.size();
  const int64_t columns = cell_rules::gradient_gates(node) * units;
  const int64_t input = node.attrs.cell_inputs;
  SliceCost c;
  c.flops = 2 * rows * input * columns;
  c.param_count = input * columns;
  c.bytes_read = rows * units * inner_count(node.input_shapes.at(0)) * kFloat + c.param_count * kFloat;
  c.bytes_written = op_rules::output_bytes(node, slice);
  return c;
}

std::string signature(const OpNode& node, const Slice& slice) {
  return fmt::format("cell_grad_input:b{}:i{}:h{}:u{}:g{}", slice.batch.size(), node.attrs.cell_inputs,
                     node.attrs.hidden, slice.reduce.size(), cell_rules::gradient_gates(node));
}

GemmDims gemm(const OpNode& node, const Slice& slice) {
  return GemmDims{slice.batch.size(), node.attrs.cell_inputs, cell_rules::gradient_gates(node) * slice.reduce.size(),
                  1};
}

/// The gate gradients of the units it sums over.
Range input_channels(const OpNode&, const Slice& slice, int) { return slice.reduce; }

}  // namespace cell_grad_input_op

const OpDef& cell_grad_input_def() {
  static const OpDef def = [] {
    OpDef d = cell_rules::gradient_product_def(OpKind::kCellGradInput, "cell_grad_input");
    d.weighted = true;
    d.split.reduce = true;
    d.params = cell_rules::gradient_params;
    d.input_channels = cell_grad_input_op::input_channels;
    d.cost = cell_grad_input_op::cost;
    d.signature = cell_grad_input_op::signature;
    d.gemm = cell_grad_input_op::gemm;
    d.device_calls = [](const SliceCalls&) { return 2; };  // gather, product
    return d;
  }();
  return def;
}

}  // namespace splitscope
