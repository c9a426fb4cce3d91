#include "ir/ops/cell_rules.hpp"

#include <cmath>
#include <fmt/format.h>

#include "ir/layer.hpp"
#include "ir/layer_costs.hpp"
#include "ir/network_fields.hpp"
#include "ir/ops/op_rules.hpp"
#include "util/errors.hpp"

namespace splitscope::cell_rules {

void read_layer(const NetworkFields& fields, Layer& layer) {
  layer.attrs.hidden = fields.required_positive("hidden", "the number of hidden units");
  layer.stacked = fields.optional_positive("layers", 1);
  layer.return_sequences = fields.optional_bool("return_sequences", true);
  layer.attrs.bias = fields.optional_bool("bias", true);
  const Shape& in = layer.input_shape;
  if (in.size() != 2) {
    fields.fail("", std::string(layer_type(layer.kind)) + " needs a sequence input [steps, features], but gets " +
                        to_string(in) +
                        "; put it first (with \"input\": [steps, features]) or after a "
                        "recurrent layer with \"return_sequences\": true");
  }
  layer.output_shape = layer.return_sequences ? Shape{in[0], layer.attrs.hidden} : Shape{layer.attrs.hidden};
}

int64_t layer_params(const Layer& layer) {
  // In closed form: the first layer reads the input, the other stacked-1 the
  // hidden state below. A loop over `stacked` would run 2^40 times on a bad file.
  const int64_t gates = gate_count(layer.kind);
  const int64_t hidden = layer.attrs.hidden;
  const int64_t bias = layer.attrs.bias ? count_product({gates, hidden}) : 0;
  const auto cell = [&](int64_t input) { return count_sum(count_product({gates, hidden, count_sum(input, hidden)}), bias); };
  return count_sum(cell(layer.input_shape.at(1)), count_product({layer.stacked - 1, cell(hidden)}));
}

LayerDef layer_definition(std::string_view name) {
  LayerDef def;
  def.name = name;
  def.fields = {"hidden", "layers", "return_sequences", "bias"};
  def.read = read_layer;
  def.params = layer_params;
  def.flops = layer_flops;
  return def;
}

int64_t layer_flops(const Layer& layer, int64_t batch) {
  // Closed form, as for the parameters: first layer, then stacked-1 alike.
  const int64_t steps = layer.input_shape.at(0);
  const int64_t hidden = layer.attrs.hidden;
  const int64_t first = count_product({steps, recurrent_cell_flops(layer.kind, layer.input_shape.at(1), hidden, batch)});
  const int64_t other = count_product({steps, recurrent_cell_flops(layer.kind, hidden, hidden, batch)});
  return count_sum(first, count_product({layer.stacked - 1, other}));
}

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

namespace {

/// The kinds whose slice sums over hidden units into all of x or h.
bool sums_over_units(const OpNode& node) {
  return node.kind == OpKind::kCellGradInput || node.kind == OpKind::kCellGradHidden;
}

}  // namespace

Range gradient_units(const OpNode& node, const Slice& slice) {
  return sums_over_units(node) ? slice.reduce : slice.out;
}

std::vector<ParamTensor> gradient_params(const OpNode& node) {
  const int64_t gates = gradient_gates(node);
  const int64_t hidden = node.attrs.hidden;
  const int64_t input = node.attrs.cell_inputs;
  std::vector<ParamTensor> tensors{{"Wx", {input, gates * hidden}, 0.0f}, {"Wh", {hidden, gates * hidden}, 0.0f}};
  if (node.attrs.bias) tensors.push_back({"b", {gates * hidden}, 0.0f});
  return tensors;
}

Slice gradient_param_slice(const OpNode& node, const Slice& slice) {
  return Slice{slice.batch, gradient_units(node, slice), {0, node.attrs.cell_inputs}, {}};
}

Slice gradient_from_forward(const OpNode& node, const Slice& forward) {
  Slice slice = full_slice(node, forward.batch);
  if (sums_over_units(node)) {
    slice.reduce = forward.out;
  } else {
    slice.out = forward.out;
  }
  return slice;
}

namespace {

/// x and h_{t-1} whole (slots 0, 1: every unit's gates multiply all of them);
/// c_{t-1}, dh_t and dc_t (the step's slots 2 on) only the slice's units.
Range step_input_channels(const OpNode& node, const Slice& slice, int slot) {
  return slot <= kCellHiddenSlot ? op_rules::all_channels(node, slice, slot) : slice.out;
}

// A step's gradient over U units: recomputes their gates (one product, as the
// forward step), reads x, h and their units of c, dh and dc, writes their gate
// gradients [U, 4] and one [U] tensor. FLOPs: the recomputed product,
// 2·G·U·(I+H)·rows.
SliceCost step_gradient_cost(const OpNode& node, const Slice& slice) {
  const int64_t rows = slice.batch.size();
  const int64_t gates = gradient_gates(node);
  const int64_t input = node.attrs.cell_inputs;
  const int64_t hidden = node.attrs.hidden;
  const int64_t units = slice.out.size();
  SliceCost c;
  c.flops = 2 * gates * units * (input + hidden) * rows;
  c.param_count = gates * units * (input + hidden) + (node.attrs.bias ? gates * units : 0);
  int64_t read = 0;
  for (size_t slot = 0; slot < node.input_shapes.size(); ++slot) {
    read += step_input_channels(node, slice, static_cast<int>(slot)).size();
  }
  c.bytes_read = rows * read * kFloat + c.param_count * kFloat;
  c.bytes_written = rows * units * (4 + 1) * kFloat;
  return c;
}

std::string step_gradient_signature(const OpNode& node, const Slice& slice) {
  return fmt::format("{}:b{}:i{}:h{}:u{}:t{}", to_string(node.kind), slice.batch.size(), node.attrs.cell_inputs,
                     node.attrs.hidden, slice.out.size(), node.step > 0 ? 1 : 0);
}

GemmDims step_gradient_gemm(const OpNode& node, const Slice& slice) {
  return GemmDims{slice.batch.size(), gradient_gates(node) * slice.out.size(),
                  node.attrs.cell_inputs + node.attrs.hidden, 1};
}

}  // namespace

int step_calls(const SliceCalls& calls) { return 2 + (calls.has_input(kCellHiddenSlot) ? 1 : 0); }

OpDef gradient_product_def(OpKind kind, std::string_view name) {
  OpDef d;
  d.kind = kind;
  d.name = name;
  d.cost_class = CostClass::kMatrix;
  d.efficiency_like = "dense";  // its products are GEMMs, as a dense layer's
  d.split.out = true;
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
  d.input_channels = step_input_channels;
  d.signature = step_gradient_signature;
  d.gemm = step_gradient_gemm;
  d.params = gradient_params;
  d.device_calls = step_calls;
  return d;
}

}  // namespace splitscope::cell_rules
