#pragma once
/// \file
/// What the two recurrent cells share (lstm_cell.cpp, gru_cell.cpp): one
/// (stacked layer, step) of a layer with `gates` gate blocks of H units,
/// inputs x_t [I], h_{t-1} [H] (and c_{t-1} [H] for LSTM), parameters
/// Wx [I, gates·H], Wh [H, gates·H], b [gates·H] in gate-major columns.

#include <string>
#include <vector>

#include "ir/ops/layer_def.hpp"
#include "ir/ops/op_def.hpp"
#include "ir/slice.hpp"

namespace splitscope {
class NetworkFields;
struct Layer;
}  // namespace splitscope

namespace splitscope::cell_rules {

// --- the layer types lstm and gru (ops/layer_def.hpp) ---

/// hidden, layers, return_sequences, bias; the input is a sequence [steps, features].
void read_layer(const NetworkFields& fields, Layer& layer);
/// Every stacked cell's Wx, Wh and b, in closed form.
int64_t layer_params(const Layer& layer);
/// Every stacked cell at every step, in closed form.
int64_t layer_flops(const Layer& layer, int64_t batch);
/// The layer type `name` ("lstm", "gru") made of these cells.
LayerDef layer_definition(std::string_view name);

/// FLOPs 2·gates·u·(I+H)·rows for a slice of u hidden units (it still
/// multiplies the whole h_{t-1}); bytes: x, the weights, h and (LSTM) its own
/// units of c when t > 0; writes h (and c).
SliceCost cost(const OpNode& node, const Slice& slice, int64_t gates, bool has_cell_state);
/// A slice reads all of x and h, and (LSTM) only its own units of c.
Range input_channels(const OpNode& node, const Slice& slice, int slot);
/// "lstm_cell:b64:i1024:h1024:u512:t1"
std::string signature(const OpNode& node, const Slice& slice);
/// Wx, Wh, b, uniform in ±1/sqrt(H) (as PyTorch and cuDNN examples initialise them).
std::vector<ParamTensor> params(const OpNode& node, int64_t gates);

// --- the cells' gradient ops (lstm_cell_grad, gru_cell_grad, cell_grad_*) ---
//
// Each follows a slice of hidden units of its forward cell (a vertical
// split): the step's gradient and the weight gradient compute those units
// (`out`), reading all of x and h_{t-1} and only those units of the rest; the
// two products dx = G·Wxᵀ and dh_{t-1} = G·Whᵀ sum over them (`reduce`) into
// partial sums of all of x and h, all-reduced as a dense column split's dX.
// Every kind reads or writes the slice's gathered gate columns [.. × G·U].

/// Gates of the cell a gradient op differentiates: 3 for a GRU (attrs.gru), else 4.
int64_t gradient_gates(const OpNode& node);
/// The hidden units whose gate gradients `slice` takes: `reduce` for the two
/// products (cell_grad_input, cell_grad_hidden), `out` for the others.
Range gradient_units(const OpNode& node, const Slice& slice);
/// The layer's weights, Wx [I, G·H], Wh [H, G·H], b [G·H] (I = attrs.cell_inputs).
std::vector<ParamTensor> gradient_params(const OpNode& node);
/// Its weight slice: the forward cell's slice of gradient_units(), all I features.
Slice gradient_param_slice(const OpNode& node, const Slice& slice);
/// The slice beside a forward cell's slice of hidden units (see above).
Slice gradient_from_forward(const OpNode& node, const Slice& forward);
/// What every cell gradient kind shares: a matrix product over the weights of
/// its forward cell's slice, placed beside it. The caller adds its cost,
/// signature, product shape and inputs' channels, and whether it reads the
/// weights (`weighted`, `params`) or writes their gradient.
/// A cell step's (or its step gradient's) device calls: the input product,
/// the element-wise gates, and the recurrent product where h_{t-1} exists.
int step_calls(const SliceCalls& calls);
OpDef gradient_product_def(OpKind kind, std::string_view name);
/// The definition of a step's gradient kind (lstm_cell_grad, gru_cell_grad):
/// they differ in name and equations only, not in what they cost or read.
OpDef step_gradient_def(OpKind kind, std::string_view name);

}  // namespace splitscope::cell_rules
