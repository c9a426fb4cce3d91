#include "ir/ops/cell_rules.hpp"

#include <cmath>
#include <fmt/format.h>

#include "ir/ops/op_rules.hpp"
#include "util/errors.hpp"

namespace splitscope::cell_rules {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice, int64_t gates, bool has_cell_state) {
  const int64_t rows = slice.batch.size();
  const int64_t units = slice.out.size();
  const int64_t input = node.input_shapes.at(kCellInputSlot).at(0);
  const int64_t hidden = node.attrs.hidden;
  SliceCost c;
  c.flops = 2 * gates * units * (input + hidden) * rows;
  c.param_count = gates * units * (input + hidden) + (node.attrs.bias ? gates * units : 0);
  const bool has_state = node.step > 0;
  c.bytes_read = rows * input * kFloat + c.param_count * kFloat + (has_state ? rows * hidden * kFloat : 0) +
                 (has_state && has_cell_state ? rows * units * kFloat : 0);
  c.bytes_written = rows * units * kFloat * (has_cell_state ? 2 : 1);
  return c;
}

Range input_channels(const OpNode& node, const Slice& slice, int slot) {
  return slot == kCellStateSlot ? slice.out : op_rules::all_channels(node, slice, slot);
}

std::string signature(const OpNode& node, const Slice& slice) {
  return fmt::format("{}:b{}:i{}:h{}:u{}:t{}", to_string(node.kind), slice.batch.size(),
                     node.input_shapes.at(kCellInputSlot).at(0), node.attrs.hidden, slice.out.size(),
                     node.step > 0 ? 1 : 0);
}

std::vector<ParamTensor> params(const OpNode& node, int64_t gates) {
  const int64_t hidden = node.attrs.hidden;
  const int64_t input = node.input_shapes.at(kCellInputSlot).at(0);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hidden)));
  std::vector<ParamTensor> tensors{{"Wx", {input, gates * hidden}, scale}, {"Wh", {hidden, gates * hidden}, scale}};
  if (node.attrs.bias) tensors.push_back({"b", {gates * hidden}, scale});
  return tensors;
}

int64_t gradient_gates(const OpNode& node) { return node.attrs.gru ? 3 : 4; }

std::vector<ParamTensor> gradient_params(const OpNode& node) {
  const int64_t gates = gradient_gates(node);
  const int64_t hidden = node.attrs.hidden;
  const int64_t input = node.attrs.cell_inputs;
  std::vector<ParamTensor> tensors{{"Wx", {input, gates * hidden}, 0.0f}, {"Wh", {hidden, gates * hidden}, 0.0f}};
  if (node.attrs.bias) tensors.push_back({"b", {gates * hidden}, 0.0f});
  return tensors;
}

Slice gradient_param_slice(const OpNode& node, const Slice& slice) {
  return Slice{slice.batch, {0, node.attrs.hidden}, {0, node.attrs.cell_inputs}};
}

Slice gradient_from_forward(const OpNode& node, const Slice& forward) {
  if (forward.out.size() != node.attrs.hidden) {
    throw InputError("--train", "",
                     "layer '" + node.layer_name + "' is split by hidden units, and the gradients of a slice of a "
                     "cell are not built yet: train recurrent networks with single, data, horizontal or pipeline");
  }
  return full_slice(node, forward.batch);
}

namespace {

// A step's gradient: recomputes the step's gates (one product, as the forward
// step), reads x, h, c and their gradients, writes the gate gradients [H, 4]
// and one [H] tensor. FLOPs: the recomputed product, 2·G·H·(I+H)·rows.
SliceCost step_gradient_cost(const OpNode& node, const Slice& slice) {
  const int64_t rows = slice.batch.size();
  const int64_t gates = gradient_gates(node);
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

std::string step_gradient_signature(const OpNode& node, const Slice& slice) {
  return fmt::format("{}:b{}:i{}:h{}:t{}", to_string(node.kind), slice.batch.size(), node.attrs.cell_inputs,
                     node.attrs.hidden, node.step > 0 ? 1 : 0);
}

GemmDims step_gradient_gemm(const OpNode& node, const Slice& slice) {
  return GemmDims{slice.batch.size(), gradient_gates(node) * node.attrs.hidden, node.attrs.cell_inputs + node.attrs.hidden,
                  1};
}

}  // namespace

OpDef gradient_product_def(OpKind kind, std::string_view name) {
  OpDef d;
  d.kind = kind;
  d.name = name;
  d.cost_class = CostClass::kMatrix;
  d.efficiency_like = "dense";  // its products are GEMMs, as a dense layer's
  d.split.out = true;  // by its weights' rule; no partitioner slices it yet
  d.input_channels = op_rules::all_channels;
  d.param_slice = gradient_param_slice;
  d.from_forward = gradient_from_forward;
  return d;
}

OpDef step_gradient_def(OpKind kind, std::string_view name) {
  OpDef d = gradient_product_def(kind, name);
  d.efficiency_like = kind == OpKind::kLstmCellGrad ? "lstm_cell" : "gru_cell";  // the step's gates, recomputed
  d.weighted = true;
  d.cost = step_gradient_cost;
  d.signature = step_gradient_signature;
  d.gemm = step_gradient_gemm;
  d.params = gradient_params;
  return d;
}

}  // namespace splitscope::cell_rules
