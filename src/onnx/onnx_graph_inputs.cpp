#include "onnx/onnx_graph_inputs.hpp"

#include <set>

#include "onnx/onnx_attributes.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

/// ONNX's LSTM and GRU read [steps, batch, features] unless layout = 1.
size_t batch_axis_of(const ::onnx::GraphProto& graph, const std::string& name, size_t rank) {
  if (rank != 3) return 0;
  for (const auto& node : graph.node()) {
    const bool recurrent = node.op_type() == "LSTM" || node.op_type() == "GRU";
    if (recurrent && onnx_node_input(node, 0) == name && onnx_int_attribute(node, "layout", 0) == 0) return 1;
  }
  return 0;
}

std::string dim_text(const ::onnx::TensorShapeProto_Dimension& dim) {
  return dim.has_dim_param() ? "'" + dim.dim_param() + "'" : "unnamed";
}

}  // namespace

OnnxBatch resolve_onnx_batch(::onnx::ModelProto& model, const std::string& path, std::optional<int64_t> batch) {
  auto& graph = *model.mutable_graph();
  std::set<std::string> weights;
  for (const auto& tensor : graph.initializer()) weights.insert(tensor.name());
  OnnxBatch result;
  for (auto& input : *graph.mutable_input()) {
    if (weights.count(input.name())) continue;
    const std::string field = "input '" + input.name() + "'";
    if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) {
      throw InputError(path, field, "has no tensor shape; export with a fixed input shape (torch.onnx.export's args)");
    }
    auto& shape = *input.mutable_type()->mutable_tensor_type()->mutable_shape();
    const auto rank = static_cast<size_t>(shape.dim_size());
    if (rank < 2) {
      throw InputError(path, field, "has " + std::to_string(rank) + " dimension(s); splitscope needs a batch "
                                    "dimension and at least one more");
    }
    OnnxGraphInput entry{input.name(), {}, batch_axis_of(graph, input.name(), rank)};
    for (size_t axis = 0; axis < rank; ++axis) {
      auto& dim = *shape.mutable_dim(static_cast<int>(axis));
      const bool known = dim.has_dim_value() && dim.dim_value() > 0;
      if (axis == entry.batch_axis) {
        if (!known && !batch) {
          throw InputError(path, field, "dimension " + std::to_string(axis) + " (the batch, " + dim_text(dim) +
                                            ") is dynamic; pass --batch N to give it a size");
        }
        // The graph's own batch when it has one: shapes it folds into
        // Reshapes then stay consistent; --batch still sets the run's batch.
        const int64_t size = known ? dim.dim_value() : *batch;
        if (!known) dim.set_dim_value(size);
        if (result.size != 0 && result.size != size) {
          throw InputError(path, field, "has a batch of " + std::to_string(size) + " but an earlier input has " +
                                            std::to_string(result.size) + "; the inputs must agree");
        }
        result.size = size;
      } else if (!known) {
        throw InputError(path, field, "dimension " + std::to_string(axis) + " (" + dim_text(dim) +
                                          ") is dynamic; only the batch may be, and --batch sets only the batch: "
                                          "export with that dimension fixed (no dynamic_axes entry for it)");
      }
      entry.dims.push_back(dim.dim_value());
    }
    result.inputs.push_back(std::move(entry));
  }
  if (result.inputs.empty()) throw InputError(path, "graph.input", "the graph has no input besides its weights");
  return result;
}

}  // namespace splitscope
