// gru_cell_grad: one GRU step's backward, element-wise half: recomputes the
// step's gates from x (0), h_{t-1} (1), dh_t (2) and the layer's weights (one product, as the
// forward step), then writes the gate pre-activation gradients, unit-major
// [H, 4] (cell_grad_* read them), and the direct part of dh_{t-1}, dh ⊙ z.
// FLOPs: the recomputed product, 2·G·H·(I+H)·rows.
#include <fmt/format.h>

#include "ir/ops/cell_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  const int64_t rows = slice.batch.size();
  const int64_t gates = cell_rules::gradient_gates(node);
  const int64_t input = node.attrs.cell_inputs;
  const int64_t hidden = node.attrs.hidden;
  SliceCost c;
  c.flops = 2 * gates * hidden * (input + hidden) * rows;
  c.param_count = gates * hidden * (input + hidden) + (node.attrs.bias ? gates * hidden : 0);
  int64_t read = 0;
  for (const Shape& shape : node.input_shapes) read += element_count(shape);
  c.bytes_read = rows * read * kFloat + c.param_count * kFloat;
  c.bytes_written = rows * hidden * (4 + 1) * kFloat;
  return c;
}

std::string signature(const OpNode& node, const Slice& slice) {
  return fmt::format("gru_cell_grad:b{}:i{}:h{}:t{}", slice.batch.size(), node.attrs.cell_inputs, node.attrs.hidden,
                     node.step > 0 ? 1 : 0);
}

GemmDims gemm(const OpNode& node, const Slice& slice) {
  return GemmDims{slice.batch.size(), cell_rules::gradient_gates(node) * node.attrs.hidden,
                  node.attrs.cell_inputs + node.attrs.hidden, 1};
}

}  // namespace

const OpDef& gru_cell_grad_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kGruCellGrad;
    d.name = "gru_cell_grad";
    d.cost_class = CostClass::kMatrix;
    d.weighted = true;
    d.split.out = true;  // by its weights' rule; no partitioner slices it yet
    d.cost = cost;
    d.input_channels = op_rules::all_channels;
    d.signature = signature;
    d.gemm = gemm;
    d.params = cell_rules::gradient_params;
    d.param_slice = cell_rules::gradient_param_slice;
    d.from_forward = cell_rules::gradient_from_forward;
    return d;
  }();
  return def;
}

}  // namespace splitscope
