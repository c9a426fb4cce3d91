#pragma once
/// \file
/// A node's attributes by name, with ONNX's defaults where the node leaves
/// one out.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace splitscope {

const ::onnx::AttributeProto* onnx_attribute(const ::onnx::NodeProto& node, const std::string& name);
int64_t onnx_int_attribute(const ::onnx::NodeProto& node, const std::string& name, int64_t fallback);
double onnx_float_attribute(const ::onnx::NodeProto& node, const std::string& name, double fallback);
std::string onnx_string_attribute(const ::onnx::NodeProto& node, const std::string& name,
                                  const std::string& fallback);
/// The ints of an INTS attribute; nullopt when the node has none.
std::optional<std::vector<int64_t>> onnx_ints_attribute(const ::onnx::NodeProto& node, const std::string& name);

/// Input `slot` of a node, "" when absent (ONNX writes an omitted optional input as "").
std::string onnx_node_input(const ::onnx::NodeProto& node, int slot);
std::string onnx_node_output(const ::onnx::NodeProto& node, int slot);

}  // namespace splitscope
