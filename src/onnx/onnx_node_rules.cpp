#include "onnx/onnx_node_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "onnx/onnx_attributes.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

using nlohmann::json;
using Dims = std::vector<int64_t>;
using ::onnx::NodeProto;

std::string dims_text(const Dims& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

[[noreturn]] void refuse(const OnnxImportState& state, const NodeProto& node, const std::string& problem) {
  throw InputError(state.path, onnx_node_label(node), problem);
}

/// One sample's dims; every value is made with its batch axis inside its dims (checked_value).
Dims sample_of(const OnnxValue& value) {
  Dims sample = value.dims;
  if (value.batch_axis < sample.size()) sample.erase(sample.begin() + static_cast<std::ptrdiff_t>(value.batch_axis));
  return sample;
}

/// The batch axis must lie inside the dims a node's output has (a damaged
/// file can give an LSTM's output any rank).
void check_batch_axis(const OnnxImportState& state, const NodeProto& node, const Dims& dims, size_t batch_axis) {
  if (batch_axis >= dims.size() || dims[batch_axis] != state.batch) {
    refuse(state, node, "its output " + dims_text(dims) + " has no batch of " + std::to_string(state.batch) +
                            " on axis " + std::to_string(batch_axis) + "; splitscope's layers work on one sample at a time");
  }
}

/// An axis attribute within [-rank, rank), made non-negative.
int64_t checked_axis(const OnnxImportState& state, const NodeProto& node, int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) refuse(state, node, "axis " + std::to_string(axis) + " is outside its input's " + std::to_string(rank) + " axes");
  return axis < 0 ? axis + r : axis;
}

Dims without_units(const Dims& dims) {
  Dims out;
  for (int64_t d : dims) {
    if (d != 1) out.push_back(d);
  }
  return out;
}

int64_t product(const Dims& dims) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  return total;
}

/// The dims ONNX shape inference gave an output of the node.
Dims output_dims(const OnnxImportState& state, const NodeProto& node, int slot = 0) {
  const std::string name = onnx_node_output(node, slot);
  const auto it = state.inferred.find(name);
  if (it == state.inferred.end() || std::any_of(it->second.begin(), it->second.end(), [](int64_t d) { return d <= 0; })) {
    refuse(state, node, "ONNX shape inference found no fixed shape for its output '" + name +
                            "'; export with fixed input shapes (or pass --batch for a dynamic batch)");
  }
  return it->second;
}

bool is_used(const OnnxImportState& state, const std::string& tensor) {
  const auto it = state.consumers.find(tensor);
  return !tensor.empty() && it != state.consumers.end() && it->second > 0;
}

/// Outputs past the first that no rule maps (a Dropout's mask, a training
/// BatchNormalization's running statistics) may exist, but nothing may read them.
void require_unused_outputs(const OnnxImportState& state, const NodeProto& node, int from, const std::string& what) {
  for (int slot = from; slot < node.output_size(); ++slot) {
    if (is_used(state, node.output(slot))) {
      refuse(state, node, "its output '" + node.output(slot) + "' (" + what + ") is read by another node; "
                          "splitscope's layer has no such output");
    }
  }
}

const OnnxValue& value_input(const OnnxImportState& state, const NodeProto& node, int slot) {
  const std::string name = onnx_node_input(node, slot);
  const auto it = state.values.find(name);
  if (it == state.values.end()) {
    refuse(state, node, "input " + std::to_string(slot) + " ('" + name + "') is " +
                            (state.constants.count(name) ? "a constant" : "missing") +
                            " where splitscope needs a tensor computed from the graph's inputs");
  }
  return it->second;
}

const OnnxConstant& constant_input(const OnnxImportState& state, const NodeProto& node, int slot,
                                   const std::string& what) {
  const std::string name = onnx_node_input(node, slot);
  const auto it = state.constants.find(name);
  if (it == state.constants.end()) {
    refuse(state, node, "input " + std::to_string(slot) + " ('" + name + "', " + what +
                            ") is not a constant; splitscope needs it fixed in the file (an initializer)");
  }
  return it->second;
}

const OnnxConstant* optional_constant(const OnnxImportState& state, const NodeProto& node, int slot,
                                      const std::string& what) {
  return onnx_node_input(node, slot).empty() ? nullptr : &constant_input(state, node, slot, what);
}

Dims constant_ints(const OnnxImportState& state, const NodeProto& node, const OnnxConstant& constant,
                   const std::string& what) {
  if (!constant.has_values) refuse(state, node, what + " is not a small constant");
  Dims out;
  for (double v : constant.values) out.push_back(static_cast<int64_t>(v));
  return out;
}

/// The layer a value stands for, checked: one sample of the tensor is what
/// splitscope's layer holds, and the batch is on its axis.
std::string layer_of(const OnnxImportState& state, const NodeProto& node, const OnnxValue& value) {
  if (value.dims[value.batch_axis] != state.batch) {
    refuse(state, node, "its input " + dims_text(value.dims) + " mixes samples into other axes (axis " +
                            std::to_string(value.batch_axis) + " should hold the batch of " +
                            std::to_string(state.batch) + "); splitscope's layers work on one sample at a time");
  }
  if (value.sequence && state.last_step_taken.count(value.layer)) {
    refuse(state, node, "it reads every step of '" + value.layer + "', whose last step alone is read elsewhere; "
                        "splitscope's recurrent layer gives one or the other");
  }
  const Dims& held = state.network.sample_shape(value.layer);
  if (sample_of(value) != held) {
    refuse(state, node, "it reads one sample as " + dims_text(sample_of(value)) + ", which splitscope holds as " +
                            dims_text(held) + " ('" + value.layer + "'); only views that keep the layout are mapped");
  }
  return value.layer;
}

/// Adds the layer and makes the node's first output its value.
void emit(OnnxImportState& state, const NodeProto& node, const std::string& type, json fields,
          const std::vector<std::string>& inputs, size_t batch_axis = 0) {
  OnnxValue out;
  out.dims = output_dims(state, node);
  out.batch_axis = batch_axis;
  check_batch_axis(state, node, out.dims, batch_axis);
  const Dims sample = sample_of(out);
  out.layer = state.network.add_layer(node, type, std::move(fields), inputs, sample);
  state.values[node.output(0)] = out;
}

/// Input `slot`'s tensor name, "" where the node has none.
std::string optional_input(const NodeProto& node, int slot) {
  return node.input_size() > slot ? onnx_node_input(node, slot) : std::string();
}

/// Records where the weights of the layer the node just became are.
void record_weights(OnnxImportState& state, const NodeProto& node, OnnxLayerWeights::Form form,
                    std::vector<std::string> tensors, double epsilon = 0, int64_t hidden = 0) {
  state.weights[state.values.at(node.output(0)).layer] = OnnxLayerWeights{form, std::move(tensors), epsilon, hidden};
}

void alias(OnnxImportState& state, const NodeProto& node, const OnnxValue& from, Dims dims, size_t batch_axis,
           int slot = 0) {
  check_batch_axis(state, node, dims, batch_axis);
  OnnxValue out = from;
  out.dims = std::move(dims);
  out.batch_axis = batch_axis;
  state.values[node.output(slot)] = out;
}

void require_rank(const OnnxImportState& state, const NodeProto& node, const OnnxValue& value, size_t rank,
                  const std::string& what) {
  if (value.dims.size() != rank || value.batch_axis != 0) {
    refuse(state, node, "it reads " + dims_text(value.dims) + "; splitscope maps it only on " + what);
  }
}

/// pads [top, left, bottom, right] -> one padding per axis; refused when uneven.
Dims symmetric_pads(const OnnxImportState& state, const NodeProto& node) {
  const std::string auto_pad = onnx_string_attribute(node, "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    refuse(state, node, "auto_pad " + auto_pad + " is not mapped; export with explicit pads (PyTorch does)");
  }
  const Dims pads = onnx_ints_attribute(node, "pads").value_or(Dims{0, 0, 0, 0});
  if (pads.size() != 4) refuse(state, node, "splitscope maps two-dimensional windows only (pads " + dims_text(pads) + ")");
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; })) refuse(state, node, "its pads are negative");
  if (pads[0] != pads[2] || pads[1] != pads[3]) {
    refuse(state, node, "its padding " + dims_text(pads) + " differs between the two sides of an axis; splitscope "
                        "pads both sides alike");
  }
  return {pads[0], pads[1]};
}

void require_no_dilation(const OnnxImportState& state, const NodeProto& node) {
  const Dims dilations = onnx_ints_attribute(node, "dilations").value_or(Dims{1, 1});
  if (std::any_of(dilations.begin(), dilations.end(), [](int64_t d) { return d != 1; })) {
    refuse(state, node, "dilation " + dims_text(dilations) + " is refused: splitscope's conv2d and pools have no "
                        "dilation (their FLOPs and kernels assume a dense window)");
  }
}

json extent(const Dims& two) { return json::array({two.at(0), two.at(1)}); }

/// kernel_shape or strides: two positive sizes (height, width).
Dims window_pair(const OnnxImportState& state, const NodeProto& node, const std::string& name, Dims fallback) {
  const Dims pair = onnx_ints_attribute(node, name).value_or(std::move(fallback));
  if (pair.size() != 2 || pair[0] <= 0 || pair[1] <= 0) {
    refuse(state, node, name + " " + dims_text(pair) + " is not two positive sizes; splitscope maps two-dimensional windows only");
  }
  return pair;
}

void map_gemm(OnnxImportState& state, const NodeProto& node) {
  const OnnxValue& a = value_input(state, node, 0);
  require_rank(state, node, a, 2, "a batch of vectors [batch, features]");
  if (onnx_int_attribute(node, "transA", 0) != 0) refuse(state, node, "transA = 1 transposes the batch away");
  if (onnx_float_attribute(node, "alpha", 1) != 1 || onnx_float_attribute(node, "beta", 1) != 1) {
    refuse(state, node, "alpha and beta other than 1 scale the product; splitscope's dense layer does not");
  }
  const OnnxConstant& b = constant_input(state, node, 1, "the weights");
  if (b.dims.size() != 2) refuse(state, node, "its weights are " + dims_text(b.dims) + ", not a matrix");
  const bool trans_b = onnx_int_attribute(node, "transB", 0) != 0;
  const int64_t in = trans_b ? b.dims[1] : b.dims[0];
  const int64_t units = trans_b ? b.dims[0] : b.dims[1];
  if (in != a.dims[1]) refuse(state, node, "its weights " + dims_text(b.dims) + " do not fit its input " + dims_text(a.dims));
  const OnnxConstant* c = optional_constant(state, node, 2, "the bias");
  if (c && c->element_count() != units) {
    refuse(state, node, "its bias " + dims_text(c->dims) + " is not one value per output; splitscope's bias is");
  }
  emit(state, node, "dense", {{"units", units}, {"bias", c != nullptr}}, {layer_of(state, node, a)});
  record_weights(state, node, trans_b ? OnnxLayerWeights::Form::kDenseTransposed : OnnxLayerWeights::Form::kDense,
                 {onnx_node_input(node, 1), c != nullptr ? onnx_node_input(node, 2) : ""});
}

/// MatMul by a weight matrix is a dense layer without bias; an Add of a
/// vector right after it (PyTorch's Linear on more than two axes, or x @ W + b)
/// becomes its bias.
void map_matmul(OnnxImportState& state, const NodeProto& node) {
  const OnnxValue& a = value_input(state, node, 0);
  if (state.values.count(onnx_node_input(node, 1))) {
    refuse(state, node, "it multiplies two computed tensors; splitscope maps such a MatMul only inside attention's "
                        "pattern (heads split by Reshape/Transpose from one Split of Q | K | V, q @ k^T scaled, an "
                        "optional causal mask, Softmax, @ v, heads joined back: docs/onnx.md)");
  }
  const bool sequence = a.dims.size() == 3 && a.batch_axis == 0;
  if (!sequence) require_rank(state, node, a, 2, "a batch of vectors [batch, features] or of sequences [batch, positions, features] times a weight matrix");
  const OnnxConstant& b = constant_input(state, node, 1, "the weights");
  if (b.dims.size() != 2 || b.dims[0] != a.dims.back()) {
    refuse(state, node, "its weights " + dims_text(b.dims) + " are not a matrix that fits its input " + dims_text(a.dims));
  }
  emit(state, node, sequence ? "linear" : "dense", {{"units", b.dims[1]}, {"bias", false}}, {layer_of(state, node, a)});
  record_weights(state, node, OnnxLayerWeights::Form::kDense, {onnx_node_input(node, 1), ""});
  if (state.consumers[node.output(0)] == 1) state.bias_pending[node.output(0)] = state.values[node.output(0)].layer;
}

/// An Add of a constant [positions, features] table (PyTorch's position embedding, folded to its rows by the
/// exporter) to an embedding's output: the embedding's learned positions.
bool add_positions(OnnxImportState& state, const NodeProto& node, const std::string& value, const std::string& table) {
  const auto pending = state.positions_pending.find(value);
  const auto constant = state.constants.find(table);
  if (pending == state.positions_pending.end() || constant == state.constants.end()) return false;
  const OnnxValue& x = state.values.at(value);
  const Dims sample = sample_of(x);
  if (without_units(constant->second.dims) != sample) {
    refuse(state, node, "it adds " + dims_text(constant->second.dims) + " to the embedding's " + dims_text(x.dims) +
                            "; splitscope maps an Add of a constant to an embedding only as its position table, one "
                            "row of " + std::to_string(sample.back()) + " features per position " + dims_text(sample));
  }
  state.network.set_field(pending->second, "positions", true, sample);
  state.weights.at(pending->second).tensors.at(1) = table;
  state.positions_pending.erase(pending);
  alias(state, node, x, output_dims(state, node), x.batch_axis);
  return true;
}

void map_add(OnnxImportState& state, const NodeProto& node) {
  const std::string first = onnx_node_input(node, 0);
  const std::string second = onnx_node_input(node, 1);
  const bool first_value = state.values.count(first) > 0;
  const bool second_value = state.values.count(second) > 0;
  if (first_value && second_value) {
    const OnnxValue& a = state.values.at(first);
    const OnnxValue& b = state.values.at(second);
    if (a.dims != b.dims) {
      refuse(state, node, "it adds " + dims_text(a.dims) + " and " + dims_text(b.dims) + "; splitscope's add joins "
                          "tensors of one shape (no broadcast)");
    }
    emit(state, node, "add", json::object(), {layer_of(state, node, a), layer_of(state, node, b)}, a.batch_axis);
    return;
  }
  const std::string& matmul = first_value ? first : second;
  const std::string& bias = first_value ? second : first;
  if (add_positions(state, node, matmul, bias)) return;
  const auto pending = state.bias_pending.find(matmul);
  const auto constant = state.constants.find(bias);
  if (pending != state.bias_pending.end() && constant != state.constants.end()) {
    const OnnxValue& product_value = state.values.at(matmul);
    const int64_t units = product_value.dims.back();
    if (constant->second.element_count() == units && without_units(constant->second.dims) == Dims{units}) {
      state.network.set_field(pending->second, "bias", true, state.network.sample_shape(pending->second));
      state.weights.at(pending->second).tensors.at(1) = bias;
      state.bias_pending.erase(pending);
      alias(state, node, product_value, output_dims(state, node), product_value.batch_axis);
      return;
    }
  }
  refuse(state, node, "it adds a constant to a tensor, which splitscope maps only as the bias of the MatMul right "
                      "before it (one value per output)");
}

void map_activation(OnnxImportState& state, const NodeProto& node) {
  static const std::map<std::string, std::string> types{{"Relu", "relu"}, {"Tanh", "tanh"}, {"Sigmoid", "sigmoid"}};
  const OnnxValue& x = value_input(state, node, 0);
  emit(state, node, types.at(node.op_type()), json::object(), {layer_of(state, node, x)}, x.batch_axis);
}

void map_softmax(OnnxImportState& state, const NodeProto& node) {
  const OnnxValue& x = value_input(state, node, 0);
  const int64_t axis = onnx_int_attribute(node, "axis", state.opset < 13 ? 1 : -1);
  if (x.dims.size() != 2 || x.batch_axis != 0 || (axis != 1 && axis != -1)) {
    refuse(state, node, "softmax over axis " + std::to_string(axis) + " of " + dims_text(x.dims) +
                            "; splitscope's softmax takes the features of a vector [batch, features] (flatten first)");
  }
  emit(state, node, "softmax", json::object(), {layer_of(state, node, x)});
}

void map_conv(OnnxImportState& state, const NodeProto& node) {
  const OnnxValue& x = value_input(state, node, 0);
  require_rank(state, node, x, 4, "images [batch, channels, height, width] (Conv2d)");
  require_no_dilation(state, node);
  const OnnxConstant& w = constant_input(state, node, 1, "the filters");
  if (w.dims.size() != 4) refuse(state, node, "its filters " + dims_text(w.dims) + " are not [out, in/groups, kh, kw]");
  const int64_t groups = onnx_int_attribute(node, "group", 1);
  const Dims strides = window_pair(state, node, "strides", Dims{1, 1});
  const Dims padding = symmetric_pads(state, node);
  const OnnxConstant* b = optional_constant(state, node, 2, "the bias");
  emit(state, node, "conv2d",
       {{"filters", w.dims[0]}, {"kernel", extent({w.dims[2], w.dims[3]})}, {"stride", extent(strides)},
        {"padding", extent(padding)}, {"groups", groups}, {"bias", b != nullptr}},
       {layer_of(state, node, x)});
  record_weights(state, node, OnnxLayerWeights::Form::kConv,
                 {onnx_node_input(node, 1), b != nullptr ? onnx_node_input(node, 2) : ""});
}

void map_pool(OnnxImportState& state, const NodeProto& node) {
  const OnnxValue& x = value_input(state, node, 0);
  require_rank(state, node, x, 4, "images [batch, channels, height, width]");
  require_no_dilation(state, node);
  require_unused_outputs(state, node, 1, "the indices of the maxima");
  const Dims kernel = window_pair(state, node, "kernel_shape", Dims{});
  const Dims strides = window_pair(state, node, "strides", Dims{1, 1});
  const Dims padding = symmetric_pads(state, node);
  const bool average = node.op_type() == "AveragePool";
  if (average && onnx_int_attribute(node, "count_include_pad", 0) != 0 && (padding[0] || padding[1])) {
    refuse(state, node, "count_include_pad = 1 with padding divides by the padded window; splitscope averages over "
                        "the real elements only (PyTorch: AvgPool2d(count_include_pad=False))");
  }
  const Dims out = output_dims(state, node);
  for (size_t axis = 0; axis < 2; ++axis) {
    const int64_t floor_size = (x.dims[2 + axis] + 2 * padding[axis] - kernel[axis]) / strides[axis] + 1;
    if (out[2 + axis] != floor_size) {
      refuse(state, node, "ceil_mode = 1 gives " + std::to_string(out[2 + axis]) + " windows on axis " +
                              std::to_string(2 + axis) + " where splitscope's pools give " + std::to_string(floor_size) +
                              " (they round down, as ceil_mode = 0)");
    }
  }
  emit(state, node, average ? "avgpool" : "maxpool",
       {{"kernel", extent(kernel)}, {"stride", extent(strides)}, {"padding", extent(padding)}},
       {layer_of(state, node, x)});
}

/// A global pool is one window over the whole map.
void map_global_pool(OnnxImportState& state, const NodeProto& node) {
  const OnnxValue& x = value_input(state, node, 0);
  require_rank(state, node, x, 4, "images [batch, channels, height, width]");
  const Dims kernel{x.dims[2], x.dims[3]};
  emit(state, node, node.op_type() == "GlobalAveragePool" ? "avgpool" : "maxpool",
       {{"kernel", extent(kernel)}, {"stride", extent(kernel)}}, {layer_of(state, node, x)});
}

/// ONNX's epsilon is a float: 1e-5 arrives as 9.99999974e-06; seven digits give it back.
double float_attribute_value(double value) { return std::stod(fmt::format("{:.7g}", value)); }

void map_batch_norm(OnnxImportState& state, const NodeProto& node) {
  const OnnxValue& x = value_input(state, node, 0);
  if (x.batch_axis != 0 || (x.dims.size() != 4 && x.dims.size() != 2)) {
    refuse(state, node, "it normalizes " + dims_text(x.dims) + "; splitscope's batch_norm takes images [batch, "
                        "channels, height, width] or vectors [batch, features]");
  }
  for (int slot = 1; slot <= 4; ++slot) {
    const OnnxConstant& c = constant_input(state, node, slot, "scale, bias, mean or variance");
    if (c.element_count() != x.dims[1]) refuse(state, node, "input " + std::to_string(slot) + " is not one value per channel");
  }
  require_unused_outputs(state, node, 1, "running statistics");
  // ONNX's momentum weighs the old running statistics; PyTorch's (splitscope's) the new batch's.
  const double momentum = float_attribute_value(1.0 - onnx_float_attribute(node, "momentum", 0.9));
  const double epsilon = float_attribute_value(onnx_float_attribute(node, "epsilon", 1e-5));
  emit(state, node, "batch_norm", {{"epsilon", epsilon}, {"momentum", momentum}}, {layer_of(state, node, x)});
  record_weights(state, node, OnnxLayerWeights::Form::kBatchNorm,
                 {onnx_node_input(node, 1), onnx_node_input(node, 2), onnx_node_input(node, 3), onnx_node_input(node, 4)},
                 epsilon);
}

void map_layer_norm(OnnxImportState& state, const NodeProto& node) {
  const OnnxValue& x = value_input(state, node, 0);
  const auto rank = static_cast<int64_t>(x.dims.size());
  const int64_t axis = onnx_int_attribute(node, "axis", -1);
  if (x.batch_axis != 0 || (rank != 2 && rank != 3) || (axis != -1 && axis != rank - 1)) {
    refuse(state, node, "it normalizes from axis " + std::to_string(axis) + " of " + dims_text(x.dims) +
                            "; splitscope's layer_norm normalizes the last axis of [batch, features] or [batch, steps, features]");
  }
  const OnnxConstant& scale = constant_input(state, node, 1, "the scale");
  if (scale.element_count() != x.dims.back()) refuse(state, node, "its scale is not one value per feature");
  if (node.input_size() > 2 && !onnx_node_input(node, 2).empty()) constant_input(state, node, 2, "the bias");
  require_unused_outputs(state, node, 1, "the mean and inverse standard deviation");
  const double epsilon = float_attribute_value(onnx_float_attribute(node, "epsilon", 1e-5));
  emit(state, node, "layer_norm", {{"epsilon", epsilon}}, {layer_of(state, node, x)});
  record_weights(state, node, OnnxLayerWeights::Form::kLayerNorm, {onnx_node_input(node, 1), optional_input(node, 2)},
                 epsilon);
}

/// A view of a value: the same layer when one sample's elements keep their
/// order, a flatten layer when they become one vector, refused otherwise.
void map_view(OnnxImportState& state, const NodeProto& node, const OnnxValue& x, const Dims& dims, size_t batch_axis) {
  OnnxValue out = x;
  out.dims = dims;
  out.batch_axis = batch_axis;
  if (batch_axis >= dims.size() || dims[batch_axis] != state.batch) {
    refuse(state, node, "it turns " + dims_text(x.dims) + " into " + dims_text(dims) +
                            ", moving samples into other axes; splitscope's layers work on one sample at a time");
  }
  const Dims sample = sample_of(out);
  const Dims& held = state.network.sample_shape(x.layer);
  if (sample == held) {
    alias(state, node, x, dims, batch_axis);
    return;
  }
  // A vector from an image ([C, 1, 1] after a global pool too) is a flatten
  // layer: dense and softmax read vectors only.
  if (sample.size() == 1 && held.size() > 1 && product(held) == sample[0] && batch_axis == 0 && x.batch_axis == 0 &&
      !x.sequence) {
    emit(state, node, "flatten", json::object(), {x.layer});
    return;
  }
  // Axes of size 1 coming or going (an RNN's direction axis): the same
  // elements in the same order; a reader checks the shape it gets is the layer's.
  if (without_units(sample) == without_units(held)) {
    alias(state, node, x, dims, batch_axis);
    return;
  }
  refuse(state, node, "it reshapes one sample from " + dims_text(sample_of(x)) + " to " + dims_text(sample) +
                          ", which is not a flatten; splitscope maps reshapes that flatten or only add or remove axes of size 1");
}

void map_flatten(OnnxImportState& state, const NodeProto& node) {
  const OnnxValue& x = value_input(state, node, 0);
  const auto rank = static_cast<int64_t>(x.dims.size());
  int64_t axis = onnx_int_attribute(node, "axis", 1);
  if (axis < 0) axis += rank;
  if (axis != 1 || x.batch_axis != 0) {
    refuse(state, node, "flatten from axis " + std::to_string(axis) + " of " + dims_text(x.dims) +
                            "; splitscope flattens each sample (axis 1 with the batch on axis 0)");
  }
  map_view(state, node, x, output_dims(state, node), 0);
}

void map_reshape(OnnxImportState& state, const NodeProto& node) {
  const OnnxValue& x = value_input(state, node, 0);
  constant_input(state, node, 1, "the target shape");
  if (x.batch_axis != 0) refuse(state, node, "it reshapes a tensor whose batch is not on axis 0");
  map_view(state, node, x, output_dims(state, node), 0);
}

Dims axes_input(const OnnxImportState& state, const NodeProto& node) {
  if (auto axes = onnx_ints_attribute(node, "axes")) return *axes;
  if (onnx_node_input(node, 1).empty()) return {};
  return constant_ints(state, node, constant_input(state, node, 1, "the axes"), "the axes");
}

void map_squeeze(OnnxImportState& state, const NodeProto& node) {
  const OnnxValue& x = value_input(state, node, 0);
  const auto rank = static_cast<int64_t>(x.dims.size());
  Dims axes = axes_input(state, node);
  if (axes.empty()) refuse(state, node, "a Squeeze without axes would also remove a batch of 1; give the axes");
  size_t batch_axis = x.batch_axis;
  for (int64_t& axis : axes) {
    axis = checked_axis(state, node, axis, static_cast<size_t>(rank));
    if (axis == static_cast<int64_t>(x.batch_axis)) refuse(state, node, "it removes the batch axis");
    if (axis < static_cast<int64_t>(x.batch_axis)) --batch_axis;
  }
  map_view(state, node, x, output_dims(state, node), batch_axis);
}

void map_unsqueeze(OnnxImportState& state, const NodeProto& node) {
  const OnnxValue& x = value_input(state, node, 0);
  const Dims out = output_dims(state, node);
  const auto rank = static_cast<int64_t>(out.size());
  Dims axes = axes_input(state, node);
  for (int64_t& axis : axes) {
    if (axis < 0) axis += rank;
  }
  std::sort(axes.begin(), axes.end());
  // Where the old batch axis lands: past every inserted axis at or before it.
  int64_t batch_axis = static_cast<int64_t>(x.batch_axis);
  for (int64_t axis : axes) {
    if (axis <= batch_axis) ++batch_axis;
  }
  map_view(state, node, x, out, static_cast<size_t>(batch_axis));
}

void map_transpose(OnnxImportState& state, const NodeProto& node) {
  const OnnxValue& x = value_input(state, node, 0);
  Dims perm = onnx_ints_attribute(node, "perm").value_or(Dims{});
  if (perm.empty()) {
    for (int64_t i = static_cast<int64_t>(x.dims.size()) - 1; i >= 0; --i) perm.push_back(i);
  }
  Dims sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t j = 0; j < sorted.size(); ++j) {
    if (sorted.size() != x.dims.size() || sorted[j] != static_cast<int64_t>(j)) {
      refuse(state, node, "perm " + dims_text(perm) + " is not a permutation of its input's " +
                              std::to_string(x.dims.size()) + " axes");
    }
  }
  size_t batch_axis = 0;
  int64_t last = -1;
  for (size_t j = 0; j < perm.size(); ++j) {
    const int64_t from = perm[j];
    if (from == static_cast<int64_t>(x.batch_axis)) {
      batch_axis = j;
      continue;
    }
    if (x.dims[static_cast<size_t>(from)] == 1) continue;
    if (from < last) {
      refuse(state, node, "perm " + dims_text(perm) + " reorders the axes of each sample; splitscope maps a Transpose "
                          "only when it moves the batch axis (PyTorch's batch_first around an LSTM or GRU)");
    }
    last = from;
  }
  map_view(state, node, x, output_dims(state, node), batch_axis);
}

/// Gather on a value: one index of a size-1 axis (a view), or the last step
/// of a recurrent layer's sequence (`out[:, -1, :]`: the layer then returns
/// its last step only).
/// Gather of rows of a constant table by the token ids of a network input: an embedding.
void map_embedding(OnnxImportState& state, const NodeProto& node) {
  const OnnxConstant& table = constant_input(state, node, 0, "the table");
  const OnnxValue& ids = value_input(state, node, 1);
  if (onnx_int_attribute(node, "axis", 0) != 0 || table.dims.size() != 2) {
    refuse(state, node, "it gathers along axis " + std::to_string(onnx_int_attribute(node, "axis", 0)) + " of " +
                            dims_text(table.dims) + "; splitscope maps a Gather of a constant as an embedding: rows "
                            "of a table [vocab, features]");
  }
  if (ids.dims.size() != 2 || ids.batch_axis != 0 || !state.network.type_of(ids.layer).empty()) {
    refuse(state, node, "its indices " + dims_text(ids.dims) + " are not a network input of token ids [batch, "
                        "positions]; splitscope's embedding reads the network's input");
  }
  emit(state, node, "embedding", {{"vocab", table.dims[0]}, {"features", table.dims[1]}}, {layer_of(state, node, ids)});
  record_weights(state, node, OnnxLayerWeights::Form::kEmbedding, {onnx_node_input(node, 0), ""});
  if (state.consumers[node.output(0)] == 1) state.positions_pending[node.output(0)] = state.values[node.output(0)].layer;
}

void map_gather(OnnxImportState& state, const NodeProto& node) {
  if (state.constants.count(onnx_node_input(node, 0)) && state.values.count(onnx_node_input(node, 1))) {
    map_embedding(state, node);
    return;
  }
  const OnnxValue& x = value_input(state, node, 0);
  const OnnxConstant& indices = constant_input(state, node, 1, "the indices");
  const int64_t axis = checked_axis(state, node, onnx_int_attribute(node, "axis", 0), x.dims.size());
  if (!indices.has_values || indices.element_count() != 1 || !indices.dims.empty() || axis == int64_t(x.batch_axis)) {
    refuse(state, node, "splitscope maps a Gather only as one index (a scalar) of an axis other than the batch: "
                        "the last step of a sequence, or the one element of a size-1 axis");
  }
  const int64_t size = x.dims[static_cast<size_t>(axis)];
  int64_t index = static_cast<int64_t>(indices.values[0]);
  if (index < 0) index += size;
  const Dims out = output_dims(state, node);
  const size_t batch_axis = axis < int64_t(x.batch_axis) ? x.batch_axis - 1 : x.batch_axis;
  if (size == 1) {
    map_view(state, node, x, out, batch_axis);
    return;
  }
  const Dims& held = state.network.sample_shape(x.layer);
  const bool time_axis = x.sequence && held.size() == 2 && size == held[0];
  if (!time_axis || index != size - 1) {
    refuse(state, node, "it takes index " + std::to_string(index) + " of axis " + std::to_string(axis) + " of " +
                            dims_text(x.dims) + "; splitscope maps only the last step of an LSTM or GRU's sequence");
  }
  if (state.network.readers(x.layer) > 0) {
    refuse(state, node, "it takes the last step of '" + x.layer + "', whose every step is read elsewhere; "
                        "splitscope's recurrent layer gives one or the other");
  }
  state.network.set_field(x.layer, "return_sequences", false, {held[1]});
  state.last_step_taken.insert(x.layer);
  OnnxValue last = x;
  last.sequence = false;
  last.dims = out;
  last.batch_axis = batch_axis;
  state.values[node.output(0)] = last;
}

void map_concat(OnnxImportState& state, const NodeProto& node) {
  std::vector<std::string> inputs;
  size_t rank = 0;
  for (int slot = 0; slot < node.input_size(); ++slot) {
    const OnnxValue& x = value_input(state, node, slot);
    if (x.batch_axis != 0) refuse(state, node, "it joins tensors whose batch is not on axis 0");
    rank = x.dims.size();
    inputs.push_back(layer_of(state, node, x));
  }
  const int64_t axis = checked_axis(state, node, onnx_int_attribute(node, "axis", 1), rank);
  if (axis != 1) {
    refuse(state, node, "it joins along axis " + std::to_string(axis) + "; splitscope's concat joins along axis 1 "
                        "(channels of images, features of vectors)");
  }
  emit(state, node, "concat", json::object(), inputs);
}

void map_dropout(OnnxImportState& state, const NodeProto& node) {
  const OnnxValue& x = value_input(state, node, 0);
  require_unused_outputs(state, node, 1, "the mask");
  double rate = onnx_float_attribute(node, "ratio", 0.5);
  if (const OnnxConstant* ratio = optional_constant(state, node, 1, "the ratio")) {
    if (!ratio->has_values || ratio->values.size() != 1) refuse(state, node, "its ratio is not one number");
    rate = ratio->values[0];
  }
  emit(state, node, "dropout", {{"rate", float_attribute_value(rate)}}, {layer_of(state, node, x)}, x.batch_axis);
}

void map_identity(OnnxImportState& state, const NodeProto& node) {
  const OnnxValue& x = value_input(state, node, 0);
  alias(state, node, x, x.dims, x.batch_axis);
}

void map_pad(OnnxImportState& state, const NodeProto& node) {
  const OnnxValue& x = value_input(state, node, 0);
  Dims pads = onnx_ints_attribute(node, "pads").value_or(Dims{});
  if (!onnx_node_input(node, 1).empty()) pads = constant_ints(state, node, constant_input(state, node, 1, "the pads"), "the pads");
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; })) {
    refuse(state, node, "a separate Pad of " + dims_text(pads) + " is not mapped; splitscope pads inside conv2d and "
                        "the pools (give the padding to the Conv or pool)");
  }
  alias(state, node, x, x.dims, x.batch_axis);  // PyTorch's AvgPool2d emits a Pad of zeros before the pool
}

/// ONNX's own LSTM and GRU: one direction, default activations, no peepholes,
/// a zero initial state. Y (every step) or Y_h (the last step) may be read, not both.
void map_recurrent(OnnxImportState& state, const NodeProto& node) {
  const bool lstm = node.op_type() == "LSTM";
  const int64_t gates = lstm ? 4 : 3;
  const OnnxValue& x = value_input(state, node, 0);
  const int64_t layout = onnx_int_attribute(node, "layout", 0);
  const size_t batch_axis = layout == 0 ? 1 : 0;
  if (x.dims.size() != 3 || x.batch_axis != batch_axis) {
    refuse(state, node, "it reads " + dims_text(x.dims) + " with the batch on axis " + std::to_string(x.batch_axis) +
                            "; layout " + std::to_string(layout) + " needs a sequence with the batch on axis " +
                            std::to_string(batch_axis));
  }
  const std::string direction = onnx_string_attribute(node, "direction", "forward");
  if (direction != "forward") {
    refuse(state, node, "direction " + direction + " is refused: splitscope's recurrent layers run forward only");
  }
  if (onnx_attribute(node, "clip")) refuse(state, node, "clip is refused: splitscope's cells do not clip");
  if (lstm && onnx_int_attribute(node, "input_forget", 0) != 0) refuse(state, node, "input_forget = 1 is refused");
  if (!lstm && onnx_int_attribute(node, "linear_before_reset", 0) != 1) {
    refuse(state, node, "linear_before_reset = 0 is refused: splitscope's GRU applies the reset gate after the "
                        "recurrent product, as PyTorch does (linear_before_reset = 1)");
  }
  if (const auto* activations = onnx_attribute(node, "activations")) {
    const std::vector<std::string> defaults = lstm ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                                   : std::vector<std::string>{"Sigmoid", "Tanh"};
    if (std::vector<std::string>(activations->strings().begin(), activations->strings().end()) != defaults) {
      refuse(state, node, "activations other than the defaults are refused");
    }
  }
  const int64_t hidden = onnx_int_attribute(node, "hidden_size", 0);
  const OnnxConstant& w = constant_input(state, node, 1, "the input weights");
  constant_input(state, node, 2, "the recurrent weights");
  if (w.dims.size() != 3 || w.dims[0] != 1 || w.dims[1] != gates * hidden) {
    refuse(state, node, "its weights " + dims_text(w.dims) + " are not [1, " + std::to_string(gates) + "·hidden, input]");
  }
  const bool bias = optional_constant(state, node, 3, "the bias") != nullptr;
  if (!onnx_node_input(node, 4).empty()) constant_input(state, node, 4, "the sequence lengths");
  for (int slot : {5, 6}) {
    const OnnxConstant* initial = optional_constant(state, node, slot, "the initial state");
    if (initial && !initial->all_zero()) {
      refuse(state, node, "its initial state (input " + std::to_string(slot) + ") is not zero; splitscope's cells start from zero");
    }
  }
  if (lstm && !onnx_node_input(node, 7).empty()) refuse(state, node, "peepholes (input P) are refused");
  const bool every_step = is_used(state, onnx_node_output(node, 0));
  const bool last_step = is_used(state, onnx_node_output(node, 1));
  if (every_step && last_step) {
    refuse(state, node, "both Y (every step) and Y_h (the last step) are read; splitscope's layer gives one or the other");
  }
  require_unused_outputs(state, node, 2, "the cell state Y_c");
  const std::string input = layer_of(state, node, x);
  const int64_t steps = x.dims[layout == 0 ? 0 : 1];
  const std::string name = state.network.add_layer(
      node, lstm ? "lstm" : "gru", {{"hidden", hidden}, {"bias", bias}, {"return_sequences", !last_step}}, {input},
      last_step ? Dims{hidden} : Dims{steps, hidden});
  state.weights[name] = OnnxLayerWeights{lstm ? OnnxLayerWeights::Form::kLstm : OnnxLayerWeights::Form::kGru,
                                         {onnx_node_input(node, 1), onnx_node_input(node, 2), optional_input(node, 3)},
                                         0, hidden};
  if (every_step) {
    // Y is [steps, 1, batch, hidden] (layout 0) or [batch, steps, 1, hidden].
    OnnxValue y{name, output_dims(state, node, 0), layout == 0 ? size_t{2} : size_t{0}, true};
    state.values[node.output(0)] = y;
  }
  if (last_step) {
    OnnxValue y_h{name, output_dims(state, node, 1), layout == 0 ? size_t{1} : size_t{0}, false};
    state.values[node.output(1)] = y_h;
  }
}

/// A node standing for the pattern in messages and layer names: its name, input and output, its kind as op type.
NodeProto pattern_node(const OnnxPattern& pattern) {
  NodeProto node;
  node.set_name(pattern.name);
  node.set_op_type(pattern.kind == OnnxPattern::Kind::kLayerNorm ? "LayerNorm pattern"
                   : pattern.kind == OnnxPattern::Kind::kGelu    ? "GELU pattern"
                                                                 : "attention pattern");
  node.add_input(pattern.input);
  node.add_output(pattern.output);
  return node;
}

using Rule = std::function<void(OnnxImportState&, const NodeProto&)>;

const std::map<std::string, Rule>& rules() {
  static const std::map<std::string, Rule> table{
      {"Gemm", map_gemm},
      {"MatMul", map_matmul},
      {"Add", map_add},
      {"Relu", map_activation},
      {"Tanh", map_activation},
      {"Sigmoid", map_activation},
      {"Softmax", map_softmax},
      {"Conv", map_conv},
      {"MaxPool", map_pool},
      {"AveragePool", map_pool},
      {"GlobalAveragePool", map_global_pool},
      {"GlobalMaxPool", map_global_pool},
      {"BatchNormalization", map_batch_norm},
      {"LayerNormalization", map_layer_norm},
      {"Flatten", map_flatten},
      {"Reshape", map_reshape},
      {"Squeeze", map_squeeze},
      {"Unsqueeze", map_unsqueeze},
      {"Transpose", map_transpose},
      {"Gather", map_gather},
      {"Concat", map_concat},
      {"Dropout", map_dropout},
      {"Identity", map_identity},
      {"Pad", map_pad},
      {"LSTM", map_recurrent},
      {"GRU", map_recurrent},
  };
  return table;
}

}  // namespace

const std::vector<std::string>& onnx_mapped_op_types() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> names;
    for (const auto& [name, rule] : rules()) names.push_back(name);
    return names;
  }();
  return types;
}

std::string onnx_covered_op_list() {
  const auto listed = [](std::vector<std::string> names) {
    std::sort(names.begin(), names.end());
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
  };
  return listed(onnx_mapped_op_types()) + " to layers, and folds " + listed(onnx_folded_op_types()) +
         " when their inputs are constants";
}

void map_onnx_pattern(OnnxImportState& state, const OnnxPattern& pattern) {
  const NodeProto node = pattern_node(pattern);
  if (!pattern.problem.empty()) refuse(state, node, pattern.problem);
  const OnnxValue& x = value_input(state, node, 0);
  switch (pattern.kind) {
    case OnnxPattern::Kind::kLayerNorm: {
      const auto rank = x.dims.size();
      if (x.batch_axis != 0 || (rank != 2 && rank != 3)) {
        refuse(state, node, "it normalizes the last axis of " + dims_text(x.dims) + "; splitscope's layer_norm "
                            "normalizes the last axis of [batch, features] or [batch, steps, features]");
      }
      if (pattern.features != x.dims.back()) {
        refuse(state, node, "its gain or shift is not one value per feature of " + dims_text(x.dims));
      }
      const double epsilon = float_attribute_value(pattern.epsilon);
      emit(state, node, "layer_norm", {{"epsilon", epsilon}}, {layer_of(state, node, x)});
      record_weights(state, node, OnnxLayerWeights::Form::kLayerNorm, {pattern.gamma, pattern.beta}, epsilon,
                     x.dims.back());
      return;
    }
    case OnnxPattern::Kind::kGelu:
      emit(state, node, "gelu", json::object(), {layer_of(state, node, x)}, x.batch_axis);
      return;
    case OnnxPattern::Kind::kAttention: {
      if (x.dims.size() != 3 || x.batch_axis != 0) {
        refuse(state, node, "it reads " + dims_text(x.dims) + "; splitscope's attention reads [batch, positions, " +
                                (pattern.projections.empty() ? "3·width" : "features") + "]");
      }
      std::string qkv = layer_of(state, node, x);
      if (!pattern.projections.empty()) {
        // Three projections of one input: one linear of Q | K | V end to end, which splitscope's attention reads.
        const Dims out = output_dims(state, node);
        NodeProto joined = node;
        joined.set_name(pattern.name.substr(0, pattern.name.rfind('/') + 1) + "QKV");
        joined.set_output(0, pattern.output + " (Q | K | V)");
        state.inferred[joined.output(0)] = {out[0], out[1], 3 * out[2]};
        const bool bias = !pattern.projections.at(3).empty();
        emit(state, joined, "linear", {{"units", 3 * out[2]}, {"bias", bias}}, {qkv});
        record_weights(state, joined, OnnxLayerWeights::Form::kJoinedProjections, pattern.projections);
        qkv = state.values.at(joined.output(0)).layer;
      }
      emit(state, node, "attention", {{"heads", pattern.heads}, {"causal", pattern.causal}}, {qkv});
      return;
    }
  }
}

void map_onnx_node(OnnxImportState& state, const NodeProto& node) {
  const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
  const auto rule = rules().find(node.op_type());
  if (!default_domain || rule == rules().end()) {
    refuse(state, node, "op type " + (default_domain ? "" : node.domain() + ".") + node.op_type() +
                            " is not covered; splitscope maps " + onnx_covered_op_list() +
                            ", and takes Erf, ReduceMean, Pow, Sqrt, Split and Where only as parts of a layer norm's, "
                            "GELU's or attention's chain of nodes, whole (docs/onnx.md, \"Patterns\")");
  }
  if (node.output_size() == 0) refuse(state, node, "it has no output");
  rule->second(state, node);
}

}  // namespace splitscope
