// cell_grad_hidden: dh_{t-1} = G·Whᵀ, G the gate gradients the h-product
// takes (LSTM all four; GRU dr, dz, dn·r), plus (GRU) the direct part dh ⊙ z
// (slot 1). Reads the layer's Wh. FLOPs 2·rows·H·G·H.
#include <fmt/format.h>

#include "ir/ops/cell_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace cell_grad_hidden_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  const int64_t rows = slice.batch.size();
  const int64_t hidden = node.attrs.hidden;
  const int64_t columns = cell_rules::gradient_gates(node) * hidden;
  SliceCost c;
  c.flops = 2 * rows * hidden * columns;
  c.param_count = hidden * columns;
  int64_t read = 0;
  for (const Shape& shape : node.input_shapes) read += element_count(shape);
  c.bytes_read = rows * read * kFloat + c.param_count * kFloat;
  c.bytes_written = op_rules::output_bytes(node, slice);
  return c;
}

std::string signature(const OpNode& node, const Slice& slice) {
  return fmt::format("cell_grad_hidden:b{}:h{}:g{}", slice.batch.size(), node.attrs.hidden,
                     cell_rules::gradient_gates(node));
}

GemmDims gemm(const OpNode& node, const Slice& slice) {
  return GemmDims{slice.batch.size(), node.attrs.hidden, cell_rules::gradient_gates(node) * node.attrs.hidden, 1};
}

}  // namespace cell_grad_hidden_op

const OpDef& cell_grad_hidden_def() {
  static const OpDef def = [] {
    OpDef d = cell_rules::gradient_product_def(OpKind::kCellGradHidden, "cell_grad_hidden");
    d.weighted = true;
    d.params = cell_rules::gradient_params;
    d.cost = cell_grad_hidden_op::cost;
    d.signature = cell_grad_hidden_op::signature;
    d.gemm = cell_grad_hidden_op::gemm;
    return d;
  }();
  return def;
}

}  // namespace splitscope
