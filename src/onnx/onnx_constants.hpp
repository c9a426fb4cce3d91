#pragma once
/// \file
/// Tensors whose values are known before anything runs: initializers (the
/// weights), Constant nodes, and the shape arithmetic PyTorch leaves in a
/// graph with a dynamic batch (Shape, Gather, Unsqueeze, Concat, ... feeding
/// a Reshape), folded here to constants once the batch is fixed.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace splitscope {

/// A known tensor. `values` holds the elements of small tensors (shapes,
/// axes, pads, scalars: what a rule reads); a weight keeps its dims only.
struct OnnxConstant {
  std::vector<int64_t> dims;
  std::vector<double> values;
  bool has_values = false;
  bool integral = false;  ///< an integer type: Div truncates, Cast to it truncates

  int64_t element_count() const;
  /// True when every element is known and zero (an LSTM's initial state).
  bool all_zero() const;
};

/// The largest tensor whose elements an initializer or a fold keeps.
inline constexpr int64_t kMaxFoldedElements = int64_t{1} << 16;

/// The elements of a tensor held in the file (raw_data or the typed fields;
/// float, double and integer types), `count` of them; empty where they are
/// not there (external data, another type, a count that does not match).
std::vector<double> onnx_tensor_values(const ::onnx::TensorProto& tensor, int64_t count);

/// An initializer or a Constant's tensor; the elements when small.
OnnxConstant onnx_constant_from_tensor(const ::onnx::TensorProto& tensor);

/// What the folder may look up: a known tensor by name, and the dims of any
/// tensor (for Shape) from shape inference.
struct OnnxFoldInputs {
  std::function<const OnnxConstant*(const std::string&)> constant;
  std::function<std::optional<std::vector<int64_t>>(const std::string&)> dims;
};

/// The node's output when it is shape arithmetic on known tensors, nullopt
/// when it is not (a layer, or an input that is not known).
std::optional<OnnxConstant> fold_onnx_node(const ::onnx::NodeProto& node, const OnnxFoldInputs& inputs);

/// The op types fold_onnx_node evaluates.
const std::vector<std::string>& onnx_folded_op_types();

}  // namespace splitscope
