#include "onnx/onnx_constants.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "onnx/onnx_attributes.hpp"

namespace splitscope {
namespace {

using ::onnx::TensorProto;

bool is_integral_type(int32_t type) {
  return type == TensorProto::INT64 || type == TensorProto::INT32 || type == TensorProto::INT16 ||
         type == TensorProto::INT8 || type == TensorProto::UINT8 || type == TensorProto::UINT16 ||
         type == TensorProto::UINT32 || type == TensorProto::UINT64 || type == TensorProto::BOOL;
}

template <typename T>
void read_raw(const std::string& raw, std::vector<double>& values, int64_t count) {
  if (raw.size() != static_cast<size_t>(count) * sizeof(T)) return;
  values.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, raw.data() + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    values[static_cast<size_t>(i)] = static_cast<double>(value);
  }
}

/// The elements of a small tensor, from raw_data or the typed fields.
std::vector<double> tensor_values(const TensorProto& tensor, int64_t count) {
  std::vector<double> values;
  if (tensor.has_raw_data()) {
    const std::string& raw = tensor.raw_data();
    switch (tensor.data_type()) {
      case TensorProto::FLOAT: read_raw<float>(raw, values, count); break;
      case TensorProto::DOUBLE: read_raw<double>(raw, values, count); break;
      case TensorProto::INT64: read_raw<int64_t>(raw, values, count); break;
      case TensorProto::INT32: read_raw<int32_t>(raw, values, count); break;
      case TensorProto::INT8: read_raw<int8_t>(raw, values, count); break;
      case TensorProto::UINT8: case TensorProto::BOOL: read_raw<uint8_t>(raw, values, count); break;
      default: break;
    }
    return values;
  }
  for (float v : tensor.float_data()) values.push_back(v);
  for (double v : tensor.double_data()) values.push_back(v);
  for (int64_t v : tensor.int64_data()) values.push_back(static_cast<double>(v));
  for (int32_t v : tensor.int32_data()) values.push_back(v);
  if (static_cast<int64_t>(values.size()) != count) values.clear();
  return values;
}

OnnxConstant with_values(std::vector<int64_t> dims, std::vector<double> values, bool integral) {
  OnnxConstant out;
  out.dims = std::move(dims);
  out.values = std::move(values);
  out.has_values = true;
  out.integral = integral;
  return out;
}

int64_t wrap_axis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

/// Axes from the attribute (opsets before 13) or the second input (13 on).
std::optional<std::vector<int64_t>> axes_of(const ::onnx::NodeProto& node, const OnnxFoldInputs& inputs) {
  if (auto axes = onnx_ints_attribute(node, "axes")) return axes;
  const std::string name = onnx_node_input(node, 1);
  if (name.empty()) return std::vector<int64_t>{};
  const OnnxConstant* axes = inputs.constant(name);
  if (!axes || !axes->has_values) return std::nullopt;
  std::vector<int64_t> out;
  for (double v : axes->values) out.push_back(static_cast<int64_t>(v));
  return out;
}

std::vector<int64_t> as_ints(const OnnxConstant& tensor) {
  std::vector<int64_t> out;
  for (double v : tensor.values) out.push_back(static_cast<int64_t>(v));
  return out;
}

/// A binary element-wise op on tensors of one shape, or one of them a single element.
std::optional<OnnxConstant> elementwise(const std::string& op, const OnnxConstant& a, const OnnxConstant& b) {
  const bool same = a.dims == b.dims;
  if (!same && a.element_count() != 1 && b.element_count() != 1) return std::nullopt;
  const OnnxConstant& shape = a.element_count() >= b.element_count() ? a : b;
  std::vector<double> out(static_cast<size_t>(shape.element_count()));
  const bool integral = a.integral && b.integral;
  for (size_t i = 0; i < out.size(); ++i) {
    const double x = a.values[a.values.size() == 1 ? 0 : i];
    const double y = b.values[b.values.size() == 1 ? 0 : i];
    if (op == "Add") out[i] = x + y;
    if (op == "Sub") out[i] = x - y;
    if (op == "Mul") out[i] = x * y;
    if (op == "Div") {
      if (y == 0) return std::nullopt;
      out[i] = integral ? std::trunc(x / y) : x / y;
    }
  }
  return with_values(shape.dims, std::move(out), integral);
}

std::optional<OnnxConstant> fold_constant_node(const ::onnx::NodeProto& node) {
  if (const auto* value = onnx_attribute(node, "value")) return onnx_constant_from_tensor(value->t());
  if (const auto* ints = onnx_attribute(node, "value_ints")) {
    std::vector<double> values(ints->ints().begin(), ints->ints().end());
    return with_values({static_cast<int64_t>(values.size())}, values, true);
  }
  if (const auto* floats = onnx_attribute(node, "value_floats")) {
    std::vector<double> values(floats->floats().begin(), floats->floats().end());
    return with_values({static_cast<int64_t>(values.size())}, values, false);
  }
  if (const auto* one = onnx_attribute(node, "value_int")) return with_values({}, {double(one->i())}, true);
  if (const auto* one = onnx_attribute(node, "value_float")) return with_values({}, {one->f()}, false);
  return std::nullopt;
}

std::optional<OnnxConstant> fold_shape(const ::onnx::NodeProto& node, const OnnxFoldInputs& inputs) {
  const auto dims = inputs.dims(onnx_node_input(node, 0));
  if (!dims || std::any_of(dims->begin(), dims->end(), [](int64_t d) { return d < 0; })) return std::nullopt;
  const auto rank = static_cast<int64_t>(dims->size());
  const int64_t start = std::clamp(wrap_axis(onnx_int_attribute(node, "start", 0), rank), int64_t{0}, rank);
  const int64_t end = std::clamp(wrap_axis(onnx_int_attribute(node, "end", rank), rank), int64_t{0}, rank);
  std::vector<double> values;
  for (int64_t i = start; i < end; ++i) values.push_back(static_cast<double>((*dims)[static_cast<size_t>(i)]));
  return with_values({static_cast<int64_t>(values.size())}, values, true);
}

std::optional<OnnxConstant> fold_gather(const ::onnx::NodeProto& node, const OnnxConstant& data,
                                        const OnnxConstant& indices) {
  if (data.dims.size() != 1 || wrap_axis(onnx_int_attribute(node, "axis", 0), 1) != 0) return std::nullopt;
  std::vector<double> out;
  for (double index : indices.values) {
    auto i = static_cast<int64_t>(index);
    if (i < 0) i += data.dims[0];
    if (i < 0 || i >= data.dims[0]) return std::nullopt;
    out.push_back(data.values[static_cast<size_t>(i)]);
  }
  return with_values(indices.dims, std::move(out), data.integral);
}

std::optional<OnnxConstant> fold_unsqueeze(const OnnxConstant& data, std::vector<int64_t> axes) {
  std::vector<int64_t> dims = data.dims;
  const auto rank = static_cast<int64_t>(dims.size() + axes.size());
  for (int64_t& axis : axes) axis = wrap_axis(axis, rank);
  std::sort(axes.begin(), axes.end());
  for (int64_t axis : axes) {
    if (axis < 0 || axis > static_cast<int64_t>(dims.size())) return std::nullopt;
    dims.insert(dims.begin() + axis, 1);
  }
  return with_values(dims, data.values, data.integral);
}

std::optional<OnnxConstant> fold_squeeze(const OnnxConstant& data, std::vector<int64_t> axes) {
  const auto rank = static_cast<int64_t>(data.dims.size());
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i) {
    const bool listed = std::any_of(axes.begin(), axes.end(), [&](int64_t a) { return wrap_axis(a, rank) == i; });
    const bool drop = axes.empty() ? data.dims[static_cast<size_t>(i)] == 1 : listed;
    if (!drop) dims.push_back(data.dims[static_cast<size_t>(i)]);
  }
  return with_values(dims, data.values, data.integral);
}

std::optional<OnnxConstant> fold_slice(const OnnxConstant& data, const std::vector<const OnnxConstant*>& args) {
  if (data.dims.size() != 1 || args.size() < 2) return std::nullopt;
  const int64_t size = data.dims[0];
  int64_t start = static_cast<int64_t>(args[0]->values.at(0));
  int64_t end = static_cast<int64_t>(args[1]->values.at(0));
  const int64_t step = args.size() > 3 && args[3] ? static_cast<int64_t>(args[3]->values.at(0)) : 1;
  if (step != 1) return std::nullopt;
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp(start, int64_t{0}, size);
  end = std::clamp(end, int64_t{0}, size);
  std::vector<double> out;
  for (int64_t i = start; i < end; ++i) out.push_back(data.values[static_cast<size_t>(i)]);
  return with_values({static_cast<int64_t>(out.size())}, std::move(out), data.integral);
}

/// Reshape's target: 0 keeps the input's size on that axis, -1 takes what is left.
std::optional<std::vector<int64_t>> reshape_dims(const std::vector<int64_t>& from, std::vector<int64_t> to) {
  int64_t total = 1;
  for (int64_t d : from) {
    if (d < 0 || (d > 0 && total > kMaxFoldedElements)) return std::nullopt;
    total *= d;
  }
  int64_t known = 1;
  int64_t infer = -1;
  for (size_t i = 0; i < to.size(); ++i) {
    if (to[i] == 0 && i < from.size()) to[i] = from[i];
    if (to[i] == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int64_t>(i);
    } else if (to[i] <= 0) {
      return std::nullopt;
    } else {
      if (known > kMaxFoldedElements) return std::nullopt;
      known *= to[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || total % known != 0) return std::nullopt;
    to[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    return std::nullopt;
  }
  return to;
}

std::optional<OnnxConstant> fold_expand(const OnnxConstant& data, const OnnxConstant& shape) {
  std::vector<int64_t> dims = as_ints(shape);
  // Broadcast from the right, as numpy does.
  const size_t rank = std::max(dims.size(), data.dims.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t a = i < rank - data.dims.size() ? 1 : data.dims[i - (rank - data.dims.size())];
    const int64_t b = i < rank - dims.size() ? 1 : dims[i - (rank - dims.size())];
    if (a != b && a != 1 && b != 1) return std::nullopt;
    out[i] = std::max(a, b);
  }
  OnnxConstant result;
  result.dims = out;
  // Only a tensor of one repeated value is expanded (an RNN's zero initial
  // state): the fill then does not depend on how broadcasting lines elements up.
  const bool uniform = !data.values.empty() && std::all_of(data.values.begin(), data.values.end(),
                                                           [&](double v) { return v == data.values[0]; });
  const int64_t count = result.element_count();
  if (count < 0 || count > kMaxFoldedElements || !uniform) return std::nullopt;
  result.values.assign(static_cast<size_t>(result.element_count()), data.values[0]);
  result.has_values = true;
  result.integral = data.integral;
  return result;
}

std::optional<OnnxConstant> fold_constant_of_shape(const ::onnx::NodeProto& node, const OnnxConstant& shape) {
  double fill = 0;
  bool integral = false;
  if (const auto* value = onnx_attribute(node, "value")) {
    const OnnxConstant one = onnx_constant_from_tensor(value->t());
    if (!one.has_values || one.values.size() != 1) return std::nullopt;
    fill = one.values[0];
    integral = one.integral;
  }
  OnnxConstant result;
  result.dims = as_ints(shape);
  if (result.element_count() < 0 || result.element_count() > kMaxFoldedElements) return std::nullopt;
  result.values.assign(static_cast<size_t>(result.element_count()), fill);
  result.has_values = true;
  result.integral = integral;
  return result;
}

}  // namespace

int64_t OnnxConstant::element_count() const {
  // -1 for a negative size or a count past int64: a damaged file, never a tensor to fold.
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && count > std::numeric_limits<int64_t>::max() / d)) return -1;
    count *= d;
  }
  return count;
}

bool OnnxConstant::all_zero() const {
  return has_values && std::all_of(values.begin(), values.end(), [](double v) { return v == 0; });
}

std::vector<double> onnx_tensor_values(const TensorProto& tensor, int64_t count) {
  if (count < 0 || tensor.data_location() == TensorProto::EXTERNAL) return {};
  std::vector<double> values = tensor_values(tensor, count);
  if (static_cast<int64_t>(values.size()) != count) values.clear();
  return values;
}

OnnxConstant onnx_constant_from_tensor(const TensorProto& tensor) {
  OnnxConstant out;
  out.dims.assign(tensor.dims().begin(), tensor.dims().end());
  out.integral = is_integral_type(tensor.data_type());
  const int64_t count = out.element_count();
  if (count >= 0 && count <= kMaxFoldedElements && tensor.data_location() != TensorProto::EXTERNAL) {
    out.values = tensor_values(tensor, count);
    out.has_values = static_cast<int64_t>(out.values.size()) == count;
  }
  return out;
}

const std::vector<std::string>& onnx_folded_op_types() {
  static const std::vector<std::string> types{"Constant", "Shape", "Gather", "Unsqueeze", "Squeeze", "Concat",
                                              "Cast", "Slice", "Add", "Sub", "Mul", "Div", "Expand",
                                              "ConstantOfShape", "Reshape", "Identity"};
  return types;
}

std::optional<OnnxConstant> fold_onnx_node(const ::onnx::NodeProto& node, const OnnxFoldInputs& inputs) {
  const std::string& op = node.op_type();
  if (op == "Constant") return fold_constant_node(node);
  if (op == "Shape") return fold_shape(node, inputs);
  // Every other fold needs all its (present) inputs known, with their elements.
  std::vector<const OnnxConstant*> args;
  for (const std::string& name : node.input()) {
    if (name.empty()) {
      args.push_back(nullptr);
      continue;
    }
    const OnnxConstant* known = inputs.constant(name);
    if (!known || !known->has_values) return std::nullopt;
    args.push_back(known);
  }
  if (args.empty() || !args[0]) return std::nullopt;
  const OnnxConstant& data = *args[0];
  if (op == "Identity") return data;
  if (op == "Cast") {
    OnnxConstant out = data;
    out.integral = is_integral_type(static_cast<int32_t>(onnx_int_attribute(node, "to", TensorProto::FLOAT)));
    if (out.integral) {
      for (double& v : out.values) v = std::trunc(v);
    }
    return out;
  }
  if (op == "Gather" && args.size() == 2) return fold_gather(node, data, *args[1]);
  if (op == "Unsqueeze" || op == "Squeeze") {
    const auto axes = axes_of(node, inputs);
    if (!axes) return std::nullopt;
    return op == "Unsqueeze" ? fold_unsqueeze(data, *axes) : fold_squeeze(data, *axes);
  }
  if (op == "Concat") {
    std::vector<double> out;
    for (const OnnxConstant* part : args) {
      if (!part || part->dims.size() != 1) return std::nullopt;
      out.insert(out.end(), part->values.begin(), part->values.end());
    }
    return with_values({static_cast<int64_t>(out.size())}, std::move(out), data.integral);
  }
  if (op == "Slice") return fold_slice(data, {args.begin() + 1, args.end()});
  if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") && args.size() == 2 && args[1]) {
    return elementwise(op, data, *args[1]);
  }
  if (op == "Expand" && args.size() == 2 && args[1]) return fold_expand(data, *args[1]);
  if (op == "ConstantOfShape") return fold_constant_of_shape(node, data);
  if (op == "Reshape" && args.size() == 2 && args[1]) {
    const auto dims = reshape_dims(data.dims, as_ints(*args[1]));
    if (!dims) return std::nullopt;
    return with_values(*dims, data.values, data.integral);
  }
  return std::nullopt;
}

}  // namespace splitscope
